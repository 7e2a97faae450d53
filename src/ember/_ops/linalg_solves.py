"""Solves and products from factored matrices, each one op: ``lu_solve`` (from A = P L U), ``cholesky_solve``
and ``cholesky_inverse`` (from A = L L^H), and ``householder_product`` (Q from geqrf's reflectors).

The forwards run on the factors' arrays (row swaps, triangular solves, blocked reflectors); the backwards and
the tangents are written in ember ops, calling these same ops, so that every order of derivative works.

>>> import ember
>>> LU, pivots = ember.linalg.lu_factor(ember.tensor([[2., 0.], [0., 4.]]))
>>> ember.linalg.lu_solve(LU, pivots, ember.tensor([[2.], [2.]]))
tensor([[1.0000],
        [0.5000]])
"""
from __future__ import annotations

import numpy as np

from ember._ops import decompositions as _D
from ember._ops._support import wrap
from ember._ops.arithmetic import where
from ember._ops.complex import conjugated
from ember._ops.diagonals import diag_embed, tril, triu
from ember._ops.masking import take_along_dim
from ember._tensor import Tensor
from ember.autograd.function import Function

_adjoint = _D.adjoint_of


def _array_adjoint(data: np.ndarray) -> np.ndarray:
    return np.conj(data.swapaxes(-1, -2))


def _unit_solve(T: Tensor, B: Tensor, upper: bool) -> Tensor:
    """T^-1 B for the unit triangle of T (its diagonal read as ones), differentiable."""
    return _D.TriangularSolve.apply(T, B, upper, True, True)


def _triangle_solve(T: Tensor, B: Tensor, upper: bool) -> Tensor:
    return _D.TriangularSolve.apply(T, B, upper, True, False)


def check_batches_broadcast(op: str, A: Tensor, B: Tensor, names: tuple = ("A", "B")) -> None:
    """The batch dims of the system A and the right-hand side B must broadcast together."""
    try:
        np.broadcast_shapes(A.shape[:-2], B.shape[:-2])
    except ValueError:
        raise RuntimeError(f"{op}: the batch dims of {names[0]} {list(A.shape[:-2])} and {names[1]} "
                           f"{list(B.shape[:-2])} do not broadcast") from None


# ----------------------------------------------------------------- lu_solve


class LUSolve(Function):
    """X with A X = B (A^H X = B if ``adjoint``; X A = B, or X A^H = B, unless ``left``) from A = P L U given
    as LAPACK's packed factors and 1-based row swaps (``pivots``, an array). X A = B is solved as
    A^H X^H = B^H, the adjoint system of the same factors."""

    backward_name = "LinalgLuSolveBackward0"

    @staticmethod
    def forward(ctx, LU, B, pivots, left, adjoint):
        if left:
            solution = _D.lu_solve_arrays(LU._data, pivots, B._data, adjoint)
        else:
            solution = _D.lu_solve_arrays(LU._data, pivots, _array_adjoint(B._data), not adjoint)
            solution = np.ascontiguousarray(_array_adjoint(solution))
        X = wrap(solution)
        if True in ctx.needs_input_grad:
            ctx.save_for_backward(LU, X)
            ctx.pivots, ctx.flags = pivots, (left, adjoint)
        return X

    @staticmethod
    def backward(ctx, grad):
        LU, X = ctx.saved_tensors
        left, adjoint = ctx.flags
        if not left:  # X^H = (A^H)^-1 B^H: the left formulas for X^H, with their gradients conjugate-transposed
            X, grad, adjoint = _adjoint(X), _adjoint(grad), not adjoint
        gradients = _adjoint_lu_backward if adjoint else _lu_backward
        grad_LU, grad_B = gradients(LU, ctx.pivots, X, grad, ctx.needs_input_grad[0])
        needs = ctx.needs_input_grad
        if needs[1] and not left:
            grad_B = _adjoint(grad_B)
        return grad_LU, (grad_B if needs[1] else None), None, None, None

    @staticmethod
    def jvp(ctx, LU_tangent, B_tangent, *_):
        LU, B, pivots, left, adjoint = ctx.primals
        X = ctx.result
        change = _zeros_like(X) if B_tangent is None else B_tangent
        if LU_tangent is not None:  # d(A^-1 B) = A^-1 (dB - dA X), and X A = B is A^H X^H = B^H
            change = change - _system_change(LU, pivots, LU_tangent, X, left, adjoint)
        return LUSolve.apply(LU, change, pivots, left, adjoint)


def _zeros_like(x: Tensor) -> Tensor:
    return wrap(np.zeros(x.shape, x._data.dtype))


def _system_change(LU, pivots, LU_tangent, X, left: bool, adjoint: bool):
    """dA X (dA^H X if ``adjoint``) for dA = P (dL U + L dU); unless ``left``, X dA (X dA^H), the adjoint of
    dA^H X^H (dA X^H)."""
    if not left:
        return _adjoint(_system_change(LU, pivots, LU_tangent, _adjoint(X), True, not adjoint))
    (L, U), (dL, dU) = _D.unpacked(LU, LU.shape[-1]), _split(LU_tangent)
    if not adjoint:
        return _rows_to_system(L @ (dU @ X) + dL @ (U @ X), pivots)
    X_rows = _rows_to_factors(X, pivots)  # dA^H X = (U^H dL^H + dU^H L^H) P^T X
    return _adjoint(U) @ (_adjoint(dL) @ X_rows) + _adjoint(dU) @ (_adjoint(L) @ X_rows)


def _split(LU_tangent):
    """The parts of a packed tangent that belong to L (strictly lower) and to U (upper)."""
    return tril(LU_tangent, -1), triu(LU_tangent)


def _rows_in_order(M, order: np.ndarray):
    """M[..., order, :]: one order for every matrix (unbatched factors) is a selection, which costs a tenth of
    the gather that a batch of orders needs."""
    if order.ndim == 1:
        return M.index_select(-2, wrap(order))
    index = order[..., None]
    return take_along_dim(M, wrap(index.reshape((1,) * (M.dim() - index.ndim) + index.shape)), -2)


def _rows_to_factors(M, pivots: np.ndarray):
    """P^T M: M's rows in the order of the factors (A[order] = L U)."""
    return _rows_in_order(M, _D.row_order(pivots, M.shape[-2]))


def _rows_to_system(M, pivots: np.ndarray):
    """P M: the rows of the factors put back in the order of A."""
    return _rows_in_order(M, np.argsort(_D.row_order(pivots, M.shape[-2]), -1))


def _lu_backward(LU, pivots, X, grad, factors_too: bool) -> tuple:
    """Gradients of X = A^-1 B, A = P L U (LU's only if ``factors_too``): gB = A^-H gX = P L^-H U^-H gX; with
    Z = U^-H gX and Y = L^-H Z (= P^T gB), gA = -gB X^H gives gL = tril(P^T gA U^H, -1) = -tril(Y (U X)^H, -1)
    and gU = triu(L^H P^T gA) = -triu(Z X^H)."""
    LU_H = _adjoint(LU)
    Z = _triangle_solve(LU_H, grad, upper=False)
    Y = _unit_solve(LU_H, Z, upper=True)
    grad_LU = None
    if factors_too:
        UX = triu(LU) @ X
        grad_LU = -(tril(Y @ _adjoint(UX), -1) + triu(Z @ _adjoint(X)))
    return grad_LU, _rows_to_system(Y, pivots)


def _adjoint_lu_backward(LU, pivots, X, grad, factors_too: bool) -> tuple:
    """Gradients of X = A^-H B (LU's only if ``factors_too``): gB = A^-1 gX = U^-1 R with R = L^-1 P^T gX, and
    gA = -X gB^H; with X' = P^T X, gL = -tril(X' R^H, -1) and gU = -triu(L^H X' gB^H)."""
    R = _unit_solve(LU, _rows_to_factors(grad, pivots), upper=False)
    grad_B = _triangle_solve(LU, R, upper=True)
    grad_LU = None
    if factors_too:
        X_rows = _rows_to_factors(X, pivots)
        L = _D.unpacked(LU, LU.shape[-1])[0]
        grad_LU = -(tril(X_rows @ _adjoint(R), -1) + triu((_adjoint(L) @ X_rows) @ _adjoint(grad_B)))
    return grad_LU, grad_B


# ----------------------------------------------------------------- from a Cholesky factor
#
# A = L L^H (U^H U if ``upper``). As torch, only the factor's triangle is read, but the factor's gradient is
# that of the full matrix: gL = (gA + gA^H) L (gU = U (gA + gA^H)), not masked to the triangle.


def _kept_with_factor(ctx, result: Tensor, factor: Tensor, upper: bool) -> Tensor:
    """``result``, with what the backward reads (the factor and the result) saved where a gradient is needed."""
    if True in ctx.needs_input_grad:
        ctx.save_for_backward(factor, result)
        ctx.upper = upper
    return result


def _factor_gradient(factor, symmetric, upper: bool):
    """The factor's gradient for A = L L^H (U^H U), from ``symmetric`` = gA + gA^H."""
    return factor @ symmetric if upper else symmetric @ factor


def _system_tangent(factor, tangent, upper: bool):
    """dA for A = L L^H (U^H U), the factor's tangent taken whole, as its gradient is."""
    product = _adjoint(factor) @ tangent if upper else tangent @ _adjoint(factor)
    return product + _adjoint(product)


class CholeskySolve(Function):
    """X = A^-1 B for A = L L^H (U^H U if ``upper``) given by its factor, as LAPACK's potrs: two triangular
    solves with the factor."""

    backward_name = "CholeskySolveBackward0"

    @staticmethod
    def forward(ctx, B, factor, upper):
        return _kept_with_factor(ctx, wrap(_cholesky_solve_arrays(B._data, factor._data, upper)), factor, upper)

    @staticmethod
    def backward(ctx, grad):
        factor, X = ctx.saved_tensors
        grad_B = CholeskySolve.apply(grad, factor, ctx.upper)
        grad_factor = None
        if ctx.needs_input_grad[1]:  # gA = -gB X^H
            grad_A = -(grad_B @ _adjoint(X))
            grad_factor = _factor_gradient(factor, grad_A + _adjoint(grad_A), ctx.upper)
        return (grad_B if ctx.needs_input_grad[0] else None), grad_factor, None

    @staticmethod
    def jvp(ctx, B_tangent, factor_tangent, _):
        B, factor, upper = ctx.primals
        change = _zeros_like(ctx.result) if B_tangent is None else B_tangent
        if factor_tangent is not None:  # d(A^-1 B) = A^-1 (dB - dA X)
            change = change - _system_tangent(factor, factor_tangent, upper) @ ctx.result
        return CholeskySolve.apply(change, factor, upper)


# Up to this size one LAPACK solve of the rebuilt A = L L^H costs less than two triangular solves with L (on one
# thread: 0.54 against 0.76 ms at 128, 1.5 against 1.8 at 192, 4.3 against 3.6 at 256, float32).
_WHOLE_SOLVE_UP_TO = 192


def _cholesky_solve_arrays(B: np.ndarray, factor: np.ndarray, upper: bool) -> np.ndarray:
    """A^-1 B: L^-H L^-1 B (U^-1 U^-H B); for a small factor one LAPACK solve of the rebuilt A, which costs
    less than two triangles' (unless it refuses a singular A or would spread a non-finite value)."""
    adjoint = _array_adjoint(factor)
    first, second = (adjoint, factor) if upper else (factor, adjoint)  # A = U^H U, or L L^H
    if factor.shape[-1] <= _WHOLE_SOLVE_UP_TO:
        lower = _D._triangle(first, upper=False, unit=False)
        solution = _D.solved_whole(lower @ _array_adjoint(lower), B)
        if solution is not None:
            return solution
    inner = _D.triangular_solve_arrays(first, B, upper=False, unit=False)
    return _D.triangular_solve_arrays(second, inner, upper=True, unit=False)


class CholeskyInverse(Function):
    """A^-1 for A = L L^H (U^H U if ``upper``) given by its factor, as LAPACK's potri: L^-H L^-1."""

    backward_name = "CholeskyInverseBackward0"

    @staticmethod
    def forward(ctx, factor, upper):
        return _kept_with_factor(ctx, wrap(_cholesky_inverse_arrays(factor._data, upper)), factor, upper)

    @staticmethod
    def backward(ctx, grad):
        factor, inverse = ctx.saved_tensors
        # gA = -A^-H gX A^-H, and A^-1 is Hermitian: gA + gA^H = -A^-1 (gX + gX^H) A^-1. Multiplied by the factor
        # as (A^-1 S)(A^-1 L) (U: (U A^-1)(S A^-1)), whose single-precision rounding is the smallest of the orders
        # (float32 at 512: 9.7e-7 relative error, against 1.4e-6 for ((A^-1 S) A^-1) L; torch 1.3e-6)
        inverse_S = inverse @ (grad + _adjoint(grad))
        if ctx.upper:
            return -((factor @ inverse) @ _adjoint(inverse_S)), None
        return -(inverse_S @ (inverse @ factor)), None

    @staticmethod
    def jvp(ctx, factor_tangent, _):
        factor, upper = ctx.primals
        inverse = ctx.result  # d(A^-1) = -A^-1 dA A^-1
        return -(inverse @ _system_tangent(factor, factor_tangent, upper) @ inverse)


def _cholesky_inverse_arrays(factor: np.ndarray, upper: bool) -> np.ndarray:
    """L^-H L^-1 (U^-1 U^-H) by one triangular solve and one product; LAPACK's inverse of the rebuilt A for a
    small factor, where that costs less, and for one with a non-finite entry. A zero on the diagonal is an
    error, as torch's."""
    n = factor.shape[-1]
    _refuse_singular_factor(np.diagonal(factor, axis1=-2, axis2=-1))
    lower = _array_adjoint(factor) if upper else factor
    if n <= _D._TRIANGLE_LEAF or not np.isfinite(factor).all():
        lower = _D._triangle(lower, upper=False, unit=False)
        return _D._with_info(lower @ _array_adjoint(lower), np.linalg.inv, _D._first_zero_pivot)[0]
    inverse_factor = _D.triangular_solve_arrays(lower, np.eye(n, dtype=factor.dtype), upper=False, unit=False)
    return _gram_product(inverse_factor)


_SINGLE = (np.dtype(np.float32), np.dtype(np.complex64))


def _gram_product(M: np.ndarray) -> np.ndarray:
    """M^H M, summed in double precision for single-precision M: in single precision the sums lose up to 15 ulp
    on the diagonal at n = 128 (torch's potri, 4), in double they are rounded once. A real M is multiplied by a
    view of itself, M.T @ M, which NumPy hands to BLAS's syrk: half the products of a general one."""
    wide = M.astype(np.complex128 if M.dtype.kind == "c" else np.float64) if M.dtype in _SINGLE else M
    product = wide.swapaxes(-1, -2) @ wide if wide.dtype.kind != "c" else _array_adjoint(wide) @ wide
    return product.astype(M.dtype, copy=False)


def _refuse_singular_factor(diagonal: np.ndarray) -> None:
    zero = diagonal == 0
    if zero.any():
        info = np.where(zero.any(-1), zero.argmax(-1) + 1, 0)
        where, k = _D._first_failure(info)
        raise _D.LinAlgError(f"cholesky_inverse{where}: The diagonal element {k} is zero, the inversion could not be "
                             "completed because the input matrix is singular.")


# ----------------------------------------------------------------- householder_product
#
# Q = H_1 ... H_k E (E: the first n columns of the identity), H_i = I - tau_i v_i v_i^H. In LAPACK's compact
# form H_1 ... H_k = I - V T V^H with T upper triangular; T = (I + D N)^-1 D, where D = diag(tau) and N is the
# strict upper triangle of V^H V (T^-1 = D^-1 + N where tau has no zero). Trailing blocks of T give the products
# of trailing reflectors, leading blocks those of leading ones; the gradient below reads all of them from T.


class HouseholderProduct(Function):
    """The first n columns of H_1 ... H_k from geqrf's reflectors (column i of A below the diagonal, with a 1 on
    it) and their scales tau."""

    backward_name = "LinalgHouseholderProductBackward0"

    @staticmethod
    def forward(ctx, A, tau):
        Q = wrap(_D.householder_product_arrays(A._data, tau._data))
        if True in ctx.needs_input_grad:
            ctx.save_for_backward(A, tau)
        return Q

    @staticmethod
    def backward(ctx, grad):
        A, tau = ctx.saved_tensors
        if not tau.shape[-1] or not A.numel():  # no reflectors (Q is constant) or no matrices: as torch, no gradient
            return None, None
        grad_A, grad_tau = _householder_backward(A, tau, grad)
        needs = ctx.needs_input_grad
        return (grad_A if needs[0] else None), (grad_tau if needs[1] else None)

    @staticmethod
    def jvp(ctx, A_tangent, tau_tangent):
        A, tau = ctx.primals
        return _householder_tangent(A, tau, A_tangent, tau_tangent)


def _reflectors(A, k: int):
    """V: the first k columns of A below the diagonal, ones on it, zeros above (what geqrf's vectors are)."""
    m = A.shape[-2]
    below = wrap(np.tril(np.ones((m, k), bool), -1))
    return where(below, A[..., :, :k], wrap(np.eye(m, k, dtype=A._data.dtype)))


def _compact_factor(tau, N):
    """T = (I + D N)^-1 D of the compact form, D = diag(tau), N strictly upper triangular."""
    return _unit_solve(tau[..., :, None] * N, diag_embed(tau), upper=True)


def _householder_backward(A, tau, grad) -> tuple:
    """Q = P_i H_i S_i with P_i = H_1 ... H_(i-1), S_i = H_(i+1) ... H_k E, and dH_i = -(dtau_i v_i v_i^H +
    tau_i dv_i v_i^H + tau_i v_i dv_i^H), so with G_i = P_i^H gQ S_i^H:
        g tau_i = -v_i^H G_i v_i,   g v_i = -conj(tau_i) G_i v_i - tau_i G_i^H v_i.
    Only the vectors a_i = S_i^H v_i and b_i = P_i v_i, and P_i^H (gQ a_i) and S_i (gQ^H b_i), are needed; each
    is one column of a product of V, T and a masked V^H V, so every reflector is handled at once."""
    n, k = A.shape[-1], tau.shape[-1]
    V = _reflectors(A, k)
    V_top = V[..., :n, :]  # E^H V
    overlaps = _adjoint(V) @ V
    N = triu(overlaps, 1)
    T = _compact_factor(tau, N)
    T_H = _adjoint(T)
    b = V - V @ (T @ N)  # b_i = v_i - V_(<i) T_(<i,<i) (V^H v_i)_(<i)
    a = V_top - V_top @ (T_H @ tril(overlaps, -1))  # a_i = E^H (v_i - V_(>i) T^H_(>i,>i) (V^H v_i)_(>i))
    c, d = grad @ a, _adjoint(grad) @ b  # c_i = gQ a_i, d_i = gQ^H b_i
    left = c - V @ triu(T_H @ triu(_adjoint(V) @ c, 1), 1)  # P_i^H c_i
    right = _padded_rows(d, V.shape[-2]) - V @ tril(T @ tril(_adjoint(V_top) @ d, -1), -1)  # S_i E d_i
    grad_V = -(left * conjugated(tau)[..., None, :] + right * tau[..., None, :])
    grad_tau = -(conjugated(b) * c).sum(-2)
    return _below_diagonal(grad_V, n), grad_tau


def _zeros(like, rows: int, columns: int):
    return wrap(np.zeros(like.shape[:-2] + (rows, columns), like._data.dtype))


def _padded_rows(M, m: int):
    """E M: M with zero rows below, to m rows."""
    return _D._joined(M, [M, _zeros(M, m - M.shape[-2], M.shape[-1])], -2)


def _below_diagonal(grad_V, n: int):
    """A's gradient from V's: V's columns padded to n, only below the diagonal (the rest of A is not read)."""
    m, k = grad_V.shape[-2:]
    return tril(_D._joined(grad_V, [grad_V, _zeros(grad_V, m, n - k)], -1), -1)


def _householder_tangent(A, tau, A_tangent, tau_tangent):
    """dQ = -(dV T V_top^H + V dT V_top^H + V T dV_top^H), with dT = M^-1 (dD - (dD N + D dN) T) for
    T = M^-1 D, M = I + D N, and dN the strict upper triangle of dV^H V + V^H dV."""
    n, k = A.shape[-1], tau.shape[-1]
    V = _reflectors(A, k)
    N = triu(_adjoint(V) @ V, 1)
    T = _compact_factor(tau, N)
    dV = _zeros(V, *V.shape[-2:]) if A_tangent is None else tril(A_tangent[..., :, :k], -1)
    d_tau = wrap(np.zeros(tau.shape, tau._data.dtype)) if tau_tangent is None else tau_tangent
    dN = triu(_adjoint(dV) @ V + _adjoint(V) @ dV, 1)
    change = diag_embed(d_tau) - (d_tau[..., :, None] * N + tau[..., :, None] * dN) @ T
    dT = _unit_solve(tau[..., :, None] * N, change, upper=True)
    V_top, dV_top = V[..., :n, :], dV[..., :n, :]
    return -(dV @ (T @ _adjoint(V_top)) + V @ (dT @ _adjoint(V_top)) + (V @ T) @ _adjoint(dV_top))
