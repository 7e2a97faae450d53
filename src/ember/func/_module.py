"""Modules as functions of their parameters: ``functional_call`` and ``stack_module_state``."""
from __future__ import annotations

from typing import Any

import ember
from ember._tensor import Tensor


def _owner(module, dotted: str):
    *path, name = dotted.split(".")
    for part in path:
        module = getattr(module, part)
    return module, name


def _registry(module, name: str) -> dict | None:
    for registry in ("_parameters", "_buffers"):
        entries = module.__dict__.get(registry, {})
        if name in entries:
            return entries
    return None


def functional_call(module, parameter_and_buffer_dicts, args: Any = None, kwargs: dict | None = None, *,
                    tie_weights: bool = True, strict: bool = False):
    """Call ``module`` with the given tensors in place of its parameters and buffers (by dotted name).

    The module is left as it was afterwards. ``args`` is one argument or a tuple of them.

    >>> import ember
    >>> from ember.func import functional_call
    >>> layer = ember.nn.Linear(2, 1, bias=False)
    >>> functional_call(layer, {"weight": ember.ones(1, 2)}, (ember.tensor([1., 2.]),))
    tensor([3.])
    """
    dicts = parameter_and_buffer_dicts if isinstance(parameter_and_buffer_dicts, (tuple, list)) \
        else (parameter_and_buffer_dicts,)
    values: dict = {}
    for d in dicts:
        repeated = set(values) & set(d)
        if repeated:
            raise ValueError(f"functional_call: {sorted(repeated)} appeared in multiple dictionaries; "
                             "each name may be given once")
        values.update(d)
    if strict:
        expected = {n for n, _ in module.named_parameters()} | {n for n, _ in module.named_buffers()}
        missing, unexpected = sorted(expected - set(values)), sorted(set(values) - expected)
        if missing or unexpected:
            raise RuntimeError(f"Error(s) in reparametrizing for {type(module).__name__}: missing keys {missing}, "
                               f"unexpected keys {unexpected}")
    if tie_weights:
        values = _with_tied(module, values)
    saved = []
    try:
        for dotted, tensor in values.items():
            owner, name = _owner(module, dotted)
            registry = _registry(owner, name)
            if registry is None:
                saved.append((owner.__dict__, name, owner.__dict__.get(name, _ABSENT)))
                owner.__dict__[name] = tensor
            else:
                saved.append((registry, name, registry[name]))
                registry[name] = tensor
        args = args if isinstance(args, tuple) else (() if args is None else (args,))
        return module(*args, **(kwargs or {}))
    finally:
        for place, name, old in reversed(saved):
            if old is _ABSENT:
                del place[name]
            else:
                place[name] = old


_ABSENT = object()


def _with_tied(module, values: dict) -> dict:
    """A tensor given for one name of a tied parameter stands for all its names, as in torch."""
    names_of: dict = {}
    for name, p in module.named_parameters(remove_duplicate=False):
        names_of.setdefault(id(p), []).append(name)
    values = dict(values)
    for names in names_of.values():
        given = [n for n in names if n in values]
        for n in names:
            if given and n not in values:
                values[n] = values[given[0]]
    return values


def stack_module_state(models) -> tuple[dict, dict]:
    """The parameters and buffers of same-shaped ``models``, stacked along a new leading dim (for vmap ensembles).

    >>> import ember
    >>> from ember.func import stack_module_state
    >>> params, buffers = stack_module_state([ember.nn.Linear(3, 2) for _ in range(4)])
    >>> params["weight"].shape
    ember.Size([4, 2, 3])
    """
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if len({type(m) for m in models}) != 1 or len({m.training for m in models}) != 1:
        raise RuntimeError("stack_module_state: Expected all models to be of the same class and all to be in the "
                           "same mode (train or eval)")

    def stacked(named) -> dict:
        out = {}
        for name, first in named(models[0]):
            value = ember.stack([dict(named(m))[name].detach() for m in models])
            out[name] = value.requires_grad_() if isinstance(first, Tensor) and first.requires_grad else value
        return out

    return stacked(lambda m: m.named_parameters()), stacked(lambda m: m.named_buffers())
