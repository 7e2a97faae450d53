"""``Tensor.view(dtype)``: the same memory read as another dtype, as torch reads it.

With elements of the same size the shape stays; otherwise the last dim, which must be dense (stride 1), grows or
shrinks by the ratio of the sizes. The result shares the memory (a write through either is seen by the other) but,
as in torch, is not a view for autograd: it records no gradient.

>>> import ember
>>> x = ember.tensor([1.0, 2.0])
>>> x.view(ember.int32)
tensor([1065353216, 1073741824], dtype=ember.int32)
>>> x.view(ember.int16).shape
ember.Size([4])
"""
from __future__ import annotations

from ember import _dtype
from ember._ops._support import wrap
from ember._tensor import Tensor


def view_as_dtype(x: Tensor, dtype: _dtype.dtype) -> Tensor:
    """``x``'s memory as ``dtype``, checked as torch checks it."""
    data, target = x._data, dtype.np
    if target.itemsize != data.itemsize:
        _check_reinterpretable(x, dtype)
    return wrap(data.view(target))


def _check_reinterpretable(x: Tensor, dtype: _dtype.dtype) -> None:
    data, size = x._data, dtype.itemsize
    pair = f"to view {_dtype.scalar_type_name(data.dtype)} as {_dtype.scalar_type_name(dtype.np)} (different element sizes)"
    if not data.ndim:
        raise RuntimeError(f"self.dim() cannot be 0 {pair}")
    if data.shape[-1] != 1 and data.strides[-1] != data.itemsize:
        raise RuntimeError(f"self.stride(-1) must be 1 {pair}, but got {x.stride(-1)}")
    if size > data.itemsize:
        ratio = size // data.itemsize
        if data.shape[-1] % ratio:
            raise RuntimeError(f"self.size(-1) must be divisible by {ratio} {pair}, but got {data.shape[-1]}")
        if x.storage_offset() % ratio:
            raise RuntimeError(f"self.storage_offset() must be divisible by {ratio} {pair}, but got "
                               f"{x.storage_offset()}")
        if any(s % size for s in data.strides[:-1]):
            bad = next(i for i, s in enumerate(data.strides[:-1]) if s % size)
            raise RuntimeError(f"self.stride({bad}) must be divisible by {ratio} {pair}, but got {x.stride(bad)}")
