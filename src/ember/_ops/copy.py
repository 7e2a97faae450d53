"""Copies and casts: clone, contiguous, to(dtype).

>>> import ember
>>> x = ember.tensor([1.5, 2.5], requires_grad=True)
>>> x.double()
tensor([1.5000, 2.5000], dtype=ember.float64, grad_fn=<ToCopyBackward0>)
"""
from __future__ import annotations

import numpy as np

from ember import _dtype
from ember._ops._support import ember_function, require_tensor, wrap
from ember._tensor import Tensor, device
from ember.autograd.function import Function


class Clone(Function):
    backward_name = "CloneBackward0"

    @staticmethod
    def forward(ctx, x):
        return wrap(np.array(x._data, copy=True, order="C"))

    @staticmethod
    def backward(ctx, grad):
        return grad


class ToCopy(Function):
    backward_name = "ToCopyBackward0"

    @staticmethod
    def forward(ctx, x, target):
        ctx.source = _dtype.from_numpy_dtype(x._data.dtype)
        return wrap(_dtype.cast(x._data, target.np))

    @staticmethod
    def backward(ctx, grad):
        return grad.to(ctx.source), None


@ember_function
def clone(input, *, memory_format=None) -> Tensor:
    """A copy with its own memory; gradients flow back to ``input``."""
    return Clone.apply(require_tensor(input, "clone"))


def contiguous(input: Tensor, memory_format=None) -> Tensor:
    """``input`` itself if its memory is in row-major order, else a row-major copy."""
    if input._data.flags.c_contiguous:
        return input
    return Clone.apply(input)


def to(input: Tensor, *args, dtype=None, device=None, copy: bool = False, non_blocking: bool = False,
       memory_format=None) -> Tensor:
    """Convert to ``dtype`` (positional or keyword); devices other than the CPU are refused."""
    target = dtype
    for a in args:
        if isinstance(a, (_dtype.dtype, type)) or (a is not None and not isinstance(a, (str, _device_type, Tensor))):
            target = _dtype.to_dtype(a)
        elif isinstance(a, Tensor):
            target = _dtype.from_numpy_dtype(a._data.dtype)
        else:
            _device_type(a)  # validates: only the CPU exists
    if device is not None:
        _device_type(device)
    if target is None:
        return Clone.apply(input) if copy else input
    target = _dtype.to_dtype(target)
    if target.np == input._data.dtype and not copy:
        return input
    return ToCopy.apply(input, target)


_device_type = device


def cast(input: Tensor, target) -> Tensor:
    return to(input, target)
