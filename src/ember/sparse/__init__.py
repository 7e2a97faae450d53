"""Sparse COO tensors: ``ember.sparse_coo_tensor``, ``t.to_sparse()``, and the operations on them.

>>> import ember
>>> adjacency = ember.sparse_coo_tensor([[0, 1, 1], [1, 0, 2]], [1., 1., 1.], (3, 3))
>>> ember.sparse.mm(adjacency, ember.ones(3, 2))
tensor([[1., 1.],
        [2., 2.],
        [0., 0.]])

See docs/sparse.md. The implementations are in ``ember/_ops/sparse.py`` (the
primitives) and ``ember/_ops/sparse_math.py`` (the composites); ``_dispatch.py``
routes a call with a sparse argument to them.
"""
from __future__ import annotations

from ember._tensor import Tensor
from ember.overrides import overridable

__all__ = ["addmm", "log_softmax", "mm", "sampled_addmm", "softmax", "sum"]

_public = overridable("ember.sparse")


def _refuse(op: str, what: str):
    raise RuntimeError(f"sparse.{op}: expected {what} to be a sparse COO tensor, got a dense (strided) one; "
                       "convert it with .to_sparse()")


@_public
def mm(mat1: Tensor, mat2: Tensor, reduce: str = "sum") -> Tensor:
    """``mat1 @ mat2`` with ``mat1`` sparse; the gradient of ``mat1`` is sparse, on its own pattern.

    >>> import ember
    >>> ember.sparse.mm(ember.eye(2).to_sparse(), ember.ones(2, 1))
    tensor([[1.],
            [1.]])
    """
    from ember import mm as dense_mm

    return dense_mm(mat1, mat2)


@_public
def addmm(mat: Tensor, mat1: Tensor, mat2: Tensor, beta: float = 1.0, alpha: float = 1.0) -> Tensor:
    """``beta * mat + alpha * (mat1 @ mat2)`` with ``mat1`` sparse.

    >>> import ember
    >>> ember.sparse.addmm(ember.ones(2, 1), ember.eye(2).to_sparse(), ember.ones(2, 1), alpha=2)
    tensor([[3.],
            [3.]])
    """
    from ember import addmm as dense_addmm

    return dense_addmm(mat, mat1, mat2, beta=beta, alpha=alpha)


@_public
def sum(input: Tensor, dim=None, dtype=None) -> Tensor:
    """The sum of a sparse tensor: over ``dim``, sparse while sparse dimensions remain; over all, a dense scalar.

    >>> import ember
    >>> s = ember.tensor([[0., 2.], [3., 4.]]).to_sparse()
    >>> ember.sparse.sum(s)
    tensor(9.)
    >>> ember.sparse.sum(s, 1).to_dense()
    tensor([2., 7.])
    """
    _refuse("sum", "input")


@_public
def softmax(input: Tensor, dim: int, *, dtype=None) -> Tensor:
    """Softmax along ``dim`` over the stored entries only (the others count as absent, not as zeros).

    >>> import ember
    >>> s = ember.tensor([[0., 1.], [2., 2.]]).to_sparse()
    >>> ember.sparse.softmax(s, 1).to_dense()
    tensor([[0.0000, 1.0000],
            [0.5000, 0.5000]])
    """
    from ember.nn.functional import softmax as dense_softmax

    return dense_softmax(input, dim, dtype=dtype)


@_public
def log_softmax(input: Tensor, dim: int, *, dtype=None) -> Tensor:
    """Log-softmax along ``dim`` over the stored entries only.

    >>> import ember
    >>> ember.sparse.log_softmax(ember.tensor([[0., 1.]]).to_sparse(), 1).values()
    tensor([0.])
    """
    from ember.nn.functional import log_softmax as dense_log_softmax

    return dense_log_softmax(input, dim, dtype=dtype)


@_public
def sampled_addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta: float = 1.0, alpha: float = 1.0) -> Tensor:
    """``beta * input + alpha * (mat1 @ mat2)``, computed only where the sparse ``input`` stores entries.

    >>> import ember
    >>> mask = ember.eye(2).to_sparse()
    >>> ember.sparse.sampled_addmm(mask, ember.ones(2, 3), ember.ones(3, 2)).to_dense()
    tensor([[4., 0.],
            [0., 4.]])
    """
    _refuse("sampled_addmm", "input")
