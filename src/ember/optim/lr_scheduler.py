"""Learning-rate schedules: objects that set each parameter group's ``lr`` as training advances.

Call ``scheduler.step()`` once per epoch (or batch), after ``optimizer.step()``.
Most schedules are *chainable*: each step scales the current ``lr`` rather than
recomputing it from the start, so several schedulers can act on one optimizer.

>>> import ember
>>> opt = ember.optim.SGD([ember.nn.Parameter(ember.ones(1))], lr=1.0)
>>> scheduler = ember.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
>>> lrs = []
>>> for _ in range(5):
...     opt.step(); scheduler.step(); lrs.append(scheduler.get_last_lr()[0])
>>> lrs
[1.0, 0.5, 0.5, 0.25, 0.25]
"""
from __future__ import annotations

import math
import types
import warnings
import weakref
from bisect import bisect_right
from collections import Counter
from functools import partial, wraps
from typing import Any, Callable, Iterable, Sequence

from ember._tensor import Tensor
from ember.optim.optimizer import Optimizer

__all__ = [
    "LRScheduler", "LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR", "ConstantLR", "LinearLR",
    "ExponentialLR", "SequentialLR", "CosineAnnealingLR", "ChainedScheduler", "ReduceLROnPlateau", "CyclicLR",
    "CosineAnnealingWarmRestarts", "OneCycleLR", "PolynomialLR",
]

EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being deprecated where possible. Please use "
    "`scheduler.step()` to step the scheduler. During the deprecation, if epoch is different from None, the closed "
    "form is used instead of the new chainable form, where available."
)


def _values(optimizer: Optimizer, key: str = "lr") -> list:
    """Each group's ``key`` (a tensor value copied, so later changes to the group do not show)."""
    return [g[key].clone() if isinstance(g[key], Tensor) else g[key] for g in optimizer.param_groups]


def _set_value(group: dict, key: str, value: Any) -> None:
    """Set a group's ``key``; a tensor hyper-parameter is filled in place, so the optimizer keeps the same tensor."""
    if isinstance(group[key], Tensor):
        group[key].fill_(value.item() if isinstance(value, Tensor) else value)
    else:
        group[key] = value


def _per_group(name: str, optimizer: Optimizer, value: Any) -> list:
    """``value`` for each parameter group: a list of one per group, or one value for all."""
    if isinstance(value, (list, tuple)):
        if len(value) != len(optimizer.param_groups):
            raise ValueError(
                f"{name} must have the same length as optimizer.param_groups. {name} has {len(value)} values, "
                f"param_groups has {len(optimizer.param_groups)}."
            )
        return [v.clone() if isinstance(v, Tensor) else v for v in value]
    return [value] * len(optimizer.param_groups)


def _check_optimizer(optimizer: Any) -> None:
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")


def _track_step_calls(optimizer: Optimizer) -> None:
    """Wrap ``optimizer.step`` (on the instance) to note that it ran: ``scheduler.step`` warns if it runs first."""
    if hasattr(optimizer.step, "_wrapped_by_lr_sched"):
        return
    owner = weakref.ref(optimizer)  # no cycle through the instance's own attribute
    method = optimizer.step.__func__

    @wraps(method)
    def step(*args, **kwargs):
        opt = owner()
        opt._opt_called = True
        return method(opt, *args, **kwargs)

    step._wrapped_by_lr_sched = True
    optimizer.step = step


class LRScheduler:
    """Base class: a subclass computes the new learning rates in ``get_lr()`` from ``self.last_epoch``.

    On construction each group gets an ``initial_lr`` (its current ``lr``, unless
    resuming with ``last_epoch >= 0``) and the scheduler takes its first step.
    """

    _get_lr_called_within_step = False
    _is_initial = False

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                lr = group["lr"]
                group.setdefault("initial_lr", lr.clone() if isinstance(lr, Tensor) else lr)
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(
                        f"param 'initial_lr' is not specified in param_groups[{i}] when resuming scheduler with "
                        "last_epoch >= 0: load the optimizer's state_dict (which has it) before building the "
                        "scheduler, or start from last_epoch=-1"
                    )
        self.base_lrs = _values(optimizer, "initial_lr")
        self.last_epoch = last_epoch
        _track_step_calls(optimizer)
        self._initial_step()

    def _initial_step(self) -> None:
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def state_dict(self) -> dict:
        """Everything but the optimizer."""
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict: dict) -> None:
        self.__dict__.update(state_dict)

    def get_last_lr(self) -> list:
        """The learning rates the last ``step`` set, one per parameter group."""
        return self._last_lr

    def get_lr(self) -> list:
        raise NotImplementedError(f"{type(self).__name__} must implement get_lr()")

    def _check_in_step(self) -> None:
        if not self._get_lr_called_within_step:
            warnings.warn("To get the last learning rate computed by the scheduler, please use `get_last_lr()`.",
                          UserWarning, stacklevel=3)

    def step(self, epoch: int | None = None) -> None:
        """Advance one epoch and set the groups' learning rates (call after ``optimizer.step()``)."""
        if self._step_count == 1:
            self._warn_on_step_order()
        self._step_count += 1
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self._update_lr(epoch)

    def _warn_on_step_order(self) -> None:
        if not hasattr(self.optimizer.step, "_wrapped_by_lr_sched"):
            warnings.warn(
                "Seems like `optimizer.step()` has been overridden after learning rate scheduler initialization. "
                "Please, make sure to call `optimizer.step()` before `lr_scheduler.step()`.",
                UserWarning, stacklevel=3)
        elif not getattr(self.optimizer, "_opt_called", False):
            warnings.warn(
                "Detected call of `lr_scheduler.step()` before `optimizer.step()`. In PyTorch 1.1.0 and later, you "
                "should call them in the opposite order: `optimizer.step()` before `lr_scheduler.step()`.  Failure "
                "to do this will result in PyTorch skipping the first value of the learning rate schedule.",
                UserWarning, stacklevel=3)

    def _update_lr(self, epoch: int | None = None) -> None:
        self._get_lr_called_within_step = True
        try:
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:  # a jump to an epoch: only a closed form knows where it leads
                self.last_epoch = epoch
                closed = getattr(self, "_get_closed_form_lr", None)
                values = closed() if closed is not None else self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        # strict, as torch's: a group added after the scheduler was built has no rate of its own to follow
        for group, lr in zip(self.optimizer.param_groups, values, strict=True):
            _set_value(group, "lr", lr)
        self._last_lr = _values(self.optimizer)

    # the chainable forms' common answers
    def _unchanged(self) -> list:
        return _values(self.optimizer)

    def _scaled(self, factor: float) -> list:
        return [group["lr"] * factor for group in self.optimizer.param_groups]


class _LRScheduler(LRScheduler):
    """The old name, kept for code that subclasses it. A subclass rather than an alias, as torch's: the built-in
    schedulers are not instances of it, and code that checks ``isinstance(s, _LRScheduler)`` relies on that."""


class _LambdaScheduler(LRScheduler):
    """Shared by LambdaLR and MultiplicativeLR: one function of the epoch per group; callable objects' state saved."""

    def __init__(self, optimizer: Optimizer, lr_lambda: Callable | list, last_epoch: int = -1) -> None:
        self.optimizer = optimizer
        if isinstance(lr_lambda, (list, tuple)):
            if len(lr_lambda) != len(optimizer.param_groups):
                raise ValueError(f"Expected {len(optimizer.param_groups)} lr_lambdas, but got {len(lr_lambda)}")
            self.lr_lambdas = list(lr_lambda)
        else:
            self.lr_lambdas = [lr_lambda] * len(optimizer.param_groups)
        super().__init__(optimizer, last_epoch)

    def state_dict(self) -> dict:
        """As the base's, with each lambda saved as its ``__dict__`` if it is a callable object (None if a function)."""
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = [None if isinstance(fn, types.FunctionType) else fn.__dict__.copy()
                               for fn in self.lr_lambdas]
        return state

    def load_state_dict(self, state_dict: dict) -> None:
        state = dict(state_dict)
        saved = state.pop("lr_lambdas")
        self.__dict__.update(state)
        for fn, attributes in zip(self.lr_lambdas, saved):
            if attributes is not None:
                fn.__dict__.update(attributes)


class LambdaLR(_LambdaScheduler):
    """``lr = initial_lr * lr_lambda(epoch)``.

    >>> import ember
    >>> opt = ember.optim.SGD([ember.nn.Parameter(ember.ones(1))], lr=1.0)
    >>> s = ember.optim.lr_scheduler.LambdaLR(opt, lambda epoch: 1 / (epoch + 1))
    >>> opt.step(); s.step(); s.get_last_lr()
    [0.5]
    """

    def get_lr(self) -> list:
        self._check_in_step()
        return [base * fn(self.last_epoch) for fn, base in zip(self.lr_lambdas, self.base_lrs)]


class MultiplicativeLR(_LambdaScheduler):
    """``lr = lr * lr_lambda(epoch)`` at each step after the first.

    >>> import ember
    >>> opt = ember.optim.SGD([ember.nn.Parameter(ember.ones(1))], lr=1.0)
    >>> s = ember.optim.lr_scheduler.MultiplicativeLR(opt, lambda epoch: 0.5)
    >>> opt.step(); s.step(); opt.step(); s.step(); s.get_last_lr()
    [0.25]
    """

    def __init__(self, optimizer: Optimizer, lr_lambda: Callable | list, last_epoch: int = -1) -> None:
        functions = lr_lambda if isinstance(lr_lambda, (list, tuple)) else [lr_lambda]
        for fn in functions:
            if not callable(fn):
                raise TypeError(f"lr_lambda should be a function, but got {type(fn).__name__}")
        super().__init__(optimizer, lr_lambda, last_epoch)

    def get_lr(self) -> list:
        self._check_in_step()
        if self._is_initial:
            return self._unchanged()
        return [group["lr"] * fn(self.last_epoch) for fn, group in zip(self.lr_lambdas, self.optimizer.param_groups)]


class StepLR(LRScheduler):
    """Multiply the learning rate by ``gamma`` every ``step_size`` epochs."""

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1) -> None:
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._check_in_step()
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return self._unchanged()
        return self._scaled(self.gamma)

    def _get_closed_form_lr(self) -> list:
        return [base * self.gamma ** (self.last_epoch // self.step_size) for base in self.base_lrs]


class MultiStepLR(LRScheduler):
    """Multiply the learning rate by ``gamma`` at each epoch of ``milestones`` (twice if listed twice).

    >>> import ember
    >>> opt = ember.optim.SGD([ember.nn.Parameter(ember.ones(1))], lr=1.0)
    >>> s = ember.optim.lr_scheduler.MultiStepLR(opt, milestones=[1, 3], gamma=0.5)
    >>> [(opt.step(), s.step(), s.get_last_lr()[0])[2] for _ in range(4)]
    [0.5, 0.5, 0.25, 0.25]
    """

    def __init__(self, optimizer: Optimizer, milestones: Iterable[int], gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._check_in_step()
        if self.last_epoch not in self.milestones:
            return self._unchanged()
        return self._scaled(self.gamma ** self.milestones[self.last_epoch])

    def _get_closed_form_lr(self) -> list:
        passed = bisect_right(sorted(self.milestones.elements()), self.last_epoch)
        return [base * self.gamma ** passed for base in self.base_lrs]


class ConstantLR(LRScheduler):
    """Scale the learning rate by ``factor`` for the first ``total_iters`` epochs, then restore it."""

    def __init__(self, optimizer: Optimizer, factor: float = 1.0 / 3, total_iters: int = 5,
                 last_epoch: int = -1) -> None:
        if factor > 1.0 or factor < 0:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor = factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._check_in_step()
        if self.last_epoch == 0:
            return self._scaled(self.factor)
        if self.last_epoch != self.total_iters:
            return self._unchanged()
        return self._scaled(1.0 / self.factor)

    def _get_closed_form_lr(self) -> list:
        factor = self.factor + (self.last_epoch >= self.total_iters) * (1 - self.factor)
        return [base * factor for base in self.base_lrs]


class LinearLR(LRScheduler):
    """Scale the learning rate by a factor going linearly from ``start_factor`` to ``end_factor`` over
    ``total_iters`` epochs."""

    def __init__(self, optimizer: Optimizer, start_factor: float = 1.0 / 3, end_factor: float = 1.0,
                 total_iters: int = 5, last_epoch: int = -1) -> None:
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError("Starting multiplicative factor expected to be greater than 0 and less or equal to 1.")
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._check_in_step()
        if self.last_epoch == 0:
            return self._scaled(self.start_factor)
        if self._is_initial or self.last_epoch > self.total_iters:
            return self._unchanged()
        change = self.end_factor - self.start_factor
        # the ratio of this epoch's factor to the last one's
        return self._scaled(1.0 + change / (self.total_iters * self.start_factor + (self.last_epoch - 1) * change))

    def _get_closed_form_lr(self) -> list:
        done = min(self.total_iters, self.last_epoch) / self.total_iters
        return [base * (self.start_factor + (self.end_factor - self.start_factor) * done) for base in self.base_lrs]


class ExponentialLR(LRScheduler):
    """Multiply the learning rate by ``gamma`` every epoch."""

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._check_in_step()
        return self._unchanged() if self._is_initial else self._scaled(self.gamma)

    def _get_closed_form_lr(self) -> list:
        return [base * self.gamma ** self.last_epoch for base in self.base_lrs]


class PolynomialLR(LRScheduler):
    """Decay the learning rate as ``(1 - epoch / total_iters) ** power``, reaching 0 at ``total_iters``."""

    def __init__(self, optimizer: Optimizer, total_iters: int = 5, power: float = 1.0, last_epoch: int = -1) -> None:
        self.total_iters = total_iters
        self.power = power
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._check_in_step()
        if self._is_initial or self.last_epoch > self.total_iters:
            return self._unchanged()
        n, t = self.last_epoch, self.total_iters
        return self._scaled(((1.0 - n / t) / (1.0 - (n - 1) / t)) ** self.power)

    def _get_closed_form_lr(self) -> list:
        remaining = 1.0 - min(self.total_iters, self.last_epoch) / self.total_iters
        return [base * remaining ** self.power for base in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """Anneal the learning rate from its initial value to ``eta_min`` along half a cosine over ``T_max`` epochs
    (and back up over the next ``T_max``: the schedule has period ``2 * T_max``)."""

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0, last_epoch: int = -1) -> None:
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._check_in_step()
        eta_min, t_max, epoch = self.eta_min, self.T_max, self.last_epoch
        if self._is_initial:
            return self._unchanged()
        if self._step_count == 1 and epoch > 0:  # resumed mid-schedule: the closed form
            return self._get_closed_form_lr()
        if (epoch - 1 - t_max) % (2 * t_max) == 0:  # the turn at the bottom: the ratio below would divide by 0
            rise = (1 - math.cos(math.pi / t_max)) / 2
            return [group["lr"] + (base - eta_min) * rise
                    for base, group in zip(self.base_lrs, self.optimizer.param_groups)]
        ratio = (1 + math.cos(math.pi * epoch / t_max)) / (1 + math.cos(math.pi * (epoch - 1) / t_max))
        return [ratio * (group["lr"] - eta_min) + eta_min for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list:
        cosine = (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
        return [self.eta_min + (base - self.eta_min) * cosine for base in self.base_lrs]


def _check_members(owner: str, optimizer: Optimizer, schedulers: Sequence) -> None:
    for i, scheduler in enumerate(schedulers):
        if not hasattr(scheduler, "optimizer"):
            raise TypeError(f"{owner} at index {i} should have `optimizer` as its attribute.")
        if isinstance(scheduler, ReduceLROnPlateau):
            raise ValueError(
                f"{owner} does not support `ReduceLROnPlateau` scheduler as it requires additional kwargs to be "
                f"specified when calling `step`, but got one at index {i} in the given schedulers sequence."
            )
        if optimizer != scheduler.optimizer:
            raise ValueError(
                f"{owner} expects all schedulers to belong to the same optimizer, but got scheduler "
                f"{type(scheduler).__name__} at index {i} has {scheduler.optimizer}, which is different from "
                f"{type(optimizer).__name__}."
            )


class _Composite(LRScheduler):
    """Saving and loading of a scheduler made of others: their states nested under ``_schedulers``."""

    def state_dict(self) -> dict:
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return state

    def load_state_dict(self, state_dict: dict) -> None:
        state = dict(state_dict)
        nested = state.pop("_schedulers")
        self.__dict__.update(state)
        for scheduler, saved in zip(self._schedulers, nested):
            scheduler.load_state_dict(saved)


class SequentialLR(_Composite):
    """Run ``schedulers`` one after another, switching at the epochs of ``milestones``."""

    def __init__(self, optimizer: Optimizer, schedulers: list, milestones: list, last_epoch: int = -1) -> None:
        if len(schedulers) < 1:
            raise ValueError(f"{type(self).__name__} expects at least one scheduler, but got no scheduler.")
        _check_members(type(self).__name__, optimizer, schedulers)
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(
                "Sequential Schedulers expects number of schedulers provided to be one more than the number of "
                f"milestone points, but got number of schedulers {len(schedulers)} and the number of milestones to "
                f"be equal to {len(milestones)}"
            )
        self._schedulers = schedulers
        self._milestones = milestones
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        # the members' construction stepped them; start over from the initial rates with the first one
        for group in optimizer.param_groups:
            _set_value(group, "lr", group["initial_lr"])
        self.recursive_undo()
        first = self._schedulers[bisect_right(milestones, 0)]
        first._initial_step()
        self._last_lr = first.get_last_lr()

    def recursive_undo(self, sched: Any = None) -> None:
        """Take back the initial step of every (nested) member."""
        target = self if sched is None else sched
        if hasattr(target, "_schedulers"):
            for member in target._schedulers:
                self.recursive_undo(member)
        elif hasattr(target, "last_epoch"):
            target.last_epoch -= 1

    def step(self) -> None:
        self.last_epoch += 1
        index = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[index]
        if index > 0 and self._milestones[index - 1] == self.last_epoch:
            scheduler._update_lr(0)  # a member starts at its epoch 0, from its closed form
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()


class ChainedScheduler(_Composite):
    """Step every scheduler of ``schedulers`` at each step: their changes compound."""

    def __init__(self, schedulers: Sequence, optimizer: Optimizer | None = None) -> None:
        if len(schedulers) < 1:
            raise ValueError(
                f"{type(self).__name__} expects at least one scheduler to be chained, but got no scheduler.")
        optimizer = optimizer or schedulers[0].optimizer
        _check_members(type(self).__name__, optimizer, schedulers)
        self._schedulers = schedulers
        self.optimizer = optimizer
        self._last_lr = _values(schedulers[-1].optimizer)

    def step(self) -> None:
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = _values(self._schedulers[-1].optimizer)


class ReduceLROnPlateau(LRScheduler):
    """Multiply the learning rate by ``factor`` once the metric passed to ``step(metric)`` has not improved
    for ``patience`` epochs; wait ``cooldown`` epochs after each reduction; never go below ``min_lr``."""

    def __init__(self, optimizer: Optimizer, mode: str = "min", factor: float = 0.1, patience: int = 10,
                 threshold: float = 1e-4, threshold_mode: str = "rel", cooldown: int = 0,
                 min_lr: list | float = 0, eps: float = 1e-8) -> None:
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        self.factor = factor
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != len(optimizer.param_groups):
                raise ValueError(f"expected {len(optimizer.param_groups)} min_lrs, got {len(min_lr)}")
            self.default_min_lr = None
            self.min_lrs = list(min_lr)
        else:
            self.default_min_lr = min_lr
            self.min_lrs = [min_lr] * len(optimizer.param_groups)
        self.patience = patience
        self.cooldown = cooldown
        self.eps = eps
        self.last_epoch = 0
        self._last_lr = _values(optimizer)
        self._init_is_better(mode=mode, threshold=threshold, threshold_mode=threshold_mode)
        self._reset()

    def _reset(self) -> None:
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    def step(self, metrics: Any, epoch: int | None = None) -> None:
        current = float(metrics)
        if epoch is None:
            epoch = self.last_epoch + 1
        else:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self.last_epoch = epoch
        if self._is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0  # epochs in cooldown do not count as bad
        if self.num_bad_epochs > self.patience:
            self._reduce_lr(epoch)
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = _values(self.optimizer)

    def _reduce_lr(self, epoch: int) -> None:
        if len(self.optimizer.param_groups) != len(self.min_lrs):
            if self.default_min_lr is None:
                raise RuntimeError(
                    f"The number of param groups in the `optimizer` ({len(self.optimizer.param_groups)}) differs "
                    f"from when `ReduceLROnPlateau` was initialized ({len(self.min_lrs)}), usually due to a new "
                    "param group being added to the optimizer. Please modify the `min_lrs` field to match the "
                    "length of the `optimizer` param groups."
                )
            self.min_lrs = [self.default_min_lr] * len(self.optimizer.param_groups)
        for group, min_lr in zip(self.optimizer.param_groups, self.min_lrs):
            old = float(group["lr"])
            new = max(old * self.factor, min_lr)
            if old - new > self.eps:  # changes smaller than eps are not worth making
                _set_value(group, "lr", new)

    @property
    def in_cooldown(self) -> bool:
        return self.cooldown_counter > 0

    def _is_better(self, a: float, best: float) -> bool:
        relative = self.threshold_mode == "rel"
        if self.mode == "min":
            return a < best * (1.0 - self.threshold) if relative else a < best - self.threshold
        return a > best * (self.threshold + 1.0) if relative else a > best + self.threshold

    def _init_is_better(self, mode: str, threshold: float, threshold_mode: str) -> None:
        if mode not in {"min", "max"}:
            raise ValueError("mode " + mode + " is unknown!")
        if threshold_mode not in {"rel", "abs"}:
            raise ValueError("threshold mode " + threshold_mode + " is unknown!")
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self.mode = mode
        self.threshold = threshold
        self.threshold_mode = threshold_mode

    def load_state_dict(self, state_dict: dict) -> None:
        self.__dict__.update(state_dict)
        self._init_is_better(mode=self.mode, threshold=self.threshold, threshold_mode=self.threshold_mode)


def _init_momentum_cycle(scheduler: LRScheduler, optimizer: Optimizer, base_momentum: Any, max_momentum: Any,
                         last_epoch: int) -> tuple[list, list]:
    """For CyclicLR and OneCycleLR: check the optimizer has a momentum (or Adam's beta1) to cycle, and start it at
    ``max_momentum``. Returns the per-group base and max momentums."""
    if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
        raise ValueError("optimizer must support momentum or beta1 with `cycle_momentum` option enabled")
    scheduler.use_beta1 = "betas" in optimizer.defaults
    bases = _per_group("base_momentum", optimizer, base_momentum)
    maxima = _per_group("max_momentum", optimizer, max_momentum)
    if last_epoch == -1:
        for top, bottom, group in zip(maxima, bases, optimizer.param_groups):
            _set_momentum(scheduler, group, top)
            group["max_momentum"] = top
            group["base_momentum"] = bottom
    return bases, maxima


def _set_momentum(scheduler: LRScheduler, group: dict, momentum: float) -> None:
    if scheduler.use_beta1:
        group["betas"] = (momentum, *group["betas"][1:])
    else:
        group["momentum"] = momentum


class CyclicLR(LRScheduler):
    """Cycle the learning rate between ``base_lr`` and ``max_lr`` (up in ``step_size_up`` steps, down in
    ``step_size_down``), the amplitude scaled per ``mode``; the momentum cycles the opposite way.

    >>> import ember
    >>> opt = ember.optim.SGD([ember.nn.Parameter(ember.ones(1))], lr=1.0, momentum=0.9)
    >>> s = ember.optim.lr_scheduler.CyclicLR(opt, base_lr=0.1, max_lr=0.5, step_size_up=2)
    >>> [round((opt.step(), s.step(), s.get_last_lr()[0])[2], 3) for _ in range(5)]
    [0.3, 0.5, 0.3, 0.1, 0.3]
    """

    def __init__(self, optimizer: Optimizer, base_lr: float | list, max_lr: float | list,
                 step_size_up: int = 2000, step_size_down: int | None = None, mode: str = "triangular",
                 gamma: float = 1.0, scale_fn: Callable[[float], float] | None = None, scale_mode: str = "cycle",
                 cycle_momentum: bool = True, base_momentum: float = 0.8, max_momentum: float = 0.9,
                 last_epoch: int = -1) -> None:
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        base_lrs = _per_group("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups):
                _set_value(group, "lr", lr)
        self.max_lrs = _per_group("max_lr", optimizer, max_lr)
        up = float(step_size_up)
        down = float(step_size_down) if step_size_down is not None else up
        self.total_size = up + down
        self.step_ratio = up / self.total_size
        if mode not in ("triangular", "triangular2", "exp_range") and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode = mode
        self.gamma = gamma
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode
        self._init_scale_fn()
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self.base_momentums, self.max_momentums = _init_momentum_cycle(
                self, optimizer, base_momentum, max_momentum, last_epoch)
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def _init_scale_fn(self) -> None:
        if self._scale_fn_custom is not None:
            return
        self._scale_fn_ref = {"triangular": self._triangular_scale_fn, "triangular2": self._triangular2_scale_fn,
                              "exp_range": partial(self._exp_range_scale_fn, self.gamma)}[self.mode]
        self.scale_mode = "iterations" if self.mode == "exp_range" else "cycle"

    def scale_fn(self, x: float) -> float:
        """The amplitude's scale at cycle (or iteration) ``x``."""
        return self._scale_fn_custom(x) if self._scale_fn_custom is not None else self._scale_fn_ref(x)

    @staticmethod
    def _triangular_scale_fn(x: float) -> float:
        return 1.0

    @staticmethod
    def _triangular2_scale_fn(x: float) -> float:
        return 1 / (2.0 ** (x - 1))

    @staticmethod
    def _exp_range_scale_fn(gamma: float, x: float) -> float:
        return gamma ** x

    def get_lr(self) -> list:
        self._check_in_step()
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle  # the position within the cycle, in [0, 1)
        height = x / self.step_ratio if x <= self.step_ratio else (x - 1) / (self.step_ratio - 1)
        scale = self.scale_fn(cycle if self.scale_mode == "cycle" else self.last_epoch)
        lrs = [base + (top - base) * height * scale for base, top in zip(self.base_lrs, self.max_lrs)]
        if self.cycle_momentum:
            for group, bottom, top in zip(self.optimizer.param_groups, self.base_momentums, self.max_momentums):
                _set_momentum(self, group, top - (top - bottom) * height * scale)
        return lrs

    def state_dict(self) -> dict:
        """As the base's, without the scale function (a callable object's ``__dict__`` is kept)."""
        state = super().state_dict()
        state.pop("_scale_fn_ref", None)
        custom = state.pop("_scale_fn_custom")
        state["_scale_fn_custom"] = (custom.__dict__.copy()
                                     if custom is not None and not isinstance(custom, types.FunctionType) else None)
        return state

    def load_state_dict(self, state_dict: dict) -> None:
        state = dict(state_dict)
        custom = state.pop("_scale_fn_custom")
        super().load_state_dict(state)
        if custom is not None:
            self._scale_fn_custom.__dict__.update(custom)
        self._init_scale_fn()


class CosineAnnealingWarmRestarts(LRScheduler):
    """Cosine annealing from the initial learning rate to ``eta_min`` over ``T_0`` epochs, then restart; each
    period is ``T_mult`` times the last. ``step(epoch)`` may take a fractional epoch."""

    def __init__(self, optimizer: Optimizer, T_0: int, T_mult: int = 1, eta_min: float = 0.0,
                 last_epoch: int = -1) -> None:
        if T_0 <= 0 or not isinstance(T_0, int):
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if T_mult < 1 or not isinstance(T_mult, int):
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        if not isinstance(eta_min, (float, int)):
            raise ValueError(f"Expected float or int eta_min, but got {eta_min} of type {type(eta_min)}")
        self.T_0 = T_0
        self.T_i = T_0
        self.T_mult = T_mult
        self.eta_min = eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._check_in_step()
        cosine = (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
        return [self.eta_min + (base - self.eta_min) * cosine for base in self.base_lrs]

    def step(self, epoch: float | None = None) -> None:
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur += 1
            if self.T_cur >= self.T_i:
                self.T_cur = self.T_cur % self.T_i
                self.T_i *= self.T_mult
        else:
            self._seek(epoch)
        self.last_epoch = math.floor(epoch)
        self._get_lr_called_within_step = True
        try:
            values = self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        for group, lr in zip(self.optimizer.param_groups, values, strict=True):
            _set_value(group, "lr", lr)
        self._last_lr = _values(self.optimizer)

    def _seek(self, epoch: float) -> None:
        """Place ``T_cur`` and ``T_i`` for an explicit ``epoch``."""
        if epoch < 0:
            raise ValueError(f"Expected non-negative epoch, but got {epoch}")
        if epoch < self.T_0:
            self.T_i, self.T_cur = self.T_0, epoch
        elif self.T_mult == 1:
            self.T_cur = epoch % self.T_0
        else:  # the periods grow geometrically: which one holds the epoch
            n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
            self.T_cur = epoch - self.T_0 * (self.T_mult ** n - 1) / (self.T_mult - 1)
            self.T_i = self.T_0 * self.T_mult ** n


class OneCycleLR(LRScheduler):
    """The 1cycle policy: the learning rate rises from ``max_lr / div_factor`` to ``max_lr`` over the first
    ``pct_start`` of ``total_steps``, then anneals to ``initial_lr / final_div_factor`` (``three_phase``: back
    down symmetrically first); the momentum moves the opposite way. Step it after every batch.

    >>> import ember
    >>> opt = ember.optim.SGD([ember.nn.Parameter(ember.ones(1))], lr=1.0, momentum=0.9)
    >>> s = ember.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=10, anneal_strategy="linear")
    >>> round(s.get_last_lr()[0], 4), opt.param_groups[0]["momentum"]
    (0.04, 0.95)
    """

    def __init__(self, optimizer: Optimizer, max_lr: float | list, total_steps: int | None = None,
                 epochs: int | None = None, steps_per_epoch: int | None = None, pct_start: float = 0.3,
                 anneal_strategy: str = "cos", cycle_momentum: bool = True, base_momentum: float | list = 0.85,
                 max_momentum: float | list = 0.95, div_factor: float = 25.0, final_div_factor: float = 1e4,
                 three_phase: bool = False, last_epoch: int = -1) -> None:
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        self.total_steps = _total_steps(total_steps, epochs, steps_per_epoch)
        self._schedule_phases = _one_cycle_phases(self.total_steps, pct_start, three_phase)
        if pct_start < 0 or pct_start > 1 or not isinstance(pct_start, float):
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self._anneal_func_type = anneal_strategy
        max_lrs = _per_group("max_lr", optimizer, max_lr)
        if last_epoch == -1:
            for top, group in zip(max_lrs, optimizer.param_groups):
                group["initial_lr"] = top / div_factor
                group["max_lr"] = top
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            _init_momentum_cycle(self, optimizer, base_momentum, max_momentum, last_epoch)
        super().__init__(optimizer, last_epoch)

    def _anneal_func(self, start: float, end: float, pct: float) -> float:
        if self._anneal_func_type == "cos":
            return self._annealing_cos(start, end, pct)
        return self._annealing_linear(start, end, pct)

    @staticmethod
    def _annealing_cos(start: float, end: float, pct: float) -> float:
        return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)

    @staticmethod
    def _annealing_linear(start: float, end: float, pct: float) -> float:
        return (end - start) * pct + start

    def get_lr(self) -> list:
        self._check_in_step()
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(
                f"Tried to step {step} times. The specified number of total steps is {self.total_steps}")
        lrs = []
        for group in self.optimizer.param_groups:
            phase, pct = self._phase_at(step)
            lrs.append(self._anneal_func(group[phase["start_lr"]], group[phase["end_lr"]], pct))
            if self.cycle_momentum:
                momentum = self._anneal_func(group[phase["start_momentum"]], group[phase["end_momentum"]], pct)
                _set_momentum(self, group, momentum)
        return lrs

    def _phase_at(self, step: int) -> tuple[dict, float]:
        """The phase that ``step`` falls in, and how far through it (0 to 1)."""
        start = 0.0
        for i, phase in enumerate(self._schedule_phases):
            end = phase["end_step"]
            if step <= end or i == len(self._schedule_phases) - 1:
                return phase, (step - start) / (end - start)
            start = end
        raise AssertionError("unreachable: the last phase always matches")


def _total_steps(total_steps: int | None, epochs: int | None, steps_per_epoch: int | None) -> int:
    if total_steps is not None:
        if total_steps <= 0 or not isinstance(total_steps, int):
            raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
        return total_steps
    if epochs is None or steps_per_epoch is None:
        raise ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)")
    if not isinstance(epochs, int) or epochs <= 0:
        raise ValueError(f"Expected positive integer epochs, but got {epochs}")
    if not isinstance(steps_per_epoch, int) or steps_per_epoch <= 0:
        raise ValueError(f"Expected positive integer steps_per_epoch, but got {steps_per_epoch}")
    return epochs * steps_per_epoch


def _one_cycle_phases(total: int, pct_start: float, three_phase: bool) -> list[dict]:
    """OneCycleLR's phases: where each ends, and which group keys hold its start and end lr and momentum."""
    def phase(end_step, start_lr, end_lr, start_momentum, end_momentum):
        return dict(end_step=end_step, start_lr=start_lr, end_lr=end_lr, start_momentum=start_momentum,
                    end_momentum=end_momentum)

    rise = phase(float(pct_start * total) - 1, "initial_lr", "max_lr", "max_momentum", "base_momentum")
    if not three_phase:
        return [rise, phase(total - 1, "max_lr", "min_lr", "base_momentum", "max_momentum")]
    return [rise, phase(float(2 * pct_start * total) - 2, "max_lr", "initial_lr", "base_momentum", "max_momentum"),
            phase(total - 1, "initial_lr", "min_lr", "max_momentum", "max_momentum")]
