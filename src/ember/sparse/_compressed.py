"""The compressed sparse layouts (CSR, CSC, BSR, BSC): one ``Tensor`` subclass for the four.

A compressed tensor of shape ``(*batch, rows, cols, *dense)`` holds three arrays:

- the *compressed* indices, ``(*batch, n + 1)``: where the entries of each row (CSR, BSR: ``crow_indices``)
  or column (CSC, BSC: ``ccol_indices``) start, so row ``i``'s entries are ``[c[i], c[i + 1])``;
- the *plain* indices, ``(*batch, nnz)``: each entry's column (``col_indices``) or row (``row_indices``);
- the values, ``(*batch, nnz, *dense)``, or for the blocked layouts ``(*batch, nnz, block_rows, block_cols,
  *dense)``: there every entry is a block, and the indices count blocks.

As for COO tensors (``_tensor.py``), ``_data`` is a read-only zero-strided array of zeros with the
tensor's shape and dtype, so what reads only those takes a compressed tensor as it is; every other
call reaches ``_compressed_dispatch.py`` through ``__torch_function__``.

>>> import ember
>>> s = ember.tensor([[1., 0., 2.], [0., 3., 0.]]).to_sparse_csr()
>>> s.crow_indices(), s.col_indices()
(tensor([0, 2, 3]), tensor([0, 2, 1]))
"""
from __future__ import annotations

import numpy as np

from ember import _layout
from ember._tensor import Tensor, _fresh


ROW_MAJOR = (_layout.sparse_csr, _layout.sparse_bsr)  # compressed over rows (the others: over columns)
BLOCKED = (_layout.sparse_bsr, _layout.sparse_bsc)
# each layout's names for its compressed and plain indices, and what torch's messages call it
INDEX_NAMES = {
    _layout.sparse_csr: ("crow_indices", "col_indices"), _layout.sparse_bsr: ("crow_indices", "col_indices"),
    _layout.sparse_csc: ("ccol_indices", "row_indices"), _layout.sparse_bsc: ("ccol_indices", "row_indices"),
}
KIND_NAMES = {_layout.sparse_csr: "SparseCsr", _layout.sparse_csc: "SparseCsc", _layout.sparse_bsr: "SparseBsr",
              _layout.sparse_bsc: "SparseBsc", _layout.sparse_coo: "Sparse", _layout.strided: "Strided"}


class SparseCompressedTensor(Tensor):
    """A CSR, CSC, BSR or BSC tensor; make one with ``ember.sparse_csr_tensor(...)`` or ``t.to_sparse_csr()``."""

    is_sparse = False
    is_sparse_csr = False
    layout = _layout.sparse_csr

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        from ember.sparse._compressed_dispatch import handle

        return handle(func, args, kwargs or {})

    def __repr__(self, *, tensor_contents=None) -> str:
        from ember.sparse._repr import compressed_repr

        return compressed_repr(self)

    def __reduce_ex__(self, protocol):
        return (_rebuild, (self._cidx, self._pidx, self._val, tuple(self._data.shape), self.layout.name,
                           self._requires_grad))

    def __deepcopy__(self, memo):
        copied = like(self, self._val.copy())
        copied._cidx, copied._pidx = self._cidx.copy(), self._pidx.copy()
        copied._requires_grad = self._requires_grad
        return copied


def _rebuild(compressed, plain, values, shape: tuple, layout_name: str, requires_grad: bool):
    t = make(compressed, plain, values, shape, getattr(_layout, layout_name))
    t._requires_grad = requires_grad
    return t


def make(compressed: np.ndarray, plain: np.ndarray, values: np.ndarray, shape: tuple, layout) -> SparseCompressedTensor:
    """A compressed tensor around its three arrays (already checked), with no autograd history."""
    t = _fresh(SparseCompressedTensor)
    t._data = np.broadcast_to(np.zeros((), values.dtype), tuple(shape))
    t._cidx, t._pidx, t._val = compressed, plain, values
    t.layout = layout
    if layout is _layout.sparse_csr:
        t.is_sparse_csr = True
    return t


def like(t: SparseCompressedTensor, values: np.ndarray, shape=None, layout=None) -> SparseCompressedTensor:
    """A tensor with ``t``'s indices and other values (of the same number of entries)."""
    out = make(t._cidx, t._pidx, values, t._data.shape if shape is None else shape, layout or t.layout)
    if shape is None and layout is None and "_coordinates" in t.__dict__:  # the same elements: the same places
        out._coordinates = t._coordinates
    return out


def is_compressed(t) -> bool:
    return type(t) is SparseCompressedTensor


def batch_ndim(t: SparseCompressedTensor) -> int:
    return t._cidx.ndim - 1


def blocksize(t: SparseCompressedTensor) -> tuple:
    """The shape of one block: ``(1, 1)`` for CSR and CSC."""
    if t.layout not in BLOCKED:
        return (1, 1)
    b = batch_ndim(t)
    return tuple(t._val.shape[b + 1: b + 3])


def dense_ndim(t: SparseCompressedTensor) -> int:
    return t._val.ndim - batch_ndim(t) - 1 - (2 if t.layout in BLOCKED else 0)


def nnz(t: SparseCompressedTensor) -> int:
    return t._pidx.shape[-1]


def storage_coordinates(t: SparseCompressedTensor) -> tuple:
    """Each stored element's coordinates over the batch, row and column dimensions, in the values' storage
    order (batch, entry, then the element within a block): one int64 array per dimension. Kept on the tensor,
    whose indices never change: a matrix multiplied again and again computes them once."""
    coordinates = t.__dict__.get("_coordinates")
    if coordinates is None:
        coordinates = t._coordinates = _coordinates(t)
    return coordinates


def _coordinates(t: SparseCompressedTensor) -> tuple:
    b = batch_ndim(t)
    batch_shape = t._cidx.shape[:-1]
    batches = int(np.prod(batch_shape, dtype=np.int64))
    n, entries = t._cidx.shape[-1] - 1, nnz(t)
    counts = np.diff(t._cidx.reshape(batches, n + 1).astype(np.int64), axis=1).ravel()
    compressed = np.repeat(np.tile(np.arange(n, dtype=np.int64), batches), counts)
    plain = t._pidx.reshape(-1).astype(np.int64)
    rows, cols = (compressed, plain) if t.layout in ROW_MAJOR else (plain, compressed)
    block_rows, block_cols = blocksize(t)
    rows = (rows[:, None, None] * block_rows + np.arange(block_rows)[None, :, None])
    cols = (cols[:, None, None] * block_cols + np.arange(block_cols)[None, None, :])
    rows, cols = (a.ravel() for a in np.broadcast_arrays(rows, cols))
    batch_index = np.repeat(np.arange(batches, dtype=np.int64), entries * block_rows * block_cols)
    batch = np.unravel_index(batch_index, batch_shape) if b else ()
    return tuple(np.asarray(a, np.int64) for a in batch) + (rows, cols)


def element_shape(t: SparseCompressedTensor) -> tuple:
    """The values' shape with every stored element on one axis: ``(elements, *dense)``."""
    return (-1,) + t._val.shape[t._val.ndim - dense_ndim(t):]
