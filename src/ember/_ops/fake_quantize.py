"""Fake quantization, for quantization-aware training: values rounded to a quantized grid and back, in floating
point, with the straight-through gradient (1 where the value fell inside the grid's range, 0 where it was clamped).

The arithmetic follows torch's CPU kernels step by step, so the values agree to the bit: the scale is taken in
single precision and its reciprocal multiplies (``x * (1 / scale)``, not ``x / scale``), ties round to even, and
the per-tensor result is formed in single precision while the per-channel one is formed in double.

>>> import ember
>>> x = ember.tensor([-1.0, 0.25, 0.75, 100.0], requires_grad=True)
>>> y = ember.fake_quantize_per_tensor_affine(x, 0.5, 0, -128, 127)
>>> y
tensor([-1.0000,  0.0000,  1.0000, 63.5000],
       grad_fn=<FakeQuantizePerTensorAffineCachemaskBackward0>)
>>> y.sum().backward(); x.grad
tensor([1., 1., 1., 0.])
"""
from __future__ import annotations

import numpy as np

from ember import _dtype
from ember._ops._quiet import IGNORE_ALL, quietly
from ember._ops._support import ember_function, require_tensor, wrap
from ember._tensor import Tensor, _wrap_dim
from ember.autograd.function import Function

_SINGLE, _DOUBLE = np.dtype(np.float32), np.dtype(np.float64)
_INT64_MIN = -(2.0 ** 63)  # what x86 makes of a float too large for (or not) an integer: torch's kernels cast so
_SINGLE_INTEGERS = 2 ** 24  # single precision holds every integer up to here


def _floating_input(op: str, kernel: str, x: Tensor) -> np.ndarray:
    data = x._data
    if _dtype.kind(data.dtype) != "f":
        raise NotImplementedError(
            f'{op}: "{kernel}" not implemented for \'{_dtype.scalar_type_name(data.dtype)}\': the input must be '
            "floating point (float32, float64 or float16); convert it first, e.g. x.float()"
        )
    return data


def _scaled(data: np.ndarray, inv_scale: np.float32) -> np.ndarray:
    """``x * inv_scale`` as the C++ kernel computes it: in single precision unless the input is double."""
    if data.dtype == _DOUBLE:
        return np.asarray(data * np.float64(inv_scale))  # (a 0-d product is a NumPy scalar: made an array)
    return np.asarray(data.astype(_SINGLE, copy=False) * inv_scale)


def extremes(zero_points) -> tuple:
    """The lowest and highest zero point (of one number, or of an array)."""
    if isinstance(zero_points, np.ndarray):
        return int(zero_points.min()), int(zero_points.max())
    return int(zero_points), int(zero_points)


def check_range(op: str, zero_points, quant_min: int, quant_max: int) -> None:
    if quant_min > quant_max:
        raise RuntimeError(f"{op}: `quant_min` should be less than or equal to `quant_max` "
                           f"(got quant_min={quant_min}, quant_max={quant_max})")
    low, high = extremes(zero_points)
    if low < quant_min or high > quant_max:
        raise RuntimeError(f"{op}: `zero_point` must be between `quant_min` and `quant_max` (got zero_point "
                           f"{low if low < quant_min else high}, range [{quant_min}, {quant_max}])")


def _exact_in_single(zero_points, quant_min: int, quant_max: int) -> bool:
    """Whether every clamped level, and it minus its zero point, is an integer single precision holds exactly:
    then the clamping and the product can stay in the array's own single precision, with the same result."""
    low, high = extremes(zero_points)
    return max(abs(quant_min), abs(quant_max), abs(quant_max - low), abs(high - quant_min)) <= _SINGLE_INTEGERS


def per_tensor_grid(data: np.ndarray, scale: float, zero_point: int, quant_min: int, quant_max: int,
                    with_mask: bool) -> tuple:
    """The fake-quantized values (of ``data``'s dtype) and, if asked, the mask of those inside the grid."""
    return quietly(IGNORE_ALL, _per_tensor_grid, data, np.float32(scale), zero_point, quant_min, quant_max,
                   with_mask)


def _per_tensor_grid(data, scale, zero_point, quant_min, quant_max, with_mask):
    level = _scaled(data, np.float32(1) / scale)
    np.rint(level, out=level)
    level += zero_point  # a float, as the kernel's zero_point + nearbyint(...)
    mask = (level >= quant_min) & (level <= quant_max) if with_mask else None
    if level.dtype == _SINGLE and _exact_in_single(zero_point, quant_min, quant_max):
        np.fmax(level, quant_min, out=level)  # fmax, not clip: NaN becomes quant_min, as the kernel's
        np.fmin(level, quant_max, out=level)
        level -= zero_point
        level *= scale
        return _dtype.cast(level, data.dtype), mask
    clamped = np.fmin(np.fmax(level.astype(_DOUBLE), quant_min), quant_max).astype(np.int64)
    values = (clamped - zero_point).astype(_SINGLE) * scale  # single precision, whatever the input's
    return _dtype.cast(values, data.dtype), mask


class _StraightThrough(Function):
    """A fake quantization's gradient: the input's passes where the value was not clamped (the mask the forward
    saves, only when that gradient is needed); the other inputs get none."""

    backward_on_arrays = True

    @staticmethod
    def masked(ctx, values: np.ndarray, mask) -> Tensor:
        if mask is not None:
            ctx.save_for_backward(wrap(mask))
        return wrap(values)

    @staticmethod
    def backward(ctx, grad):
        (mask,) = ctx.saved_tensors
        return (grad * mask,) + (None,) * (len(ctx.needs_input_grad) - 1)


class FakeQuantizePerTensorAffine(_StraightThrough):
    """Fake quantization with one scale and zero point; the backward passes the gradient where not clamped."""

    backward_name = "FakeQuantizePerTensorAffineCachemaskBackward0"

    @staticmethod
    def forward(ctx, x, scale, zero_point, quant_min, quant_max):
        data = _floating_input("fake_quantize_per_tensor_affine", "fake_quantize_tensor_cachemask_kernel_type_handling",
                               x)
        check_range("fake_quantize_per_tensor_affine", zero_point, quant_min, quant_max)
        return _StraightThrough.masked(ctx, *per_tensor_grid(data, scale, zero_point, quant_min, quant_max,
                                                             ctx.needs_input_grad[0]))


class FakeQuantizePerTensorAffineTensorQparams(FakeQuantizePerTensorAffine):
    """The overload whose scale and zero point are one-element tensors (no gradient reaches them)."""

    backward_name = "FakeQuantizePerTensorAffineCachemaskTensorQparamsBackward0"


def _one_number(op: str, name: str, value: Tensor):
    if value._data.size != 1:
        raise RuntimeError(f"{op}: a Tensor with {value._data.size} elements cannot be converted to Scalar: "
                           f"{name} must hold one value (use fake_quantize_per_channel_affine for one per channel)")
    if value.requires_grad:
        raise RuntimeError(f"The function '{op}' is not differentiable with respect to argument '{name}'. This "
                           "input cannot have requires_grad True (a learnable scale needs "
                           "ember._fake_quantize_learnable_per_tensor_affine)")
    return value._data.reshape(()).item()


@ember_function
def fake_quantize_per_tensor_affine(input: Tensor, scale: "float | Tensor", zero_point: "int | Tensor",
                                    quant_min: int, quant_max: int) -> Tensor:
    """``(clamp(round(input / scale) + zero_point, quant_min, quant_max) - zero_point) * scale``, with the
    straight-through gradient. ``scale`` and ``zero_point`` are numbers, or one-element tensors.

    >>> ember.fake_quantize_per_tensor_affine(ember.tensor([0.26, 0.74, 3.0]), 0.5, 0, 0, 3)
    tensor([0.5000, 0.5000, 1.5000])
    """
    op = "fake_quantize_per_tensor_affine"
    require_tensor(input, op)
    if isinstance(scale, Tensor) or isinstance(zero_point, Tensor):
        if not (isinstance(scale, Tensor) and isinstance(zero_point, Tensor)):
            raise TypeError(f"{op}(): scale and zero_point must both be numbers or both be tensors, got "
                            f"{type(scale).__name__} and {type(zero_point).__name__}")
        number = _one_number(op, "scale", scale), int(_one_number(op, "zero_point", zero_point))
        return FakeQuantizePerTensorAffineTensorQparams.apply(input, *number, quant_min, quant_max)
    if isinstance(zero_point, float):
        raise TypeError(f"{op}(): argument 'zero_point' (position 3) must be int, not float; round it first")
    return FakeQuantizePerTensorAffine.apply(input, float(scale), int(zero_point), quant_min, quant_max)


def per_channel_grid(data: np.ndarray, scales: np.ndarray, zero_points: np.ndarray, quant_min: int,
                     quant_max: int, with_mask: bool) -> tuple:
    """Per-channel fake quantization of ``data`` (``scales``/``zero_points`` already broadcast along the axis)."""
    return quietly(IGNORE_ALL, _per_channel_grid, data, scales, zero_points, quant_min, quant_max, with_mask)


def _per_channel_grid(data, scales, zero_points, quant_min, quant_max, with_mask):
    level = _scaled(data, np.float32(1) / scales)
    integral = zero_points.dtype.kind != "f"
    if integral:
        np.rint(level, out=level)
        level += zero_points.astype(level.dtype)
    else:  # as torch's float zero point: added before rounding
        level += zero_points.astype(_SINGLE)
        np.rint(level, out=level)
    unrepresentable = ~(np.abs(level) < -_INT64_MIN)  # NaN, infinities, beyond int64: the kernel's cast
    if unrepresentable.any():
        level[unrepresentable] = _INT64_MIN
    mask = (level >= quant_min) & (level <= quant_max) if with_mask else None
    np.clip(level, quant_min, quant_max, out=level)
    if integral and level.dtype == _SINGLE and _exact_in_single(zero_points, quant_min, quant_max):
        level -= zero_points.astype(_SINGLE)  # exact, and the product of two singles rounded once: as in double
        level *= scales
        return _dtype.cast(level, data.dtype), mask
    values = (level.astype(_DOUBLE) - zero_points.astype(_DOUBLE)) * scales.astype(_DOUBLE)  # double, as the kernel
    return _dtype.cast(values, data.dtype), mask


def channel_shape(ndim: int, axis: int) -> tuple:
    """The shape that lays a 1-D vector of per-channel parameters along ``axis`` of an ``ndim``-d tensor."""
    return tuple(-1 if d == axis else 1 for d in range(ndim))


class FakeQuantizePerChannelAffine(_StraightThrough):
    backward_name = "FakeQuantizePerChannelAffineCachemaskBackward0"

    @staticmethod
    def forward(ctx, x, scale, zero_point, axis, quant_min, quant_max):
        data = _floating_input("fake_quantize_per_channel_affine",
                               "fake_quantize_channel_cachemask_cpu_type_handling", x)
        shape = channel_shape(data.ndim, axis)
        return _StraightThrough.masked(ctx, *per_channel_grid(data, scale._data.reshape(shape),
                                                              zero_point._data.reshape(shape), quant_min, quant_max,
                                                              ctx.needs_input_grad[0]))


def check_channel_params(op: str, x: Tensor, scale: Tensor, zero_point: Tensor, axis: int, quant_min: int,
                         quant_max: int) -> None:
    """torch's checks of per-channel parameters, in its order."""
    if scale._data.dtype != _SINGLE and scale._data.dtype is not _dtype.BF16:
        raise RuntimeError(f"{op}: Scale must be Float or BFloat16, found {_dtype.scalar_type_name(scale._data.dtype)}"
                           "; convert it, e.g. scale.float()")
    if zero_point._data.dtype not in (np.int32, np.float32, np.float16):
        raise RuntimeError(f"{op}: Zero-point must be Int32, Float or Half, found "
                           f"{_dtype.scalar_type_name(zero_point._data.dtype)}; convert it, e.g. zero_point.int()")
    if scale._data.ndim != 1 or zero_point._data.ndim != 1:
        raise RuntimeError(f"{op}: scale and zero point should be 1-D tensors, got {scale._data.ndim}-D and "
                           f"{zero_point._data.ndim}-D")
    if scale._data.size != zero_point._data.size:
        raise RuntimeError(f"{op}: scale and zero-point need to have the same dimensions, got {scale._data.size} "
                           f"and {zero_point._data.size}")
    channels = x._data.shape[_wrap_dim(axis, x._data.ndim, op)]
    if scale._data.size != channels:
        raise RuntimeError(f"{op}: dimensions of scale and zero-point are not consistent with input tensor: "
                           f"{scale._data.size} values for {channels} channels along axis {axis}")
    check_range(op, np.trunc(zero_point._data) if zero_point._data.size else 0, quant_min, quant_max)
    if axis < 0:
        raise RuntimeError(f"{op}: `axis` must be between 0 and number of dimensions of input, got {axis}")


@ember_function
def fake_quantize_per_channel_affine(input: Tensor, scale: Tensor, zero_point: Tensor, axis: int, quant_min: int,
                                     quant_max: int) -> Tensor:
    """Fake quantization with one scale (float32) and zero point (int32, or float) per slice along ``axis``.

    >>> x = ember.tensor([[0.3, 0.3], [0.3, 0.3]])
    >>> ember.fake_quantize_per_channel_affine(x, ember.tensor([0.5, 0.25]), ember.tensor([0, 0], dtype=ember.int32),
    ...                                        1, -128, 127)
    tensor([[0.5000, 0.2500],
            [0.5000, 0.2500]])
    """
    op = "fake_quantize_per_channel_affine"
    for position, (name, value) in enumerate((("input", input), ("scale", scale), ("zero_point", zero_point)), 1):
        require_tensor(value, op, position, name)
    check_channel_params(op, input, scale, zero_point, axis, quant_min, quant_max)
    return FakeQuantizePerChannelAffine.apply(input, scale, zero_point, axis, quant_min, quant_max)
