"""Tensor layouts: ``ember.strided`` (dense), ``ember.sparse_coo`` and the compressed ``ember.sparse_csr``,
``sparse_csc``, ``sparse_bsr``, ``sparse_bsc`` (see ``ember.sparse``).

>>> import ember
>>> ember.ones(2).layout
ember.strided
"""
from __future__ import annotations


class layout:
    """How a tensor's elements are stored: ``ember.strided`` or ``ember.sparse_coo``."""

    __slots__ = ("name",)
    __module__ = "ember"

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return "ember." + self.name

    def __reduce__(self):
        return self.name  # pickles by name, so it comes back as the same object


strided = layout("strided")
sparse_coo = layout("sparse_coo")  # coordinates and values: see ember.sparse
sparse_csr = layout("sparse_csr")  # compressed rows: see ember.sparse._compressed
sparse_csc = layout("sparse_csc")
sparse_bsr = layout("sparse_bsr")
sparse_bsc = layout("sparse_bsc")
COMPRESSED = (sparse_csr, sparse_csc, sparse_bsr, sparse_bsc)


def check_layout(op: str, value) -> None:
    """A ``layout=`` argument: None or ``ember.strided``; anything else is refused."""
    if value is None or value is strided:
        return
    if value is sparse_coo or value in COMPRESSED:
        raise RuntimeError(f"{op}(...) is not implemented for sparse layout; make a sparse tensor with "
                           "ember.sparse_coo_tensor(indices, values, size), t.to_sparse(layout=...) or "
                           "ember.zeros(...)")
    raise TypeError(f"{op}(): argument 'layout' must be ember.layout, not {type(value).__name__} "
                    "(ember.strided, or ember.sparse_coo through ember.sparse_coo_tensor)")
