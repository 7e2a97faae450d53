"""Counting and searching: unique, unique_consecutive, bincount, histc, searchsorted, bucketize.

Their results are counts and positions, not differentiable (as in torch: no gradient flows through them).

>>> import ember
>>> ember.unique(ember.tensor([3, 1, 3, 2]), return_counts=True)
(tensor([1, 2, 3]), tensor([1, 1, 2]))
>>> ember.bucketize(ember.tensor([0.5, 2.5]), ember.tensor([1., 2., 3.]))
tensor([0, 2])
"""
from __future__ import annotations

import math

import numpy as np

from ember import _dtype

from ember._ops import _tie_order
from ember._ops._quiet import IGNORE_ALL, quietly
from ember._ops._support import element_of, ember_function, normalize_dims, refuse_complex, require_tensor, result_dtype, \
    whole_number, wrap
from ember._ops.out import into_out, into_out_of_its_dtype
from ember._ops.sorting import _sort_order
from ember._tensor import Tensor

_INDEX = np.dtype(np.int64)


# ----------------------------------------------------------------- unique


def _with_extras(values: np.ndarray, inverse: np.ndarray, counts: np.ndarray, return_inverse: bool,
                 return_counts: bool):
    """The values alone, or a tuple of them and the inverse and counts asked for, as torch returns them."""
    results = [wrap(values)]
    if return_inverse:
        results.append(wrap(inverse.astype(_INDEX, copy=False)))
    if return_counts:
        results.append(wrap(counts.astype(_INDEX, copy=False)))
    return results[0] if len(results) == 1 else tuple(results)


def _slices_axis(x: Tensor, dim: int, op: str) -> int:
    """``dim`` as the axis whose slices are compared; as torch, every other dim must have elements."""
    data = x._data
    if data.ndim == 0:
        raise IndexError(f"{op}(): Dimension specified as {dim} but tensor has no dimensions; pass dim=None")
    axis = normalize_dims(dim, data.ndim, op)[0]
    if data.size == 0 and data.shape[axis] != 0:
        raise RuntimeError(f"{op}(): There are 0 sized dimensions, and they aren't selected, so unique cannot be "
                           f"applied (shape {list(data.shape)}, dim {dim})")
    return axis


@ember_function
def unique(input: Tensor, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False,
           dim: int | None = None):
    """The distinct elements (or slices along ``dim``) in ascending order; optionally where each element went
    (``return_inverse``) and how often each occurs (``return_counts``). Each NaN is distinct, as in torch.

    >>> ember.unique(ember.tensor([[1, 2], [1, 2], [0, 5]]), dim=0)
    tensor([[0, 5],
            [1, 2]])
    """
    x = require_tensor(input, "unique")
    data = refuse_complex("unique", x._data)
    if dim is None and data.dtype == np.float16 and np.isnan(data).any():
        return _unique_in_sort_order(data, return_inverse, return_counts)
    if dim is None:
        values, inverse, counts = np.unique(_sortable(data.reshape(-1)), return_inverse=True, return_counts=True,
                                            equal_nan=False)
        values = values.astype(data.dtype, copy=False)
        return _with_extras(values, inverse.reshape(data.shape), counts, return_inverse, return_counts)
    axis = _slices_axis(x, dim, "unique")
    if data.shape[axis] == 0:
        return _with_extras(data.copy(), np.zeros(0, _INDEX), np.zeros(0, _INDEX), return_inverse, return_counts)
    rows = _as_rows(data, axis)
    order = _row_order(_sortable(rows))
    first, run, counts = _runs(rows[order])
    inverse = np.empty(len(rows), _INDEX)
    inverse[order] = run
    return _with_extras(np.take(data, order[first], axis), inverse, counts, return_inverse, return_counts)


def _unique_in_sort_order(data: np.ndarray, return_inverse: bool, return_counts: bool):
    """unique of every element, its NaNs (each distinct) numbered in the order torch's unstable sort leaves
    them: torch's half unique sorts so (its single and double ones keep the NaNs in place, as NumPy's)."""
    flat = data.reshape(-1)
    order = _sort_order(flat, 0, False, False)
    first, run, counts = _runs(flat[order].reshape(-1, 1))
    inverse = np.empty(flat.size, _INDEX)
    inverse[order] = run
    return _with_extras(flat[order[first]], inverse.reshape(data.shape), counts, return_inverse, return_counts)


def _sortable(data: np.ndarray) -> np.ndarray:
    """``data`` as NumPy sorts it right: bfloat16 (whose NumPy sort mixes NaNs among the numbers) as the float32
    values it holds exactly, in the same order."""
    return data.astype(np.float32) if data.dtype is _dtype.BF16 else data


def _as_rows(data: np.ndarray, axis: int) -> np.ndarray:
    """The slices of ``data`` along ``axis``, each flattened into a row."""
    rest = math.prod(data.shape) // data.shape[axis] if data.shape[axis] else 0
    return np.moveaxis(data, axis, 0).reshape(data.shape[axis], rest)


def _row_order(rows: np.ndarray) -> np.ndarray:
    """Rows in lexicographic order; with NaNs (which compare as nothing), in the order torch's sort leaves them."""
    if _dtype.kind(rows.dtype) == "f" and np.isnan(rows).any() and rows.size <= _tie_order.EMULATED_AT_MOST:
        return np.array(_tie_order.sort_rows(rows.tolist()), _INDEX)
    return np.lexsort(rows.T[::-1]) if rows.shape[1] else np.arange(len(rows))


def _runs(rows: np.ndarray) -> tuple:
    """For runs of equal consecutive rows: where each starts, the run of each row, and each run's length.

    NaN differs from NaN: each is a run of its own, as in torch.
    """
    starts = np.ones(len(rows), bool)
    starts[1:] = (rows[1:] != rows[:-1]).any(axis=1)
    first = np.flatnonzero(starts)
    return first, np.cumsum(starts) - 1, np.diff(np.append(first, len(rows)))


@ember_function
def unique_consecutive(input: Tensor, return_inverse: bool = False, return_counts: bool = False,
                       dim: int | None = None):
    """``input`` with each run of equal consecutive elements (or slices along ``dim``) kept once.

    >>> ember.unique_consecutive(ember.tensor([1, 1, 2, 2, 1]), return_counts=True)
    (tensor([1, 2, 1]), tensor([2, 2, 1]))
    """
    x = require_tensor(input, "unique_consecutive")
    data = refuse_complex("unique_consecutive", x._data)
    if dim is None:
        first, run, counts = _runs(data.reshape(-1, 1))
        return _with_extras(data.reshape(-1)[first], run.reshape(data.shape), counts, return_inverse, return_counts)
    axis = _slices_axis(x, dim, "unique_consecutive")
    first, run, counts = _runs(_as_rows(data, axis))
    return _with_extras(np.take(data, first, axis), run, counts, return_inverse, return_counts)


# ----------------------------------------------------------------- counting into bins


@ember_function
def bincount(input: Tensor, weights: Tensor | None = None, minlength: int = 0) -> Tensor:
    """How often each value 0, 1, ... occurs in the 1-D non-negative integer ``input`` (or the sum of its
    ``weights``), at least ``minlength`` long.

    >>> ember.bincount(ember.tensor([1, 3, 1]))
    tensor([0, 2, 0, 1])
    """
    x = require_tensor(input, "bincount")
    data = x._data
    if data.dtype.kind not in "iu":
        name = {"b": "Bool", "f": "Float"}.get(data.dtype.kind, str(data.dtype))
        raise NotImplementedError(f'"bincount_cpu" not implemented for \'{name}\'; bincount counts integers: '
                                  "convert first, e.g. x.long()")
    if data.ndim != 1 or (data.size and data.min() < 0):
        raise RuntimeError(f"bincount only supports 1-d non-negative integral inputs (got shape {list(data.shape)}"
                           f"{', with negative values' if data.ndim == 1 else ''})")
    minlength = whole_number(minlength, "bincount", "minlength")
    if minlength < 0:
        raise RuntimeError(f"bincount: minlength should be >= 0, got {minlength}")
    if weights is not None:
        require_tensor(weights, "bincount", 2, "weights")
    if weights is None or data.size == 0:  # as torch: no elements count as integers, whatever the weights
        return wrap(np.bincount(data, minlength=minlength).astype(_INDEX))
    w = weights._data
    if w.shape != data.shape:
        raise RuntimeError(f"bincount: weights should be 1-d and have the same length as input: weights are "
                           f"{list(w.shape)}, input is {list(data.shape)}")
    dtype = np.float32 if w.dtype == np.float32 else np.float64  # as torch: single stays single, the rest double
    return wrap(np.bincount(data, w.astype(np.float64), minlength).astype(dtype))


def _histc_range(data: np.ndarray, min: float, max: float) -> tuple:
    """The range histc counts over: ``[min, max]``, or the data's own if both are equal, widened by 1 if empty."""
    low, high = float(min), float(max)
    if low != high or not data.size:  # as torch, a finite bound the input's dtype cannot hold is an error, if used
        element_of("histc", low, data.dtype), element_of("histc", high, data.dtype)
    if low > high:
        raise RuntimeError(f"torch.histc: max must be larger than min (got min {low}, max {high})")
    if low == high and data.size:
        low, high = float(data.min()), float(data.max())  # a NaN makes the range NaN: an error below, as torch
    if low == high:
        low, high = low - 1, high + 1
    if not (np.isfinite(low) and np.isfinite(high)):
        raise RuntimeError(f"torch.histc: range of [{low}, {high}] is not finite; give finite min and max")
    return low, high


@ember_function
def histc(input: Tensor, bins: int = 100, min: float = 0, max: float = 0, *, out=None) -> Tensor:
    """A histogram of ``input`` in ``bins`` equal bins over ``[min, max]`` (the data's range when both are 0).

    Elements outside the range, and NaN, are not counted; ``max`` itself falls in the last bin.

    >>> ember.histc(ember.tensor([1., 2., 1., 4.]), bins=4)
    tensor([2., 1., 0., 1.])
    """
    x = require_tensor(input, "histc")
    data = x._data
    if _dtype.kind(data.dtype) != "f":
        raise NotImplementedError(f'"histogram_cpu" not implemented for \'{data.dtype}\'; torch.histc counts '
                                  "floating values: convert first, e.g. x.float()")
    bins = whole_number(bins, "histc", "bins", 2)
    if bins <= 0:
        raise RuntimeError(f"torch.histc: bins must be > 0, but got {bins}")
    low, high = _histc_range(data, min, max)
    values = data.reshape(-1)
    values = values[(values >= low) & (values <= high)]  # drops NaN too
    low, high = data.dtype.type(low), data.dtype.type(high)
    position = quietly(IGNORE_ALL, _bins_of, values, low, high, bins)
    result = wrap(np.bincount(position, minlength=bins).astype(data.dtype))
    return result if out is None else into_out_of_its_dtype("histc", result, out, x)


def _bins_of(values: np.ndarray, low, high, bins: int) -> np.ndarray:
    """The bin of each value in ``[low, high]``, computed as torch computes it, in the values' dtype (the order
    of the operations matters at the edges of bins). A position too far for the dtype (inf or NaN) is bin 0;
    but a range whose width overflows the dtype counts nothing, as torch's."""
    width = high - low
    if not np.isfinite(width):
        return np.zeros(0, _INDEX)
    position = (values - low) * values.dtype.type(bins) / width
    position[~np.isfinite(position)] = 0
    return np.minimum(position.astype(_INDEX), bins - 1)


# ----------------------------------------------------------------- searching sorted sequences


def _side(right: bool, side: str | None) -> str:
    if side is None:
        return "right" if right else "left"
    if side not in ("left", "right"):
        raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}")
    if right and side == "left":
        raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, got side of left while "
                           "right was True; give one of them")
    return side


def _sorted_by(boundaries: np.ndarray, sorter) -> np.ndarray:
    """``boundaries`` put in order by ``sorter`` (indices along the last dim), checked as torch checks it."""
    order = require_tensor(sorter, "searchsorted", name="sorter")._data
    if order.shape != boundaries.shape:
        raise RuntimeError(f"torch.searchsorted(): boundary and sorter must have the same size, but got boundary "
                           f"tensor {list(boundaries.shape)} and sorter tensor {list(order.shape)}")
    if order.size and (order.min() < 0 or order.max() >= boundaries.shape[-1]):
        raise RuntimeError("torch.searchsorted(): sorter index out of range")
    return np.take_along_axis(boundaries, order.astype(_INDEX), -1)


def _index_out(out, out_int32: bool):
    """``out``, if its dtype is the index dtype ``out_int32`` asks for (torch's check, for both search ops)."""
    wanted = np.int32 if out_int32 else np.int64
    if isinstance(out, Tensor) and out._data.dtype != wanted:
        raise RuntimeError(f"torch.searchsorted(): output tensor's dtype is wrong, it can only be Int(int32) or "
                           f"Long(int64) depending on whether out_int32 flag is True, but we got output tensor's dtype "
                           f"{_dtype.scalar_type_name(out._data.dtype)} and out_int32 flag is {out_int32}")
    return out


def _search(op: str, boundaries: np.ndarray, values, side: str, out_int32: bool) -> np.ndarray:
    """The positions in ``boundaries`` (1-D, or one sorted row per row of ``values``) that keep them sorted."""
    scalar = not isinstance(values, Tensor)
    boundaries, data = _in_common_dtype(op, boundaries, values)
    if boundaries.ndim == 0:
        raise RuntimeError(f"torch.{op}(): boundaries tensor should have positive dimension, but got 0 dimension")
    if boundaries.ndim == 1:
        positions = _bisect(boundaries.reshape(1, -1), data.reshape(1, -1), side == "right").reshape(data.shape)
    elif scalar or data.ndim == 0:
        raise RuntimeError(f"torch.{op}(): input value can be a scalar only when boundaries tensor dimension is 1, "
                           f"but we got boundaries tensor dim({boundaries.ndim}) and input value's dim(0) numel(1)")
    elif boundaries.shape[:-1] != data.shape[:-1]:
        raise RuntimeError(f"torch.{op}(): boundaries tensor should be 1 dimension or the first N-1 dimensions of "
                           f"boundaries tensor and input value tensor must match, but we got boundaries tensor "
                           f"{list(boundaries.shape)} and input value tensor {list(data.shape)}")
    else:
        rows = boundaries.reshape(-1, boundaries.shape[-1])
        positions = _bisect(rows, data.reshape(len(rows), data.shape[-1]), side == "right").reshape(data.shape)
    return positions.astype(np.int32 if out_int32 else _INDEX)


def _in_common_dtype(op: str, boundaries: np.ndarray, values) -> tuple:
    """``boundaries`` and the array of ``values`` (a tensor or a number) in their common dtype by torch's promotion,
    in which torch compares them (a bool boundary tensor takes int values; uint8 boundaries take -1 as 255)."""
    common = result_dtype(wrap(boundaries), values).np
    if common == np.bool_:
        raise NotImplementedError(f'"{op}" not implemented for \'Bool\'; convert first, e.g. x.to(ember.uint8)')
    refuse_complex(op, common)
    data = values._data if isinstance(values, Tensor) else np.asarray(values)
    return boundaries.astype(common, copy=False), quietly(IGNORE_ALL, data.astype, common)  # beyond half: inf


def _bisect(rows: np.ndarray, values: np.ndarray, right: bool) -> np.ndarray:
    """For each row of ``values``, the positions in that row of ``rows`` (sorted) found by torch's binary search.

    The search steps right past an element unless it is at least (``right``: more than) the value; a NaN,
    either side, is never, so NaN values go to the end, as in torch (NumPy's search orders NaNs instead).
    """
    size = rows.shape[1]
    if len(rows) == 1 and rows.dtype == values.dtype and _sorted_without_nan(rows[0]):
        # one sorted row: the position is unique, NumPy's search finds the same (NaN values go to the end in both;
        # bfloat16's NumPy search puts them first: it searches the float32 values they hold)
        row, wanted = _sortable(rows[0]), _sortable(values[0])
        return np.searchsorted(row, wanted, "right" if right else "left").reshape(values.shape)
    low, high = np.zeros(values.shape, _INDEX), np.full(values.shape, size, _INDEX)
    for _ in range(size.bit_length()):  # each step halves every interval that is left
        middle = (low + high) >> 1
        element = np.take_along_axis(rows, np.minimum(middle, size - 1), 1)
        stop = element > values if right else element >= values
        searching = low < high
        low = np.where(searching & ~stop, middle + 1, low)
        high = np.where(searching & stop, middle, high)
    return low


def _sorted_without_nan(row: np.ndarray) -> bool:
    """Whether ``row`` (1-D) is sorted and holds no NaN, where every binary search finds the same positions."""
    if _dtype.kind(row.dtype) == "f" and np.isnan(row).any():
        return False
    return bool((row[1:] >= row[:-1]).all())


@ember_function
def searchsorted(sorted_sequence: Tensor, input, *, out_int32: bool = False, right: bool = False,
                 side: str | None = None, out=None, sorter: Tensor | None = None) -> Tensor:
    """Where each of ``input`` would go in ``sorted_sequence`` (sorted along its last dim) to keep it sorted.

    ``right`` (or ``side='right'``) puts a value after the elements equal to it.

    >>> ember.searchsorted(ember.tensor([1, 3, 5, 7]), ember.tensor([3, 6]))
    tensor([1, 3])
    """
    boundaries = require_tensor(sorted_sequence, "searchsorted", name="sorted_sequence")._data
    if sorter is not None:
        boundaries = _sorted_by(boundaries, sorter)
    result = wrap(_search("searchsorted", boundaries, input, _side(right, side), out_int32))
    return result if out is None else into_out("searchsorted", result, _index_out(out, out_int32), sorted_sequence)


@ember_function
def bucketize(input, boundaries: Tensor, *, out_int32: bool = False, right: bool = False, out=None) -> Tensor:
    """The bucket of each of ``input`` among the 1-D sorted ``boundaries``: ``boundaries[i-1] < x <= boundaries[i]``
    (``<= x <`` with ``right``).

    >>> ember.bucketize(ember.tensor([1, 4, 9]), ember.tensor([1, 3, 5, 7]))
    tensor([0, 2, 4])
    """
    if not isinstance(input, (Tensor, int, float, bool, complex)):  # a tensor, or a number (torch's Scalar overload)
        raise TypeError(f"bucketize(): argument 'input' (position 1) must be Tensor or a number, not "
                        f"{type(input).__name__}; make it a tensor first, e.g. ember.tensor(values)")
    edges = require_tensor(boundaries, "bucketize", 2, "boundaries")._data
    if edges.ndim != 1:
        raise RuntimeError(f"bucketize: boundaries tensor must be 1 dimension, but got dim({edges.ndim})")
    result = wrap(_search("bucketize", edges, input, "right" if right else "left", out_int32))
    return result if out is None else into_out("bucketize", result, _index_out(out, out_int32), boundaries)
