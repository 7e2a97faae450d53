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

import math

import numpy as np

import ember
from ember._ops._support import wrap
from ember.autograd.function import Function


class _Normalize(Function):
    """``(x - mean) / sqrt(var + eps) * weight + bias``, the statistics over ``dims`` (the variance biased).

    ``shape`` lines ``weight`` and ``bias`` up with the input; ``stats``, if a list, receives the
    batch's mean and biased variance (as arrays), so running statistics need no second pass.
    The forward keeps the normalised input and ``1 / std`` for a first-order backward on arrays; under
    ``create_graph`` they are recomputed from the input in ember ops, and the same formula records a graph.
    """

    backward_on_arrays = True

    @staticmethod
    def forward(ctx, input, weight, bias, dims, shape, eps, stats):
        x = input._data
        normalised, rstd, mean, var = (_row_statistics if _by_rows(x, dims) else _statistics)(x, dims, eps)
        if stats is not None:
            stats.extend((mean, var))
        output = normalised
        if weight is not None:
            output = output * weight._data.reshape(shape)
        if bias is not None:
            output = output + bias._data.reshape(shape) if output is normalised else \
                np.add(output, bias._data.reshape(shape), out=output)
        ctx.save_for_backward(input, weight)
        affine = weight if weight is not None else bias
        ctx.constants = (dims, shape, None if affine is None else affine._data.shape)
        ctx.eps, ctx.arrays = eps, (normalised, rstd)
        return wrap(output.astype(x.dtype, copy=False))

    @staticmethod
    def backward(ctx, grad):
        input, weight = ctx.saved_tensors
        needs, dims = ctx.needs_input_grad, ctx.constants[0]
        # the forward's arrays serve one first-order backward (a second one, with retain_graph, recomputes)
        arrays, ctx.arrays = ctx.arrays, None
        if not isinstance(grad, np.ndarray) or arrays is None:
            arrays = (_row_statistics if _by_rows(input, dims) else _statistics)(input, dims, ctx.eps)
        return (*normalize_backward(grad, *arrays[:2], weight, *ctx.constants, needs[:3]), None, None, None, None)


def _statistics(x, dims: tuple, eps: float) -> tuple:
    """The normalised ``x``, ``1 / std``, the mean and the biased variance; on arrays or in ember ops (where
    they carry the input's graph)."""
    mean = _mean(x, dims)
    centred = x - mean
    var = _mean(centred * centred, dims)
    rstd = 1 / np.sqrt(var + eps) if isinstance(x, np.ndarray) else ember.rsqrt(var + eps)
    return centred * rstd, rstd, mean, var


def _by_rows(x, dims: tuple) -> bool:
    """Whether the statistics are over an array's last dims (layer norm's case) in single or double precision:
    then they are those of the rows of a matrix, and sums along rows are BLAS products with ones."""
    return (isinstance(x, np.ndarray) and x.dtype in (np.float32, np.float64)
            and dims == tuple(range(x.ndim - len(dims), x.ndim)))


def _row_sums(rows: np.ndarray) -> np.ndarray:
    # a matrix-vector product with ones: about six times faster than NumPy's sum along short rows
    return rows @ np.ones(rows.shape[1], rows.dtype)


def _row_statistics(x: np.ndarray, dims: tuple, eps: float) -> tuple:
    """``_statistics`` over the last dims of an array, as rows: the centred rows are normalised in place."""
    width = math.prod(x.shape[x.ndim - len(dims):])
    rows = x.reshape(-1, width)
    mean = _row_sums(rows) / width
    centred = rows - mean[:, None]
    var = np.einsum("ij,ij->i", centred, centred) / width  # no array of the squares
    rstd = 1 / np.sqrt(var + eps)
    centred *= rstd[:, None]
    kept = x.shape[:x.ndim - len(dims)] + (1,) * len(dims)
    return centred.reshape(x.shape), rstd.reshape(kept), mean.reshape(kept), var.reshape(kept)


def _row_backward(grad: np.ndarray, normalised: np.ndarray, rstd: np.ndarray, weight, dims: tuple,
                  needs: tuple) -> tuple:
    """``normalize_backward`` by rows (see ``_row_statistics``): the same formula, row sums as products."""
    width = math.prod(grad.shape[grad.ndim - len(dims):])
    rows, normal = grad.reshape(-1, width), normalised.reshape(-1, width)
    grad_input = grad_weight = grad_bias = None
    if needs[0]:
        scaled = rows * weight.reshape(-1) if weight is not None else rows
        spread = _row_sums(scaled) / width
        slope = np.einsum("ij,ij->i", scaled, normal) / width
        grad_input = scaled - spread[:, None]
        grad_input -= normal * slope[:, None]
        grad_input *= rstd.reshape(-1, 1)
        grad_input = grad_input.reshape(grad.shape)
    if needs[1]:
        grad_weight = np.ones(rows.shape[0], rows.dtype) @ (rows * normal)
    if needs[2]:
        grad_bias = np.ones(rows.shape[0], rows.dtype) @ rows
    return grad_input, grad_weight, grad_bias


def _mean(x, dims: tuple):
    return x.mean(axis=dims, keepdims=True) if isinstance(x, np.ndarray) else x.mean(dims, keepdim=True)


def _sum_to(x, shape: tuple, parameter_shape: tuple):
    """``x`` summed over the dims where ``shape`` (its rank) is 1, as a parameter of ``parameter_shape``."""
    if not isinstance(x, np.ndarray):
        return x.sum_to_size(shape).reshape(parameter_shape)
    lead = x.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(shape) if n == 1 and x.shape[lead + i] != 1)
    return x.sum(axis=axes).reshape(parameter_shape)


def normalize_backward(grad, normalised, rstd, weight, dims: tuple, shape: tuple, parameter_shape: tuple | None,
                       needs: tuple) -> tuple:
    """The gradients of input, weight and bias (None where not needed), on arrays or in ember ops."""
    if _by_rows(grad, dims) and normalised.shape == grad.shape:
        grad_input, grad_weight, grad_bias = _row_backward(grad, normalised, rstd, weight, dims, needs)
        reshape = (lambda g: g) if parameter_shape is None else (lambda g: None if g is None else
                                                                  g.reshape(parameter_shape))
        return grad_input, reshape(grad_weight), reshape(grad_bias)
    grad_input = grad_weight = grad_bias = None
    if needs[0]:
        scaled = grad * weight.reshape(shape) if weight is not None else grad
        grad_input = rstd * (scaled - _mean(scaled, dims) - normalised * _mean(scaled * normalised, dims))
    if needs[1]:
        grad_weight = _sum_to(grad * normalised, shape, parameter_shape)
    if needs[2]:
        grad_bias = _sum_to(grad, shape, parameter_shape)
    return grad_input, grad_weight, grad_bias


class BatchNorm(_Normalize):
    """Training-mode batch normalization: statistics over all dims but the channel dim (1)."""

    backward_name = "NativeBatchNormBackward0"


class LayerNorm(_Normalize):
    """Layer normalization: statistics over the trailing dims."""

    backward_name = "NativeLayerNormBackward0"
