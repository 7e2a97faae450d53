"""``Optimizer``: the base class that holds parameter groups and per-parameter state.

A subclass supplies ``defaults`` (the hyper-parameters every group gets unless
it sets its own) and ``step()``, which updates ``group["params"]`` from their
``.grad`` and keeps whatever it needs between steps in ``self.state[param]``.
"""
from __future__ import annotations

import copy
import functools
import itertools
import warnings
from collections import OrderedDict, defaultdict
from typing import Any, Callable, Iterable

import numpy as np

from ember import _dtype
from ember._ops._quiet import IGNORE_ALL, IGNORE_DIVIDE_INVALID, quietly
from ember._ops.complex import _complex_elements, _real_pairs
from ember._layout import strided
from ember._tensor import Tensor
from ember.optim import _recorded
from ember.autograd.grad_mode import enable_grad, no_grad
from ember.nn.modules.module import _LEGACY_TYPE_NAMES, _clear_grad
from ember.utils.hooks import RemovableHandle

__all__ = ["Optimizer", "required", "register_optimizer_step_pre_hook", "register_optimizer_step_post_hook"]

_global_step_pre_hooks: OrderedDict = OrderedDict()
_global_step_post_hooks: OrderedDict = OrderedDict()


def register_optimizer_step_pre_hook(hook: Callable) -> RemovableHandle:
    """Call ``hook(optimizer, args, kwargs)`` before every optimizer's ``step``; it may return ``(args, kwargs)``."""
    return RemovableHandle.add(_global_step_pre_hooks, hook)


def register_optimizer_step_post_hook(hook: Callable) -> RemovableHandle:
    """Call ``hook(optimizer, args, kwargs)`` after every optimizer's ``step``."""
    return RemovableHandle.add(_global_step_post_hooks, hook)


def _add_hook(hooks: OrderedDict, hook: Callable, prepend: bool) -> RemovableHandle:
    handle = RemovableHandle.add(hooks, hook)
    if prepend:
        hooks.move_to_end(handle.id, last=False)
    return handle


def _run_pre_hooks(optimizer: "Optimizer", step: Callable, args: tuple, kwargs: dict) -> tuple:
    for hook in itertools.chain(list(_global_step_pre_hooks.values()),
                                list(optimizer._optimizer_step_pre_hooks.values())):
        result = hook(optimizer, args, kwargs)
        if result is not None:
            if not (isinstance(result, tuple) and len(result) == 2):
                raise RuntimeError(f"{step} must return None or a tuple of (new_args, new_kwargs), but got {result}.")
            args, kwargs = result
    return args, kwargs


def _with_step_hooks(step: Callable) -> Callable:
    """``step`` wrapped to run the global and the optimizer's step hooks around it."""
    @functools.wraps(step)
    def hooked_step(*args, **kwargs):
        self = args[0]  # as torch, the hooks see (and may replace) the arguments with the optimizer first
        if _global_step_pre_hooks or self._optimizer_step_pre_hooks:  # (most steps have none: no call then)
            args, kwargs = _run_pre_hooks(self, step, args, kwargs)
        out = step(*args, **kwargs)
        if self._optimizer_step_post_hooks or _global_step_post_hooks:
            for hook in itertools.chain(list(self._optimizer_step_post_hooks.values()),
                                        list(_global_step_post_hooks.values())):
                hook(self, args, kwargs)
        return out

    hooked_step.hooked = True
    return hooked_step


class _RequiredParameter:
    """The default of a hyper-parameter that has no default: every group must give it."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()


def _typename(value: Any) -> str:
    """How errors name a wrong argument: ``ember.FloatTensor`` for a float32 tensor (a Parameter too), else the type."""
    if isinstance(value, Tensor):
        return f"ember.{_LEGACY_TYPE_NAMES.get(value.dtype.name, 'Float')}Tensor"
    return type(value).__name__




class Optimizer:
    """Base class of optimizers: ``params`` is an iterable of tensors, or of dicts (parameter groups).

    >>> import ember
    >>> w = ember.nn.Parameter(ember.ones(2))
    >>> opt = ember.optim.SGD([{"params": [w], "lr": 0.5}], lr=0.1)
    >>> [g["lr"] for g in opt.param_groups]
    [0.5]
    """

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # every subclass's own step runs the step hooks, a user's subclass too (as torch patches it)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "hooked", False):
            cls.step = _with_step_hooks(step)

    def __init__(self, params: Iterable, defaults: dict) -> None:
        self._optimizer_step_pre_hooks: OrderedDict = OrderedDict()
        self._optimizer_step_post_hooks: OrderedDict = OrderedDict()
        self._optimizer_state_dict_pre_hooks: OrderedDict = OrderedDict()
        self._optimizer_state_dict_post_hooks: OrderedDict = OrderedDict()
        self._optimizer_load_state_dict_pre_hooks: OrderedDict = OrderedDict()
        self._optimizer_load_state_dict_post_hooks: OrderedDict = OrderedDict()
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or dicts, but got "
                f"{_typename(params)}; wrap it in a list: [param]"
            )
        self.defaults = defaults
        self.state: defaultdict = defaultdict(dict)
        self.param_groups: list[dict] = []
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def add_param_group(self, param_group: dict) -> None:
        """Add a group of parameters, with hyper-parameters that override the defaults."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, but the ordering of tensors "
                "in sets will change between runs. Please use a list instead."
            )
        group = dict(param_group, params=list(params))
        self._split_names(group)
        for param in group["params"]:
            _check_optimizable(param, self.defaults.get("differentiable", False))
        for name, default in self.defaults.items():
            if default is required and name not in group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {name}")
            group.setdefault(name, default)
        self._check_no_duplicates(group["params"])
        self.param_groups.append(group)

    def _split_names(self, group: dict) -> None:
        """Accept ``(name, tensor)`` pairs (``model.named_parameters()``): the names go to ``param_names``."""
        named = any(isinstance(p, tuple) for p in group["params"])
        if named and not all(isinstance(p, tuple) for p in group["params"]):
            raise ValueError("all optimizer params should be with/without names. Some param names are missing")
        if named:
            group["param_names"] = [name for name, _ in group["params"]]
            group["params"] = [param for _, param in group["params"]]
        if self.param_groups and named != ("param_names" in self.param_groups[0]):
            raise ValueError(
                "all optimizer param groups should be with/without names. cannot add param group "
                f"{'with' if named else 'without'} names to the optimizer"
            )

    def _check_no_duplicates(self, params: list) -> None:
        ids = [id(p) for p in params]
        if len(set(ids)) != len(ids):
            warnings.warn(
                "optimizer contains a parameter group with duplicate parameters: each step would update them more "
                "than once; a future version will make this an error. Pass each parameter once, e.g. "
                "list(dict.fromkeys(params))",
                stacklevel=3,
            )
        existing = {id(p) for group in self.param_groups for p in group["params"]}
        if existing & set(ids):
            raise ValueError("some parameters appear in more than one parameter group")

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Forget the gradients: ``None`` by default (cheaper, and skipped by ``step``), zeros otherwise."""
        for group in self.param_groups:
            for param in group["params"]:
                if param.grad is not None:  # (read here: most steps find every parameter with a gradient to drop)
                    if set_to_none:
                        param.grad = None
                    else:
                        _clear_grad(param, False)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must implement step(closure=None)")

    # ------------------------------------------------------------------ hooks

    def register_step_pre_hook(self, hook: Callable) -> RemovableHandle:
        """Call ``hook(optimizer, args, kwargs)`` before each ``step``; it may return new ``(args, kwargs)``."""
        return RemovableHandle.add(self._optimizer_step_pre_hooks, hook)

    def register_step_post_hook(self, hook: Callable) -> RemovableHandle:
        """Call ``hook(optimizer, args, kwargs)`` after each ``step``."""
        return RemovableHandle.add(self._optimizer_step_post_hooks, hook)

    def register_state_dict_pre_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        """Call ``hook(optimizer)`` before ``state_dict`` builds its dict."""
        return _add_hook(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        """Call ``hook(optimizer, state_dict)`` on the built dict; a returned dict replaces it."""
        return _add_hook(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        """Call ``hook(optimizer, state_dict)`` before loading; a returned dict is loaded instead."""
        return _add_hook(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        """Call ``hook(optimizer)`` after loading."""
        return _add_hook(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    # ------------------------------------------------------------------ saving and loading

    def state_dict(self) -> dict:
        """``{"state": {index: state}, "param_groups": [...]}`` with parameters replaced by their index.

        Indices count the parameters across groups in order, so the dict can be
        loaded into an optimizer built the same way over other tensors. The state
        values are the live tensors, not copies.
        """
        for hook in list(self._optimizer_state_dict_pre_hooks.values()):
            hook(self)
        index_of: dict[int, int] = {}
        groups = []
        for group in self.param_groups:
            for param in group["params"]:
                index_of.setdefault(id(param), len(index_of))
            packed = {k: v for k, v in group.items() if k != "params"}
            packed["params"] = [index_of[id(p)] for p in group["params"]]
            groups.append(packed)
        state = {index_of[id(p)]: s for p, s in self.state.items() if id(p) in index_of}
        saved = {"state": state, "param_groups": groups}
        for hook in list(self._optimizer_state_dict_post_hooks.values()):
            result = hook(self, saved)
            if result is not None:
                saved = result
        return saved

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore hyper-parameters and state saved by ``state_dict`` (tensors are cast to each param's dtype)."""
        state_dict = state_dict.copy()  # hooks may change it: the caller's dict stays as it was
        for hook in list(self._optimizer_load_state_dict_pre_hooks.values()):
            result = hook(self, state_dict)
            if result is not None:
                state_dict = result
        saved_groups = copy.deepcopy(state_dict["param_groups"])
        if len(saved_groups) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        for group, saved in zip(self.param_groups, saved_groups):
            if len(group["params"]) != len(saved["params"]):
                raise ValueError(
                    "loaded state dict contains a parameter group that doesn't match the size of optimizer's group"
                )
        param_of = dict(zip(
            itertools.chain.from_iterable(g["params"] for g in saved_groups),
            itertools.chain.from_iterable(g["params"] for g in self.param_groups),
        ))
        state: defaultdict = defaultdict(dict)
        for index, value in state_dict["state"].items():
            if index in param_of:
                param = param_of[index]
                state[param] = _cast_state(param, value)
            else:
                state[index] = value  # state of no parameter: kept as it is, as torch does
        # The saved hyper-parameters, around this optimizer's own tensors (and names, if the save had none).
        groups = []
        for group, saved in zip(self.param_groups, saved_groups):
            saved["params"] = group["params"]
            if "param_names" in group:
                saved.setdefault("param_names", group["param_names"])
            groups.append(saved)
        self.__setstate__({"state": state, "param_groups": groups})
        for hook in list(self._optimizer_load_state_dict_post_hooks.values()):
            hook(self)

    def __setstate__(self, state: dict) -> None:
        """Unpickling and ``load_state_dict`` end here: a subclass fills in hyper-parameters older saves lack."""
        self.__dict__.update(state)
        for name in ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks", "_optimizer_state_dict_pre_hooks",
                     "_optimizer_state_dict_post_hooks", "_optimizer_load_state_dict_pre_hooks",
                     "_optimizer_load_state_dict_post_hooks"):
            self.__dict__.setdefault(name, OrderedDict())

    def __getstate__(self) -> dict:
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for i, group in enumerate(self.param_groups):
            if i:
                lines.append("")
            lines.append(f"Parameter Group {i}")
            lines.extend(f"    {key}: {group[key]}" for key in sorted(group) if key != "params")
        lines.append(")")
        return "\n".join(lines)


def _check_optimizable(param: Any, differentiable: bool) -> None:
    if not isinstance(param, Tensor):
        raise TypeError(f"optimizer can only optimize Tensors, but one of the params is {_typename(param)}")
    if not (differentiable or param.is_leaf or param.retains_grad):
        raise ValueError("can't optimize a non-leaf Tensor")  # (torch's words: an optimizer made with
        # differentiable=True takes one, recording its update for the graph it is part of)


def _cast_state(param: Tensor, value: Any, key: str | None = None) -> Any:
    """A loaded state value with floating tensors in ``param``'s dtype (except ``step`` counters)."""
    if isinstance(value, Tensor):
        if key != "step" and param.is_floating_point() and value.is_floating_point():
            return value.to(param.dtype)
        return value
    if isinstance(value, dict):
        return {k: _cast_state(param, v, k) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast_state(param, v, key) for v in value)
    return value


# ---------------------------------------------------------------------------- the built-in optimizers' common parts


def _scalar(value: Any) -> Any:
    """A hyper-parameter as a Python number (a one-element tensor lr or beta is read once per step)."""
    return value.item() if isinstance(value, Tensor) else value


def _learning_rate(group: dict, param: np.ndarray | Tensor) -> float | Tensor:
    """The group's lr as the update of ``param`` uses it: a number, but in a recorded update a tensor lr that
    requires grad, so that the step's gradient reaches it (a learned learning rate), as torch's does."""
    lr = group["lr"]
    if isinstance(lr, Tensor) and lr.requires_grad and isinstance(param, Tensor):
        return lr.reshape(())
    return _scalar(lr)


def _state_tensor(array: np.ndarray) -> Tensor:
    """A state entry: an ember tensor (so that ``state_dict`` holds tensors, as torch's) around ``array``."""
    # A scalar parameter's arithmetic gives NumPy scalars, and np.ascontiguousarray makes a 0-d array 1-d: both
    # are made 0-d arrays, which the updates change in place
    if type(array) is not np.ndarray or not array.ndim:
        return Tensor._wrap(np.array(array))
    return Tensor._wrap(np.ascontiguousarray(array))


def _counter(value: float = 0.0) -> Tensor:
    """A step counter: a 0-d float32 tensor, as torch keeps it."""
    return Tensor._wrap(np.array(value, dtype=np.float32))


def _advance(counter: Tensor) -> float:
    """Add one to a step counter and return its new value."""
    counter._data += 1
    counter._bump()
    return float(counter._data)


# Half types: torch's ops on them compute in float32 and round each result once.
_NARROW = (np.dtype(np.float16), _dtype.BF16)


def _narrow(array: np.ndarray) -> bool:
    return array.dtype.itemsize == 2 and array.dtype in _NARROW  # (the size first: a cheap no for float32)


def _lerp(start: np.ndarray, end: np.ndarray, weight: float, scratch: np.ndarray | None = None) -> None:
    """``start`` moved in place toward ``end`` by ``weight``, rounded as torch's ``lerp_`` (exact at both ends).

    ``scratch`` (shaped and typed as ``end``), when given, holds the one temporary.
    """
    if isinstance(start, Tensor):
        _recorded.lerp_(start, end, weight)
        return
    if _narrow(start):
        wide = start.astype(np.float32)
        _lerp(wide, end.astype(np.float32), weight)
        start[...] = wide
        return
    step = np.subtract(end, start, out=scratch)
    if abs(weight) < 0.5:
        step *= weight
        start += step
    else:
        step *= 1 - weight
        np.subtract(end, step, out=start)


def _check_hyper(name: str, value: Any, low: float = 0.0, high: float | None = None, index: int | None = None) -> None:
    """Raise torch's ``ValueError("Invalid <name>: value")`` for a value outside ``[low, high)``."""
    value = _scalar(value)
    if value < low or (high is not None and value >= high):
        where = f" at index {index}" if index is not None else ""
        raise ValueError(f"Invalid {name}{where}: {value}")


def _check_betas(betas: tuple) -> None:
    if len(betas) < 2:  # (torch fails here too, with an IndexError of its own; it reads the first two alone)
        raise IndexError(f"betas must hold the two coefficients (beta1, beta2), got {tuple(betas)}")
    for i, beta in enumerate(betas[:2]):
        _check_hyper("beta parameter", beta, 0.0, 1.0, index=i)


def _check_lr(lr: Any) -> None:
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError(f"Tensor lr must be 1-element, got shape {list(lr.shape)}")
    _check_hyper("learning rate", lr)


def _check_fused(fused: bool | None, foreach: bool | None, differentiable: bool) -> None:
    """``fused`` runs the whole update as one kernel: torch refuses it with a differentiable update or with
    ``foreach`` (another way of batching the same update)."""
    if fused and differentiable:
        raise RuntimeError("`fused` does not support `differentiable`")
    if fused and foreach:
        raise RuntimeError("`fused` and `foreach` cannot be `True` together.")


class _PerParameter(Optimizer):
    """An optimizer whose update of a parameter reads only its own gradient and state.

    A subclass writes ``_update(param, grad, state, group)`` on NumPy arrays: it
    changes ``param`` (the parameter's memory) in place, and gets ``grad``
    already negated under ``maximize``. With ``differentiable=True`` the same
    ``_update`` gets the ember tensors instead (the parameter, its gradient,
    the state's tensors), so that autograd records the step: it reaches the
    state through ``_buffer`` and does its arithmetic with the helpers below
    (``_lerp``, ``_sqrt``, ``_plus_quotient_`` ...), which take either.
    ``_options`` are the group options (with torch's defaults) that saves from
    older versions may lack.
    """

    _options: dict = {"maximize": False, "foreach": None, "differentiable": False}
    _takes_complex = True  # (torch's Adafactor and Muon refuse complex parameters)
    _foreach_records = False  # whether torch's batched (foreach) update can be recorded: SGD's alone

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            for name, default in self._options.items():
                group.setdefault(name, default)
        for param_state in self.state.values():
            step = param_state.get("step") if isinstance(param_state, dict) else None
            if step is not None and not isinstance(step, Tensor):
                param_state["step"] = _counter(float(step))  # a save that kept the step as a number

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update every parameter that has a gradient; ``closure`` (re-evaluating the loss) is called first."""
        loss = closure_loss(closure)
        for group in self.param_groups:
            # (quietly: an update computes on arrays, and torch's meets inf and nan without a word, whatever the
            # user's warnings filter or np.seterr say)
            quietly(IGNORE_ALL, self._step_group, group)
        return loss

    def _step_group(self, group: dict) -> None:
        """Update the parameters of one group that have a gradient."""
        if group.get("differentiable", False):
            self._recorded_step_group(group)
            return
        states, update = self.state, self._update
        maximize = group.get("maximize", False)
        with no_grad():
            for param in group["params"]:
                grad = param.grad
                if grad is None:
                    continue
                grad = grad._data if grad.layout is strided else self._sparse_gradient(grad, group)
                if maximize:
                    grad = -grad
                state = states[param]
                data = param._data
                if data.dtype.kind == "c":
                    self._update_pairs(data, grad, state, group)
                else:
                    update(data, grad, state, group)
                param._bump()
                if not state:  # an update that keeps nothing (SGD without momentum) leaves no entry
                    del states[param]

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict, group: dict) -> None:
        raise NotImplementedError

    def _recorded_step_group(self, group: dict) -> None:
        """``differentiable=True``: the same update run on the tensors themselves with grad mode on (as torch's),
        so that autograd records it from the parameter, its gradient and its state to their new values."""
        if group.get("foreach") and not self._foreach_records:  # (torch's batched updates but SGD's record nothing)
            raise AssertionError("_foreach ops don't support autograd")
        with enable_grad():
            for param in group["params"]:
                grad = param.grad
                if grad is None:
                    continue
                if grad.layout is not strided:
                    raise RuntimeError(f"{type(self).__name__} with differentiable=True takes dense gradients only; "
                                       "make the gradient dense (grad.to_dense()) before the step")
                state = self.state[param]
                counter = state.get("step")
                if isinstance(counter, Tensor) and counter.requires_grad:
                    raise RuntimeError("`requires_grad` is not supported for `step` in differentiable mode")
                grad = -grad if group["maximize"] else grad
                if param.is_complex():
                    self._update_pairs(param, grad, state, group)
                else:
                    self._update(param, grad, state, group)
                if not state:
                    del self.state[param]

    # Whether a sparse gradient (nn.Embedding(sparse=True)'s) is taken, as its dense sum: for SGD and Adagrad
    # that is the same update as torch's sparse one. The others refuse it, as torch's do.
    _takes_sparse = False
    _sparse_hint = ""  # what the refusal suggests instead (Adam's: SparseAdam)

    def _sparse_gradient(self, grad: Tensor, group: dict) -> np.ndarray:
        if not self._takes_sparse:
            raise RuntimeError(f"{type(self).__name__} does not support sparse gradients{self._sparse_hint}")
        if group.get("weight_decay", 0):
            raise RuntimeError("weight_decay option is not compatible with sparse gradients")
        return dense_gradient(grad)

    def _update_pairs(self, param: np.ndarray | Tensor, grad: np.ndarray | Tensor, state: dict,
                      group: dict) -> None:
        """The update of a complex parameter, as torch makes it: that of its (real, imaginary) pairs, so that the
        two parts are independent coordinates (Adam's square of a gradient is then no complex square). The state
        stays complex, shaped as the parameter, as torch keeps it."""
        if not self._takes_complex:
            raise RuntimeError(f"{type(self).__name__} does not support complex parameters; optimize "
                               "ember.view_as_real(p) of a real parameter p instead")
        recorded = isinstance(param, Tensor)
        pairs = {name: _as_pairs(value, recorded) for name, value in state.items()}
        before = dict(pairs)
        if recorded:
            self._update(_recorded.real_pairs(param), _recorded.real_pairs(grad), pairs, group)
        else:
            self._update(_real_pairs(param), _real_pairs(grad), pairs, group)
        for name, value in pairs.items():
            if value is not before.get(name):  # made or replaced by the update: back to complex elements
                state[name] = _as_complex(value, tuple(param.shape), recorded)

    @staticmethod
    def _begin(param: np.ndarray, grad: np.ndarray, state: dict, group: dict, *zeros: str) -> tuple:
        """The usual opening of an update: state ``zeros`` made on the first step, then ``(step, lr, grad)``
        with the step counted and the weight decay applied."""
        if not state:
            _zeros(state, param, *zeros)
        step = _advance(state["step"])
        lr = _learning_rate(group, param)
        return step, lr, _with_weight_decay(param, grad, group, lr)


def closure_loss(closure: Callable[[], Any] | None) -> Any:
    """What a step's ``closure`` returns (it re-evaluates the loss, recording even under no_grad); None without."""
    if closure is None:
        return None
    with enable_grad():
        return closure()


def dense_gradient(grad: Tensor) -> np.ndarray:
    """A gradient's array; a sparse one (``nn.Embedding(sparse=True)``'s) summed into a dense array first."""
    if grad.layout is strided:
        return grad._data
    from ember._ops.sparse import to_dense  # imported late: the ops import much of ember

    return to_dense(grad)._data


def _with_weight_decay(param: np.ndarray, grad: np.ndarray, group: dict, lr: float) -> np.ndarray:
    """The L2 penalty: added to the gradient, or (decoupled, as AdamW) taken from the parameter."""
    decay = group["weight_decay"]
    if decay == 0:
        return grad
    if group.get("decoupled_weight_decay", False):
        _scale_(param, 1 - lr * decay)
        return grad
    return _plus_scaled(grad, param, decay)


def _plus_scaled(first: np.ndarray, second: np.ndarray, alpha: float, out: np.ndarray | None = None) -> np.ndarray:
    """``first + alpha * second`` (into ``out``), as torch's ``add(second, alpha=)``: for a half type, with
    ``alpha`` rounded to it and the rest in float32, rounded once."""
    if isinstance(first, Tensor):
        return _recorded.plus_scaled(first, second, alpha, out)
    if not _narrow(first):
        return np.add(first, second if alpha == 1 else alpha * second, out=out)  # (SGD's buffer: no product by 1)
    wide = first.astype(np.float32)
    wide += np.float32(np.array(alpha, first.dtype)) * second.astype(np.float32)
    if out is None:
        return wide.astype(first.dtype)
    out[...] = wide
    return out


def _plus_quotient_(target: np.ndarray, numerator: np.ndarray, denominator: np.ndarray, value: float,
                    scratch: np.ndarray | None = None) -> None:
    """``target += value * (numerator / denominator)`` as torch's ``addcdiv_``: for a half type, in float32
    (``value`` not rounded first), rounded once. ``scratch`` as in ``_lerp`` (it may be ``denominator``)."""
    if isinstance(target, Tensor):
        _recorded.plus_quotient_(target, numerator, denominator, value)
        return
    if _narrow(target):  # (an eps below the type's range rounds to 0, so the quotient may be inf, quietly)
        quotient = quietly(IGNORE_DIVIDE_INVALID, np.divide, numerator.astype(np.float32),
                           denominator.astype(np.float32))
        target[...] = target.astype(np.float32) + np.float32(value) * quotient
    else:
        quotient = np.divide(numerator, denominator, out=scratch)
        quotient *= value
        target += quotient


_ARRAYS = (np.ndarray, np.generic)


def _with_number(op: np.ufunc, first, second) -> np.ndarray:
    """``op(first, second)`` of an array and a number (either way round) as torch computes it: for a half type,
    in float32 with the number not rounded first, and the result rounded to the type (NumPy would round the
    number to float16 first, or widen bfloat16 to float32 and stay there)."""
    if isinstance(first, Tensor) or isinstance(second, Tensor):
        return _recorded.with_number(op, first, second)
    array = first if isinstance(first, _ARRAYS) else second  # (a scalar parameter's values are NumPy scalars)
    if not _narrow(array):
        return op(first, second)
    wide = [x.astype(np.float32) if isinstance(x, _ARRAYS) else np.float32(x) for x in (first, second)]
    return op(*wide).astype(array.dtype)


def _scale_(array: np.ndarray, factor: float) -> None:
    """``array *= factor`` as torch's ``mul_``: for a half type, in float32 (the factor not rounded first)."""
    if isinstance(array, Tensor):
        array.mul_(factor)
    elif _narrow(array):
        array[...] = array.astype(np.float32) * np.float32(factor)
    else:
        array *= factor


def _average_square(average: np.ndarray, grad: np.ndarray, keep: float,
                    scratch: np.ndarray | None = None) -> np.ndarray:
    """``average = keep * average + (1 - keep) * grad**2``, in place (returned for chaining); ``scratch`` as
    in ``_lerp``."""
    if isinstance(average, Tensor):
        return _recorded.average_square_(average, grad, keep)
    if _narrow(average):  # as torch: mul_, then addcmul_, each rounded once
        _scale_(average, keep)
        wide = grad.astype(np.float32)
        average[...] = average.astype(np.float32) + np.float32(1 - keep) * wide * wide
        return average
    average *= keep
    square = np.multiply(grad, 1 - keep, out=scratch)
    square *= grad
    average += square
    return average


def _as_pairs(value, recorded: bool = False):
    """A complex state tensor seen as its real pairs (a view: updating it updates the state; ``recorded``, an
    autograd view); others unchanged."""
    if isinstance(value, Tensor) and value._data.dtype.kind == "c":
        return _recorded.real_pairs(value) if recorded else _state_tensor(_real_pairs(value._data))
    return value


def _as_complex(value, shape: tuple, recorded: bool = False):
    """A state tensor the update made on real pairs, as the complex elements they are (a view)."""
    if isinstance(value, Tensor) and value._data.shape == (*shape, 2) and value._data.dtype.kind == "f":
        if recorded:
            return _recorded.complex_elements(value)
        return _state_tensor(_complex_elements(np.ascontiguousarray(value._data)))
    return value


def _zeros(state: dict, param: np.ndarray, *names: str) -> None:
    """New state entries ``names``: zeros shaped as ``param``, with a step counter first."""
    state["step"] = _counter()
    for name in names:
        state[name] = _state_tensor(np.zeros_like(_array(param)))


def _array(value: np.ndarray | Tensor) -> np.ndarray:
    """The values of a parameter, gradient or state entry, given as an array or (a recorded update) a tensor."""
    return value._data if isinstance(value, Tensor) else value


def _buffer(state: dict, name: str, param: np.ndarray | Tensor) -> np.ndarray | Tensor:
    """State entry ``name`` as the update of ``param`` works on it: its array, or (recorded) the tensor."""
    return state[name] if isinstance(param, Tensor) else state[name]._data


def _sqrt(value: np.ndarray | Tensor, out: np.ndarray | None = None) -> np.ndarray | Tensor:
    """The square root (into ``out``, an array update's scratch)."""
    return _recorded.sqrt(value) if isinstance(value, Tensor) else np.sqrt(value, out=out)


def _scratch(like: np.ndarray | Tensor) -> np.ndarray | None:
    """A temporary an array update reuses for its intermediate results (a recorded update keeps each)."""
    return None if isinstance(like, Tensor) else np.empty_like(like)


def _constant(array: np.ndarray, like: np.ndarray | Tensor) -> np.ndarray | Tensor:
    """Values computed on arrays that carry no gradient (signs, masks), as the update of ``like`` uses them."""
    return Tensor._wrap(array) if isinstance(like, Tensor) else array


def _assign_(target: np.ndarray | Tensor, value: np.ndarray | Tensor) -> None:
    if isinstance(target, Tensor):
        target.copy_(value)
    else:
        target[...] = value


def _new_state(values: np.ndarray | Tensor) -> Tensor:
    """A state tensor starting at ``values`` (a copy; outside the graph, as torch's first momentum buffer)."""
    if isinstance(values, Tensor):
        return _recorded.detached_copy(values)
    return _state_tensor(values.copy())


def _maximum_(target: np.ndarray | Tensor, other: np.ndarray | Tensor) -> np.ndarray | Tensor:
    """``target`` replaced in place by the elementwise maximum of it and ``other``."""
    if isinstance(target, Tensor):
        return _recorded.maximum_(target, other)
    return np.maximum(target, other, out=target)


def _typed(value: float, like: np.ndarray | Tensor) -> Any:
    """A number as the update adds it to ``like``: an array of its type rounds it there, as torch rounds it to
    a half type (a plain number would widen bfloat16 to float32); a tensor takes the number itself."""
    return value if isinstance(like, Tensor) else np.array(value, like.dtype)


def _check_adam_family(lr: Any, eps: float, betas: tuple, weight_decay: float) -> None:
    _check_lr(lr)
    _check_hyper("epsilon value", eps)
    _check_betas(betas)
    _check_hyper("weight_decay value", weight_decay)


def _clip_(values: np.ndarray | Tensor, low: float, high: float) -> None:
    if isinstance(values, Tensor):
        values.clamp_(low, high)
    else:
        np.clip(values, low, high, out=values)


def _zeroed_where(mask: np.ndarray, values: np.ndarray | Tensor) -> np.ndarray | Tensor:
    """A copy of ``values`` with zeros where ``mask`` holds."""
    if isinstance(values, Tensor):
        return values.masked_fill(Tensor._wrap(mask), 0)
    return np.where(mask, 0, values).astype(values.dtype)
