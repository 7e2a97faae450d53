"""Convolution as one op, as in torch: im2col (a strided view, one copy) and a batched matmul per chunk of images.

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
    padding: tuple  # ((before, after), ...); a negative after leaves the input's last entries out
    dilation: tuple
    groups: int

    def output_size(self, size: tuple, kernel: tuple) -> tuple:
        """The number of kernel positions along each spatial dim of an input of ``size``."""
        return tuple((n + before + after - d * (k - 1) - 1) // s + 1
                     for n, (before, after), d, k, s in zip(size, self.padding, self.dilation, kernel, self.stride))


def _columns(x: np.ndarray, kernel: tuple, out: tuple, geometry: Geometry) -> np.ndarray:
    """im2col: ``[groups, C/groups * prod(kernel), N * prod(out)]``, one copy of a strided view.

    Channels first, batch next: each group's product is then one large matrix product, and the
    arrays around it move between ``[N, C, ...]`` and ``[C, N, ...]`` in whole planes.
    """
    n, c, size = x.shape[0], x.shape[1], x.shape[2:]
    if any(b or a > 0 for b, a in geometry.padding):
        padded = np.zeros((c, n) + tuple(m + b + max(a, 0) for m, (b, a) in zip(size, geometry.padding)), x.dtype)
        padded[(slice(None), slice(None)) + _inside(size, geometry.padding)] = x.swapaxes(0, 1)
    else:
        padded = x.swapaxes(0, 1)
    space = padded.strides[2:]
    windows = as_strided(padded, (c,) + kernel + (n,) + out,
                         padded.strides[:1] + tuple(a * d for a, d in zip(space, geometry.dilation))
                         + padded.strides[1:2] + tuple(a * s for a, s in zip(space, geometry.stride)),
                         writeable=False)
    groups = geometry.groups
    return windows.reshape(groups, c // groups * math.prod(kernel), n * math.prod(out))


def _inside(size: tuple, padding: tuple) -> tuple:
    """The slices of a padded array that hold the input."""
    return tuple(slice(b, b + m) for m, (b, _) in zip(size, padding))


def _channels_first(g: np.ndarray, groups: int) -> np.ndarray:
    """An output-shaped ``[N, O, *out]`` array as ``[groups, O/groups, N * prod(out)]``."""
    return g.swapaxes(0, 1).reshape(groups, g.shape[1] // groups, -1)


# The images go through a kernel in chunks whose columns take about this many bytes: the columns (and the
# transposed convolution's per-tap shares) of a whole batch would be the largest arrays of a training step,
# several times its activations, while a chunk's stay in cache between the copy and the matrix product.
_CHUNK_BYTES = 1 << 20


def _chunks(n: int, per_image: int, scale: int = 1) -> range:
    """The first image of each chunk of a batch of ``n``, ``per_image`` bytes of columns each."""
    return range(0, n, max(1, scale * _CHUNK_BYTES // max(per_image, 1)))


def conv(x: np.ndarray, w: np.ndarray, geometry: Geometry) -> np.ndarray:
    """``x`` ``[N, C, *size]`` convolved with ``w`` ``[O, C/groups, *kernel]``: ``[N, O, *out]``."""
    kernel, groups = w.shape[2:], geometry.groups
    out = geometry.output_size(x.shape[2:], kernel)
    n, o = x.shape[0], w.shape[0]
    y = np.empty((n, o) + out, np.result_type(x, w))
    rows = w.reshape(groups, o // groups, -1)
    step = _chunks(n, w[0].size * groups * math.prod(out) * x.itemsize)
    for start in step:
        part = x[start:start + step.step]
        product = np.matmul(rows, _columns(part, kernel, out, geometry))
        y[start:start + step.step] = product.reshape((o, part.shape[0]) + out).swapaxes(0, 1)
    return y


def conv_t(g: np.ndarray, w: np.ndarray, geometry: Geometry, size: tuple) -> np.ndarray:
    """The transposed convolution: what ``g`` ``[N, O, *out]`` gives back to an input of spatial ``size``.

    col2im: each input position's share of every output, one matrix product per chunk of images, then
    summed into place with one add per kernel tap (not per pixel).
    """
    kernel, groups, out = w.shape[2:], geometry.groups, g.shape[2:]
    n, o, c, count = g.shape[0], w.shape[0], w.shape[1] * groups, math.prod(kernel)
    # rows ordered (tap, channel): each tap's share is then one contiguous block
    by_tap = w.reshape(groups, o // groups, c // groups, count).transpose(0, 3, 2, 1)
    by_tap = by_tap.reshape(groups, count * c // groups, o // groups)
    padded_size = tuple(k + b + max(a, 0) for k, (b, a) in zip(size, geometry.padding))
    # with unit strides, the outputs widened with zeros to the padded input's size make every tap's share
    # of all the chunk's planes land on one contiguous run of the padded planes: one long add per tap, where
    # strided adds run about four times slower per entry than the products the widening costs
    flat = all(s == 1 for s in geometry.stride)
    share = padded_size if flat else out
    result = np.empty((n, c) + size, np.result_type(g, w))
    step = _chunks(n, count * c * math.prod(share) * g.itemsize, 2 if flat else 1)  # fewer, longer adds
    offsets = _tap_offsets(kernel, geometry.dilation, padded_size)
    for start in step:
        part = g[start:start + step.step]
        m = part.shape[0]
        if flat:
            part = _widened(part, padded_size)
        taps = np.matmul(by_tap, _channels_first(part, groups)).reshape((groups, count, c // groups, m) + share)
        padded = (_col2im_flat(taps, offsets, padded_size) if flat
                  else _col2im_strided(taps, kernel, geometry, padded_size))
        inside = padded[(slice(None),) * 3 + _inside(size, geometry.padding)].reshape((c, m) + size)
        result[start:start + m] = inside.swapaxes(0, 1)
    return result


def _widened(g: np.ndarray, size: tuple) -> np.ndarray:
    """``g`` ``[N, C, *out]`` with zeros after its entries along each spatial dim, up to ``size``."""
    wide = np.zeros(g.shape[:2] + size, g.dtype)
    wide[(slice(None),) * 2 + tuple(slice(0, k) for k in g.shape[2:])] = g
    return wide


def _col2im_strided(taps: np.ndarray, kernel: tuple, geometry: Geometry, padded_size: tuple) -> np.ndarray:
    """The taps' shares ``[groups, count, C/groups, m, *out]`` summed into the padded input, by strided adds."""
    out = taps.shape[4:]
    padded = np.zeros(taps.shape[:1] + taps.shape[2:4] + padded_size, taps.dtype)
    for i, tap in enumerate(np.ndindex(*kernel)):
        region = tuple(slice(t * d, t * d + s * (k - 1) + 1, s)
                       for t, d, s, k in zip(tap, geometry.dilation, geometry.stride, out))
        padded[(slice(None),) * 3 + region] += taps[:, i]
    return padded


def _tap_offsets(kernel: tuple, dilation: tuple, size: tuple) -> list:
    """How far each kernel tap is from the first, in flat positions of a plane of ``size``."""
    steps = [math.prod(size[axis + 1:]) * d for axis, d in enumerate(dilation)]
    return [sum(t * a for t, a in zip(tap, steps)) for tap in np.ndindex(*kernel)]


def _col2im_flat(taps: np.ndarray, offsets: list, padded_size: tuple) -> np.ndarray:
    """As ``_col2im_strided`` for unit strides, each share already the padded input's size (zeros past the
    outputs): a tap's shift is then one offset (of ``offsets``) in the flattened planes."""
    lead, length = taps.shape[:1] + taps.shape[2:4], math.prod(taps.shape[2:])
    # the last planes' zeros run past the end: room for them, cut off after
    padded = np.zeros((taps.shape[0], offsets[-1] + length), taps.dtype)
    shares = taps.reshape(taps.shape[:2] + (length,))
    for i, offset in enumerate(offsets):
        padded[:, offset:offset + length] += shares[:, i]
    return padded[:, :length].reshape(lead + padded_size)


def conv_w(x: np.ndarray, g: np.ndarray, geometry: Geometry, kernel: tuple) -> np.ndarray:
    """The kernel's gradient ``[O, C/groups, *kernel]`` from the input ``x`` and the output's gradient ``g``."""
    groups, o, c, out = geometry.groups, g.shape[1], x.shape[1], g.shape[2:]
    count = c // groups * math.prod(kernel)
    total = np.zeros((groups, count, o // groups), np.result_type(x, g))
    step = _chunks(x.shape[0], c * math.prod(kernel) * math.prod(out) * x.itemsize)
    for start in step:
        columns = _columns(x[start:start + step.step], kernel, out, geometry)
        grads = _channels_first(g[start:start + step.step], groups)
        # columns times grads' transpose, not the other way round: BLAS runs this order about twice as fast
        product = np.matmul(columns, grads.swapaxes(1, 2))
        total += product
    return np.ascontiguousarray(total.swapaxes(1, 2)).reshape((o, c // groups) + kernel)


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
    def jvp(ctx, input_tangent, weight_tangent, bias_tangent, *settings):
        input, weight, bias, *rest = ctx.primals
        terms = [Convolution.apply(input_tangent, weight, None, *rest)] if input_tangent is not None else []
        if weight_tangent is not None:
            terms.append(Convolution.apply(input, weight_tangent, None, *rest))
        if bias_tangent is not None:
            terms.append(bias_tangent.reshape((-1,) + (1,) * (ctx.result.dim() - 2)))
        return sum(terms[1:], terms[0])

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
