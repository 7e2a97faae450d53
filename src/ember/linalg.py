"""``ember.linalg``: norms and products, composed of ember ops (so every order of gradient works).

>>> import ember
>>> ember.linalg.vector_norm(ember.tensor([3., 4.]))
tensor(5.)
>>> ember.linalg.matrix_norm(ember.tensor([[1., -2.], [3., 4.]]), ord=1)
tensor(6.)
"""
from __future__ import annotations

import math

import numpy as np

from ember import _dtype
from ember._ops import linalg as _products
from ember._ops._support import require_tensor, wrap
from ember._ops.arithmetic import where
from ember._ops.reduction import reduction_axes, with_reduced_dims
from ember._tensor import Tensor
from ember.autograd.function import Function
from ember.overrides import overridable

linalg_function = overridable("ember.linalg")
"""Decorator for a public function of ``ember.linalg`` (it dispatches through the protocol)."""


def _floating(op: str, x, dtype) -> Tensor:
    """``x``, checked to be floating, in ``dtype`` if given (which may widen it, as torch allows, not narrow it)."""
    x = require_tensor(x, op)
    if not x.is_floating_point():
        raise RuntimeError(
            f"linalg.{op}: Expected a floating point tensor as input. Got {x.dtype.name.capitalize()}; "
            "convert it first, e.g. x.float()"
        )
    if dtype is not None and dtype != x.dtype:
        if _dtype.promote_types(x.dtype, dtype) != dtype:
            raise RuntimeError(
                f"linalg.{op}: the dtype of the input ({x.dtype}) should be convertible without narrowing to the "
                f"specified dtype ({dtype}); convert the input itself first, e.g. x.to({dtype})"
            )
        x = x.to(dtype)
    return x


class EuclideanNorm(Function):
    """The 2-norm over ``dim``. Its own Function so the gradient at the zero vector is 0 (a subgradient), not nan."""

    backward_name = "LinalgVectorNormBackward0"

    @staticmethod
    def forward(ctx, x, axes, keepdim):
        data = x._data
        out = wrap(np.sqrt(np.sum(data * data, axis=axes, keepdims=keepdim)).astype(data.dtype, copy=False))
        ctx.save_for_backward(x, out)
        ctx.axes, ctx.keepdim = axes, keepdim
        return out

    @staticmethod
    def backward(ctx, grad):
        x, norm = ctx.saved_tensors
        grad, norm = with_reduced_dims(x.shape, ctx.axes, ctx.keepdim, grad, norm)
        safe = where(norm == 0, 1.0, norm)
        return grad * where(norm == 0, 0.0, x / safe), None, None


class NonzeroCount(Function):
    """The "0-norm": how many entries are nonzero. Attached to the graph, but with no gradient (as torch)."""

    backward_name = "LinalgVectorNormBackward0"

    @staticmethod
    def forward(ctx, x, axes, keepdim):
        return wrap(np.count_nonzero(x._data, axis=axes, keepdims=keepdim).astype(x._data.dtype))

    @staticmethod
    def backward(ctx, grad):
        return None, None, None


def _dims(dim) -> tuple | None:
    if dim is None:
        return None
    return (dim,) if isinstance(dim, int) else tuple(dim)


@linalg_function
def vector_norm(x: Tensor, ord: float = 2, dim: int | tuple[int, ...] | None = None, keepdim: bool = False, *,
                dtype: _dtype.dtype | None = None) -> Tensor:
    """The ``ord``-norm of ``x`` over ``dim`` (every element when None), for any real ``ord`` incl. ±inf and 0."""
    x = _floating("vector_norm", x, dtype)
    dims = _dims(dim)
    if ord == 2:
        return EuclideanNorm.apply(x, reduction_axes(x, dims, "linalg.vector_norm"), keepdim)
    magnitude = x.abs()
    reduce_dim = dims if dims is not None else ()
    if ord == math.inf:
        return magnitude.amax(reduce_dim, keepdim)
    if ord == -math.inf:
        return magnitude.amin(reduce_dim, keepdim)
    if ord == 0:
        return NonzeroCount.apply(x, reduction_axes(x, dims, "linalg.vector_norm"), keepdim)
    if ord == 1:
        return magnitude.sum(dims, keepdim)
    return (magnitude ** ord).sum(dims, keepdim) ** (1.0 / ord)


@linalg_function
def matrix_norm(A: Tensor, ord: str | float = "fro", dim: tuple[int, int] = (-2, -1), keepdim: bool = False, *,
                dtype: _dtype.dtype | None = None) -> Tensor:
    """Frobenius, 1, -1, inf or -inf norm of the matrices in ``A`` (over the two dims in ``dim``)."""
    A = _floating("matrix_norm", A, dtype)
    if A.dim() < 2:
        raise RuntimeError(f"linalg.matrix_norm: The input tensor A must have at least 2 dimensions (got {A.dim()}).")
    rows, cols = (d % A.dim() for d in dim)
    if ord == "fro":
        return EuclideanNorm.apply(A, (rows, cols), keepdim)
    if ord not in (1, -1, math.inf, -math.inf):
        raise ValueError(
            f"linalg.matrix_norm: ord={ord!r} is not supported: ember computes 'fro', 1, -1, inf and -inf "
            "(the spectral and nuclear norms need singular values, which ember does not compute yet)"
        )
    summed, reduced = (rows, cols) if abs(ord) == 1 else (cols, rows)  # 1: column sums; inf: row sums
    sums = A.abs().sum(summed, keepdim=True)
    result = sums.amax(reduced, keepdim=True) if ord > 0 else sums.amin(reduced, keepdim=True)
    return result if keepdim else result.squeeze((rows, cols))


@linalg_function
def norm(A: Tensor, ord: str | float | None = None, dim: int | tuple[int, ...] | None = None, keepdim: bool = False,
         *, dtype: _dtype.dtype | None = None) -> Tensor:
    """A vector norm, or a matrix norm when ``ord`` is a string or ``dim`` names two dims (as torch decides)."""
    dims = _dims(dim)
    if isinstance(ord, str) or (dims is not None and len(dims) == 2) or (ord is not None and dims is None and A.dim() == 2):
        return matrix_norm(A, "fro" if ord is None else ord, dims or (-2, -1), keepdim, dtype=dtype)
    if ord is not None and dims is None and A.dim() != 1:
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got {A.dim()}D.")
    return vector_norm(A, 2 if ord is None else ord, dims, keepdim, dtype=dtype)


@linalg_function
def vecdot(x: Tensor, y: Tensor, *, dim: int = -1) -> Tensor:
    """The dot product of vectors along ``dim``, broadcasting the rest."""
    return (_floating("vecdot", x, None) * _floating("vecdot", y, None)).sum(dim)


@linalg_function
def matmul(input: Tensor, other: Tensor) -> Tensor:
    """Same as ``ember.matmul``."""
    return _products.matmul.__wrapped__(input, other)
