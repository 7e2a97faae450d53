"""LDL^T of symmetric matrices with Bunch-Kaufman pivoting, and solving with it, in LAPACK's compact form.

``ldl_factor`` returns ``LD``: L (unit lower triangular, its diagonal implied) below the diagonal, and the
1x1 and 2x2 diagonal blocks of D on and just below it; and ``pivots`` (1-based, int32): at step k, a positive
p means rows and columns k and p of what remains were exchanged and D has a 1x1 block there; -p on both rows
of a 2x2 block means rows k + 1 and p were exchanged. The exchanges of step k touch only rows and columns k
onwards, so ``ldl_solve`` applies them in turn, between the eliminations. This is the form LAPACK's sytrf
gives, and torch's results with it.

>>> import ember
>>> A = ember.tensor([[0., 1., 2.], [1., 0., 3.], [2., 3., 0.]])
>>> LD, pivots = ember.linalg.ldl_factor(A)
>>> pivots
tensor([-3, -3,  3], dtype=ember.int32)
>>> ember.linalg.ldl_solve(LD, pivots, A @ ember.ones(3, 1)).flatten()
tensor([1., 1., 1.])
"""
from __future__ import annotations

import math

import numpy as np

from ember import _dtype, return_types
from ember._ops._support import require_tensor, wrap
from ember._ops.binary import NoDerivative
from ember._ops.decompositions import square_matrices
from ember._ops.out import into_out_of_its_dtype
from ember._tensor import Tensor
from ember.overrides import overridable

linalg_function = overridable("ember.linalg")

_ALPHA = (1.0 + math.sqrt(17.0)) / 8.0  # Bunch and Kaufman's threshold: it bounds the growth of the elements


def _factor_one(a: np.ndarray) -> tuple:
    """Factor one symmetric matrix (its lower triangle is read) in place; return its pivots and info."""
    n = a.shape[0]
    pivots, info, k = np.zeros(n, np.int32), 0, 0
    while k < n:
        step, kp = _choose_pivot(a, k)
        if kp < 0:  # a zero column: D(k) = 0, nothing to eliminate
            info = info or k + 1
            pivots[k], k = k + 1, k + 1
            continue
        _exchange(a, k, k + step - 1, kp, step)
        if step == 1:
            _eliminate_1x1(a, k)
            pivots[k] = kp + 1
        else:
            _eliminate_2x2(a, k)
            pivots[k] = pivots[k + 1] = -(kp + 1)
        k += step
    return pivots, info


def _choose_pivot(a: np.ndarray, k: int) -> tuple:
    """(block size, row to exchange with), or (1, -1) for a column that is all zeros."""
    n = a.shape[0]
    diagonal = abs(a[k, k])
    below = np.abs(a[k + 1:, k])
    imax = k + 1 + int(np.argmax(below)) if below.size else k
    column = below.max() if below.size else 0.0
    if max(diagonal, column) == 0.0 or np.isnan(diagonal):
        return 1, -1
    if diagonal >= _ALPHA * column:
        return 1, k
    row = max(np.abs(a[imax, k:imax]).max(), np.abs(a[imax + 1:n, imax]).max(initial=0.0))
    if diagonal >= _ALPHA * column * (column / row):
        return 1, k
    if abs(a[imax, imax]) >= _ALPHA * row:
        return 1, imax
    return 2, imax


def _exchange(a: np.ndarray, k: int, kk: int, kp: int, step: int) -> None:
    """Swap rows and columns ``kk`` and ``kp`` of the lower triangle of a[k:, k:]."""
    if kp == kk:
        return
    a[kp + 1:, [kk, kp]] = a[kp + 1:, [kp, kk]]
    between = a[kk + 1:kp, kk].copy()
    a[kk + 1:kp, kk] = a[kp, kk + 1:kp]
    a[kp, kk + 1:kp] = between
    a[[kk, kp], [kk, kp]] = a[[kp, kk], [kp, kk]]
    if step == 2:
        a[[k + 1, kp], k] = a[[kp, k + 1], k]


def _eliminate_1x1(a: np.ndarray, k: int) -> None:
    column = a[k + 1:, k].copy()
    a[k + 1:, k + 1:] -= np.outer(column, column) / a[k, k]  # (the upper triangle is not read, and zeroed at the end)
    a[k + 1:, k] = column / a[k, k]


def _eliminate_2x2(a: np.ndarray, k: int) -> None:
    """The columns of L for the 2x2 block D at k: solve D w = (a[j, k], a[j, k + 1]) for each j below it."""
    d21 = a[k + 1, k]
    d11, d22 = a[k + 1, k + 1] / d21, a[k, k] / d21
    scale = 1.0 / (d11 * d22 - 1.0) / d21
    first, second = a[k + 2:, k].copy(), a[k + 2:, k + 1].copy()
    wk = scale * (d11 * first - second)
    wk1 = scale * (d22 * second - first)
    a[k + 2:, k + 2:] -= np.outer(first, wk) + np.outer(second, wk1)
    a[k + 2:, k], a[k + 2:, k + 1] = wk, wk1


def _solve_one(ld: np.ndarray, pivots: np.ndarray, b: np.ndarray) -> np.ndarray:
    """X with A X = B, A's factors in ``ld`` and ``pivots``: L D Y = P B forwards, then L^T X = Y backwards."""
    n, b = ld.shape[0], b.copy()
    k = 0
    while k < n:
        if pivots[k] > 0:
            _swap_rows(b, k, pivots[k] - 1)
            b[k + 1:] -= np.outer(ld[k + 1:, k], b[k])
            b[k] /= ld[k, k]
            k += 1
        else:
            _swap_rows(b, k + 1, -pivots[k] - 1)
            b[k + 2:] -= np.outer(ld[k + 2:, k], b[k]) + np.outer(ld[k + 2:, k + 1], b[k + 1])
            block = np.array([[ld[k, k], ld[k + 1, k]], [ld[k + 1, k], ld[k + 1, k + 1]]])
            b[k:k + 2] = np.linalg.solve(block, b[k:k + 2])
            k += 2
    k = n - 1
    while k >= 0:
        first = k if pivots[k] > 0 else k - 1  # the block's first row
        for row in range(first, k + 1):
            b[row] -= ld[k + 1:, row] @ b[k + 1:]
        _swap_rows(b, k, abs(pivots[k]) - 1)
        k = first - 1
    return b


def _swap_rows(b: np.ndarray, i: int, j: int) -> None:
    if i != j:
        b[[i, j]] = b[[j, i]]


class LdlFactor(NoDerivative):
    """The factors, which torch records without a derivative."""

    backward_name = "NotImplemented"

    @staticmethod
    def forward(ctx, A):
        ctx.aten = "linalg_ldl_factor_ex"
        data = A._data
        ld = np.array(data)  # factored in place
        flat = ld.reshape((math.prod(data.shape[:-2]),) + data.shape[-2:])
        pivots = np.zeros(flat.shape[:2], np.int32)
        info = np.zeros(flat.shape[0], np.int32)
        for i, matrix in enumerate(flat):
            pivots[i], info[i] = _factor_one(matrix)
            matrix[np.triu_indices(matrix.shape[0], 1)] = 0.0
        outputs = (wrap(ld), wrap(pivots.reshape(data.shape[:-1])), wrap(info.reshape(data.shape[:-2])))
        ctx.mark_non_differentiable(*outputs[1:])
        return outputs

    @staticmethod
    def backward(ctx, grad_LD, grad_pivots, grad_info):
        return NoDerivative.backward(ctx, grad_LD)  # (an error: there is no derivative)


class LdlSolve(NoDerivative):
    backward_name = "NotImplemented"

    @staticmethod
    def forward(ctx, LD, pivots, B):
        ctx.aten = "linalg_ldl_solve"
        ld, piv, b = LD._data, pivots._data.astype(np.int64), B._data
        batch = np.broadcast_shapes(ld.shape[:-2], piv.shape[:-1], b.shape[:-2])
        count = math.prod(batch)
        ld = np.broadcast_to(ld, batch + ld.shape[-2:]).reshape((count,) + ld.shape[-2:])
        piv = np.broadcast_to(piv, batch + piv.shape[-1:]).reshape((count,) + piv.shape[-1:])
        b = np.broadcast_to(b, batch + b.shape[-2:]).reshape((count,) + b.shape[-2:])
        solved = [_solve_one(ld[i], piv[i], b[i]) for i in range(b.shape[0])]
        out = np.stack(solved) if solved else np.zeros(b.shape, b.dtype)
        return wrap(out.reshape(batch + b.shape[-2:]).astype(B._data.dtype))


@linalg_function
def ldl_factor_ex(A: Tensor, *, hermitian: bool = False, check_errors: bool = False, out=None):
    """``(LD, pivots, info)``: the compact LDL^T factors of the symmetric ``A`` (its lower triangle is read), and
    per matrix 0, or k when D's k-th diagonal element is an exact zero (an error only with ``check_errors``).

    >>> ember.linalg.ldl_factor_ex(ember.zeros(2, 2)).info
    tensor(1, dtype=ember.int32)
    """
    op = "torch.linalg.ldl_factor_ex"
    A = square_matrices(op, A)
    LD, pivots, info = LdlFactor.apply(A)
    if check_errors:
        _check_info("torch.linalg.ldl_factor_ex", info)
    result = return_types.linalg_ldl_factor_ex(LD, pivots, info)
    return result if out is None else _into_outs(op, result, out)


@linalg_function
def ldl_factor(A: Tensor, *, hermitian: bool = False, out=None):
    """``(LD, pivots)``: the compact LDL^T factors of the symmetric ``A`` (see the module's notes), with
    Bunch-Kaufman pivoting, as LAPACK's sytrf; an error when ``A`` is singular.

    >>> ember.linalg.ldl_factor(ember.tensor([[4., 2.], [2., 3.]])).LD
    tensor([[4.0000, 0.0000],
            [0.5000, 2.0000]])
    """
    op = "torch.linalg.ldl_factor"
    LD, pivots, info = ldl_factor_ex(square_matrices(op, A), hermitian=hermitian)
    _check_info(op, info)
    result = return_types.linalg_ldl_factor(LD, pivots)
    return result if out is None else _into_outs(op, result, out)


def _check_info(op: str, info: Tensor) -> None:
    failed = np.flatnonzero(info._data.reshape(-1))
    if failed.size:
        where = "" if info._data.ndim == 0 else f" (batch element {int(failed[0])})"
        k = int(info._data.reshape(-1)[failed[0]])
        raise RuntimeError(f"{op}: the factorization could not be completed because the input is singular: D's "
                           f"diagonal element {k} is zero{where}; use ldl_factor_ex to get the factors anyway")


def _into_outs(op: str, result: tuple, out) -> tuple:
    if not isinstance(out, (tuple, list)) or len(out) != len(result):
        raise TypeError(f"{op}(): argument 'out' must be a tuple of {len(result)} tensors")
    named_out = return_types.linalg_ldl_factor_ex_out if len(result) == 3 else return_types.linalg_ldl_factor_out
    return named_out(*(into_out_of_its_dtype(op, r, o) for r, o in zip(result, out)))


@linalg_function
def ldl_solve(LD: Tensor, pivots: Tensor, B: Tensor, *, hermitian: bool = False, out=None) -> Tensor:
    """X with A X = B, from ``ldl_factor``'s ``LD`` and ``pivots`` for A (batches broadcast).

    >>> LD, pivots = ember.linalg.ldl_factor(ember.tensor([[4., 2.], [2., 3.]]))
    >>> ember.linalg.ldl_solve(LD, pivots, ember.tensor([[6.], [5.]]))
    tensor([[1.],
            [1.]])
    """
    op = "torch.linalg.ldl_solve"
    LD = square_matrices(op, LD, "LD")
    pivots = require_tensor(pivots, op, 2, "pivots")
    B = require_tensor(B, op, 3, "B")
    _check_solve_operands(op, LD._data, pivots._data, B._data)
    result = LdlSolve.apply(LD, pivots, B)
    return result if out is None else into_out_of_its_dtype(op, result, out, LD, B)


def _check_solve_operands(op: str, ld: np.ndarray, pivots: np.ndarray, b: np.ndarray) -> None:
    if b.ndim < 2:
        raise RuntimeError(f"{op}: The input tensor B must have at least 2 dimensions (got {b.ndim}).")
    if pivots.dtype.kind not in "iu":
        raise RuntimeError(f"{op}: pivots must be integers (as ldl_factor returns them), got "
                           f"{_dtype.scalar_type_name(pivots.dtype)}")
    if pivots.shape[-1:] != ld.shape[-1:]:
        raise RuntimeError(f"{op}: Expected LD.shape[:-1] and pivots.shape to be the same, but got pivots with shape "
                           f"{list(pivots.shape)} instead")
    if b.dtype != ld.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{_dtype.scalar_type_name(b.dtype)} and A of type {_dtype.scalar_type_name(ld.dtype)} "
                           "instead.")
    n = ld.shape[-1]
    if b.shape[-2] != n:
        raise RuntimeError(f"Incompatible matrix sizes for {op}: each A matrix is {n} by {n} but each b matrix is "
                           f"{b.shape[-2]} by {b.shape[-1]}")
