"""Convolution as one op, as in torch: im2col (a strided view, one copy) and a batched matmul per chunk of images.

Three NumPy kernels, each the adjoint of the others in one of its operands, so the gradients of each
are written with the other two and every order of derivative works:

- ``conv(x, w)``: the convolution itself;
- ``conv_t(g, w)``: its gradient with respect to ``x`` (the transposed convolution);
- ``conv_w(x, g)``: its gradient with respect to ``w``.

Each picks its layout by shape (the reasons, measured on LeNet's layers, are beside each test):

- many channels against a short output row (``_channels_last_pays``): channels last; for planes and lines
  stepping one row at a time (``_by_rows_fits``), im2col along the width alone, one product per kernel
  row (``_conv_by_rows``, ``_conv_w_by_rows``), else over the whole window;
- few channels: channels first, image by image where each image's product is at least as wide as it is
  tall (``_per_image_pays``: the products land in the output's own layout), else the batch's columns
  side by side;
- the transposed convolution with unit strides, planes or lines: by rows (``_conv_t_by_rows``); else one
  share per kernel tap.

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

from ember import _blas
from ember._ops._support import wrap
from ember._ops.copy import contiguous_format, copy_in_layout, suggested_format
from ember._ops.tied_gradients import tied_to_inputs
from ember.autograd.saved_attributes import input_sizes
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


def _columns(x: np.ndarray, kernel: tuple, out: tuple, geometry: Geometry, per_image: bool = False,
             ones: bool = False) -> np.ndarray:
    """im2col: ``[groups, C/groups * prod(kernel), N * prod(out)]``, one copy of a strided view; with
    ``per_image``, ``[N, groups, C/groups * prod(kernel), prod(out)]``, plus a last row of ones per group
    with ``ones`` (a column of biases beside the kernel's rows then adds them inside the product: no pass
    of its own over the output).

    Channels first, batch next: each group's product is then one large matrix product, and the
    arrays around it move between ``[N, C, ...]`` and ``[C, N, ...]`` in whole planes. Per image: a stack
    of products whose results are the output's own layout.
    """
    n, c, size = x.shape[0], x.shape[1], x.shape[2:]
    lead = (slice(None), slice(None))
    if any(b or a > 0 for b, a in geometry.padding):
        padded = np.zeros((n, c) + tuple(m + b + max(a, 0) for m, (b, a) in zip(size, geometry.padding)), x.dtype)
        padded[lead + _inside(size, geometry.padding)] = x
    else:
        padded = x
    if not per_image:
        padded = padded.swapaxes(0, 1)
    space = padded.strides[2:]
    taps = tuple(a * d for a, d in zip(space, geometry.dilation))
    places = tuple(a * s for a, s in zip(space, geometry.stride))
    groups = geometry.groups
    if per_image:
        windows = as_strided(padded, (n, groups, c // groups) + kernel + out,
                             (padded.strides[0], padded.strides[1] * (c // groups), padded.strides[1]) + taps + places,
                             writeable=False)
        count = c // groups * math.prod(kernel)
        if not ones:
            return windows.reshape(n, groups, count, math.prod(out))
        columns = np.empty((n, groups, count + 1, math.prod(out)), x.dtype)
        columns[:, :, :count].reshape(windows.shape)[...] = windows
        columns[:, :, count] = 1
        return columns
    windows = as_strided(padded, (c,) + kernel + (n,) + out, padded.strides[:1] + taps + padded.strides[1:2] + places,
                         writeable=False)
    return windows.reshape(groups, c // groups * math.prod(kernel), n * math.prod(out))


def _inside(size: tuple, padding: tuple) -> tuple:
    """The slices of a padded array that hold the input."""
    return tuple(slice(b, b + m) for m, (b, _) in zip(size, padding))


def _per_image_pays(o: int, out: tuple, dtype: np.dtype) -> bool:
    """Whether channels-first im2col goes image by image: when each image's product ``[O, K]`` by ``[K, L]``
    is at least as wide as it is tall (``L >= O``). Its results are then the output's planes as they lie (no
    transposing pass), and the weight's gradient sums per-image partials ``[O, K]`` no larger than the
    columns: against the batch's columns side by side, LeNet's first layer's forward takes 0.6 of the time
    (its bias inside the products), its weight's gradient 0.75. Half precision keeps the batch's columns (see
    ``_by_rows_fits``)."""
    return math.prod(out) >= o and dtype in _BLAS_FLOATS


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


def _channels_last_pays(channels: int, kernel: tuple, out: tuple, geometry: Geometry) -> bool:
    """Whether im2col copies longer contiguous runs from a channels-last input than from ``[C, N, *size]``.

    Channels last, a window's row of taps over every channel is one run (``kernel[-1] * C`` entries, the
    second LeNet layer's 80); channels first, a run is an output row (``out[-1]``, 14 there). NumPy copies
    short runs slowly: that layer's im2col, and with it its forward, is about a fifth faster channels last.
    """
    if geometry.groups != 1:
        return False
    run_last = channels * (kernel[-1] if geometry.dilation[-1] == 1 else 1)
    return run_last > (out[-1] if geometry.stride[-1] == 1 else 1)


def _channels_last_padded(x: np.ndarray, padding: tuple) -> np.ndarray:
    """``x`` ``[N, C, *size]`` as ``[N, *padded size, C]``, zeros around it."""
    size = x.shape[2:]
    padded = np.zeros(x.shape[:1] + tuple(m + b + max(a, 0) for m, (b, a) in zip(size, padding)) + x.shape[1:2],
                      x.dtype)
    padded[(slice(None),) + _inside(size, padding)] = np.moveaxis(x, 1, -1)
    return padded


def _window_rows(padded: np.ndarray, kernel: tuple, out: tuple, geometry: Geometry) -> np.ndarray:
    """im2col channels last: ``[m * prod(out), prod(kernel) * C]`` from ``padded`` ``[m, *size, C]``, one copy."""
    s = padded.strides
    space = s[1:-1]
    windows = as_strided(padded, padded.shape[:1] + out + kernel + padded.shape[-1:],
                         s[:1] + tuple(a * t for a, t in zip(space, geometry.stride))
                         + tuple(a * d for a, d in zip(space, geometry.dilation)) + s[-1:], writeable=False)
    return windows.reshape(padded.shape[0] * math.prod(out), -1)


def _conv_channels_last(x: np.ndarray, w: np.ndarray, geometry: Geometry, out: tuple,
                        bias: np.ndarray | None) -> np.ndarray:
    """``conv`` by channels-last im2col: each chunk's product ``[m * prod(out), O]`` by rows of windows."""
    n, o = x.shape[0], w.shape[0]
    padded = _channels_last_padded(x, geometry.padding)
    taps = np.moveaxis(w, 1, -1).reshape(o, -1).T  # [prod(kernel) * C, O], in the windows' order
    y = np.empty((n, o) + out, np.result_type(x, w))
    step = _chunks(n, w[0].size * math.prod(out) * x.itemsize)
    for start in step:
        product = _blas.matmul(_window_rows(padded[start:start + step.step], w.shape[2:], out, geometry), taps)
        m = product.shape[0] // math.prod(out)
        product = np.moveaxis(product.reshape((m,) + out + (o,)), -1, 1)
        _put(y[start:start + m], product, bias)
    return y


def _put(y: np.ndarray, product: np.ndarray, bias: np.ndarray | None) -> None:
    """A chunk's product put in its place ``y`` ``[m, O, *out]``, plus ``bias`` ``[O]`` on the way (no pass of
    its own)."""
    if bias is None:
        y[...] = product
    else:
        np.add(product, bias.reshape((-1,) + (1,) * (y.ndim - 2)), out=y)


def _conv_w_channels_last(x: np.ndarray, g: np.ndarray, geometry: Geometry, kernel: tuple) -> np.ndarray:
    """``conv_w`` by channels-last im2col: ``g``'s transpose times each chunk's rows of windows, summed."""
    n, o, c, out = x.shape[0], g.shape[1], x.shape[1], g.shape[2:]
    padded = _channels_last_padded(x, geometry.padding)
    grads = np.ascontiguousarray(np.moveaxis(g, 1, -1)).reshape(-1, o)  # [N * prod(out), O]
    per = math.prod(out)
    total = np.zeros((o, c * math.prod(kernel)), np.result_type(x, g))
    step = _chunks(n, c * math.prod(kernel) * per * x.itemsize)
    for start in step:
        rows = _window_rows(padded[start:start + step.step], kernel, out, geometry)
        _blas.matmul(grads[start * per:start * per + rows.shape[0]].T, rows, out=total)
    return np.ascontiguousarray(np.moveaxis(total.reshape((o,) + kernel + (c,)), -1, 1))


def _by_rows_fits(geometry: Geometry, dtype: np.dtype) -> bool:
    """Whether channels-last im2col may go along the width alone (``_row_windows``): planes of one or two dims
    whose kernel rows step one input row at a time, in single or double precision (half precision would round
    each kernel row's share, and a bias added inside the product, where torch rounds the whole product once
    and then adds the bias)."""
    return (len(geometry.stride) == 1 or (len(geometry.stride) == 2 and geometry.stride[0] == 1)) \
        and dtype in _BLAS_FLOATS


_BLAS_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _as_plane(x: np.ndarray, geometry: Geometry) -> tuple:
    """A 1-d input ``[N, C, L]`` as a plane of height 1, with its geometry; a plane as it is."""
    if x.ndim == 4:
        return x, geometry
    return x[:, :, None], Geometry((1,) + geometry.stride, ((0, 0),) + geometry.padding, (1,) + geometry.dilation,
                                   geometry.groups)


def _row_windows(x: np.ndarray, kw: int, ow: int, geometry: Geometry) -> np.ndarray:
    """im2col along the width alone, channels last: ``[H * m * ow, kw * C]`` from ``x`` ``[m, C, H, W]``, rows
    ordered (input row, image, output column), one copy. The kernel row ``i``'s windows for a run of output
    rows are then one block of rows: the convolution is ``kh`` matrix products on blocks, no ``kh`` times
    larger copy (against full im2col, a fifth of the copying for a 5 x 5 kernel, which costs more than the
    products' smaller inner dim)."""
    m, c, h, w = x.shape
    left, right = geometry.padding[1]
    padded = np.zeros((h, m, w + left + max(right, 0), c), x.dtype)
    padded[:, :, left:left + w] = x.transpose(2, 0, 3, 1)
    s = padded.strides
    windows = as_strided(padded, (h, m, ow, kw, c),
                         (s[0], s[1], s[2] * geometry.stride[1], s[2] * geometry.dilation[1], s[3]),
                         writeable=False)
    return windows.reshape(h * m * ow, kw * c)


def _row_spans(kh: int, geometry: Geometry, height: int, oh: int):
    """Per kernel row ``i`` that meets the input: ``(i, first output row, end output row, first input row)``
    (rows of the padding are left out of the products, not copied as zeros)."""
    top, dh = geometry.padding[0][0], geometry.dilation[0]
    for i in range(kh):
        first, end = max(0, top - i * dh), min(oh, height + top - i * dh)
        if end > first:
            yield i, first, end, first + i * dh - top


def _conv_by_rows(x: np.ndarray, w: np.ndarray, geometry: Geometry, out: tuple,
                  bias: np.ndarray | None) -> np.ndarray:
    """``conv`` of planes (or lines) by ``_row_windows``: per chunk of images, one product per kernel row added
    into ``[oh * m * ow, O]``, then put in place as ``[m, O, oh, ow]``."""
    plane_x, plane = _as_plane(x, geometry)
    plane_w = w.reshape(w.shape[:2] + (1,) * (4 - w.ndim) + w.shape[2:])
    n, c, height = plane_x.shape[:3]
    o, (kh, kw) = w.shape[0], plane_w.shape[2:]
    oh, ow = (1,) * (2 - len(out)) + out
    taps = np.ascontiguousarray(plane_w.transpose(2, 0, 3, 1)).reshape(kh, o, kw * c)  # per kernel row [O, kw * C]
    y = np.empty((n, o) + out, np.result_type(x, w))
    step = _chunks(n, height * ow * kw * c * x.itemsize)
    for start in step:
        part = plane_x[start:start + step.step]
        m = part.shape[0]
        rows, width = _row_windows(part, kw, ow, plane), m * ow
        # the bias goes in first, along the product's rows: added while transposing, it costs a slow broadcast
        product = np.empty((oh * width, o), y.dtype)
        product[...] = 0 if bias is None else bias
        for i, first, end, row in _row_spans(kh, plane, height, oh):
            _blas.matmul(rows[row * width:(row + end - first) * width], taps[i].T,
                         out=product[first * width:end * width])
        y[start:start + m] = product.reshape(oh, m, ow, o).transpose(1, 3, 0, 2).reshape((m, o) + out)
    return y


def _conv_w_by_rows(x: np.ndarray, g: np.ndarray, geometry: Geometry, kernel: tuple) -> np.ndarray:
    """``conv_w`` by ``_row_windows``: per kernel row, ``g``'s rows that it reached times its windows, summed
    over the chunks of images."""
    plane_x, plane = _as_plane(x, geometry)
    plane_g = g.reshape(g.shape[:2] + (1,) * (4 - g.ndim) + g.shape[2:])
    n, c, height = plane_x.shape[:3]
    o, (oh, ow) = g.shape[1], plane_g.shape[2:]
    kh, kw = (1,) * (2 - len(kernel)) + kernel
    total = np.zeros((kh, o, kw * c), np.result_type(x, g))
    step = _chunks(n, height * ow * kw * c * x.itemsize)
    for start in step:
        part = plane_x[start:start + step.step]
        m = part.shape[0]
        rows, width = _row_windows(part, kw, ow, plane), m * ow
        grads = np.ascontiguousarray(plane_g[start:start + m].transpose(1, 2, 0, 3)).reshape(o, oh * width)
        for i, first, end, row in _row_spans(kh, plane, height, oh):
            _blas.matmul(grads[:, first * width:end * width], rows[row * width:(row + end - first) * width],
                         out=total[i])
    weight = total.reshape(kh, o, kw, c).transpose(1, 3, 0, 2)
    return np.ascontiguousarray(weight).reshape((o, c) + kernel)


def conv(x: np.ndarray, w: np.ndarray, geometry: Geometry, bias: np.ndarray | None = None) -> np.ndarray:
    """``x`` ``[N, C, *size]`` convolved with ``w`` ``[O, C/groups, *kernel]``: ``[N, O, *out]``, plus
    ``bias`` ``[O]`` if given (added as each chunk's product is put in place: no pass of its own)."""
    kernel, groups = w.shape[2:], geometry.groups
    out = geometry.output_size(x.shape[2:], kernel)
    dtype = np.result_type(x, w)
    if _channels_last_pays(x.shape[1], kernel, out, geometry):
        if _by_rows_fits(geometry, dtype):
            return _conv_by_rows(x, w, geometry, out, bias)
        return _conv_channels_last(x, w, geometry, out, bias)
    n, o = x.shape[0], w.shape[0]
    y = np.empty((n, o) + out, dtype)
    rows = w.reshape(groups, o // groups, -1)
    step = _chunks(n, w[0].size * groups * math.prod(out) * x.itemsize)
    if _per_image_pays(o // groups, out, dtype):
        if bias is not None:  # LeNet's first layer: a fifth faster than adding the bias after the product
            rows = np.concatenate([rows, bias.reshape(groups, o // groups, 1).astype(rows.dtype)], axis=2)
        for start in step:
            part = x[start:start + step.step]
            place = y[start:start + part.shape[0]].reshape(part.shape[0], groups, o // groups, -1)
            columns = _columns(part, kernel, out, geometry, per_image=True, ones=bias is not None)
            _blas.matmul(rows, columns, out=place, add=False)
        return y
    for start in step:
        part = x[start:start + step.step]
        product = _blas.matmul(rows, _columns(part, kernel, out, geometry))
        product = product.reshape((o, part.shape[0]) + out).swapaxes(0, 1)
        _put(y[start:start + step.step], product, bias)
    return y


def conv_t(g: np.ndarray, w: np.ndarray, geometry: Geometry, size: tuple) -> np.ndarray:
    """The transposed convolution: what ``g`` ``[N, O, *out]`` gives back to an input of spatial ``size``.

    col2im: each input position's share of every output, one matrix product per chunk of images, then
    summed into place with one add per kernel tap (not per pixel). Planes of one or two dims with unit
    strides take ``_conv_t_by_rows``.
    """
    if len(size) <= 2 and all(s == 1 for s in geometry.stride):
        return _conv_t_by_rows(g, w, geometry, size)
    kernel, groups, out = w.shape[2:], geometry.groups, g.shape[2:]
    n, o, c, count = g.shape[0], w.shape[0], w.shape[1] * groups, math.prod(kernel)
    # rows ordered (tap, channel): each tap's share is then one contiguous block
    by_tap = w.reshape(groups, o // groups, c // groups, count).transpose(0, 3, 2, 1)
    by_tap = by_tap.reshape(groups, count * c // groups, o // groups)
    pads = geometry.padding
    result = np.empty((n, c) + size, np.result_type(g, w))
    step = _chunks(n, count * c * math.prod(out) * g.itemsize)
    for start in step:
        part = g[start:start + step.step]
        m = part.shape[0]
        taps = _blas.matmul(by_tap, _channels_first(part, groups)).reshape((groups, count, c // groups, m) + out)
        padded = np.zeros((groups, c // groups, m) + tuple(k + b + max(a, 0) for k, (b, a) in zip(size, pads)),
                          taps.dtype)
        for i, tap in enumerate(np.ndindex(*kernel)):
            region = tuple(slice(t * d, t * d + s * (k - 1) + 1, s)
                           for t, d, s, k in zip(tap, geometry.dilation, geometry.stride, out))
            padded[(slice(None),) * 3 + region] += taps[:, i]
        result[start:start + m] = _inside_images(padded, size, pads, c)
    return result


def _inside_images(padded: np.ndarray, size: tuple, padding: tuple, c: int) -> np.ndarray:
    """The input's part of padded planes ``[groups, C/groups, m, *padded size]``, as ``[m, C, *size]``."""
    inside = padded[(slice(None),) * 3 + _inside(size, padding)]
    return inside.reshape((c, padded.shape[2]) + size).swapaxes(0, 1)


def _conv_t_by_rows(g: np.ndarray, w: np.ndarray, geometry: Geometry, size: tuple) -> np.ndarray:
    """``conv_t`` with unit strides for planes of one or two dims (one is a plane of height 1).

    The product takes the kernel's columns as well as the output channels (``_flipped_row_windows``: im2col
    of ``g`` along the width alone, for the input's columns only), and gives one share per kernel row,
    summed into place by one add per kernel row (rows that land in the padding are never added). Against a
    share per tap, that is five times fewer adds for a 5 x 5 kernel and a product of a better shape for BLAS
    (more rows, a deeper inner dim) than the input's few channels as its columns.
    """
    if len(size) == 1:
        plane = Geometry((1, 1), ((0, 0),) + geometry.padding, (1,) + geometry.dilation, geometry.groups)
        return _conv_t_by_rows(g[:, :, None], w[:, :, None], plane, (1,) + size)[:, :, 0]
    (kh, kw), groups, oh = w.shape[2:], geometry.groups, g.shape[2]
    n, o, c = g.shape[0], w.shape[0], w.shape[1] * groups
    # rows (kernel row, channel), columns (kernel column from the last, output channel), per group
    by_row = w.reshape(groups, o // groups, c // groups, kh, kw)[..., ::-1].transpose(0, 3, 2, 4, 1)
    by_row = by_row.reshape(groups, kh * c // groups, kw * o // groups)
    result = np.empty((n, c) + size, np.result_type(g, w))
    step = _chunks(n, o * kw * oh * size[1] * g.itemsize)
    for start in step:
        part = g[start:start + step.step]
        m = part.shape[0]
        width = m * size[1]
        windows = _flipped_row_windows(part, kw, geometry, size[1])
        # windows times the kernel's transpose: with the windows as the transposed operand, MKL keeps about
        # 3 MB more of its own buffers (LeNet's peak memory), for no faster a product
        shares = _blas.matmul(windows.transpose(1, 0, 2), by_row.transpose(0, 2, 1))
        shares = shares.reshape(groups, oh, width, kh, c // groups)
        planes = np.zeros((size[0], width, groups, c // groups), shares.dtype)  # channels last
        for i, first, end, row in _row_spans(kh, geometry, size[0], oh):
            planes[row:row + end - first] += shares[:, first:end, :, i].transpose(1, 2, 0, 3)
        result[start:start + m] = planes.reshape(size[0], m, size[1], c).transpose(1, 3, 0, 2)
    return result


def _flipped_row_windows(g: np.ndarray, kw: int, geometry: Geometry, width: int) -> np.ndarray:
    """``[oh * m * width, groups, kw * O/groups]``: per output row, image and input column ``x``, the entries
    of ``g`` ``[m, O, oh, ow]`` that reach ``x`` through each kernel column (the last first), channels last:
    one copy whose rows are runs of ``kw * O/groups`` entries (zeros where nothing reaches ``x``)."""
    m, o, oh, ow = g.shape
    dw, left, groups = geometry.dilation[1], geometry.padding[1][0], geometry.groups
    lead = (kw - 1) * dw
    placed = np.zeros((oh, m, lead + max(ow, left + width), o), g.dtype)
    placed[:, :, lead:lead + ow] = g.transpose(2, 0, 3, 1)
    s = placed.strides
    # column x of kernel column kw - 1 - j reads g's column x + left - (kw - 1 - j) * dw, placed at x + left + j * dw
    windows = as_strided(placed[:, :, left:], (oh, m, width, groups, kw, o // groups),
                         (s[0], s[1], s[2], s[3] * (o // groups), s[2] * dw, s[3]), writeable=False)
    return windows.reshape(oh * m * width, groups, kw * o // groups)


def conv_w(x: np.ndarray, g: np.ndarray, geometry: Geometry, kernel: tuple) -> np.ndarray:
    """The kernel's gradient ``[O, C/groups, *kernel]`` from the input ``x`` and the output's gradient ``g``."""
    groups, o, c, out = geometry.groups, g.shape[1], x.shape[1], g.shape[2:]
    dtype = np.result_type(x, g)
    if _channels_last_pays(c, kernel, out, geometry):
        if _by_rows_fits(geometry, dtype):
            return _conv_w_by_rows(x, g, geometry, kernel)
        return _conv_w_channels_last(x, g, geometry, kernel)
    count = c // groups * math.prod(kernel)
    step = _chunks(x.shape[0], c * math.prod(kernel) * math.prod(out) * x.itemsize)
    if _per_image_pays(o // groups, out, dtype):
        total = np.zeros((groups, o // groups, count), dtype)
        for start in step:
            columns = _columns(x[start:start + step.step], kernel, out, geometry, per_image=True)
            grads = g[start:start + step.step].reshape(columns.shape[:2] + (o // groups, -1))
            total += _blas.matmul(grads, columns.swapaxes(2, 3)).sum(axis=0)
        return total.reshape((o, c // groups) + kernel)
    total = np.zeros((groups, count, o // groups), np.result_type(x, g))
    for start in step:
        columns = _columns(x[start:start + step.step], kernel, out, geometry)
        grads = _channels_first(g[start:start + step.step], groups)
        # columns times grads' transpose, not the other way round: BLAS runs this order about twice as fast
        _blas.matmul(columns, grads.swapaxes(1, 2), out=total)
    return np.ascontiguousarray(total.swapaxes(1, 2)).reshape((o, c // groups) + kernel)


def _spatial_sum(g):
    """The bias's gradient: ``g`` summed over every dim but the channels'."""
    axes = (0,) + tuple(range(2, g.ndim))
    if not isinstance(g, np.ndarray):
        return g.sum(dim=axes)
    if g.dtype.char in "fd" and g.flags.c_contiguous and g.size:
        # each plane's sum as a product with ones (BLAS), then the batch's: a half to a quarter of the time of
        # NumPy's sum over the batch and spatial dims at once (LeNet's layers)
        planes = g.reshape(g.shape[0] * g.shape[1], -1)
        return planes.dot(np.ones(planes.shape[1], g.dtype)).reshape(g.shape[:2]).sum(axis=0)
    return g.sum(axis=axes)


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


def _in_format_of(x: np.ndarray, w: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The convolution's result ``y`` (row-major) laid out as torch lays it out: channels last (3d for 5-d) when
    the input's or the weight's strides suggest it, else as it is. (torch's 3-d convolutions of double precision,
    which its oneDNN kernels do not take, write row-major.)"""
    if x.flags.c_contiguous and w.flags.c_contiguous or (y.ndim == 5 and y.dtype.char == "d"):
        return y  # (the usual operands: a row-major tensor suggests no other layout)
    fmt = suggested_format(x)
    if fmt is contiguous_format:
        fmt = suggested_format(w)
    return y if fmt is contiguous_format else copy_in_layout(y, y.dtype, fmt)


def _output_padding(node) -> tuple:
    """torch's ``output_padding`` of a transposed convolution: the padding after, which ember's geometry keeps
    less the output padding (0 for an ordinary convolution)."""
    if not node.transposed:
        return (0,) * len(node.geometry.stride)
    return tuple(before - after for before, after in node.geometry.padding)


class Convolution(Function):
    """``conv(input, weight) + bias``, or with ``transposed`` ``conv_t(input, weight)`` to spatial ``size``."""

    backward_name = "ConvolutionBackward0"
    torch_saved_tensors = {"input": 0, "weight": 1}
    torch_saved_values = {
        "bias_sym_sizes_opt": lambda node: input_sizes(2)(node) or (0,),
        "dilation": lambda node: node.geometry.dilation,
        "groups": lambda node: node.geometry.groups, "output_padding": lambda node: _output_padding(node),
        "padding": lambda node: tuple(before for before, _ in node.geometry.padding),
        "stride": lambda node: node.geometry.stride, "transposed": "transposed",
    }
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
        if not transposed:
            return wrap(_in_format_of(x, w, conv(x, w, geometry, None if bias is None else bias._data)))
        y = conv_t(x, w, geometry, size)
        if bias is not None:
            y += bias._data.reshape((-1,) + (1,) * (y.ndim - 2))
        return wrap(_in_format_of(x, w, y))

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
        db = _spatial_sum(grad) if needs[2] else None
        if type(grad) is not np.ndarray:
            # recorded: each depends on the input and the kernel, as torch's, whose derivative there is undefined
            dx, dw, db = (tied_to_inputs(g, ctx, 0, 1, undefined=True) for g in (dx, dw, db))
        return dx, dw, db, None, None, None


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
