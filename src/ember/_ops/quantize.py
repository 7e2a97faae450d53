"""Making quantized tensors and reading them: ``quantize_per_tensor``, ``quantize_per_channel``,
``quantize_per_tensor_dynamic``, ``dequantize``, ``int_repr`` and the parameter accessors.

The integers are ``clamp(zero_point + round(x * (1 / scale)), qmin, qmax)`` with the scale's reciprocal taken
in single precision and ties rounded to even, as torch's kernels compute them; the real values are
``(q - zero_point) * scale`` in single precision.

>>> import ember
>>> q = ember.quantize_per_tensor(ember.tensor([0.05, 0.15, 1.0]), 0.1, 0, ember.qint8)
>>> q.int_repr(), q.q_scale(), q.q_zero_point()
(tensor([ 0,  2, 10], dtype=ember.int8), 0.1, 0)
>>> q.dequantize()
tensor([0.0000, 0.2000, 1.0000])
"""
from __future__ import annotations

import numpy as np

from ember import _dtype, _quantized as QT, _quantized_dtypes as QD
from ember._ops._quiet import IGNORE_ALL, quietly
from ember._ops._support import ember_function, require_tensor, wrap
from ember._ops.fake_quantize import channel_shape, extremes
from ember._tensor import Tensor

_SINGLE = np.dtype(np.float32)


def _quantized_dtype(op: str, dtype) -> QD.QuantizedDtype:
    if not isinstance(dtype, QD.QuantizedDtype):
        name = _dtype.scalar_type_name(dtype.np) if isinstance(dtype, _dtype.dtype) else repr(dtype)
        raise RuntimeError(f"{op}: ScalarType {name} is not supported in new_qtensor: dtype must be a quantized "
                           "dtype (ember.quint8, ember.qint8 or ember.qint32)")
    if dtype.storage.itemsize * 8 != _bits(dtype):
        raise NotImplementedError(f"{op}: {dtype!r} packs several values in a byte, which ember does not store; "
                                  "use ember.quint8 (and fake quantization with quant_max=15 for 4-bit training)")
    return dtype


def _bits(dtype: QD.QuantizedDtype) -> int:
    return int(dtype.qmax - dtype.qmin).bit_length()


def _float_input(op: str, x: Tensor, kernel: str) -> np.ndarray:
    require_tensor(x, op)
    if isinstance(x, QT.QuantizedTensor):
        raise NotImplementedError(f"Could not run 'aten::{op}' with arguments from the 'QuantizedCPU' backend: the "
                                  "input is already quantized; dequantize it first (q.dequantize())")
    if x._data.dtype != _SINGLE:
        raise RuntimeError(f"{kernel} {_dtype.scalar_type_name(x._data.dtype)}; "
                           "convert it first, e.g. x.float()")
    return x._data


def _check_zero_points(kernel: str, zero_points, qdtype: QD.QuantizedDtype) -> None:
    low, high = extremes(zero_points)
    if low < qdtype.qmin:
        raise RuntimeError(f"{kernel} zero_point {low} is below lower bound ({qdtype.qmin} for {qdtype!r}).")
    if high > qdtype.qmax:
        raise RuntimeError(f"{kernel} zero_point {high} is above upper bound ({qdtype.qmax} for {qdtype!r}).")


def integers(data: np.ndarray, scale, zero_point, qdtype: QD.QuantizedDtype, per_tensor: bool) -> np.ndarray:
    """``clamp(round(data * (1 / scale) + zero_point), qmin, qmax)`` (``scale``/``zero_point`` broadcast), each
    step in single precision as torch's kernels take it: the zero point is added before rounding (a tie rounds
    to even after it), and the 8-bit per-tensor kernel adds it in one fused multiply-add, rounded once.
    """
    return quietly(IGNORE_ALL, _integers, data, scale, zero_point, qdtype, per_tensor)


def _integers(data, scale, zero_point, qdtype, per_tensor):
    inv_scale = np.float32(1) / np.asarray(scale, dtype=_SINGLE)
    point = np.asarray(zero_point).astype(_SINGLE)
    if per_tensor and qdtype.itemsize == 1:  # the double product of two singles is exact: a fused rounding
        wide = data.astype(np.float64)
        wide *= inv_scale.astype(np.float64)
        wide += point
        level = wide.astype(_SINGLE)
    else:
        level = np.asarray(data * inv_scale)  # (a 0-d product is a NumPy scalar: made an array)
        level += point
    np.rint(level, out=level)
    if qdtype.itemsize != 1:
        level = level.astype(np.float64)  # single precision would round qint32's bounds
    nan = np.isnan(level)
    if nan.any():
        level[nan] = _nan_level(qdtype, per_tensor)
    np.clip(level, qdtype.qmin, qdtype.qmax, out=level)
    return level.astype(qdtype.storage)


def _nan_level(qdtype: QD.QuantizedDtype, per_tensor: bool) -> int:
    """Where torch's kernels put NaN: qint32's cast makes the lowest integer; for the 8-bit types the vector
    clamp of the per-tensor kernel makes qmax, the per-channel one 0."""
    if qdtype.itemsize != 1:
        return qdtype.qmin
    return qdtype.qmax if per_tensor else 0


def _number(op: str, name: str, value):
    if isinstance(value, Tensor):
        if value._data.size != 1:
            raise RuntimeError(f"{op}: a Tensor with {value._data.size} elements cannot be converted to Scalar: "
                               f"{name} must hold one value (quantize_per_channel takes one per channel)")
        return value._data.reshape(()).item()
    return value


@ember_function
def quantize_per_tensor(input: "Tensor | list", scale: "float | Tensor", zero_point: "int | Tensor",
                        dtype: QD.QuantizedDtype) -> "Tensor | tuple":
    """A quantized tensor of ``input`` (float32) with one scale and zero point; a list of tensors with one
    tensor each of scales and zero points gives a tuple of quantized tensors.

    >>> ember.quantize_per_tensor(ember.tensor([0.5, 1.25]), 0.5, 2, ember.quint8).int_repr()
    tensor([3, 4], dtype=ember.uint8)
    """
    op = "quantize_per_tensor"
    if isinstance(input, (list, tuple)):
        scales, points = require_tensor(scale, op, 2, "scales"), require_tensor(zero_point, op, 3, "zero_points")
        return tuple(quantize_per_tensor(x, float(s), int(z), dtype)
                     for x, s, z in zip(input, scales._data.reshape(-1), points._data.reshape(-1)))
    if isinstance(zero_point, float) and not isinstance(scale, Tensor):
        raise TypeError(f"{op}(): argument 'zero_point' (position 3) must be int, not float")
    qdtype = _quantized_dtype(op, dtype)
    data = _float_input(op, input, "Quantize only works on Float Tensor, got")
    scale, zero_point = float(_number(op, "scale", scale)), int(_number(op, "zero_point", zero_point))
    _check_zero_points("quantize_tensor_per_tensor_affine", zero_point, qdtype)
    values = integers(data, scale, zero_point, qdtype, per_tensor=True)
    return QT.per_tensor(values, qdtype, scale, zero_point)


@ember_function
def quantize_per_channel(input: Tensor, scales: Tensor, zero_points: Tensor, axis: int,
                         dtype: QD.QuantizedDtype) -> Tensor:
    """A quantized tensor of ``input`` (float32) with one scale and zero point per slice along ``axis``; float
    zero points give the ``per_channel_affine_float_qparams`` scheme.

    >>> q = ember.quantize_per_channel(ember.tensor([[1.0, 1.0], [1.0, 1.0]]), ember.tensor([0.5, 0.25]),
    ...                                ember.tensor([0, 1]), 1, ember.qint8)
    >>> q.int_repr()
    tensor([[2, 5],
            [2, 5]], dtype=ember.int8)
    """
    op = "quantize_per_channel"
    qdtype = _quantized_dtype(op, dtype)
    scales, zero_points = require_tensor(scales, op, 2, "scales"), require_tensor(zero_points, op, 3, "zero_points")
    data = _float_input(op, input, "quantize_tensor_per_channel_affine expects a Float Tensor, got")
    if not 0 <= axis < max(data.ndim, 1):
        raise RuntimeError(f"{op}: Channel axis out of range in per channel affine quantization. Got: {axis} "
                           f"Expected: [0, {data.ndim})")
    if scales._data.size != zero_points._data.size:
        raise RuntimeError(f"{op}: number of elements in scales and zero_points must match, got "
                           f"{scales._data.size} and {zero_points._data.size}")
    if scales._data.size != data.shape[axis]:
        raise RuntimeError(f"{op}: length of scales must equal to channel, expected {data.shape[axis]} got, "
                           f"{scales._data.size}")
    float_points = _dtype.kind(zero_points._data.dtype) == "f"
    scales_kept = scales._data.reshape(-1).astype(_SINGLE if float_points else np.float64)
    points_kept = zero_points._data.reshape(-1).astype(zero_points._data.dtype if float_points else np.int64)
    if float_points and qdtype.itemsize != 1:
        raise RuntimeError(f"{op}: float zero points (per_channel_affine_float_qparams) need ember.quint8 or "
                           f"ember.qint8, got {qdtype!r}; give integer zero points for {qdtype!r}")
    if not float_points:
        _check_zero_points("quantize_tensor_per_channel_affine", points_kept, qdtype)
    shape = channel_shape(data.ndim, axis)
    if float_points:
        result = _float_qparams_integers(data, scales_kept.reshape(shape), points_kept.reshape(shape), qdtype)
    else:
        result = integers(data, scales_kept.reshape(shape), points_kept.reshape(shape), qdtype, per_tensor=False)
    return QT.per_channel(result, qdtype, scales_kept, points_kept, axis)


def _float_qparams_integers(data: np.ndarray, scales: np.ndarray, points: np.ndarray,
                            qdtype: QD.QuantizedDtype) -> np.ndarray:
    """``clamp(round(x / scale + zero_point))`` with a float zero point (a zero scale counts as 1), as torch."""
    with np.errstate(all="ignore"):
        inv_scale = np.where(scales == 0, np.float32(1), np.float32(1) / scales)
        level = np.rint(data * inv_scale + points.astype(_SINGLE)).astype(np.float64)
        level = np.where(np.isfinite(level), level, 0)  # as torch: what is no number becomes 0
        return np.clip(level, qdtype.qmin, qdtype.qmax).astype(qdtype.storage)


def choose_qparams(low: float, high: float, qmin: int, qmax: int, symmetric: bool = False) -> tuple:
    """The scale and zero point that map ``[min(low, 0), max(high, 0)]`` onto ``[qmin, qmax]``, as torch's
    ``ChooseQuantizationParams`` chooses them (0 is always exactly representable); ``symmetric`` widens the
    range to be symmetric around 0 and puts the zero point in the middle. The range is taken in single
    precision, the scale in double, as there.

    >>> choose_qparams(-1.0, 7.0, 0, 255)
    (0.03137254901960784, 32)
    """
    f32, tiny = np.float32, np.float32(6.1e-5)  # the smallest scale torch lets this choose
    low, high = f32(low), f32(high)
    sparse = symmetric and low < 0 < high
    if sparse:
        below, above = -((qmax - qmin) // 2 + 1), (qmax - qmin) // 2
        widest = float(max(abs(low / f32(below)), abs(high / f32(above))))
        low, high = f32(widest * below), f32(widest * above)
    low, high = min(low, f32(0)), max(high, f32(0))
    scale = (float(high) - float(low)) / (qmax - qmin)
    if f32(scale) == 0 or np.isinf(f32(1) / f32(scale)):
        scale = 0.1
    if scale < tiny:
        if low == 0:
            high = tiny * f32(qmax - qmin)
        elif high == 0:
            low = -tiny * f32(qmax - qmin)
        else:
            amplifier = tiny / f32(scale)
            low, high = low * amplifier, high * amplifier
        scale = float(tiny)
    low, high = float(low), float(high)
    from_min, from_max = qmin - low / scale, qmax - high / scale
    initial = from_min if abs(qmin) - abs(low / scale) < abs(qmax) - abs(high / scale) else from_max
    if sparse:
        initial = (qmin + qmax) / 2
    return scale, int(min(max(np.rint(initial), qmin), qmax))


@ember_function
def quantize_per_tensor_dynamic(input: Tensor, dtype: QD.QuantizedDtype, reduce_range: bool) -> Tensor:
    """Quantize with a scale and zero point chosen from ``input``'s range (``reduce_range`` uses half the
    integer range, which some int8 kernels need to avoid overflow).

    >>> q = ember.quantize_per_tensor_dynamic(ember.tensor([-1.0, 7.0]), ember.quint8, False)
    >>> q.q_scale(), q.q_zero_point()
    (0.03137254901960784, 32)
    """
    op = "quantize_per_tensor_dynamic"
    require_tensor(input, op)
    if dtype not in (QD.quint8, QD.qint8):
        raise RuntimeError(f"{op}: dtype {getattr(dtype, 'scalar_name', dtype)} not supported: use ember.quint8 "
                           "or ember.qint8")
    if input._data.size == 0:
        raise RuntimeError(f"{op}: min(): Expected reduction dim to be specified for input.numel() == 0: the "
                           "input is empty, so it has no range to choose a scale from")
    qmin, qmax = (dtype.qmin // 2, dtype.qmax // 2) if reduce_range else (dtype.qmin, dtype.qmax)
    _float_input(op, input, "Quantize only works on Float Tensor, got")
    scale, zero_point = choose_qparams(float(input._data.min()), float(input._data.max()), qmin, qmax)
    return quantize_per_tensor(input, scale, zero_point, dtype)


@ember_function
def dequantize(tensor: "Tensor | list") -> "Tensor | tuple":
    """The real values of a quantized tensor, as float32 (a list of tensors gives a tuple).

    >>> ember.dequantize(ember.quantize_per_tensor(ember.tensor([0.26]), 0.5, 0, ember.quint8))
    tensor([0.5000])
    """
    if isinstance(tensor, (list, tuple)):
        return tuple(dequantize(t) for t in tensor)
    require_tensor(tensor, "dequantize", name="tensor")
    if isinstance(tensor, QT.QuantizedTensor):
        return wrap(QT.dequantized(tensor))
    return tensor.to(_dtype.float32)


_QUANTIZED_OF_STORAGE = {np.dtype(np.uint8): QD.quint8, np.dtype(np.int8): QD.qint8, np.dtype(np.int32): QD.qint32}


def _integers_of(op: str, input: Tensor) -> tuple:
    """A copy of ``input``'s integers and the quantized dtype they are the storage of."""
    require_tensor(input, op)
    qdtype = _QUANTIZED_OF_STORAGE.get(input._data.dtype)
    if qdtype is None or isinstance(input, QT.QuantizedTensor):
        raise RuntimeError(f"{op}: Creation of quantized tensor requires quantized dtype like ember.quint8: the "
                           f"integers must be uint8, int8 or int32 (for quint8, qint8, qint32), got {input.dtype!r}")
    return input._data.copy(), qdtype


@ember_function
def _make_per_tensor_quantized_tensor(input: Tensor, scale: float, zero_point: int) -> Tensor:
    """A quantized tensor whose integers are a copy of ``input`` (uint8, int8 or int32), with one scale and
    zero point.

    >>> ember._make_per_tensor_quantized_tensor(ember.tensor([1, 200], dtype=ember.uint8), 0.5, 3).dequantize()
    tensor([-1.0000, 98.5000])
    """
    data, qdtype = _integers_of("_make_per_tensor_quantized_tensor", input)
    return QT.per_tensor(data, qdtype, float(scale), int(zero_point))


@ember_function
def _make_per_channel_quantized_tensor(input: Tensor, scale: Tensor, zero_point: Tensor, axis: int) -> Tensor:
    """A quantized tensor whose integers are a copy of ``input``, with one scale and zero point per slice along
    ``axis``.

    >>> q = ember._make_per_channel_quantized_tensor(ember.tensor([[1, 2]], dtype=ember.int8), ember.tensor([0.5, 0.1]),
    ...                                              ember.tensor([0, 1]), 1)
    >>> q.dequantize()
    tensor([[0.5000, 0.1000]])
    """
    op = "_make_per_channel_quantized_tensor"
    data, qdtype = _integers_of(op, input)
    scale, zero_point = require_tensor(scale, op, 2, "scale"), require_tensor(zero_point, op, 3, "zero_point")
    if not 0 <= axis < data.ndim or data.shape[axis] != scale._data.size or zero_point._data.size != scale._data.size:
        raise RuntimeError(f"{op}: expected one scale and zero point per slice along axis {axis} of a tensor of "
                           f"size {list(data.shape)}, got {scale._data.size} and {zero_point._data.size}")
    return QT.per_channel(data, qdtype, scale._data.reshape(-1).astype(np.float64),
                          zero_point._data.reshape(-1).astype(np.int64), axis)
