"""The compressed-layout methods as a dense tensor answers them, the ``*_copy`` functions, and the in-place
resizes of a COO tensor (``sparse_resize_``, ``sparse_resize_and_clear_``, ``resize_as_sparse_``).

A dense tensor converts (``to_sparse_csr``, ...) and refuses the index accessors, as in torch; a sparse
tensor's answers come through its ``__torch_function__`` (``ember/sparse/_compressed_dispatch.py``).

>>> import ember
>>> s = ember.eye(2).to_sparse_csr()
>>> ember.crow_indices_copy(s)
tensor([0, 1, 2])
"""
from __future__ import annotations

import numpy as np

from ember import _layout
from ember._ops._support import ember_function
from ember._ops.sparse_compressed_convert import convert
from ember._tensor import Tensor, version_counter
from ember.sparse._compressed import KIND_NAMES

_WANTED = {"crow_indices": "sparse row compressed", "col_indices": "sparse row compressed",
           "ccol_indices": "sparse column compressed", "row_indices": "sparse column compressed"}


def refuse_accessor(op: str, input: Tensor):
    raise RuntimeError(f"{op} expected {_WANTED[op]} tensor layout but got {KIND_NAMES.get(input.layout)}; make one "
                       f"with t.to_sparse_{'csr' if 'row compressed' in _WANTED[op] else 'csc'}()")


def refusing(op: str):
    """A dense tensor's ``crow_indices()`` (and the like): a refusal naming the layouts that have it."""
    def accessor(input: Tensor) -> Tensor:
        refuse_accessor(op, input)

    accessor.__name__ = accessor.__qualname__ = op
    return accessor


def to_sparse_csr(input: Tensor, dense_dim: int | None = None) -> Tensor:
    return convert(input, _layout.sparse_csr, None, dense_dim)


def to_sparse_csc(input: Tensor, dense_dim: int | None = None) -> Tensor:
    return convert(input, _layout.sparse_csc, None, dense_dim)


def to_sparse_bsr(input: Tensor, blocksize, dense_dim: int | None = None) -> Tensor:
    return convert(input, _layout.sparse_bsr, blocksize, dense_dim)


def to_sparse_bsc(input: Tensor, blocksize, dense_dim: int | None = None) -> Tensor:
    return convert(input, _layout.sparse_bsc, blocksize, dense_dim)


@ember_function
def crow_indices_copy(input: Tensor, *, out=None) -> Tensor:
    """A copy of a CSR or BSR tensor's ``crow_indices()``.

    >>> import ember
    >>> ember.crow_indices_copy(ember.eye(2).to_sparse_csr())
    tensor([0, 1, 2])
    """
    return input.crow_indices().clone()


@ember_function
def col_indices_copy(input: Tensor, *, out=None) -> Tensor:
    """A copy of a CSR or BSR tensor's ``col_indices()``.

    >>> import ember
    >>> ember.col_indices_copy(ember.eye(2).to_sparse_csr())
    tensor([0, 1])
    """
    return input.col_indices().clone()


@ember_function
def ccol_indices_copy(input: Tensor, *, out=None) -> Tensor:
    """A copy of a CSC or BSC tensor's ``ccol_indices()``.

    >>> import ember
    >>> ember.ccol_indices_copy(ember.eye(2).to_sparse_csc())
    tensor([0, 1, 2])
    """
    return input.ccol_indices().clone()


@ember_function
def row_indices_copy(input: Tensor, *, out=None) -> Tensor:
    """A copy of a CSC or BSC tensor's ``row_indices()``.

    >>> import ember
    >>> ember.row_indices_copy(ember.eye(2).to_sparse_csc())
    tensor([0, 1])
    """
    return input.row_indices().clone()


@ember_function
def values_copy(input: Tensor, *, out=None) -> Tensor:
    """A copy of a compressed tensor's ``values()``, differentiable (a COO tensor has no kernel, as in torch).

    >>> import ember
    >>> ember.values_copy(ember.eye(2).to_sparse_csr())
    tensor([1., 1.])
    """
    raise RuntimeError(f"values expected sparse tensor layout but got {KIND_NAMES.get(input.layout)}; make one with "
                       "t.to_sparse_csr()")


@ember_function
def indices_copy(input: Tensor, *, out=None) -> Tensor:
    """A copy of a sparse tensor's ``indices()`` (torch has no kernel for it, so neither layout takes it).

    >>> import ember
    >>> ember.indices_copy(ember.ones(1))
    Traceback (most recent call last):
      ...
    RuntimeError: indices expected sparse coordinate tensor layout but got Strided
    """
    raise RuntimeError(f"indices expected sparse coordinate tensor layout but got {KIND_NAMES.get(input.layout)}")


def _refuse_dense_resize(op: str, input: Tensor):
    raise NotImplementedError(f"Could not run '{op}' with arguments from the strided layout: it resizes a sparse COO "
                              "tensor; make one with t.to_sparse() or ember.sparse_coo_tensor(...)")


def sparse_resize_(input: Tensor, size, sparse_dim: int, dense_dim: int) -> Tensor:
    _refuse_dense_resize("sparse_resize_", input)


def sparse_resize_and_clear_(input: Tensor, size, sparse_dim: int, dense_dim: int) -> Tensor:
    _refuse_dense_resize("sparse_resize_and_clear_", input)


@ember_function
def resize_as_sparse_(input: Tensor, the_template: Tensor) -> Tensor:
    """Resize the sparse COO ``input`` in place to the size and dimensions of the sparse ``the_template``.

    >>> import ember
    >>> s = ember.eye(2).to_sparse()
    >>> ember.resize_as_sparse_(s, ember.zeros(3, 4).to_sparse()).shape
    ember.Size([3, 4])
    """
    _refuse_dense_resize("resize_as_sparse_", input)


def _shrink_message(what: str, before, after) -> str:
    return (f"{what} (from {before} to {after}) on a non-empty sparse tensor is not supported.\nYou could try the "
            "following options:\n1. If you need an empty sparse tensor of this size, call "
            "`x = ember.sparse_coo_tensor(size)`.\n2. If you need to resize this tensor, call "
            "`x.sparse_resize_and_clear_(size, sparse_dim, dense_dim)` to drop its entries first.")


def resize_coo(s, size, sparse_dim: int, dense_dim: int, clear: bool):
    """The in-place resize of a COO tensor: kept entries need the same dimensions and no smaller sparse sizes."""
    size = tuple(int(n) for n in size)
    if len(size) != sparse_dim + dense_dim:
        raise RuntimeError(f"number of dimensions must be sparse_dim ({sparse_dim}) + dense_dim ({dense_dim}), but "
                           f"got {len(size)}")
    if s._requires_grad and s._grad_fn is None:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
    if clear or not s._ind.shape[1]:
        s._ind = np.zeros((sparse_dim, 0), np.int64)
        s._val = np.zeros((0,) + size[sparse_dim:], s._val.dtype)
    else:
        old_sparse, old_dense = s._ind.shape[0], s._val.ndim - 1
        if sparse_dim != old_sparse:
            raise RuntimeError(_shrink_message("changing the number of sparse dimensions", old_sparse, sparse_dim))
        if dense_dim != old_dense:
            raise RuntimeError(_shrink_message("changing the number of dense dimensions", old_dense, dense_dim))
        old = list(s._data.shape)
        if any(new < was for new, was in zip(size[:sparse_dim], old[:sparse_dim])):
            raise RuntimeError(_shrink_message("shrinking the size of sparse dimensions", old[:sparse_dim],
                                               list(size[:sparse_dim])))
        if size[sparse_dim:] != tuple(old[sparse_dim:]):
            raise RuntimeError(_shrink_message("shrinking or expanding the size of dense dimensions",
                                               old[sparse_dim:], list(size[sparse_dim:])))
    s._data = np.broadcast_to(np.zeros((), s._val.dtype), size)
    s._coalesced = s._coalesced or s._ind.shape[1] <= 1
    version_counter(s)[0] += 1
    return s


def resize_as_coo(s, the_template: Tensor):
    if not getattr(the_template, "is_sparse", False):
        raise RuntimeError(f"resize_as_sparse_: expected a sparse COO template, got a {the_template.layout} one")
    return resize_coo(s, the_template.shape, the_template._ind.shape[0], the_template._val.ndim - 1, False)


# A COO tensor's answers to the compressed layouts' methods (``ember/sparse/_dispatch.py`` routes them here).
COMPRESSED_METHODS_OF_COO = {
    "crow_indices": refusing("crow_indices"), "col_indices": refusing("col_indices"),
    "ccol_indices": refusing("ccol_indices"), "row_indices": refusing("row_indices"),
    "to_sparse_csr": to_sparse_csr, "to_sparse_csc": to_sparse_csc,
    "to_sparse_bsr": to_sparse_bsr, "to_sparse_bsc": to_sparse_bsc,
    "sparse_resize_": lambda input, size, sparse_dim, dense_dim: resize_coo(input, size, sparse_dim, dense_dim, False),
    "sparse_resize_and_clear_": lambda input, size, sparse_dim, dense_dim: resize_coo(input, size, sparse_dim,
                                                                                      dense_dim, True),
    "resize_as_sparse_": resize_as_coo,
}
