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

from ember._ops.sparse_mm import OMITTED, mm_reduce
from ember._tensor import Tensor
from ember.overrides import overridable

__all__ = ["SparseSemiStructuredTensor", "SparseSemiStructuredTensorCUSPARSELT", "SparseSemiStructuredTensorCUTLASS",
           "addmm", "as_sparse_gradcheck", "check_sparse_tensor_invariants", "log_softmax", "mm", "sampled_addmm",
           "softmax", "spdiags", "sum", "to_sparse_semi_structured"]

_public = overridable("ember.sparse")


def _refuse(op: str, what: str):
    raise RuntimeError(f"sparse.{op}: expected {what} to be a sparse COO tensor, got a dense (strided) one; "
                       "convert it with .to_sparse()")


@_public
def mm(mat1: Tensor, mat2: Tensor, reduce: str = OMITTED) -> Tensor:
    """``mat1 @ mat2`` with ``mat1`` sparse; the gradient of ``mat1`` is sparse, on its own pattern.

    With ``reduce`` ("sum", "mean", "amax" or "max", "amin" or "min"), ``mat1`` must be a sparse CSR
    matrix: ``out[i, j]`` is that reduction of ``mat1[i, k] * mat2[k, j]`` over the entries row ``i``
    stores (0 for a row that stores none). As in torch, passing ``reduce`` (even "sum") is refused for
    other layouts: leave it out for their plain product.

    >>> import ember
    >>> ember.sparse.mm(ember.eye(2).to_sparse(), ember.ones(2, 1))
    tensor([[1.],
            [1.]])
    >>> s = ember.tensor([[1., 0., 4.], [0., 2., 0.]]).to_sparse_csr()
    >>> ember.sparse.mm(s, ember.ones(3, 1), "mean")
    tensor([[2.5000],
            [2.0000]])
    """
    from ember import mm as dense_mm

    if reduce is not OMITTED:
        return mm_reduce(mat1, mat2, reduce)  # (a dense mat1: torch's NotImplementedError)
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
    """``beta * input + alpha * (mat1 @ mat2)``, computed only where the sparse ``input`` (COO or CSR) stores
    entries.

    >>> import ember
    >>> mask = ember.eye(2).to_sparse()
    >>> ember.sparse.sampled_addmm(mask, ember.ones(2, 3), ember.ones(3, 2)).to_dense()
    tensor([[4., 0.],
            [0., 4.]])
    """
    _refuse("sampled_addmm", "input")


@_public
def spdiags(diagonals: Tensor, offsets: Tensor, shape: tuple, layout=None) -> Tensor:
    """A sparse matrix of ``shape`` with row ``d`` of ``diagonals`` on diagonal ``offsets[d]`` (0 the main one,
    positive above it); the element in column ``j`` comes from ``diagonals[d, j]``.

    >>> import ember
    >>> ember.sparse.spdiags(ember.tensor([[1., 2., 3.], [4., 5., 6.]]), ember.tensor([0, -1]), (3, 3)).to_dense()
    tensor([[1., 0., 0.],
            [4., 2., 0.],
            [0., 5., 3.]])
    """
    from ember._layout import sparse_coo, sparse_csc, sparse_csr
    from ember._ops.sparse_math import spdiags as build

    if layout is not None and layout not in (sparse_coo, sparse_csr, sparse_csc):
        raise RuntimeError(f"Only output layouts (Sparse, SparseCsc, SparseCsr) are supported, got {layout}")
    if diagonals.dim() != 2 or offsets.dim() != 1 or len(shape) != 2:
        raise ValueError(f"sparse.spdiags: expected 2-d diagonals, 1-d offsets and a 2-d shape, got "
                         f"{list(diagonals.shape)}, {list(offsets.shape)} and {tuple(shape)}")
    result = build(diagonals, offsets, tuple(shape))
    if layout in (sparse_csr, sparse_csc):
        from ember._ops.sparse_compressed_convert import convert

        return convert(result, layout)
    return result


class check_sparse_tensor_invariants:
    """torch's switch for checking ``sparse_coo_tensor``'s arguments. ember checks them always (the checks cost
    one pass over the indices), so the switch only records its state, for code that reads it back.

    >>> import ember
    >>> with ember.sparse.check_sparse_tensor_invariants():
    ...     ember.sparse.check_sparse_tensor_invariants.is_enabled()
    True
    >>> ember.sparse.check_sparse_tensor_invariants.is_enabled()
    False
    """

    _enabled = False

    @staticmethod
    def is_enabled() -> bool:
        return check_sparse_tensor_invariants._enabled

    @staticmethod
    def enable() -> None:
        check_sparse_tensor_invariants._enabled = True

    @staticmethod
    def disable() -> None:
        check_sparse_tensor_invariants._enabled = False

    def __init__(self, enable: bool = True):
        self.state, self.saved = enable, None

    def __enter__(self):
        self.saved = check_sparse_tensor_invariants._enabled
        check_sparse_tensor_invariants._enabled = self.state
        return self

    def __exit__(self, *exc) -> bool:
        check_sparse_tensor_invariants._enabled = self.saved
        return False

    def __call__(self, function):
        def checked(*args, **kwargs):
            with check_sparse_tensor_invariants(self.state):
                return function(*args, **kwargs)

        return checked


def as_sparse_gradcheck(gradcheck):
    """``gradcheck`` (or ``gradgradcheck``) for functions of sparse tensors: ember's take sparse inputs already
    (see docs/sparse.md), so this returns a function that calls it with ``masked=True`` unless told otherwise.

    >>> import ember
    >>> s = ember.eye(2, dtype=ember.float64).to_sparse().requires_grad_()
    >>> ember.sparse.as_sparse_gradcheck(ember.autograd.gradcheck)(lambda s: s.to_dense(), (s,))
    True
    """
    def sparse_gradcheck(func, inputs, **kwargs):
        kwargs.setdefault("masked", True)
        return gradcheck(func, inputs, **kwargs)

    return sparse_gradcheck


from ember.sparse._gpu_only import (  # noqa: E402,F401
    SparseSemiStructuredTensor, SparseSemiStructuredTensorCUSPARSELT, SparseSemiStructuredTensorCUTLASS, spsolve,
    to_sparse_semi_structured,
)
from ember.sparse._legacy_types import (  # noqa: E402,F401
    BFloat16Tensor, ByteTensor, CharTensor, DoubleTensor, FloatTensor, HalfTensor, IntTensor, LongTensor, ShortTensor,
)
