"""The quantized tensor: an ember ``Tensor`` whose memory holds the integer representation, plus its
quantization parameters (a scale and zero point, or one of each per channel along an axis).

It is a subclass of ``Tensor`` (``QuantizedTensor``), so that plain tensors never pay for it: every function
and method given one goes through its ``__torch_function__``, which runs the few operations torch defines on
quantized tensors and refuses the rest, naming the operation and the way out (dequantize first).

>>> import ember
>>> q = ember.quantize_per_tensor(ember.tensor([-1.0, 0.0, 0.3, 2.0]), 0.1, 10, ember.quint8)
>>> q
tensor([-1.0000,  0.0000,  0.3000,  2.0000], size=(4,), dtype=ember.quint8,
       quantization_scheme=ember.per_tensor_affine, scale=0.1, zero_point=10)
>>> q.int_repr()
tensor([ 0, 10, 13, 30], dtype=ember.uint8)
>>> q.view(2, 2)[1]
tensor([0.3000, 2.0000], size=(2,), dtype=ember.quint8,
       quantization_scheme=ember.per_tensor_affine, scale=0.1, zero_point=10)
"""
from __future__ import annotations

import numpy as np

from ember import _quantized_dtypes as QD
from ember._tensor import Tensor, _fresh
from ember._tensor_str import _attach_suffixes, _size_suffix, _values_text

_SINGLE = np.dtype(np.float32)


class QuantizedTensor(Tensor):
    """A quantized tensor (``t.is_quantized``): integers in ``_data`` and how they map to real values."""

    is_quantized = True
    _prints_as_tensor = True  # repr opens with "tensor(", as torch's
    _qdtype = QD.quint8
    _qscheme = QD.per_tensor_affine
    _scale = 1.0  # per tensor: a Python float ...
    _zero_point = 0  # ... and int
    _scales = None  # per channel: an ndarray (float64, or float32 for float zero points) ...
    _zero_points = None  # ... an ndarray (int64, or floating) ...
    _axis = 0  # ... and the axis they run along

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        from ember import _quantized_ops
        from ember.overrides import DisableTorchFunctionSubclass

        with DisableTorchFunctionSubclass():
            return _quantized_ops.run(func, args, kwargs or {})


def per_tensor(data: np.ndarray, qdtype: QD.QuantizedDtype, scale: float, zero_point: int) -> QuantizedTensor:
    """A per-tensor quantized tensor around ``data`` (integers of ``qdtype``'s storage type)."""
    q = _fresh(QuantizedTensor)
    q._data, q._qdtype, q._scale, q._zero_point = data, qdtype, float(scale), int(zero_point)
    return q


def per_channel(data: np.ndarray, qdtype: QD.QuantizedDtype, scales: np.ndarray, zero_points: np.ndarray,
                axis: int) -> QuantizedTensor:
    """A per-channel quantized tensor; float zero points make the ``per_channel_affine_float_qparams`` scheme."""
    q = _fresh(QuantizedTensor)
    q._data, q._qdtype, q._scales, q._zero_points, q._axis = data, qdtype, scales, zero_points, axis
    q._qscheme = QD.per_channel_affine_float_qparams if zero_points.dtype.kind == "f" else QD.per_channel_affine
    return q


def like(q: QuantizedTensor, data: np.ndarray) -> QuantizedTensor:
    """A quantized tensor around ``data`` with ``q``'s dtype and parameters."""
    if q._scales is not None:
        return per_channel(data, q._qdtype, q._scales, q._zero_points, q._axis)
    return per_tensor(data, q._qdtype, q._scale, q._zero_point)


def dequantized(q: QuantizedTensor) -> np.ndarray:
    """The real values ``(q - zero_point) * scale``, in single precision as torch's kernels compute them."""
    data = q._data
    if q._scales is None:
        if data.itemsize == 1:  # exact in single precision
            reals = data.astype(_SINGLE)
            reals -= q._zero_point
        else:  # the difference in 32-bit integers, wrapping as torch's does for qint32's extremes
            reals = (data.astype(np.int64) - q._zero_point).astype(np.int32).astype(_SINGLE)
        reals *= np.float32(q._scale)
        return reals
    shape = tuple(-1 if d == q._axis else 1 for d in range(data.ndim))
    scales, points = q._scales.reshape(shape), q._zero_points.reshape(shape)
    if points.dtype.kind == "f":
        return (data.astype(_SINGLE) - points.astype(_SINGLE)) * scales.astype(_SINGLE)
    return ((data.astype(_SINGLE) - points.astype(_SINGLE)) * scales.astype(_SINGLE)).astype(_SINGLE)


def quantized_repr(q: QuantizedTensor) -> str:
    """torch's repr: the real values, then size, dtype, scheme and parameters."""
    values = dequantized(q)
    contents = "[]" if values.size == 0 else _values_text(values, len("tensor("))
    suffixes = [_size_suffix(values.shape), f"dtype={q._qdtype!r}", f"quantization_scheme={q._qscheme!r}"]
    if q._scales is None:
        suffixes += [f"scale={q._scale!r}", f"zero_point={q._zero_point!r}"]
    else:
        from ember._ops._support import wrap

        suffixes += [f"scale={wrap(q._scales)!r}", f"zero_point={wrap(q._zero_points)!r}", f"axis={q._axis}"]
    return _attach_suffixes("tensor(" + contents, suffixes, len("tensor("))
