"""Resizing of ``nn.functional``: ``interpolate`` and the pixel (un)shuffles.

Every mode is composed of ops, so its gradient needs no formula of its own. Each spatial dim is resized
on its own (the modes are separable): ``nearest`` picks one source index per output index, ``linear``
mixes the two neighbours of a source coordinate by their distance (from 4,096 finite elements, as one matrix product with the interpolation matrix), ``bicubic`` the four nearest by Keys'
cubic kernel (``a = -0.75``, as torch's), ``area`` averages windows (adaptive average pooling). Source coordinates follow torch's: the index times ``in / out`` (or ``1 / scale_factor``
when one is given), at pixel centres (``+ 0.5``) unless ``align_corners``, computed in the input's
precision (nearest indices always in single precision, as torch's) so that the same indices come out.
``antialias`` (and ``lanczos``, which needs it) weighs, for each output pixel, every source pixel under its
filter, stretched by the scale when shrinking. Bytes are resized in fixed point, as torch's byte kernels are.

>>> import ember
>>> x = ember.tensor([[[1., 2., 4.]]])
>>> ember.nn.functional.interpolate(x, scale_factor=2, mode="nearest")
tensor([[[1., 1., 2., 2., 4., 4.]]])
>>> ember.nn.functional.interpolate(x, size=5, mode="linear", align_corners=True)
tensor([[[1.0000, 1.5000, 2.0000, 3.0000, 4.0000]]])
"""
from __future__ import annotations

import math
import warnings

import numpy as np

import ember
from ember import _dtype
from ember._ops._support import refuse_integers, user_stacklevel, wrap
from ember._tensor import Tensor
from ember.autograd._node_names import named_node
from ember.nn._functional._channels_last import channels_second, channels_trailing, is_channels_last, trailing_dim
from ember.nn._functional.pooling import adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d
from ember.nn._functional.sampling import _cubic_weights
from ember.overrides import overridable

__all__ = ["interpolate", "pixel_shuffle", "pixel_unshuffle", "upsample", "upsample_bilinear", "upsample_nearest"]

nn_function = overridable("ember.nn.functional")

_LINEAR = {"linear": 1, "bilinear": 2, "trilinear": 3}  # the spatial dims each linear mode works on
_INTERPOLATING = {**_LINEAR, "bicubic": 2, "lanczos": 2}  # the modes that take align_corners, and their spatial dims
_MODES = ("nearest", "nearest-exact", "area", *_LINEAR, "bicubic", "lanczos")
_ANTIALIAS_TAPS = {"bilinear": 2, "bicubic": 4, "lanczos": 6}  # the filter's width in input pixels, at scale 1
_AREA = {1: adaptive_avg_pool1d, 2: adaptive_avg_pool2d, 3: adaptive_avg_pool3d}


def _output_sizes(input: Tensor, spatial: int, size, scale_factor) -> tuple[list[int], list[float | None]]:
    """The output size of every spatial dim, and the scale factor given for it (None when ``size`` was)."""
    if size is None and scale_factor is None:
        raise ValueError("interpolate: either size or scale_factor should be defined")
    if size is not None and scale_factor is not None:
        raise ValueError("interpolate: only one of size or scale_factor should be defined")
    given = size if size is not None else scale_factor
    values = list(given) if isinstance(given, (tuple, list)) else [given] * spatial
    if len(values) != spatial:
        if size is not None:
            subject, what, shown, form = "output", "output size", tuple(given), "o"
        else:
            subject, what, shown, form = "scale_factor", "scale_factor", f"shape {tuple(given)}", "s"
        raise ValueError(f"interpolate: Input and {subject} must have the same number of spatial dimensions, but got "
                         f"input with spatial dimensions of {list(input.shape[2:])} and {what} of {shown}. Please "
                         f"provide input tensor in (N, C, d1, d2, ...,dK) format and {what} in ({form}1, {form}2, "
                         f"...,{form}K) format.")
    if size is not None:
        if not all(isinstance(v, (int, np.integer)) or isinstance(v, Tensor) and not v.is_floating_point()
                   for v in values):
            raise TypeError(f"expected size to be one of int or Tuple[int] or Tuple[int, int] or Tuple[int, int, int], "
                            f"but got size with types {[type(v) for v in values]}")
        return [int(v) for v in values], [None] * spatial
    return [math.floor(n * float(s)) for n, s in zip(input.shape[2:], values)], [float(s) for s in values]


def _scale(n_in: int, n_out: int, factor: float | None, align_corners: bool, dtype) -> np.floating:
    """Source units per output unit along one dim."""
    if align_corners:
        return dtype.type(n_in - 1) / dtype.type(n_out - 1) if n_out > 1 else dtype.type(0.0)
    return dtype.type(1.0 / factor) if factor else dtype.type(n_in) / dtype.type(n_out)


def _source_coordinates(n_out: int, scale: np.floating, align_corners: bool) -> np.ndarray:
    """Each output index's coordinate in the input, in the scale's precision. torch multiplies the scale by
    ``index + 0.5`` in double (an integer plus a double literal) and rounds the result once to the scale's
    precision: so does this, so that the same neighbours and weights come out. Aligned corners take the scale
    times the index in the scale's precision."""
    if align_corners:
        return np.arange(n_out, dtype=scale.dtype) * scale
    return ((np.arange(n_out) + 0.5) * np.float64(scale) - 0.5).astype(scale.dtype)


def _nearest_indices(n_in: int, n_out: int, factor: float | None, exact: bool, dtype) -> np.ndarray:
    scale = _scale(n_in, n_out, factor, False, dtype)
    steps = np.arange(n_out, dtype=dtype) + (dtype.type(0.5) if exact else dtype.type(0.0))
    return np.minimum(np.floor(steps * scale).astype(np.int64), n_in - 1)


def _resize_nearest(x: Tensor, dim: int, n_out: int, factor: float | None, exact: bool) -> Tensor:
    # torch picks nearest indices in single precision whatever the input's dtype
    return x.index_select(dim, wrap(_nearest_indices(x.shape[dim], n_out, factor, exact, np.dtype(np.float32))))


def _resize_linear(x: Tensor, dim: int, n_out: int, factor: float | None, align_corners: bool, dtype) -> Tensor:
    n_in = x.shape[dim]
    source = np.maximum(_source_coordinates(n_out, _scale(n_in, n_out, factor, align_corners, dtype), align_corners),
                        0)
    low = np.minimum(np.floor(source).astype(np.int64), n_in - 1)
    high = np.minimum(low + 1, n_in - 1)
    shape = [1] * x.dim()
    shape[dim] = n_out
    if _by_product(x):
        return _resized_by_product(x, dim, _linear_matrix(n_in, low, high, (source - low).astype(dtype)))
    weight = (source - low).astype(dtype).reshape(shape)
    below, above = x.index_select(dim, wrap(low)), x.index_select(dim, wrap(high))
    mix = _as_weight(weight, x)
    return below * (1 - mix) + above * mix


def _by_product(x: Tensor) -> bool:
    """Whether a dim is resized as one product with the interpolation matrix (BLAS, in single or double): not
    where an inf or nan would meet the matrix's zeros and spread (0 * inf is nan) to the whole row."""
    data = x._data
    return data.dtype in (np.float32, np.float64) and data.size >= _BY_PRODUCT_FROM and bool(np.isfinite(data).all())


_BY_PRODUCT_FROM = 4096  # elements; below, gathering the neighbours costs less than the product's set-up


def _linear_matrix(n_in: int, low: np.ndarray, high: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """The [n_out, n_in] matrix of linear interpolation: 1 - w on each output's lower neighbour, w on its upper."""
    matrix = np.zeros((len(low), n_in), weight.dtype)
    rows = np.arange(len(low))
    np.add.at(matrix, (rows, low), 1 - weight)  # (low and high coincide at the last index: their weights add)
    np.add.at(matrix, (rows, high), weight)
    return matrix


def _resized_by_product(x: Tensor, dim: int, matrix: np.ndarray) -> Tensor:
    """``x`` along ``dim`` mapped by ``matrix`` ([n_out, n_in]); as a matrix product, differentiable again."""
    if dim == x.dim() - 1:
        return x @ wrap(np.ascontiguousarray(matrix.T))
    return wrap(matrix) @ x if dim == x.dim() - 2 else (wrap(matrix) @ x.movedim(dim, -2)).movedim(-2, dim)


def _as_weight(weight: np.ndarray, x: Tensor) -> Tensor:
    """Interpolation weights computed in single (or double) precision, in a 16-bit input's dtype as its result."""
    return wrap(weight).to(x.dtype) if x.dtype in (ember.float16, ember.bfloat16) else wrap(weight)


def _resize_cubic(x: Tensor, dim: int, n_out: int, factor: float | None, align_corners: bool, dtype) -> Tensor:
    """Cubic convolution of the four neighbours of each source coordinate (edges repeated, as torch's)."""
    n_in = x.shape[dim]
    source = _source_coordinates(n_out, _scale(n_in, n_out, factor, align_corners, dtype), align_corners)  # (no 0 floor)
    start = np.floor(source)
    shape = [1] * x.dim()
    shape[dim] = n_out
    if _by_product(x):
        return _resized_by_product(x, dim, _cubic_matrix(n_in, source, dtype))
    out = None
    for offset, weight in zip(range(-1, 3), _cubic_weights((source - start).astype(dtype))):
        taps = x.index_select(dim, wrap(np.clip(start.astype(np.int64) + offset, 0, n_in - 1)))
        term = taps * _as_weight(weight.reshape(shape), x)
        out = term if out is None else out + term
    return out


def _cubic_matrix(n_in: int, source: np.ndarray, dtype) -> np.ndarray:
    """The [n_out, n_in] matrix of cubic convolution at the ``source`` coordinates, edges repeated."""
    start = np.floor(source)
    matrix = np.zeros((len(source), n_in), dtype)
    for offset, weight in zip(range(-1, 3), _cubic_weights((source - start).astype(dtype))):
        np.add.at(matrix, (np.arange(len(source)), np.clip(start.astype(np.int64) + offset, 0, n_in - 1)), weight)
    return matrix


def _antialias_filter(mode: str, x: np.ndarray) -> np.ndarray:
    """The filter that weighs a source pixel at distance ``x`` (in output pixels): a triangle, Keys' cubic with
    ``a = -0.5`` (as PIL's, where the plain bicubic mode uses -0.75) or Lanczos-3's windowed sinc."""
    x = np.abs(x)
    if mode == "bilinear":
        return np.maximum(1 - x, 0)
    if mode == "lanczos":
        return np.where(x < 3, np.sinc(x) * np.sinc(x / 3), 0)
    a = -0.5
    near = ((a + 2) * x - (a + 3)) * x * x + 1
    far = (((x - 5) * x + 8) * x - 4) * a
    return np.where(x < 1, near, np.where(x < 2, far, 0))


def _antialias_matrix(n_in: int, n_out: int, factor: float | None, align_corners: bool, mode: str, dtype,
                      antialias: bool = True) -> np.ndarray:
    """The [n_out, n_in] matrix of an antialiased resize: when shrinking, the filter is stretched by the scale so
    that every source pixel under an output pixel counts; each row's weights are those of the source pixels whose
    centres fall in the filter's support (inside the input), normalised to sum to 1. Without ``antialias`` (torch's
    byte kernels build their bilinear weights so) the filter keeps its width, and aligned corners shift the
    centres by half a pixel."""
    scale = float(_scale(n_in, n_out, factor, align_corners, np.dtype(np.float64)))
    stretch = max(scale, 1.0) if antialias else 1.0
    support = _ANTIALIAS_TAPS[mode] / 2 * stretch
    shift = 0.5 if align_corners and not antialias else 0.0
    centres = scale * (np.arange(n_out) + 0.5 - shift) + shift
    first = np.maximum(np.trunc(centres - support + 0.5), 0)
    stop = np.minimum(np.minimum(np.trunc(centres + support + 0.5), n_in), first + 2 * math.ceil(support) + 1)
    sources = np.arange(n_in)
    inside = (sources >= first[:, None]) & (sources < stop[:, None])
    weights = np.where(inside, _antialias_filter(mode, (sources - centres[:, None] + 0.5) / stretch), 0)
    totals = weights.sum(1, keepdims=True)
    return np.divide(weights, totals, out=weights, where=totals != 0).astype(dtype)


def _resize_antialiased(x: Tensor, dim: int, n_out: int, factor: float | None, mode: str, align_corners: bool,
                        dtype) -> Tensor:
    matrix = _antialias_matrix(x.shape[dim], n_out, factor, align_corners, mode, dtype)
    if x._data.dtype in (np.float32, np.float64) and bool(np.isfinite(x._data).all()):
        return _resized_by_product(x, dim, matrix)
    # a non-finite value stays within the rows that read it (a product would spread it through the zeros)
    rows, columns = np.nonzero(matrix)
    shape = [1] * x.dim()
    shape[dim] = len(rows)
    terms = x.index_select(dim, wrap(columns)) * wrap(matrix[rows, columns].reshape(shape))
    return ember.zeros_like(terms.narrow(dim, 0, 1)).repeat_interleave(n_out, dim).index_add(dim, wrap(rows), terms)


def _check_antialias(input: Tensor, mode: str, antialias: bool) -> None:
    if antialias and not (mode in _ANTIALIAS_TAPS and input.dim() == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and requires a 4-D "
                         "tensor as input")
    if antialias and input.dtype != ember.uint8:  # bytes have kernels of their own
        refuse_integers("compute_index_ranges_weights", input)
        if input.dtype in (ember.float16, ember.bfloat16):
            raise NotImplementedError(f"\"compute_index_ranges_weights\" not implemented for "
                                      f"'{_dtype.scalar_type_name(input._data.dtype)}'; convert it first, e.g. "
                                      "input.float()")


def _refuse_integers(input: Tensor, mode: str, spatial: int) -> None:
    """torch's NotImplementedError for integer inputs (it resizes bytes by nearest and bilinear modes only)."""
    if mode.startswith("nearest") and input.dtype == ember.uint8:
        return
    kernel = {"linear": "linear", "trilinear": "linear", "bilinear": "upsample_bilinear2d_channels_last",
              "bicubic": "cubic"}.get(mode)
    if kernel is None:
        kernel = "upsample_nearest2d_channels_last" if spatial == 2 else "nearest"
    refuse_integers(kernel if "_" in kernel else f"compute_indices_weights_{kernel}", input)


def _check_sizes(input: Tensor, sizes: list[int]) -> None:
    """Every spatial size, in and out, must be positive, and only the batch may be empty."""
    given = list(input.shape[2:])
    if min(given + sizes) <= 0:
        names = "DHW"[-len(sizes):]
        shown = [", ".join(f"{n}: {v}" for n, v in zip(names, values)) for values in (given, sizes)]
        joint = " and" if len(sizes) == 1 else ""
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input ({shown[0]}){joint} "
                           f"output ({shown[1]})")
    if input.shape[1] == 0:
        raise RuntimeError(f"Non-empty {input.dim()}D data tensor expected but got a tensor with sizes "
                           f"{list(input.shape)}")


def _check_mode(input: Tensor, mode: str, align_corners, antialias: bool) -> int:
    """The number of spatial dims, after checking ``mode``, ``align_corners`` and ``antialias`` against the input."""
    if mode not in _MODES:
        raise NotImplementedError(f"interpolate: mode {mode!r} is unknown; expected one of {', '.join(_MODES)}")
    if align_corners is not None and mode not in _INTERPOLATING:
        raise ValueError("align_corners option can only be set with the interpolating modes: "
                         "linear | bilinear | bicubic | trilinear")
    _check_antialias(input, mode, antialias)
    spatial = input.dim() - 2
    if spatial not in (1, 2, 3):
        raise NotImplementedError(f"interpolate: input of shape {list(input.shape)} ({input.dim()}D) is not supported: "
                                  f"it takes (N, C, d1), (N, C, d1, d2) or (N, C, d1, d2, d3)")
    if mode in _INTERPOLATING and _INTERPOLATING[mode] != spatial:
        raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs {_INTERPOLATING[mode] + 2}D input")
    if mode == "lanczos" and align_corners:
        raise ValueError("Lanczos mode does not support align_corners=True")
    if mode == "lanczos" and not antialias:
        raise ValueError("Lanczos mode requires antialias=True")
    return spatial


@nn_function
def interpolate(input: Tensor, size=None, scale_factor=None, mode: str = "nearest", align_corners: bool | None = None,
                recompute_scale_factor: bool | None = None, antialias: bool = False) -> Tensor:
    """``input`` (``N, C, ...``) resized to ``size`` or by ``scale_factor`` along its spatial dims.

    >>> ember.nn.functional.interpolate(ember.tensor([[[0., 4.]]]), scale_factor=2, mode="linear")
    tensor([[[0., 1., 3., 4.]]])
    """
    spatial = _check_mode(input, mode, align_corners, antialias)
    sizes, factors = _output_sizes(input, spatial, size, scale_factor)
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if recompute_scale_factor:
        factors = [None] * spatial  # the coordinates then follow the output size alone, as torch's do
    if mode == "area":
        return _AREA[spatial](input, sizes)
    _check_sizes(input, sizes)
    if mode in _ANTIALIAS_TAPS and input.dtype == ember.uint8:
        return _resize_bytes(input, sizes, factors, mode, bool(align_corners), antialias)
    _refuse_integers(input, mode, spatial)
    # as torch: a channels-last input gives a channels-last result, resized in that order
    trailing = is_channels_last(input)
    start = out = channels_trailing(input) if trailing else input
    for dim in range(2, 2 + spatial):
        at = trailing_dim(dim, input.dim()) if trailing else dim
        if out.shape[at] == sizes[dim - 2] and _keeps_unresized_dims(mode, antialias):
            continue
        out = _resize(out, at, sizes[dim - 2], factors[dim - 2], mode, align_corners, antialias)
    if out is start:  # no dim resized: a new tensor all the same (in the input's layout), as torch's
        out = input.clone()
    elif trailing:
        out = channels_second(out)
    return named_node(out, _upsample_node(mode, spatial, antialias), input, listed=(input,))


_UPSAMPLE_NODES = {"nearest": "Nearest{}D", "nearest-exact": "NearestExact{}D", "linear": "Linear1D",
                   "bilinear": "Bilinear2D", "trilinear": "Trilinear3D", "bicubic": "Bicubic2D", "lanczos": "Lanczos2D"}


def _upsample_node(mode: str, spatial: int, antialias: bool) -> str:
    """torch's node for ``interpolate`` in ``mode``: ``UpsampleNearest2DBackward0``, ``UpsampleBicubic2DAaBackward0``
    (antialiased) ..."""
    return f"Upsample{_UPSAMPLE_NODES[mode].format(spatial)}{'Aa' if antialias else ''}Backward0"


def _keeps_unresized_dims(mode: str, antialias: bool) -> bool:
    """Whether torch's kernel for the mode leaves a dim whose size does not change as it is, even when a
    ``scale_factor`` such as 1.3 (size 3 to 3) would move its sample points: its linear kernels and its
    antialiased ones do, at every size. (Its bicubic and 1-D and 3-D nearest kernels resample the dim; its 2-D
    nearest one leaves it on small inputs only, about a thousand elements a plane, and resamples larger ones, as
    ember does.)"""
    return mode in _LINEAR or antialias


def _resize_bytes(input: Tensor, sizes: list[int], factors: list, mode: str, align_corners: bool,
                  antialias: bool) -> Tensor:
    """Bytes resized as torch's byte kernels do, to the same values: the weights (in double precision) in
    fixed point, as int16 with as many fraction bits as the largest weight leaves room for; the last dim first,
    each pass rounded half up and saturated to bytes."""
    out = input._data.astype(np.int64)
    for dim in (3, 2):
        n_in, n_out, factor = out.shape[dim], sizes[dim - 2], factors[dim - 2]
        if n_in == n_out:  # (a dim whose size stays is left as it is, whatever the scale factor)
            continue
        if mode == "bicubic" and not antialias:
            scale = _scale(n_in, n_out, factor, align_corners, np.dtype(np.float64))
            matrix = _cubic_matrix(n_in, _source_coordinates(n_out, scale, align_corners), np.float64)
        else:
            matrix = _antialias_matrix(n_in, n_out, factor, align_corners, mode, np.float64, antialias)
        out = _fixed_point_pass(out, dim, matrix)
    return wrap(out.astype(np.uint8))


def _fixed_point_pass(x: np.ndarray, dim: int, matrix: np.ndarray) -> np.ndarray:
    bits = 0
    while bits < 22 and int(0.5 + float(matrix.max(initial=0)) * (1 << (bits + 1))) < 1 << 15:
        bits += 1
    scaled = matrix * (1 << bits)
    weights = np.trunc(scaled + np.copysign(0.5, scaled)).astype(np.int64)  # halves away from zero
    sums = np.moveaxis(np.moveaxis(x, dim, -1) @ weights.T, -1, dim)
    return np.clip((sums + (1 << bits >> 1)) >> bits, 0, 255)


def _resize(x: Tensor, dim: int, n_out: int, factor: float | None, mode: str, align_corners,
            antialias: bool = False) -> Tensor:
    dtype = np.dtype(np.float64 if x.dtype == ember.float64 else np.float32)
    if antialias:
        return _resize_antialiased(x, dim, n_out, factor, mode, bool(align_corners), dtype)
    if mode in _LINEAR:
        return _resize_linear(x, dim, n_out, factor, bool(align_corners), dtype)
    if mode == "bicubic":
        return _resize_cubic(x, dim, n_out, factor, bool(align_corners), dtype)
    return _resize_nearest(x, dim, n_out, factor, mode == "nearest-exact")


def _deprecated(name: str) -> None:
    warnings.warn(f"`nn.functional.{name}` is deprecated. Use `nn.functional.interpolate` instead.", UserWarning,
                  stacklevel=user_stacklevel())


@nn_function
def upsample(input: Tensor, size=None, scale_factor=None, mode: str = "nearest", align_corners: bool | None = None) -> Tensor:
    """The older name of ``interpolate``.

    >>> ember.nn.functional.upsample(ember.tensor([[[1., 2.]]]), scale_factor=2)
    tensor([[[1., 1., 2., 2.]]])
    """
    _deprecated("upsample")
    return interpolate(input, size, scale_factor, mode, align_corners)


@nn_function
def upsample_nearest(input: Tensor, size=None, scale_factor=None) -> Tensor:
    """``interpolate`` with ``mode="nearest"``.

    >>> ember.nn.functional.upsample_nearest(ember.tensor([[[1., 2.]]]), size=3)
    tensor([[[1., 1., 2.]]])
    """
    _deprecated("upsample_nearest")
    return interpolate(input, size, scale_factor, mode="nearest")


@nn_function
def upsample_bilinear(input: Tensor, size=None, scale_factor=None) -> Tensor:
    """``interpolate`` with ``mode="bilinear", align_corners=True``.

    >>> ember.nn.functional.upsample_bilinear(ember.tensor([[[[0., 2.]]]]), size=(1, 3))
    tensor([[[[0., 1., 2.]]]])
    """
    _deprecated("upsample_bilinear")
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


@nn_function
def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """``(*, C * r * r, H, W)`` rearranged to ``(*, C, H * r, W * r)``.

    >>> ember.nn.functional.pixel_shuffle(ember.arange(4.).view(1, 4, 1, 1), 2)
    tensor([[[[0., 1.],
              [2., 3.]]]])
    """
    *batch, channels, height, width = _image_shape("pixel_shuffle", input)
    r = _positive_factor("pixel_shuffle", "upscale_factor", upscale_factor)
    if channels % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                           f"upscale_factor, but input.size(-3)={channels} is not divisible by {r * r}")
    c = channels // (r * r)
    x = input.reshape(*batch, c, r, r, height, width)
    n = len(batch)
    x = x.permute(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return named_node(x.reshape(*batch, c, height * r, width * r), "PixelShuffleBackward0", input, listed=(input,))


@nn_function
def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """``(*, C, H * r, W * r)`` rearranged to ``(*, C * r * r, H, W)``: the inverse of ``pixel_shuffle``.

    >>> ember.nn.functional.pixel_unshuffle(ember.arange(4.).view(1, 1, 2, 2), 2).flatten()
    tensor([0., 1., 2., 3.])
    """
    *batch, channels, height, width = _image_shape("pixel_unshuffle", input)
    r = _positive_factor("pixel_unshuffle", "downscale_factor", downscale_factor)
    if height % r or width % r:
        raise RuntimeError(f"pixel_unshuffle expects height and width to be divisible by downscale_factor, but "
                           f"input.size(-2)={height} and input.size(-1)={width} are not both divisible by {r}")
    x = input.reshape(*batch, channels, height // r, r, width // r, r)
    n = len(batch)
    x = x.permute(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return named_node(x.reshape(*batch, channels * r * r, height // r, width // r), "PixelUnshuffleBackward0", input,
                      listed=(input,))


def _positive_factor(op: str, name: str, factor: int) -> int:
    if factor <= 0:
        raise RuntimeError(f"{op} expects a positive {name}, but got {factor}")
    return factor


def _image_shape(op: str, input: Tensor) -> tuple:
    if input.dim() < 3:
        raise RuntimeError(f"{op} expects input to have at least 3 dimensions, but got input with {input.dim()} "
                           f"dimension(s)")
    return tuple(input.shape)
