"""torch's top-level kernels on quantized tensors: ``quantized_max_pool1d/2d/3d`` and ``quantized_batch_norm``.

Max pooling picks integers, so it runs on them (widened to single precision, which holds every 8-bit value
exactly) and keeps the input's quantization. Batch norm computes, per channel, torch's fused
``alpha * (q - zero_point) + beta`` in single precision and rounds into the output's quantization.

>>> import ember
>>> q = ember.quantize_per_tensor(ember.tensor([[[0.1, 0.7, -0.2, 0.4]]]), 0.1, 5, ember.quint8)
>>> ember.quantized_max_pool1d(q, [2])
tensor([[[0.7000, 0.4000]]], size=(1, 1, 2), dtype=ember.quint8,
       quantization_scheme=ember.per_tensor_affine, scale=0.1, zero_point=5)
"""
from __future__ import annotations

import numpy as np

from ember import _quantized as QT
from ember._ops._quiet import IGNORE_ALL, quietly
from ember._ops._support import ember_function, require_tensor
from ember._ops.quantized_readers import quantized
from ember._tensor import Tensor

_SINGLE = np.dtype(np.float32)


def _pooled(op: str, pool, input: Tensor, kernel_size, stride, padding, dilation, ceil_mode) -> Tensor:
    q = quantized(op, input, "tensor")
    if q._data.itemsize != 1:
        raise RuntimeError(f"{op}: expected a quint8 or qint8 tensor, got {q._qdtype!r}")
    levels = Tensor._wrap(q._data.astype(_SINGLE))
    pooled = pool(levels, kernel_size, stride or None, padding, dilation, ceil_mode=ceil_mode)
    return QT.like(q, pooled._data.astype(q._data.dtype))


@ember_function
def quantized_max_pool1d(input: Tensor, kernel_size: "list[int]", stride: "list[int]" = (), padding=0,
                         dilation=1, ceil_mode: bool = False) -> Tensor:
    """Max pooling over the last dim of a quantized tensor; the result keeps its quantization."""
    from ember.nn.functional import max_pool1d

    return _pooled("quantized_max_pool1d", max_pool1d, input, kernel_size, stride, padding, dilation, ceil_mode)


@ember_function
def quantized_max_pool2d(input: Tensor, kernel_size: "list[int]", stride: "list[int]" = (), padding=0,
                         dilation=1, ceil_mode: bool = False) -> Tensor:
    """Max pooling over the last two dims of a quantized tensor; the result keeps its quantization.

    >>> q = ember.quantize_per_tensor(ember.arange(16.).view(1, 4, 4), 0.5, 0, ember.quint8)
    >>> ember.quantized_max_pool2d(q, [2, 2]).int_repr()
    tensor([[[10, 14],
             [26, 30]]], dtype=ember.uint8)
    """
    from ember.nn.functional import max_pool2d

    return _pooled("quantized_max_pool2d", max_pool2d, input, kernel_size, stride, padding, dilation, ceil_mode)


@ember_function
def quantized_max_pool3d(input: Tensor, kernel_size: "list[int]", stride: "list[int]" = (), padding=0,
                         dilation=1, ceil_mode: bool = False) -> Tensor:
    """Max pooling over the last three dims of a 5-D quantized tensor; the result keeps its quantization."""
    from ember.nn.functional import max_pool3d

    if input.dim() != 5:
        raise RuntimeError(f"quantized_max_pool3d: Expecting the input tensor of rank 5, got {input.dim()}")
    return _pooled("quantized_max_pool3d", max_pool3d, input, kernel_size, stride, padding, dilation, ceil_mode)


@ember_function
def quantized_batch_norm(input: Tensor, weight: "Tensor | None", bias: "Tensor | None", mean: Tensor, var: Tensor,
                         eps: float, output_scale: float, output_zero_point: int) -> Tensor:
    """Batch normalisation (with the given statistics) of a quantized tensor, quantized into ``output_scale``
    and ``output_zero_point``.

    >>> q = ember.quantize_per_tensor(ember.tensor([[1.0, 2.0]]), 0.5, 0, ember.quint8)
    >>> ember.quantized_batch_norm(q, ember.ones(2), ember.zeros(2), ember.tensor([0.5, 1.0]), ember.ones(2),
    ...                            0.0, 0.25, 2).int_repr()
    tensor([[4, 6]], dtype=ember.uint8)
    """
    op = "quantized_batch_norm"
    q = quantized(op, input, "tensor")
    for position, (name, value) in enumerate((("mean", mean), ("var", var)), 4):
        require_tensor(value, op, position, name)
    channels = q._data.shape[1] if q._data.ndim > 1 else 1
    for name, value in (("Weight", weight), ("Bias", bias)):
        if value is None:
            raise RuntimeError(f"{op}: {name} must be provided (ones and zeros leave the normalisation as it is)")
    for name, value in (("weight", weight), ("bias", bias), ("mean", mean), ("var", var)):
        if value._data.size != channels:
            raise RuntimeError(f"{op}: Expect {name} size to match C: {channels} channels, got {value._data.size}")
    alpha, beta = quietly(IGNORE_ALL, _fused_params, weight, bias, mean, var, eps, q._scale, output_scale)
    shape = (1, -1) + (1,) * (q._data.ndim - 2)
    with np.errstate(all="ignore"):
        level = alpha.reshape(shape) * (q._data.astype(_SINGLE) - np.float32(q._zero_point)) + beta.reshape(shape)
        level = np.rint(level) + output_zero_point
    qdtype = q._qdtype
    return QT.per_tensor(np.clip(level, qdtype.qmin, qdtype.qmax).astype(qdtype.storage), qdtype, output_scale,
                         output_zero_point)


def _fused_params(weight, bias, mean, var, eps, input_scale, output_scale) -> tuple:
    """torch's per-channel ``alpha`` and ``beta``: the normalisation and both scales in one product and sum."""
    f32 = np.float32
    inv_sigma = (f32(1) / np.sqrt(var._data.astype(_SINGLE) + f32(eps))).astype(_SINGLE)
    gamma, shift = weight._data.astype(_SINGLE), bias._data.astype(_SINGLE)
    alpha = inv_sigma * gamma * f32(f32(input_scale) / f32(output_scale))
    beta = (shift - mean._data.astype(_SINGLE) * inv_sigma * gamma) / f32(output_scale)
    return np.asarray(alpha, _SINGLE), np.asarray(beta, _SINGLE)


def _averaged(q: QT.QuantizedTensor, sums: np.ndarray, counts) -> QT.QuantizedTensor:
    """Averages of integers, rounded as torch's quantized average pooling: ``sum * multiplier + zero_point``
    in single precision, the multiplier ``1 / count`` passed through the reciprocal of a reciprocal.

    (torch's adaptive pooling rounds a few exact ties of the average one step higher, where its compiled
    kernel fuses the product and the sum: about one element in 30,000 of random inputs.)"""
    f32 = np.float32
    multiplier = (f32(1) / np.asarray(counts, f32)).astype(f32)
    inverse = (f32(1) / (f32(1) / multiplier)).astype(f32)
    level = np.rint(np.rint(sums).astype(f32) * inverse + f32(q._zero_point))
    return QT.like(q, np.clip(level, q._qdtype.qmin, q._qdtype.qmax).astype(q._data.dtype))


def _shifted(q: QT.QuantizedTensor) -> Tensor:
    """The integers minus the zero point, in double precision (sums of them stay exact)."""
    return Tensor._wrap(q._data.astype(np.float64) - q._zero_point)


def quantized_avg_pool2d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
                         count_include_pad: bool = True, divisor_override=None) -> Tensor:
    """``F.avg_pool2d`` of a quantized tensor, as torch's quantized kernel rounds it (windows without padding)."""
    from ember.nn.functional import avg_pool2d

    q = quantized("avg_pool2d", input, "tensor")
    if padding not in (0, (0, 0), [0, 0]) or ceil_mode or divisor_override is not None:
        raise NotImplementedError("avg_pool2d: ember averages quantized tensors over whole windows only (no "
                                  "padding, ceil_mode or divisor_override); dequantize first (q.dequantize())")
    kernel = (kernel_size, kernel_size) if isinstance(kernel_size, int) else tuple(kernel_size)
    count = kernel[0] * kernel[1]
    return _averaged(q, avg_pool2d(_shifted(q), kernel_size, stride)._data * count, count)


def quantized_adaptive_avg_pool2d(input: Tensor, output_size) -> Tensor:
    """``F.adaptive_avg_pool2d`` of a quantized tensor, as torch's quantized kernel rounds it."""
    from ember.nn.functional import adaptive_avg_pool2d

    q = quantized("adaptive_avg_pool2d", input, "tensor")
    height, width = q._data.shape[-2:]
    wanted = (output_size, output_size) if isinstance(output_size, int) else tuple(output_size)
    rows, cols = (n if o is None else o for n, o in zip((height, width), wanted))
    counts = np.outer(_bin_sizes(height, rows), _bin_sizes(width, cols))
    return _averaged(q, adaptive_avg_pool2d(_shifted(q), (rows, cols))._data * counts, counts)


def _bin_sizes(size: int, bins: int) -> np.ndarray:
    """How many inputs each of ``bins`` adaptive bins over ``size`` inputs averages."""
    return np.array([-(-(i + 1) * size // bins) - i * size // bins for i in range(bins)])
