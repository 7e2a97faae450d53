"""torch's older top-level names for ``ember.linalg`` functions: inverse, det, logdet, slogdet, cholesky, qr,
svd (U, S, V), pinverse, matrix_power and matrix_exp.

>>> import ember
>>> ember.det(ember.tensor([[2., 1.], [1., 2.]]))
tensor(3.)
"""
from __future__ import annotations

import math

import numpy as np

from ember import linalg as _linalg, return_types
from ember._ops import decompositions as _D, linalg_solves as _solves
from ember._ops._support import ember_function, require_tensor, wrap
from ember._ops.arithmetic import where
from ember._ops.complex import complex_angle as angle
from ember._ops.out import into_out, into_out_of_its_dtype
from ember._tensor import Tensor


@ember_function
def inverse(input, *, out=None) -> Tensor:
    """The inverse of each square matrix (``linalg.inv``).

    >>> ember.inverse(ember.tensor([[2.]]))
    tensor([[0.5000]])
    """
    return _linalg.inv.__wrapped__(input, out=out)


@ember_function
def det(input) -> Tensor:
    """The determinant of each square matrix (``linalg.det``).

    >>> ember.det(ember.eye(3) * 2)
    tensor(8.)
    """
    return _linalg.det.__wrapped__(input)


@ember_function
def slogdet(input, *, out=None) -> tuple:
    """``(sign, logabsdet)`` of each determinant (``linalg.slogdet``).

    >>> ember.slogdet(-ember.eye(1)).sign
    tensor(-1.)
    """
    return _linalg._results("slogdet", *_linalg.slogdet.__wrapped__(input), out=out)


@ember_function
def logdet(input) -> Tensor:
    """log det of each square matrix: nan for a negative determinant, -inf for 0 (complex for a complex matrix).

    >>> ember.logdet(ember.eye(2) * 3)
    tensor(2.1972)
    """
    sign, logabsdet = _linalg.slogdet.__wrapped__(input)
    if sign._data.dtype.kind == "c":  # log det = log |det| + i arg(det)
        return logabsdet + angle(sign) * 1j
    return where(sign < 0, math.nan, logabsdet)


@ember_function
def cholesky(input, upper: bool = False, *, out=None) -> Tensor:
    """The Cholesky factor of each symmetric positive-definite matrix (torch's older name; its node is
    ``CholeskyBackward0``).

    >>> ember.cholesky(ember.tensor([[4.]]))
    tensor([[2.]])
    """
    A = _D.square_matrices("cholesky", input, complex_ok=True)
    result = _D.CholeskyOld.apply(A, upper, "cholesky")[0]
    return result if out is None else into_out("cholesky", result, out, A)  # (which casts, as torch's)


@ember_function
def qr(input, some: bool = True, *, out=None) -> tuple:
    """``(Q, R)`` of each matrix: reduced if ``some``, else complete (``linalg.qr``).

    >>> ember.qr(ember.eye(2)).R
    tensor([[1., 0.],
            [0., 1.]])
    """
    Q, R = _linalg.qr.__wrapped__(input, "reduced" if some else "complete")
    return _linalg._results("qr", Q, R, out=out)


@ember_function
def svd(input, some: bool = True, compute_uv: bool = True, *, out=None) -> tuple:
    """``(U, S, V)`` with A = U diag(S) V^H (V, not Vh); reduced if ``some``. Without ``compute_uv`` U and V
    are zeros.

    >>> ember.svd(ember.tensor([[0., 2.], [1., 0.]])).S
    tensor([2., 1.])
    """
    if not compute_uv:
        A = _D.square_matrices("svd", input, square=False, complex_ok=True)
        S = _linalg.svdvals.__wrapped__(A)
        m, n = A.shape[-2:]
        zeros = (np.zeros(A.shape[:-2] + shape, A._data.dtype) for shape in ((m, m), (n, n)))
        U, V = (wrap(z) for z in zeros)
        return _linalg._results("svd", U, S, V, out=out)
    U, S, Vh = _linalg.svd.__wrapped__(input, full_matrices=not some)
    return _linalg._results("svd", U, S, _D.adjoint_of(Vh), out=out)


@ember_function
def pinverse(input, rcond: float = 1e-15) -> Tensor:
    """The pseudo-inverse, singular values at most ``rcond`` times the largest counting as zero.

    >>> ember.pinverse(ember.tensor([[2., 0.]]))
    tensor([[0.5000],
            [0.0000]])
    """
    return _linalg.pinv.__wrapped__(input, rtol=rcond)


@ember_function
def matrix_power(input, n: int, *, out=None) -> Tensor:
    """A multiplied by itself ``n`` times (``linalg.matrix_power``).

    >>> ember.matrix_power(ember.eye(2) * 2, 2)
    tensor([[4., 0.],
            [0., 4.]])
    """
    return _linalg.matrix_power.__wrapped__(input, n, out=out)


@ember_function
def matrix_exp(input) -> Tensor:
    """exp of each square matrix (``linalg.matrix_exp``).

    >>> ember.matrix_exp(ember.zeros(1, 1))
    tensor([[1.]])
    """
    return _linalg.matrix_exp.__wrapped__(input)


@ember_function
def cholesky_solve(input, input2, upper: bool = False, *, out=None) -> Tensor:
    """X with A X = ``input`` where A = L L^T is given by its Cholesky factor L = ``input2`` (U if ``upper``).

    >>> ember.cholesky_solve(ember.tensor([[4.], [2.]]), ember.tensor([[2., 0.], [0., 1.]]))
    tensor([[1.],
            [2.]])
    """
    B = _D.square_matrices("cholesky_solve", input, "input", square=False, complex_ok=True)
    L = _D.square_matrices("cholesky_solve", input2, "input2", complex_ok=True)
    _check_cholesky_right_hand_side(B, L)
    result = _solves.CholeskySolve.apply(B, L, bool(upper))
    return result if out is None else into_out("cholesky_solve", result, out, B, L)


def _check_cholesky_right_hand_side(B: Tensor, L: Tensor) -> None:
    """B as torch's cholesky_solve takes it: matrices (never vectors) of L's dtype and size, whose batch dims
    broadcast with L's."""
    _D._same_dtype("cholesky_solve", L, B)
    n, (rows, columns) = L.shape[-1], B.shape[-2:]
    if rows != n:
        raise RuntimeError(f"Incompatible matrix sizes for cholesky_solve: each A matrix is {n} by {n} but each b "
                           f"matrix is {rows} by {columns}")
    _solves.check_batches_broadcast("cholesky_solve", L, B, ("input2", "input"))


@ember_function
def cholesky_inverse(input, upper: bool = False, *, out=None) -> Tensor:
    """The inverse of A = L L^T from its Cholesky factor L = ``input`` (U if ``upper``).

    >>> ember.cholesky_inverse(ember.tensor([[2., 0.], [0., 1.]]))
    tensor([[0.2500, 0.0000],
            [0.0000, 1.0000]])
    """
    L = _D.square_matrices("cholesky_inverse", input, complex_ok=True)
    result = _solves.CholeskyInverse.apply(L, bool(upper))
    return result if out is None else into_out("cholesky_inverse", result, out, L)


@ember_function
def lu_unpack(LU_data, LU_pivots, unpack_data: bool = True, unpack_pivots: bool = True, *, out=None) -> tuple:
    """``(P, L, U)`` from the packed factors and pivots of ``linalg.lu_factor``.

    >>> ember.lu_unpack(*ember.linalg.lu_factor(ember.tensor([[1., 2.], [3., 4.]]))).P
    tensor([[0., 1.],
            [1., 0.]])
    """
    LU = _D.square_matrices("lu_unpack", LU_data, "LU_data", square=False, complex_ok=True)
    pivots = require_tensor(LU_pivots, "lu_unpack", 2, "LU_pivots")
    return _linalg._results("lu_unpack", *_linalg.lu_unpacked(LU, pivots, unpack_data, unpack_pivots), out=out)


@ember_function
def orgqr(input, tau) -> Tensor:
    """``linalg.householder_product`` under LAPACK's name.

    >>> ember.orgqr(ember.tensor([[1.], [0.]]), ember.tensor([2.]))
    tensor([[-1.],
            [-0.]])
    """
    return _linalg.householder_product.__wrapped__(input, tau)


@ember_function
def geqrf(input, *, out=None) -> tuple:
    """``(a, tau)``: LAPACK's compact QR, R above the diagonal and Householder reflectors below it
    (``linalg.householder_product(a, tau)`` is Q).

    >>> ember.geqrf(ember.tensor([[3.], [4.]])).a
    tensor([[-5.0000],
            [ 0.5000]])
    """
    A = _D.square_matrices("geqrf", input, "input", square=False, complex_ok=True)
    return _linalg._results("geqrf", *_D.HouseholderQR.apply(A), out=out, cast=True)


@ember_function
def lu(A, pivot: bool = True, get_infos: bool = False, out=None) -> tuple:
    """``(LU, pivots)`` (and ``info`` if ``get_infos``) of each matrix: torch's older ``linalg.lu_factor``.

    >>> ember.lu(ember.tensor([[1., 2.], [3., 4.]]))[1]
    tensor([2, 2], dtype=ember.int32)
    """
    LU, pivots, info = _linalg.lu_factor_ex.__wrapped__(A, pivot=pivot)
    if get_infos:
        result = _linalg._results("_lu_with_info", LU, pivots, info)
        return result if out is None else tuple(_linalg._results("linalg_lu_factor_ex", LU, pivots, info, out=out))
    return (LU, pivots) if out is None else tuple(_linalg._results("linalg_lu_factor", LU, pivots, out=out))


@ember_function
def lu_solve(b, LU_data, LU_pivots, *, out=None) -> Tensor:
    """X with A X = b from A's LU factors: torch's older ``linalg.lu_solve`` (its arguments in another order).

    >>> ember.lu_solve(ember.tensor([[2.]]), *ember.lu(ember.tensor([[4.]])))
    tensor([[0.5000]])
    """
    return _linalg.lu_solve.__wrapped__(LU_data, LU_pivots, b, out=out)


@ember_function
def triangular_solve(b, A, upper: bool = True, transpose: bool = False, unitriangular: bool = False, *,
                     out=None) -> tuple:
    """``(solution, cloned_coefficient)``: X with A X = b (A^T X = b if ``transpose``) for triangular A, and a copy
    of A: torch's older ``linalg.solve_triangular``.

    >>> ember.triangular_solve(ember.tensor([[2.], [4.]]), ember.tensor([[2., 0.], [0., 4.]])).solution
    tensor([[1.],
            [1.]])
    """
    A = _D.square_matrices("triangular_solve", A, complex_ok=True)
    system = A.mT if transpose else A
    solution = _linalg.solve_triangular.__wrapped__(system, b, upper=upper != transpose, unitriangular=unitriangular)
    coefficient = A.expand(*solution.shape[:-2], *A.shape[-2:]).clone()  # (A broadcast with b's batch, as torch)
    return _linalg._results("triangular_solve", solution, coefficient, out=out)
