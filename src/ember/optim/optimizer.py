"""``Optimizer``: the base class that holds parameter groups and per-parameter state.

A subclass supplies ``defaults`` (the hyper-parameters every group gets unless
it sets its own) and ``step()``, which updates ``group["params"]`` from their
``.grad`` and keeps whatever it needs between steps in ``self.state[param]``.
"""
from __future__ import annotations

import copy
import itertools
import warnings
from collections import defaultdict
from typing import Any, Callable, Iterable

from ember._tensor import Tensor
from ember.nn.modules.module import _LEGACY_TYPE_NAMES, _clear_grad

__all__ = ["Optimizer", "required"]


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

    def __init__(self, params: Iterable, defaults: dict) -> None:
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
            _check_optimizable(param)
        for name, default in self.defaults.items():
            if default is required and name not in group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {name}")
            group.setdefault(name, default)
        self._check_no_duplicates(group["params"])
        self.param_groups.append(group)

    def _split_names(self, group: dict) -> None:
        """Accept ``(name, tensor)`` pairs (``model.named_parameters()``): the names go to ``param_names``."""
        named = any(isinstance(p, tuple) for p in group["params"])
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
                _clear_grad(param, set_to_none)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must implement step(closure=None)")

    # ------------------------------------------------------------------ saving and loading

    def state_dict(self) -> dict:
        """``{"state": {index: state}, "param_groups": [...]}`` with parameters replaced by their index.

        Indices count the parameters across groups in order, so the dict can be
        loaded into an optimizer built the same way over other tensors. The state
        values are the live tensors, not copies.
        """
        index_of: dict[int, int] = {}
        groups = []
        for group in self.param_groups:
            for param in group["params"]:
                index_of.setdefault(id(param), len(index_of))
            packed = {k: v for k, v in group.items() if k != "params"}
            packed["params"] = [index_of[id(p)] for p in group["params"]]
            groups.append(packed)
        state = {index_of[id(p)]: s for p, s in self.state.items() if id(p) in index_of}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore hyper-parameters and state saved by ``state_dict`` (tensors are cast to each param's dtype)."""
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

    def __setstate__(self, state: dict) -> None:
        """Unpickling and ``load_state_dict`` end here: a subclass fills in hyper-parameters older saves lack."""
        self.__dict__.update(state)

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for i, group in enumerate(self.param_groups):
            if i:
                lines.append("")
            lines.append(f"Parameter Group {i}")
            lines.extend(f"    {key}: {group[key]}" for key in sorted(group) if key != "params")
        lines.append(")")
        return "\n".join(lines)


def _check_optimizable(param: Any) -> None:
    if not isinstance(param, Tensor):
        raise TypeError(f"optimizer can only optimize Tensors, but one of the params is {_typename(param)}")
    if not (param.is_leaf or param.retains_grad):
        raise ValueError("can't optimize a non-leaf Tensor")


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
