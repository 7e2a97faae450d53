"""Reading a quantized tensor: ``int_repr``, ``q_scale``, ``q_zero_point``, the per-channel parameters,
``qscheme``, and ``empty_quantized`` (a tensor of the same quantization).

On a tensor that is not quantized each refuses, as torch's, naming the op and how to make a quantized one.

>>> import ember
>>> q = ember.quantize_per_tensor(ember.tensor([0.05, 1.0]), 0.1, 4, ember.qint8)
>>> q.int_repr(), q.q_scale(), q.q_zero_point(), q.qscheme()
(tensor([ 4, 14], dtype=ember.int8), 0.1, 4, ember.per_tensor_affine)
"""
from __future__ import annotations

import numpy as np

from ember import _quantized as QT, _quantized_dtypes as QD
from ember._ops._support import ember_function, require_tensor, wrap
from ember._tensor import Tensor


def quantized(op: str, tensor: Tensor, wanted: str = "") -> QT.QuantizedTensor:
    """``tensor``, which must be quantized (``wanted``: per 'tensor' or per 'channel'), else torch's error."""
    require_tensor(tensor, op)
    if not isinstance(tensor, QT.QuantizedTensor):
        raise NotImplementedError(
            f"Could not run 'aten::{op}' with arguments from the 'CPU' backend: the tensor is not quantized "
            f"(dtype {tensor.dtype!r}); make one with ember.quantize_per_tensor or ember.quantize_per_channel"
        )
    if wanted == "tensor" and tensor._scales is not None:
        raise RuntimeError(f"{op}: Expected a per-tensor quantized tensor, but it is quantized per channel "
                           f"({tensor._qscheme!r}); use q_per_channel_scales() and q_per_channel_zero_points()")
    if wanted == "channel" and tensor._scales is None:
        raise RuntimeError(f"{op}: Expected a per-channel quantized tensor, but it is quantized per tensor "
                           f"({tensor._qscheme!r}); use q_scale() and q_zero_point()")
    return tensor


@ember_function
def int_repr(input: Tensor) -> Tensor:
    """The integers a quantized tensor stores, as a plain tensor of uint8, int8 or int32 (a copy).

    >>> ember.quantize_per_tensor(ember.tensor([1.0]), 0.5, 3, ember.quint8).int_repr()
    tensor([5], dtype=ember.uint8)
    """
    return wrap(quantized("int_repr", input)._data.copy())


@ember_function
def q_scale(input: Tensor) -> float:
    """The scale of a per-tensor quantized tensor.

    >>> ember.quantize_per_tensor(ember.tensor([1.0]), 0.5, 3, ember.quint8).q_scale()
    0.5
    """
    return quantized("q_scale", input, "tensor")._scale


@ember_function
def q_zero_point(input: Tensor) -> int:
    """The zero point of a per-tensor quantized tensor.

    >>> ember.quantize_per_tensor(ember.tensor([1.0]), 0.5, 3, ember.quint8).q_zero_point()
    3
    """
    return quantized("q_zero_point", input, "tensor")._zero_point


@ember_function
def q_per_channel_scales(input: Tensor) -> Tensor:
    """The scales of a per-channel quantized tensor (float64; float32 with float zero points).

    >>> q = ember.quantize_per_channel(ember.ones(2), ember.tensor([0.5, 0.25]), ember.tensor([0, 0]), 0, ember.qint8)
    >>> q.q_per_channel_scales()
    tensor([0.5000, 0.2500], dtype=ember.float64)
    """
    return wrap(quantized("q_per_channel_scales", input, "channel")._scales.copy())


@ember_function
def q_per_channel_zero_points(input: Tensor) -> Tensor:
    """The zero points of a per-channel quantized tensor (int64, or floating).

    >>> q = ember.quantize_per_channel(ember.ones(2), ember.tensor([0.5, 0.25]), ember.tensor([1, 2]), 0, ember.qint8)
    >>> q.q_per_channel_zero_points()
    tensor([1, 2])
    """
    return wrap(quantized("q_per_channel_zero_points", input, "channel")._zero_points.copy())


@ember_function
def q_per_channel_axis(input: Tensor) -> int:
    """The axis along which a per-channel quantized tensor has its scales and zero points.

    >>> q = ember.quantize_per_channel(ember.ones(2, 3), ember.ones(3), ember.zeros(3, dtype=ember.int64), 1,
    ...                                ember.quint8)
    >>> q.q_per_channel_axis()
    1
    """
    return quantized("q_per_channel_axis", input, "channel")._axis


def qscheme(self: Tensor) -> QD.qscheme:
    """How a quantized tensor maps integers to reals (``Tensor.qscheme()``)."""
    return quantized("qscheme", self)._qscheme


@ember_function
def empty_quantized(size: "list[int]", qtensor: Tensor, *, dtype=None, layout=None, device=None,
                    pin_memory=None, memory_format=None) -> Tensor:
    """An uninitialised quantized tensor of ``size`` with ``qtensor``'s dtype and quantization parameters.

    >>> q = ember.quantize_per_tensor(ember.tensor([1.0]), 0.5, 3, ember.quint8)
    >>> ember.empty_quantized([2, 3], q).shape
    ember.Size([2, 3])
    """
    like = quantized("empty_quantized", qtensor)
    return QT.like(like, np.empty(tuple(size), like._data.dtype))

