"""Fake quantization whose scale and zero point learn (LSQ-style): ``_fake_quantize_learnable_per_tensor_affine``
and ``_fake_quantize_learnable_per_channel_affine``.

The forward is plain fake quantization with the zero point rounded to even. The backward is torch's: the
input's gradient passes inside the grid; the scale's is ``(fake - x) / scale`` inside and the clamped
bound's distance to the zero point outside; the zero point's is ``-scale`` outside and 0 inside; both
summed (over the tensor, or over all but the channel axis) and scaled by ``grad_factor``.

>>> import ember
>>> s = ember.tensor([0.5], requires_grad=True)
>>> z = ember.tensor([0.0], requires_grad=True)
>>> y = ember._fake_quantize_learnable_per_tensor_affine(ember.tensor([0.2, 9.0]), s, z, 0, 15)
>>> y.sum().backward(); s.grad, z.grad
(tensor([14.6000]), tensor([-0.5000]))
"""
from __future__ import annotations

import numpy as np

from ember._ops._quiet import IGNORE_ALL, quietly
from ember._ops._support import ember_function, require_tensor, wrap
from ember._ops.fake_quantize import (
    _floating_input, channel_shape, check_channel_params, check_range, per_channel_grid, per_tensor_grid,
)
from ember._tensor import Tensor
from ember.autograd.function import Function

_SINGLE = np.dtype(np.float32)


def _coefficients(data: np.ndarray, scale, point, quant_min: int, quant_max: int) -> tuple:
    """Per element: whether it is inside the grid, d(output)/d(scale) and d(output)/d(zero_point), for the
    backward's zero point ``point`` (a float, or one per channel laid along the axis), as torch's kernel."""
    inv_scale = np.float32(1) / scale
    level = np.rint(point + data.astype(_SINGLE) * inv_scale)
    below, above = level < quant_min, level > quant_max
    inside = ~(below | above)
    fake = (np.clip(level, quant_min, quant_max) - point).astype(_SINGLE) * scale
    d_scale = np.where(inside, (fake - data) * inv_scale, np.where(below, quant_min - point, quant_max - point))
    d_point = np.where(inside, np.float32(0), -scale)
    return inside, d_scale.astype(data.dtype), d_point.astype(data.dtype)


class _Learnable(Function):
    """The backward both forms share: ``ctx.reduced`` names the dims the parameters' gradients sum over."""

    @staticmethod
    def backward(ctx, grad):
        inside, d_scale, d_point = (wrap(c) for c in ctx.coefficients)
        factor, dims, shape = ctx.grad_factor, ctx.reduced, ctx.parameter_shape
        return (grad * inside, (_summed(grad * d_scale, dims) * factor).reshape(shape),
                (_summed(grad * d_point, dims) * factor).reshape(shape)) + (None,) * ctx.trailing


def _summed(t, dims):
    """``t`` summed over ``dims`` (None: over everything; empty: a 1-d tensor along its channels, unsummed)."""
    if dims is None:
        return t.sum()
    return t.sum(dims) if dims else t


class FakeQuantizeLearnablePerTensorAffine(_Learnable):
    backward_name = "FakeQuantizeLearnablePerTensorAffineBackward0"

    @staticmethod
    def forward(ctx, x, scale, zero_point, quant_min, quant_max, grad_factor):
        op = "_fake_quantize_learnable_per_tensor_affine"
        data = _floating_input(op, "fake_quantize_tensor_cachemask_kernel_type_handling", x)
        scale_value = np.float32(scale._data.reshape(-1)[0])
        point = np.float32(zero_point._data.reshape(-1)[0])
        forward_point = int(min(max(np.rint(point), np.float32(quant_min)), np.float32(quant_max)))
        check_range(op, forward_point, quant_min, quant_max)
        values, _ = per_tensor_grid(data, scale_value, forward_point, quant_min, quant_max, False)
        if any(ctx.needs_input_grad[:3]):
            # as torch's backward: the zero point plus a half, truncated (the forward rounds it to even)
            backward_point = np.float32(int(min(max(point + np.float32(0.5), quant_min), quant_max)))
            ctx.coefficients = quietly(IGNORE_ALL, _coefficients, data, scale_value, backward_point, quant_min,
                                       quant_max)
            ctx.grad_factor, ctx.reduced, ctx.parameter_shape, ctx.trailing = grad_factor, None, (1,), 3
        return wrap(values)


class FakeQuantizeLearnablePerChannelAffine(_Learnable):
    backward_name = "FakeQuantizeLearnablePerChannelAffineBackward0"

    @staticmethod
    def forward(ctx, x, scale, zero_point, axis, quant_min, quant_max, grad_factor):
        data = _floating_input("_fake_quantize_learnable_per_channel_affine",
                               "fake_quantize_channel_cachemask_cpu_type_handling", x)
        shape = channel_shape(data.ndim, axis)
        scales = scale._data.reshape(shape)
        rounded = np.clip(np.rint(zero_point._data.astype(_SINGLE)), quant_min, quant_max).reshape(shape)
        values, _ = per_channel_grid(data, scales, rounded.astype(np.int32), quant_min, quant_max, False)
        if any(ctx.needs_input_grad[:3]):
            ctx.coefficients = quietly(IGNORE_ALL, _coefficients, data, scales, rounded, quant_min, quant_max)
            ctx.reduced = tuple(d for d in range(data.ndim) if d != axis)
            ctx.grad_factor, ctx.parameter_shape, ctx.trailing = grad_factor, scale._data.shape, 4
        return wrap(values)


def _check_parameters(op: str, input: Tensor, scale: Tensor, zero_point: Tensor) -> None:
    for position, (name, value) in enumerate((("input", input), ("scale", scale), ("zero_point", zero_point)), 1):
        require_tensor(value, op, position, name)
        if value._data.size == 0 and name != "input":
            raise IndexError(f"{op}: index 0 is out of bounds for dimension 0 with size 0 ({name} is empty)")


@ember_function
def _fake_quantize_learnable_per_tensor_affine(input: Tensor, scale: Tensor, zero_point: Tensor, quant_min: int,
                                               quant_max: int, grad_factor: float = 1.0) -> Tensor:
    """Fake quantization with a learnable scale and zero point (one-element float32 tensors).

    >>> s = ember.tensor([0.5], requires_grad=True)
    >>> y = ember._fake_quantize_learnable_per_tensor_affine(ember.tensor([0.2, 9.0]), s, ember.tensor([0.]), 0, 15)
    >>> y.sum().backward(); s.grad
    tensor([14.6000])
    """
    _check_parameters("_fake_quantize_learnable_per_tensor_affine", input, scale, zero_point)
    return FakeQuantizeLearnablePerTensorAffine.apply(input, scale, zero_point, quant_min, quant_max, grad_factor)


@ember_function
def _fake_quantize_learnable_per_channel_affine(input: Tensor, scale: Tensor, zero_point: Tensor, axis: int,
                                                quant_min: int, quant_max: int, grad_factor: float = 1.0) -> Tensor:
    """Fake quantization with a learnable scale and zero point per slice along ``axis`` (float32 vectors).

    >>> s = ember.tensor([0.5, 0.25], requires_grad=True)
    >>> y = ember._fake_quantize_learnable_per_channel_affine(ember.tensor([[0.2, 9.0]]), s, ember.zeros(2), 1,
    ...                                                       0, 15)
    >>> y.sum().backward(); s.grad
    tensor([-0.4000, 15.0000])
    """
    op = "_fake_quantize_learnable_per_channel_affine"
    _check_parameters(op, input, scale, zero_point)
    check_channel_params(op, input, scale, zero_point.float().round().clamp(quant_min, quant_max), axis, quant_min,
                         quant_max)  # as torch: the zero points rounded and clamped first
    return FakeQuantizeLearnablePerChannelAffine.apply(input, scale, zero_point, axis, quant_min, quant_max,
                                                       grad_factor)
