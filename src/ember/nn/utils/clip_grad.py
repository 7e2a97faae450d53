"""Gradient clipping: scale (or clamp) the ``.grad`` of parameters in place, after ``backward``.

>>> import ember
>>> w = ember.nn.Parameter(ember.zeros(2))
>>> w.grad = ember.tensor([3.0, 4.0])
>>> ember.nn.utils.clip_grad_norm_([w], max_norm=1.0)
tensor(5.)
>>> w.grad
tensor([0.6000, 0.8000])
"""
from __future__ import annotations

import types
import warnings
from typing import Iterable

import ember
from ember._tensor import Tensor
from ember.autograd.grad_mode import no_grad

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_", "get_total_norm"]

_Tensors = Tensor | Iterable[Tensor]


def _as_list(tensors: _Tensors) -> list[Tensor]:
    return [tensors] if isinstance(tensors, Tensor) else list(tensors)


def _grads(parameters: _Tensors) -> list[Tensor]:
    return [p.grad for p in _as_list(parameters) if p.grad is not None]


def get_total_norm(tensors: _Tensors, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach: bool | None = None) -> Tensor:
    """The ``norm_type``-norm of all ``tensors`` taken together as one vector (``foreach`` is accepted and ignored).

    >>> ember.nn.utils.get_total_norm([ember.tensor([3.0]), ember.tensor([4.0])])
    tensor(5.)
    """
    tensors = _as_list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return ember.tensor(0.0)
    with no_grad():
        norms = [ember.linalg.vector_norm(t, norm_type) for t in tensors]
        total = ember.linalg.vector_norm(ember.stack(norms), norm_type)
    if error_if_nonfinite and not bool(ember.isfinite(total)):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so it cannot be "
            "clipped. To disable this error and scale the gradients by the non-finite norm anyway, set "
            "`error_if_nonfinite=False`"
        )
    return total


def clip_grads_with_norm_(parameters: _Tensors, max_norm: float, total_norm: Tensor,
                          foreach: bool | None = None) -> None:
    """Scale the gradients by ``max_norm / (total_norm + 1e-6)`` when that is below one."""
    grads = _grads(parameters)
    if not grads:
        return
    if not isinstance(total_norm, Tensor):  # as torch: a TypeError, not an AttributeError from deep inside
        raise TypeError(f"clip_grads_with_norm_: total_norm must be a Tensor (what get_total_norm returns), got "
                        f"{type(total_norm).__name__}; pass ember.tensor(total_norm)")
    with no_grad():
        scale = (max_norm / (total_norm + 1e-6)).clamp(max=1.0)
        for grad in grads:
            grad.mul_(scale.to(grad.dtype))


def clip_grad_norm_(parameters: _Tensors, max_norm: float, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                    foreach: bool | None = None) -> Tensor:
    """Rescale the gradients so their total ``norm_type``-norm is at most ``max_norm``; return the norm before."""
    if isinstance(parameters, types.GeneratorType):
        parameters = list(parameters)  # a generator must be read only once
        if not parameters:  # often one already drained, by an earlier call on the same model.parameters()
            warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.", stacklevel=2)
    parameters = _as_list(parameters)
    total = get_total_norm(_grads(parameters), norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total, foreach)
    return total


def clip_grad_norm(parameters: _Tensors, max_norm: float, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach: bool | None = None) -> Tensor:
    """The old name of ``clip_grad_norm_`` (it warns)."""
    warnings.warn("`ember.nn.utils.clip_grad_norm` is now deprecated in favor of `ember.nn.utils.clip_grad_norm_`.",
                  FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters: _Tensors, clip_value: float, foreach: bool | None = None) -> None:
    """Clamp every gradient element into ``[-clip_value, clip_value]``.

    >>> w = ember.nn.Parameter(ember.zeros(2))
    >>> w.grad = ember.tensor([-3.0, 0.5])
    >>> ember.nn.utils.clip_grad_value_(w, 1.0)
    >>> w.grad
    tensor([-1.0000,  0.5000])
    """
    clip_value = float(clip_value)
    with no_grad():
        for grad in _grads(parameters):
            grad.clamp_(-clip_value, clip_value)
