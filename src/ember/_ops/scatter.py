"""Gather and scatter along a dim, and the index_* ops that pick or write whole slices.

``gather`` reads ``out[i][j] = x[i][index[i][j]]`` (for ``dim=1``); ``scatter`` writes the other way. The
index_* ops take one index per slice: ``index_select(x, 0, idx)`` is ``x[idx]``. Each backward is written with
the others (gather's with scatter_add, scatter_add's with gather ...), so every order of derivative works.

>>> import ember
>>> x = ember.tensor([[1., 2.], [3., 4.]])
>>> x.gather(1, ember.tensor([[1], [0]]))
tensor([[2.],
        [3.]])
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from ember import _dtype
from ember._ops._jvp import linear_jvp
from ember._ops._quiet import IGNORE_INVALID, IGNORE_OVER, quietly
from ember._ops._support import (
    along, element_of, ember_function, normalize_dims, require_tensor, undispatched, user_stacklevel, whole_number,
    wrap,
)
from ember._ops.arithmetic import where
from ember._ops.out import into_out, into_out_of_its_dtype
from ember._tensor import Tensor, _warn_once
from ember.autograd.saved_attributes import input_sizes
from ember.autograd.function import Function
from ember.autograd.grad_mode import state as _grad

_INT_INDEX = ("int32", "int64")
_LONG_INDEX = ("int64",)
_INT32, _INT64 = np.dtype(np.int32), np.dtype(np.int64)
_UNSIGNED = {_INT32: np.dtype(np.uint32), _INT64: np.dtype(np.uint64)}
_largest = np.maximum.reduce  # the ufunc's own reduction, without ndarray.max's Python wrapper


# ----------------------------------------------------------------- checks shared by the ops


def index_data(op: str, index, allowed: tuple = _INT_INDEX, position: int = 3,
               error: type = RuntimeError) -> np.ndarray:
    """The array of an index tensor, which must be one of the ``allowed`` integer dtypes (names); else ``error``
    (torch's type differs between the ops)."""
    index = require_tensor(index, op, position, "index")
    data = index._data
    dtype = data.dtype
    if not (dtype is _INT64 or dtype is _INT32 and allowed is _INT_INDEX) and dtype.name not in allowed:
        wanted = "int64" if allowed == _LONG_INDEX else "int32/int64"
        raise error(f"{op}(): Expected dtype {wanted} for index, got {_dtype.from_numpy_dtype(data.dtype)}; "
                    "convert it first, e.g. index.long()")
    return data


def checked_dim(op: str, dim, ndim: int) -> int:
    if type(dim) is int and 0 <= dim < ndim:  # the usual call
        return dim
    if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)):
        raise TypeError(f"{op}(): argument 'dim' must be int, not {type(dim).__name__}")
    return normalize_dims(int(dim), ndim, op)[0]


_FEW = 64  # indices up to this many are checked by Python's min and max: NumPy's reductions cost 1 µs a call


def in_bounds(index: np.ndarray, size: int, low: int = 0) -> bool:
    """Whether every element of ``index`` (integers, not empty) is in ``[low, size)`` (``low`` 0 or below)."""
    if index.size <= _FEW:  # (a list of a few ints is made, and searched, in a third of a reduction's time)
        items = index.ravel().tolist()
        return min(items) >= low and max(items) < size
    if low:
        return index.min() >= low and index.max() < size
    unsigned = _UNSIGNED.get(index.dtype)
    if unsigned is None:
        return index.min() >= 0 and index.max() < size
    return _largest(index.view(unsigned), None) < size  # a negative index, seen as unsigned, is larger than any size


def check_bounds(op: str, index: np.ndarray, size: int, dim: int, negative: bool = False,
                 error: type = RuntimeError) -> None:
    """Every index in ``[0, size)`` (or ``[-size, size)`` where the op counts from the end)."""
    low = -size if negative else 0
    if not index.size or in_bounds(index, size, low):
        return
    bad = index[(index < low) | (index >= size)].flat[0]
    raise error(f"{op}(): index {bad} is out of bounds for dimension {dim} with size {size}")


def _at_least_1d(data: np.ndarray) -> np.ndarray:
    return data.reshape(1) if data.ndim == 0 else data


def _check_same_dtype(op: str, x: Tensor, src: Tensor, name: str = "src") -> None:
    if x._data.dtype != src._data.dtype:
        raise RuntimeError(
            f"{op}(): Expected self.dtype to be equal to {name}.dtype, got {_dtype.from_numpy_dtype(x._data.dtype)} "
            f"and {_dtype.from_numpy_dtype(src._data.dtype)}; convert one, e.g. {name}.to(self.dtype)")


def _check_gather_shapes(op: str, shape: tuple, dim: int, index_shape: tuple, src_shape: tuple | None) -> None:
    """torch's rules: index has self's number of dims (0-d counting as 1-d), is no larger than self apart from
    ``dim`` and, for scatter, no larger than src in any dim."""
    ndim = max(len(shape), 1)
    if max(len(index_shape), 1) != ndim:
        raise RuntimeError(f"{op}(): Index tensor must have the same number of dimensions as self tensor "
                           f"(index is {list(index_shape)}, self is {list(shape)})")
    if src_shape is not None and 0 < len(src_shape) < len(index_shape):  # torch reads src's sizes: out of range
        raise IndexError(f"{op}(): Dimension out of range: src has {len(src_shape)} dimension(s), the index "
                         f"{len(index_shape)}; give src the index's number of dimensions")
    if src_shape is not None and max(len(src_shape), 1) != ndim:
        raise RuntimeError(f"{op}(): Index tensor must have the same number of dimensions as src tensor "
                           f"(index is {list(index_shape)}, src is {list(src_shape)})")
    if index_shape == shape and (src_shape is None or src_shape == shape):
        return  # the usual call: nothing can be too large
    if not index_shape or not math.prod(index_shape):
        return
    too_large = False  # a loop: in Python 3.11 each generator expression is a call of its own
    for d, (n, m) in enumerate(zip(index_shape, shape or (1,))):
        if n > m and d != dim:
            too_large = True
    if src_shape is not None:
        for n, m in zip(index_shape, src_shape or (1,)):
            if n > m:
                too_large = True
    if too_large:
        against = f" and to be no larger than src {list(src_shape)}" if src_shape is not None else ""
        where = _first_too_large(shape, dim, index_shape, src_shape)
        raise RuntimeError(f"{op}(): Size does not match at dimension {where}: expected index {list(index_shape)} "
                           f"to be no larger than self {list(shape)} apart from dimension {dim}{against}")


def _first_too_large(shape: tuple, dim: int, index_shape: tuple, src_shape: tuple | None) -> int:
    """The first dim where the index is larger than self (apart from ``dim``) or than src."""
    return next(d for d, n in enumerate(index_shape)
                if n > (shape or (1,))[d] and d != dim or src_shape is not None and n > (src_shape or (1,))[d])


_CHECKED: dict = {}  # (self's, the index's and src's shapes, dim) -> (axis, the other dims' grids, size) once checked


def _checked_key(op: str, x: Tensor, dim, index, src: Tensor | None = None, position: int = 3) -> tuple:
    """(dim, key) for gather and scatter: the checked dim and the NumPy key of ``_along``.

    Shapes and a dim that passed the checks once pass them again: the usual call only reads what it found then
    and checks the bounds of the index (one reduction).
    """
    found = _remembered(x, dim, index, src)
    if found is not None and in_bounds(index._data, found[2]):
        return found[0], found[1]
    return _checked_key_slowly(op, x, dim, index, src, position)


def _remembered(x: Tensor, dim, index, src: Tensor | None) -> tuple | None:
    """(axis, key, size of x along it) for an int64 or int32 index whose shape, with x's, src's and ``dim``, passed
    ``_checked_key_slowly``'s checks before; else None. The bounds of the index are not checked."""
    data = index._data if type(index) is Tensor else None
    if data is not None and type(dim) is int:
        found = _CHECKED.get((x._data.shape, data.shape, None if src is None else src._data.shape, dim))
        dtype = data.dtype
        if found is not None and (dtype is _INT64 or dtype is _INT32):
            axis, grids, size = found
            key = list(grids)
            key[axis] = data
            return axis, tuple(key), size
    return None


def _checked_key_slowly(op: str, x: Tensor, dim, index, src: Tensor | None, position: int) -> tuple:
    if isinstance(index, Tensor) and not index._data.size:
        return _empty_key(op, x, dim, index._data.shape)
    data = index_data(op, index, position=position)
    shape = x._data.shape
    given = dim
    dim = checked_dim(op, dim, len(shape))
    src_shape = None if src is None else src._data.shape
    _check_gather_shapes(op, shape, dim, data.shape, src_shape)
    data = _at_least_1d(data)
    size = _at_least_1d(x._data).shape[dim]
    check_bounds(op, data, size, dim)
    key = along(data, dim)
    if data.size and type(given) is int and data.ndim == index._data.ndim:  # remembered for the next call
        if len(_CHECKED) > 256:
            _CHECKED.clear()
        _CHECKED[(shape, data.shape, src_shape, given)] = (dim, key[:dim] + (None,) + key[dim + 1:], size)
    return dim, key


def _empty_key(op: str, x: Tensor, dim, index_shape: tuple) -> tuple:
    """(dim, key) for an empty index: as torch, only the dim is checked (an index that reads and writes nothing
    may have any shape and dtype); the key reads nothing, in the index's shape."""
    dim = checked_dim(op, dim, x._data.ndim)
    return dim, (np.zeros(index_shape, np.intp),) * max(x._data.ndim, 1)


def _source_region(src: np.ndarray, index_shape: tuple) -> np.ndarray:
    """The part of src that scatter reads: its first ``index_shape`` elements in each dim (none for an empty
    index, whatever src's shape)."""
    if not math.prod(index_shape):
        return np.zeros(index_shape, src.dtype)
    return _at_least_1d(src)[tuple(slice(0, n) for n in index_shape or (1,))]


def _scattered(x: Tensor, index: Tensor, key: tuple, src, ufunc: np.ufunc | None) -> Tensor:
    """A copy of ``x`` with ``src`` (a tensor, or a number as an array) written at ``key``, or combined by ``ufunc``
    (each repeated index combining its own value)."""
    out = x._data.copy()
    values = _source_region(src._data, index._data.shape) if isinstance(src, Tensor) else src
    if ufunc is None:
        _at_least_1d(out)[key] = values
    else:
        combine_at_checked(_at_least_1d(out), key, values, ufunc)
    return wrap(out)


def combine_at_checked(out: np.ndarray, key: tuple, values, ufunc: np.ufunc) -> None:
    """``combine_at`` for a key of checked indices (one array per dim of a C-contiguous ``out``, each within its
    dim): by the flat positions, where ``ufunc.at`` takes its one-dimensional path, four to six times quicker on a
    matrix than with one index per dim. The elements are visited in the same order, so every place combines its
    values in the same order and rounds the same."""
    values = np.asarray(values)
    if out.ndim < 2 or not out.flags.c_contiguous or 0 < values.size < _FLAT_AT_FROM:
        combine_at(out, key, values, ufunc)  # (few values: the flat positions would cost more than they save)
        return
    positions = flat_positions(key, out.shape)
    if values.ndim:
        values = np.ascontiguousarray(np.broadcast_to(values, positions.shape)).reshape(-1)
    combine_at(out.reshape(-1), positions.reshape(-1), values, ufunc)


_FLAT_AT_FROM = 256  # values combined; fewer: ufunc.at with one index per dim is the quicker (2 against 7 µs on 8)


def flat_positions(key: tuple, shape: tuple) -> np.ndarray:
    """The positions in a C-contiguous array of ``shape`` that ``key`` (one array of non-negative indices per dim,
    broadcasting) reads, as one array of the key's broadcast shape.

    >>> flat_positions((np.array([[0], [1]]), np.array([[2, 0]])), (2, 3))
    array([[2, 0],
           [5, 3]])
    """
    position = key[-1].astype(np.intp, copy=False)
    step = 1
    for indices, size in zip(key[-2::-1], shape[:0:-1]):
        step *= size
        position = position + indices.astype(np.intp, copy=False) * step
    return position


def combine_at(out: np.ndarray, key, values, ufunc: np.ufunc) -> None:
    """``ufunc.at(out, key, values)``: each repeated place combines each of its values. Half precision combines
    in single and rounds once, as torch's kernels do."""
    if out.dtype is not _dtype.HALF:
        ufunc.at(out, key, values)
        return
    work = out.astype(np.float32)
    ufunc.at(work, key, np.asarray(values).astype(np.float32))
    out[...] = quietly(IGNORE_OVER, work.astype, _dtype.HALF)  # beyond half's range: inf, as in torch


def _zeros(shape: tuple, like: Tensor) -> Tensor:
    return wrap(np.zeros(shape, like._data.dtype))


# ----------------------------------------------------------------- gather and scatter


_FLAT_GATHER_FROM = 4096  # elements gathered; fewer: NumPy's indexing by one array per dim costs less


class Gather(Function):
    backward_name = "GatherBackward0"
    graph_inputs = (0,)
    backward_on_arrays = True  # on arrays, the gradient is scatter_add's own computation
    jvp = linear_jvp(0)

    @staticmethod
    def forward(ctx, x, where):
        # where: (dim, index, key, positions) in one argument, as Function.apply runs two on its quickest path;
        # positions: None, or those of the index's elements in x's row-major data (see _gather_plan)
        dim, index, key, positions = where
        data = x._data
        if ctx.needs_input_grad[0]:  # (nothing to keep for a call that is not recorded)
            ctx.shape, ctx.dim, ctx.key, ctx.positions = data.shape, dim, key, positions
            ctx.save_for_backward(index)
        if positions is not None:  # the usual call: one read by one array of positions
            return wrap(data.ravel()[positions])
        if data.ndim >= 2 and index._data.size >= _FLAT_GATHER_FROM and data.flags.c_contiguous:
            out = data.reshape(-1).take(flat_positions(key, data.shape))  # (a half to a third quicker)
        else:
            out = (data if data.ndim else data.reshape(1))[key]
        shape = index._data.shape
        return wrap(out if out.shape == shape else out.reshape(shape))  # (a 0-d index reads a 1-d result)

    @staticmethod
    def backward(ctx, grad):
        (index,) = ctx.saved_tensors
        if type(grad) is np.ndarray:  # no graph to record: what ScatterAdd's forward computes, on the arrays
            total = np.zeros(ctx.shape, grad.dtype)
            positions = ctx.positions
            if positions is not None and _each_once(positions):
                total.reshape(-1)[positions] = grad
            else:
                combine_at_checked(_at_least_1d(total), ctx.key, grad, np.add)
            return total, None
        # the index was checked against these shapes in forward: scatter_add's Function takes it as it is
        return ScatterAdd.apply(_zeros(ctx.shape, grad), ctx.dim, index, grad, ctx.key), None


@ember_function
def gather(input, dim: int, index, *, sparse_grad: bool = False, out=None) -> Tensor:
    """Values of ``input`` along ``dim`` at ``index``: ``out[i][j] = input[i][index[i][j]]`` for ``dim=1``.

    ``sparse_grad`` is accepted and ignored (the gradient is dense).

    >>> ember.gather(ember.tensor([[1, 2], [3, 4]]), 1, ember.tensor([[0, 0], [1, 0]]))
    tensor([[1, 1],
            [4, 3]])
    """
    x = input if type(input) is Tensor else require_tensor(input, "gather")
    result = Gather.apply(x, _gather_plan(x, dim, index))
    return result if out is None else into_out_of_its_dtype("gather", result, out, x)


_ravel_multi_index = undispatched(np.ravel_multi_index)


def _each_once(index: np.ndarray) -> bool:
    """Whether no element of ``index`` (a few integers) repeats: then each place it names receives one value, and
    an assignment does what NumPy's ``add.at`` does in a fifth of its time."""
    items = index.ravel().tolist()
    return len(set(items)) == len(items)


def _gather_plan(x: Tensor, dim, index) -> tuple:
    """Gather's (dim, index, key, positions) after the checks of ``_checked_key``. For a few indices into row-major
    data that were checked before, the positions they read in it (else None), which NumPy's ravel_multi_index
    finds and checks in bounds in one call; read by them, a 4x4 gather costs six tenths of the bounds by
    ``in_bounds`` and NumPy's indexing by one array per dim."""
    found = _remembered(x, dim, index, None)
    if found is not None:
        axis, key, size = found
        data = x._data
        if index._data.size <= _FEW and data.ndim and data.flags.c_contiguous:
            try:
                return axis, index, key, _ravel_multi_index(key, data.shape)
            except ValueError:  # an index out of bounds: the checks below name it, as torch does
                pass
        elif in_bounds(index._data, size):
            return axis, index, key, None
    dim, key = _checked_key_slowly("gather", x, dim, index, None, 3)
    return dim, index, key, None


class Scatter(Function):
    """A copy of ``x`` with ``src`` (a tensor) written at ``index`` along ``dim``."""

    backward_name = "ScatterBackward0"
    torch_saved_tensors = {"index": 0}
    torch_saved_values = {"dim": "dim"}
    graph_inputs = (0, 3)
    jvp = linear_jvp(0, 3)

    @staticmethod
    def forward(ctx, x, dim, index, src, key):
        ctx.dim, ctx.key = dim, key
        ctx.save_for_backward(index)
        return _scattered(x, index, key, src, None)

    @staticmethod
    def backward(ctx, grad):
        (index,), needs = ctx.saved_tensors, ctx.needs_input_grad
        grad_x = scatter(grad, ctx.dim, index, 0) if needs[0] else None
        grad_src = Gather.apply(grad, (ctx.dim, index, ctx.key, None)) if needs[3] else None
        return grad_x, None, None, grad_src, None


class ScatterValue(Scatter):
    """A copy of ``x`` with a number written at ``index`` along ``dim``."""

    backward_name = "ScatterBackward1"
    torch_saved_tensors = {"index": 0}
    torch_saved_values = {"dim": "dim"}
    graph_inputs = (0,)


class ScatterAdd(Function):
    backward_name = "ScatterAddBackward0"
    torch_saved_tensors = {"index": 0}
    torch_saved_values = {"dim": "dim"}
    graph_inputs = (0, 3)
    jvp = linear_jvp(0, 3)

    @staticmethod
    def forward(ctx, x, dim, index, src, key):
        ctx.dim, ctx.key = dim, key
        ctx.save_for_backward(index)
        return _scattered(x, index, key, src, np.add)

    @staticmethod
    def backward(ctx, grad):
        (index,) = ctx.saved_tensors
        grad_src = Gather.apply(grad, (ctx.dim, index, ctx.key, None)) if ctx.needs_input_grad[3] else None
        return grad, None, None, grad_src, None


class ScatterLegacyReduce(Function):
    """``scatter(..., reduce='add'|'multiply')``: as in torch, it has no derivative."""

    backward_name = "NotImplemented"

    @staticmethod
    def forward(ctx, x, dim, index, src, key, reduce):
        return _scattered(x, index, key, src, np.add if reduce == "add" else np.multiply)

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError("derivative for scatter with reduce is not implemented; use scatter_reduce, which has one "
                           "(reduce='sum' or 'prod')")


def fill_value(value, dtype: np.dtype) -> np.ndarray:
    """A fill value (a 0-d tensor, or a number ``_scatter_value`` made) as an array of ``dtype``; a double becomes
    a half through single precision, as torch converts it."""
    data = np.asarray(value._data if isinstance(value, Tensor) else value)
    if dtype is _dtype.HALF and data.dtype == np.float64:
        data = data.astype(np.float32)
    if data.dtype.kind == "c" and np.dtype(dtype).kind != "c":
        data = data.real  # a complex value checked to have no imaginary part: its real one, without NumPy's warning
    return data.astype(dtype)


def _is_complex_value(value) -> bool:
    """Whether a fill value (a number or a 0-d tensor) is complex, even with no imaginary part."""
    return value._data.dtype.kind == "c" if isinstance(value, Tensor) else isinstance(value, (complex, np.complexfloating))


def _scatter_value(op: str, x: Tensor, value):
    """A number scatter writes: it must fit the tensor's dtype (a float into an integer tensor truncates)."""
    if isinstance(value, np.generic):
        value = value.item()
    if not isinstance(value, (bool, int, float, complex)):
        raise TypeError(f"{op}(): argument 'value' must be a number or 'src' a Tensor, not {type(value).__name__}")
    value = element_of(op, value, x._data.dtype)
    if x._data.dtype is _dtype.HALF and type(value) is float:
        value = _dtype.in_single(value)  # as torch makes a half: from a single, rounding twice
    return np.asarray(value).astype(x._data.dtype)


@ember_function
def scatter(input, dim: int, index, src=None, *, value=None, reduce: str | None = None, out=None) -> Tensor:
    """A copy of ``input`` with ``src`` (a tensor, or a number as ``value``) written at ``index`` along ``dim``:
    ``out[i][index[i][j]] = src[i][j]`` for ``dim=1``. ``reduce='add'|'multiply'`` combines instead (no gradient;
    prefer ``scatter_reduce``). Where an index repeats, one of its values is written.

    >>> ember.scatter(ember.zeros(2, 3), 1, ember.tensor([[2], [0]]), ember.tensor([[1.], [2.]]))
    tensor([[0., 0., 1.],
            [2., 0., 0.]])
    """
    x = require_tensor(input, "scatter")
    src = value if src is None else src
    if src is None:
        raise TypeError("scatter(): missing the values to write: pass src (a Tensor) or value (a number)")
    result = _scatter(x, dim, index, src, reduce)
    return result if out is None else into_out_of_its_dtype("scatter", result, out, x, src)


def _scatter(x: Tensor, dim, index, src, reduce: str | None) -> Tensor:
    op = "scatter"
    if reduce is not None and reduce not in ("add", "multiply"):
        raise RuntimeError(f"{op}(): reduce argument must be either add or multiply, got {reduce!r}")
    if isinstance(src, Tensor):
        _check_same_dtype(op, x, src)
        dim, key = _checked_key(op, x, dim, index, src)
        if reduce is not None:
            warnings.warn("The reduce argument of scatter with a Tensor src is deprecated: use scatter_reduce "
                          "(reduce='sum' or 'prod')", UserWarning, stacklevel=user_stacklevel())
            return ScatterLegacyReduce.apply(x, dim, index, src, key, reduce)
        return Scatter.apply(x, dim, index, src, key)
    number = _scatter_value(op, x, src)
    dim, key = _checked_key(op, x, dim, index)
    if reduce is not None:
        return ScatterLegacyReduce.apply(x, dim, index, number, key, reduce)
    return ScatterValue.apply(x, dim, index, number, key)


@ember_function
def scatter_add(input, dim: int, index, src, *, out=None) -> Tensor:
    """A copy of ``input`` with ``src`` added at ``index`` along ``dim``; an index that repeats adds each value.

    >>> ember.scatter_add(ember.zeros(3), 0, ember.tensor([0, 0, 2]), ember.tensor([1., 2., 3.]))
    tensor([3., 0., 3.])
    """
    x = require_tensor(input, "scatter_add")
    src = require_tensor(src, "scatter_add", 4, "src")
    _check_same_dtype("scatter_add", x, src)
    dim, key = _checked_key("scatter_add", x, dim, index, src)
    result = ScatterAdd.apply(x, dim, index, src, key)
    return result if out is None else into_out("scatter_add", result, out, x, src)


# ----------------------------------------------------------------- scatter_reduce

_REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")
_NEED_VALUES = ("prod", "amax", "amin")  # the reductions whose gradient depends on the values
_UFUNCS = {"sum": np.add, "mean": np.add, "prod": np.multiply, "amax": np.maximum, "amin": np.minimum}


def _identity(reduce: str, dtype: np.dtype):
    """What a position starts from when ``include_self=False``: the reduction's neutral element."""
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    if dtype.kind == "b":
        return reduce == "amin"
    low, high = (-np.inf, np.inf) if _dtype.kind(dtype) == "f" else (np.iinfo(dtype).min, np.iinfo(dtype).max)
    return low if reduce == "amax" else high


def reduced(data: np.ndarray, key: tuple, values: np.ndarray, reduce: str, include_self: bool,
            half_in_single: bool = True) -> np.ndarray:
    """A copy of ``data`` (at least 1-d) with ``values`` reduced into it at ``key``.

    Half precision reduces in single and rounds once (a mean's sum too, before it is divided), as torch's scatter
    kernels do; with ``half_in_single`` False it reduces in half, rounding at each step, as its index_reduce does.
    """
    if reduce == "mean" and data.dtype.kind == "b":
        raise NotImplementedError("scatter_reduce(): reduce='mean' is not implemented for 'Bool'; convert the "
                                  "tensor first, e.g. x.to(ember.float32)")
    if data.dtype is _dtype.HALF and half_in_single:
        single = reduced(data.astype(np.float32), key, values.astype(np.float32), "sum" if reduce == "mean" else
                         reduce, include_self)
        out = quietly(IGNORE_OVER, single.astype, _dtype.HALF)
        return _divided_by_count(out, key, include_self) if reduce == "mean" else out
    out = data.copy()
    if not include_self:
        out[key] = _identity(reduce, data.dtype)
    quietly(IGNORE_INVALID, _UFUNCS[reduce].at, out, key, values)  # a nan among amax's values: nan, silently
    return _divided_by_count(out, key, include_self) if reduce == "mean" else out


def _divided_by_count(total: np.ndarray, key: tuple, include_self: bool) -> np.ndarray:
    """A mean from its sum: each place divided by how many values it took (itself too, with ``include_self``);
    integers round down, as in torch."""
    count = np.full(total.shape, 1 if include_self else 0, np.int64)
    np.add.at(count, key, 1)
    count = np.maximum(count, 1)
    if _dtype.kind(total.dtype) not in "fc":
        return np.floor_divide(total, count).astype(total.dtype, copy=False)
    return (total / count.astype(np.float32 if total.dtype is _dtype.HALF else total.dtype)).astype(total.dtype)


class ScatterReduce(Function):
    backward_name = "ScatterReduceBackward0"
    graph_inputs = (0, 3)

    @staticmethod
    def forward(ctx, x, dim, index, src, key, reduce, include_self):
        ctx.dim, ctx.reduce, ctx.include_self = dim, reduce, include_self
        values = _source_region(src._data, index._data.shape)
        half_in_single = type(ctx)._forward_cls is not IndexReduce  # torch's index_reduce rounds at each step
        out = reduced(_at_least_1d(x._data), key, values, reduce, include_self, half_in_single).reshape(x._data.shape)
        result = wrap(out)
        ctx.save_for_backward(index, *((x, src, result) if reduce in _NEED_VALUES else ()))
        return result

    @staticmethod
    def backward(ctx, grad):
        index, *saved = ctx.saved_tensors
        saved = saved or (None, None, None)
        grad_x, grad_src = _REDUCE_BACKWARD[ctx.reduce](ctx, grad, index, *saved)
        if ctx.reduce in _NEED_VALUES and grad_src._data.shape != saved[1]._data.shape:
            grad_src = _padded(grad_src, saved[1]._data.shape)  # src larger than the index: the rest had no part
        needs = ctx.needs_input_grad
        if needs[0] and not ctx.include_self:
            grad_x = scatter(grad_x, ctx.dim, index, 0)
        return grad_x if needs[0] else None, None, None, grad_src if needs[3] else None, None, None, None


def _sum_backward(ctx, grad, index, x, src, result):
    return grad, gather(grad, ctx.dim, index)


def _mean_backward(ctx, grad, index, x, src, result):
    count = _zeros(grad._data.shape, grad) + (1 if ctx.include_self else 0)
    count = scatter_add(count, ctx.dim, index, _ones_like_index(index, grad))
    shared = grad / count.clamp_min(1)
    return shared, gather(shared, ctx.dim, index)


def _ones_like_index(index: Tensor, like: Tensor) -> Tensor:
    return wrap(np.ones(index._data.shape, like._data.dtype))


def _prod_backward(ctx, grad, index, x, src, result):
    """d/dself is the product of what was scattered there: the result with self's zeros as ones, over self
    (rounded as torch's). d/dsrc is the product of the others, which without dividing by src holds at zeros too:
    a lone zero in its group takes the product with it replaced by 1."""
    dim = ctx.dim
    src = _region(src, index)
    self_as_one = where(wrap(x._data == 0), 1, x)
    grad_x = grad * scatter_reduce(self_as_one, dim, index, src, "prod", include_self=ctx.include_self) / self_as_one
    zero = src._data == 0
    zeros_in_group = np.zeros(_at_least_1d(x._data).shape, np.int64)
    key = along(_at_least_1d(index._data), dim)
    np.add.at(zeros_in_group, key, _at_least_1d(zero))
    lone = wrap(zero & (zeros_in_group[key].reshape(zero.shape) == 1))
    without_lone = scatter_reduce(x, dim, index, where(lone, 1, src), "prod", include_self=ctx.include_self)
    grad_src = where(lone, gather(grad * without_lone, dim, index),
                     gather(grad * result, dim, index) / where(wrap(zero), 1, src))
    return grad_x, grad_src


def _padded(grad: Tensor, shape: tuple) -> Tensor:
    """``grad`` (the gradient of the part of src the index reads) in zeros of src's ``shape``."""
    region = _Region("scatter_reduce", tuple(slice(0, n) for n in grad._data.shape or (1,)))
    padded = RegionScatter.apply(wrap(np.zeros(shape or (1,), grad._data.dtype)), grad.reshape(-1) if not
                                 grad._data.ndim else grad, region)
    return padded if shape else padded.reshape(())


def _region(src: Tensor, index: Tensor) -> Tensor:
    """The part of src that scatter_reduce reads (src may be larger than the index)."""
    shape = index._data.shape
    if src._data.shape == shape:
        return src
    src = src.reshape(1) if not src._data.ndim else src
    return src[tuple(slice(0, n) for n in shape or (1,))]


def _extreme_backward(ctx, grad, index, x, src, result):
    """The gradient goes to the values equal to the result, shared evenly among them (as torch)."""
    dim = ctx.dim
    src = _region(src, index)
    x_is_result = (x == result).to(grad.dtype)
    src_is_result = (src == gather(result, dim, index)).to(grad.dtype)
    shared = grad / scatter_add(x_is_result, dim, index, src_is_result)
    return x_is_result * shared, src_is_result * gather(shared, dim, index)


_REDUCE_BACKWARD = {"sum": _sum_backward, "mean": _mean_backward, "prod": _prod_backward,
                    "amax": _extreme_backward, "amin": _extreme_backward}


@ember_function
def scatter_reduce(input, dim: int, index, src, reduce: str, *, include_self: bool = True, out=None) -> Tensor:
    """A copy of ``input`` with ``src`` reduced into it at ``index`` along ``dim``: ``reduce`` is 'sum', 'prod',
    'mean', 'amax' or 'amin'; with ``include_self=False`` the scattered-to values of ``input`` take no part.

    >>> ember.scatter_reduce(ember.zeros(2), 0, ember.tensor([0, 0, 1]), ember.tensor([1., 3., 5.]), "amax",
    ...                      include_self=False)
    tensor([3., 5.])
    """
    x = require_tensor(input, "scatter_reduce")
    src = require_tensor(src, "scatter_reduce", 4, "src")
    if reduce not in _REDUCTIONS:
        raise RuntimeError(f"scatter_reduce(): reduce argument must be either sum, prod, mean, amax or amin, "
                           f"got {reduce}")
    _check_same_dtype("scatter_reduce", x, src)
    if x._data.dtype.kind == "c":
        _check_complex_reduce("scatter_reduce", reduce, x, src)
    dim, key = _checked_key("scatter_reduce", x, dim, index, src)
    result = ScatterReduce.apply(x, dim, index, src, key, reduce, bool(include_self))
    return result if out is None else into_out("scatter_reduce", result, out, x, src)


def _check_complex_reduce(op: str, reduce: str, x: Tensor, src: Tensor) -> None:
    """As torch: complex numbers have no order (no amax, amin), and their reductions have no gradient."""
    if reduce in ("amax", "amin"):
        raise NotImplementedError(f'"scatter_gather_tensor_cpu_reduce_{reduce}" not implemented for '
                                  f"'{_dtype.scalar_type_name(x._data.dtype)}': {op} cannot order complex numbers; "
                                  f"reduce their magnitudes (.abs()) or a part (.real) instead")
    if _grad.enabled and (x.requires_grad or src.requires_grad):
        raise RuntimeError(f"{op} does not support automatic differentiation for outputs with complex dtype; "
                           "reduce the real and imaginary parts apart (ember.view_as_real), or use scatter_add "
                           "for sums")


# ----------------------------------------------------------------- index_select, index_add, index_copy, index_fill


def _vector_index(op: str, index, allowed: tuple = _INT_INDEX, error: type = RuntimeError,
                  shape_error: type = IndexError) -> np.ndarray:
    data = index_data(op, index, allowed, 3, error)
    if data.ndim > 1:
        raise shape_error(f"{op}(): Index is supposed to be a vector, but got an index of shape {list(data.shape)}")
    return data.reshape(-1)


def _add_slices(out: np.ndarray, dim: int, flat: np.ndarray, values: np.ndarray) -> None:
    """Add ``values`` (at least 1-d) into ``out``'s slices along ``dim`` at ``flat``, each repeat adding again."""
    out = _at_least_1d(out)
    if out.dtype is _dtype.HALF or values.dtype != out.dtype or values.size < _ROUNDS_FROM:
        combine_at(out, _slices(dim, flat), values, np.add)  # (small: add.at costs less than finding the rounds)
        return
    occurrence = _earlier_occurrences(flat)
    rounds = int(occurrence.max()) + 1
    if rounds > _MOST_ROUNDS:
        np.add.at(out, _slices(dim, flat), values)
        return
    # add.at with a slice in the key steps element by element (a bilinear upsampling's gradient took 57 ms of
    # [16, 32, 64, 64]); in rounds, each with no index twice, a fancy-indexed += adds the same values in the
    # same order: an index's repeats one after another, as add.at and torch's kernel add them
    target, source = np.moveaxis(out, dim, 0), np.moveaxis(values, dim, 0)
    if rounds == 1:
        target[flat] += source
        return
    for round_ in range(rounds):
        picked = np.flatnonzero(occurrence == round_)
        target[flat[picked]] += source[picked]


_MOST_ROUNDS = 16  # an index repeated more often than this: add.at's steps cost less than the rounds
_ROUNDS_FROM = 4096  # elements added


def _slices(dim: int, index: np.ndarray) -> tuple:
    return (slice(None),) * dim + (index,)


class IndexSelect(Function):
    backward_name = "IndexSelectBackward0"
    torch_saved_tensors = {"index": 0}
    torch_saved_values = {"dim": "dim", "self_sym_sizes": input_sizes(0)}
    graph_inputs = (0,)
    backward_on_arrays = True  # on arrays, the gradient is index_add's computation, done at once
    jvp = linear_jvp(0)

    @staticmethod
    def forward(ctx, x, where):
        dim, index, flat = where  # in one argument, as Gather's
        ctx.shape, ctx.dim, ctx.flat = x._data.shape, dim, flat
        ctx.save_for_backward(index)
        data = x._data
        if not data.ndim:
            return wrap(data.reshape(1)[flat].reshape(()))
        return wrap(data.take(flat, dim))

    @staticmethod
    def backward(ctx, grad):
        (index,) = ctx.saved_tensors
        if type(grad) is np.ndarray:
            total = np.zeros(ctx.shape, grad.dtype)
            _add_slices(total, ctx.dim, ctx.flat, _at_least_1d(grad))
            return total, None
        # the index was checked in forward: index_add's Function takes it as it is
        return IndexAdd.apply(_zeros(ctx.shape, grad), ctx.dim, index, grad, ctx.flat, 1), None


@ember_function
def index_select(input, dim: int, index, *, out=None) -> Tensor:
    """The slices of ``input`` along ``dim`` at ``index`` (a vector), in its order: ``input[:, index]`` for dim 1.

    >>> ember.index_select(ember.tensor([[1, 2, 3], [4, 5, 6]]), 1, ember.tensor([2, 0]))
    tensor([[3, 1],
            [6, 4]])
    """
    x = input if type(input) is Tensor else require_tensor(input, "index_select")
    if type(index) is Tensor and type(dim) is int and 0 <= dim < x._data.ndim:  # the usual call: checked at once
        flat = index._data
        if flat.ndim == 1 and (flat.dtype is _INT64 or flat.dtype is _INT32) and flat.size and \
                in_bounds(flat, x._data.shape[dim]):
            result = IndexSelect.apply(x, (dim, index, flat))
            return result if out is None else into_out_of_its_dtype("index_select", result, out, x)
    flat = _vector_index("index_select", index)
    dim = checked_dim("index_select", dim, x._data.ndim)
    size = _at_least_1d(x._data).shape[dim]
    if flat.size and not in_bounds(flat, size):
        bad = flat[(flat < 0) | (flat >= size)][0]
        raise IndexError(f"index_select(): index {bad} is out of range for dimension {dim} with size {size}")
    if not x._data.ndim and flat.size != 1:
        raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got {flat.size} value(s)")
    result = IndexSelect.apply(x, (dim, index, flat))
    return result if out is None else into_out_of_its_dtype("index_select", result, out, x)


def _check_source(op: str, x: Tensor, dim: int, flat: np.ndarray, source: Tensor) -> None:
    """The source of index_add/index_copy: self's shape but ``len(index)`` in ``dim``, and self's dtype."""
    _check_same_dtype(op, x, source, "source")
    shape, have = list(x._data.shape), list(source._data.shape)
    if not shape or not have:
        _check_scalar_source(op, shape, dim, flat.size, have)
        return
    shape[dim] = flat.size
    if shape != have and op == "index_copy":
        _refuse_copy_source(x._data.shape, dim, flat.size, source._data.shape)
    if shape != have:
        raise RuntimeError(f"{op}(): source tensor shape must match self tensor shape, excluding the specified "
                           f"dimension. Got self.shape = {list(x._data.shape)} source.shape = {have}; source needs "
                           f"{flat.size} (the number of indices) in dimension {dim}")


def _check_scalar_source(op: str, shape: list, dim: int, count: int, have: list) -> None:
    """Where self or source is 0-d: one index, and (for index_copy) a source of the slice's size; index_add and
    index_reduce want both 0-d."""
    if not have and count != 1:
        raise IndexError(f"{op}(): When source is scalar, index should have one element (got {count})")
    if op == "index_copy" and len(shape) <= 1 and len(have) <= 1:
        if not shape and count != int(np.prod(have)):
            raise IndexError(f"index_copy(): Number of indices ({count}) should be equal to source.size(dim) "
                             f"({int(np.prod(have))})")
        if count == 1:
            return
    elif op != "index_copy" and shape == have:
        return
    raise RuntimeError(f"{op}(): Source/destination tensor must have same slice shapes: self is {shape}, source "
                       f"{have}, with {count} indices along dimension {dim}")


def _refuse_copy_source(shape: tuple, dim: int, count: int, have: tuple) -> None:
    """index_copy's words for a source of the wrong shape (torch's types: IndexError for the rank and the count)."""
    if len(shape) != len(have) and shape and have:
        raise IndexError(f"index_copy(): When source and destination are not scalars, their dimensionality must "
                         f"match. Source dimensionality ({len(have)}), destination dimensionality ({len(shape)})")
    if count != (have[dim] if have else 1):
        raise IndexError(f"index_copy(): Number of indices ({count}) should be equal to source.size(dim) "
                         f"({have[dim] if have else 1})")
    raise RuntimeError(f"index_copy(): Source/destination tensor must have same slice shapes: destination "
                       f"{list(shape)} and source {list(have)} differ apart from dimension {dim}")


def _index_and_source(op: str, x: Tensor, dim, index, source, allowed: tuple = _INT_INDEX) -> tuple:
    """(dim, flat index) of index_add/index_copy, every argument checked."""
    x = require_tensor(x, op)
    source = require_tensor(source, op, 4, "source")
    flat = _vector_index(op, index, allowed)
    dim = checked_dim(op, dim, x._data.ndim)
    _check_source(op, x, dim, flat, source)
    check_bounds(op, flat, _at_least_1d(x._data).shape[dim], dim, error=RuntimeError if op == "index_add" else
                 IndexError)  # torch's types differ between the ops
    return dim, flat


class IndexAdd(Function):
    backward_name = "IndexAddBackward0"
    graph_inputs = (0, 3)
    jvp = linear_jvp(0, 3)

    @staticmethod
    def forward(ctx, x, dim, index, source, flat, alpha):
        ctx.dim, ctx.alpha, ctx.source_shape = dim, alpha, source._data.shape
        ctx.save_for_backward(index)
        out = x._data.copy()
        values = _at_least_1d(source._data)
        if alpha != 1 and out.dtype == np.float32 and out.ndim > 1:  # torch's 1-d kernel rounds the product first
            _fused_add_at(_at_least_1d(out), dim, flat, values, np.float32(alpha))
            return wrap(out)
        if alpha != 1:
            values = values * (_dtype.in_single(alpha) if values.dtype is _dtype.HALF else alpha)
        _add_slices(out, dim, flat, values)
        return wrap(out)

    @staticmethod
    def backward(ctx, grad):
        grad_source = None
        if ctx.needs_input_grad[3]:
            grad_source = index_select(grad, ctx.dim, ctx.saved_tensors[0]).reshape(ctx.source_shape)
            grad_source = grad_source if ctx.alpha == 1 else grad_source * ctx.alpha
        return grad, None, None, grad_source, None, None


@ember_function
def index_add(input, dim: int, index, source, *, alpha=1, out=None) -> Tensor:
    """A copy of ``input`` with ``alpha * source`` added to its slices along ``dim`` at ``index``; an index that
    repeats adds each of its slices.

    >>> ember.index_add(ember.zeros(3, 2), 0, ember.tensor([0, 0]), ember.ones(2, 2), alpha=2)
    tensor([[4., 4.],
            [0., 0.],
            [0., 0.]])
    """
    dim, flat = _index_and_source("index_add", input, dim, index, source)
    if input._data.dtype.kind in "iu" and not isinstance(alpha, bool):
        # as torch: an integer tensor takes alpha truncated, and refuses one it cannot hold (-0.5 for uint8)
        alpha = int(element_of("index_add", alpha, input._data.dtype))
    elif input._data.dtype.kind == "b" and not isinstance(alpha, bool):
        alpha = int(alpha)
    result = IndexAdd.apply(input, dim, index, source, flat, alpha)
    return result if out is None else into_out_of_its_dtype("index_add", result, out, input, source)


def _fused_add_at(out: np.ndarray, dim: int, flat: np.ndarray, values: np.ndarray, alpha: np.float32) -> None:
    """``out``'s slices at ``flat`` plus ``alpha`` times those of ``values``, one index after another, each step
    rounded once (single precision, computed in double: exact), as torch's fused multiply-add kernel rounds."""
    occurrence = _earlier_occurrences(flat)  # the round each is added in: an index's repeats one after another
    for round_ in range(int(occurrence.max(initial=-1)) + 1):
        picked = np.flatnonzero(occurrence == round_)
        target = _slices(dim, flat[picked])
        added = np.take(values, picked, axis=dim).astype(np.float64) * np.float64(alpha)
        out[target] = (out[target].astype(np.float64) + added).astype(np.float32)


def _earlier_occurrences(flat: np.ndarray) -> np.ndarray:
    """For each element of ``flat``, how many times its value came before it.

    >>> _earlier_occurrences(np.array([3, 1, 3, 3, 1]))
    array([0, 0, 1, 2, 1])
    """
    order = np.argsort(flat, kind="stable")
    ordered = flat[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])  # where each run of one value begins
    run_start = np.repeat(starts, np.diff(np.r_[starts, flat.size]))
    occurrence = np.empty(flat.size, np.int64)
    occurrence[order] = np.arange(flat.size) - run_start
    return occurrence


class IndexCopy(Function):
    backward_name = "IndexCopyBackward0"
    graph_inputs = (0, 3)
    jvp = linear_jvp(0, 3)

    @staticmethod
    def forward(ctx, x, dim, index, source, flat):
        ctx.dim, ctx.source_shape = dim, source._data.shape
        ctx.save_for_backward(index)
        out = x._data.copy()
        _at_least_1d(out)[_slices(dim, flat)] = _at_least_1d(source._data)
        return wrap(out)

    @staticmethod
    def backward(ctx, grad):
        (index,), needs = ctx.saved_tensors, ctx.needs_input_grad
        grad_x = index_fill(grad, ctx.dim, index, 0) if needs[0] else None
        grad_source = index_select(grad, ctx.dim, index).reshape(ctx.source_shape) if needs[3] else None
        return grad_x, None, None, grad_source, None


@ember_function
def index_copy(input, dim: int, index, source, *, out=None) -> Tensor:
    """A copy of ``input`` with its slices along ``dim`` at ``index`` (int64) replaced by those of ``source``.

    >>> ember.index_copy(ember.zeros(3), 0, ember.tensor([2, 0]), ember.tensor([1., 2.]))
    tensor([2., 0., 1.])
    """
    dim, flat = _index_and_source("index_copy", input, dim, index, source, _LONG_INDEX)
    result = IndexCopy.apply(input, dim, index, source, flat)
    return result if out is None else into_out("index_copy", result, out, input, source)


class IndexFill(Function):
    """A copy of ``x`` with ``value`` (a number) in its slices along ``dim`` at ``index``."""

    backward_name = "IndexFillBackward0"
    graph_inputs = (0,)
    jvp = linear_jvp(0, 3)

    @staticmethod
    def forward(ctx, x, dim, index, value, flat):
        ctx.dim = dim
        ctx.save_for_backward(index)
        out = x._data.copy()
        _at_least_1d(out)[_slices(dim, flat)] = fill_value(value, out.dtype)
        return wrap(out)

    @staticmethod
    def backward(ctx, grad):
        (index,), needs = ctx.saved_tensors, ctx.needs_input_grad
        grad_x = index_fill(grad, ctx.dim, index, 0) if needs[0] else None
        grad_value = None
        if needs[3]:  # each filled element once, however often its index repeats
            grad_value = index_select(grad, ctx.dim, wrap(np.unique(index._data))).sum()
        return grad_x, None, None, grad_value, None


class IndexFillTensor(IndexFill):
    """As IndexFill, the value a 0-d tensor (which gets the gradient of every element it filled)."""

    backward_name = "IndexFillBackward1"
    graph_inputs = (0, 3)


@ember_function
def index_fill(input, dim: int, index, value) -> Tensor:
    """A copy of ``input`` with ``value`` (a number or a 0-d tensor) in its slices along ``dim`` at ``index``.

    >>> ember.index_fill(ember.zeros(2, 3), 1, ember.tensor([0, 2]), 7.)
    tensor([[7., 0., 7.],
            [7., 0., 7.]])
    """
    x = require_tensor(input, "index_fill")
    flat = _vector_index("index_fill", index, _LONG_INDEX, IndexError, RuntimeError)
    dim = checked_dim("index_fill", dim, x._data.ndim)
    size = _at_least_1d(x._data).shape[dim]
    check_bounds("index_fill", flat, size, dim, negative=True, error=IndexError)
    if flat.size and flat.min() < 0:  # counted from the end: the backward's index_select takes them so
        flat = np.where(flat < 0, flat + size, flat)
        index = wrap(flat)
    if _is_complex_value(value) and x._data.dtype.kind != "c":
        raise RuntimeError("index_fill_(): Converting complex Scalar to non-complex type is not supported; fill a "
                           "complex tensor, or pass the real part")
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise RuntimeError(f"index_fill(): only supports a 0-dimensional value tensor, but got tensor with "
                               f"{value._data.ndim} dimension(s); pass value.item() or a 0-d tensor")
        _scatter_value("index_fill", x, value.item())  # as torch: the value must fit, as a number must
        return IndexFillTensor.apply(x, dim, index, value, flat)
    return IndexFill.apply(x, dim, index, _scatter_value("index_fill", x, value), flat)


# ----------------------------------------------------------------- index_reduce: scatter_reduce on whole slices


class IndexReduce(ScatterReduce):
    backward_name = "IndexReduceBackward0"


def _spread_index(flat: np.ndarray, dim: int, shape: tuple) -> Tensor:
    """The index of scatter_reduce that writes each slice of a source of ``shape`` along ``dim`` at ``flat``."""
    view = [1] * len(shape)
    view[dim] = flat.size
    return wrap(np.broadcast_to(flat.reshape(view), shape).astype(np.int64))


@ember_function
def index_reduce(input, dim: int, index, source, reduce: str, *, include_self: bool = True, out=None) -> Tensor:
    """A copy of ``input`` with the slices of ``source`` reduced into its slices along ``dim`` at ``index``:
    ``reduce`` is 'prod', 'mean', 'amax' or 'amin'.

    >>> ember.index_reduce(ember.ones(2, 2), 0, ember.tensor([0, 0]), ember.tensor([[2., 3.], [4., 5.]]), "prod")
    tensor([[ 8., 15.],
            [ 1.,  1.]])
    """
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}.")
    _warn_once("index_reduce() is in beta and the API may change at any time.", stacklevel=user_stacklevel())
    dim, flat = _index_and_source("index_reduce", input, dim, index, source)
    if input._data.dtype.kind == "c":
        raise NotImplementedError(f"\"index_func_\" not implemented for '{_dtype.scalar_type_name(input._data.dtype)}'"
                                  ": index_reduce takes real tensors; reduce the real and imaginary parts apart")
    spread = _spread_index(flat, dim, _at_least_1d(source._data).shape)
    key = along(spread._data, dim)
    result = IndexReduce.apply(input, dim, spread if input._data.ndim else spread.reshape(()), source, key, reduce,
                               bool(include_self))
    return result if out is None else into_out("index_reduce", result, out, input, source)


# ----------------------------------------------------------------- select_scatter, slice_scatter, diagonal_scatter


class RegionScatter(Function):
    """A copy of ``x`` with ``src`` written over one region of it, which ``region(array)`` gives as a writable
    view in torch's dim order (a selected index, a slice, a diagonal); the subclasses only name the node."""

    @staticmethod
    def forward(ctx, x, src, region):
        ctx.region, ctx.src_shape = region, src._data.shape
        out = x._data.copy()
        target = region(out)
        if target.shape != src._data.shape:
            raise RuntimeError(f"{region.op}(): expected src to have a size equal to the slice of self. src size = "
                               f"{list(src._data.shape)}, slice size = {list(target.shape)}")
        np.copyto(target, src._data, casting="unsafe")
        return wrap(out)

    @staticmethod
    def backward(ctx, grad):
        needs = ctx.needs_input_grad
        grad_x = type(ctx)._forward_cls.apply(grad, wrap(np.zeros(ctx.src_shape, grad._data.dtype)), ctx.region) \
            if needs[0] else None
        return grad_x, RegionRead.apply(grad, ctx.region) if needs[1] else None, None


class RegionRead(Function):
    """A copy of the region of ``x`` (the gradient of the src of a RegionScatter)."""

    backward_name = "RegionReadBackward0"

    @staticmethod
    def forward(ctx, x, region):
        ctx.region, ctx.shape = region, x._data.shape
        return wrap(region(x._data).copy())

    @staticmethod
    def backward(ctx, grad):
        return RegionScatter.apply(wrap(np.zeros(ctx.shape, grad._data.dtype)), grad, ctx.region), None


class SelectScatter(RegionScatter):
    backward_name = "SelectScatterBackward0"


class SliceScatter(RegionScatter):
    backward_name = "SliceScatterBackward0"


class DiagonalScatter(RegionScatter):
    backward_name = "DiagonalScatterBackward0"


class _Region:
    """A region of an array, as a writable view: what ``key`` picks, after moving the ``moved`` dims last."""

    def __init__(self, op: str, key: tuple, moved: tuple = ()):
        self.op, self.key, self.moved = op, key, moved

    def __call__(self, array: np.ndarray) -> np.ndarray:
        if self.moved:
            array = np.moveaxis(array, self.moved, (-2, -1))
            return _diagonal_view(array, self.key)
        return array[self.key]


def _diagonal_view(array: np.ndarray, offset: int) -> np.ndarray:
    """The ``offset`` diagonal of the last two dims of ``array``, as a writable view (NumPy's is read-only)."""
    rows, cols = array.shape[-2:]
    start = (-offset, 0) if offset < 0 else (0, offset)
    length = max(0, min(rows - start[0], cols - start[1]))
    first = array[..., start[0]:, start[1]:] if length else array[..., :0, :0]
    strides = first.strides[:-2] + (first.strides[-2] + first.strides[-1],)
    return np.lib.stride_tricks.as_strided(first, first.shape[:-2] + (length,), strides, writeable=True)


def _check_src(op: str, input, src) -> tuple:
    return require_tensor(input, op), require_tensor(src, op, 2, "src")


@ember_function
def select_scatter(input, src, dim: int, index: int) -> Tensor:
    """A copy of ``input`` with ``src`` written where ``input.select(dim, index)`` is.

    >>> ember.select_scatter(ember.zeros(2, 2), ember.ones(2), 0, 1)
    tensor([[0., 0.],
            [1., 1.]])
    """
    x, src = _check_src("select_scatter", input, src)
    if not x._data.ndim:
        raise IndexError("select_scatter(): select() cannot be applied to a 0-dim tensor")
    dim = checked_dim("select_scatter", dim, x._data.ndim)
    index = whole_number(index, "select_scatter", "index")
    size = x._data.shape[dim]
    if not -size <= index < size:
        raise IndexError(f"select_scatter(): index {index} out of range for tensor of size {list(x._data.shape)} "
                         f"at dimension {dim}")
    key = (slice(None),) * dim + (int(index), Ellipsis)
    return SelectScatter.apply(x, src, _Region("select_scatter", key))


@ember_function
def slice_scatter(input, src, dim: int = 0, start: int | None = None, end: int | None = None,
                  step: int = 1, *, out=None) -> Tensor:
    """A copy of ``input`` with ``src`` written where ``input``'s slice ``start:end:step`` along ``dim`` is.

    >>> ember.slice_scatter(ember.zeros(4), ember.ones(2), start=0, step=2)
    tensor([1., 0., 1., 0.])
    """
    x, src = _check_src("slice_scatter", input, src)
    start, end = (None if i is None else whole_number(i, "slice_scatter", name) for i, name in
                  ((start, "start"), (end, "end")))
    step = whole_number(step, "slice_scatter", "step")
    if step <= 0:
        raise RuntimeError(f"slice_scatter(): slice step must be positive, got {step}")
    dim = checked_dim("slice_scatter", dim, x._data.ndim)
    key = (slice(None),) * dim + (slice(start, end, step),)
    result = SliceScatter.apply(x, src, _Region("slice_scatter", key))
    return result if out is None else into_out_of_its_dtype("slice_scatter", result, out, x, src)


@ember_function
def diagonal_scatter(input, src, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """A copy of ``input`` with ``src`` written along its ``offset`` diagonal of dims ``dim1`` and ``dim2`` (the
    diagonal is ``src``'s last dim, as ``diagonal`` returns it).

    >>> ember.diagonal_scatter(ember.zeros(2, 3), ember.ones(2), 1)
    tensor([[0., 1., 0.],
            [0., 0., 1.]])
    """
    x, src = _check_src("diagonal_scatter", input, src)
    first = checked_dim("diagonal_scatter", dim1, x._data.ndim)
    second = checked_dim("diagonal_scatter", dim2, x._data.ndim)
    if first == second:
        raise RuntimeError(f"diagonal_scatter(): diagonal dimensions cannot be identical {dim1}, {dim2}")
    offset = whole_number(offset, "diagonal_scatter", "offset")
    return DiagonalScatter.apply(x, src, _Region("diagonal_scatter", offset, (first, second)))


@ember_function
def index_put_(input, indices, values, accumulate: bool = False) -> Tensor:
    """``input.index_put_(indices, values, accumulate)``: write (or add) ``values`` at ``input[indices]`` in place.

    >>> x = ember.zeros(3)
    >>> ember.index_put_(x, (ember.tensor([0, 2]),), ember.tensor(5.)) is x
    True
    """
    from ember._ops import inplace  # it imports the indexing ops, which load after this module's users

    return inplace.index_put_(require_tensor(input, "index_put_"), indices, values, accumulate)
