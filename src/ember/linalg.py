"""``ember.linalg``: norms and products, composed of ember ops (so every order of gradient works).

>>> import ember
>>> ember.linalg.vector_norm(ember.tensor([3., 4.]))
tensor(5.)
>>> ember.linalg.matrix_norm(ember.tensor([[1., -2.], [3., 4.]]), ord=1)
tensor(6.)
>>> ember.linalg.svdvals(ember.tensor([[3., 0.], [0., -4.]]))
tensor([4., 3.])
"""
from __future__ import annotations

import math

import numpy as np

from ember import _dtype, return_types
from ember._ops import (
    decompositions as _decompositions, joining as _joining, linalg as _products, linalg_solves as _solves,
    products as _more_products,
)
from ember._ops.decompositions import LinAlgError, SingularValueDecomposition  # noqa: F401 (LinAlgError: public)
from ember._ops._support import normalize_dims, reduced, require_tensor, wrap
from ember._ops.arithmetic import where
from ember._ops.complex import conjugated
from ember._ops.copy import contiguous_format
from ember._ops.out import into_exact_out, into_out, into_out_of_its_dtype
from ember._ops.reduction import reduction_axes, with_reduced_dims
from ember._tensor import Tensor
from ember.amp import autocast_mode as _autocast
from ember.autograd._node_names import named_node
from ember.autograd.function import Function
from ember.overrides import overridable

linalg_function = overridable("ember.linalg")
"""Decorator for a public function of ``ember.linalg`` (it dispatches through the protocol)."""


def _returned(op: str, result: Tensor, out) -> Tensor:
    """``result``, or ``out`` holding it: as torch's, most of these ops want an ``out`` of the result's own dtype,
    and refuse one when the result would need a graph (autograd cannot record a write into ``out``)."""
    return result if out is None else into_out_of_its_dtype(op, result, out, result)


def _returned_cast(op: str, result: Tensor, out, recorded: bool = False) -> Tensor:
    """``_returned`` for the ops whose ``out`` may be of a dtype the result casts to, as in torch; only those that
    torch records (``recorded``) refuse an ``out`` for a result that needs a graph."""
    return result if out is None else into_out(op, result, out, *((result,) if recorded else ()))


def _results(kind: str, *values, out: tuple | None = None, cast: bool = False):
    """The named tuple ``return_types.<kind>`` of ``values``; written into the tensors of ``out`` if given, and
    then ``return_types.<kind>_out``, as torch names it. As torch's, the tensors of ``out`` must have the results'
    own dtypes, unless ``cast`` (eig, geqrf, lstsq) lets a result cast into a wider one."""
    if out is None:
        return getattr(return_types, kind)(*values)
    if len(out) != len(values):
        raise TypeError(f"{kind}: out must be a tuple of {len(values)} tensors, got {len(out)}")
    write = into_out if cast else into_out_of_its_dtype
    return getattr(return_types, kind + "_out")(*(write(kind, value, target, *values)
                                                  for value, target in zip(values, out)))


def _floating(op: str, x, dtype, complex_ok: bool = False) -> Tensor:
    """``x``, checked to be floating (or complex if ``complex_ok``), in ``dtype`` if given (which may widen it, as
    torch allows, not narrow it)."""
    x = require_tensor(x, op)
    name = _dtype.scalar_type_name(x._data.dtype)
    if not (x.is_floating_point() or complex_ok and x._data.dtype.kind == "c"):
        raise RuntimeError(
            f"linalg.{op}: Expected a floating point tensor as input. Got {name}; convert it first, e.g. x.float()"
        )
    if dtype is not None and dtype.is_complex != x.is_complex():  # (the norms' result is real either way)
        kind = "complex" if x.is_complex() else "real"
        raise RuntimeError(f"linalg.{op}: dtype should be {kind} for {kind} inputs, but got "
                           f"{_dtype.scalar_type_name(dtype.np)}")
    if dtype is not None and dtype != x.dtype:
        if _dtype.promote_types(x.dtype, dtype) != dtype:
            raise RuntimeError(
                f"linalg.{op}: the dtype of the input ({name}) should be convertible without narrowing to the "
                f"specified dtype ({_dtype.scalar_type_name(dtype.np)}); convert the input itself first, e.g. "
                f"x.to({dtype})"
            )
        x = x.to(dtype)
    return x


def _kept_for_backward(ctx, x: Tensor, norm: Tensor, axes: tuple, keepdim: bool) -> Tensor:
    """Save what a norm's gradient reads: the input, the norm and the reduction; returns the norm."""
    ctx.save_for_backward(x, norm)
    ctx.axes, ctx.keepdim = axes, keepdim
    return norm


def _saved_with_reduced_dims(ctx, grad) -> tuple:
    """(x, norm, grad) for a norm's gradient, the norm and ``grad`` with the reduced dims back as 1s."""
    x, norm = ctx.saved_tensors
    grad, norm = with_reduced_dims(x.shape, ctx.axes, ctx.keepdim, grad, norm)
    return x, norm, grad


class EuclideanNorm(Function):
    """The 2-norm over ``dim``. Its own Function so the gradient at the zero vector is 0 (a subgradient), not nan."""

    backward_name = "LinalgVectorNormBackward0"

    @staticmethod
    def forward(ctx, x, axes, keepdim):
        data = x._data
        dtype = data.dtype
        if dtype.itemsize < 4:  # 16-bit floats squared and summed in single (a half's 256 ** 2 is inf), as torch's
            data = data.astype(np.float32)
        squares = data * data if data.dtype.kind != "c" else data.real * data.real + data.imag * data.imag
        dtype = squares.dtype if dtype.itemsize >= 4 else dtype
        out = wrap(reduced(np.sqrt(np.sum(squares, axis=axes, keepdims=keepdim)).astype(dtype, copy=False)))
        return _kept_for_backward(ctx, x, out, axes, keepdim)

    @staticmethod
    def backward(ctx, grad):
        x, norm, grad = _saved_with_reduced_dims(ctx, grad)
        safe = where(norm == 0, 1.0, norm)
        return grad * where(norm == 0, 0.0, x / safe), None, None


class PowerNorm(Function):
    """The ``ord``-norm over ``dim`` for any other finite, nonzero ``ord``: its own Function so the gradient is 0
    at an entry that is 0 and wherever the norm is 0, as torch's, not the nan that the composed
    ``(|x| ** ord).sum() ** (1 / ord)`` gives there (an infinite power times a zero), for complex ``x`` too."""

    backward_name = "LinalgVectorNormBackward0"

    @staticmethod
    def forward(ctx, x, ord, axes, keepdim):
        data = x._data
        # 16-bit floats summed in single precision, rounded once at the end (as torch's do)
        magnitude = np.abs(data if data.dtype.itemsize >= 4 else data.astype(np.float32))
        with np.errstate(divide="ignore"):  # (a negative order's power of a 0 is inf, and the norm then 0)
            total = np.sum(magnitude ** ord, axis=axes, keepdims=keepdim)
            out = wrap(reduced((total ** (1.0 / ord)).astype(data.real.dtype, copy=False)))
        ctx.ord = ord
        return _kept_for_backward(ctx, x, out, axes, keepdim)

    @staticmethod
    def backward(ctx, grad):
        # d norm / d x = sgn(x) (|x| / norm) ** (ord - 1), with 0 where x or the norm is 0 (sgn: x / |x|, which
        # is sign for a real x and torch's conjugate Wirtinger gradient of |x| for a complex one)
        x, norm, grad = _saved_with_reduced_dims(ctx, grad)
        zero = (x == 0) | (norm == 0)
        ratio = where(zero, 1.0, x.abs()) / where(zero, 1.0, norm)
        # an entry that is 0 gets 0 times norm ** (1 - ord), as torch: nan where the norm is nan (or, for
        # ord < 1, inf)
        at_zero = where(norm == 0, 1.0, norm) ** (1 - ctx.ord) * 0.0
        return grad * where(zero, at_zero, x.sgn() * ratio ** (ctx.ord - 1)), None, None, None


class ExtremeNorm(Function):
    """The inf-norm (``largest``) or the -inf-norm over ``axes``: its own Function for torch's gradient, shared
    among the entries whose magnitude is the norm, times their sgn; where the norm is nan, among the nan entries,
    whose sgn is 0 (amax's gradient would be nan everywhere there)."""

    backward_name = "LinalgVectorNormBackward0"

    @staticmethod
    def forward(ctx, x, largest, axes, keepdim):
        magnitude = np.abs(x._data)
        extreme = np.max if largest else np.min  # (both propagate nan)
        out = wrap(reduced(np.asarray(extreme(magnitude, axis=axes, keepdims=keepdim))))
        return _kept_for_backward(ctx, x, out, axes, keepdim)

    @staticmethod
    def backward(ctx, grad):
        x, norm, grad = _saved_with_reduced_dims(ctx, grad)
        magnitude = x.abs()
        chosen = (magnitude == norm) | (magnitude.isnan() & norm.isnan())
        count = chosen.sum(ctx.axes, keepdim=True)
        return x.sgn() * chosen * (grad / count), None, None, None  # (-0.0 for the negative entries not chosen)


class NonzeroCount(Function):
    """The "0-norm": how many entries are nonzero. Attached to the graph, but with no gradient (as torch)."""

    backward_name = "LinalgVectorNormBackward0"

    @staticmethod
    def forward(ctx, x, axes, keepdim):
        return wrap(reduced(np.count_nonzero(x._data, axis=axes, keepdims=keepdim).astype(x._data.real.dtype)))

    @staticmethod
    def backward(ctx, grad):
        return None, None, None


def _dims(dim) -> tuple | None:
    if dim is None:
        return None
    return (dim,) if isinstance(dim, (int, np.integer)) else tuple(dim)


@linalg_function
def vector_norm(x: Tensor, ord: float = 2, dim: int | tuple[int, ...] | None = None, keepdim: bool = False, *,
                dtype: _dtype.dtype | None = None, out: Tensor | None = None) -> Tensor:
    """The ``ord``-norm of ``x`` over ``dim`` (every element when None), for any real ``ord`` incl. ±inf and 0."""
    if out is not None:
        return into_out_of_its_dtype("linalg.vector_norm", vector_norm.__wrapped__(x, ord, dim, keepdim, dtype=dtype), out, x)
    x = _floating("vector_norm", x, dtype, complex_ok=True)
    dims = _dims(dim)
    if ord == 2:
        return EuclideanNorm.apply(x, reduction_axes(x, dims, "linalg.vector_norm"), keepdim)
    if ord < 0 or ord == math.inf:
        _check_nonempty_reduction(x, ord, dims)
    if ord in (math.inf, -math.inf):
        return ExtremeNorm.apply(x, ord > 0, reduction_axes(x, dims, "linalg.vector_norm"), keepdim)
    magnitude = x.abs()
    if ord == 0:
        return NonzeroCount.apply(x, reduction_axes(x, dims, "linalg.vector_norm"), keepdim)
    if ord == 1:
        return named_node(magnitude.sum(dims, keepdim), "LinalgVectorNormBackward0", x)
    return PowerNorm.apply(x, ord, reduction_axes(x, dims, "linalg.vector_norm"), keepdim)


def _check_nonempty_reduction(x: Tensor, ord: float, dims: tuple | None) -> None:
    """A max, a min or a negative power has no value over no elements: as torch, an error rather than inf or 0."""
    shape = x.shape
    if not dims or not shape:  # (dim=() reduces every dim, as None does)
        if x.numel() == 0:
            raise RuntimeError(f"linalg.vector_norm cannot compute the {ord:g} norm on an empty tensor because the "
                               "operation does not have an identity")
        return
    for d in dims:
        if shape[d] == 0:
            raise RuntimeError(f"linalg.vector_norm cannot compute the {ord:g} norm on the dimension {d} because "
                               "this dimension is empty and the operation does not have an identity")


_SPECTRAL = ("nuc", 2, -2)  # the matrix norms computed from singular values


@linalg_function
def matrix_norm(input: Tensor, ord: str | float = "fro", dim: tuple[int, int] = (-2, -1), keepdim: bool = False, *,
                dtype: _dtype.dtype | None = None, out: Tensor | None = None) -> Tensor:
    """The ``ord`` norm of the matrices in ``A`` = ``input`` (over the two dims in ``dim``).

    torch's docs call the input A, but its argument parser takes it by the keyword ``input``, as ember does.

    ``ord`` is 'fro', 'nuc' (the sum of the singular values), 2 or -2 (the largest or smallest singular
    value), 1 or -1 (the largest or smallest column sum of ``|A|``), inf or -inf (the same for rows).

    >>> A = ember.tensor([[3., 0.], [0., -4.]])
    >>> ember.linalg.matrix_norm(A, 'nuc'), ember.linalg.matrix_norm(A, 2), ember.linalg.matrix_norm(A, -2)
    (tensor(7.), tensor(4.), tensor(3.))
    """
    if out is not None:
        result = matrix_norm.__wrapped__(input, ord, dim, keepdim, dtype=dtype)
        return into_exact_out("linalg.matrix_norm", result, out, input)  # (torch records no graph to refuse)
    A = require_tensor(input, "linalg.matrix_norm")
    if A.dim() < 2:
        raise RuntimeError(f"linalg.matrix_norm: The input tensor A must have at least 2 dimensions (got {A.dim()}).")
    if A._data.dtype in _dtype.LOW and ord in _SPECTRAL:  # (ord needs singular values)
        _D.refuse_low_precision("linalg.matrix_norm", A._data.dtype)
    A = _floating("matrix_norm", A, dtype, complex_ok=True)
    _check_matrix_order(ord)  # (before the dims, as torch)
    rows, cols = _matrix_dims(A, dim)
    if ord == "fro":
        return EuclideanNorm.apply(A, (rows, cols), keepdim)
    if ord in _SPECTRAL:
        return _spectral_norm(A, ord, rows, cols, keepdim)
    if ord > 0 and A.numel() == 0:  # the largest of no sums: 0, as torch (the smallest has no value and raises)
        return A.abs().sum((rows, cols), keepdim=keepdim)
    summed, reduced = (rows, cols) if abs(ord) == 1 else (cols, rows)  # 1: column sums; inf: row sums
    # as torch: the extreme of the 1-norms of the columns (rows), so the nodes are an amax (amin) of a norm
    sums = named_node(A.abs().sum(summed, keepdim=keepdim), "LinalgVectorNormBackward0", A)
    reduced -= 0 if keepdim or reduced < summed else 1
    return sums.amax(reduced, keepdim=keepdim) if ord > 0 else sums.amin(reduced, keepdim=keepdim)


def _check_matrix_order(ord) -> None:
    if ord != "fro" and ord not in _SPECTRAL and ord not in (1, -1, math.inf, -math.inf):
        raise RuntimeError(
            f"linalg.matrix_norm: Order {ord} not supported. Use 'fro', 'nuc', 2, -2, 1, -1, inf or -inf "
            "(ember.linalg.vector_norm takes any other order)"
        )


def _matrix_dims(A: Tensor, dim) -> tuple[int, int]:
    """The two non-negative dims of ``A`` that ``dim`` names for ``matrix_norm``: checked to be two, distinct."""
    dims = _dims(dim)
    if len(dims) != 2:
        raise RuntimeError(
            f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(map(str, dims))}; name the two dims that "
            "hold the matrices, e.g. dim=(-2, -1)"
        )
    rows, cols = normalize_dims(dims, A.dim(), "linalg.matrix_norm")
    if rows == cols:
        raise RuntimeError(
            f"linalg.matrix_norm: dims must be different. Got ({rows}, {cols}); name two different dims, "
            "e.g. dim=(-2, -1)"
        )
    return rows, cols


def _spectral_norm(A: Tensor, ord: str | float, rows: int, cols: int, keepdim: bool) -> Tensor:
    """'nuc', 2 or -2 of the matrices over (rows, cols), from their singular values."""
    order = [d for d in range(A.dim()) if d not in (rows, cols)] + [rows, cols]
    values = svdvals(A.permute(order))  # (a transposed matrix has the same singular values)
    if ord == "nuc":
        result = values.sum(-1, keepdim=keepdim)
    elif ord == 2 and values.shape[-1] == 0:  # an empty matrix: norm 0, as torch (whose -2 raises, as amin does)
        result = Tensor._wrap(np.zeros(values.shape[:-1] + (1,) * keepdim, values._data.dtype))
    else:
        result = values.amax(-1, keepdim) if ord == 2 else values.amin(-1, keepdim)
    if not keepdim:
        return result
    return result.unsqueeze(-1).permute(np.argsort(order).tolist())  # the 1s back where rows and cols were


@linalg_function
def norm(input: Tensor, ord: str | float | None = None, dim: int | tuple[int, ...] | None = None,
         keepdim: bool = False, *, out: Tensor | None = None, dtype: _dtype.dtype | None = None) -> Tensor:
    """A vector norm, or a matrix norm when ``ord`` is a string or ``dim`` names two dims (as torch decides)."""
    if out is not None:
        return into_exact_out("linalg.norm", norm.__wrapped__(input, ord, dim, keepdim, dtype=dtype), out, input)
    A = input
    dims = _dims(dim)
    if ord is not None and dims is None and A.dim() not in (1, 2):  # (a string ord too: torch asks for a dim)
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got {A.dim()}D.")
    if isinstance(ord, str) or (dims is not None and len(dims) == 2) or (ord is not None and dims is None and A.dim() == 2):
        return matrix_norm(A, "fro" if ord is None else ord, dims or (-2, -1), keepdim, dtype=dtype)
    return vector_norm(A, 2 if ord is None else ord, dims, keepdim, dtype=dtype)


@linalg_function
def svdvals(A: Tensor, *, driver: str | None = None, out: Tensor | None = None) -> Tensor:
    """The singular values of each matrix in ``A`` (the last two dims), in descending order.

    The gradient of S is U diag(dS) Vh; it is differentiable to any order where the singular values are distinct
    and nonzero.

    >>> A = ember.tensor([[2., 0.], [0., -5.], [0., 0.]], requires_grad=True)
    >>> S = ember.linalg.svdvals(A); S
    tensor([5., 2.], grad_fn=<LinalgSvdBackward0>)
    >>> S.sum().backward(); A.grad
    tensor([[ 1.,  0.],
            [ 0., -1.],
            [ 0.,  0.]])
    """
    A = require_tensor(A, "linalg.svdvals")
    if A.dim() < 2:
        raise RuntimeError(f"linalg.svdvals: The input tensor A must have at least 2 dimensions (got {A.dim()}).")
    if driver is not None:
        raise RuntimeError(
            "linalg.svdvals: keyword argument `driver=` is only supported on CUDA inputs with cuSOLVER backend; "
            "ember runs on the CPU, so leave it out"
        )
    if A._data.dtype in _dtype.LOW:
        _D.refuse_low_precision("linalg.svdvals", A._data.dtype)
    A = _floating("svdvals", A, None, complex_ok=True)
    return _returned("linalg.svdvals", SingularValueDecomposition.apply(A)[1], out)


@linalg_function
def vecdot(x: Tensor, y: Tensor, *, dim: int = -1, out: Tensor | None = None) -> Tensor:
    """The dot product of vectors along ``dim``, broadcasting the rest; complex ``x`` is conjugated (as vdot).

    >>> ember.linalg.vecdot(ember.tensor([1j, 2.]), ember.tensor([1j, 1.]))
    tensor(3.+0.j)
    """
    x, y = _floating("vecdot", x, None, complex_ok=True), _floating("vecdot", y, None, complex_ok=True)
    if x.dtype != y.dtype:
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found x of type "
                           f"{_dtype.scalar_type_name(x._data.dtype)} and y of type "
                           f"{_dtype.scalar_type_name(y._data.dtype)} instead; convert one first")
    return _returned("linalg.vecdot", (conjugated(x) * y).sum(dim), out)


@linalg_function
def matmul(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
    """Same as ``ember.matmul``."""
    return _products.matmul.__wrapped__(input, other, out=out)


@linalg_function
def cross(input: Tensor, other: Tensor, *, dim: int = -1, out: Tensor | None = None) -> Tensor:
    """The cross product of 3-vectors along ``dim``, broadcasting the other dims.

    >>> ember.linalg.cross(ember.tensor([1., 0., 0.]), ember.tensor([0., 1., 0.]))
    tensor([0., 0., 1.])
    """
    a, b = require_tensor(input, "linalg.cross"), require_tensor(other, "linalg.cross", 2, "other")
    result = _more_products.cross_along("linalg.cross", a, b, dim)
    return result if out is None else into_out_of_its_dtype("linalg.cross", result, out, a, b)


@linalg_function
def multi_dot(tensors: list, *, out: Tensor | None = None) -> Tensor:
    """The product of the tensors (the first and the last may be vectors), in the order of fewest operations.

    >>> ember.linalg.multi_dot([ember.ones(3), ember.ones(3, 2), ember.ones(2)])
    tensor(6.)
    """
    tensors = [require_tensor(t, "linalg.multi_dot", 1, "tensors") for t in tensors]
    result = _more_products.multi_dot_of("multi_dot", tensors)
    return result if out is None else into_out_of_its_dtype("linalg.multi_dot", result, out, *tensors)


@linalg_function
def diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """The diagonals of the matrices in ``A`` (shifted by ``offset``), as a view, in the last dim.

    >>> ember.linalg.diagonal(ember.tensor([[1., 2.], [3., 4.]]))
    tensor([1., 4.])
    """
    return _more_products.diagonal_view(require_tensor(A, "linalg.diagonal", 1, "A"), offset, dim1, dim2)


# ----------------------------------------------------------------- inverses, determinants and solvers

_D = _decompositions




@linalg_function
def inv(A: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The inverse of each square matrix in ``A``; a singular one raises ``LinAlgError``.

    >>> ember.linalg.inv(ember.tensor([[2., 0.], [0., 4.]]))
    tensor([[0.5000, 0.0000],
            [0.0000, 0.2500]])
    """
    return _returned("linalg.inv", _D.Inverse.apply(_D.square_matrices("linalg.inv", A, complex_ok=True), "linalg.inv")[0], out)


@linalg_function
def inv_ex(A: Tensor, *, check_errors: bool = False, out: tuple | None = None) -> tuple:
    """``(inverse, info)``: info is 0 for an invertible matrix, else LAPACK's number (its inverse is then nan).

    >>> ember.linalg.inv_ex(ember.tensor([[1., 2.], [2., 4.]])).info
    tensor(2, dtype=ember.int32)
    """
    A = _D.square_matrices("linalg.inv", A, complex_ok=True)  # (torch's argument errors name inv, its others inv_ex)
    return _results("linalg_inv_ex", *_D.Inverse.apply(A, "linalg.inv_ex" if check_errors else None), out=out)


@linalg_function
def det(A: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The determinant of each square matrix in ``A``.

    >>> ember.linalg.det(ember.tensor([[1., 2.], [3., 4.]]))
    tensor(-2.)
    """
    return _returned("linalg.det", _D.Determinant.apply(_D.square_matrices("linalg.det", A, complex_ok=True)), out)


@linalg_function
def slogdet(A: Tensor, *, out: tuple | None = None) -> tuple:
    """``(sign, logabsdet)`` of each determinant: sign is -1, 0 or 1, logabsdet is log |det| (-inf for 0).

    >>> ember.linalg.slogdet(ember.tensor([[0., 2.], [3., 0.]])).sign
    tensor(-1.)
    """
    return _results("linalg_slogdet", *_D.SignLogDeterminant.apply(_D.square_matrices("linalg.slogdet", A, complex_ok=True)), out=out)


@linalg_function
def solve(A: Tensor, B: Tensor, *, left: bool = True, out: Tensor | None = None) -> Tensor:
    """X with A X = B (``left=False``: X A = B), for B a batch of vectors or of matrices.

    >>> ember.linalg.solve(ember.tensor([[2., 0.], [0., 4.]]), ember.tensor([2., 2.]))
    tensor([1.0000, 0.5000])
    """
    return _returned("linalg.solve", _solved("linalg.solve", A, B, left, "linalg.solve")[0], out)


@linalg_function
def solve_ex(A: Tensor, B: Tensor, *, left: bool = True, check_errors: bool = False,
             out: tuple | None = None) -> tuple:
    """``(result, info)`` of ``solve``: info is nonzero (and the result nan) where A is singular.

    >>> ember.linalg.solve_ex(ember.eye(2), ember.ones(2)).info
    tensor(0, dtype=ember.int32)
    """
    return _results("linalg_solve_ex", *_solved("linalg.solve_ex", A, B, left, "linalg.solve_ex" if check_errors else None),
                    out=out)


def _solved(op: str, A, B, left: bool, checked_as: str | None) -> tuple:
    own = A
    A, B, vector = _D.solve_arguments(op, A, B, left)
    solution, info = _D.Solve.apply(A, B, vector, None, left)
    if A is not own:  # B's batch dims broadcast A's
        info = wrap(_D.info_of_own_batch(info._data, own._data))
    if checked_as:
        _D.refuse_singular_systems(checked_as, info._data)
    return solution, info


@linalg_function
def cholesky(A: Tensor, *, upper: bool = False, out: Tensor | None = None) -> Tensor:
    """L, lower triangular with L L^T = A, for each symmetric positive-definite A (``upper``: U = L^T).

    >>> ember.linalg.cholesky(ember.tensor([[4., 2.], [2., 2.]]))
    tensor([[2., 0.],
            [1., 1.]])
    """
    L = _D.Cholesky.apply(_D.square_matrices("linalg.cholesky", A, complex_ok=True), upper, "linalg.cholesky")[0]
    return _returned("linalg.cholesky", L, out)


@linalg_function
def cholesky_ex(A: Tensor, *, upper: bool = False, check_errors: bool = False, out: tuple | None = None) -> tuple:
    """``(L, info)`` of ``cholesky``: info is the order of the first leading minor that is not positive-definite.

    >>> ember.linalg.cholesky_ex(-ember.eye(2)).info
    tensor(1, dtype=ember.int32)
    """
    A = _D.square_matrices("linalg.cholesky", A, complex_ok=True)  # (as inv_ex, named as torch names)
    checked_as = "linalg.cholesky_ex" if check_errors else None
    return _results("linalg_cholesky_ex", *_D.Cholesky.apply(A, upper, checked_as), out=out)


@linalg_function
def qr(A: Tensor, mode: str = "reduced", *, out: tuple | None = None) -> tuple:
    """``(Q, R)`` with A = Q R, Q's columns orthonormal, R upper triangular; ``mode`` 'reduced', 'complete' or
    'r' (R only: Q is empty).

    >>> ember.linalg.qr(ember.tensor([[3., 0.], [4., 5.]])).R
    tensor([[-5., -4.],
            [ 0.,  3.]])
    """
    A = _D.square_matrices("linalg.qr", A, square=False, complex_ok=True)
    if mode not in _D._QR_MODES:
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', "
                           "or 'complete'")
    return _results("linalg_qr", *_D.QRDecomposition.apply(A, mode), out=out)


@linalg_function
def svd(A: Tensor, full_matrices: bool = True, *, driver: str | None = None, out: tuple | None = None) -> tuple:
    """``(U, S, Vh)`` with A = U diag(S) Vh, S descending; U and Vh square if ``full_matrices``.

    The gradient is torch's (where the singular values are distinct); with full matrices the columns of U and
    rows of Vh beyond min(m, n) get none.

    >>> ember.linalg.svd(ember.tensor([[3., 0.], [0., -4.]])).S
    tensor([4., 3.])
    """
    A = _D.square_matrices("linalg.svd", A, square=False, complex_ok=True)
    if driver is not None:
        raise RuntimeError("linalg.svd: keyword argument `driver=` is only supported on CUDA inputs with cuSOLVER "
                           "backend; ember runs on the CPU, so leave it out")
    return _results("linalg_svd", *SingularValueDecomposition.apply(A, True, full_matrices), out=out)


def _eig_input(op: str, A) -> Tensor:
    A = require_tensor(A, op, 1, "A")
    return _D.square_matrices(op, A, complex_ok=True)


@linalg_function
def eig(A: Tensor, *, out: tuple | None = None) -> tuple:
    """``(eigenvalues, eigenvectors)`` of each square matrix, both complex (complex64 for float32 input,
    complex128 for float64), with A V = V diag(eigenvalues); each eigenvector has unit norm.

    An eigenvector is defined only up to a phase, so a loss may use only what does not depend on it (the
    eigenvalues, |V|, ...): the backward raises for a loss that does.

    >>> L, V = ember.linalg.eig(ember.tensor([[2., 0.], [0., 3.]]))
    >>> L
    tensor([2.+0.j, 3.+0.j])
    >>> ember.linalg.eig(ember.tensor([[0., -1.], [1., 0.]])).eigenvalues
    tensor([0.+1.j, 0.-1.j])
    """
    return _results("linalg_eig", *_D.Eigen.apply(_eig_input("linalg.eig", A), "linalg.eig"), out=out, cast=True)


@linalg_function
def eigvals(A: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The eigenvalues of each square matrix, complex, in the order of ``eig``'s.

    >>> ember.linalg.eigvals(ember.tensor([[1., 2.], [0., 3.]]))
    tensor([1.+0.j, 3.+0.j])
    """
    A = _eig_input("linalg.eigvals", A)
    if not A.requires_grad and A._fw is None:  # the vectors are needed only for a gradient (or a tangent)
        return _returned_cast("linalg.eigvals", wrap(_D.eig_arrays("linalg.eigvals", A._data, False)[0]), out)
    return _returned_cast("linalg.eigvals", _D.Eigen.apply(A, "linalg.eig")[0], out)  # (torch's errors name eig)


def _uplo(op: str, UPLO: str) -> str:
    """'L' or 'U': as torch, either letter in either case."""
    if not isinstance(UPLO, str):
        raise TypeError(f"{op}(): argument 'UPLO' must be str, not {type(UPLO).__name__}")
    if UPLO.upper() not in ("L", "U"):
        raise RuntimeError(f"{op}: Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return UPLO.upper()


@linalg_function
def eigh(A: Tensor, UPLO: str = "L", *, out: tuple | None = None) -> tuple:
    """``(eigenvalues, eigenvectors)`` of each symmetric matrix (read from its lower triangle, or upper if
    ``UPLO='U'``), eigenvalues ascending.

    >>> ember.linalg.eigh(ember.tensor([[2., 1.], [1., 2.]])).eigenvalues
    tensor([1., 3.])
    """
    A = _D.square_matrices("linalg.eigh", A, complex_ok=True)
    return _results("linalg_eigh", *_D.SymmetricEigen.apply(A, _uplo("linalg.eigh", UPLO)), out=out)


@linalg_function
def eigvalsh(A: Tensor, UPLO: str = "L", *, out: Tensor | None = None) -> Tensor:
    """The eigenvalues of each symmetric matrix, ascending.

    >>> ember.linalg.eigvalsh(ember.tensor([[2., 1.], [1., 2.]]))
    tensor([1., 3.])
    """
    A = _D.square_matrices("linalg.eigvalsh", A, complex_ok=True)
    return _returned("linalg.eigvalsh", _D.SymmetricEigen.apply(A, _uplo("linalg.eigvalsh", UPLO))[0], out)


@linalg_function
def pinv(A: Tensor, rcond: float | Tensor | None = None, hermitian: bool = False, *,
         atol: float | Tensor | None = None, rtol: float | Tensor | None = None, out: Tensor | None = None) -> Tensor:
    """The pseudo-inverse of each matrix: singular values at most max(atol, rtol * largest) count as zero
    (by default rtol = eps * max(m, n)). A tensor ``atol`` or ``rtol`` gives one cut per batch entry
    (broadcast with the batch); the older ``rcond`` is ``rtol`` with ``atol`` 0.

    >>> ember.linalg.pinv(ember.tensor([[1., 0.], [0., 0.]]))
    tensor([[1., 0.],
            [0., 0.]])
    >>> ember.linalg.pinv(ember.tensor([[1., 0.], [0., 0.1]]), atol=ember.tensor([0.01, 0.5]))
    tensor([[[ 1.,  0.],
             [ 0., 10.]],
    <BLANKLINE>
            [[ 1.,  0.],
             [ 0.,  0.]]])
    """
    atol, rtol = _older_tolerance("linalg.pinv", "rcond", rcond, atol, rtol, (0.0, rcond))
    A = _D.square_matrices("linalg.pinv", A, square=False, complex_ok=True)
    hermitian = _hermitian_wanted(A, hermitian)
    return _returned_cast("linalg.pinv", _D.PseudoInverse.apply(A, atol, rtol, hermitian), out, recorded=True)


@linalg_function
def matrix_rank(A: Tensor, tol: float | Tensor | None = None, hermitian: bool = False, *,
                atol: float | Tensor | None = None, rtol: float | Tensor | None = None,
                out: Tensor | None = None) -> Tensor:
    """How many singular values of each matrix exceed max(atol, rtol * largest) (int64). A tensor ``atol`` or
    ``rtol`` gives one cut per batch entry (broadcast with the batch); the older ``tol`` is ``atol`` with
    ``rtol`` 0.

    >>> ember.linalg.matrix_rank(ember.ones(3, 3))
    tensor(1)
    >>> ember.linalg.matrix_rank(ember.diag(ember.tensor([1., 0.1])), atol=ember.tensor([0.01, 0.5]))
    tensor([2, 1])
    """
    atol, rtol = _older_tolerance("linalg.matrix_rank", "tol", tol, atol, rtol, (tol, 0.0))
    A = _D.square_matrices("linalg.matrix_rank", A, square=False, complex_ok=True)
    data = A._data
    S = np.abs(_D.eigh_arrays(data)[0]) if _hermitian_wanted(A, hermitian) else _D._svd_arrays(data, False)[1]
    rank = (S > _D._tolerance(S, data.shape, atol, rtol)).sum(-1).astype(np.int64)
    return _returned_cast("linalg.matrix_rank", wrap(np.asarray(rank)), out)


def _older_tolerance(op: str, name: str, value, atol, rtol, as_cuts: tuple) -> tuple:
    """(atol, rtol) as arrays or numbers: ``as_cuts`` if the older single tolerance ``name`` was given, which
    torch refuses to mix with atol and rtol."""
    if value is None:
        return _cut(atol, op, "atol"), _cut(rtol, op, "rtol")
    if atol is not None or rtol is not None:
        raise TypeError(f"{op}() received an invalid combination of arguments: {name} cannot be given with atol or "
                        f"rtol; give atol and rtol alone")
    return tuple(_cut(cut, op, name) for cut in as_cuts)


def _cut(value, op: str, name: str):
    """A tolerance as a NumPy array (a tensor: one per batch entry) or a number; not a complex one, as torch."""
    if isinstance(value, Tensor):
        if value.is_complex():
            raise RuntimeError(f"{op}: {name} tensor of complex type is not supported. Got "
                               f"{_dtype.scalar_type_name(value._data.dtype)}")
        return np.asarray(value._data, dtype=np.float64)
    if isinstance(value, complex):
        raise TypeError(f"{op}(): argument '{name}' must be Tensor or float, not complex")
    return value


def _hermitian_wanted(A: Tensor, hermitian: bool) -> bool:
    """Whether to go through the eigendecomposition, which needs square matrices (empty ones take the SVD's
    path, which gives the same, as torch lets them through)."""
    if hermitian and A.numel() > 0:
        _D.square_matrices("linalg.eigh", A, complex_ok=True)
    return hermitian and A.numel() > 0


@linalg_function
def lstsq(A: Tensor, B: Tensor, rcond: float | None = None, *, driver: str | None = None,
          out: tuple | None = None) -> tuple:
    """``(solution, residuals, rank, singular_values)`` of min ||A X - B||: the minimum-norm solution.

    As torch on the CPU, ``driver`` is 'gelsy' (the default: the rank only), 'gels' (the residuals only),
    'gelsd' or 'gelss' (all three); residuals are given for tall A of full rank, else empty.

    >>> ember.linalg.lstsq(ember.tensor([[1., 0.], [0., 1.], [0., 0.]]), ember.tensor([1., 2., 3.])).solution
    tensor([1., 2.])
    """
    A = _D.square_matrices("linalg.lstsq", A, square=False, complex_ok=True)
    B = require_tensor(B, "linalg.lstsq", 2, "B")
    driver = "gelsy" if driver is None else driver
    if driver not in ("gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError(f"linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss), "
                           f"got {driver}")
    _D._same_dtype("linalg.lstsq", A, B)
    vector = B.dim() == A.dim() - 1
    rows = B.shape[-1 if vector else -2] if B.dim() else None
    if rows != A.shape[-2]:
        raise RuntimeError(f"linalg.lstsq: input.size(-2) should match other.size(-2), got {A.shape[-2]} and {rows}")
    if driver == "gels":
        _check_full_rank_for_gels(A._data)
    solution = _D.LeastSquares.apply(A, B, rcond, vector)
    extras = _lstsq_extras(A, B, solution, rcond, driver, vector)
    return _results("linalg_lstsq", solution, *extras, out=out, cast=True)


def _check_full_rank_for_gels(A: np.ndarray) -> None:
    """gels solves through the QR factors of A (tall) or of A^H (wide) and, as LAPACK's, refuses a triangular
    factor with an exact zero on its diagonal, where torch raises; the other drivers cut such a matrix's rank."""
    if A.size == 0:
        return
    tall = A.shape[-2] >= A.shape[-1]
    R = np.linalg.qr(A if tall else np.conj(A.swapaxes(-1, -2)), mode="r")
    zeros = np.diagonal(R, axis1=-2, axis2=-1) == 0
    info = np.where(zeros.any(-1), zeros.argmax(-1) + 1, 0)
    if info.any():
        where, code = _D._first_failure(info)
        raise LinAlgError(f"linalg.lstsq{where}: The least squares solution could not be computed because the input "
                          f"matrix does not have full rank (error code: {code}); use another driver, e.g. "
                          "driver='gelsd', for rank-deficient A")


def _lstsq_extras(A: Tensor, B: Tensor, X: Tensor, rcond, driver: str, vector: bool) -> tuple:
    """(residuals, rank, singular values) as the driver reports them (empty where it reports none). The residuals
    are differentiable, as torch's: computed in ember ops from the (differentiable) solution."""
    S = _D._svd_arrays(A._data, False)[1]
    rank = (S > _D._tolerance(S, A.shape, None, rcond)).sum(-1)
    m, n = A.shape[-2:]
    # an empty result of A's graph where none is reported: torch's residuals are always differentiable
    residuals = (X.real if X.is_complex() else X).reshape(-1)[:0]
    if driver != "gelsy" and m > n and (driver == "gels" or (rank == n).all()):  # gels assumes full rank
        difference = A @ (X.unsqueeze(-1) if vector else X) - (B.unsqueeze(-1) if vector else B)
        residuals = (difference * difference.conj()).real.sum(-2)  # a vector B keeps its column, as torch
    return (residuals, wrap(np.zeros(0, np.int64) if driver == "gels" else rank.astype(np.int64)),
            wrap(S) if driver in ("gelsd", "gelss") else wrap(np.zeros(0, S.dtype)))


@linalg_function
def matrix_power(A: Tensor, n: int, *, out: Tensor | None = None) -> Tensor:
    """A multiplied by itself ``n`` times (n = 0: the identity; n < 0: powers of the inverse).

    >>> ember.linalg.matrix_power(ember.tensor([[1., 1.], [0., 1.]]), 3)
    tensor([[1., 3.],
            [0., 1.]])
    """
    return _returned("linalg.matrix_power", _power("linalg.matrix_power", A, n), out)


def _power(op: str, A, n: int) -> Tensor:
    A = require_tensor(A, op)
    if A.dim() < 2 or A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{op}: A must be batches of square matrices, but they are "
                           f"{' by '.join(map(str, A.shape[-2:]))} matrices")
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"{op}(): argument 'n' must be int, not {type(n).__name__}")
    if n == 0:
        identity = wrap(np.broadcast_to(np.eye(A.shape[-1], dtype=A._data.dtype), A.shape))
        # as torch's: the identity written over a copy of A, so it stays in A's graph with a zero gradient
        return A.clone(memory_format=contiguous_format).copy_(identity)
    if n == 1:
        return A.clone()
    if n < 0:
        A, n = inv.__wrapped__(_autocast.widened(A)), -n
        if n == 1:
            return A
    result, square = None, _autocast.lowered(A)
    while n:  # binary powers: A^13 = A * A^4 * A^8
        if n & 1:
            result = square if result is None else _products.matmul.__wrapped__(result, square)
        n >>= 1
        if n:
            square = _products.matmul.__wrapped__(square, square)
    return result


@linalg_function
def matrix_exp(A: Tensor) -> Tensor:
    """exp(A) = I + A + A^2/2! + ... of each square matrix (scaling and squaring with a Pade approximant).

    >>> ember.linalg.matrix_exp(ember.zeros(2, 2))
    tensor([[1., 0.],
            [0., 1.]])
    """
    A = require_tensor(A, "linalg.matrix_exp", 1, "A")
    if A.dtype == _dtype.float16 and A.dim() >= 2:  # torch computes half too: in single here, rounded once
        return matrix_exp.__wrapped__(A.float()).half()
    return _D.MatrixExponential.apply(_D.square_matrices("linalg.matrix_exp", A, complex_ok=True))


# ----------------------------------------------------------------- triangular systems and tensor equations


@linalg_function
def solve_triangular(A: Tensor, B: Tensor, *, upper: bool, left: bool = True, unitriangular: bool = False,
                     out: Tensor | None = None) -> Tensor:
    """X with A X = B (``left=False``: X A = B) for triangular A: only its upper (``upper``) or lower triangle
    is read, and with ``unitriangular`` its diagonal counts as ones.

    >>> ember.linalg.solve_triangular(ember.tensor([[2., 1.], [0., 4.]]), ember.tensor([[3.], [4.]]), upper=True)
    tensor([[1.],
            [1.]])
    """
    op = "linalg.solve_triangular"
    if isinstance(B, Tensor) and B.dim() < 2:
        raise RuntimeError(f"{op}: The input tensor B must have at least 2 dimensions (got {B.dim()}); for a vector "
                           "b use b.unsqueeze(-1)")
    if isinstance(A, Tensor) and isinstance(B, Tensor) and B.dtype != A.dtype and (
            A.is_floating_point() or A.is_complex()):
        B = B.to(A.dtype)  # as torch, which solves in A's dtype whatever B's is (linalg.solve refuses a mix)
    A, B, _ = _D.solve_arguments(op, A, B, left)
    return _returned(op, _D.TriangularSolve.apply(A, B, upper, left, unitriangular), out)


@linalg_function
def cond(A: Tensor, p: str | float | None = None, *, out: Tensor | None = None) -> Tensor:
    """The condition number of each matrix in the norm ``p``: the ratio of the extreme singular values for
    None, 2 and -2, sum(s) sum(1 / s) of them for 'nuc', else norm(A) * norm(A^-1) (for square, invertible A).

    >>> ember.linalg.cond(ember.tensor([[2., 0.], [0., 0.5]]))
    tensor(4.)
    """
    A = _cond_operand(A, p)
    if A.numel() == 0:  # empty matrices: 0, in A's real dtype whatever it is (integers too), without a graph
        return _returned_cast("linalg.cond", wrap(np.zeros(A.shape[:-2], A._data.real.dtype)), out)
    through_singular_values = p in (None, 2, -2)
    checked_by = "linalg.svd" if through_singular_values or p == "nuc" else "linalg.inv"  # (as torch's errors)
    A = _D.square_matrices(checked_by, A, square=not through_singular_values, complex_ok=True)
    if through_singular_values:
        values = svdvals(A)
        largest, smallest = values.amax(-1), values.amin(-1)
        result = smallest / largest if p == -2 else largest / smallest
    elif p == "nuc":  # sum(s) sum(1 / s), as torch: a singular A is then inf, or nan at 0, and an infinite entry nan
        values = svdvals(A)
        result = values.sum(-1) * values.reciprocal().sum(-1)
    else:
        inverse, info = _D.Inverse.apply(A, None)
        singular = (info > 0).unsqueeze(-1).unsqueeze(-1)
        inverse = where(singular, 0.0, inverse)  # (a singular matrix's inverse is nan: kept out of the norm)
        result = where(info > 0, math.inf, matrix_norm(A, p) * matrix_norm(inverse, p))  # singular: inf, as torch
        result = result.nan_to_num(math.inf, math.inf, -math.inf)  # and so is a nan (of a non-finite A), as torch
    return _returned_cast("linalg.cond", result, out)


def _cond_operand(A, p) -> Tensor:
    """``A``, checked in torch's order: a numeric order ``p``, the dimensions, the shape (the message names
    ``p``), a string order; its dtype is checked after, unless it is empty."""
    if not isinstance(p, str):
        _check_cond_order(p)
    A = require_tensor(A, "linalg.cond", 1, "A")
    if A.ndim < 2:
        raise RuntimeError("linalg.cond: The input tensor must have at least 2 dimensions.")
    rows, columns = A.shape[-2:]
    if rows != columns and _cond_needs_square(p, A):
        raise RuntimeError(f"linalg.cond(ord={p}): A must be batches of square matrices, but they are {rows} by "
                           f"{columns} matrices")
    _check_cond_order(p)
    return A


def _check_cond_order(p) -> None:
    if p not in (None, "fro", "nuc", 2, -2, 1, -1, math.inf, -math.inf):
        raise RuntimeError(f"linalg.cond got an invalid norm type: {p}; use None, 'fro', 'nuc', 2, -2, 1, -1, inf "
                           "or -inf")


def _cond_needs_square(p, A) -> bool:
    """Whether ``cond`` in the norm ``p`` refuses non-square ``A``: as torch, the norms through the inverse do,
    except that the 1- and inf-norms let empty matrices of any shape through."""
    if p in (None, 2, -2):
        return False
    return isinstance(p, str) or require_tensor(A, "linalg.cond").numel() > 0


@linalg_function
def vander(x: Tensor, *, N: int | None = None) -> Tensor:
    """The Vandermonde matrix of ``x``: columns x^0, x^1, ..., x^(N-1) (N defaults to x's length).

    >>> ember.linalg.vander(ember.tensor([1., 2., 3.]))
    tensor([[1., 1., 1.],
            [1., 2., 4.],
            [1., 3., 9.]])
    """
    x = require_tensor(x, "linalg.vander", 1, "x")
    if x._data.dtype in _dtype.LOW:
        raise RuntimeError(f"linalg.vander supports floating point, complex, and integer tensors, but got "
                           f"{_dtype.scalar_type_name(x._data.dtype)}; convert it first, e.g. x.float()")
    if x.dim() == 0:  # as torch: one point
        x = x.reshape(1)
    N = x.shape[-1] if N is None else N
    if N <= 1:
        raise RuntimeError(f"linalg.vander: N must be greater than 1, got {N} (x's length if not given)")
    if x._data.dtype.kind in "iu":  # as torch: integer points give int64 powers
        x = x.to(_dtype.int64)
    powers = [_ones_column(x), x.unsqueeze(-1)]
    for _ in range(N - 2):
        powers.append(powers[-1] * x.unsqueeze(-1))
    return _joining.cat.__wrapped__(powers, -1)


def _ones_column(x: Tensor) -> Tensor:
    dtype = x._data.dtype if x._data.dtype != np.bool_ else np.int64
    return wrap(np.ones(x.shape + (1,), dtype))


@linalg_function
def tensorinv(A: Tensor, ind: int = 2, *, out: Tensor | None = None) -> Tensor:
    """The inverse of ``A`` seen as a linear map from its dims from ``ind`` on to its first ``ind`` dims:
    ``tensordot(tensorinv(A), A, ind)`` is the identity.

    >>> ember.linalg.tensorinv(ember.eye(4).reshape(4, 2, 2), ind=1).shape
    ember.Size([2, 2, 4])
    """
    A = require_tensor(A, "linalg.tensorinv", 1, "A")
    if ind <= 0:
        raise RuntimeError(f"linalg.tensorinv: Expected a strictly positive integer for 'ind', but got {ind}")
    rows, columns = A.shape[:ind], A.shape[ind:]
    if math.prod(rows) != math.prod(columns):
        raise RuntimeError(f"linalg.tensorinv: Expected self to satisfy the requirement "
                           f"prod(self.shape[ind:]) == prod(self.shape[:ind]), but got {math.prod(columns)} != "
                           f"{math.prod(rows)}")
    inverse = inv.__wrapped__(A.reshape(math.prod(rows), math.prod(columns)))
    return _returned_cast("linalg.tensorinv", inverse.reshape(*columns, *rows), out)


@linalg_function
def tensorsolve(A: Tensor, B: Tensor, dims: tuple[int, ...] | None = None, *, out: Tensor | None = None) -> Tensor:
    """X with ``tensordot(A, X, X.ndim) == B``: X has the shape of A's dims after B's (``dims`` are moved there).

    >>> ember.linalg.tensorsolve(ember.eye(6).reshape(2, 3, 6), ember.ones(2, 3)).shape
    ember.Size([6])
    """
    A, B = require_tensor(A, "linalg.tensorsolve", 1, "A"), require_tensor(B, "linalg.tensorsolve", 2, "B")
    if dims is not None:
        moved = [d % A.dim() for d in dims]
        A = A.permute(*[d for d in range(A.dim()) if d not in moved], *moved)
    # as torch, only the counts must agree: B is read as one vector of A's rows, whatever its shape
    shape, rows = A.shape[B.dim():], math.prod(A.shape[:B.dim()])
    if math.prod(shape) != B.numel():
        raise RuntimeError(f"linalg.tensorsolve: Expected self to satisfy the requirement "
                           f"prod(self.shape[other.ndim:]) == prod(self.shape[:other.ndim]), but got "
                           f"{math.prod(shape)} != {B.numel()} (A of shape {list(A.shape)}, B of shape "
                           f"{list(B.shape)})")
    if B.numel() != rows:
        raise RuntimeError(f"linalg.tensorsolve: B has {B.numel()} elements but A's first {B.dim()} dims hold "
                           f"{rows} rows (A of shape {list(A.shape)}, B of shape {list(B.shape)}); give B one "
                           "element per row")
    solution = solve.__wrapped__(A.reshape(rows, rows), B.reshape(rows))
    return _returned_cast("linalg.tensorsolve", solution.reshape(*shape), out)


# ----------------------------------------------------------------- LU


def _lu_factored(op: str, A, pivot: bool, check: bool) -> tuple:
    A = _D.square_matrices(op, A, square=False, complex_ok=True)
    if not pivot:
        raise RuntimeError(f"{op}: LU without pivoting is not implemented on the CPU; leave pivot=True")
    LU, pivots, info = _D.LUFactor.apply(A)
    if check and info._data.any():  # (a RuntimeError, not a LinAlgError, as torch's)
        where, k = _D._first_failure(info._data)
        raise RuntimeError(f"{op}{where}: U[{k},{k}] is zero and using it on lu_solve would result in a division by zero. "
                          "If you still want to perform the factorization, consider calling linalg.lu(A, pivot) or "
                          "linalg.lu_factor_ex(A, pivot)")
    return LU, pivots, info


@linalg_function
def lu_factor(A: Tensor, *, pivot: bool = True, out: tuple | None = None) -> tuple:
    """``(LU, pivots)``: L (unit lower, its diagonal not stored) and U packed in one matrix, and LAPACK's 1-based
    row swaps, with A = P L U. A singular matrix raises ``LinAlgError`` (``lu_factor_ex`` does not).

    >>> ember.linalg.lu_factor(ember.tensor([[1., 2.], [3., 4.]])).pivots
    tensor([2, 2], dtype=ember.int32)
    """
    LU, pivots, _ = _lu_factored("linalg.lu_factor", A, pivot, True)
    return _results("linalg_lu_factor", LU, pivots, out=out)


@linalg_function
def lu_factor_ex(A: Tensor, *, pivot: bool = True, check_errors: bool = False, out: tuple | None = None) -> tuple:
    """``(LU, pivots, info)`` of ``lu_factor``: info is the first zero pivot (1-based), 0 if none.

    >>> ember.linalg.lu_factor_ex(ember.zeros(2, 2)).info
    tensor(1, dtype=ember.int32)
    """
    return _results("linalg_lu_factor_ex", *_lu_factored("linalg.lu_factor_ex", A, pivot, check_errors), out=out)


@linalg_function
def lu(A: Tensor, *, pivot: bool = True, out: tuple | None = None) -> tuple:
    """``(P, L, U)`` with A = P L U: P a permutation, L unit lower triangular, U upper triangular.

    >>> ember.linalg.lu(ember.tensor([[1., 2.], [3., 4.]])).U
    tensor([[3.0000, 4.0000],
            [0.0000, 0.6667]])
    """
    LU, pivots, _ = _lu_factored("linalg.lu", A, pivot, False)
    return _results("linalg_lu", *lu_unpacked(LU, pivots), out=out)


def lu_unpacked(LU: Tensor, pivots: Tensor, unpack_data: bool = True, unpack_pivots: bool = True) -> tuple:
    """(P, L, U) from packed factors; what is not unpacked is an empty tensor, as torch."""
    m, n = LU.shape[-2:]
    empty = wrap(np.zeros(0, LU._data.dtype))
    P = wrap(_D.permutation_of(pivots._data, m, LU._data.dtype)) if unpack_pivots else empty
    L, U = _D.unpacked(LU, min(m, n)) if unpack_data else (empty, empty)
    return P, L, U


@linalg_function
def lu_solve(LU: Tensor, pivots: Tensor, B: Tensor, *, left: bool = True, adjoint: bool = False,
             out: Tensor | None = None) -> Tensor:
    """X with A X = B from A's LU factors (``adjoint``: A^H X = B; ``left=False``: X A = B).

    >>> LU, pivots = ember.linalg.lu_factor(ember.tensor([[2., 0.], [0., 4.]]))
    >>> ember.linalg.lu_solve(LU, pivots, ember.tensor([[2.], [2.]]))
    tensor([[1.0000],
            [0.5000]])
    """
    op = "linalg.lu_solve"
    LU = _D.square_matrices(op, LU, "LU", complex_ok=True)
    if isinstance(B, Tensor) and B.dim() < 2:
        raise RuntimeError(f"{op}: The input tensor B must have at least 2 dimensions (got {B.dim()})")
    pivots = require_tensor(pivots, op, 2, "pivots")
    B = _lu_right_hand_side(op, LU, B, left)
    pivots = _checked_pivots(op, pivots, LU.shape[-1])  # (after B's checks, as torch)
    return _returned(op, _solves.LUSolve.apply(LU, B, pivots, left, adjoint), out)


def _checked_pivots(op: str, pivots: Tensor, n: int) -> np.ndarray:
    """The array of ``pivots``, checked as torch does to be LAPACK's: int32, n per matrix, each in 1..n (rows
    to swap with, which anything else would read out of range or silently misorder)."""
    data = pivots._data
    if data.dtype != np.int32:
        raise RuntimeError(f"{op}: pivots should be a Tensor of scalar type ember.int32, got {pivots.dtype}; pass "
                           "the pivots that lu_factor returns")
    if data.ndim == 0 or data.shape[-1] != n:
        raise RuntimeError(f"{op}: Number of pivots per batch should be same as the dimension of the matrix")
    if data.size and data.min() < 1:
        raise RuntimeError("Pivots given to lu_solve must all be greater or equal to 1. Did you properly pass the "
                           "result of lu_factor?")
    if data.size and data.max() > n:
        raise RuntimeError("Pivots given to lu_solve must all be smaller or equal to LU.size(-2). Did you properly "
                           "pass the result of lu_factor?")
    return np.array(data)


def _lu_right_hand_side(op: str, A: Tensor, B, left: bool) -> Tensor:
    """B checked against A for lu_solve: matrices (B is never read as vectors, as torch), of A's dtype, whose
    rows (columns unless ``left``) match A's size."""
    B = require_tensor(B, op, 3, "B")
    _D._same_dtype(op, A, B)
    n, (rows, columns) = A.shape[-1], B.shape[-2:]
    if (rows if left else columns) != n:
        raise RuntimeError(f"{op}: Incompatible shapes of A and B for the equation {'AX' if left else 'XA'} = B "
                           f"({n}x{n} and {rows}x{columns})")
    _solves.check_batches_broadcast(op, A, B)
    return B


@linalg_function
def householder_product(A: Tensor, tau: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The first n columns of H_1 H_2 ... H_k, H_i = I - tau_i v_i v_i^H, where v_i is column i of A below the
    diagonal with a 1 on it (the reflectors LAPACK's geqrf stores).

    >>> ember.linalg.householder_product(ember.tensor([[1.], [0.]]), ember.tensor([2.]))
    tensor([[-1.],
            [-0.]])
    """
    op = "linalg.householder_product"
    A = _D.square_matrices(op, A, square=False, complex_ok=True)
    tau = require_tensor(tau, op, 2, "tau")
    (m, n), k = A.shape[-2:], tau.shape[-1] if tau.dim() else 0
    if tau.dim() != A.dim() - 1:
        raise RuntimeError(f"{op}: Expected tau to have one dimension less than input, "
                           f"but got tau.ndim equal to {tau.dim()} and input.ndim is equal to {A.dim()}")
    if tuple(tau.shape[:-1]) != tuple(A.shape[:-2]):
        raise RuntimeError(f"{op}: Expected batch dimensions of tau to be equal to input.shape[:-2], but got "
                           f"{list(tau.shape[:-1])}; tau holds one vector of scalars per matrix of input")
    if m < n or n < k:
        raise RuntimeError(f"{op}: input.shape[-2] must be greater than or equal to input.shape[-1], and "
                           f"input.shape[-1] than tau.shape[-1]; got {m}, {n} and {k}")
    if tau.dtype != A.dtype:
        raise RuntimeError(f"{op}: tau dtype {_dtype.scalar_type_name(tau._data.dtype)} does not match input dtype "
                           f"{_dtype.scalar_type_name(A._data.dtype)}")
    return _returned_cast(op, _solves.HouseholderProduct.apply(A, tau), out, recorded=True)

# ---- LDL^T with Bunch-Kaufman pivoting
from ember._ops.linalg_ldl import ldl_factor, ldl_factor_ex, ldl_solve  # noqa: E402
