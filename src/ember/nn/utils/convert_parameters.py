"""Parameters as one flat vector, and back.

>>> import ember
>>> layer = ember.nn.Linear(2, 1)
>>> vec = ember.nn.utils.parameters_to_vector(layer.parameters())
>>> vec.shape
ember.Size([3])
>>> ember.nn.utils.vector_to_parameters(ember.zeros(3), layer.parameters())
>>> layer.bias
Parameter containing:
tensor([0.], requires_grad=True)
"""
from __future__ import annotations

from typing import Iterable

import ember
from ember._tensor import Tensor

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """All parameters flattened and concatenated, in order (differentiable)."""
    return ember.cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Make each parameter's data the next slice of ``vec``, shaped like the parameter."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected ember.Tensor, but got: {type(vec).__name__}")
    start = 0
    for param in parameters:
        count = param.numel()
        param.data = vec[start:start + count].view_as(param).data
        start += count
