"""``repr`` of a sparse COO tensor, laid out as torch lays out its own (indices, values, then the suffixes)."""
from __future__ import annotations

import numpy as np

from ember import _dtype
from ember._tensor_str import _attach_suffixes, _dtype_is_implied, _size_suffix, _values_text

_PREFIX = "tensor("


def _part(name: str, array: np.ndarray, indent: int) -> str:
    """``indices=tensor([[...]])``: its rows aligned under the first; an empty part states its size."""
    prefix = f"{name}=tensor("
    if array.size == 0:
        return f"{prefix}[], {_size_suffix(array.shape)})"
    return prefix + _values_text(array, indent + len(prefix)) + ")"


def sparse_repr(t) -> str:
    indent = len(_PREFIX)
    body = _PREFIX + _part("indices", t._ind, indent) + ",\n" + " " * indent + _part("values", t._val, indent)
    dtype_name = repr(_dtype.from_numpy_dtype(t._val.dtype))
    suffixes = [_size_suffix(t._data.shape), f"nnz={t._ind.shape[1]}"]
    if not _dtype_is_implied(dtype_name, repr(_dtype.defaults.floating)):
        suffixes.append(f"dtype={dtype_name}")
    suffixes.append("layout=ember.sparse_coo")
    if t._grad_fn is not None:
        suffixes.append(f"grad_fn=<{t._grad_fn.name()}>")
    elif t._requires_grad:
        suffixes.append("requires_grad=True")
    # as torch: the suffixes of a sparse tensor start on a line of their own
    return _attach_suffixes(body, suffixes, indent, force_newline=True)


def compressed_repr(t) -> str:
    """As torch prints a CSR (CSC, BSR, BSC) tensor: its two index tensors and values, the suffixes after the
    values on their line, wrapped where they would overflow."""
    from ember.sparse._compressed import INDEX_NAMES

    indent = len(_PREFIX)
    names = INDEX_NAMES[t.layout]
    parts = [_part(names[0], t._cidx, indent), _part(names[1], t._pidx, indent), _part("values", t._val, indent)]
    body = _PREFIX + (",\n" + " " * indent).join(parts)
    dtype_name = repr(_dtype.from_numpy_dtype(t._val.dtype))
    suffixes = [_size_suffix(t._data.shape), f"nnz={t._pidx.shape[-1]}"]
    if not _dtype_is_implied(dtype_name, repr(_dtype.defaults.floating)):
        suffixes.append(f"dtype={dtype_name}")
    suffixes.append(f"layout={t.layout!r}")
    if t._grad_fn is not None:
        suffixes.append(f"grad_fn=<{t._grad_fn.name()}>")
    elif t._requires_grad:
        suffixes.append("requires_grad=True")
    return _attach_suffixes(body, suffixes, indent)
