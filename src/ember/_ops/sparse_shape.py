"""Reshaping sparse COO tensors: ``cat``, ``stack``, ``unsqueeze``, ``permute``, and their empty ones
(``zeros_like``, ``new_zeros``, ``ember.zeros(..., layout=ember.sparse_coo)``).

Each moves stored entries to new coordinates through ``Gather`` (whose gradient sends each
position's gradient back), keeping them in their stored order, as torch does.

>>> import ember
>>> s = ember.tensor([[0., 2.], [3., 0.]]).to_sparse()
>>> ember.cat([s, s]).shape, s.unsqueeze(0).sparse_dim()
(ember.Size([4, 2]), 3)
"""
from __future__ import annotations

import numpy as np

from ember._dtype import defaults, to_dtype
from ember._ops.sparse import SparseOutput, as_tensor_grad, is_sparse
from ember._ops.sparse_select import Gather, _dim
from ember.sparse._tensor import make


class SideBySide(SparseOutput):
    """Sparse tensors of one size, their entries side by side: their sum, so each one's gradient is the output's."""

    backward_name = "CatBackward0"

    @staticmethod
    def forward(ctx, *tensors):
        first = tensors[0]
        indices = np.concatenate([t._ind for t in tensors], axis=1)
        values = np.concatenate([t._val for t in tensors])
        return make(indices, values, first._data.shape, False)

    @staticmethod
    def backward(ctx, grad):
        grad = as_tensor_grad(grad)
        return tuple(grad for _ in ctx.needs_input_grad)


def _moved(t, indices, shape):
    """``t``'s entries at new coordinates ``indices`` in a tensor of ``shape``."""
    return Gather.apply(t, np.arange(t._ind.shape[1]), indices, tuple(shape))


def cat(tensors, dim: int = 0, *, out=None):
    tensors = list(tensors)
    for i, t in enumerate(tensors):
        if not is_sparse(t):
            raise RuntimeError(f"Concatenating sparse tensors, but a dense tensor was found at position {i}.")
    first = tensors[0]
    dim = _dim("cat", dim, first._data.ndim)
    for i, t in enumerate(tensors):
        same = [n for d, n in enumerate(t._data.shape) if d != dim] == \
               [n for d, n in enumerate(first._data.shape) if d != dim]
        if t._data.ndim != first._data.ndim or not same:
            raise RuntimeError(f"All tensors must have the same shape: {list(first._data.shape)} (except in the "
                               f"concatenating dimension), but found shape: {list(t._data.shape)} at position {i}.")
        if t._ind.shape[0] != first._ind.shape[0]:
            raise RuntimeError("cat: all sparse tensors need the same number of sparse dimensions")
    if dim >= first._ind.shape[0]:
        raise NotImplementedError("cat: along a dense dimension of sparse tensors is not supported; "
                                  "use a sparse dimension, or .to_dense() first")
    shape = list(first._data.shape)
    shape[dim] = sum(t._data.shape[dim] for t in tensors)
    moved, offset = [], 0
    for t in tensors:
        indices = t._ind.copy()
        indices[dim] += offset
        offset += t._data.shape[dim]
        moved.append(_moved(t, indices, shape))
    return SideBySide.apply(*moved)


def unsqueeze(input, dim: int):
    ndim, sparse_dim = input._data.ndim, input._ind.shape[0]
    dim = _dim("unsqueeze", dim, ndim + 1)
    shape = list(input._data.shape)
    shape.insert(dim, 1)
    if dim > sparse_dim:
        raise NotImplementedError("unsqueeze: inserting a dense dimension into a sparse tensor is not supported")
    indices = np.insert(input._ind, dim, 0, axis=0)
    return _moved(input, indices, shape)


def stack(tensors, dim: int = 0, *, out=None):
    tensors = list(tensors)
    return cat([unsqueeze(t, dim) for t in tensors], dim)


def permute(input, *dims):
    dims = tuple(dims[0]) if len(dims) == 1 and isinstance(dims[0], (tuple, list)) else dims
    ndim, sparse_dim = input._data.ndim, input._ind.shape[0]
    dims = tuple(_dim("permute", d, ndim) for d in dims)
    if sorted(dims) != list(range(ndim)):
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does not match the length "
                           f"of the desired ordering of dimensions i.e. input.dim() = {ndim} is not equal to "
                           f"len(dims) = {len(dims)}")
    if dims[sparse_dim:] != tuple(range(sparse_dim, ndim)):
        raise NotImplementedError("permute: a sparse tensor's dense dimensions stay where they are")
    return _moved(input, input._ind[list(dims)], [input._data.shape[d] for d in dims])


def empty_sparse(shape, dtype=None, sparse_dim: int | None = None, requires_grad: bool = False):
    """A sparse tensor of ``shape`` with no entries (all its dimensions sparse unless ``sparse_dim`` says)."""
    shape = tuple(int(n) for n in shape)
    sparse_dim = len(shape) if sparse_dim is None else sparse_dim
    np_dtype = (to_dtype(dtype) if dtype is not None else defaults.floating).np
    t = make(np.zeros((sparse_dim, 0), np.int64), np.zeros((0, *shape[sparse_dim:]), np_dtype), shape, True)
    t._requires_grad = requires_grad
    return t


def empty_of_layout(op: str, shape, dtype, layout, requires_grad: bool = False, sparse_dim: int | None = None):
    """A tensor of ``shape`` in ``layout`` with no stored entries (zeros, for the strided layout)."""
    from ember import _layout

    if layout is _layout.strided:
        from ember import zeros

        return zeros(tuple(shape), dtype=dtype, requires_grad=requires_grad)
    if layout in _layout.COMPRESSED:
        from ember._ops.sparse_compressed_math import empty_compressed

        return empty_compressed(op, shape, dtype, layout, requires_grad)
    return empty_sparse(shape, dtype, sparse_dim, requires_grad)


def zeros_like(input, *, dtype=None, layout=None, device=None, pin_memory=False, requires_grad=False,
               memory_format=None):
    """``zeros_like(s)``: a sparse tensor of ``s``'s size and sparse dimensions with no entries; with
    ``layout``, a tensor of that layout (dense zeros for ``ember.strided``), as torch's."""
    if layout is not None and layout is not input.layout:
        return empty_of_layout("zeros_like", input._data.shape, dtype or input.dtype, layout, requires_grad)
    return empty_sparse(input._data.shape, dtype or input.dtype, input._ind.shape[0], requires_grad)


def new_zeros(input, *size, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
    shape = tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else size
    return empty_of_layout("new_zeros", shape, dtype or input.dtype, layout or input.layout, requires_grad)


class NarrowCopy(SparseOutput):
    """``length`` slices of a sparse tensor from ``start`` along ``dim``: along a sparse dimension the entries
    inside the range, moved to start at 0; along a dense one every entry, its values narrowed. Its coalesced
    flag is the input's. As torch's, the op is recorded but has no derivative."""

    backward_name = "NarrowCopyBackward0"

    @staticmethod
    def forward(ctx, s, dim, start, length):
        shape = list(s._data.shape)
        shape[dim] = length
        sparse_dim = s._ind.shape[0]
        if dim < sparse_dim:
            inside = (s._ind[dim] >= start) & (s._ind[dim] < start + length)
            indices, values = s._ind[:, inside], s._val[inside]
            indices[dim] -= start
        else:
            along = (slice(None),) * (dim - sparse_dim + 1) + (slice(start, start + length),)  # (past the nnz axis)
            indices, values = s._ind.copy(), s._val[along].copy()
        out = make(indices, values, tuple(shape), s._coalesced)
        out._coalesced = s._coalesced  # torch keeps the input's flag, even where one entry or none is left
        return out

    @staticmethod
    def backward(ctx, grad):
        raise NotImplementedError("narrow_copy: the derivative for a sparse COO input is not implemented (as in "
                                  "torch); select the slices with index_select, which has one")


def narrow_copy(input, dim: int, start, length: int, *, out=None):
    """``input.narrow_copy(dim, start, length)`` for a sparse COO ``input``: a new sparse tensor of the slices
    ``start`` to ``start + length - 1`` along ``dim`` (sparse or dense).

    >>> import ember
    >>> s = ember.tensor([[1., 0.], [0., 2.], [3., 0.]]).to_sparse()
    >>> ember.narrow_copy(s, 0, 1, 2).to_dense()
    tensor([[0., 2.],
            [3., 0.]])
    """
    ndim = input._data.ndim
    if not 0 <= dim < ndim:  # torch takes no negative dim for a sparse input
        raise RuntimeError(f"narrow_copy: dimension {dim} out of range; expecting 0 <= dim < {ndim} for a sparse "
                           "tensor (negative dims are not taken)")
    start, length = int(start), int(length)
    if length < 0:
        raise RuntimeError(f"narrow_copy: length must be non-negative, got {length}")
    size = input._data.shape[dim]
    if start < 0 or start + length > size:
        raise RuntimeError(f"narrow_copy: invalid range to narrow: range({start}, {start + length}) must be a subset "
                           f"of range(0, {size}) for a sparse tensor")
    return NarrowCopy.apply(input, dim, start, length)
