"""Weight averaging: ``AveragedModel`` (SWA and EMA), the ``SWALR`` schedule, and ``update_bn``.

>>> import ember
>>> from ember.optim.swa_utils import AveragedModel
>>> model = ember.nn.Linear(1, 1, bias=False)
>>> swa = AveragedModel(model)
>>> for value in (1.0, 2.0, 6.0):
...     with ember.no_grad():
...         _ = model.weight.fill_(value)
...     swa.update_parameters(model)
>>> swa.module.weight
Parameter containing:
tensor([[3.]], requires_grad=True)
"""
from __future__ import annotations

import copy
import itertools
import math
from typing import Any, Callable, Iterable


from ember._creation import tensor as _tensor
from ember._dtype import int64 as _long
from ember._tensor import Tensor
from ember.autograd.grad_mode import no_grad
from ember.nn.modules.batchnorm import _BatchNorm
from ember.nn.modules.module import Module
from ember.optim.lr_scheduler import LRScheduler, _per_group
from ember.optim.optimizer import Optimizer

__all__ = ["AveragedModel", "SWALR", "update_bn", "get_ema_multi_avg_fn", "get_swa_multi_avg_fn",
           "get_ema_avg_fn", "get_swa_avg_fn"]


def _check_decay(decay: float) -> None:
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")


def _lerp_all(averages: list, currents: list, weight: float) -> None:
    """Move each average toward its current value by ``weight``, in place (floating tensors), rounded as torch's
    ``_foreach_lerp_``: one rounding of ``start + weight * (end - start)``, which ``lerp_`` gives and a multiply
    then an add (two roundings) missed by an ulp."""
    with no_grad():
        for average, current in zip(averages, currents):
            average.lerp_(current, weight)


def get_ema_multi_avg_fn(decay: float = 0.999) -> Callable:
    """An exponential moving average over lists of tensors: ``ema = decay * ema + (1 - decay) * current``."""
    _check_decay(decay)

    def ema_update(ema_param_list: list, current_param_list: list, _: Any) -> None:
        if ema_param_list[0].is_floating_point() or ema_param_list[0].is_complex():
            _lerp_all(ema_param_list, current_param_list, 1 - decay)
            return
        with no_grad():
            for ema, current in zip(ema_param_list, current_param_list):
                ema.copy_(ema * decay + current * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn() -> Callable:
    """The running mean over lists of tensors: after ``n`` models, ``avg += (current - avg) / (n + 1)``."""
    def swa_update(averaged_param_list: list, current_param_list: list, num_averaged: Tensor | int) -> None:
        # as torch, a tensor count gives a float32 weight (1 / 3 rounded to float32, for instance)
        weight = float(1 / (num_averaged + 1))
        if averaged_param_list[0].is_floating_point() or averaged_param_list[0].is_complex():
            _lerp_all(averaged_param_list, current_param_list, weight)
            return
        with no_grad():
            for average, current in zip(averaged_param_list, current_param_list):
                average.add_(current - average, alpha=weight)

    return swa_update


def get_ema_avg_fn(decay: float = 0.999) -> Callable:
    """The exponential moving average of one tensor, returned: ``decay * ema + (1 - decay) * current``."""
    _check_decay(decay)

    def ema_update(ema_param: Tensor, current_param: Tensor, num_averaged: Any) -> Tensor:
        with no_grad():
            return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn() -> Callable:
    """The running mean of one tensor, returned: ``avg + (current - avg) / (num_averaged + 1)``."""
    def swa_update(averaged_param: Tensor, current_param: Tensor, num_averaged: Tensor | int) -> Tensor:
        with no_grad():
            return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


class AveragedModel(Module):
    """A copy of ``model`` whose parameters (and buffers, with ``use_buffers``) are an average of the
    models passed to ``update_parameters``: the running mean by default (SWA), or ``avg_fn`` (one tensor
    at a time, returning the new average) or ``multi_avg_fn`` (lists of tensors, updated in place).
    The first update copies the model."""

    def __init__(self, model: Module, device: Any = None, avg_fn: Callable | None = None,
                 multi_avg_fn: Callable | None = None, use_buffers: bool = False) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = copy.deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", _tensor(0, dtype=_long))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self.module(*args, **kwargs)

    def update_parameters(self, model: Module) -> None:
        """Fold ``model``'s current parameters into the average (buffers are copied, unless averaged)."""
        if self.use_buffers:
            ours = [t.detach() for t in itertools.chain(self.module.parameters(), self.module.buffers())]
            theirs = [t.detach() for t in itertools.chain(model.parameters(), model.buffers())]
        else:
            ours = [t.detach() for t in self.parameters()]
            theirs = [t.detach() for t in model.parameters()]
        ours, theirs = ours[:len(theirs)], theirs[:len(ours)]
        with no_grad():
            if int(self.n_averaged) == 0:
                for average, current in zip(ours, theirs):
                    average.copy_(current)
            else:
                self._average(ours, theirs)
            if not self.use_buffers:
                self._copy_buffers(model)
            self.n_averaged += 1

    def _copy_buffers(self, model: Module) -> None:
        """Copy ``model``'s buffers over the copy's; as torch, a model with more or fewer buffers is refused
        (parameters beyond the shorter list are skipped, but a buffer has no average to fall back on)."""
        mine, theirs = list(self.module.buffers()), list(model.buffers())
        if len(mine) != len(theirs):
            raise ValueError(
                f"AveragedModel.update_parameters: the model has {len(theirs)} buffers but the averaged copy has "
                f"{len(mine)}; pass a model of the same architecture as the one the AveragedModel was built from")
        for own, source in zip(mine, theirs):
            own.detach().copy_(source.detach())

    def _average(self, ours: list, theirs: list) -> None:
        if self.multi_avg_fn is None:  # one tensor at a time: the given function, or the running mean
            update = self.avg_fn if self.avg_fn is not None else get_swa_avg_fn()
            for average, current in zip(ours, theirs):
                average.copy_(update(average, current, self.n_averaged))
            return
        by_dtype: dict = {}  # as torch, a multi-tensor function sees one dtype at a time
        for average, current in zip(ours, theirs):
            pair = by_dtype.setdefault(average.dtype, ([], []))
            pair[0].append(average)
            pair[1].append(current)
        for averages, currents in by_dtype.values():
            self.multi_avg_fn(averages, currents, self.n_averaged)


def _is_batch_norm(module: Module) -> bool:
    """A batch-norm layer (SyncBatchNorm and the lazy ones included). Not instance norm, though it keeps running
    statistics the same way: torch's update_bn leaves an InstanceNorm's statistics as they are."""
    return isinstance(module, _BatchNorm)


def update_bn(loader: Iterable, model: Module, device: Any = None) -> None:
    """Recompute the running statistics of ``model``'s batch-norm layers with one pass over ``loader``.

    Each layer's statistics are reset and, with ``momentum=None``, become the
    cumulative average over the batches (the first element of a batch that is a
    list or tuple is the input). The model's training mode is restored after.
    """
    momenta = {}
    for module in model.modules():
        if _is_batch_norm(module):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    with no_grad():
        for batch in loader:
            if isinstance(batch, (list, tuple)):
                batch = batch[0]
            if device is not None:
                batch = batch.to(device)
            model(batch)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneal each group's learning rate to its ``swa_lr`` over ``anneal_epochs`` epochs (cosine or linear),
    then hold it.

    >>> import ember
    >>> opt = ember.optim.SGD([ember.nn.Parameter(ember.ones(1))], lr=1.0)
    >>> s = ember.optim.swa_utils.SWALR(opt, swa_lr=0.1, anneal_epochs=2, anneal_strategy="linear")
    >>> [round((opt.step(), s.step(), s.get_last_lr()[0])[2], 6) for _ in range(3)]
    [0.55, 0.1, 0.1]
    """

    def __init__(self, optimizer: Optimizer, swa_lr: float | list, anneal_epochs: int = 10,
                 anneal_strategy: str = "cos", last_epoch: int = -1) -> None:
        for value, group in zip(_per_group("swa_lr", optimizer, swa_lr), optimizer.param_groups):
            group["swa_lr"] = value
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t: float) -> float:
        return t

    @staticmethod
    def _cosine_anneal(t: float) -> float:
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr: float, swa_lr: float, alpha: float) -> float:
        """The learning rate the anneal started from, recovered from the current one at progress ``alpha``."""
        return swa_lr if alpha == 1 else (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self) -> list:
        self._check_in_step()
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        span = max(1, self.anneal_epochs)
        before = self.anneal_func(max(0, min(1, (step - 1) / span)))
        now = self.anneal_func(max(0, min(1, step / span)))
        groups = self.optimizer.param_groups
        starts = [self._get_initial_lr(g["lr"], g["swa_lr"], before) for g in groups]
        return [g["swa_lr"] * now + start * (1 - now) for g, start in zip(groups, starts)]

    def _set_anneal_func(self, anneal_strategy: str) -> None:
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal

    def state_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict: dict) -> None:
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
