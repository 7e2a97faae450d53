"""Masks and flat indices: masked_fill, masked_scatter, masked_select, take, put, take_along_dim, nonzero.

A mask is a bool tensor that broadcasts with the input; take and put index the input as if it were flat
(row-major), whatever its shape.

>>> import ember
>>> x = ember.tensor([[1., 2.], [3., 4.]])
>>> x.masked_fill(x > 2, 0.), x.take(ember.tensor([3, 0]))
(tensor([[1., 2.],
        [0., 0.]]), tensor([4., 1.]))
"""
from __future__ import annotations

import numpy as np

from ember import _dtype
from ember._ops._jvp import linear_jvp
from ember._ops._support import check_broadcast, ember_function, require_tensor, wrap
from ember._ops.arithmetic import where
from ember._ops.joining import cat
from ember._ops.out import into_out, into_out_of_its_dtype
from ember._ops.reduction import summed_to
from ember._ops.scatter import (
    _LONG_INDEX, _scatter_value, check_bounds, checked_dim, fill_value, gather, index_data,
)
from ember._tensor import Tensor
from ember.autograd.function import Function


def _mask_data(op: str, mask, position: int = 2) -> np.ndarray:
    mask = require_tensor(mask, op, position, "mask")
    if mask._data.dtype != np.bool_:
        raise RuntimeError(f"{op}(): only supports boolean masks, but got mask with dtype "
                           f"{_dtype.from_numpy_dtype(mask._data.dtype)}; make one with a comparison, or mask.bool()")
    return mask._data


def _broadcast_shape(op: str, x: Tensor, mask: np.ndarray) -> tuple:
    if x._data.shape == mask.shape:
        return mask.shape
    check_broadcast(op, x._data.shape, mask.shape)
    return np.broadcast_shapes(x._data.shape, mask.shape)


def check_mask_fits(op: str, x: Tensor, mask) -> None:
    """An in-place masked op writes into ``x``: the mask may broadcast to it, not grow it."""
    if isinstance(mask, Tensor) and mask._data.shape != x._data.shape:
        shape = _broadcast_shape(op, x, mask._data)
        if shape != x._data.shape:
            raise RuntimeError(f"{op}(): output with shape {list(x._data.shape)} doesn't match the broadcast shape "
                               f"{list(shape)} of the mask {list(mask._data.shape)}")


def diagonal_mask(op: str, x: Tensor, wraps: bool) -> Tensor:
    """The bool mask of the main diagonal that ``fill_diagonal_`` writes: ``(i, i, ..., i)``; a tall matrix with
    ``wrap`` (``wraps``) starts again every ``columns + 1`` rows, as its flat memory does."""
    shape = x._data.shape
    if len(shape) < 2:
        raise RuntimeError(f"{op}(): dimensions must larger than 1: got a {len(shape)}-d tensor of shape {list(shape)}")
    if len(shape) > 2 and len(set(shape)) != 1:
        raise RuntimeError(f"{op}(): all dimensions of input must be of equal length: got shape {list(shape)}")
    mask = np.zeros(shape, dtype=bool)
    if len(shape) == 2 and wraps and shape[0] > shape[1]:
        mask.reshape(-1)[:: shape[1] + 1] = True
    else:
        steps = np.arange(min(shape))
        mask[(steps,) * len(shape)] = True
    return wrap(mask)


# ----------------------------------------------------------------- masked_fill


class MaskedFill(Function):
    """A copy of ``x`` (broadcast with ``mask``) with a number where ``mask`` is True."""

    backward_name = "MaskedFillBackward0"
    torch_saved_tensors = {"mask": 0}
    graph_inputs = (0,)
    jvp = linear_jvp(0, 2)

    @staticmethod
    def forward(ctx, x, mask, value):
        ctx.shape = x._data.shape
        ctx.save_for_backward(mask)
        fill = fill_value(value, x._data.dtype)
        return wrap(np.asarray(np.where(mask._data, fill, x._data), order="C"))  # torch's copy is contiguous

    @staticmethod
    def backward(ctx, grad):
        (mask,), needs = ctx.saved_tensors, ctx.needs_input_grad
        grad_x = summed_to(masked_fill(grad, mask, 0), ctx.shape) if needs[0] else None
        grad_value = where(mask, grad, 0).sum() if needs[2] else None
        return grad_x, None, grad_value


class MaskedFillTensor(MaskedFill):
    """As MaskedFill, the value a 0-d tensor (which gets the gradient of every element it filled)."""

    backward_name = "MaskedFillBackward1"
    torch_saved_tensors = {"mask": 0}
    graph_inputs = (0, 2)


@ember_function
def masked_fill(input, mask, value) -> Tensor:
    """A copy of ``input`` with ``value`` (a number or a 0-d tensor) where the bool ``mask`` is True; the two
    broadcast together.

    >>> ember.masked_fill(ember.tensor([1., 2., 3.]), ember.tensor([True, False, True]), -1.)
    tensor([-1.,  2., -1.])
    """
    x = require_tensor(input, "masked_fill")
    _broadcast_shape("masked_fill", x, _mask_data("masked_fill", mask))
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise RuntimeError(f"masked_fill(): only supports a 0-dimensional value tensor, but got tensor with "
                               f"{value._data.ndim} dimension(s); pass value.item() or a 0-d tensor")
        _scatter_value("masked_fill", x, value.item())  # as torch: the value must fit, as a number must
        return MaskedFillTensor.apply(x, mask, value)
    return MaskedFill.apply(x, mask, _scatter_value("masked_fill", x, value))


# ----------------------------------------------------------------- masked_scatter and masked_select


class MaskedScatter(Function):
    backward_name = "MaskedScatterBackward0"
    graph_inputs = (0, 2)
    jvp = linear_jvp(0, 2)

    @staticmethod
    def forward(ctx, x, mask, source, shape):
        ctx.shape, ctx.source_shape = x._data.shape, source._data.shape
        ctx.save_for_backward(mask)
        out = np.array(np.broadcast_to(x._data, shape), order="C")  # contiguous, as torch's copy
        chosen = np.broadcast_to(mask._data, shape)
        ctx.count = int(chosen.sum())
        out[chosen] = source._data.reshape(-1)[:ctx.count]
        return wrap(out)

    @staticmethod
    def backward(ctx, grad):
        (mask,), needs = ctx.saved_tensors, ctx.needs_input_grad
        grad_x = summed_to(masked_fill(grad, mask, 0), ctx.shape) if needs[0] else None
        grad_source = None
        if needs[2]:
            chosen = masked_select(grad, mask)
            rest = int(np.prod(ctx.source_shape)) - ctx.count
            grad_source = cat([chosen, wrap(np.zeros(rest, grad._data.dtype))]).reshape(ctx.source_shape)
        return grad_x, None, grad_source, None


@ember_function
def masked_scatter(input, mask, source) -> Tensor:
    """A copy of ``input`` with the elements of ``source``, in order, where the bool ``mask`` is True.

    >>> ember.masked_scatter(ember.zeros(4), ember.tensor([True, False, True, False]), ember.tensor([1., 2.]))
    tensor([1., 0., 2., 0.])
    """
    x = require_tensor(input, "masked_scatter")
    source = require_tensor(source, "masked_scatter", 3, "source")
    shape = _broadcast_shape("masked_scatter", x, _mask_data("masked_scatter", mask))
    if source._data.dtype != x._data.dtype:
        raise RuntimeError(f"masked_scatter(): expected self and source to have same dtypes but got "
                           f"{_dtype.scalar_type_name(x._data.dtype)} and "
                           f"{_dtype.scalar_type_name(source._data.dtype)}; convert source, e.g. source.to(x.dtype)")
    count = int(np.broadcast_to(mask._data, shape).sum())
    if source._data.size < count:
        raise RuntimeError(f"masked_scatter(): Number of elements of source < number of ones in mask "
                           f"({source._data.size} < {count})")
    return MaskedScatter.apply(x, mask, source, shape)


class MaskedSelect(Function):
    backward_name = "MaskedSelectBackward0"
    graph_inputs = (0,)
    jvp = linear_jvp(0)

    @staticmethod
    def forward(ctx, x, mask, shape):
        ctx.shape, ctx.full = x._data.shape, shape
        ctx.save_for_backward(mask)
        return wrap(np.broadcast_to(x._data, shape)[np.broadcast_to(mask._data, shape)])

    @staticmethod
    def backward(ctx, grad):
        zeros = wrap(np.zeros(ctx.full, grad._data.dtype))
        return summed_to(masked_scatter(zeros, ctx.saved_tensors[0], grad), ctx.shape), None, None


@ember_function
def masked_select(input, mask, *, out=None) -> Tensor:
    """The elements of ``input`` where the bool ``mask`` (broadcast with it) is True, as a 1-d tensor.

    >>> ember.masked_select(ember.tensor([[1, 2], [3, 4]]), ember.tensor([False, True]))
    tensor([2, 4])
    """
    x = require_tensor(input, "masked_select")
    shape = _broadcast_shape("masked_select", x, _mask_data("masked_select", mask))
    result = MaskedSelect.apply(x, mask, shape)
    return result if out is None else into_out_of_its_dtype("masked_select", result, out, x)


# ----------------------------------------------------------------- take and put: the input as a flat vector


def _flat_index(op: str, x: Tensor, index, position: int = 2) -> np.ndarray:
    """The index of take/put (int64), every element in ``[-numel, numel)``."""
    data = index_data(op, index, _LONG_INDEX, position)
    size = x._data.size
    if data.size and (data.min() < -size or data.max() >= size):
        bad = data[(data < -size) | (data >= size)].flat[0]
        raise IndexError(f"{op}(): out of range: tried to access index {bad} on a tensor of {size} elements")
    return data


class Take(Function):
    backward_name = "TakeBackward0"
    graph_inputs = (0,)
    jvp = linear_jvp(0)

    @staticmethod
    def forward(ctx, x, index, flat):
        ctx.shape = x._data.shape
        ctx.save_for_backward(index)
        return wrap(x._data.reshape(-1)[flat])

    @staticmethod
    def backward(ctx, grad):
        zeros = wrap(np.zeros(ctx.shape, grad._data.dtype))
        return put(zeros, ctx.saved_tensors[0], grad, accumulate=True), None, None


@ember_function
def take(input, index, *, out=None) -> Tensor:
    """The elements of ``input``, read as a flat vector, at ``index`` (int64; negative counts from the end).

    >>> ember.take(ember.tensor([[1, 2], [3, 4]]), ember.tensor([[0, -1]]))
    tensor([[1, 4]])
    """
    x = require_tensor(input, "take")
    result = Take.apply(x, index, _flat_index("take", x, index))
    return result if out is None else into_out_of_its_dtype("take", result, out, x)


class Put(Function):
    backward_name = "PutBackward0"
    graph_inputs = (0, 2)

    @staticmethod
    def forward(ctx, x, index, source, flat, accumulate):
        ctx.accumulate, ctx.source_shape = accumulate, source._data.shape
        ctx.save_for_backward(index)
        out = x._data.copy()
        values, flat = source._data.reshape(-1), flat.reshape(-1)
        if accumulate:
            np.add.at(out.reshape(-1), flat, values)  # half rounds at each step, as torch's put does
        else:
            out.reshape(-1)[flat] = values
        return wrap(out)

    @staticmethod
    def backward(ctx, grad):
        (index,), needs = ctx.saved_tensors, ctx.needs_input_grad
        grad_x = None
        if needs[0]:
            grad_x = grad if ctx.accumulate else put(grad, index, wrap(np.zeros(ctx.source_shape, grad._data.dtype)))
        grad_source = take(grad, index).reshape(ctx.source_shape) if needs[2] else None
        return grad_x, None, grad_source, None, None


@ember_function
def put(input, index, source, accumulate: bool = False) -> Tensor:
    """A copy of ``input`` with ``source`` written (or, with ``accumulate``, added) at ``index``, reading the
    input as a flat vector.

    >>> ember.put(ember.zeros(2, 2), ember.tensor([3, 0]), ember.tensor([1., 2.]))
    tensor([[2., 0.],
            [0., 1.]])
    """
    x = require_tensor(input, "put")
    source = require_tensor(source, "put", 3, "source")
    flat = _flat_index("put", x, index)
    if source._data.size != flat.size:
        raise IndexError(f"put(): Expected source and index to have the same number of elements, but got "
                         f"source.numel() = {source._data.size}, index.numel() = {flat.size}")
    if source._data.dtype != x._data.dtype:
        raise RuntimeError(f"put(): self and source expected to have the same dtype, but got self.dtype = "
                           f"{_dtype.scalar_type_name(x._data.dtype)} and source.dtype = "
                           f"{_dtype.scalar_type_name(source._data.dtype)}; convert source, e.g. source.to(x.dtype)")
    return Put.apply(x, index, source, flat, bool(accumulate))


@ember_function
def take_along_dim(input, indices, dim: int | None = None, *, out=None) -> Tensor:
    """``gather`` with input and indices broadcast against each other apart from ``dim``; without ``dim``, both
    are read as flat vectors. Pairs with the indices of argmax, argsort and topk.

    >>> x = ember.tensor([[10, 30, 20], [60, 40, 50]])
    >>> ember.take_along_dim(x, ember.tensor([[1], [0]]), dim=1)
    tensor([[30],
            [60]])
    """
    x = require_tensor(input, "take_along_dim")
    data = index_data("take_along_dim", indices, _LONG_INDEX, 2)
    if dim is None:
        result = gather(x.reshape(-1), 0, indices.reshape(-1))
    else:
        if data.ndim != x._data.ndim:
            raise RuntimeError(f"take_along_dim(): input and indices should have the same number of dimensions, "
                               f"but got {x._data.ndim} dimensions for input, and {data.ndim} dimensions for indices")
        if not x._data.ndim:
            raise IndexError(f"take_along_dim(): Dimension specified as {dim} but tensor has no dimensions")
        dim = checked_dim("take_along_dim", dim, x._data.ndim)
        result = gather(*_broadcast_apart_from(x, _from_the_end(data, x._data.shape[dim], dim), dim))
    return result if out is None else into_out("take_along_dim", result, out, x)


def _from_the_end(data: np.ndarray, size: int, dim: int) -> Tensor:
    """Indices along ``dim`` with negative ones counted from the end, as torch's take_along_dim reads them.

    torch reads any index modulo the size here; one outside ``[-size, size)`` is refused instead, as by gather.
    """
    check_bounds("take_along_dim", data, size, dim, negative=True)
    return wrap(np.where(data < 0, data + size, data))


def _broadcast_apart_from(x: Tensor, indices: Tensor, dim: int) -> tuple:
    """(x, dim, indices) expanded to one shape in every dim but ``dim``, as gather takes them."""
    if not x._data.ndim:
        return x, dim, indices
    wanted = list(x._data.shape)
    wanted[dim] = indices._data.shape[dim]
    check_broadcast("take_along_dim", tuple(wanted), indices._data.shape)
    shape = list(np.broadcast_shapes(tuple(wanted), indices._data.shape))
    indices = indices.expand(shape)
    shape[dim] = x._data.shape[dim]
    return x.expand(shape), dim, indices


# ----------------------------------------------------------------- nonzero and argwhere


@ember_function
def nonzero(input, *, out=None, as_tuple: bool = False):
    """The indices of the non-zero elements of ``input``: a ``(count, ndim)`` int64 tensor, one row each, or
    with ``as_tuple`` one 1-d tensor per dim (what ``x[x.nonzero(as_tuple=True)]`` indexes with).

    >>> ember.nonzero(ember.tensor([[0, 1], [2, 0]]))
    tensor([[0, 1],
            [1, 0]])
    """
    x = require_tensor(input, "nonzero")
    rows = np.argwhere(x._data)
    if as_tuple:
        if not x._data.ndim:
            return wrap(np.zeros((len(rows), 1), np.int64)).unbind(1)
        return wrap(rows.astype(np.int64, copy=False)).unbind(1)  # views of one tensor, as torch's
    result = wrap(rows.astype(np.int64, copy=False))
    if out is not None and isinstance(out, Tensor) and out._data.dtype != np.int64:
        raise RuntimeError(f"nonzero: Expected out tensor to have scalar type Long but got scalar type "
                           f"{_dtype.scalar_type_name(out._data.dtype)}; pass out=ember.empty(0, dtype=ember.int64)")
    return result if out is None else into_out("nonzero", result, out, x, differentiable=False)


@ember_function
def nonzero_static(input, *, size: int, fill_value: int = -1, out=None) -> Tensor:
    """``nonzero(input)`` with exactly ``size`` rows: cut, or padded with rows of ``fill_value``.

    >>> ember.nonzero_static(ember.tensor([0, 3, 4]), size=3)
    tensor([[ 1],
            [ 2],
            [-1]])
    """
    x = require_tensor(input, "nonzero_static")
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        raise RuntimeError(f"nonzero_static(): 'size' must be an non-negative integer, got {size!r}")
    rows = np.argwhere(x._data)[:size]
    padding = np.full((size - len(rows), x._data.ndim), fill_value, np.int64)
    result = wrap(np.concatenate([rows.astype(np.int64, copy=False), padding]))
    if out is not None and isinstance(out, Tensor) and out._data.dtype != np.int64:
        raise RuntimeError(f"nonzero_static: Expected out tensor to have scalar type Long but got scalar type "
                           f"{_dtype.scalar_type_name(out._data.dtype)}; pass out=ember.empty(0, dtype=ember.int64)")
    return result if out is None else into_out("nonzero_static", result, out, x, differentiable=False)


@ember_function
def unravel_index(indices, shape) -> tuple:
    """The coordinates in a tensor of ``shape`` of flat (row-major) ``indices``: one int64 tensor per dim.

    >>> ember.unravel_index(ember.tensor([4, 1]), (2, 3))
    (tensor([1, 0]), tensor([1, 1]))
    """
    data = require_tensor(indices, "unravel_index", 1, "indices")._data
    if data.dtype.kind not in "iu":
        raise TypeError(f"unravel_index(): expected 'indices' to be integer dtype, but got "
                        f"{_dtype.from_numpy_dtype(data.dtype)}")
    shape = (shape,) if isinstance(shape, int) else tuple(int(n) for n in shape)
    if any(n < 0 for n in shape):
        raise ValueError(f"unravel_index(): 'shape' cannot have negative values, but got {shape}")
    if not shape:
        return ()
    size = int(np.prod(shape))
    if data.size and (data.min() < -size or data.max() >= size):  # torch wraps these around silently
        bad = data[(data < -size) | (data >= size)].flat[0]
        raise RuntimeError(f"unravel_index(): index {bad} is out of bounds for a tensor of shape {list(shape)} "
                           f"({size} elements)")
    flat = np.where(data < 0, data + size, data).astype(np.int64)
    return tuple(wrap(np.asarray(coordinate)) for coordinate in np.unravel_index(flat, shape))


@ember_function
def argwhere(input) -> Tensor:
    """The indices of the non-zero elements of ``input``, one row each: ``nonzero(input)``.

    >>> ember.argwhere(ember.tensor([0., 3., 0., 4.]))
    tensor([[1],
            [3]])
    """
    return nonzero.__wrapped__(require_tensor(input, "argwhere"))
