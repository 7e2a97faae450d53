"""Modules as functions of their parameters: ``functional_call`` (nn.utils.stateless's) and ``stack_module_state``."""
from __future__ import annotations

import ember
from ember._tensor import Tensor
from ember.nn.utils.stateless import functional_call

__all__ = ["functional_call", "stack_module_state"]


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
