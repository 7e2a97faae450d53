"""``functional_call``: run a module with some parameters and buffers swapped for given tensors.

>>> import ember
>>> layer = ember.nn.Linear(2, 1)
>>> weights = {"weight": ember.ones(1, 2), "bias": ember.zeros(1)}
>>> ember.func.functional_call(layer, weights, (ember.tensor([[1.0, 2.0]]),))
tensor([[3.]])
"""
from __future__ import annotations

import contextlib
import warnings
from typing import Any, Iterator, Mapping, Sequence

from ember._tensor import Tensor
from ember.nn.modules.module import Module

__all__ = ["functional_call"]


def _merge(dicts: Mapping[str, Tensor] | Sequence[Mapping[str, Tensor]]) -> dict[str, Tensor]:
    """One dict of the replacements: a dict as it is, or the dicts of a list or tuple, none of whose keys may
    repeat. Anything else is a ValueError, as in torch.func (a number or None used to fail deep inside)."""
    if isinstance(dicts, dict):
        return dict(dicts)
    if not isinstance(dicts, (list, tuple)):
        raise ValueError("Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, but got "
                         f"{type(dicts)}")
    if not all(isinstance(d, dict) for d in dicts):
        raise ValueError("Expected all elements of parameter_and_buffer_dicts to be dictionaries, got "
                         f"{[type(d).__name__ for d in dicts]}")
    keys = [key for d in dicts for key in d]
    repeated = list(dict.fromkeys(key for key in keys if keys.count(key) > 1))
    if repeated:
        raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of functional call is ambiguous")
    return {key: value for d in dicts for key, value in d.items()}


def _tied_names(module: Module) -> dict[str, list[str]]:
    """For each parameter or buffer name, every other name the same tensor is registered under."""
    names_by_tensor: dict[int, list[str]] = {}
    for name, tensor in [*module.named_parameters(remove_duplicate=False),
                         *module.named_buffers(remove_duplicate=False)]:
        names_by_tensor.setdefault(id(tensor), []).append(name)
    return {name: names for names in names_by_tensor.values() for name in names}


def _check_strict(module: Module, given: dict[str, Tensor]) -> None:
    known = {name for name, _ in [*module.named_parameters(remove_duplicate=False),
                                  *module.named_buffers(remove_duplicate=False)]}
    missing, unexpected = sorted(known - set(given)), sorted(set(given) - known)
    errors = [f"{kind} key(s): {', '.join(map(repr, keys))}."
              for kind, keys in (("Unexpected", unexpected), ("Missing", missing)) if keys]
    if errors:
        raise RuntimeError(f"Error(s) in reparametrizing for {type(module).__name__}:\n\t" + "\n\t".join(errors))


def _owner(module: Module, name: str) -> tuple[Module, str]:
    path, _, attr = name.rpartition(".")
    owner, walked = module, []
    for part in path.split(".") if path else ():
        walked.append(part)
        if not hasattr(owner, part):
            raise AttributeError(f"{owner._get_name()} has no attribute `{part}`")
        owner = getattr(owner, part)
        if not isinstance(owner, Module):
            raise TypeError(f"submodule `{'.'.join(walked)}`: {owner} is not an instance of ember.nn.Module")
    return owner, attr


def _check_replaceable(owner: Module, attr: str, value: Any) -> None:
    """Only tensors (or None) may stand in, and only for a tensor: a submodule or another attribute stays."""
    if value is not None and not isinstance(value, Tensor):
        raise TypeError(f"{value} is not an instance of ember.Tensor")
    current = getattr(owner, attr, None)
    if current is not None and not isinstance(current, Tensor):
        raise TypeError(f"attribute `{attr}`: {current} is not an instance of ember.Tensor")


_ABSENT = object()  # what an attribute the call adds held before: nothing, so it is deleted afterwards


def _swap(owner: Module, attr: str, value: Any) -> Any:
    """Put ``value`` in place of ``owner.<attr>`` and return what was there (``_ABSENT`` if nothing).

    A registered parameter or buffer is swapped in its registry. Any other name goes through ``setattr``, as
    in torch: a parametrized tensor's property then stores ``value`` through ``right_inverse`` (writing the
    instance's ``__dict__`` would be silently shadowed by the property).
    """
    for registry in (owner._parameters, owner._buffers):
        if attr in registry:
            old = registry[attr]
            registry[attr] = value
            return old
    old = getattr(owner, attr) if hasattr(owner, attr) else _ABSENT
    if value is not _ABSENT:
        setattr(owner, attr, value)
    elif hasattr(owner, attr):
        delattr(owner, attr)
    return old


@contextlib.contextmanager
def _swapped(module: Module, values: dict[str, Tensor]) -> Iterator[None]:
    """Put ``values`` in the modules' registries (or attributes) and put the old entries back afterwards."""
    saved = []
    try:
        for name, value in values.items():
            owner, attr = _owner(module, name)
            _check_replaceable(owner, attr, value)
            saved.append((owner, attr, _swap(owner, attr, value)))
        yield
    finally:
        for owner, attr, old in reversed(saved):
            _swap(owner, attr, old)


def functional_call(module: Module, parameters_and_buffers: Mapping[str, Tensor] | Sequence[Mapping[str, Tensor]],
                    args: Any = None, kwargs: dict[str, Any] | None = None, *, tie_weights: bool = True,
                    strict: bool = False) -> Any:
    """``ember.func.functional_call`` under its older name, which warns (as torch's) that it is deprecated.

    >>> import warnings, ember
    >>> with warnings.catch_warnings(record=True):
    ...     ember.nn.utils.stateless.functional_call(ember.nn.Linear(2, 1), {"bias": ember.ones(1)},
    ...                                              ember.zeros(1, 2)).tolist()
    [[1.0]]
    """
    warnings.warn("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 and will be removed in "
                  "a future version of PyTorch. Please use `torch.func.functional_call` instead which is a drop-in "
                  "replacement.", FutureWarning, stacklevel=2)
    return call_with_replaced(module, parameters_and_buffers, args, kwargs, tie_weights=tie_weights, strict=strict)


def call_with_replaced(module: Module, parameters_and_buffers: Mapping[str, Tensor] | Sequence[Mapping[str, Tensor]],
                       args: Any = None, kwargs: dict[str, Any] | None = None, *, tie_weights: bool = True,
                       strict: bool = False) -> Any:
    """``module(*args, **kwargs)`` with the named parameters and buffers replaced for this call only.

    With ``tie_weights``, a tensor registered under several names is replaced under all of them; with
    ``strict``, every parameter and buffer must be given.
    """
    given = _merge(parameters_and_buffers)
    values = dict(given)
    if tie_weights:
        tied = _tied_names(module)
        for name, value in given.items():
            for other in tied.get(name, ()):
                if other in given and given[other] is not value:
                    raise ValueError(f"functional_call got multiple values for keys ['{name}', '{other}'], "
                                     "which are tied. Consider using tie_weights=False")
                values.setdefault(other, value)
    if strict:
        _check_strict(module, values)
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _swapped(module, values):
        return module(*args, **(kwargs or {}))
