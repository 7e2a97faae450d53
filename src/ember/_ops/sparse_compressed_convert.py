"""Conversions between the compressed layouts, COO and dense tensors, and the transpose (CSR <-> CSC).

Each is a composite: the index arrays are computed in NumPy, and the values are gathered with ember ops
and laid on the new indices by ``FromValues``, so every conversion is differentiable.

>>> import ember
>>> d = ember.tensor([[1., 0.], [2., 3.]])
>>> d.to_sparse_csc().row_indices(), d.to_sparse_bsr((1, 2)).values().shape
(tensor([0, 1, 1]), ember.Size([2, 1, 2]))
"""
from __future__ import annotations

import numpy as np

from ember import _layout
from ember._ops import sparse as coo
from ember._ops._support import wrap
from ember._ops import sparse_compressed as C
from ember._ops.sparse_compressed import from_values, to_dense, values_of
from ember._tensor import Tensor
from ember.sparse._compressed import (
    BLOCKED, KIND_NAMES, ROW_MAJOR, SparseCompressedTensor, batch_ndim, blocksize, dense_ndim, element_shape,
    is_compressed, make, storage_coordinates,
)

_NODE = {_layout.sparse_csr: C.ToSparseCsr, _layout.sparse_csc: C.ToSparseCsc, _layout.sparse_bsr: C.ToSparseBsr,
         _layout.sparse_bsc: C.ToSparseBsc}
_CONVERTER = {_layout.sparse_csr: "to_sparse_csr", _layout.sparse_csc: "to_sparse_csc",
              _layout.sparse_bsr: "to_sparse_bsr", _layout.sparse_bsc: "to_sparse_bsc"}


def _checked_blocksize(op: str, layout, block) -> tuple:
    if layout not in BLOCKED:
        return (1, 1)
    if block is None:
        raise RuntimeError(f"{op}: conversion to {KIND_NAMES[layout]} without blocksize argument given is not "
                           "supported; pass blocksize=(rows, cols)")
    block = (block, block) if isinstance(block, int) else tuple(block)
    if len(block) != 2:
        raise RuntimeError(f"{op}: blocksize needs to be a tuple of size 2, but got {len(block)}")
    if min(block) <= 0:
        raise RuntimeError(f"{op}: blocksize needs to be positive, but got {list(block)}")
    return tuple(int(b) for b in block)


def _compressed_arrays(batch: np.ndarray, rows: np.ndarray, cols: np.ndarray, batches: int, sizes: tuple,
                       row_major: bool) -> tuple:
    """From the (batch, row, column) of each entry, sorted row-major: the compressed and plain indices, and the
    order the entries take in the new layout (None: the same)."""
    major, minor, n = (rows, cols, sizes[0]) if row_major else (cols, rows, sizes[1])
    order = None if row_major else np.lexsort((minor, major, batch))
    if order is not None:
        batch, major, minor = batch[order], major[order], minor[order]
    counts = np.bincount(batch, minlength=batches)
    if batches and (counts != counts[0]).any():
        raise RuntimeError("Expect the same number of specified elements per batch.")
    compressed = np.zeros((batches, n + 1), np.int64)
    per_row = np.bincount(batch * n + major, minlength=batches * n).reshape(batches, n)
    np.cumsum(per_row, axis=1, out=compressed[:, 1:])
    return compressed, minor.reshape(batches, -1).astype(np.int64), order


def _laid_out(values: Tensor, compressed: np.ndarray, plain: np.ndarray, shape: tuple, b: int, layout, node,
              index_dtype) -> SparseCompressedTensor:
    """``values`` on the new indices (``(batches, ...)`` arrays, given the batch shape ``shape[:b]`` here)."""
    pattern = make(compressed.reshape(*shape[:b], -1).astype(index_dtype, copy=False),
                   plain.reshape(*shape[:b], -1).astype(index_dtype, copy=False), np.zeros(0), shape, layout)
    return from_values(values, pattern, node=node or _NODE[layout])


def from_dense(x: Tensor, layout, block=None, dense_dim=None, node=None,
               index_dtype=np.int64) -> SparseCompressedTensor:
    """The blocks of ``x`` that hold a nonzero element, as a tensor of ``layout``."""
    op = f"dense_to_{_CONVERTER[layout][3:]}"
    block = _checked_blocksize(op, layout, block)
    ndim, dense_dim = x._data.ndim, dense_dim or 0
    if not 0 <= dense_dim <= ndim - 2:
        raise RuntimeError(f"{op}: dense_dim argument must be in [0,{max(ndim - 2, 0)}] range, but {dense_dim} is "
                           f"given (a tensor of {ndim} dimensions has 2 sparse ones, the rest batch or dense)")
    b = ndim - 2 - dense_dim
    shape = x._data.shape
    rows, cols = shape[b], shape[b + 1]
    if rows % block[0] or cols % block[1]:
        raise RuntimeError(f"{op}: tensor sparse size ({rows},{cols}) must be divisible by given blocksize "
                           f"({block[0]},{block[1]})")
    batches = int(np.prod(shape[:b], dtype=np.int64))
    blocks = x.reshape(batches, rows // block[0], block[0], cols // block[1], block[1], *shape[b + 2:])
    mask = (blocks._data != 0).any(axis=(2, 4) + tuple(range(5, blocks._data.ndim)))
    batch, r, c = np.nonzero(mask)
    compressed, plain, order = _compressed_arrays(batch, r, c, batches, mask.shape[1:], layout in ROW_MAJOR)
    if order is not None:
        batch, r, c = batch[order], r[order], c[order]
    picked = blocks.permute(0, 1, 3, 2, 4, *range(5, blocks._data.ndim))[(wrap(batch), wrap(r), wrap(c))]
    values_shape = tuple(shape[:b]) + (plain.shape[1],) + (block if layout in BLOCKED else ()) + tuple(shape[b + 2:])
    return _laid_out(picked.reshape(values_shape), compressed, plain, shape, b, layout, node, index_dtype)


class ToSparse(coo.FromValues):
    """COO's ``FromValues`` under torch's name for a compressed tensor's ``to_sparse()``."""

    backward_name = "ToSparseBackward1"


def to_coo(s: SparseCompressedTensor) -> Tensor:
    """Every stored element (the zeros within a stored block too) as a COO tensor whose sparse dimensions are
    the batch, row and column ones, in the order the values are stored (as torch): coalesced if that is
    row-major, as a CSR tensor's is."""
    coordinates = np.stack(storage_coordinates(s))
    shape = s._data.shape
    linear = np.ravel_multi_index(tuple(coordinates), shape[: coordinates.shape[0]]) if coordinates.shape[1] else \
        np.zeros(0, np.int64)
    elements = values_of(s).reshape(element_shape(s))
    return ToSparse.apply(elements, coordinates, tuple(shape), bool((np.diff(linear) > 0).all()))


def from_coo(s: Tensor, layout, block=None, dense_dim=None, node=None,
             index_dtype=np.int64) -> SparseCompressedTensor:
    """A COO tensor's entries, its last two sparse dimensions compressed (those before them: batch ones)."""
    op = f"sparse_coo_{_CONVERTER[layout]}"
    sparse_dim = s._ind.shape[0]
    if sparse_dim < 2:
        raise RuntimeError(f"{op}: expected a COO tensor with at least 2 sparse dimensions, got {sparse_dim}")
    if dense_dim is not None and dense_dim != s._val.ndim - 1:
        raise RuntimeError(f"{op}: dense_dim {dense_dim} differs from the COO tensor's dense_dim "
                           f"{s._val.ndim - 1}; convert with to_sparse(sparse_dim) first")
    if layout in BLOCKED:
        return from_dense(coo.to_dense(s), layout, block, s._val.ndim - 1, node, index_dtype)
    s = coo.coalesce(s)
    shape, b = s._data.shape, sparse_dim - 2
    batch = np.ravel_multi_index(tuple(s._ind[:b]), shape[:b]) if b else np.zeros(s._ind.shape[1], np.int64)
    batches = int(np.prod(shape[:b], dtype=np.int64))
    compressed, plain, order = _compressed_arrays(batch, s._ind[b], s._ind[b + 1], batches, shape[b: b + 2],
                                                  layout in ROW_MAJOR)
    values = coo.values_of(s)
    values = values if order is None else values.index_select(0, wrap(order))
    values_shape = tuple(shape[:b]) + (plain.shape[1],) + tuple(shape[sparse_dim:])
    return _laid_out(values.reshape(values_shape), compressed, plain, shape, b, layout, node, index_dtype)


def _between(s: SparseCompressedTensor, layout, block, dense_dim) -> SparseCompressedTensor:
    op = f"sparse_compressed_{_CONVERTER[layout]}"
    if dense_dim is not None:
        raise RuntimeError(f"{_CONVERTER[layout]}: conversion from {KIND_NAMES[s.layout]} to {KIND_NAMES[layout]} "
                           "with dense_dim argument given is not supported")
    if layout is s.layout and (layout not in BLOCKED or block is None or
                               _checked_blocksize(op, layout, block) == blocksize(s)):
        return s
    if s.layout in BLOCKED and layout not in BLOCKED:
        raise RuntimeError(f"{op}: expected SparseCsr or SparseCsc layout but got {KIND_NAMES[s.layout]}")
    if layout in BLOCKED:  # (the indices keep their dtype, as torch's)
        return from_dense(to_dense(s), layout, block, dense_ndim(s), index_dtype=s._cidx.dtype)
    return from_coo(to_coo(s), layout, index_dtype=s._cidx.dtype)


def convert(x: Tensor, layout, block=None, dense_dim=None) -> Tensor:
    """``x`` (dense, COO or compressed) as a tensor of the compressed ``layout``."""
    if is_compressed(x):
        return _between(x, layout, block, dense_dim)
    if coo.is_sparse(x):
        return from_coo(x, layout, block, dense_dim)
    return from_dense(x, layout, block, dense_dim)


def transpose(s: SparseCompressedTensor, dim0: int, dim1: int) -> SparseCompressedTensor:
    """The two sparse dimensions swapped: CSR becomes CSC (BSR, BSC) on the same indices, no copy."""
    ndim, b = s._data.ndim, batch_ndim(s)
    dims = sorted((dim0 % max(ndim, 1), dim1 % max(ndim, 1)))
    if dims[0] == dims[1]:
        return s
    if dims != [b, b + 1]:
        raise RuntimeError(f"transpose(): of a {KIND_NAMES[s.layout]} tensor, only its two sparse dimensions "
                           f"({b} and {b + 1}) can be swapped, got {dim0} and {dim1}; call .to_dense() first")
    swapped = {_layout.sparse_csr: _layout.sparse_csc, _layout.sparse_csc: _layout.sparse_csr,
               _layout.sparse_bsr: _layout.sparse_bsc, _layout.sparse_bsc: _layout.sparse_bsr}[s.layout]
    shape = list(s._data.shape)
    shape[b], shape[b + 1] = shape[b + 1], shape[b]
    values = values_of(s)
    if s.layout in BLOCKED:  # each block turns too
        values = values.transpose(b + 1, b + 2)
    return from_values(values, s, tuple(shape), swapped, C.T)


def to_sparse(x: Tensor, sparse_dim: int | None = None, *, layout=None, blocksize=None, dense_dim=None) -> Tensor:
    """``x.to_sparse(layout=...)``: COO by default, or any compressed layout."""
    if layout is None or layout is _layout.sparse_coo:
        if is_compressed(x):
            if sparse_dim is not None and sparse_dim != x._data.ndim - dense_ndim(x):
                raise RuntimeError("to_sparse: conversion from a compressed layout to Sparse with sparse_dim "
                                   f"{sparse_dim} is not supported; it has {x._data.ndim - dense_ndim(x)}")
            return to_coo(x)
        return coo.to_sparse(x, sparse_dim, dense_dim=dense_dim)
    if layout is _layout.strided:
        return x.to_dense()
    if layout not in _layout.COMPRESSED:
        raise TypeError(f"to_sparse(): layout must be an ember layout, got {layout!r}")
    if sparse_dim is not None:
        raise RuntimeError(f"to_sparse: sparse_dim argument must be None for layout {layout}, got {sparse_dim}")
    return convert(x, layout, blocksize, dense_dim)
