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

import numpy as np

from ember import _dtype
from ember._ops._support import wrap
from ember._tensor import Tensor, version_counter


def view_as_dtype(x: Tensor, dtype: _dtype.dtype) -> Tensor:
    """``x``'s memory as ``dtype``, checked as torch checks it; the result shares ``x``'s version counter, as
    torch's does (a write through either is a change of both)."""
    data, target = x._data, dtype.np
    if target.itemsize == data.itemsize:
        viewed = data.view(target)
    else:
        _check_reinterpretable(x, dtype)
        viewed = _reinterpreted(data, target) if data.size else _empty_reinterpreted(x, target)
    out = wrap(viewed)
    out._vc = version_counter(x)
    return out


def _reinterpreted(data: np.ndarray, target: np.dtype) -> np.ndarray:
    """``data`` read as ``target``; a last dim of one element may have any stride (NumPy refuses some)."""
    if data.shape[-1] == 1 and data.strides[-1] != data.itemsize:
        data = np.lib.stride_tricks.as_strided(data, strides=data.strides[:-1] + (data.itemsize,),
                                               writeable=data.flags.writeable)
    return data.view(target)


def _empty_reinterpreted(x: Tensor, target: np.dtype) -> np.ndarray:
    """An empty tensor read as ``target``: no memory to read, the strides as torch gives them (NumPy's empty arrays
    keep strides of their own)."""
    data = x._data
    strides = x.stride()
    ratio_num, ratio_den = data.itemsize, target.itemsize
    shape = data.shape[:-1] + (data.shape[-1] * ratio_num // ratio_den,)
    strides = tuple(s * ratio_num for s in strides[:-1]) + (target.itemsize,)
    return np.lib.stride_tricks.as_strided(np.empty(0, target), shape, strides, writeable=True)


def _check_reinterpretable(x: Tensor, dtype: _dtype.dtype) -> None:
    """torch's checks, in its order (on the strides torch would report, which for empty tensors are not NumPy's)."""
    data, size = x._data, dtype.itemsize
    pair = f"to view {_dtype.scalar_type_name(data.dtype)} as {_dtype.scalar_type_name(dtype.np)} (different element sizes)"
    if not data.ndim:
        raise RuntimeError(f"self.dim() cannot be 0 {pair}")
    strides = x.stride()
    if size > data.itemsize:
        ratio = size // data.itemsize
        if data.shape[-1] % ratio:
            raise RuntimeError(f"self.size(-1) must be divisible by {ratio} {pair}, but got {data.shape[-1]}")
        if x.storage_offset() % ratio:
            raise RuntimeError(f"self.storage_offset() must be divisible by {ratio} {pair}, but got "
                               f"{x.storage_offset()}")
    if strides[-1] != 1:
        raise RuntimeError(f"self.stride(-1) must be 1 {pair}, but got {strides[-1]}")
    if size > data.itemsize:
        for i, stride in enumerate(strides[:-1]):
            if stride % ratio:
                raise RuntimeError(f"self.stride({i}) must be divisible by {ratio} {pair}, but got {stride}")
