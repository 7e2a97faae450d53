"""Modules as functions of their parameters: ``functional_call`` (nn.utils.stateless's) and ``stack_module_state``."""
from __future__ import annotations

import ember
from ember._tensor import Tensor
from ember.nn.utils.stateless import call_with_replaced

__all__ = ["functional_call", "replace_all_batch_norm_modules_", "stack_module_state"]


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights: bool = True,
                    strict: bool = False):
    """``module(*args, **kwargs)`` with the named parameters and buffers (a dict, or a sequence of dicts) replaced
    for this call only; with ``tie_weights`` a tensor registered under several names is replaced under all of them,
    with ``strict`` every one must be given.

    >>> import ember
    >>> ember.func.functional_call(ember.nn.Linear(2, 1), {"bias": ember.ones(1), "weight": ember.ones(1, 2)},
    ...                            (ember.ones(1, 2),))
    tensor([[3.]])
    """
    return call_with_replaced(module, parameter_and_buffer_dicts, args, kwargs, tie_weights=tie_weights,
                              strict=strict)


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
    if len({m.training for m in models}) != 1:
        raise RuntimeError("stack_module_state: Expected all models to have the same training/eval mode; call "
                           ".train() or .eval() on all of them")
    if len({type(m) for m in models}) != 1:
        raise RuntimeError("stack_module_state: Expected all models to be of the same class, got "
                           f"{sorted({type(m).__name__ for m in models})}")

    def stacked(named) -> dict:
        out = {}
        for name, first in named(models[0]):
            value = ember.stack([dict(named(m))[name].detach() for m in models])
            out[name] = value.requires_grad_() if isinstance(first, Tensor) and first.requires_grad else value
        return out

    return stacked(lambda m: m.named_parameters()), stacked(lambda m: m.named_buffers())


def replace_all_batch_norm_modules_(root: "ember.nn.Module") -> "ember.nn.Module":
    """Make every batch norm in ``root`` (itself included) normalise by the batch's statistics alone: its running
    statistics go (None) and ``track_running_stats`` turns off, so vmap over it changes no shared buffer.

    >>> import ember
    >>> model = ember.func.replace_all_batch_norm_modules_(ember.nn.Sequential(ember.nn.BatchNorm1d(3)))
    >>> model[0].running_mean is None, model[0].track_running_stats
    (True, False)
    """
    from ember.nn.modules.batchnorm import _BatchNorm  # (nn imports func's callers: bound here)

    for module in root.modules():
        if isinstance(module, _BatchNorm) and module.track_running_stats:
            module.running_mean = module.running_var = module.num_batches_tracked = None
            module.track_running_stats = False
    return root
