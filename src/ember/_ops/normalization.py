"""Batch and layer normalization as one op each, as in torch (``NativeBatchNormBackward0``,
``NativeLayerNormBackward0``): the forward runs on NumPy arrays in one pass, the backward is the
closed form in ember ops, with the statistics recomputed from the input so that it has a gradient too.

>>> import ember
>>> x = ember.tensor([[1., 3.], [2., 6.]], requires_grad=True)
>>> ember.nn.functional.layer_norm(x, [2])
tensor([[-1.0000,  1.0000],
        [-1.0000,  1.0000]], grad_fn=<NativeLayerNormBackward0>)
"""
from __future__ import annotations

import numpy as np

import ember
from ember._ops._support import wrap
from ember.autograd.function import Function


class _Normalize(Function):
    """``(x - mean) / sqrt(var + eps) * weight + bias``, the statistics over ``dims`` (the variance biased).

    ``shape`` lines ``weight`` and ``bias`` up with the input; ``stats``, if a list, receives the
    batch's mean and biased variance (as arrays), so running statistics need no second pass.
    """

    @staticmethod
    def forward(ctx, input, weight, bias, dims, shape, eps, stats):
        x = input._data
        mean = x.mean(axis=dims, keepdims=True)
        centred = x - mean
        var = (centred * centred).mean(axis=dims, keepdims=True)
        output = centred / np.sqrt(var + eps)
        if stats is not None:
            stats.extend((mean, var))
        if weight is not None:
            output = output * weight._data.reshape(shape)
        if bias is not None:
            output = output + bias._data.reshape(shape)
        ctx.save_for_backward(input, weight)
        affine = weight if weight is not None else bias
        ctx.constants = (dims, shape, eps, None if affine is None else affine._data.shape)
        return wrap(output.astype(x.dtype, copy=False))

    @staticmethod
    def backward(ctx, grad):
        input, weight = ctx.saved_tensors
        needs = ctx.needs_input_grad
        return (*normalize_backward(grad, input, weight, *ctx.constants, needs[:3]), None, None, None, None)


def normalize_backward(grad, input, weight, dims: tuple, shape: tuple, eps: float, parameter_shape: tuple | None,
                       needs: tuple) -> tuple:
    """The gradients of input, weight and bias (None where not needed), in ember ops."""
    mean = input.mean(dims, keepdim=True)
    centred = input - mean
    rstd = ember.rsqrt((centred * centred).mean(dims, keepdim=True) + eps)
    normalised = centred * rstd
    grad_input = grad_weight = grad_bias = None
    if needs[0]:
        scaled = grad * weight.reshape(shape) if weight is not None else grad
        grad_input = rstd * (scaled - scaled.mean(dims, keepdim=True)
                             - normalised * (scaled * normalised).mean(dims, keepdim=True))
    if needs[1]:
        grad_weight = (grad * normalised).sum_to_size(shape).reshape(parameter_shape)
    if needs[2]:
        grad_bias = grad.sum_to_size(shape).reshape(parameter_shape)
    return grad_input, grad_weight, grad_bias


class BatchNorm(_Normalize):
    """Training-mode batch normalization: statistics over all dims but the channel dim (1)."""

    backward_name = "NativeBatchNormBackward0"


class LayerNorm(_Normalize):
    """Layer normalization: statistics over the trailing dims."""

    backward_name = "NativeLayerNormBackward0"
