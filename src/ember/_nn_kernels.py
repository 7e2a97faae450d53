"""More of torch's top-level nn kernels, each over ``nn.functional``'s code: ``convolution``, ``constant_pad_nd``,
``embedding_bag`` (with its bookkeeping outputs), ``embedding_renorm_``, ``ctc_loss``, the grid samplers,
``affine_grid_generator``, ``adaptive_max_pool1d``, the in-place and feature dropouts, and ``segment_reduce``.

Where torch's kernel takes a number for a mode (``grid_sampler``'s interpolation, ``ctc_loss``'s reduction,
``embedding_bag``'s mode), so does the function here.

>>> import ember
>>> ember.constant_pad_nd(ember.ones(1, 2), [1, 0], 5.0)
tensor([[5., 1., 1.]])
>>> ember.segment_reduce(ember.tensor([1., 2., 3.]), "sum", lengths=ember.tensor([2, 1]))
tensor([3., 3.])
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

import ember
from ember._ops._support import ember_function
from ember._tensor import Tensor
from ember.nn import functional as F
from ember.nn._functional._complex_conv import refuse_without_complex_kernel
from ember.nn._functional.conv import pad_any_value
from ember.nn._functional.dropout import _drop
from ember.nn._functional.sparse import _renorm_rows

__all__ = [
    "adaptive_max_pool1d", "affine_grid_generator", "alpha_dropout_", "constant_pad_nd", "convolution", "ctc_loss",
    "dropout_", "embedding_bag", "embedding_renorm_", "feature_alpha_dropout_", "feature_dropout", "feature_dropout_",
    "grid_sampler", "grid_sampler_2d", "grid_sampler_3d", "segment_reduce",
]

_CONVOLUTIONS = {1: (F.conv1d, F.conv_transpose1d), 2: (F.conv2d, F.conv_transpose2d),
                 3: (F.conv3d, F.conv_transpose3d)}


@ember_function
def convolution(input: Tensor, weight: Tensor, bias: Tensor | None, stride: Sequence[int], padding: Sequence[int],
                dilation: Sequence[int], transposed: bool, output_padding: Sequence[int], groups: int) -> Tensor:
    """A 1-, 2- or 3-d convolution (the weight's rank says which), or with ``transposed`` its transpose.

    >>> ember.convolution(ember.ones(1, 1, 3), ember.ones(1, 1, 2), None, [1], [0], [1], False, [0], 1)
    tensor([[[2., 2.]]])
    """
    spatial = weight.dim() - 2
    if spatial not in _CONVOLUTIONS:
        raise RuntimeError(f"convolution: expected a weight of 3, 4 or 5 dims [out, in / groups, *kernel], got "
                           f"{list(weight.shape)}")
    refuse_without_complex_kernel(spatial, transposed, input)
    forward, transpose = _CONVOLUTIONS[spatial]
    if transposed:
        return transpose(input, weight, bias, list(stride), list(padding), list(output_padding), groups,
                         list(dilation))
    return forward(input, weight, bias, list(stride), list(padding), list(dilation), groups)


@ember_function
def constant_pad_nd(input: Tensor, pad: Sequence[int], value: float = 0) -> Tensor:
    """``F.pad`` with a constant: ``pad`` is ``(before, after)`` pairs from the last dim back; negative ones crop."""
    if len(pad) % 2 or len(pad) > 2 * input.dim():
        raise RuntimeError(f"constant_pad_nd: Length of pad must be even and no more than twice the number of "
                           f"dimensions of the input; pad length is {len(pad)} while the input has {input.dim()} "
                           "dimensions")
    if isinstance(value, complex) and input.is_complex():  # (F.pad, whose batching rule vmap uses, takes no complex)
        return pad_any_value(input, list(pad), "constant", value)
    if isinstance(value, complex):
        if value.imag:
            raise RuntimeError(f"constant_pad_nd: value {value} cannot be converted to type {input.dtype} without "
                               "overflow; a real tensor pads with a real value")
        value = value.real
    return F.pad(input, list(pad), "constant", value)


_BAG_MODES = ("sum", "mean", "max")


@ember_function
def embedding_bag(weight: Tensor, indices: Tensor, offsets: Tensor, scale_grad_by_freq: bool = False, mode: int = 0,
                  sparse: bool = False, per_sample_weights: Tensor | None = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """``F.embedding_bag`` of 1-d ``indices`` cut at ``offsets`` (``mode`` 0 sum, 1 mean, 2 max), with torch's
    bookkeeping: each index's bag, each bag's size (left 0 in sum mode, as torch's), and in max mode the row
    each maximum came from (else the bag sizes again).

    >>> out, offset2bag, bag_size, max_indices = ember.embedding_bag(ember.eye(3), ember.tensor([0, 2, 1]),
    ...                                                              ember.tensor([0, 2]), mode=2)
    >>> out, offset2bag, max_indices
    (tensor([[1., 0., 1.],
            [0., 1., 0.]]), tensor([0, 0, 1]), tensor([[0, 0, 2],
            [1, 1, 1]]))
    """
    if mode not in (0, 1, 2):
        raise ValueError(f"embedding_bag: mode must be 0 (sum), 1 (mean) or 2 (max), got {mode!r}")
    if indices.dim() != 1:
        raise ValueError(f"embedding_bag: expected 1-D indices cut into bags by offsets, got {list(indices.shape)}; "
                         "F.embedding_bag takes a 2-D input of equal bags")
    _check_rows(indices, weight.shape[0])
    output = F.embedding_bag(indices, weight, offsets, None, 2, scale_grad_by_freq, _BAG_MODES[mode], sparse,
                             per_sample_weights, include_last_offset, padding_idx)
    starts = offsets.numpy()[:-1] if include_last_offset else offsets.numpy()
    flat = indices.numpy()
    bag_of = np.searchsorted(starts, np.arange(flat.size), side="right") - 1
    kept = np.ones(flat.size, bool) if padding_idx is None else flat != padding_idx % weight.shape[0]
    sizes = np.bincount(bag_of[kept], minlength=len(starts)).astype(np.int64)
    if mode == 0:
        sizes = np.zeros_like(sizes)
    winners = _max_rows(weight.detach().numpy(), flat, bag_of, kept, len(starts)) if mode == 2 else sizes
    return output, ember.tensor(bag_of.astype(np.int64)), ember.tensor(sizes), ember.tensor(winners)


def _check_rows(indices: Tensor, rows: int) -> None:
    flat = indices.numpy()
    outside = np.flatnonzero((flat < 0) | (flat >= rows))
    if outside.size:
        raise RuntimeError(f"embedding_bag: Index {outside[0]} of input takes value {flat[outside[0]]} which is not "
                           f"in the valid range [0, {rows}) of the weight's rows")


def _max_rows(weight: np.ndarray, flat: np.ndarray, bag_of: np.ndarray, kept: np.ndarray, bags: int) -> np.ndarray:
    """Per bag and column, the index of the row whose value is the bag's maximum (0 for an empty bag)."""
    winners = np.zeros((bags, weight.shape[1]), np.int64)
    for bag in range(bags):
        members = flat[(bag_of == bag) & kept]
        if members.size:
            winners[bag] = members[weight[members].argmax(0)]
    return winners


@ember_function
def embedding_renorm_(input: Tensor, indices: Tensor, max_norm: float, norm_type: float) -> Tensor:
    """Scale, in place and without a gradient, each row of ``input`` that ``indices`` names whose
    ``norm_type``-norm exceeds ``max_norm`` down to ``max_norm``; returns ``input``.

    >>> w = ember.tensor([[3., 4.], [0.3, 0.4]])
    >>> ember.embedding_renorm_(w, ember.tensor([0, 1]), 1.0, 2.0)
    tensor([[0.6000, 0.8000],
            [0.3000, 0.4000]])
    """
    if input.dim() != 2:
        raise RuntimeError(f"embedding_renorm_: expected a 2-D weight, got {list(input.shape)}")
    _renorm_rows(input, indices, max_norm, norm_type)
    return input


_REDUCTIONS = ("none", "mean", "sum")


@ember_function
def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths, target_lengths, blank: int = 0, reduction: int = 1,
             zero_infinity: bool = False) -> Tensor:
    """``F.ctc_loss`` with the reduction as torch's number (0 none, 1 mean, 2 sum); the lengths may be lists."""
    if reduction not in (0, 1, 2):
        raise ValueError(f"ctc_loss: reduction must be 0 (none), 1 (mean) or 2 (sum), got {reduction!r}")
    input_lengths, target_lengths = (lengths if isinstance(lengths, Tensor) else ember.tensor(list(lengths))
                                     for lengths in (input_lengths, target_lengths))
    return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, _REDUCTIONS[reduction], zero_infinity)


_INTERPOLATIONS = ("bilinear", "nearest", "bicubic")
_PADDINGS = ("zeros", "border", "reflection")


def _named(op: str, what: str, value: int, names: tuple) -> str:
    if not isinstance(value, int) or not 0 <= value < len(names):
        choices = ", ".join(f"{i} ({name})" for i, name in enumerate(names))
        raise ValueError(f"{op}: {what} must be one of {choices}, got {value!r}")
    return names[value]


def _sample(op: str, input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
            align_corners: bool) -> Tensor:
    return F.grid_sample(input, grid, _named(op, "interpolation_mode", interpolation_mode, _INTERPOLATIONS),
                         _named(op, "padding_mode", padding_mode, _PADDINGS), align_corners)


@ember_function
def grid_sampler(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                 align_corners: bool) -> Tensor:
    """``F.grid_sample`` with numbered modes: interpolation 0 bilinear, 1 nearest, 2 bicubic; padding 0 zeros,
    1 border, 2 reflection."""
    return _sample("grid_sampler", input, grid, interpolation_mode, padding_mode, align_corners)


def _check_rank(op: str, input: Tensor, grid: Tensor, rank: int) -> None:
    if input.dim() != rank or grid.dim() != rank:
        raise RuntimeError(f"{op}: expected a {rank}-D input and grid, got {list(input.shape)} and "
                           f"{list(grid.shape)}")


@ember_function
def grid_sampler_2d(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                    align_corners: bool) -> Tensor:
    """``grid_sampler`` of a 4-d input ``[N, C, H, W]`` at a grid ``[N, H_out, W_out, 2]``."""
    _check_rank("grid_sampler_2d", input, grid, 4)
    return _sample("grid_sampler_2d", input, grid, interpolation_mode, padding_mode, align_corners)


@ember_function
def grid_sampler_3d(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                    align_corners: bool) -> Tensor:
    """``grid_sampler`` of a 5-d input ``[N, C, D, H, W]`` at a grid ``[N, D_out, H_out, W_out, 3]``."""
    _check_rank("grid_sampler_3d", input, grid, 5)
    return _sample("grid_sampler_3d", input, grid, interpolation_mode, padding_mode, align_corners)


@ember_function
def affine_grid_generator(theta: Tensor, size: Sequence[int], align_corners: bool) -> Tensor:
    """``F.affine_grid`` with ``align_corners`` required."""
    return F.affine_grid(theta, list(size), align_corners)


@ember_function
def adaptive_max_pool1d(input: Tensor, output_size) -> tuple[Tensor, Tensor]:
    """``F.adaptive_max_pool1d`` with its indices: ``(values, indices)``.

    >>> ember.adaptive_max_pool1d(ember.tensor([[1., 3., 2., 0.]]), 2)
    (tensor([[3., 2.]]), tensor([[1, 2]]))
    """
    return F.adaptive_max_pool1d(input, output_size, return_indices=True)


@ember_function
def dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """``F.dropout`` in place."""
    return F.dropout(input, p, train, inplace=True)


@ember_function
def alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """``F.alpha_dropout`` in place."""
    return F.alpha_dropout(input, p, train, inplace=True)


def _feature_mask_shape(input: Tensor) -> tuple:
    if input.dim() < 2:
        raise RuntimeError(f"Feature dropout requires at least 2 dimensions in the input, got {list(input.shape)}")
    return tuple(input.shape[:2]) + (1,) * (input.dim() - 2)


@ember_function
def feature_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """Dropout of whole features: one draw per ``input[n, c]`` (every element of a 2-d input)."""
    return _drop(input, p, train, False, _feature_mask_shape(input))


@ember_function
def feature_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """``feature_dropout`` in place."""
    return _drop(input, p, train, True, _feature_mask_shape(input))


@ember_function
def feature_alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """``F.feature_alpha_dropout`` in place."""
    return F.feature_alpha_dropout(input, p, train, inplace=True)


# the value of an empty segment without ``initial``, and scatter_reduce's name of each reduction
_SEGMENT_REDUCTIONS = {"sum": (0.0, "sum"), "mean": (0.0, "sum"), "max": (-np.inf, "amax"), "min": (np.inf, "amin"),
                       "prod": (1.0, "prod")}


def _segment_lengths(data: Tensor, lengths: Tensor | None, indices: Tensor | None, offsets: Tensor | None,
                     axis: int, unsafe: bool) -> np.ndarray:
    """The lengths of the segments, ``data.shape[:axis] + (segments,)``, from ``lengths`` or ``offsets``."""
    if indices is not None:
        raise RuntimeError("segment_reduce(): indices based reduction is not supported yet; give lengths or offsets")
    if (lengths is None) == (offsets is None):
        raise RuntimeError("segment_reduce(): give exactly one of lengths and offsets")
    found = lengths.numpy() if lengths is not None else np.diff(offsets.numpy(), axis=-1)
    if found.ndim != axis + 1 or found.shape[:-1] != tuple(data.shape[:axis]):
        raise RuntimeError(f"segment_reduce(): expected {'lengths' if lengths is not None else 'offsets'} of "
                           f"shape {list(data.shape[:axis])} + [segments] for axis={axis}, got {list(found.shape)}")
    if not unsafe and ((found < 0).any() or (found.sum(-1) != data.shape[axis]).any()):
        raise RuntimeError(f"segment_reduce(): Expected all rows of lengths along axis to sum to data.size({axis}) "
                           f"= {data.shape[axis]} when !unsafe, got sums {found.sum(-1).tolist()}")
    return found.astype(np.int64)


def _segment_ids(lengths: np.ndarray, size: int) -> np.ndarray:
    """Each position's segment along the axis, ``lengths.shape[:-1] + (size,)``; past the last segment: its
    number of segments (a slot dropped afterwards)."""
    ends = np.cumsum(lengths, -1).reshape(-1, lengths.shape[-1])
    ids = np.stack([np.searchsorted(row, np.arange(size), side="right") for row in ends])
    return ids.reshape(lengths.shape[:-1] + (size,))


@ember_function
def segment_reduce(data: Tensor, reduce: str, *, lengths: Tensor | None = None, indices: Tensor | None = None,
                   offsets: Tensor | None = None, axis: int = 0, unsafe: bool = False,
                   initial: float | None = None) -> Tensor:
    """Reduce consecutive segments of ``data`` along ``axis`` (``"sum"``, ``"mean"``, ``"max"``, ``"min"``,
    ``"prod"``). ``initial`` joins every segment (a mean divides by the segment's length only); without it an
    empty segment is 0, nan, -inf, inf or 1. Differentiable: ties share a maximum's gradient.

    >>> ember.segment_reduce(ember.tensor([1., 5., 2.]), "max", lengths=ember.tensor([2, 0, 1]))
    tensor([5., -inf, 2.])
    """
    if reduce not in _SEGMENT_REDUCTIONS:
        raise RuntimeError(f"segment_reduce(): reduce must be one of {', '.join(_SEGMENT_REDUCTIONS)}, got "
                           f"{reduce!r}")
    axis = axis % data.dim() if data.dim() else 0
    found = _segment_lengths(data, lengths, indices, offsets, axis, unsafe)
    empty, scatter = _SEGMENT_REDUCTIONS[reduce]
    rest = (1,) * (data.dim() - axis - 1)
    ids = np.broadcast_to(_segment_ids(found, data.shape[axis]).reshape(found.shape[:-1] + (-1,) + rest),
                          tuple(data.shape)).copy()
    shape = list(data.shape)
    shape[axis] = found.shape[-1] + 1
    # an extreme that ties with ``initial`` takes the whole gradient (as torch's): joined by a where, not scattered
    joined = initial is not None and reduce not in ("max", "min")
    base = ember.full(shape, float(initial) if joined else empty, dtype=data.dtype)
    result = base.scatter_reduce(axis, ember.tensor(ids), data, scatter, include_self=joined)
    result = result.narrow(axis, 0, found.shape[-1])
    if initial is not None and not joined:
        bound = ember.tensor(float(initial), dtype=data.dtype)
        return ember.where(result >= bound if reduce == "max" else result <= bound, result, bound)
    if reduce != "mean":
        return result
    counts = found.reshape(found.shape + rest)
    if initial is not None:
        counts = np.maximum(counts, 1)
    return result / ember.tensor(counts, dtype=result.dtype)
