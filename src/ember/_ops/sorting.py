"""Sorting and selection: sort, argsort, msort, topk, kthvalue, median, nanmedian, mode, quantile, nanquantile.

Every op finds *which* elements it wants in NumPy (a stable argsort, NaN last as the largest value, as
torch orders it, or for kthvalue and the medians a partition that finds the element a stable argsort would
put there; among equal elements kthvalue, nanmedian and mode pick as torch's kernels do, see
``_tie_order``), then takes them with ``Pick``: the elements of ``x`` at flat positions, whose gradient
goes back to those positions. ``Pick``'s backward is ``Put`` and ``Put``'s is ``Pick``, so every
gradient here is differentiable again.

>>> import ember
>>> x = ember.tensor([3., 1., 2.], requires_grad=True)
>>> values, indices = ember.sort(x)
>>> values, indices
(tensor([1., 2., 3.], grad_fn=<SortBackward0>), tensor([1, 2, 0]))
>>> (values * ember.tensor([1., 2., 3.])).sum().backward(); x.grad
tensor([3., 1., 2.])
"""
from __future__ import annotations

import math

import numpy as np

from ember import _dtype

from ember import return_types
from ember._ops import _tie_order
from ember._ops._quiet import IGNORE_ALL, quietly
from ember._ops.arithmetic import where
from ember._ops._support import ember_function, normalize_dims, refuse_complex, require_tensor, whole_number, wrap
from ember._ops.out import into_out, into_out_of_its_dtype
from ember._tensor import Tensor
from ember.autograd.function import Function

_INDEX = np.dtype(np.int64)


# ----------------------------------------------------------------- taking elements, and putting gradients back


class Pick(Function):
    """The elements of ``x`` at ``flat`` (positions in ``x``'s elements in C order); the result has ``flat``'s shape."""

    backward_name = "GatherBackward0"  # torch's quantile takes its elements with gather
    backward_on_arrays = True  # put_flat and take_flat work on arrays and on tensors alike

    @staticmethod
    def forward(ctx, x, flat):
        ctx.shape = x._data.shape
        ctx.save_for_backward(flat)  # as torch saves its indices: a second backward without retain_graph raises
        return wrap(x._data.reshape(-1)[flat])

    @staticmethod
    def backward(ctx, grad):
        (flat,) = ctx.saved_tensors
        return put_flat(grad, flat, ctx.shape), None


class Put(Function):
    """Zeros of ``shape`` with ``values`` added at ``flat`` (a position named twice gets both): Pick's gradient."""

    backward_name = "ScatterBackward0"  # torch's gradient of a selection is a scatter too
    backward_on_arrays = True

    @staticmethod
    def forward(ctx, values, flat, shape):
        ctx.save_for_backward(flat)  # as torch's scatter saves its index
        return wrap(_put(values._data, flat, shape))

    @staticmethod
    def backward(ctx, grad):
        (flat,) = ctx.saved_tensors
        return take_flat(grad, flat), None, None


def _put(values: np.ndarray, flat: np.ndarray, shape: tuple) -> np.ndarray:
    out = np.zeros(math.prod(shape), values.dtype)
    np.add.at(out, flat, values)
    return out.reshape(shape)


def put_flat(values, flat: np.ndarray, shape: tuple):
    """``Put`` of a tensor, or the same on an array (for a backward run on arrays)."""
    if type(values) is np.ndarray:
        return _put(values, flat, shape)
    return Put.apply(values, flat, shape)


def take_flat(source, flat: np.ndarray):
    """``Pick`` of a tensor, or the same on an array."""
    if type(source) is np.ndarray:
        return source.reshape(-1)[flat]
    return Pick.apply(source, flat)


def _pick_named(backward_name: str) -> type:
    """A ``Pick`` whose graph node bears torch's name for the op's node (``SortBackward0`` ...)."""
    name = backward_name.replace("Backward", "Pick")
    return type(name, (Pick,), {"backward_name": backward_name, "__module__": __name__, "__qualname__": name})


SortPick = _pick_named("SortBackward0")
StableSortPick = _pick_named("SortBackward1")  # torch's sort with stable= given
TopkPick = _pick_named("TopkBackward0")
KthvaluePick = _pick_named("KthvalueBackward0")
MedianPick = _pick_named("MedianBackward1")
NanmedianPick = _pick_named("NanmedianBackward1")
ModePick = _pick_named("ModeBackward0")


class MedianAll(Function):
    """The median of every element (at flat position ``flat``): as torch, its gradient is shared evenly among
    the elements equal to it (NaNs, for a NaN median), so the input is saved and must not change before backward."""

    backward_name = "MedianBackward0"
    torch_saved_tensors = {"result": 1, "self": 0}

    @staticmethod
    def forward(ctx, x, flat):
        out = wrap(x._data.reshape(-1)[flat])
        ctx.save_for_backward(x, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        x, out = ctx.saved_tensors
        share = (x == out).to(x.dtype) + (x != x).to(x.dtype) * (out != out).to(x.dtype)
        return grad * share / share.sum(), None


class NanmedianAll(MedianAll):
    backward_name = "NanmedianBackward0"
    torch_saved_tensors = {"result": 1, "self": 0}


# ----------------------------------------------------------------- positions


def flat_positions(shape: tuple, indices: np.ndarray, axis: int) -> np.ndarray:
    """The flat (C-order) positions, in an array of ``shape``, of the elements ``indices`` names along ``axis``.

    ``indices`` has ``shape``'s dims, sizes that may differ along ``axis``, and may have extra leading dims.

    >>> flat_positions((2, 3), np.array([[2], [0]]), 1)
    array([[2],
           [3]])
    """
    cache_key = (shape, indices.shape, axis)
    known = _OFFSETS.get(cache_key)
    if known is None:
        known = _offsets(shape, indices.shape, axis)
        if indices.size <= 4096:  # small shapes recur (a model's); large offsets are not worth keeping
            if len(_OFFSETS) > 256:
                _OFFSETS.clear()
            _OFFSETS[cache_key] = known
    stride, offset = known
    flat = indices.astype(_INDEX, copy=False)
    return (flat * stride if stride != 1 else flat) + offset


_OFFSETS: dict = {}  # (shape, indices' shape, axis) -> what _offsets gives


def _offsets(shape: tuple, index_shape: tuple, axis: int) -> tuple:
    """(the stride of ``axis``, the flat position of each index's slice start): flat_positions is
    ``indices * stride + offset``."""
    ndim = len(shape)
    strides = [math.prod(shape[d + 1:]) for d in range(ndim)]
    offset = np.zeros((), _INDEX)
    for d in range(ndim):
        if d != axis:
            size = index_shape[len(index_shape) - ndim + d]
            offset = offset + np.arange(size).reshape([-1 if e == d else 1 for e in range(ndim)]) * strides[d]
    offset.flags.writeable = False
    return strides[axis], offset


def orderable(data: np.ndarray) -> np.ndarray:
    """``data`` as NumPy orders it right: bfloat16 as float32, which holds its values exactly (NumPy's sorts
    and partitions misorder bfloat16 where NaNs are); other dtypes as they are."""
    return data.astype(np.float32) if data.dtype == _dtype.BF16 else data


def stable_order(data: np.ndarray, axis: int, descending: bool = False) -> np.ndarray:
    """The stable argsort of ``data`` along ``axis``: NaN is the largest value, ties keep their order, as torch."""
    data = orderable(data)
    if not descending:
        return data.argsort(axis, kind="stable")  # the method: np.argsort is a Python wrapper around it
    # sorting the reversed data ascending and reversing the result keeps ties in their original order
    backwards = np.argsort(np.flip(data, axis), axis, kind="stable")
    return (data.shape[axis] - 1) - np.flip(backwards, axis)


def _sort_order(data: np.ndarray, axis: int, descending: bool, stable: bool) -> np.ndarray:
    """The order sort gives: stable if asked; else, where equal values meet in a slice of more than 16
    elements, the order torch's unstable sort leaves them in (up to 16 it is an insertion sort: stable)."""
    refuse_complex("sort", data, "Sort does not support complex dtypes on CPU", RuntimeError)
    order = stable_order(data, axis, descending)
    if stable or data.shape[axis] <= 16:
        return order
    flagged = _equal_neighbours(np.take_along_axis(data, order, axis), axis)
    return _as_torch_chooses(data, order, axis, flagged, lambda values: _tie_order.sort_indices(values, descending))


def _axis(x: Tensor, dim: int, op: str, position: int = 2) -> int:
    """``dim`` as an axis of ``x``; it must be an int (None is no dim here, as in torch)."""
    if not isinstance(dim, (int, np.integer)):
        raise TypeError(f"{op}(): argument 'dim' (position {position}) must be int, not {type(dim).__name__}")
    return normalize_dims(int(dim), x._data.ndim, op)[0]


class _EveryElement:
    """The default ``dim`` of median and nanmedian: the median of every element (a 0-d tensor)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<every element>"


_EVERY_ELEMENT = _EveryElement()


def _at_least_1d(data: np.ndarray) -> np.ndarray:
    """A 0-d tensor sorts, and is selected from, as its one element (torch gives 0-d results back)."""
    return data.reshape(1) if data.ndim == 0 else data


_tuple_new = tuple.__new__


def _picked(x: Tensor, function: type, indices: np.ndarray, axis: int, result_shape: tuple) -> tuple:
    """(values, indices) as tensors of ``result_shape``: the elements ``indices`` (along ``axis``) names."""
    flat = flat_positions(_at_least_1d(x._data).shape, indices, axis).reshape(result_shape)
    return function.apply(x, flat), wrap(indices.reshape(result_shape).astype(_INDEX, copy=False))


def _selection(x: Tensor, function: type, indices: np.ndarray, axis: int, keepdim: bool, out, kind: type,
               op: str):
    """The named tuple of one element chosen along ``axis`` (``indices`` keeps that dim, of size 1)."""
    shape = x._data.shape
    result_shape = shape[:axis] + ((1,) if keepdim else ()) + shape[axis + 1:] if shape else ()
    values, chosen = _picked(x, function, indices, axis, result_shape)
    return _with_out(kind(values, chosen), out, op, x)


def _with_out(result, out, op: str, x: Tensor):
    """``result`` (a named tuple), or its tensors written into ``out``, a (values, indices) pair, in the named
    tuple torch gives then (``sort_out`` ...)."""
    if out is None:
        return result
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        raise TypeError(f"{op}(): argument 'out' must be a tuple of 2 tensors (values, indices), not {out!r}")
    written = [into_out_of_its_dtype(op, r, o, x) for r, o in zip(result, out)]  # as torch: no cast
    return getattr(return_types, op + "_out")(*written)


# ----------------------------------------------------------------- sort


@ember_function
def sort(input: Tensor, dim: int = -1, descending: bool = False, *, stable: bool | None = None,
         out=None) -> return_types.sort:
    """The values along ``dim`` in order, and where each came from. NaN sorts as the largest value.

    With ``stable=True`` equal values keep their order; without, they come in the order torch's sort
    leaves them in.

    >>> from math import nan
    >>> ember.sort(ember.tensor([2., nan, 1.]), descending=True)
    ember.return_types.sort(
    values=tensor([nan, 2., 1.]),
    indices=tensor([1, 0, 2]))
    """
    x = require_tensor(input, "sort")
    axis = _axis(x, dim, "sort")
    order = _sort_order(_at_least_1d(x._data), axis, descending, bool(stable))
    function = SortPick if stable is None else StableSortPick
    # the named tuple made as tuple makes it: its own __new__ (Python code) costs 0.2 µs more
    return _with_out(_tuple_new(return_types.sort, _picked(x, function, order, axis, x._data.shape)), out, "sort", x)


@ember_function
def argsort(input: Tensor, dim: int = -1, descending: bool = False, *, stable: bool = False) -> Tensor:
    """The indices that sort ``input`` along ``dim`` (``sort``'s indices; NaN as the largest value).

    >>> ember.argsort(ember.tensor([3, 1, 2]))
    tensor([1, 2, 0])
    """
    x = require_tensor(input, "argsort")
    order = _sort_order(_at_least_1d(x._data), _axis(x, dim, "argsort"), descending, stable)
    return wrap(order.reshape(x._data.shape).astype(_INDEX, copy=False))


@ember_function
def msort(input: Tensor, *, out=None) -> Tensor:
    """``input`` sorted along its first dim (the values of ``sort(input, 0)``).

    >>> ember.msort(ember.tensor([[2., 1.], [1., 3.]]))
    tensor([[1., 1.],
            [2., 3.]])
    """
    x = require_tensor(input, "msort")
    order = _sort_order(_at_least_1d(x._data), 0, False, False)
    values = _picked(x, SortPick, order, 0, x._data.shape)[0]
    return values if out is None else into_out_of_its_dtype("msort", values, out, x)  # as torch: no cast into out


@ember_function
def topk(input: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True, *,
         out=None) -> return_types.topk:
    """The ``k`` largest (or smallest) values along ``dim``, in order, and their indices.

    Of equal values, and with ``sorted=False`` in all, the order is torch's (as its kernel leaves them).

    >>> ember.topk(ember.tensor([1., 4., 2., 3.]), 2)
    ember.return_types.topk(
    values=tensor([4., 3.]),
    indices=tensor([1, 3]))
    """
    x = require_tensor(input, "topk")
    refuse_complex("topk", x._data, "topk does not support complex dtypes on CPU", RuntimeError)
    k = whole_number(k, "topk", "k", 2)
    axis = _axis(x, dim, "topk", 3)
    data = _at_least_1d(x._data)
    if data.dtype == np.bool_:
        raise RuntimeError("topk does not support bool dtypes on CPU; convert first, e.g. x.to(ember.uint8)")
    if not 0 <= k <= data.shape[axis]:
        raise RuntimeError(f"topk(): selected index k out of range: k is {k} but the dim has {data.shape[axis]} "
                           f"elements; choose k in [0, {data.shape[axis]}]")
    if not x._data.ndim:  # a 0-d tensor gives its element, for k 0 as for 1, as torch
        return _with_out(return_types.topk(*_picked(x, TopkPick, np.zeros(1, _INDEX), 0, ())), out, "topk", x)
    order = _topk_order(data, axis, k, largest, sorted)
    shape = x._data.shape[:axis] + (k,) + x._data.shape[axis + 1:]
    return _with_out(return_types.topk(*_picked(x, TopkPick, order, axis, shape)), out, "topk", x)


def _topk_order(data: np.ndarray, axis: int, k: int, largest: bool, ordered: bool) -> np.ndarray:
    """The indices of the ``k`` largest (smallest) along ``axis``, in torch's order.

    The order is certain unless the k chosen, or the k-th and the next, have equal values, or the result is
    not to be sorted (torch leaves it as its selection happens to); there, torch's kernel is followed.
    """
    size = data.shape[axis]

    def choose(values: list) -> list:
        return _tie_order.topk_indices(values, k, largest, ordered)

    if 0 < k and _tie_order.selects_by_heap(k, size):
        ordered = True  # torch's heap select leaves the k it keeps sorted, sorted= or not

        def choose(values: list) -> list:  # of the elements that may enter the heap (see _may_enter_heap)
            return _tie_order.heap_selected_indices(values, k, largest)

        def considered(rows: np.ndarray) -> np.ndarray:
            return _may_enter_heap(rows, k, largest)
    else:
        considered = None
    if ordered and 0 < k and 4 * (k + 1) < size:  # a few of many: partition first, sort the few
        nearest, stable = _partitioned(data, axis, k + 1, largest)
        chosen = np.take(nearest, np.arange(k), axis)
        flagged = _equal_neighbours(np.take_along_axis(data, nearest, axis), axis)
        if flagged.sum() * size <= _tie_order.EMULATED_AT_MOST:
            return _as_torch_chooses(data, chosen, axis, flagged, choose, considered)
        if stable:  # too many tied slices to follow torch in: the stable order, as below, without a full sort
            return chosen
    full = stable_order(data, axis, descending=largest)
    order = np.take(full, np.arange(k), axis)
    if ordered:
        nearest = np.take_along_axis(data, np.take(full, np.arange(min(k + 1, size)), axis), axis)
        flagged = _equal_neighbours(nearest, axis) if k else np.zeros_like(nearest, bool)
    else:
        flagged = np.ones(data.shape[:axis] + (1,) + data.shape[axis + 1:], bool)
    return _as_torch_chooses(data, order, axis, flagged, choose, considered)


def _may_enter_heap(rows: np.ndarray, k: int, largest: bool) -> np.ndarray:
    """Per row (a slice), where an element may be taken into the heap of topk's partial sort: the first ``k``,
    and those better than the k-th best of some block of 16 (or k) elements wholly before them; the others are
    no better than the heap's worst when they come, which the heap select passes over. Everywhere in rows
    holding NaN, and for 64-bit integers (compared here as doubles)."""
    work = orderable(rows)
    if work.dtype.kind not in "fiu" or (work.dtype.kind in "iu" and work.dtype.itemsize > 4):
        return np.ones(rows.shape, bool)
    work = work.astype(np.float64) if largest else -work.astype(np.float64)
    block = max(k, 16)
    count = work.shape[1] // block
    blocks = work[:, :count * block].reshape(len(work), count, block)
    bounds = np.maximum.accumulate(np.partition(blocks, block - k, 2)[:, :, block - k], 1)
    lower = np.full(work.shape, -np.inf)
    lower[:, block:] = np.repeat(bounds, block, 1)[:, :work.shape[1] - block]
    result = work > lower
    result[:, :k] = True
    result[np.isnan(work).any(1)] = True
    return result


def _partitioned(data: np.ndarray, axis: int, count: int, largest: bool) -> tuple:
    """(the indices of the ``count`` largest (smallest) along ``axis``, sorted by value (NaN is the largest);
    whether they are the stable order's first, as ``stable_order`` would give them, equal values too)."""
    data = orderable(data)
    if count <= _MOST_PASSES and data.dtype.kind in "fiu":
        few = _one_by_one(data, axis, count, largest)
        if few is not None:
            return few, True
    size = data.shape[axis]
    split = np.argpartition(data, size - count if largest else count - 1, axis)
    few = np.take(split, np.arange(size - count, size) if largest else np.arange(count), axis)
    return np.take_along_axis(few, stable_order(np.take_along_axis(data, few, axis), axis, largest), axis), False


_MOST_PASSES = 16  # beyond, NumPy's partition costs less than a pass over the data per element chosen


def _one_by_one(data: np.ndarray, axis: int, count: int, largest: bool) -> np.ndarray | None:
    """``_partitioned``'s indices by ``count`` passes of argmax (argmin), each taking the chosen element out of
    the next: NumPy's partition takes 12 us a row of 1,000, an argmax 0.15. Of equal values the first comes
    first (``_partitioned``'s callers reorder those as torch does). None where an element taken out could be
    chosen again (the data holds the value that stands in for it), or where NaN, the largest, would be taken
    as the smallest: then the partition decides."""
    choose = np.argmax if largest else np.argmin
    if data.dtype.kind == "f":
        removed = -np.inf if largest else np.inf
    else:
        info = np.iinfo(data.dtype)
        removed = info.min if largest else info.max
    moved = np.array(np.moveaxis(data, axis, -1), order="C")  # a copy, one slice a row: plain indexing per pass
    work = moved.reshape(-1, data.shape[axis])
    rows = np.arange(len(work))
    chosen = np.empty((len(work), count), _INDEX)
    for n in range(count):
        index = choose(work, 1)
        values = work[rows, index]
        if (values == removed).any() or (not largest and data.dtype.kind == "f" and np.isnan(values).any()):
            return None
        work[rows, index] = removed
        chosen[:, n] = index
    return np.moveaxis(chosen.reshape(moved.shape[:-1] + (count,)), -1, axis)


# ----------------------------------------------------------------- one element per slice


def _reduced_axis(x: Tensor, dim: int, op: str, position: int = 2) -> int:
    """``dim`` as an axis to choose one element along, which must have elements (as torch)."""
    axis = _axis(x, dim, op, position)
    if x._data.ndim and x._data.shape[axis] == 0:
        raise IndexError(f"{op}(): Expected reduction dim {dim} to have non-zero size; the dim is empty, so there "
                         "is no element to choose")
    return axis


def _chosen(order: np.ndarray, positions: np.ndarray, axis: int) -> np.ndarray:
    """The indices at ``positions`` (one per slice, keeping the dim) of the sorted ``order``."""
    return np.take_along_axis(order, positions.astype(_INDEX, copy=False), axis)


def _tied(data: np.ndarray, indices: np.ndarray, axis: int) -> np.ndarray:
    """Per slice (keeping ``axis``): whether the element ``indices`` chose has an equal (NaNs are equal here)."""
    return np.count_nonzero(_equal_to(data, np.take_along_axis(data, indices, axis)), axis, keepdims=True) > 1


def _equal_to(data: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Where ``data`` equals ``values`` (broadcast against it); NaNs are equal here."""
    same = data == values
    if _dtype.kind(data.dtype) == "f":
        same |= np.isnan(data) & np.isnan(values)
    return same


def _stable_picks(data: np.ndarray, axis: int, positions: np.ndarray) -> tuple:
    """(the indices ``stable_order(data, axis)`` holds at ``positions``, one per slice keeping ``axis``; whether
    each chosen element has an equal), found without sorting.

    A partition finds the value at each position; the index is that of the first element equal to it, or
    where the value repeats, of the equal element the stable order puts there: the ``r``-th in the slice,
    ``r`` being the position less the number of elements sorted before the value.
    """
    data = orderable(data)
    positions = positions.astype(_INDEX, copy=False)
    values = np.take_along_axis(np.partition(data, np.unique(positions), axis), positions, axis)
    equal = _equal_to(data, values)
    tied = np.count_nonzero(equal, axis, keepdims=True) > 1
    indices = equal.argmax(axis, keepdims=True)
    if tied.any():
        indices = _among_equals(data, axis, positions, values, equal, tied, indices)
    return indices, tied


def _among_equals(data: np.ndarray, axis: int, positions: np.ndarray, values: np.ndarray, equal: np.ndarray,
                  tied: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """``indices`` with each ``tied`` slice's replaced by the index of the equal element at its position in
    the stable order (the work runs over the tied slices alone: ties are rare in floating point data)."""
    which = np.flatnonzero(_rows_of(tied, axis))
    rows, row_values = _rows_of(data, axis)[which], _rows_of(values, axis)[which]
    before = np.count_nonzero(rows < row_values, 1, keepdims=True)
    if _dtype.kind(data.dtype) == "f":  # every number sorts before a NaN
        before = np.where(np.isnan(row_values), np.count_nonzero(~np.isnan(rows), 1, keepdims=True), before)
    rank = _rows_of(positions, axis)[which] - before
    result = _rows_of(indices, axis).copy()
    result[which] = (np.cumsum(_rows_of(equal, axis)[which], 1, dtype=_INDEX) > rank).argmax(1, keepdims=True)
    moved = np.moveaxis(indices, axis, -1)
    return np.moveaxis(result.reshape(moved.shape), -1, axis)


def _rows_of(data: np.ndarray, axis: int) -> np.ndarray:
    """``data`` as a 2-d array with one slice along ``axis`` per row."""
    return np.moveaxis(data, axis, -1).reshape(-1, data.shape[axis])


def _as_torch_chooses(data: np.ndarray, indices: np.ndarray, axis: int, flagged: np.ndarray, choose,
                      considered=None) -> np.ndarray:
    """``indices`` (along ``axis``, per slice), with each ``flagged`` slice's chosen again by ``choose(values)``:
    the index, or the indices in order, that torch's kernel picks among equal elements (see ``_tie_order``).
    ``considered(rows)``, if given, says which elements of the flagged slices (one a row) ``choose`` needs to
    see, in order: it gets those alone."""
    if not data.size:
        return indices
    rows = np.moveaxis(data, axis, -1).reshape(-1, data.shape[axis])
    which = np.flatnonzero(np.moveaxis(flagged, axis, -1))
    if not len(which) or len(which) * rows.shape[1] > _tie_order.EMULATED_AT_MOST:
        return indices
    moved = np.moveaxis(indices, axis, -1)
    result = moved.reshape(len(rows), -1).copy()
    tied = rows[which]
    for row, seen in zip(which, np.ones(tied.shape, bool) if considered is None else considered(tied)):
        positions = np.flatnonzero(seen)
        result[row] = positions[choose(rows[row, positions].tolist())]
    return np.moveaxis(result.reshape(moved.shape), -1, axis)


def _equal_neighbours(ordered: np.ndarray, axis: int) -> np.ndarray:
    """Per slice (keeping ``axis``): whether two neighbours along ``axis`` are equal (NaNs are equal here)."""
    o = np.moveaxis(ordered, axis, -1)
    same = o[..., 1:] == o[..., :-1]
    if _dtype.kind(o.dtype) == "f":
        same |= np.isnan(o[..., 1:]) & np.isnan(o[..., :-1])
    return np.expand_dims(same.any(-1), axis)


@ember_function
def kthvalue(input: Tensor, k: int, dim: int = -1, keepdim: bool = False, *,
             out=None) -> return_types.kthvalue:
    """The ``k``-th smallest value along ``dim`` (``k`` counts from 1) and its index.

    >>> ember.kthvalue(ember.tensor([3., 1., 2.]), 2)
    ember.return_types.kthvalue(
    values=tensor(2.),
    indices=tensor(2))
    """
    x = require_tensor(input, "kthvalue")
    refuse_complex("kthvalue", x._data)
    k = whole_number(k, "kthvalue", "k", 2)
    if x._data.dtype == np.bool_:
        raise NotImplementedError('"kthvalue_cpu" not implemented for \'Bool\'; convert first, e.g. x.to(ember.uint8)')
    axis = _reduced_axis(x, dim, "kthvalue", 3)
    data = _at_least_1d(x._data)
    if not 1 <= k <= data.shape[axis]:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {dim}: k is {k}, the dim has "
                           f"{data.shape[axis]} elements; choose k in [1, {data.shape[axis]}]")
    indices, tied = _stable_picks(data, axis, np.full(_one_along(data.shape, axis), k - 1, _INDEX))
    indices = _as_torch_chooses(data, indices, axis, tied, lambda values: _tie_order.kth_index(values, k - 1))
    return _selection(x, KthvaluePick, indices, axis, keepdim, out, return_types.kthvalue, "kthvalue")


def _one_along(shape: tuple, axis: int) -> tuple:
    """``shape`` with size 1 along ``axis``: one element per slice."""
    return shape[:axis] + (1,) + shape[axis + 1:]


def _median_positions(data: np.ndarray, axis: int, ignore_nan: bool) -> np.ndarray:
    """Per slice (keeping ``axis``), the sorted position of the lower median.

    NaN sorts last. median gives the first NaN of a slice that has one; nanmedian the lower median of the
    other values (the first NaN if all are NaN).
    """
    size = data.shape[axis]
    counted = np.count_nonzero(~np.isnan(data), axis, keepdims=True) if _dtype.kind(data.dtype) == "f" else np.full(
        _one_along(data.shape, axis), size)
    if ignore_nan:
        return np.maximum(counted - 1, 0) // 2
    return np.where(counted < size, counted, (size - 1) // 2)


_NO_MEDIAN_KERNEL = (np.bool_, np.uint16, np.uint32, np.uint64)  # torch's median kernels leave these out


def _nan_as(dtype: np.dtype):
    """NaN converted to ``dtype`` as torch's C++ converts it on x86: a float's nan, True, or the bits the
    processor's conversion leaves (0x80000000 for 32 bits or fewer, 0x8000000000000000 for 64, cut to the width)."""
    if _dtype.kind(dtype) == "f":
        return np.nan
    if dtype == np.bool_:
        return True
    if dtype in (np.int32, np.int64):
        return np.iinfo(dtype).min
    return 2 ** 63 if dtype == np.uint64 else 0


def _median(x: Tensor, dim, keepdim: bool, out, op: str, ignore_nan: bool):
    whole = dim is _EVERY_ELEMENT
    # the arguments first, then the dtype, as torch's argument parser comes before its kernels
    if whole and (keepdim or out is not None):
        raise TypeError(f'{op}() missing 1 required positional arguments: "dim"; keepdim= and out= go with '
                        f"a dim, e.g. x.{op}(0, keepdim=True)")
    if not whole and not isinstance(dim, (int, np.integer)):
        _axis(x, dim, op)  # (which refuses it)
    refuse_complex(op, x._data)
    if whole:
        data = x._data.reshape(-1)
        if data.size == 0:  # the median of nothing: torch's nan, converted to the dtype (no kernel runs)
            return wrap(np.asarray(_nan_as(data.dtype), data.dtype))
        axis = 0
    else:
        axis = _reduced_axis(x, dim, op)  # (an empty dim is named before a bool input is refused, as torch)
        data = _at_least_1d(x._data)
    if x._data.dtype in _NO_MEDIAN_KERNEL:
        kernel, name = f"{op}_cpu" if whole else f"{op}_out", _dtype.scalar_type_name(x._data.dtype)
        raise NotImplementedError(f'"{kernel}" not implemented for \'{name}\'; convert first, e.g. x.to(ember.int64)')
    indices, _ = _stable_picks(data, axis, _median_positions(data, axis, ignore_nan))
    if ignore_nan and _dtype.kind(data.dtype) == "f" and data.shape[axis]:  # a slice of NaNs alone: torch's choice
        indices = np.where(np.isnan(data).all(axis, keepdims=True), _tie_order.first_of_equivalent(data.shape[axis]),
                           indices)
    named = {"median": (MedianPick, MedianAll), "nanmedian": (NanmedianPick, NanmedianAll)}[op]
    if whole:
        return named[1].apply(x, indices.reshape(()))
    return _selection(x, named[0], indices, axis, keepdim, out, getattr(return_types, op), op)


@ember_function
def median(input: Tensor, dim: int = _EVERY_ELEMENT, keepdim: bool = False, *, out=None):
    """The lower median: of every element (a 0-d tensor), or along ``dim`` (values and indices).

    A NaN makes the median NaN (see ``nanmedian``).

    >>> ember.median(ember.tensor([4., 1., 3., 2.]))
    tensor(2.)
    """
    return _median(require_tensor(input, "median"), dim, keepdim, out, "median", ignore_nan=False)


@ember_function
def nanmedian(input: Tensor, dim: int = _EVERY_ELEMENT, keepdim: bool = False, *, out=None):
    """The lower median of the values that are not NaN: of every element, or along ``dim`` (values and indices).

    >>> from math import nan
    >>> ember.nanmedian(ember.tensor([4., nan, 1., 3.]))
    tensor(3.)
    """
    return _median(require_tensor(input, "nanmedian"), dim, keepdim, out, "nanmedian", ignore_nan=True)


def _mode_indices(data: np.ndarray, axis: int) -> np.ndarray:
    """Per slice (keeping ``axis``): the index of the most frequent value's last occurrence.

    Of values equally frequent, the smallest wins; NaNs count as one value, the largest. (Where torch's
    choice differs from this, slices with NaN or of more than 16 elements, ``mode`` corrects it.)
    """
    rows = np.moveaxis(data, axis, -1).reshape(-1, data.shape[axis])
    order = stable_order(rows, 1)
    ordered = np.take_along_axis(rows, order, 1)
    same = ordered[:, 1:] == ordered[:, :-1]
    if _dtype.kind(data.dtype) == "f":
        same |= np.isnan(ordered[:, 1:]) & np.isnan(ordered[:, :-1])
    starts = np.concatenate([np.ones((len(rows), 1), bool), ~same], axis=1)
    run = np.cumsum(starts, axis=1) - 1 + np.arange(len(rows))[:, None] * rows.shape[1]  # run ids, unique per row
    counts = np.bincount(run.reshape(-1), minlength=rows.size).reshape(rows.shape)
    best = counts.argmax(axis=1)  # the first of the longest runs: the smallest value
    last = np.take_along_axis(np.cumsum(counts, axis=1), best[:, None], 1) - 1
    indices = np.take_along_axis(order, last, 1)
    kept = data.shape[:axis] + data.shape[axis + 1:] + (1,)
    return np.moveaxis(indices.reshape(kept), -1, axis)


@ember_function
def mode(input: Tensor, dim: int = -1, keepdim: bool = False, *, out=None) -> return_types.mode:
    """The most frequent value along ``dim`` (the smallest of equally frequent ones) and an index of it.

    Which of its occurrences is torch's choice (as its kernel's sort leaves them); so is the value of a
    slice with NaNs, where each NaN counts on its own.

    >>> ember.mode(ember.tensor([2, 1, 2, 3]))
    ember.return_types.mode(
    values=tensor(2),
    indices=tensor(2))
    """
    x = require_tensor(input, "mode")
    refuse_complex("mode", x._data)
    axis = _reduced_axis(x, dim, "mode")
    data = _at_least_1d(x._data)
    indices = _mode_indices(data, axis)
    # torch's sort keeps equal elements in order in slices of up to 16 elements without NaN; not beyond
    unordered = _tied(data, indices, axis) & (data.shape[axis] > 16)
    if _dtype.kind(data.dtype) == "f":
        unordered |= np.isnan(data).any(axis, keepdims=True)
    indices = _as_torch_chooses(data, indices, axis, unordered, _tie_order.mode_index)
    return _selection(x, ModePick, indices, axis, keepdim, out, return_types.mode, "mode")


# ----------------------------------------------------------------- quantiles

_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _check_quantile(x: Tensor, q, interpolation: str, op: str) -> np.ndarray:
    """``q`` as an array of x's dtype, after torch's checks of the input, ``q`` and ``interpolation``."""
    data = x._data
    # torch parses its arguments before it looks at them: a q of the wrong kind is a TypeError whatever the input
    if not isinstance(q, (Tensor, int, float, np.integer, np.floating)):
        raise TypeError(f"{op}() received an invalid combination of arguments: q is {type(q).__name__}; it must be "
                        f"a number or a tensor, e.g. {op}(x, 0.5) or {op}(x, ember.tensor([0.25, 0.75]))")
    if data.dtype.kind != "f" or data.dtype.itemsize < 4:
        raise RuntimeError(f"{op}() input tensor must be either float or double dtype, got {data.dtype}; "
                           "convert first, e.g. x.double()")
    if data.size == 0:
        raise RuntimeError(f"{op}() input tensor must be non-empty")
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f"{op}() interpolation must be one of linear, lower, higher, midpoint or nearest, "
                           f"but got {interpolation}")
    if isinstance(q, Tensor):
        if q._data.ndim > 1:
            raise RuntimeError(f"{op}() q must be a scalar or 1D tensor, got {q._data.ndim} dims")
        if q._data.dtype != data.dtype:
            raise RuntimeError(f"{op}() q tensor must be same dtype as the input tensor: q is {q._data.dtype}, "
                               f"input is {data.dtype}")
        if not ((q._data >= 0) & (q._data <= 1)).all():
            raise RuntimeError(f"{op}() q values must be in the range [0, 1], got {q._data.tolist()}")
        return q._data
    if not 0 <= q <= 1:
        raise RuntimeError(f"{op}() q must be in the range [0, 1] but got {q}")
    return np.asarray(q, data.dtype)


def _ranks(data: np.ndarray, axis: int, q: np.ndarray, ignore_nan: bool) -> np.ndarray:
    """The fractional sorted positions of the quantiles ``q`` (leading dims ``q.shape``), per slice, and how
    fast each moves with its ``q`` (0 where it does not depend on it).

    As torch: a slice with a NaN has the quantile NaN (the last position), unless NaNs are ignored; then a
    slice of NaNs alone has NaN (position 0).
    """
    size, number = data.shape[axis], data.dtype.type  # in the input's dtype, as torch computes them
    valid = (~np.isnan(data)).sum(axis, keepdims=True)
    q = q.reshape(q.shape + (1,) * data.ndim)
    if ignore_nan:
        scale = np.maximum(valid.astype(data.dtype) - number(1), number(0))
        return np.maximum(q * (valid.astype(data.dtype) - number(1)), number(0)), scale
    scale = np.where(valid < size, number(0), number(size - 1))
    return np.where(valid < size, number(size - 1), q * number(size - 1)), scale


def _quantile(x: Tensor, q, dim, keepdim: bool, interpolation: str, out, op: str) -> Tensor:
    qs = _check_quantile(x, q, interpolation, op)
    data, axis = (x._data.reshape(-1), 0) if dim is None else (_at_least_1d(x._data), _axis(x, dim, op))
    order = _sort_order(data, axis, False, False)  # torch's sort: its order of ties decides where gradients go
    rank, scale = _ranks(data, axis, qs, op == "nanquantile")
    below, above = np.floor(rank), np.ceil(rank)
    if interpolation == "nearest":
        below = above = np.round(rank)  # half to even, as torch rounds
    elif interpolation == "lower":
        above = below
    elif interpolation == "higher":
        below = above
    shape = _quantile_shape(x._data.shape, qs.shape, axis if dim is not None else None, keepdim)
    lower = _quantile_pick(x, data.shape, order, below, axis, shape)
    if interpolation in ("lower", "higher", "nearest"):
        result = lower
    else:
        upper = _quantile_pick(x, data.shape, order, above, axis, shape)
        if interpolation == "midpoint":
            result = Lerp.apply(lower, upper, np.full(shape, 0.5, rank.dtype), None, None)
        else:  # the weight moves with q: a q that requires grad gets one
            rates = np.broadcast_to(scale, rank.shape).reshape(shape)
            q_tensor = q if isinstance(q, Tensor) else None
            result = Lerp.apply(lower, upper, (rank - below).reshape(shape), q_tensor, rates)
    return result if out is None else into_out_of_its_dtype(op, result, out, x)


class Lerp(Function):
    """``start + weight * (end - start)`` for a ``weight`` array of their dtype, as torch's lerp computes it:
    from the nearer end, the product and the sum rounded once (a fused multiply-add).

    The weight may move with the quantiles ``q`` (leading dims of the result), at ``rates``: then ``q``
    has the gradient ``(end - start) * rates``, summed over the other dims.
    """

    backward_name = "LerpBackward1"
    backward_on_arrays = True  # products with constant arrays, and sums

    @staticmethod
    def forward(ctx, start, end, weight, q, rates):
        ctx.weight, ctx.rates, ctx.q_dims = weight, rates, q._data.ndim if isinstance(q, Tensor) else 0
        if ctx.needs_input_grad[3]:
            ctx.save_for_backward(start, end, q)
        return wrap(quietly(IGNORE_ALL, _fused_lerp, start._data, end._data, weight))  # inf - inf: nan, quietly

    @staticmethod
    def backward(ctx, grad):
        arrays = type(grad) is np.ndarray
        if not ctx.needs_input_grad[3]:
            weight = ctx.weight if arrays else wrap(ctx.weight)
            return grad * (1 - weight), grad * weight, None, None, None
        start, end, q = ctx.saved_tensors
        moves = ctx.rates != 0  # where q moves the weight: elsewhere (a slice made NaN) q gets nothing, not 0 * nan
        if arrays:
            weight = ctx.weight
            moved = quietly(IGNORE_ALL, _moved, moves, grad, start, end, ctx.rates)
        else:  # the weight as a function of q, so that the gradients of start and end have q's derivative too
            lead = q.reshape(q.shape + (1,) * (grad.ndim - ctx.q_dims))
            moves, rates, zero = wrap(moves), wrap(ctx.rates), wrap(np.zeros((), grad._data.dtype))
            weight = wrap(ctx.weight - lead._data * ctx.rates) + where(moves, lead * rates, zero)
            moved = where(moves, grad * (end - start) * rates, zero)
        q_grad = moved.sum(tuple(range(ctx.q_dims, moved.ndim))) if moved.ndim > ctx.q_dims else moved
        return grad * (1 - weight), grad * weight, None, q_grad, None


def _moved(moves: np.ndarray, grad: np.ndarray, start: np.ndarray, end: np.ndarray, rates: np.ndarray):
    return np.where(moves, grad * (end - start) * rates, 0)


def _fused_lerp(start: np.ndarray, end: np.ndarray, weight: np.ndarray) -> np.ndarray:
    wide = np.longdouble if start.dtype == np.float64 else np.float64  # holds the product (near) exactly
    near = weight < 0.5
    base = np.where(near, start, end).astype(wide)
    factor = np.where(near, weight, weight - 1).astype(wide)
    return (base + factor * (end - start).astype(wide)).astype(start.dtype)


def _quantile_pick(x: Tensor, shape: tuple, order: np.ndarray, positions: np.ndarray, axis: int,
                   result_shape: tuple) -> Tensor:
    leading = positions.ndim - order.ndim
    indices = np.take_along_axis(order.reshape((1,) * leading + order.shape), positions.astype(_INDEX), axis + leading)
    return Pick.apply(x, flat_positions(shape, indices, axis).reshape(result_shape))


def _quantile_shape(shape: tuple, q_shape: tuple, axis: int | None, keepdim: bool) -> tuple:
    """The result's shape: ``q``'s dims first, then ``shape`` reduced over ``axis`` (every dim if None)."""
    if axis is None:
        reduced = (1,) * len(shape) if keepdim else ()
    elif not shape:
        reduced = ()
    else:
        reduced = shape[:axis] + ((1,) if keepdim else ()) + shape[axis + 1:]
    return q_shape + reduced


@ember_function
def quantile(input: Tensor, q, dim: int | None = None, keepdim: bool = False, *, interpolation: str = "linear",
             out=None) -> Tensor:
    """The ``q``-th quantiles (``q`` a number or a 1-D tensor in [0, 1]) of every element or along ``dim``.

    Between two elements the quantile is found by ``interpolation``: 'linear', 'lower', 'higher', 'midpoint'
    or 'nearest'. A 1-D ``q`` adds a leading dim. A NaN makes the quantile NaN (see ``nanquantile``).

    >>> ember.quantile(ember.tensor([1., 2., 3., 4.]), 0.5)
    tensor(2.5000)
    """
    return _quantile(require_tensor(input, "quantile"), q, dim, keepdim, interpolation, out, "quantile")


@ember_function
def nanquantile(input: Tensor, q, dim: int | None = None, keepdim: bool = False, *, interpolation: str = "linear",
                out=None) -> Tensor:
    """``quantile`` of the values that are not NaN (NaN where a slice has nothing else).

    >>> from math import nan
    >>> ember.nanquantile(ember.tensor([1., nan, 3.]), 0.5)
    tensor(2.)
    """
    return _quantile(require_tensor(input, "nanquantile"), q, dim, keepdim, interpolation, out, "nanquantile")
