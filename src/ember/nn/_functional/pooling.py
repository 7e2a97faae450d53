"""Pooling, as torch's functional forms.

Max pooling is one op (``MaxPool``): its forward takes the argmax of every window of a strided view,
its backward scatters the gradient to those positions in one ``bincount`` (or, when recording a graph,
one ``scatter_add``, so it can be differentiated again). Average pooling is a convolution with a kernel
of ones, divided by each window's count; the adaptive and Lp forms are composed of ops.

>>> import ember
>>> from ember.nn import functional as F
>>> x = ember.arange(16.).view(1, 1, 4, 4)
>>> ember.nn.functional.max_pool2d(x, 2)
tensor([[[[ 5.,  7.],
          [13., 15.]]]])
>>> ember.nn.functional.avg_pool2d(x, 2)
tensor([[[[ 2.5000,  4.5000],
          [10.5000, 12.5000]]]])
"""
from __future__ import annotations

import math

import numpy as np

from ember import _dtype

import ember
from ember._ops._support import refuse_integers, wrap
from ember._ops.convolution import Convolution, Geometry, conv
from ember._tensor import Tensor
from ember._ops.tied_gradients import named_and_tied, tied_to_inputs
from ember.autograd.function import Function
from ember.nn._functional._channels_last import (
    channels_second, channels_trailing, in_layout_of, is_channels_last, laid_out_for,
)
from ember.nn._functional.conv import as_tuple
from ember.overrides import overridable

__all__ = ["adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool1d",
           "adaptive_max_pool2d", "adaptive_max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d", "lp_pool1d",
           "lp_pool2d", "lp_pool3d", "max_pool1d", "max_pool2d", "max_pool3d", "max_unpool1d", "max_unpool2d",
           "max_unpool3d", "max_pool1d_with_indices", "max_pool2d_with_indices", "max_pool3d_with_indices",
           "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices", "adaptive_max_pool3d_with_indices"]

nn_function = overridable("ember.nn.functional")


def _pool_sizes(op: str, size: tuple, kernel: tuple, stride: tuple, padding: tuple, dilation: tuple,
                ceil_mode: bool) -> tuple:
    """The output size per dim; with ``ceil_mode`` a last window must still start inside the input or left padding."""
    out = []
    for n, k, s, p, d in zip(size, kernel, stride, padding, dilation):
        span = n + 2 * p - d * (k - 1) - 1
        m = (-(-span // s) if ceil_mode else span // s) + 1
        if ceil_mode and (m - 1) * s >= n + p:
            m -= 1
        out.append(m)
    if any(m <= 0 for m in out):
        raise RuntimeError(f"{op}: Given input size: {list(size)}. Calculated output size: {out}. Output size is "
                           "too small; use a smaller kernel or more padding")
    return tuple(out)


def _arguments(op: str, spatial: int, input, kernel_size, stride, padding, dilation=1) -> tuple:
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    kernel = as_tuple(kernel_size, spatial, op, "kernel_size")
    # (an empty list or tuple means the kernel's, as None; NumPy integers are compared as numbers, not sequences)
    unset = stride is None or isinstance(stride, (list, tuple)) and not stride
    stride = kernel if unset else as_tuple(stride, spatial, op, "stride")
    return kernel, stride, as_tuple(padding, spatial, op, "padding"), as_tuple(dilation, spatial, op, "dilation")


def _check_input(op: str, spatial: int, input: Tensor) -> None:
    if input.dim() not in (spatial + 1, spatial + 2) or 0 in input.shape[-spatial - 1:]:
        raise RuntimeError(f"{op}: Expected {spatial + 1}D or {spatial + 2}D (batch mode) tensor with optional 0 dim "
                           f"batch size for input, but got input of size: {list(input.shape)}; a non-empty "
                           f"{spatial + 1}D or {spatial + 2}D input is needed: Expected input's non-batch dimensions "
                           "to have positive length")


def _batched(input: Tensor, spatial: int) -> Tensor:
    return input if input.dim() == spatial + 2 else input.unsqueeze(0)


def _unbatched_like(input: Tensor, spatial: int, result: Tensor) -> Tensor:
    return result if input.dim() == spatial + 2 else result.squeeze(0)


# ---------------------------------------------------------------------------------------------- max pooling


class MaxPool(Function):
    """The largest entry of every window (padding never wins) and its flat position in the input's plane."""

    backward_on_arrays = True

    @staticmethod
    def forward(ctx, input, kernel, stride, padding, dilation, out):
        whole = input._data
        size, lead = whole.shape[-len(kernel):], whole.shape[:-len(kernel)]
        x = whole.reshape((math.prod(lead),) + size)  # every plane alike, batched or not
        padded = _padded(x, padding, [(m - 1) * s + d * (k - 1) + 1 - n - p
                                      for m, s, d, k, n, p in zip(out, stride, dilation, kernel, size, padding)])
        tiled = padded is x and stride == kernel and all(d == 1 for d in dilation)
        taps = _tiles(x, kernel, out) if tiled else _window_taps(padded, kernel, stride, dilation, out)
        values, tap = _window_max(taps)
        # a take with native indices: NumPy's indexing by the uint8 taps runs about three times slower
        indices = np.take(_tap_offsets(size, kernel, dilation), tap.astype(np.intp))
        indices += _window_starts(size, out, stride, padding)
        _point_empty_windows(indices, size, kernel, stride, padding, dilation, out)
        indices = indices.reshape(lead + out)
        ctx.shape, ctx.spatial = whole.shape, len(kernel)
        ctx.save_for_backward(indices)  # as torch saves its indices: freed by a backward without retain_graph
        ctx.overlapping = any(s < d * (k - 1) + 1 for s, d, k in zip(stride, dilation, kernel))
        result, index = wrap(laid_out_for(values.reshape(lead + out), whole)), wrap(laid_out_for(indices, whole))
        ctx.mark_non_differentiable(index)
        return result, index

    @staticmethod
    def backward(ctx, grad, _):
        (indices,) = ctx.saved_tensors
        gradient = scattered(grad, indices, ctx.shape, ctx.spatial, ctx.overlapping)
        if type(gradient) is not np.ndarray:  # recorded: tied to the input, as torch's (see tied_to_inputs)
            gradient = tied_to_inputs(gradient, ctx, 0)
        return gradient, None, None, None, None, None


def _window_taps(padded: np.ndarray, kernel: tuple, stride: tuple, dilation: tuple, out: tuple) -> list:
    """Per kernel tap, the entries it takes in every window: a strided view of ``padded`` ``[planes, *size]``."""
    return [padded[(slice(None),) + tuple(slice(t * d, t * d + s * (m - 1) + 1, s)
                                          for t, d, s, m in zip(tap, dilation, stride, out))]
            for tap in np.ndindex(*kernel)]


def _tiles(x: np.ndarray, kernel: tuple, out: tuple) -> np.ndarray:
    """``_window_taps`` for windows that tile the planes (stride = kernel, no padding): one copy that puts the
    taps first, ``[taps, planes, *out]``. The passes that follow then read contiguous arrays, where each
    strided view has its entries ``kernel`` apart: the copy pays for itself several times over."""
    cropped = x[(slice(None),) + tuple(slice(0, m * k) for m, k in zip(out, kernel))]
    split = cropped.reshape(x.shape[:1] + sum(((m, k) for m, k in zip(out, kernel)), ()))
    axes = tuple(range(2, split.ndim, 2)) + (0,) + tuple(range(1, split.ndim, 2))
    return np.ascontiguousarray(split.transpose(axes)).reshape((math.prod(kernel),) + x.shape[:1] + out)


def _window_max(taps) -> tuple:
    """Each window's largest entry and its tap (its number in the window), in a few passes per tap.

    As torch: the first of equal maxima wins, and a NaN wins (the window's last NaN).
    """
    values = taps[0].copy()
    for candidate in taps[1:]:
        np.maximum(values, candidate, out=values)  # NaN propagates
    # the first tap equal to the maximum is the number of taps before it that differ from it: a sum of
    # running "none equal yet" flags (masked writes, np.copyto's where=, run several times slower)
    which = np.zeros(values.shape, np.uint8 if len(taps) < 256 else np.intp)
    before = np.not_equal(taps[0], values)
    for candidate in taps[1:]:
        which += before
        before &= np.not_equal(candidate, values)
    if _dtype.kind(values.dtype) == "f" and np.isnan(values).any():
        for i, candidate in enumerate(taps):
            np.copyto(which, i, where=np.isnan(candidate))
    return values, which


def _window_starts(size: tuple, out: tuple, stride: tuple, padding: tuple) -> np.ndarray:
    """The flat position in the input's plane of each window's first tap (possibly in the padding)."""
    flat = np.zeros((), np.int64)
    for axis, (n, m, s, p) in enumerate(zip(size, out, stride, padding)):
        flat = flat * n + (np.arange(m) * s - p).reshape((-1,) + (1,) * (len(out) - axis - 1))
    return flat


def _point_empty_windows(indices: np.ndarray, size: tuple, kernel: tuple, stride: tuple, padding: tuple,
                         dilation: tuple, out: tuple) -> None:
    """A window whose taps all fall in the padding (dilated past the input) gets torch's index: the first
    position at or after its start, in steps of the dilation, that is not before the input (it may be past it).
    Its maximum is the padding's, and a flat index of another entry, as torch gives, or past the plane, whose
    gradient is then dropped."""
    empty = np.zeros(out, bool)
    first = np.zeros((), np.int64)
    for axis, (n, k, s, p, d, m) in enumerate(zip(size, kernel, stride, padding, dilation, out)):
        shape = (-1,) + (1,) * (len(out) - axis - 1)
        starts = np.arange(m) * s - p
        taps = starts[:, None] + d * np.arange(k)
        empty = empty | ~((taps >= 0) & (taps < n)).any(1).reshape(shape)
        first = first * n + np.where(starts < 0, starts + -(starts // d) * d, starts).reshape(shape)
    if empty.any():
        np.copyto(indices, np.broadcast_to(first, out), where=empty)


def _tap_offsets(size: tuple, kernel: tuple, dilation: tuple) -> np.ndarray:
    """How far each tap of a window is from its first, in flat positions of the input's plane."""
    return _window_starts(size, kernel, dilation, (0,) * len(kernel)).ravel()


class MaxPool2D(MaxPool):
    backward_name = "MaxPool2DWithIndicesBackward0"


class MaxPool3D(MaxPool):
    backward_name = "MaxPool3DWithIndicesBackward0"


class TiledMaxPool(Function):
    """Max pooling without its indices, for windows that tile the planes (stride = kernel, no padding or
    dilation; ``_tiles_planes``), as a CNN's ``MaxPool2d(2)`` pools.

    It keeps each maximum's flat position in the whole input, not the per-plane indices ``MaxPool`` returns:
    its backward is then one write of the gradient into zeros, with no per-plane offsets to add and no
    windows past the input to check for, and with no indices output the engine hands the backward no zeros
    for it.
    """

    backward_on_arrays = True

    @staticmethod
    def forward(ctx, input, kernel, out):
        whole = input._data
        size = whole.shape[-len(kernel):]
        x = whole.reshape((-1,) + size)  # every plane alike, batched or not
        values, tap = _window_max(_tiles(x, kernel, out))
        ctx.shape, ctx.kernel = whole.shape, kernel
        # each maximum's tap (a byte), not its flat position (eight): the backward turns taps into positions, so
        # the activations kept between forward and backward are smaller (LeNet's two poolings: 2 MB less)
        ctx.save_for_backward(tap)  # as torch saves its indices: freed by a backward without retain_graph
        return wrap(laid_out_for(values.reshape(whole.shape[:-len(kernel)] + out), whole))

    @staticmethod
    def backward(ctx, grad):
        (tap,) = ctx.saved_tensors
        gradient = _put_at(grad, _tile_positions(tap, ctx.shape, ctx.kernel), ctx.shape)
        if type(gradient) is not np.ndarray:  # (as MaxPool's)
            gradient = tied_to_inputs(gradient, ctx, 0)
        return gradient, None, None


def _tile_positions(tap: np.ndarray, shape: tuple, kernel: tuple) -> np.ndarray:
    """The flat positions in an input of ``shape`` of the entries that ``tap`` ``[planes, *out]`` picks in each
    window tiling it (``TiledMaxPool``)."""
    size, out = shape[-len(kernel):], tap.shape[1:]
    # a take with native indices: NumPy's indexing by the uint8 taps runs about three times slower
    positions = np.take(_tap_offsets(size, kernel, (1,) * len(kernel)), tap.astype(np.intp))
    positions += _window_starts(size, out, kernel, (0,) * len(kernel))
    positions += (np.arange(tap.shape[0]) * math.prod(size)).reshape((-1,) + (1,) * len(out))
    return positions


class TiledMaxPool2D(TiledMaxPool):
    backward_name = "MaxPool2DWithIndicesBackward0"


class TiledMaxPool3D(TiledMaxPool):
    backward_name = "MaxPool3DWithIndicesBackward0"


def _tiles_planes(size: tuple, kernel: tuple, stride: tuple, padding: tuple, dilation: tuple, out: tuple) -> bool:
    """Whether pooling windows tile the planes: side by side, none in padding or past the input (``TiledMaxPool``)."""
    return stride == kernel and not any(padding) and all(d == 1 for d in dilation) \
        and all(m * k <= n for m, k, n in zip(out, kernel, size))


def _put_at(grad, positions: np.ndarray, shape: tuple):
    """``grad`` written into zeros of ``shape`` at flat ``positions`` (all different); with ``grad`` a tensor
    (a graph being recorded), as a ``scatter_add``, which can be differentiated again."""
    if isinstance(grad, np.ndarray):
        total = np.zeros(math.prod(shape), grad.dtype)
        total[positions.ravel()] = grad.ravel()
        return total.reshape(shape)
    zeros = ember.zeros(math.prod(shape), dtype=grad.dtype)
    return zeros.scatter_add(0, ember.tensor(positions.ravel()), grad.reshape(-1)).view(shape)


def _padded(x: np.ndarray, padding: tuple, extra: list) -> np.ndarray:
    """``x`` with ``-inf`` (the dtype's lowest) on both sides, plus ``extra`` after for ceil mode's last windows."""
    if not any(padding) and not any(e > 0 for e in extra):
        return x
    low = -np.inf if _dtype.kind(x.dtype) == "f" else np.iinfo(x.dtype).min
    shape = x.shape[:1] + tuple(n + 2 * p + max(e, 0) for n, p, e in zip(x.shape[1:], padding, extra))
    padded = np.full(shape, low, x.dtype)
    padded[(slice(None),) + tuple(slice(p, p + n) for p, n in zip(padding, x.shape[1:]))] = x
    return padded


def scattered(grad, indices: np.ndarray, shape: tuple, spatial: int, overlapping: bool = True):
    """``grad`` summed into zeros of ``shape`` at ``indices``: flat positions in its planes of ``spatial`` dims.

    Windows that do not overlap never share an index: their gradients are then written, not summed.
    """
    planes, plane = math.prod(shape[:-spatial]), math.prod(shape[-spatial:])
    if indices.size and indices.max() >= plane:  # windows past the input (see _point_empty_windows)
        grad = grad * ember.tensor(indices < plane) if isinstance(grad, Tensor) else grad * (indices < plane)
        indices = np.minimum(indices, plane - 1)
    if isinstance(grad, np.ndarray):
        per_plane = math.prod(indices.shape[-spatial:])
        where = (indices.reshape(planes, per_plane) + np.arange(planes)[:, None] * plane).ravel()
        if not overlapping:
            total = np.zeros(planes * plane, grad.dtype)
            total[where] = grad.ravel()
            return total.reshape(shape)
        total = np.bincount(where, weights=grad.ravel(), minlength=planes * plane)
        return total.astype(grad.dtype, copy=False).reshape(shape)
    per_plane = math.prod(indices.shape[-spatial:])
    index = ember.tensor(indices.reshape(planes, per_plane))
    zeros = ember.zeros(planes, plane, dtype=grad.dtype)
    return zeros.scatter_add(1, index, grad.reshape(planes, per_plane)).view(shape)


def _check_window(op: str, spatial: int, input: Tensor, kernel: tuple, stride: tuple, padding: tuple,
                  dilation: tuple = ()) -> None:
    """A pooling window's sizes must be positive, its padding neither negative nor more than half the kernel; as
    torch, these are checked before the input's shape."""
    for name, values in (("kernel_size", kernel), ("stride", stride), ("dilation", dilation)):
        if values and min(values) < 1:
            raise RuntimeError(f"{op}: {name} must be greater than zero, but got {_shown(values)}")
    if min(padding) < 0:
        raise RuntimeError(f"{op}: pad must be non-negative, but got pad: {_shown(padding)}")
    if any(2 * p > k for p, k in zip(padding, kernel)):
        raise RuntimeError(f"{op}: pad should be at most half of effective kernel size, but got pad={_shown(padding)} "
                           f"and kernel_size={_shown(kernel)}")
    _check_input(op, spatial, input)


def _shown(values: tuple) -> str:
    """One value as a number (a 1-d window's), several as a list."""
    return str(values[0]) if len(values) == 1 else str(list(values))


def _max_pool(op: str, spatial: int, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices):
    kernel, stride, padding, dilation = _arguments(op, spatial, input, kernel_size, stride, padding, dilation)
    _check_window(op, spatial, input, kernel, stride, padding, dilation)
    if input._data.dtype.kind == "c":  # complex numbers have no order: NumPy's (real part first) would be a wrong answer
        raise NotImplementedError(f"\"{op}\" not implemented for '{_dtype.scalar_type_name(input._data.dtype)}'; take "
                                  "the maximum of the real part or of abs() instead")
    if input.dtype == ember.bool:
        refuse_integers(op, input)
    size = tuple(input.shape[-spatial:])
    out = _pool_sizes(op, size, kernel, stride, padding, dilation, ceil_mode)
    if not return_indices and _tiles_planes(size, kernel, stride, padding, dilation, out):
        return (TiledMaxPool3D if spatial == 3 else TiledMaxPool2D).apply(input, kernel, out)
    values, indices = (MaxPool3D if spatial == 3 else MaxPool2D).apply(input, kernel, stride, padding, dilation, out)
    return (values, indices) if return_indices else values


@nn_function
def max_pool1d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    """The largest entry of each window of ``input`` ``[N, C, L]`` (and its index along ``L``).

    As in torch, it is ``max_pool2d`` over a plane of height 1.
    """
    kernel, stride, padding, dilation = _arguments("max_pool1d", 1, input, kernel_size, stride, padding, dilation)
    _check_window("max_pool1d", 1, input, kernel, stride, padding, dilation)
    _pool_sizes("max_pool1d", tuple(input.shape[-1:]), kernel, stride, padding, dilation, ceil_mode)  # in 1-d terms
    if not return_indices:  # (torch's path with indices is max_pool2d's, which takes integers)
        refuse_integers("max_pool1d_impl", input)
    result = _max_pool("max_pool1d", 2, input.unsqueeze(-2), (1,) + kernel, (1,) + stride, (0,) + padding,
                       (1,) + dilation, ceil_mode, return_indices)
    return tuple(r.squeeze(-2) for r in result) if return_indices else result.squeeze(-2)


@nn_function
def max_pool2d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    """The largest entry of each window of ``input`` ``[N, C, H, W]`` (and its flat index ``h * W + w``).

    >>> ember.nn.functional.max_pool2d(ember.tensor([[[[1., 3.], [2., 0.]]]]), 2, return_indices=True)[1]
    tensor([[[[1]]]])
    """
    return _max_pool("max_pool2d", 2, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


@nn_function
def max_pool3d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    """The largest entry of each window of ``input`` ``[N, C, D, H, W]`` (and its flat index in the volume)."""
    return _max_pool("max_pool3d", 3, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


@nn_function
def max_pool1d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
                            return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """``max_pool1d`` returning (values, indices) whatever ``return_indices`` says."""
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices=True)


@nn_function
def max_pool2d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
                            return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """``max_pool2d`` returning (values, indices) whatever ``return_indices`` says."""
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices=True)


@nn_function
def max_pool3d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
                            return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """``max_pool3d`` returning (values, indices) whatever ``return_indices`` says."""
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices=True)


def _requested_unpool_size(output_size, default: tuple, stride: tuple) -> tuple:
    """An ``output_size`` given to max_unpool: its spatial sizes (a leading ``N, C`` dropped), each of which must
    lie strictly within a stride of the default size, as pooling with that stride could have read it."""
    spatial = len(default)
    if len(output_size) == spatial + 2:
        output_size = output_size[2:]
    if len(output_size) != spatial:
        raise ValueError(f"output_size should be a sequence containing {spatial} or {spatial + 2} elements, but it "
                         f"has a length of '{len(output_size)}'")
    for dim, (want, usual, step) in enumerate(zip(output_size, default, stride)):
        if not usual - step < want < usual + step:
            raise ValueError(f'invalid output_size "{output_size}" (dim {dim} must be between {usual - step} and '
                             f'{usual + step})')
    return tuple(int(n) for n in output_size)


def _max_unpool(op: str, spatial: int, input: Tensor, indices: Tensor, kernel_size, stride, padding,
                output_size) -> Tensor:
    """Each value of ``input`` put at its flat index (``indices``, as max pooling gave them) in a zero volume."""
    kernel, stride, padding, _ = _arguments(op, spatial, input, kernel_size, stride, padding)
    _check_input(op, spatial, input)
    if indices.dtype != ember.int64:
        shown = "" if spatial == 3 else f" but got: {_dtype.scalar_type_name(indices._data.dtype)}"
        raise RuntimeError(f"elements in indices should be type int64{shown}")
    refuse_integers("max_unpool3d" if spatial == 3 else "max_unpool2d", input)  # (1-d runs torch's 2-d kernel)
    if indices.shape != input.shape:
        raise RuntimeError(f"{op}: Expected shape of indices to be same as that of the input tensor "
                           f"({list(input.shape)}) but got indices tensor with shape: {list(indices.shape)}")
    size = tuple((n - 1) * s - 2 * p + k for n, s, p, k in zip(input.shape[-spatial:], stride, padding, kernel))
    if output_size is not None:
        size = _requested_unpool_size(output_size, size, stride)
    x = _batched(input, spatial)
    volume = math.prod(size)
    flat = _batched(indices, spatial).flatten(2)
    if flat.numel() and (int(flat.min()) < 0 or int(flat.max()) >= volume):
        raise RuntimeError(f"{op}: Found an invalid max index: {int(flat.max())} (output volumes are of "
                           f"size {'x'.join(map(str, size))})")
    zeros = ember.zeros(tuple(x.shape[:2]) + (volume,), dtype=x.dtype)
    result = zeros.scatter(2, flat, x.flatten(2)).view(*x.shape[:2], *size)
    return _unbatched_like(input, spatial, result)


@nn_function
def max_unpool1d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0, output_size=None) -> Tensor:
    """``max_pool1d``'s partial inverse: each value put back at its index along ``L``, zeros elsewhere."""
    return _max_unpool("max_unpool1d", 1, input, indices, kernel_size, stride, padding, output_size)


@nn_function
def max_unpool2d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0, output_size=None) -> Tensor:
    """``max_pool2d``'s partial inverse: each value put back at its index, zeros elsewhere.

    >>> y, i = ember.nn.functional.max_pool2d(ember.tensor([[[[1., 3.], [2., 0.]]]]), 2, return_indices=True)
    >>> ember.nn.functional.max_unpool2d(y, i, 2)
    tensor([[[[0., 3.],
              [0., 0.]]]])
    """
    return _max_unpool("max_unpool2d", 2, input, indices, kernel_size, stride, padding, output_size)


@nn_function
def max_unpool3d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0, output_size=None) -> Tensor:
    """``max_pool3d``'s partial inverse: each value put back at its flat index in the volume, zeros elsewhere."""
    return _max_unpool("max_unpool3d", 3, input, indices, kernel_size, stride, padding, output_size)


# ---------------------------------------------------------------------------------------------- average pooling


def _avg_pool(op: str, spatial: int, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
              divisor_override) -> Tensor:
    if isinstance(input, Tensor) and input.dtype in (ember.float16, ember.bfloat16):
        # torch sums and divides in single precision, rounding once (its 3-d kernel has no half precision: ember
        # computes that one the same way)
        return _avg_pool(op, spatial, input.float(), kernel_size, stride, padding, ceil_mode, count_include_pad,
                         divisor_override).to(input.dtype)
    kernel, stride, padding, _ = _arguments(op, spatial, input, kernel_size, stride, padding)
    _check_window(op, spatial, input, kernel, stride, padding)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError(f"{op}: divisor must be not zero")
    if input._data.dtype != np.int64:  # torch averages int64 too, no other integers
        refuse_integers("avg_pool3d_out_frame" if spatial == 3 else "avg_pool2d", input, complex_too=True)
    size = tuple(input.shape[-spatial:])
    if spatial == 3 and any(n < k for n, k in zip(size, kernel)):  # torch's 3-d kernel, whatever the padding
        raise RuntimeError("input image (T: {} H: {} W: {}) smaller than kernel size (kT: {} kH: {} kW: {})"
                           .format(*size, *kernel))
    out = _pool_sizes(op, size, kernel, stride, padding, (1,) * spatial, ceil_mode)
    after = [(m - 1) * s + k - n - p for m, s, k, n, p in zip(out, stride, kernel, size, padding)]
    geometry = Geometry(stride, tuple(zip(padding, after)), (1,) * spatial, 1)
    if input._data.dtype == np.int64:
        return _int_avg_pool(input, kernel, geometry, out, count_include_pad, divisor_override)
    ones = ember.ones((1, 1) + kernel, dtype=input.dtype)
    planes = input.reshape((-1, 1) + size)
    sums = Convolution.apply(planes, ones, None, geometry, False, None).view(tuple(input.shape[:-spatial]) + out)
    if spatial == 2:  # as torch's 2-d kernel, channels last for such an input (its 3-d kernel's result is row-major)
        sums = in_layout_of(sums, input)  # (the quotient takes the sums' layout)
    means = sums / (divisor_override or _window_counts(size, kernel, geometry, count_include_pad, input._data.dtype))
    return named_and_tied(means, f"AvgPool{spatial}DBackward0", input)


def _int_avg_pool(input: Tensor, kernel: tuple, geometry: Geometry, out: tuple, count_include_pad: bool,
                  divisor_override: int | None) -> Tensor:
    """Integer means as torch's: exact sums in int64, divided with the quotient truncated toward zero."""
    size = tuple(input.shape[-len(kernel):])
    sums = conv(input._data.reshape((-1, 1) + size), np.ones((1, 1) + kernel, np.int64), geometry)
    counts = divisor_override or _window_counts(size, kernel, geometry, count_include_pad, np.int64)._data
    means = np.sign(sums) * (np.abs(sums) // np.abs(counts)) * np.sign(counts)
    return wrap(means.reshape(tuple(input.shape[:-len(kernel)]) + out))


def _window_counts(size: tuple, kernel: tuple, geometry: Geometry, count_include_pad: bool, dtype) -> Tensor:
    """How many entries each window averages: the input's, with the padding's too if ``count_include_pad``.

    Ceil mode's extra positions past the padding never count.
    """
    pads = geometry.padding
    if count_include_pad:
        region = np.ones((1, 1) + tuple(n + 2 * b for n, (b, _) in zip(size, pads)), dtype)
        inner = Geometry(geometry.stride, tuple((0, a - b) for b, a in pads), geometry.dilation, 1)
        counts = conv(region, np.ones((1, 1) + kernel, dtype), inner)
    else:
        counts = conv(np.ones((1, 1) + size, dtype), np.ones((1, 1) + kernel, dtype), geometry)
    return ember.tensor(counts[0, 0])


@nn_function
def avg_pool1d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True) -> Tensor:
    """The mean of each window of ``input`` ``[N, C, L]``.

    As in torch, it is ``avg_pool2d`` over a plane of height 1 (so its node is a ``SqueezeBackward1``).
    """
    kernel, stride, padding, _ = _arguments("avg_pool1d", 1, input, kernel_size, stride, padding)
    _check_window("avg_pool1d", 1, input, kernel, stride, padding)
    return _avg_pool("avg_pool1d", 2, input.unsqueeze(-2), (1,) + kernel, (1,) + stride, (0,) + padding, ceil_mode,
                     count_include_pad, None).squeeze(-2)


@nn_function
def avg_pool2d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: int | None = None) -> Tensor:
    """The mean of each window of ``input`` ``[N, C, H, W]`` (or its sum over ``divisor_override``)."""
    return _avg_pool("avg_pool2d", 2, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override)


@nn_function
def avg_pool3d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: int | None = None) -> Tensor:
    """The mean of each window of ``input`` ``[N, C, D, H, W]``."""
    return _avg_pool("avg_pool3d", 3, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override)


def _lp_pool(op: str, spatial: int, average, input: Tensor, norm_type: float, kernel_size, stride,
             ceil_mode: bool) -> Tensor:
    kernel = as_tuple(kernel_size, spatial, op, "kernel_size")
    if norm_type in (math.inf, -math.inf):  # the limits: each window's largest (smallest) magnitude, as torch's
        sign = 1 if norm_type > 0 else -1
        largest = {1: max_pool1d, 2: max_pool2d, 3: max_pool3d}[spatial]
        return sign * largest(sign * input.abs(), kernel, stride, 0, 1, ceil_mode)
    means = average(input.pow(norm_type), kernel, stride, 0, ceil_mode)
    return (ember.sign(means) * ember.relu(ember.abs(means))).mul(math.prod(kernel)).pow(1.0 / norm_type)


@nn_function
def lp_pool1d(input: Tensor, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False) -> Tensor:
    """``(sum of x ** p over each window of [N, C, L]) ** (1 / p)``, as torch computes it."""
    return _lp_pool("lp_pool1d", 1, avg_pool1d, input, norm_type, kernel_size, stride, ceil_mode)


@nn_function
def lp_pool2d(input: Tensor, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False) -> Tensor:
    """``(sum of x ** p over each window) ** (1 / p)``, as torch computes it (a negative sum counts as 0)."""
    return _lp_pool("lp_pool2d", 2, avg_pool2d, input, norm_type, kernel_size, stride, ceil_mode)


@nn_function
def lp_pool3d(input: Tensor, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False) -> Tensor:
    """``(sum of x ** p over each window of [N, C, D, H, W]) ** (1 / p)``, as torch computes it."""
    return _lp_pool("lp_pool3d", 3, avg_pool3d, input, norm_type, kernel_size, stride, ceil_mode)


# ---------------------------------------------------------------------------------------------- adaptive pooling


def _bounds(size: int, out: int) -> tuple:
    """Where each of ``out`` adaptive windows over ``size`` entries starts and ends (torch's floor and ceil)."""
    i = np.arange(out)
    return (i * size) // out, -((-(i + 1) * size) // out)


def _adaptive_sizes(op: str, spatial: int, input, output_size) -> tuple:
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    if spatial > 1 and input.dim() < spatial + 1:  # (as torch, whose output_size of None takes the input's sizes)
        raise ValueError(f"{op}: Input dimension should be at least {spatial + 1}, but got input of size: "
                         f"{list(input.shape)}")
    if input.dim() not in (spatial + 1, spatial + 2) or 0 in input.shape[-spatial:]:
        raise RuntimeError(f"{op}: Expected {spatial + 1}D or {spatial + 2}D tensor with non-zero spatial sizes, "
                           f"but got input of size: {list(input.shape)}")
    sizes = tuple(output_size) if isinstance(output_size, (tuple, list)) else (output_size,) * spatial
    if len(sizes) != spatial:
        raise RuntimeError(f"{op}: output_size must be {spatial} int{'s' if spatial > 1 else ''}, but got "
                           f"{list(sizes)}")
    sizes = tuple(n if m is None else int(m) for m, n in zip(sizes, input.shape[-spatial:]))
    if min(sizes) < 0:
        raise RuntimeError(f"{op}: elements of output_size must be greater than or equal to 0 but received "
                           f"{{{', '.join(map(str, sizes))}}}")
    return sizes


def _empty_pool(input: Tensor, spatial: int, sizes: tuple) -> Tensor:
    """The pool of a 0-sized output: no entries, still in the input's graph."""
    lead = tuple(input.shape[:input.dim() - spatial])
    return input.flatten(len(lead))[..., :0].reshape(lead + sizes)


def _adaptive_avg(op: str, spatial: int, input, output_size) -> Tensor:
    """Along each dim in turn, the mean of each window: its entries gathered, summed and divided by their count.

    (Not a product with an averaging matrix: its zeros would carry an inf or nan into the other windows.)
    """
    sizes = _adaptive_sizes(op, spatial, input, output_size)
    if 0 in sizes:
        return _empty_pool(input, spatial, sizes)
    if isinstance(input, Tensor) and input._data.dtype.kind in "biu" and all(n == 1 for n in sizes):
        raise RuntimeError(f"{op}: mean(): could not infer output dtype. Input dtype must be either a floating point "
                           f"or complex dtype. Got: {input.dtype}; convert it first, e.g. input.float()")
    refuse_integers("adaptive_avg_pool3d_cpu" if spatial == 3 else "adaptive_avg_pool2d", input,
                    complex_too=True)
    if spatial == 2 and input.dim() == 4 and is_channels_last(input):
        # as torch's 2-d kernel: a channels-last result, pooled in that order (its 3-d kernel's result is row-major)
        pooled = channels_second(_adaptive_means(channels_trailing(input), 1, 1, sizes))
        return named_and_tied(pooled, "AdaptiveAvgPool2DBackward0", input)
    return _adaptive_means(input, input.dim() - spatial, 0, sizes)


def _adaptive_means(input: Tensor, lead: int, trailing: int, sizes: tuple) -> Tensor:
    """``_adaptive_avg`` of ``input`` whose spatial dims follow ``lead`` dims and precede ``trailing`` ones."""
    spatial = len(sizes)
    spatial_sizes = tuple(input.shape[lead:lead + spatial])
    rest = tuple(input.shape[lead + spatial:])
    if all(out == 1 for out in sizes):  # a global average pool, as torch computes it
        return input.mean(tuple(range(lead, lead + spatial)), keepdim=True)
    node = f"AdaptiveAvgPool{spatial}DBackward0"  # (spatial is 2 or 3 here: the 1-d pool is a view of the 2-d one)
    if all(n % out == 0 for n, out in zip(spatial_sizes, sizes)):
        # equal windows that tile every dim: one mean over all their entries at once
        tiles = [size for n, out in zip(spatial_sizes, sizes) for size in (out, n // out)]
        windows = input.reshape(tuple(input.shape[:lead]) + tuple(tiles) + rest)
        return named_and_tied(windows.mean(tuple(lead + 2 * d + 1 for d in range(spatial))), node, input)
    # half precision: every dim in single precision, rounded once at the end, as torch's kernel
    result = input.float() if input.dtype in (ember.float16, ember.bfloat16) else input
    for axis, out in enumerate(sizes):
        result = _window_means(result, lead + axis, out)
    return named_and_tied(result.to(input.dtype), node, input)


def _window_means(x: Tensor, dim: int, out: int) -> Tensor:
    """The means of ``out`` adaptive windows along ``dim`` of ``x``."""
    n = x.shape[dim]
    if n % out == 0:  # equal windows that tile the dim: a view of them, then their means
        return x.unflatten(dim, (out, n // out)).mean(dim + 1)
    rows, span = _window_indices(n, out)
    start, end = _bounds(n, out)
    windows = x.index_select(dim, ember.tensor(rows.reshape(-1))).unflatten(dim, (out, span))
    after = (1,) * (x.dim() - dim - 1)
    inside = ember.tensor((np.arange(span) < (end - start)[:, None]).reshape((out, span) + after))
    # the padding (a window's last entry repeated) is left out by a selection, not multiplied by 0
    total = ember.where(inside, windows, ember.zeros((), dtype=x.dtype)).sum(dim + 1)
    return total / ember.tensor((end - start).reshape((out,) + after), dtype=x.dtype)


@nn_function
def adaptive_avg_pool1d(input: Tensor, output_size) -> Tensor:
    """Means over ``output_size`` windows that cover ``input``'s last dim as evenly as possible.

    As in torch, it is ``adaptive_avg_pool2d`` over a plane of height 1.
    """
    (size,) = _adaptive_sizes("adaptive_avg_pool1d", 1, input, output_size)
    return _adaptive_avg("adaptive_avg_pool1d", 2, input.unsqueeze(-2), (1, size)).squeeze(-2)


@nn_function
def adaptive_avg_pool2d(input: Tensor, output_size) -> Tensor:
    """Means over an ``output_size`` grid of windows covering ``input``'s last two dims.

    >>> ember.nn.functional.adaptive_avg_pool2d(ember.arange(9.).view(1, 3, 3), 1)
    tensor([[[4.]]])
    """
    return _adaptive_avg("adaptive_avg_pool2d", 2, input, output_size)


@nn_function
def adaptive_avg_pool3d(input: Tensor, output_size) -> Tensor:
    """Means over an ``output_size`` grid of windows covering ``input``'s last three dims."""
    return _adaptive_avg("adaptive_avg_pool3d", 3, input, output_size)


def _adaptive_max(op: str, spatial: int, input, output_size, return_indices: bool):
    """The largest entry in each of an ``output_size`` grid of windows, and its flat index in the volume."""
    refuse_integers("adaptive_max_pool3d_cpu" if spatial == 3 else "adaptive_max_pool2d", input)
    out = _adaptive_sizes(op, spatial, input, output_size)
    if 0 in out:
        values = _empty_pool(input, spatial, out)
        return (values, ember.zeros(values.shape, dtype=ember.int64)) if return_indices else values
    spatial_sizes = tuple(input.shape[-spatial:])
    windows_per_dim = [_window_indices(n, m) for n, m in zip(spatial_sizes, out)]
    spans = tuple(span for _, span in windows_per_dim)
    # input[..., out_0, span_0, out_1, span_1, ...]: windows padded by repeating their last entry (harmless to a max)
    keys = []
    for d, (rows, _) in enumerate(windows_per_dim):
        shape = [1] * (2 * spatial)
        shape[2 * d:2 * d + 2] = rows.shape
        keys.append(ember.tensor(rows.reshape(shape)))
    windows = input[(Ellipsis, *keys)]
    lead = input.dim() - spatial
    order = list(range(lead)) + [lead + 2 * d for d in range(spatial)] + [lead + 2 * d + 1 for d in range(spatial)]
    windows = windows.permute(order).reshape(tuple(input.shape[:lead]) + out + (math.prod(spans),))
    values, taps = windows.max(-1)
    if spatial == 2:  # as torch's 2-d kernel, channels last for such an input (its 3-d kernel's result is row-major)
        values = in_layout_of(values, input)
    values, taps = named_and_tied((values, taps), f"AdaptiveMaxPool{spatial}DBackward0", input)
    if not return_indices:
        return values
    offsets = np.unravel_index(taps.numpy(), spans)
    index = np.zeros(taps.shape, np.int64)
    for d, ((rows, _), offset) in enumerate(zip(windows_per_dim, offsets)):
        position = np.arange(out[d]).reshape([-1 if e == d else 1 for e in range(spatial)])
        index = index * spatial_sizes[d] + rows[position, offset]
    return values, wrap(laid_out_for(index, input._data) if spatial == 2 else index)


@nn_function
def adaptive_max_pool1d(input: Tensor, output_size, return_indices: bool = False):
    """The largest entry in each of ``output_size`` windows covering ``input``'s last dim (and its index).

    As in torch, it is ``adaptive_max_pool2d`` over a plane of height 1.
    """
    (size,) = _adaptive_sizes("adaptive_max_pool1d", 1, input, output_size)
    result = _adaptive_max("adaptive_max_pool1d", 2, input.unsqueeze(-2), (1, size), return_indices)
    return tuple(r.squeeze(-2) for r in result) if return_indices else result.squeeze(-2)


@nn_function
def adaptive_max_pool2d(input: Tensor, output_size, return_indices: bool = False):
    """The largest entry in each of an ``output_size`` grid of windows (and its flat index ``h * W + w``)."""
    return _adaptive_max("adaptive_max_pool2d", 2, input, output_size, return_indices)


@nn_function
def adaptive_max_pool3d(input: Tensor, output_size, return_indices: bool = False):
    """The largest entry in each of an ``output_size`` grid of windows over the last three dims (and its index)."""
    return _adaptive_max("adaptive_max_pool3d", 3, input, output_size, return_indices)


@nn_function
def adaptive_max_pool1d_with_indices(input: Tensor, output_size, return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """``adaptive_max_pool1d`` returning (values, indices) whatever ``return_indices`` says."""
    return adaptive_max_pool1d(input, output_size, return_indices=True)


@nn_function
def adaptive_max_pool2d_with_indices(input: Tensor, output_size, return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """``adaptive_max_pool2d`` returning (values, indices) whatever ``return_indices`` says."""
    return adaptive_max_pool2d(input, output_size, return_indices=True)


@nn_function
def adaptive_max_pool3d_with_indices(input: Tensor, output_size, return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """``adaptive_max_pool3d`` returning (values, indices) whatever ``return_indices`` says."""
    return adaptive_max_pool3d(input, output_size, return_indices=True)


def _window_indices(size: int, out: int) -> tuple:
    """Each window's indices, ``[out, span]``, the shorter ones padded with their last index; and ``span``."""
    start, end = _bounds(size, out)
    span = int((end - start).max())
    return np.minimum(start[:, None] + np.arange(span), end[:, None] - 1), span
