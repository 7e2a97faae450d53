"""The checks ``sparse_compressed_tensor`` makes on its indices, values and size, with torch's messages.

torch checks the invariants only when asked (``check_invariants=True``); ember checks them always, as it
does for COO tensors: they cost a pass over the indices, and a tensor that breaks them would give wrong
answers everywhere after.
"""
from __future__ import annotations

import numpy as np

from ember._tensor import Tensor
from ember.sparse._compressed import BLOCKED, INDEX_NAMES, ROW_MAJOR

_INDEX_DTYPE_NAMES = {"int32": "Int", "int64": "Long", "int16": "Short", "int8": "Char", "uint8": "Byte",
                      "float32": "Float", "float64": "Double", "bool": "Bool", "float16": "Half"}


def _as_tensor(data) -> Tensor:
    from ember._creation import as_tensor

    return data if isinstance(data, Tensor) else as_tensor(data)


def _index_arrays(compressed, plain, layout) -> tuple:
    c_name, p_name = INDEX_NAMES[layout]
    c, p = _as_tensor(compressed)._data, _as_tensor(plain)._data
    c_kind, p_kind = (_INDEX_DTYPE_NAMES.get(a.dtype.name, a.dtype.name) for a in (c, p))
    if c.dtype != p.dtype:
        raise RuntimeError(f"{c_name} and {p_name} must have the same dtype, but got {c_kind} and {p_kind}, "
                           "respectively")
    if c.dtype.name not in ("int32", "int64"):
        raise RuntimeError(f"{c_name} and {p_name} dtype must be Int or Long, but got {c_kind}")
    if c.ndim < 1:
        raise RuntimeError(f"{c_name} must have dimensionality >= 1 but got {c.ndim}")
    if c.ndim != p.ndim:
        raise RuntimeError(f"{c_name} and {p_name} dimensionalities must be equal but got {c.ndim} and {p.ndim}, "
                           "respectively")
    if c.shape[:-1] != p.shape[:-1]:
        raise RuntimeError(f"all batch dimensions of {c_name} (={list(c.shape[:-1])}) and {p_name} "
                           f"(={list(p.shape[:-1])}) must be equal")
    return np.ascontiguousarray(c), np.ascontiguousarray(p)


def _check_values(c: np.ndarray, p: np.ndarray, values: np.ndarray, layout) -> None:
    b, block = c.ndim - 1, 2 if layout in BLOCKED else 0
    if values.ndim <= b + block:
        raise RuntimeError(f"values must have dimensionality > sum of batch and block dimensionalities "
                           f"(={b} + {block}) but got {values.ndim}")
    if values.shape[:b] != c.shape[:-1]:
        raise RuntimeError(f"all batch dimensions of {INDEX_NAMES[layout][0]} (={list(c.shape[:-1])}) and values "
                           f"(={list(values.shape[:b])}) must be equal")
    if p.shape[-1] != values.shape[b]:
        raise RuntimeError(f"{INDEX_NAMES[layout][1]}.shape[-1] must be equal to nnz (={values.shape[b]}) as "
                           f"defined by values.shape[{b}], but got {p.shape[-1]}")


def _inferred_size(c: np.ndarray, p: np.ndarray, values: np.ndarray, layout) -> tuple:
    """torch's size when none is given: as many compressed rows (or columns) as the indices hold, and one
    more plain column (or row) than the largest plain index."""
    b = c.ndim - 1
    block = tuple(values.shape[b + 1: b + 3]) if layout in BLOCKED else (1, 1)
    compressed = (c.shape[-1] - 1) * block[0 if layout in ROW_MAJOR else 1]
    plain = (int(p.max()) + 1 if p.size else 0) * block[1 if layout in ROW_MAJOR else 0]
    base = (compressed, plain) if layout in ROW_MAJOR else (plain, compressed)
    return tuple(c.shape[:-1]) + base + tuple(values.shape[b + 1 + (2 if layout in BLOCKED else 0):])


def _check_size(c: np.ndarray, values: np.ndarray, shape: tuple, layout) -> None:
    b, blocked = c.ndim - 1, layout in BLOCKED
    dense = values.ndim - b - 1 - (2 if blocked else 0)
    if len(shape) != b + 2 + dense:
        raise RuntimeError(f"tensor dimensionality must be sum of batch, base, and dense dimensionalities "
                           f"(={b} + 2 + {dense}) but got {len(shape)}")
    if shape[:b] != c.shape[:-1]:
        raise RuntimeError(f"all batch dimensions of {INDEX_NAMES[layout][0]} (={list(c.shape[:-1])}) and size "
                           f"(={list(shape[:b])}) must be equal")
    block = tuple(values.shape[b + 1: b + 3]) if blocked else (1, 1)
    for d in range(2):
        if shape[b + d] % block[d]:
            raise RuntimeError(f"tensor shape[{b + d}] (={shape[b + d]}) must be divisible with blocksize[{d}] "
                               f"(={block[d]}) as defined by values shape")
    row_major = layout in ROW_MAJOR
    n = shape[b + (0 if row_major else 1)] // block[0 if row_major else 1]
    if c.shape[-1] != n + 1:
        what = "rows" if row_major else "columns"
        raise RuntimeError(f"{INDEX_NAMES[layout][0]}.shape[-1] must be equal to the number of {what} + 1 "
                           f"(={n + 1}), but got {c.shape[-1]}")
    if tuple(values.shape[values.ndim - dense:]) != tuple(shape[b + 2:]):
        raise RuntimeError(f"values' dense shape {list(values.shape[values.ndim - dense:])} must equal the size's "
                           f"dense dimensions {list(shape[b + 2:])}")


def checked_parts(compressed, plain, values, size, dtype, layout) -> tuple:
    """``(compressed, plain, values as a tensor, shape)``, refusing what does not make a tensor of ``layout``."""
    c, p = _index_arrays(compressed, plain, layout)
    values = _as_tensor(values)
    if dtype is not None and values.dtype is not dtype:
        values = values.to(dtype)
    _check_values(c, p, values._data, layout)
    shape = _inferred_size(c, p, values._data, layout) if size is None else tuple(int(n) for n in size)
    _check_size(c, values._data, shape, layout)
    _check_entries(c, p, values._data, shape, layout)
    return c, p, values, shape


def _check_entries(c: np.ndarray, p: np.ndarray, values: np.ndarray, shape: tuple, layout) -> None:
    """The invariants, in the order torch checks them (so the first broken one is the one torch names)."""
    c_name, p_name = INDEX_NAMES[layout]
    b, row_major = c.ndim - 1, layout in ROW_MAJOR
    block = tuple(values.shape[b + 1: b + 3]) if layout in BLOCKED else (1, 1)
    n_plain = shape[b + (1 if row_major else 0)] // block[1 if row_major else 0]
    plain_name, compressed_name = ("ncols", "nrows") if row_major else ("nrows", "ncols")
    c64, p64 = c.astype(np.int64), p.astype(np.int64)
    if p.size and ((p64 < 0).any() or (p64 >= n_plain).any()):
        raise RuntimeError(f"`0 <= {p_name} < {plain_name}` is not satisfied.")
    if not (c64[..., 0] == 0).all():
        raise RuntimeError(f"`{c_name}[..., 0] == 0` is not satisfied.")
    if not (c64[..., -1] == p.shape[-1]).all():
        raise RuntimeError(f"`{c_name}[..., -1] == nnz` is not satisfied.")
    steps = np.diff(c64, axis=-1)
    monotone = not steps.size or ((steps >= 0).all() and (steps <= n_plain).all())
    if not (_sorted_within(c64, p64) if monotone else _segments_sorted(c64, p64)):
        raise RuntimeError(f"`{p_name}[..., {c_name}[..., i - 1]:{c_name}[..., i]] for all i = 1, ..., "
                           f"{compressed_name} are sorted and distinct along the last dimension values` is not "
                           "satisfied.")
    if not monotone:
        raise RuntimeError(f"`0 <= {c_name}[..., 1:] - {c_name}[..., :-1] <= {plain_name}` is not satisfied.")


def _sorted_within(c: np.ndarray, p: np.ndarray) -> bool:
    """Whether the plain indices rise strictly within each compressed row (column): a fall only where one starts."""
    nnz = p.shape[-1]
    if nnz < 2:
        return True
    starts = np.zeros((int(np.prod(p.shape[:-1], dtype=np.int64)), nnz), bool)
    for row, pointer in zip(starts, c.reshape(len(starts), -1)):
        row[pointer[(pointer > 0) & (pointer < nnz)]] = True
    rises = np.diff(p.reshape(len(starts), nnz), axis=-1) > 0
    return bool((rises | starts[:, 1:]).all())


def _segments_sorted(c: np.ndarray, p: np.ndarray) -> bool:
    """As ``_sorted_within``, one row (column) at a time: for pointers that do not rise, where the
    segments may overlap (only on the way to an error, so the loop costs nothing in use)."""
    flat_c, flat_p = c.reshape(-1, c.shape[-1]), p.reshape(-1, p.shape[-1])
    return all((np.diff(plain[start:stop]) > 0).all() for pointer, plain in zip(flat_c, flat_p)
               for start, stop in zip(pointer[:-1], pointer[1:]))
