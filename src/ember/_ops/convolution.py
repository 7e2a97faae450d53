"""Convolution as one op, as in torch: im2col (a strided view, one copy) and one batched matmul per call.

Three NumPy kernels, each the adjoint of the others in one of its operands, so the gradients of each
are written with the other two and every order of derivative works:

- ``conv(x, w)``: the convolution itself;
- ``conv_t(g, w)``: its gradient with respect to ``x`` (the transposed convolution);
- ``conv_w(x, g)``: its gradient with respect to ``w``.

>>> import ember
>>> x = ember.ones(1, 1, 3, 3, requires_grad=True)
>>> y = ember.nn.functional.conv2d(x, ember.ones(1, 1, 2, 2))
>>> y
tensor([[[[4., 4.],
          [4., 4.]]]], grad_fn=<ConvolutionBackward0>)
>>> y.sum().backward(); x.grad[0, 0]
tensor([[1., 2., 1.],
        [2., 4., 2.],
        [1., 2., 1.]])
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.lib.stride_tricks import as_strided

from ember._ops._support import wrap
from ember.autograd.function import Function


@dataclass(frozen=True)
class Geometry:
    """How a kernel slides: per spatial dim, its step, the zeros padded (before, after) and the kernel's spacing."""

    stride: tuple
    padding: tuple  # ((before, after), ...)
    dilation: tuple
    groups: int

    def output_size(self, size: tuple, kernel: tuple) -> tuple:
        """The number of kernel positions along each spatial dim of an input of ``size``."""
        return tuple((n + before + after - d * (k - 1) - 1) // s + 1
                     for n, (before, after), d, k, s in zip(size, self.padding, self.dilation, kernel, self.stride))


def pad_or_crop(a: np.ndarray, pads: tuple) -> np.ndarray:
    """``a`` with zeros added (positive) or entries cut off (negative) at each end of its trailing dims."""
    lead = a.ndim - len(pads)
    crop = (slice(None),) * lead + tuple(slice(max(-b, 0), a.shape[lead + i] - max(-e, 0))
                                          for i, (b, e) in enumerate(pads))
    a = a[crop]
    grow = [(0, 0)] * lead + [(max(b, 0), max(e, 0)) for b, e in pads]
    return np.pad(a, grow) if any(b or e for b, e in grow) else a


def _windows(padded: np.ndarray, kernel: tuple, out: tuple, geometry: Geometry) -> np.ndarray:
    """The view ``[N, C, *kernel, *out]`` of every kernel position's inputs (no copy)."""
    strides = padded.strides
    space = strides[2:]
    return as_strided(padded, padded.shape[:2] + kernel + out,
                      strides[:2] + tuple(s * d for s, d in zip(space, geometry.dilation))
                      + tuple(s * t for s, t in zip(space, geometry.stride)), writeable=False)


def conv(x: np.ndarray, w: np.ndarray, geometry: Geometry) -> np.ndarray:
    """``x`` ``[N, C, *size]`` convolved with ``w`` ``[O, C/groups, *kernel]``: ``[N, O, *out]``."""
    kernel, groups = w.shape[2:], geometry.groups
    out = geometry.output_size(x.shape[2:], kernel)
    n, c, o = x.shape[0], x.shape[1], w.shape[0]
    columns = _windows(pad_or_crop(x, geometry.padding), kernel, out, geometry)
    columns = columns.reshape(n, groups, c // groups * math.prod(kernel), math.prod(out))
    y = np.matmul(w.reshape(groups, o // groups, -1), columns)
    return y.reshape((n, o) + out)


def conv_t(g: np.ndarray, w: np.ndarray, geometry: Geometry, size: tuple) -> np.ndarray:
    """The transposed convolution: what ``g`` ``[N, O, *out]`` gives back to an input of spatial ``size``.

    The gradient spread out by the stride and padded by the kernel's reach, convolved with the kernel
    flipped and its channels swapped, at stride 1.
    """
    kernel, groups = w.shape[2:], geometry.groups
    pads = tuple((d * (k - 1) - before, n + before - (m - 1) * s - 1)
                 for k, d, s, n, m, (before, _) in zip(kernel, geometry.dilation, geometry.stride, size,
                                                      g.shape[2:], geometry.padding))
    spread = pad_or_crop(_spread(g, geometry.stride), pads)
    o, c = w.shape[0], w.shape[1] * groups
    flipped = w[(slice(None), slice(None)) + (slice(None, None, -1),) * len(kernel)]
    swapped = flipped.reshape((groups, o // groups, c // groups) + kernel).swapaxes(1, 2).reshape((c, o // groups) + kernel)
    unit = Geometry((1,) * len(kernel), ((0, 0),) * len(kernel), geometry.dilation, groups)
    return conv(spread, swapped, unit)


def _spread(g: np.ndarray, stride: tuple) -> np.ndarray:
    """``g`` with ``stride - 1`` zeros between neighbours along each spatial dim."""
    if all(s == 1 for s in stride):
        return g
    shape = g.shape[:2] + tuple((m - 1) * s + 1 if m else 0 for m, s in zip(g.shape[2:], stride))
    spread = np.zeros(shape, g.dtype)
    spread[(slice(None), slice(None)) + tuple(slice(None, None, s) for s in stride)] = g
    return spread


def conv_w(x: np.ndarray, g: np.ndarray, geometry: Geometry, kernel: tuple) -> np.ndarray:
    """The kernel's gradient ``[O, C/groups, *kernel]`` from the input ``x`` and the output's gradient ``g``."""
    groups, out = geometry.groups, g.shape[2:]
    n, c, o = x.shape[0], x.shape[1], g.shape[1]
    windows = _windows(pad_or_crop(x, geometry.padding), kernel, out, geometry)
    spatial = len(kernel)
    # channels and kernel positions first, batch and output positions last: one copy, then a matmul per group
    order = (1,) + tuple(range(2, 2 + spatial)) + (0,) + tuple(range(2 + spatial, 2 + 2 * spatial))
    columns = windows.transpose(order).reshape(groups, c // groups * math.prod(kernel), n * math.prod(out))
    grads = g.swapaxes(0, 1).reshape(groups, o // groups, n * math.prod(out))
    return np.matmul(grads, columns.swapaxes(1, 2)).reshape((o, c // groups) + kernel)


def _spatial_sum(g):
    axes = (0,) + tuple(range(2, g.ndim))
    return g.sum(axis=axes) if isinstance(g, np.ndarray) else g.sum(dim=axes)


def _conv(x, w, geometry: Geometry):
    if isinstance(x, np.ndarray):
        return conv(x, w, geometry)
    return Convolution.apply(x, w, None, geometry, False, None)


def _conv_t(g, w, geometry: Geometry, size: tuple):
    if isinstance(g, np.ndarray):
        return conv_t(g, w, geometry, size)
    return Convolution.apply(g, w, None, geometry, True, size)


def _conv_w(x, g, geometry: Geometry, kernel: tuple):
    if isinstance(x, np.ndarray):
        return conv_w(x, g, geometry, kernel)
    return ConvolutionWeight.apply(x, g, geometry, kernel)


class Convolution(Function):
    """``conv(input, weight) + bias``, or with ``transposed`` ``conv_t(input, weight)`` to spatial ``size``."""

    backward_name = "ConvolutionBackward0"
    backward_on_arrays = True

    @staticmethod
    def forward(ctx, input, weight, bias, geometry, transposed, size):
        x, w = input._data, weight._data
        needs = ctx.needs_input_grad
        ctx.save_for_backward(input if needs[1] else None, weight if needs[0] else None)
        ctx.geometry, ctx.transposed, ctx.size, ctx.kernel = geometry, transposed, x.shape[2:], w.shape[2:]
        y = conv_t(x, w, geometry, size) if transposed else conv(x, w, geometry)
        if bias is not None:
            y += bias._data.reshape((-1,) + (1,) * (y.ndim - 2))
        return wrap(y)

    @staticmethod
    def backward(ctx, grad):
        input, weight = ctx.saved_tensors
        needs, geometry = ctx.needs_input_grad, ctx.geometry
        kernel = ctx.kernel
        if ctx.transposed:  # y = conv_t(x, w): x's gradient is the plain convolution
            dx = _conv(grad, weight, geometry) if needs[0] else None
            dw = _conv_w(grad, input, geometry, kernel) if needs[1] else None
        else:
            dx = _conv_t(grad, weight, geometry, ctx.size) if needs[0] else None
            dw = _conv_w(input, grad, geometry, kernel) if needs[1] else None
        return dx, dw, _spatial_sum(grad) if needs[2] else None, None, None, None


class ConvolutionWeight(Function):
    """``conv_w(input, grad_output)``, the kernel's gradient, as an op so that it can be differentiated again."""

    backward_name = "ConvolutionBackwardBackward0"
    backward_on_arrays = True

    @staticmethod
    def forward(ctx, input, grad_output, geometry, kernel):
        needs = ctx.needs_input_grad
        ctx.save_for_backward(grad_output if needs[0] else None, input if needs[1] else None)
        ctx.geometry, ctx.size = geometry, input._data.shape[2:]
        return wrap(conv_w(input._data, grad_output._data, geometry, kernel))

    @staticmethod
    def backward(ctx, grad):
        grad_output, input = ctx.saved_tensors
        needs = ctx.needs_input_grad
        return (_conv_t(grad_output, grad, ctx.geometry, ctx.size) if needs[0] else None,
                _conv(input, grad, ctx.geometry) if needs[1] else None, None, None)
