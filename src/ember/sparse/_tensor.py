"""The sparse COO tensor: an ember ``Tensor`` whose layout is ``ember.sparse_coo``.

It holds an int64 ``indices`` array of shape ``(sparse_dim, nnz)`` and a ``values``
array of shape ``(nnz, *dense_shape)``. Its ``_data`` is a read-only zero-strided
array of zeros with the tensor's shape and dtype: it costs no memory, and it lets the
parts of ember that read only the shape and dtype (autograd's edges, ``size()``,
``dim()``) take a sparse tensor as they are. Everything else reaches the sparse
implementations through ``__torch_function__`` (see ``_dispatch.py``): the class is a
``Tensor`` subclass, so dense tensors never pay for it.

>>> import ember
>>> s = ember.tensor([[0., 2.], [3., 0.]]).to_sparse()
>>> s.layout, s.is_sparse, s._nnz()
(ember.sparse_coo, True, 2)
"""
from __future__ import annotations

import numpy as np

from ember import _dtype, _layout
from ember._tensor import Tensor, _fresh



class SparseCooTensor(Tensor):
    """A tensor stored as coordinates and values; make one with ``ember.sparse_coo_tensor`` or ``t.to_sparse()``."""

    is_sparse = True
    is_sparse_csr = False
    layout = _layout.sparse_coo
    _coalesced = False

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        from ember.sparse._dispatch import handle

        return handle(func, args, kwargs or {})

    def __repr__(self, *, tensor_contents=None) -> str:
        from ember.sparse._repr import sparse_repr

        return sparse_repr(self)

    def __reduce_ex__(self, protocol):
        return (_rebuild, (self._ind, self._val, tuple(self._data.shape), self._coalesced, self._requires_grad))

    def __deepcopy__(self, memo):
        copied = make(self._ind.copy(), self._val.copy(), self._data.shape, self._coalesced)
        copied._requires_grad = self._requires_grad
        return copied


def _rebuild(indices: np.ndarray, values: np.ndarray, shape: tuple, coalesced: bool, requires_grad: bool):
    t = make(indices, values, shape, coalesced)
    t._requires_grad = requires_grad
    return t


def make(indices: np.ndarray, values: np.ndarray, shape: tuple, coalesced: bool) -> SparseCooTensor:
    """A sparse tensor around ``indices`` and ``values`` (arrays, already checked), with no autograd history."""
    t = _fresh(SparseCooTensor)
    t._data = np.broadcast_to(np.zeros((), values.dtype), tuple(shape))
    t._ind = indices
    t._val = values
    t._coalesced = coalesced or indices.shape[1] <= 1
    return t


def linear_indices(indices: np.ndarray, shape: tuple) -> np.ndarray:
    """Each column of ``indices`` as one number (row-major over the sparse dimensions of ``shape``)."""
    if indices.shape[0] == 0:
        return np.zeros(indices.shape[1], np.int64)
    return np.ravel_multi_index(tuple(indices), tuple(shape[: indices.shape[0]]))


def coalesced_arrays(indices: np.ndarray, values: np.ndarray, shape: tuple) -> tuple:
    """Sorted, unique indices and each one's summed values; also where each input entry went (``inverse``)."""
    linear = linear_indices(indices, shape)
    unique, inverse = np.unique(linear, return_inverse=True)
    summed = np.zeros((len(unique), *values.shape[1:]), values.dtype)
    np.add.at(summed, inverse, values)
    if indices.shape[0] == 0:
        return np.zeros((0, len(unique)), np.int64), summed, inverse
    return np.stack(np.unravel_index(unique, tuple(shape[: indices.shape[0]]))).astype(np.int64), summed, inverse


def dtype_of(t: SparseCooTensor) -> _dtype.dtype:
    return _dtype.from_numpy_dtype(t._val.dtype)
