"""The checks ``sparse_coo_tensor`` makes on its indices, values and size (always: they cost one pass)."""
from __future__ import annotations

import numpy as np

from ember._tensor import Tensor


def _index_array(indices) -> np.ndarray:
    from ember._creation import as_tensor

    data = (indices if isinstance(indices, Tensor) else as_tensor(indices))._data
    if data.dtype.kind not in "iu":
        raise RuntimeError(f"sparse_coo_tensor: indices must be an int64 tensor, got {data.dtype}; "
                           "pass integer coordinates, e.g. ember.tensor([[0, 1], [2, 0]])")
    if data.ndim != 2:
        raise RuntimeError(f"sparse_coo_tensor: indices must be sparse_dim x nnz (2-d), but got a {data.ndim}-d "
                           f"tensor of shape {list(data.shape)}")
    return np.ascontiguousarray(data, dtype=np.int64)


def _values_tensor(values, dtype) -> Tensor:
    from ember._creation import as_tensor

    values = values if isinstance(values, Tensor) else as_tensor(values)
    return values if dtype is None or values.dtype is dtype else values.to(dtype)


def _shape(indices: np.ndarray, values: Tensor, size) -> tuple:
    sparse_dim, nnz = indices.shape
    dense_shape = tuple(values._data.shape[1:])
    if size is None:
        return tuple(int(m) + 1 for m in indices.max(axis=1)) + dense_shape if nnz else (0,) * sparse_dim + dense_shape
    shape = tuple(int(n) for n in size)
    if len(shape) != sparse_dim + len(dense_shape):
        raise RuntimeError(f"sparse_coo_tensor: number of dimensions must be sparse_dim ({sparse_dim}) + dense_dim "
                           f"({len(dense_shape)}), but got {len(shape)} (size {list(shape)})")
    if shape[sparse_dim:] != dense_shape:
        raise RuntimeError(f"sparse_coo_tensor: values has dense shape {list(dense_shape)} but size says "
                           f"{list(shape[sparse_dim:])} for the dimensions after the sparse ones")
    return shape


def _check_bounds(indices: np.ndarray, shape: tuple) -> None:
    if not indices.shape[1]:
        return
    low, high = indices.min(axis=1), indices.max(axis=1)
    for dim, (lo, hi) in enumerate(zip(low, high)):
        if lo < 0:
            raise RuntimeError(f"sparse_coo_tensor: found negative index {lo} for dim {dim}; indices must be >= 0")
        if hi >= shape[dim]:
            raise RuntimeError(f"size is inconsistent with indices: for dim {dim}, size is {shape[dim]} but found "
                               f"index {hi}")


def checked_parts(indices, values, size, dtype) -> tuple:
    """``(indices as an int64 array, values as a tensor, shape)``, refusing what does not make a sparse tensor."""
    index_array = _index_array(indices)
    values = _values_tensor(values, dtype)
    if values._data.ndim == 0:
        raise RuntimeError("sparse_coo_tensor: values must be a tensor of shape (nnz, *dense_shape), got a 0-d one")
    if values._data.shape[0] != index_array.shape[1]:
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: {index_array.shape[1]}, "
                           f"nnz from values: {values._data.shape[0]}")
    shape = _shape(index_array, values, size)
    _check_bounds(index_array, shape)
    return index_array, values, shape
