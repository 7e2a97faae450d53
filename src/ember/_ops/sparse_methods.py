"""The sparse-layout methods as a dense tensor answers them (a sparse one's are in ``ember.sparse._dispatch``).

A dense tensor converts (``to_sparse``), passes through (``to_dense``), reports its
dimensions (``sparse_dim`` 0, ``dense_dim`` all), or refuses what only a sparse tensor
has (``indices``, ``values``, ``coalesce``), as in torch.

>>> import ember
>>> ember.ones(2, 3).dense_dim(), ember.ones(2, 3).sparse_dim()
(2, 0)
"""
from __future__ import annotations

from ember._ops._support import ember_function
from ember._ops.sparse import to_dense, to_sparse, to_sparse_coo
from ember._tensor import Tensor
from ember.overrides import overridable

tensor_method = overridable("ember.Tensor")

__all__ = ["dsmm", "hsmm", "hspmm", "saddmm", "smm", "spmm", "sspaddmm", "to_dense", "to_sparse", "to_sparse_coo"]


def _needs_sparse(op: str, input: Tensor):
    raise RuntimeError(f"{op} expected sparse coordinate tensor layout but got {input.layout}; "
                       "make one with t.to_sparse() or ember.sparse_coo_tensor(...)")


def coalesce(input: Tensor) -> Tensor:
    _needs_sparse("coalesce", input)


def is_coalesced(input: Tensor) -> bool:
    _needs_sparse("is_coalesced", input)


def indices(input: Tensor) -> Tensor:
    _needs_sparse("indices", input)


def values(input: Tensor) -> Tensor:
    _needs_sparse("values", input)


def _nnz(input: Tensor) -> int:
    _needs_sparse("_nnz", input)


def sparse_dim(input: Tensor) -> int:
    return 0


def dense_dim(input: Tensor) -> int:
    return input._data.ndim


def sparse_mask(input: Tensor, mask: Tensor) -> Tensor:
    _needs_sparse("sparse_mask (its mask)", mask)


@ember_function
def smm(input: Tensor, mat: Tensor) -> Tensor:
    """``input @ mat`` for a sparse ``input``, as a sparse tensor.

    >>> import ember
    >>> ember.smm(ember.eye(2).to_sparse(), ember.ones(2, 2)).to_dense()
    tensor([[1., 1.],
            [1., 1.]])
    """
    _needs_sparse("smm", input)


@ember_function
def hspmm(mat1: Tensor, mat2: Tensor, *, out=None) -> Tensor:
    """``mat1 @ mat2`` for a sparse ``mat1``, as a sparse tensor with one sparse and one dense dimension.

    >>> import ember
    >>> ember.hspmm(ember.eye(2).to_sparse(), ember.ones(2, 3)).sparse_dim()
    1
    """
    _needs_sparse("hspmm", mat1)


@ember_function
def dsmm(input: Tensor, mat2: Tensor) -> Tensor:
    """``input @ mat2`` (``input`` sparse or dense), a dense result.

    >>> import ember
    >>> ember.dsmm(ember.eye(2).to_sparse(), ember.ones(2, 1))
    tensor([[1.],
            [1.]])
    """
    from ember import mm

    return mm(input, mat2)


@ember_function
def spmm(input: Tensor, mat2: Tensor) -> Tensor:
    """``input @ mat2`` (``input`` sparse or dense), a dense result: ``ember.dsmm`` by its older name.

    >>> import ember
    >>> ember.spmm(ember.eye(2).to_sparse(), ember.ones(2, 1)).shape
    ember.Size([2, 1])
    """
    from ember import mm

    return mm(input, mat2)


@ember_function
def hsmm(mat1: Tensor, mat2: Tensor) -> Tensor:
    """``ember.hspmm`` by its other name.

    >>> import ember
    >>> ember.hsmm(ember.eye(2).to_sparse(), ember.ones(2, 3)).sparse_dim()
    1
    """
    _needs_sparse("hsmm", mat1)


@ember_function
def sspaddmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta=1, alpha=1, out=None) -> Tensor:
    """``beta * input + alpha * (mat1 @ mat2)`` with ``input`` and ``mat1`` sparse: a sparse result.

    >>> import ember
    >>> i = ember.eye(2).to_sparse()
    >>> ember.sspaddmm(i, i, ember.ones(2, 2), alpha=2).to_dense()
    tensor([[3., 2.],
            [2., 3.]])
    """
    _needs_sparse("sspaddmm", input)


@ember_function
def saddmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta=1, alpha=1, out=None) -> Tensor:
    """``ember.sspaddmm`` by its older name.

    >>> import ember
    >>> i = ember.eye(2).to_sparse()
    >>> ember.saddmm(i, i, ember.ones(2, 2))._nnz()
    6
    """
    _needs_sparse("saddmm", input)
