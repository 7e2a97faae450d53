"""Selecting from a sparse COO tensor: ``select`` (``s[i]``, ``s[:, j]``) and ``index_select``.

Both pick stored entries in the order they are stored (as torch does, without coalescing)
through one Function, ``Gather``, whose gradient sends each output position's gradient back
to the position its entries came from.

>>> import ember
>>> s = ember.tensor([[0., 2.], [3., 0.]]).to_sparse()
>>> s[1].to_dense()
tensor([3., 0.])
>>> s.index_select(0, ember.tensor([1, 1, 0])).to_dense()
tensor([[3., 0.],
        [3., 0.],
        [0., 2.]])
"""
from __future__ import annotations

import numbers

import numpy as np

from ember._ops._support import wrap
from ember._ops.sparse import SparseOutput, ValuesAt, as_tensor_grad, coalesce, from_values, values_at, values_of
from ember._tensor import Tensor
from ember.sparse._tensor import linear_indices, make


class Gather(SparseOutput):
    """The stored entries ``entries`` of ``s``, placed at ``indices`` of a tensor of ``shape``."""

    backward_name = "IndexSelectBackward0"

    @staticmethod
    def forward(ctx, s, entries, indices, shape):
        came_from = s._ind[:, entries]
        pairs = np.stack([linear_indices(came_from, s._data.shape), linear_indices(indices, shape)])
        _, first = np.unique(pairs, axis=1, return_index=True)  # each (source, destination) once: a duplicate
        ctx.sources, ctx.destinations = came_from[:, first], indices[:, first]  # entry adds no second path
        ctx.shape = s._data.shape
        return make(indices, s._val[entries], shape, False)

    @staticmethod
    def backward(ctx, grad):
        values = values_at(as_tensor_grad(grad), ctx.destinations)
        return from_values(values, ctx.sources, ctx.shape, False), None, None, None


def matching(keys: np.ndarray, sorted_keys: np.ndarray) -> tuple:
    """Every pair ``(i, j)`` with ``keys[i] == sorted_keys[j]``, as two arrays, by ``i`` then ``j``."""
    low = np.searchsorted(sorted_keys, keys, "left")
    counts = np.searchsorted(sorted_keys, keys, "right") - low
    first = np.repeat(np.arange(len(keys)), counts)
    offsets = np.arange(first.size) - np.repeat(np.cumsum(counts) - counts, counts)
    return first, np.repeat(low, counts) + offsets


def _dim(op: str, dim: int, ndim: int) -> int:
    if not -ndim <= dim < ndim:
        raise IndexError(f"{op}: dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], "
                         f"but got {dim})")
    return dim % ndim


def index_select(input, dim: int, index: Tensor) -> Tensor:
    """The slices of ``input`` along ``dim`` at ``index``, in its order (repeats repeat)."""
    dim, sparse_dim = _dim("index_select", dim, input._data.ndim), input._ind.shape[0]
    wanted = np.asarray(index._data, np.int64).reshape(-1)
    size = input._data.shape[dim]
    if wanted.size and (wanted.min() < -size or wanted.max() >= size):
        raise IndexError(f"index_select: index out of range in self (dimension {dim} has size {size})")
    wanted %= max(size, 1)
    shape = list(input._data.shape)
    shape[dim] = wanted.size
    if dim >= sparse_dim:  # a dense dimension: the values' slices
        s = coalesce(input)
        values = values_of(s).index_select(dim - sparse_dim + 1, wrap(wanted))
        return from_values(values, s._ind, tuple(shape), True)
    order = np.argsort(wanted, kind="stable")
    entries, matches = matching(input._ind[dim], wanted[order])
    positions = order[matches]
    by_position = np.lexsort((entries, positions))  # as torch: by place in ``index``, then as stored
    entries, positions = entries[by_position], positions[by_position]
    indices = input._ind[:, entries].copy()
    indices[dim] = positions
    return Gather.apply(input, entries, indices, tuple(shape))


def select(input, dim: int, index: int) -> Tensor:
    """The slice at ``index`` along ``dim``: sparse while a sparse dimension remains, else dense."""
    ndim, sparse_dim = input._data.ndim, input._ind.shape[0]
    dim = _dim("select", dim, ndim)
    size = input._data.shape[dim]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(input._data.shape)} at "
                         f"dimension {dim}")
    index %= size
    shape = tuple(n for d, n in enumerate(input._data.shape) if d != dim)
    if dim >= sparse_dim:
        s = coalesce(input)
        return from_values(values_of(s).select(dim - sparse_dim + 1, index), s._ind, shape, True)
    if sparse_dim == 1:  # nothing sparse remains: the (summed) values stored at ``index``
        return ValuesAt.apply(input, np.array([[index]], np.int64))[0]
    entries = np.flatnonzero(input._ind[dim] == index)
    indices = np.delete(input._ind[:, entries], dim, axis=0)
    return Gather.apply(input, entries, indices, shape)


def getitem(input, key):
    """``s[i]`` and ``s[:, ..., i]``: one integer, the other positions full slices."""
    key = key if isinstance(key, tuple) else (key,)
    full = [k == slice(None) for k in key]
    integers = [i for i, k in enumerate(key) if isinstance(k, numbers.Integral) and not isinstance(k, bool)]
    if len(integers) != 1 or sum(full) != len(key) - 1:
        raise NotImplementedError(f"indexing a sparse COO tensor takes one integer (s[i], s[:, j]), got {key!r}; "
                                  "use index_select, or .to_dense() first")
    return select(input, integers[0], int(key[integers[0]]))
