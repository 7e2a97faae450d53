"""Inverses, determinants, solvers and decompositions: the Functions behind ``ember.linalg``.

Each forward runs NumPy's LAPACK routines on the arrays (LU, its solves, triangular solves and Householder QR
call those of NumPy's OpenBLAS that NumPy does not reach, through ``ember._lapack``, and fall back on NumPy
code of the same algorithms where the library is missing); each backward is torch's formula written with
``@``, ``.mT``, indexing and the Functions of this module, so it runs on arrays (first order) or on
tensors (and is then differentiable again). Matrices are the last two dims; leading dims are a batch.

>>> import ember
>>> A = ember.tensor([[4., 1.], [1., 3.]], requires_grad=True)
>>> ember.linalg.det(A).backward(); A.grad
tensor([[ 3., -1.],
        [-1.,  4.]])
"""
from __future__ import annotations

import math

import numpy as np

from ember import _dtype, _lapack
from ember._ops import joining as _joining
from ember._ops._non_finite_eigenvalues import eigenvalues_of_non_finite
from ember._ops._support import require_tensor, wrap
from ember._ops.arithmetic import where
from ember._ops.complex import conjugated
from ember._tensor import Tensor
from ember.autograd.function import Function
from ember._ops._quiet import IGNORE_ALL, quietly


class LinAlgError(RuntimeError):
    """A linear-algebra routine could not compute its result for this input (as ``torch.linalg.LinAlgError``)."""


# ----------------------------------------------------------------- checks


def square_matrices(op: str, A, name: str = "A", square: bool = True, complex_ok: bool = False) -> Tensor:
    """``A``, checked to be (a batch of) floating matrices (complex ones too if ``complex_ok``), square unless
    ``square`` is False."""
    A = require_tensor(A, op, 1, name)
    data = A._data
    if data.ndim < 2:
        raise RuntimeError(f"{op}: The input tensor {name} must have at least 2 dimensions (got {data.ndim}).")
    if _dtype.kind(data.dtype) != "f" and not (complex_ok and data.dtype.kind == "c"):
        if data.dtype.kind == "c":
            raise RuntimeError(f"{op}: ember computes this function for real tensors only, got "
                               f"{_dtype.scalar_type_name(data.dtype)}; pass the real and imaginary parts' "
                               f"problem as a real one instead")
        if op in _KERNEL_TAKES_INTEGERS:  # torch checks no dtype before this op's kernel, which then refuses
            raise NotImplementedError(f"{op}: \"{_LAPACK_KERNELS[op]}\" not implemented for "
                                      f"'{_dtype.scalar_type_name(data.dtype)}'; convert it first, e.g. {name}.double()")
        raise RuntimeError(f"{op}: Expected a floating point or complex tensor as input. Got "
                           f"{_dtype.scalar_type_name(data.dtype)}; convert it first, e.g. {name}.double()")
    if data.dtype in _dtype.LOW and op not in _LOW_PRECISION_OK:
        refuse_low_precision(op, data.dtype, name)
    if square and data.shape[-1] != data.shape[-2]:
        raise RuntimeError(f"{op}: {name} must be batches of square matrices, but they are {data.shape[-2]} by "
                           f"{data.shape[-1]} matrices")
    return A


# The ops whose LAPACK kernel torch dispatches on the dtype, and that kernel's name: for a half or bfloat16
# input torch raises NotImplementedError naming it, where its other linear algebra raises a RuntimeError.
_LAPACK_KERNELS = {
    "linalg.det": "lu_cpu", "linalg.lu_factor": "lu_cpu", "linalg.lu_factor_ex": "lu_cpu", "linalg.lu": "lu_cpu",
    "linalg.solve": "lu_cpu", "linalg.solve_ex": "lu_cpu", "linalg.tensorsolve": "lu_cpu",
    "linalg.lu_solve": "linalg.lu_solve_cpu", "lu_solve": "linalg.lu_solve_cpu",
    "linalg.cholesky": "cholesky_cpu", "linalg.cholesky_ex": "cholesky_cpu", "cholesky": "cholesky_cpu",
    "cholesky_solve": "cholesky_solve_cpu", "cholesky_inverse": "cholesky_inverse_out_cpu",
    "linalg.qr": "geqrf_cpu", "geqrf": "geqrf_cpu", "linalg.householder_product": "orgqr_cpu", "orgqr": "orgqr_cpu",
    "linalg.svd": "linalg_svd_cpu", "svd": "linalg_svd_cpu", "linalg.svdvals": "linalg_svd_cpu",
    "linalg.cond": "linalg_svd_cpu", "linalg.eigh": "linalg_eigh_cpu", "linalg.eigvalsh": "linalg_eigh_cpu",
    "linalg.eig": "linalg_eig_out_cpu", "linalg.eigvals": "linalg_eig_out_cpu",
    "linalg.solve_triangular": "triangular_solve_cpu", "triangular_solve": "triangular_solve_cpu",
    "linalg.ldl_factor": "ldl_factor_kernel_cpu", "linalg.ldl_factor_ex": "ldl_factor_kernel_cpu",
}
_KERNEL_TAKES_INTEGERS = frozenset({
    "cholesky", "linalg.eigh", "linalg.eigvalsh", "linalg.solve_triangular", "triangular_solve", "linalg.lu_factor",
    "linalg.lu_factor_ex", "linalg.lu", "linalg.householder_product", "orgqr"})
_FLOAT_OR_DOUBLE_ONLY = frozenset({"linalg.lstsq", "linalg.matrix_rank"})  # torch's own check, another message
_LOW_PRECISION_OK = frozenset({"linalg.matrix_exp", "lu_unpack"})  # torch computes these in half and bfloat16


def refuse_low_precision(op: str, np_dtype: np.dtype, name: str = "A") -> None:
    """Raise as torch does for a half or bfloat16 input to ``op``, which ember (as torch) computes only in
    single and double precision."""
    type_name = _dtype.scalar_type_name(np_dtype)
    advice = f"convert it first, e.g. {name}.float()"
    kernel = _LAPACK_KERNELS.get(op)
    if kernel is not None:  # (torch computes some of these for empty matrices; ember refuses them all)
        raise NotImplementedError(f"{op}: \"{kernel}\" not implemented for '{type_name}'; {advice}")
    if op in _FLOAT_OR_DOUBLE_ONLY:
        raise RuntimeError(f"{op}: This function doesn't handle types other than float and double (got "
                           f"{type_name}); {advice}")
    if op == "linalg.pinv":
        raise RuntimeError(f"linalg.pinv({type_name}): expected a tensor with 2 or more dimensions of float, double, "
                           f"cfloat or cdouble types; {advice}")
    raise RuntimeError(f"{op}: Low precision dtypes not supported. Got {type_name}; {advice}")


def _same_dtype(op: str, A: Tensor, B: Tensor) -> None:
    if A._data.dtype != B._data.dtype:
        raise RuntimeError(f"{op}: Expected A and B to have the same dtype, but found A of type "
                           f"{_dtype.scalar_type_name(A._data.dtype)} and B of type "
                           f"{_dtype.scalar_type_name(B._data.dtype)} instead; convert one first")


def _first_zero_pivot(matrix: np.ndarray) -> int:
    """The 1-based step at which Gaussian elimination with partial pivoting meets a zero pivot (0: none),
    as LAPACK reports a singular matrix."""
    a = np.array(matrix, dtype=np.result_type(matrix.dtype, np.float64))
    n = a.shape[0]
    for k in range(n):
        pivot = k + int(np.argmax(_pivot_size(a[k:, k])))
        if a[pivot, k] == 0:
            return k + 1
        a[[k, pivot]] = a[[pivot, k]]
        a[k + 1:, k:] -= np.outer(a[k + 1:, k] / a[k, k], a[k, k:])
    return 0


def _with_info(data: np.ndarray, routine, failed) -> tuple:
    """(``routine(data)``, info per matrix): info is 0, or ``failed(matrix)`` (LAPACK's number) for a matrix the
    routine fails on, whose result is then nan. The whole batch runs at once unless some matrix fails."""
    try:
        return routine(data), np.zeros(data.shape[:-2], np.int32)
    except np.linalg.LinAlgError:
        pass
    flat = data.reshape((-1,) + data.shape[-2:])
    info = np.array([failed(matrix) for matrix in flat], np.int32).reshape(data.shape[:-2])
    bad = info > 0
    result = routine(np.where(bad[..., None, None], np.eye(data.shape[-1], dtype=data.dtype), data))
    result[bad] = complex(np.nan, np.nan) if result.dtype.kind == "c" else np.nan  # (nan in both parts, as torch)
    return result, info


def _first_failure(info: np.ndarray) -> tuple:
    """(where, info) of the first failed matrix: where is ": (Batch element i)", i its place in the flattened
    batch ("" for a single matrix), to follow the op's name as in torch's messages."""
    flat = info.reshape(-1)
    index = int(np.flatnonzero(flat)[0])
    return (f": (Batch element {index})" if info.ndim else ""), int(flat[index])


# ----------------------------------------------------------------- helpers for formulas on arrays or tensors


def _data(x) -> np.ndarray:
    """The array of an operand that is an array or a tensor."""
    return x if type(x) is np.ndarray else x._data


def _constant(like, array: np.ndarray):
    """``array`` as the same kind of operand as ``like`` (a NumPy array, or a tensor)."""
    return array if type(like) is np.ndarray else wrap(array)


def _eye(like, n: int):
    """The n x n identity in ``like``'s dtype and kind (array or tensor)."""
    return _constant(like, np.eye(n, dtype=_data(like).dtype))


def _lower(like, n: int, diagonal: float):
    """The n x n lower-triangular mask with ``diagonal`` on its diagonal, like ``like``."""
    return _constant(like, (np.tril(np.ones((n, n)), -1) + diagonal * np.eye(n)).astype(_data(like).dtype))


def inverse_of(x):
    """The inverse of the matrices ``x``: NumPy's for arrays, the ``Inverse`` Function for tensors."""
    return np.linalg.inv(x) if type(x) is np.ndarray else Inverse.apply(x, "linalg.inv")[0]


def inverse_adjoint_of(A):
    """A^-H (arrays or tensors). For a singular matrix, as torch, the LU solve of A^H X = I, whose zero pivot gives
    inf and nan where NumPy's inverse raises: the gradient of log|det A| there is not finite, not an error."""
    if type(A) is not np.ndarray:
        return adjoint_of(inverse_of(A))
    try:
        return adjoint_of(np.linalg.inv(A))
    except np.linalg.LinAlgError:
        flipped = adjoint_of(A)
        LU, pivots, _ = lu_arrays(flipped)
        identity = np.broadcast_to(np.eye(A.shape[-1], dtype=A.dtype), A.shape)
        return quietly(IGNORE_ALL, lu_solve_arrays, LU, pivots, identity, False)


def adjoint_of(x):
    """The conjugate transpose of the matrices ``x`` (arrays or tensors); for real ones the transpose."""
    return conjugated(x).mT


def _diag_embed(v):
    """The vectors ``v`` as diagonal matrices."""
    return v[..., None, :] * _eye(v, v.shape[-1])


def _joined(like, parts: list, dim: int):
    return np.concatenate(parts, dim) if type(like) is np.ndarray else _joining.cat.__wrapped__(parts, dim)


# ----------------------------------------------------------------- inverse, determinants, solve


class Inverse(Function):
    """The inverse of each matrix. A singular one raises an error naming ``checked_as`` (the op called); with
    ``checked_as`` None it gives nan (its info says which)."""

    backward_name = "LinalgInvExBackward0"
    backward_on_arrays = True

    @staticmethod
    def forward(ctx, A, checked_as):
        inverse, info = _with_info(A._data, np.linalg.inv, _first_zero_pivot)
        if checked_as and info.any():
            where, k = _first_failure(info)
            raise LinAlgError(f"{checked_as}{where}: The diagonal element {k} is zero, the inversion could not be "
                              "completed because the input matrix is singular.")
        out, info = wrap(inverse), wrap(info)
        ctx.mark_non_differentiable(info)
        ctx.save_for_backward(out)
        return out, info

    @staticmethod
    def backward(ctx, grad, grad_info):
        inverse, = ctx.saved_tensors
        adjoint = adjoint_of(inverse)
        return -(adjoint @ grad @ adjoint), None


class Determinant(Function):
    """The determinant of each matrix. Its gradient is the conjugate of the transposed adjugate: conj(det(A))
    A^-H for an invertible A, from the SVD for a singular one."""

    backward_name = "LinalgDetBackward0"
    backward_on_arrays = True

    @staticmethod
    def forward(ctx, A):
        out = wrap(np.asarray(quietly(IGNORE_ALL, np.linalg.det, A._data)))
        ctx.save_for_backward(A, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        A, det = ctx.saved_tensors
        return grad[..., None, None] * _conjugate_cofactors(A, det)


def _conjugate_cofactors(A, det):
    """conj(adj(A)^T), on arrays or tensors: conj(det(A)) A^-H where every A is invertible, else (valid for any
    A) U diag(p) Vh conj(det(U) det(Vh)) from A = U diag(s) Vh, with p_i the product of the s_j for j != i."""
    if (det != 0).all():
        return conjugated(det)[..., None, None] * adjoint_of(inverse_of(A))
    arrays = type(A) is np.ndarray
    U, S, Vh = quietly(IGNORE_ALL, np.linalg.svd, A) if arrays else SingularValueDecomposition.apply(A, True)
    n = S.shape[-1]
    eye = np.eye(n, dtype=bool)
    others = S * 0 + 1
    for j in range(n):
        others = others * (np.where if arrays else where)(_constant(S, eye[j]), 1.0, S[..., j:j + 1])
    sign = np.conj(quietly(IGNORE_ALL, np.linalg.det, _data(U)) * quietly(IGNORE_ALL, np.linalg.det, _data(Vh)))  # |1|
    return (U * (others * _constant(S, sign.astype(_data(U).dtype))[..., None])[..., None, :]) @ Vh


class SignLogDeterminant(Function):
    """The sign (det / |det|) and the log of the absolute value of each determinant. The sign of a real matrix
    is piecewise constant: attached to the graph, as torch's, but it passes no gradient; that of a complex one
    has a gradient, through the phase of log det."""

    backward_name = "LinalgSlogdetBackward0"
    backward_on_arrays = True

    @staticmethod
    def forward(ctx, A):
        sign, logabsdet = quietly(IGNORE_ALL, np.linalg.slogdet, A._data)
        sign = wrap(np.asarray(sign))
        ctx.set_materialize_grads(False)  # (an unused output's gradient is None, so a real sign alone gives None)
        ctx.save_for_backward(A, sign)
        return sign, wrap(np.asarray(logabsdet))

    @staticmethod
    def backward(ctx, grad_sign, grad_logabsdet):
        A, sign = ctx.saved_tensors
        # the gradient of log det: log|det| is its real part, the sign's phase its imaginary part
        grad_log = grad_logabsdet
        if _data(sign).dtype.kind == "c" and grad_sign is not None:
            phase = (conjugated(grad_sign) * sign).imag * 1j  # (in this order: a NumPy scalar times 1j stays one)
            grad_log = -phase if grad_log is None else grad_log - phase
        if grad_log is None:  # only a real sign was used: nothing flows back
            return None
        return grad_log[..., None, None] * inverse_adjoint_of(A)

    @staticmethod
    def jvp(ctx, tangent):
        # d log det A = tr(A^-1 dA): its real part is log|det|'s tangent, its imaginary part the sign's phase's
        A, sign = ctx.primals[0], ctx.result[0]
        singular = not _data(sign).all()
        trace = _solved_for_tangent(A, tangent, True, singular).diagonal(0, -2, -1).sum(-1)
        if not A.is_complex():
            return wrap(np.zeros_like(sign._data)), trace
        return (trace.imag * 1j) * sign, trace.real


def _solved_for_tangent(A, rhs, left: bool, singular: bool):
    """A^-1 rhs (``left``) or rhs A^-1, for a tangent: by ember ops where no pivot of A's factors is zero;
    else, as torch, from those factors, whose zero pivot gives inf and nan rather than an error. Only where the
    forward saw a ``singular`` A are the factors looked at (an invertible A costs no second factorization)."""
    if singular:
        factors = _factors_as_torch(A, for_tangent=True)
        if factors[2].any():
            return wrap(_lu_solved(factors, rhs._data, left))
    return Solve.apply(A, rhs, False, None, left)[0]  # (unchecked: LAPACK's singular is solved as torch's too)


def _factors_as_torch(A: Tensor, for_tangent: bool) -> tuple:
    """(LU, pivots, info, adjoint): the LU factors that stand for A in torch's solve (those of A) and in the
    tangents of solve and slogdet (those of A^T for a contiguous real A, then solved as the adjoint)."""
    transpose = for_tangent and A.is_contiguous() and not A.is_complex()
    LU, pivots, info = lu_arrays(A._data.swapaxes(-1, -2) if transpose else A._data)
    return LU, pivots, info, transpose


def _lu_solved(factors: tuple, rhs: np.ndarray, left: bool) -> np.ndarray:
    """A^-1 rhs (``left``) or rhs A^-1 from ``factors`` (of ``_factors_as_torch``), as LAPACK's getrs: a zero
    pivot gives inf and nan."""
    LU, pivots, _, adjoint = factors
    if not left:  # rhs A^-1 = (A^-H rhs^H)^H: the solve with the adjoint taken the other way
        return np.conj(_lu_solved((LU, pivots, None, not adjoint), np.conj(rhs.swapaxes(-1, -2)), True)
                       .swapaxes(-1, -2))
    batch = np.broadcast_shapes(LU.shape[:-2], rhs.shape[:-2])
    LU, pivots = np.broadcast_to(LU, batch + LU.shape[-2:]), np.broadcast_to(pivots, batch + pivots.shape[-1:])
    rhs = np.broadcast_to(rhs, batch + rhs.shape[-2:]).astype(np.result_type(LU, rhs))
    return quietly(IGNORE_ALL, lu_solve_arrays, np.ascontiguousarray(LU), np.ascontiguousarray(pivots),
                   np.ascontiguousarray(rhs), adjoint)


class Solve(Function):
    """X with A X = B (X A = B unless ``left``), for matrices B or vectors B (``vector``); batch dims already
    broadcast. X A = B is solved as A^T X^T = B^T. A singular A raises an error naming ``checked_as`` (the op
    called), unless it is None."""

    backward_name = "LinalgSolveExBackward0"
    backward_on_arrays = True

    @staticmethod
    def forward(ctx, A, B, vector, checked_as, left=True):
        a, right = A._data, (B._data[..., None] if vector else B._data)
        if not left:
            a, right = a.swapaxes(-1, -2), (right if vector else right.swapaxes(-1, -2))
        try:
            solution, info = np.linalg.solve(a, right), np.zeros(a.shape[:-2], np.int32)
        except np.linalg.LinAlgError:  # as torch: the LU solve, whose zero pivot (if any) gives inf and nan
            factors = _factors_as_torch(A, for_tangent=False)
            info = factors[2]
            if checked_as:
                refuse_singular_systems(checked_as, info)
            solution = _lu_solved(factors, right, True) if left else \
                _lu_solved(factors, right.swapaxes(-1, -2), False).swapaxes(-1, -2)
        solution = solution[..., 0] if vector else solution
        out = wrap(solution if left or vector else np.ascontiguousarray(solution.swapaxes(-1, -2)))
        info = wrap(info)
        ctx.mark_non_differentiable(info)
        ctx.save_for_backward(A, out)
        ctx.vector, ctx.left = vector, left
        return out, info

    @staticmethod
    def backward(ctx, grad, grad_info):
        A, X = ctx.saved_tensors
        vector, left = ctx.vector, ctx.left
        if not left:  # the same formulas for A^T X^T = B^T
            A = A.mT
            if not vector:
                X, grad = X.mT, grad.mT
        grad_B = solve_with(adjoint_of(A), grad, vector)
        X = conjugated(X)
        grad_A = -(grad_B[..., :, None] * X[..., None, :]) if vector else -(grad_B @ X.mT)
        if not left:
            grad_A, grad_B = grad_A.mT, (grad_B if vector else grad_B.mT)
        needs = ctx.needs_input_grad
        return (grad_A if needs[0] else None), (grad_B if needs[1] else None), None, None, None

    @staticmethod
    def jvp(ctx, tangent_A, tangent_B, *_):
        # A X = B gives A dX = dB - dA X (X A = B: dX A = dB - X dA)
        (A, _, vector), left = ctx.primals[:3], ctx.primals[4] if len(ctx.primals) > 4 else True
        X = ctx.result[0]
        columns = X[..., None] if vector else X
        if tangent_A is None:  # torch multiplies X by a zero tangent, which an inf or nan of X turns to nan
            product = _zero_tangent_times(columns, left)
        else:
            product = tangent_A @ columns if left else columns @ tangent_A
        change = -product if tangent_B is None else (tangent_B[..., None] if vector else tangent_B) - product
        dX = _solved_for_tangent(A, change, left, singular=not np.isfinite(X._data).all())
        return (dX[..., 0] if vector else dX), None


def _zero_tangent_times(X: Tensor, left: bool) -> Tensor:
    """0 @ X (X @ 0 unless ``left``) in IEEE arithmetic: nan in each column (row) of X that holds an inf or nan,
    0 elsewhere."""
    data = X._data
    unfinished = ~np.isfinite(data).all(-2 if left else -1, keepdims=True)
    return wrap(np.broadcast_to(np.where(unfinished, np.nan, 0.0).astype(data.dtype), data.shape).copy())


def refuse_singular_systems(op: str, info: np.ndarray) -> None:
    if info.any():
        raise LinAlgError(f"{op}{_first_failure(info)[0]}: The solver failed because the input matrix is singular; "
                          "A must be invertible (ember.linalg.lstsq solves singular systems)")


def info_of_own_batch(info: np.ndarray, A: np.ndarray) -> np.ndarray:
    """The info of A's own matrices from that of the batch they were broadcast to with B's: the entries of the
    broadcast dims repeat A's (torch's info, and the batch element its errors name, are A's). A batch broadcast
    to no matrices at all factors A's for it."""
    own = A.shape[:-2]
    if 0 in info.shape:
        return _with_info(A, np.linalg.inv, _first_zero_pivot)[1]
    lead = info.ndim - len(own)
    return np.array(info[(0,) * lead + tuple(slice(0, 1) if n == 1 else slice(None) for n in own)])


def solve_with(A, B, vector: bool):
    """A^-1 B on arrays or tensors (``vector``: B holds vectors). For arrays with a singular A (solve_ex's
    gradient), LAPACK's LU solve, whose zero pivot gives inf and nan, as torch's, where NumPy's solve raises."""
    if type(A) is not np.ndarray:
        return Solve.apply(A, B, vector, "linalg.solve")[0]
    columns = B[..., None] if vector else B
    try:
        solution = np.linalg.solve(A, columns)
    except np.linalg.LinAlgError:  # as torch's backward: the adjoint solve with the factors of A^H
        LU, pivots, _ = lu_arrays(adjoint_of(A))
        solution = quietly(IGNORE_ALL, lu_solve_arrays, LU, pivots, np.broadcast_to(columns, np.broadcast_shapes(
            A.shape[:-2], columns.shape[:-2]) + columns.shape[-2:]), True)
    return solution[..., 0] if vector else solution


def solve_arguments(op: str, A, B, left: bool) -> tuple:
    """(A, B, vector): checked, with batch dims broadcast, and whether B holds vectors (torch's rule)."""
    A = square_matrices(op, A, complex_ok=True)
    B = require_tensor(B, op, 2, "B")
    _same_dtype(op, A, B)
    a, b = A._data.shape, B._data.shape
    if not b:
        raise RuntimeError(f"{op}: The input tensor B must have at least 2 dimensions (a 0-d B is neither a vector "
                           "nor a matrix)")
    vector = B._data.ndim == 1 or (B._data.ndim == A._data.ndim - 1 and b == a[:-1])
    matrix = (b[-1], 1) if vector else b[-2:]  # (a vector is read as a column, which X A = B takes only for n = 1)
    if (matrix[0] if left else matrix[-1]) != a[-1]:
        raise RuntimeError(f"{op}: Incompatible shapes of A and B for the equation {'AX' if left else 'XA'} = B "
                           f"({a[-2]}x{a[-1]} and {'x'.join(map(str, matrix))})")
    own = b[:-1] if vector else b[:-2]
    try:
        batch = np.broadcast_shapes(a[:-2], own)
    except ValueError:
        raise RuntimeError(f"{op}: the batch dims of A {list(a[:-2])} and B {list(own)} do not broadcast") from None
    if a[:-2] != batch:
        A = A.expand(*batch, *a[-2:])
    if own != batch:
        B = B.expand(*batch, *b[len(own):])
    return A, B, vector


class TriangularSolve(Function):
    """X with A X = B (X A = B unless ``left``) for triangular A: only its ``upper`` (else lower) triangle is
    read, and with ``unit`` its diagonal is taken as ones."""

    backward_name = "LinalgSolveTriangularBackward0"
    backward_on_arrays = True

    @staticmethod
    def forward(ctx, A, B, upper, left, unit):
        if left:
            solution = triangular_solve_arrays(A._data, B._data, upper, unit)
        else:  # X A = B is A^T X^T = B^T, whose triangle is the other one
            solution = triangular_solve_arrays(A._data.swapaxes(-1, -2), B._data.swapaxes(-1, -2), not upper, unit)
        out = wrap(solution if left else np.ascontiguousarray(solution.swapaxes(-1, -2)))
        ctx.save_for_backward(A, out)
        ctx.flags = upper, left, unit
        return out

    @staticmethod
    def backward(ctx, grad):
        A, X = ctx.saved_tensors
        upper, left, unit = ctx.flags
        if not left:  # the same formulas for A^T X^T = B^T, whose triangle is the other one
            A, X, grad, upper = A.mT, X.mT, grad.mT, not upper
        grad_B = triangular_solve_with(adjoint_of(A), grad, not upper, unit)
        grad_A = -(grad_B @ adjoint_of(X)) * _mask(grad_B, A.shape[-1], upper, unit)
        if not left:
            grad_A, grad_B = grad_A.mT, grad_B.mT
        needs = ctx.needs_input_grad
        return (grad_A if needs[0] else None), (grad_B if needs[1] else None), None, None, None


def _triangle(data: np.ndarray, upper: bool, unit: bool) -> np.ndarray:
    """The triangle of the matrices that a triangular solve reads (ones on the diagonal if ``unit``)."""
    n = data.shape[-1]
    kept = np.triu(np.ones((n, n), bool), 1 if unit else 0)
    kept = kept if upper else kept.T
    return np.where(kept, data, np.eye(n, dtype=data.dtype) if unit else 0).astype(data.dtype)


def _mask(like, n: int, upper: bool, unit: bool):
    """1 where a triangular solve reads A (its gradient lives there), 0 elsewhere."""
    kept = np.triu(np.ones((n, n)), 1 if unit else 0)
    return _constant(like, (kept if upper else kept.T).astype(_data(like).dtype))


def triangular_solve_with(A, B, upper: bool, unit: bool):
    """A^-1 B for triangular A, on arrays or tensors."""
    if type(A) is np.ndarray:
        return triangular_solve_arrays(A, B, upper, unit)
    return TriangularSolve.apply(A, B, upper, True, unit)


# ----------------------------------------------------------------- LU


def lu_arrays(data: np.ndarray) -> tuple:
    """(LU, pivots, info) of each matrix, as LAPACK's getrf: partial pivoting (the largest entry of the column),
    L (unit diagonal, not stored) and U packed in one matrix, 1-based int32 pivots, info the first zero pivot.
    LAPACK's own getrf where NumPy brings it, else the same algorithm on NumPy (``_lu_by_numpy``)."""
    if _lapack.available("getrf", data.dtype) and _finite(data) \
            and not _many_tiny(_LU_MATRICES_PER_COLUMN, min(data.shape[-2:]), data):
        LU, pivots, info = _lapack.getrf(_widened(data))
        return LU.astype(data.dtype, copy=False), pivots, info
    return _lu_by_numpy(data)


def _widened(data: np.ndarray) -> np.ndarray:
    """Single precision as double, for the LU routines and trsm of OpenBLAS: in single precision they err by
    up to twice as much as torch's (on [512, 512], |P L U - A| 36 to 40 units of float32's epsilon against 28 to
    31, trsm's and getrs's solutions 3.4 to 5.3 against 1.6 to 2.0); computed in double and rounded, less
    than torch's, for 1.3 to 2 times single precision's time."""
    return data.astype(np.promote_types(data.dtype, np.float64)) if data.dtype.char in "fF" else data


def _finite(data: np.ndarray) -> bool:
    """Whether ``data`` holds no inf or nan (or, rarely, sums to an overflow): OpenBLAS's routines rank and pass
    on infinities and nan otherwise than torch's LAPACK, whose results the NumPy paths give."""
    with np.errstate(all="ignore"):
        return bool(np.isfinite(data.sum()))


# LAPACK is called once per matrix (getrf about 0.8 us each, getrs 1.2, trsm 1.6), the NumPy paths work on the
# whole stack at once, one column or row at a time (some 25 us each): for stacks of more than this many
# matrices per column (of A, in LU; per row of the triangles, in a solve), NumPy's paths cost less.
_LU_MATRICES_PER_COLUMN = 32
_LU_SOLVE_MATRICES_PER_ROW = 8
_TRIANGULAR_MATRICES_PER_ROW = 4
_GEQRF_MATRICES_PER_COLUMN = 16
_ORGQR_MATRICES_PER_COLUMN = 8


def _many_tiny(per_column: int, size: int, *operands: np.ndarray) -> bool:
    """Whether the stack of matrices that ``operands`` broadcast to holds more than ``per_column`` of them per
    column (or row) of ``size``."""
    return max(math.prod(a.shape[:-2]) for a in operands) > per_column * size


def _lu_by_numpy(data: np.ndarray) -> tuple:
    shape = data.shape
    (m, n), k = shape[-2:], min(shape[-2:])
    a = np.array(data.reshape((math.prod(shape[:-2]), m, n)), copy=True)
    pivots = np.zeros((len(a), k), np.int32)
    info = np.zeros(len(a), np.int32)
    _factor_panel(a, pivots, info, 0)
    return a.reshape(shape), pivots.reshape(shape[:-2] + (k,)), info.reshape(shape[:-2])


# Panels this narrow are factored column by column: below it, a matrix product costs more calls than it saves.
_LU_LEAF_COLUMNS = 32


def _factor_panel(a: np.ndarray, pivots: np.ndarray, info: np.ndarray, start: int) -> np.ndarray:
    """Factors the stack of panels ``a`` (b x m x n) in place, as LAPACK's recursive getrf2: the left half of the
    columns, the top right block by a unit-lower triangular solve, the Schur complement by one matrix product,
    then its own factors. Writes the pivots of this panel's columns (1-based, counted from row ``start`` of the
    whole matrix) into ``pivots`` and the first zero pivot into ``info``; returns the rows' new order (b x m)."""
    m, n = a.shape[-2:]
    if n <= _LU_LEAF_COLUMNS or m <= 1:
        return _factor_columns(a, pivots, info, start)
    half = min(n // 2, m)
    order = _factor_panel(a[:, :, :half], pivots[:, :half], info, start)
    a[:, :, half:] = np.take_along_axis(a[:, :, half:], order[:, :, None], 1)
    top, bottom = a[:, :half, half:], a[:, half:, half:]
    top[...] = unit_lower_solve(a[:, :half, :half], top)
    bottom -= a[:, half:, :half] @ top
    if half == m:
        return order
    order_below = _factor_panel(bottom, pivots[:, half:], info, start + half)
    pivots[:, half:] += half
    a[:, half:, :half] = np.take_along_axis(a[:, half:, :half], order_below[:, :, None], 1)
    return np.concatenate([order[:, :half], np.take_along_axis(order[:, half:], order_below, 1)], 1)


def _factor_columns(a: np.ndarray, pivots: np.ndarray, info: np.ndarray, start: int) -> np.ndarray:
    """Right-looking elimination one column at a time (getf2), for a narrow panel; see ``_factor_panel``."""
    count, m, n = a.shape
    if count == 1:
        return _factor_columns_of_one(a[0], pivots[0], info, start)[None]
    order = np.tile(np.arange(m), (count, 1))
    matrices = np.arange(count)
    with np.errstate(all="ignore"):  # a tiny pivot may overflow its column, as in LAPACK
        for j in range(min(m, n)):
            chosen = j + _pivot_size(a[:, j:, j]).argmax(1)
            pivots[:, j] = chosen + 1
            a[matrices, j], a[matrices, chosen] = a[matrices, chosen], a[:, j].copy()
            order[matrices, j], order[matrices, chosen] = order[matrices, chosen], order[:, j].copy()
            pivot = a[:, j, j]
            zero = pivot == 0
            if zero.any():  # no elimination below a zero pivot: its column of L stays 0, as LAPACK leaves it
                info[(info == 0) & zero] = start + j + 1
                a[zero, j + 1:, j] = 0
                pivot = np.where(zero, 1, pivot)
            a[:, j + 1:, j] /= pivot[:, None]
            a[:, j + 1:, j + 1:] -= a[:, j + 1:, j, None] * a[:, j, None, j + 1:]
    return order


def _factor_columns_of_one(matrix: np.ndarray, pivots: np.ndarray, info: np.ndarray, start: int) -> np.ndarray:
    """``_factor_columns`` of a single matrix, on 2-D slices and scalars: half the cost of the stacked form."""
    m, n = matrix.shape
    order = np.arange(m)
    with np.errstate(all="ignore"):
        for j in range(min(m, n)):
            p = j + int(_pivot_size(matrix[j:, j]).argmax())
            pivots[j] = p + 1
            if p != j:
                row = matrix[j].copy()
                matrix[j], matrix[p] = matrix[p], row
                order[j], order[p] = order[p], order[j]
            pivot = matrix[j, j]
            if pivot == 0:
                info[0] = info[0] or start + j + 1
                matrix[j + 1:, j] = 0
                continue
            matrix[j + 1:, j] /= pivot
            matrix[j + 1:, j + 1:] -= np.multiply.outer(matrix[j + 1:, j], matrix[j, j + 1:])
    return order


# Triangles this small are solved whole by LAPACK (their partial pivoting keeps to the diagonal of a triangle).
_TRIANGLE_LEAF = 32


def unit_lower_solve(L: np.ndarray, B: np.ndarray) -> np.ndarray:
    """L^-1 B for unit lower triangular L (only its strict lower triangle is read)."""
    return triangular_solve_arrays(L, B, upper=False, unit=True)


def triangular_solve_arrays(T: np.ndarray, B: np.ndarray, upper: bool, unit: bool) -> np.ndarray:
    """T^-1 B for triangular T (its ``upper`` or lower triangle, with ones on the diagonal if ``unit``), by
    recursive halving as a BLAS trsm: one half of the rows, then the other after one matrix product (or by
    BLAS's own trsm, where NumPy brings it). A zero on the diagonal gives inf or nan, as trsm does, rather than
    an error."""
    if _lapack.available("trsm", T.dtype) and T.dtype == B.dtype and _finite(T) and _finite(B) \
            and not _many_tiny(_TRIANGULAR_MATRICES_PER_ROW, T.shape[-1], T, B):
        return _lapack.trsm(_widened(T), _widened(B), upper, unit).astype(T.dtype, copy=False)
    batch = np.broadcast_shapes(T.shape[:-2], B.shape[:-2])
    B = np.broadcast_to(B, batch + B.shape[-2:])
    with np.errstate(all="ignore"):
        return _triangular_halves(T, B, upper, unit)


def _triangular_halves(T: np.ndarray, B: np.ndarray, upper: bool, unit: bool) -> np.ndarray:
    n = T.shape[-1]
    if n <= _TRIANGLE_LEAF:
        return _small_triangular_solve(T, B, upper, unit)
    half = n // 2
    if upper:
        below = _triangular_halves(T[..., half:, half:], B[..., half:, :], upper, unit)
        top = _triangular_halves(T[..., :half, :half], B[..., :half, :] - T[..., :half, half:] @ below, upper, unit)
    else:
        top = _triangular_halves(T[..., :half, :half], B[..., :half, :], upper, unit)
        below = _triangular_halves(T[..., half:, half:], B[..., half:, :] - T[..., half:, :half] @ top, upper, unit)
    return np.concatenate([top, below], -2)


def _small_triangular_solve(T: np.ndarray, B: np.ndarray, upper: bool, unit: bool) -> np.ndarray:
    """One small triangle's solve: LAPACK's whole, or substitution row by row where a zero diagonal makes
    LAPACK refuse or an infinity or nan would spread over every column (trsm keeps the columns apart)."""
    triangle = _triangle(T, upper, unit)
    if triangle.shape[:-2] != B.shape[:-2]:
        triangle = np.broadcast_to(triangle, B.shape[:-2] + triangle.shape[-2:])
    solution = solved_whole(triangle, B)
    return _substitution(triangle, B, upper) if solution is None else solution


def _substitution(triangle: np.ndarray, B: np.ndarray, upper: bool) -> np.ndarray:
    n = triangle.shape[-1]
    X = np.array(B, copy=True)
    for i in (reversed(range(n)) if upper else range(n)):
        known = slice(i + 1, n) if upper else slice(0, i)
        X[..., i, :] -= (triangle[..., i, None, known] @ X[..., known, :])[..., 0, :]
        X[..., i, :] /= triangle[..., i, i, None]
    return X


def solved_whole(A: np.ndarray, B: np.ndarray) -> np.ndarray | None:
    """A^-1 B by LAPACK, or None where it refuses (a singular A) or where an infinity or nan would spread over
    every column."""
    if not (np.isfinite(A).all() and np.isfinite(B).all()):
        return None
    try:
        return np.linalg.solve(A, B)
    except np.linalg.LinAlgError:
        return None


def row_order(pivots: np.ndarray, m: int) -> np.ndarray:
    """The rows of A in the order of L U (A[order] = L U, so P[order[i], i] = 1), from LAPACK's pivots (row j
    was swapped with row pivots[j] - 1, in order)."""
    flat = pivots.reshape((math.prod(pivots.shape[:-1]), pivots.shape[-1])).astype(np.intp) - 1
    if len(flat) <= _SWAPS_IN_PYTHON:
        order = [_swapped(list(range(m)), row) for row in flat.tolist()]
        return np.array(order, np.intp).reshape(pivots.shape[:-1] + (m,))
    order = np.tile(np.arange(m), (len(flat), 1))
    matrices = np.arange(len(flat))
    for j in range(flat.shape[-1]):
        p = flat[:, j]
        order[matrices, j], order[matrices, p] = order[matrices, p], order[:, j].copy()
    return order.reshape(pivots.shape[:-1] + (m,))


# Up to this many matrices, swapping Python ints one matrix at a time costs less than one NumPy call per pivot.
_SWAPS_IN_PYTHON = 32


def _swapped(order: list, pivots: list) -> list:
    for j, p in enumerate(pivots):
        order[j], order[p] = order[p], order[j]
    return order


def _pivot_size(column: np.ndarray) -> np.ndarray:
    """How LAPACK ranks the candidate pivots: |x|, and |re| + |im| for complex x (its cheaper measure, which
    picks other pivots than the modulus would)."""
    return np.abs(column.real) + np.abs(column.imag) if column.dtype.kind == "c" else np.abs(column)


def permutation_of(pivots: np.ndarray, m: int, dtype) -> np.ndarray:
    """P with A = P L U, from LAPACK's pivots."""
    order = row_order(pivots, m)
    P = np.zeros(order.shape + (m,), dtype)
    np.put_along_axis(P, order[..., None, :], 1, -2)
    return P


def lu_solve_arrays(LU: np.ndarray, pivots: np.ndarray, B: np.ndarray, adjoint: bool) -> np.ndarray:
    """A^-1 B (A^-H B if ``adjoint``) from A's packed factors, as LAPACK's getrs: B's rows in the order of the
    factors, then the two triangular solves (for A^H = U^H L^H P^T, the two adjoint solves, then the rows put
    back). LAPACK's own getrs where NumPy brings it."""
    n = LU.shape[-1]
    if _lapack.available("getrs", LU.dtype) and LU.dtype == B.dtype and _finite(LU) and _finite(B) \
            and not _many_tiny(_LU_SOLVE_MATRICES_PER_ROW, n, LU, B) \
            and (pivots.size == 0 or (pivots.min() >= 1 and pivots.max() <= n)):
        return _lapack.getrs(_widened(LU), pivots, _widened(B), adjoint).astype(LU.dtype, copy=False)
    if LU.shape[-1] <= _TRIANGLE_LEAF:  # one LAPACK solve of P L U costs less than two of the triangles
        P, (L, U) = permutation_of(pivots, LU.shape[-1], LU.dtype), unpacked(LU, LU.shape[-1])
        A = P @ L @ U
        solution = solved_whole(np.conj(A.swapaxes(-1, -2)) if adjoint else A, B)
        if solution is not None:
            return solution
    batch = np.broadcast_shapes(LU.shape[:-2], B.shape[:-2])
    order = np.broadcast_to(row_order(pivots, LU.shape[-1])[..., None], batch + (LU.shape[-1], 1))
    B = np.broadcast_to(B, batch + B.shape[-2:])
    if not adjoint:
        permuted = np.take_along_axis(B, order, -2)
        return triangular_solve_arrays(LU, unit_lower_solve(LU, permuted), upper=True, unit=False)
    LU_H = np.conj(LU.swapaxes(-1, -2))
    solved = triangular_solve_arrays(LU_H, triangular_solve_arrays(LU_H, B, upper=False, unit=False),
                                     upper=True, unit=True)
    X = np.empty_like(solved)
    np.put_along_axis(X, order, solved, -2)
    return X


def unpacked(LU, k: int):
    """(L, U) from the packed factors (arrays or tensors): L m x k with ones on its diagonal, U k x n."""
    m, n = LU.shape[-2:]
    select = np.where if type(LU) is np.ndarray else where  # not a product with a mask: 0 * nan would be nan
    L = select(_constant(LU, np.tril(np.ones((m, k), bool), -1)), LU[..., :, :k], _eye_rect(LU, m, k))
    U = select(_constant(LU, np.triu(np.ones((k, n), bool))), LU[..., :k, :], _constant(LU, np.zeros((), _data(LU).dtype)))
    return L, U


def _eye_rect(like, m: int, k: int):
    return _constant(like, np.eye(m, k, dtype=_data(like).dtype))


class LUFactor(Function):
    """The packed LU factors (and pivots, info) of each matrix."""

    backward_name = "LinalgLuFactorExBackward0"
    backward_on_arrays = True

    @staticmethod
    def forward(ctx, A):
        LU, pivots, info = lu_arrays(A._data)
        LU, pivots, info = wrap(LU), wrap(pivots), wrap(info)
        ctx.mark_non_differentiable(pivots, info)
        ctx.save_for_backward(LU)
        ctx.pivots = pivots._data
        return LU, pivots, info

    @staticmethod
    def backward(ctx, grad, grad_pivots, grad_info):
        LU, = ctx.saved_tensors
        m, n = LU.shape[-2:]
        k = min(m, n)
        L, U = unpacked(LU, k)
        grad_L, grad_U = unpacked(grad, k)  # the parts of the packed gradient that belong to L and to U
        grad_L = grad_L - _eye_rect(grad, m, k)
        P = _constant(LU, permutation_of(ctx.pivots, m, _data(LU).dtype))
        if m == n:
            return P @ lu_backward(L, U, grad_L, grad_U)
        if m > n:  # tall: the rows below, L2 = A2 U^-1, also depend on U
            below = adjoint_of(triangular_solve_with(U, adjoint_of(grad_L[..., n:, :]), True, False))  # gL2 U^-H
            grad_U = grad_U - adjoint_of(L[..., n:, :]) @ below
            top = lu_backward(L[..., :n, :], U, grad_L[..., :n, :], grad_U)
            return P @ _joined(top, [top, below], -2)
        right = triangular_solve_with(adjoint_of(L), grad_U[..., :, m:], True, True)  # wide: U2 = L^-1 A2: L^-H gU2
        grad_L = grad_L - right @ adjoint_of(U[..., :, m:])
        left = lu_backward(L, U[..., :, :m], grad_L, grad_U[..., :, :m])
        return P @ _joined(left, [left, right], -1)


def lu_backward(L, U, grad_L, grad_U):
    """The gradient of A' = L U (square; A = P A'): L^-H (tril(L^H gL, -1) + triu(gU U^H)) U^-H."""
    n = L.shape[-1]
    inner = (adjoint_of(L) @ grad_L) * _lower(L, n, 0.0) + (grad_U @ adjoint_of(U)) * _lower(L, n, 1.0).mT
    left = triangular_solve_with(adjoint_of(L), inner, True, True)
    return adjoint_of(triangular_solve_with(U, adjoint_of(left), True, False))


# ----------------------------------------------------------------- LAPACK's compact QR (geqrf)


def householder_arrays(data: np.ndarray) -> tuple:
    """(a, tau) as LAPACK's geqrf: R on and above the diagonal, the reflectors' vectors below it (their leading
    1 not stored), and the reflectors' scales tau. Panels of columns are reduced one column at a time; the
    columns right of a panel take its reflectors at once, as the block I - V T V^H (its adjoint), by three
    matrix products. LAPACK's own geqrf where NumPy brings it."""
    if _lapack.available("geqrf", data.dtype) and _finite(data) \
            and not _many_tiny(_GEQRF_MATRICES_PER_COLUMN, min(data.shape[-2:]), data):
        return _lapack.geqrf(data)
    (m, n), k = data.shape[-2:], min(data.shape[-2:])
    a = np.array(data, copy=True)
    tau = np.zeros(data.shape[:-2] + (k,), data.dtype)
    for start in range(0, k, _REFLECTOR_BLOCK):
        stop = min(start + _REFLECTOR_BLOCK, k)
        _reduce_panel(a[..., start:, start:stop], tau[..., start:stop])
        if stop < n:
            V = _unit_lower(a[..., start:, start:stop])
            T_H = np.conj(_block_reflector_factor(V, tau[..., start:stop]).swapaxes(-1, -2))
            trailing = a[..., start:, stop:]
            trailing -= V @ (T_H @ (np.conj(V.swapaxes(-1, -2)) @ trailing))
    return a, tau


def _unit_lower(panel: np.ndarray) -> np.ndarray:
    """The reflectors' vectors of a reduced panel: its strict lower triangle, ones on the diagonal."""
    rows, columns = panel.shape[-2:]
    return np.where(np.tril(np.ones((rows, columns), bool), -1), panel, np.eye(rows, columns, dtype=panel.dtype))


def _reduce_panel(a: np.ndarray, tau: np.ndarray) -> None:
    """geqr2 on a panel, in place: for each column the reflector H = I - tau v v^H that maps it onto beta e_1
    (beta real), with beta = -sign(Re alpha) |x| (alpha the column's first entry), so that no cancellation
    occurs; H^H is applied to the panel's columns on its right."""
    k = min(a.shape[-2:])
    for j in range(k):
        alpha, rest = a[..., j, j], a[..., j + 1:, j]
        norm = np.sqrt(np.sum((rest * np.conj(rest)).real, -1))
        # a column already of the form (real alpha, 0, ..., 0) needs no reflector: tau = 0
        reflect = (norm != 0) | (alpha.imag != 0)
        beta = np.where(reflect, -np.copysign(np.hypot(np.abs(alpha), norm), alpha.real), alpha)
        with np.errstate(all="ignore"):
            tau[..., j] = np.where(reflect, (beta - alpha) / beta, 0)
            a[..., j + 1:, j] = np.where(reflect[..., None], rest / (alpha - beta)[..., None], rest)
        a[..., j, j] = beta
        v = np.concatenate([np.ones(a.shape[:-2] + (1,), a.dtype), a[..., j + 1:, j]], -1)
        trailing = a[..., j:, j + 1:]
        scale = np.conj(tau[..., j, None, None])
        a[..., j:, j + 1:] = trailing - scale * v[..., :, None] * (np.conj(v)[..., None, :] @ trailing)


# Reflectors applied together as one block I - V T V^H (LAPACK's compact WY form), as orgqr does.
_REFLECTOR_BLOCK = 32


def householder_product_arrays(A: np.ndarray, tau: np.ndarray) -> np.ndarray:
    """The first n columns of H_1 ... H_k from geqrf's reflectors (column i of A below the diagonal, a 1 on it)
    and scales, as LAPACK's orgqr: blocks of reflectors from the last, each applied by three matrix products.
    LAPACK's own orgqr (ungqr) where NumPy brings it."""
    (m, n), k = A.shape[-2:], tau.shape[-1]
    if _lapack.available("orgqr", A.dtype) and A.dtype == tau.dtype and m >= n >= k and _finite(A) \
            and _finite(tau) and not _many_tiny(_ORGQR_MATRICES_PER_COLUMN, n, A, tau[..., None, :]):
        return _lapack.orgqr(A, tau)
    batch = np.broadcast_shapes(A.shape[:-2], tau.shape[:-1])
    vectors = np.where(np.tril(np.ones((m, n), bool), -1), A, np.eye(m, n, dtype=A.dtype))
    vectors = np.broadcast_to(vectors, batch + (m, n))
    tau = np.broadcast_to(tau, batch + (k,))
    Q = np.array(np.broadcast_to(np.eye(m, n, dtype=A.dtype), batch + (m, n)))
    for start in reversed(range(0, k, _REFLECTOR_BLOCK)):
        stop = min(start + _REFLECTOR_BLOCK, k)
        V = vectors[..., start:, start:stop]  # zero above row ``start``: only those rows of Q change
        T = _block_reflector_factor(V, tau[..., start:stop])
        V_H = np.conj(V.swapaxes(-1, -2))
        Q[..., start:, :] -= V @ (T @ (V_H @ Q[..., start:, :]))
    return Q


def _block_reflector_factor(V: np.ndarray, tau: np.ndarray) -> np.ndarray:
    """The upper triangular T with H_1 ... H_b = I - V T V^H (LAPACK's larft, forward and columnwise)."""
    b = V.shape[-1]
    overlaps = np.conj(V.swapaxes(-1, -2)) @ V  # v_j^H v_i
    T = np.zeros(V.shape[:-2] + (b, b), V.dtype)
    for i in range(b):
        T[..., i, i] = tau[..., i]
        if i:
            T[..., :i, i] = -tau[..., i, None] * (T[..., :i, :i] @ overlaps[..., :i, i, None])[..., 0]
    return T


class HouseholderQR(Function):
    """torch.geqrf: (a, tau) of LAPACK's Householder QR. No gradient, as in torch."""

    backward_name = "GeqrfBackward0"

    @staticmethod
    def forward(ctx, A):
        return tuple(wrap(x) for x in householder_arrays(A._data))

    @staticmethod
    def backward(ctx, grad_a, grad_tau):
        raise NotImplementedError("geqrf: the derivative for 'geqrf' is not implemented (as in torch); "
                                  "differentiate linalg.qr instead")


# ----------------------------------------------------------------- Cholesky


def _leading_failure(matrix: np.ndarray) -> int:
    """The order of the first leading minor that is not positive-definite (LAPACK's info)."""
    for k in range(1, len(matrix) + 1):
        try:
            np.linalg.cholesky(matrix[:k, :k])
        except np.linalg.LinAlgError:
            return k
    return 0


def _fail_on_nan_pivots(factor: np.ndarray, info: np.ndarray) -> None:
    """A nan input makes NumPy's factor nan where LAPACK stops (its pivot test fails on nan): record the first
    nan pivot in ``info`` and make that matrix's factor nan, as for any other failure (in place)."""
    nan_pivots = np.isnan(np.diagonal(factor, axis1=-2, axis2=-1))
    failed = nan_pivots.any(-1) & (info == 0)
    if failed.any():
        info[failed] = (np.argmax(nan_pivots, -1) + 1)[failed]
        factor[failed] = np.nan


class Cholesky(Function):
    """L (lower, with L L^T = A) of each symmetric positive-definite matrix, or U = L^T if ``upper``. Another
    matrix raises an error naming ``checked_as`` (the op called), unless it is None. As LAPACK's potrf, L reads
    A's lower triangle and U its upper one: U is the adjoint of the L of A^H."""

    backward_name = "LinalgCholeskyExBackward0"
    backward_on_arrays = True

    @staticmethod
    def forward(ctx, A, upper, checked_as):
        data = np.conj(A._data).swapaxes(-1, -2) if upper else A._data
        factor, info = _with_info(data, np.linalg.cholesky, _leading_failure)
        _fail_on_nan_pivots(factor, info)
        if checked_as and info.any():
            where, k = _first_failure(info)
            raise LinAlgError(f"{checked_as}{where}: The factorization could not be completed because the input "
                              f"is not positive-definite (the leading minor of order {k} is not positive-definite).")
        out, info = wrap(np.ascontiguousarray(np.conj(factor).swapaxes(-1, -2)) if upper else factor), wrap(info)
        ctx.mark_non_differentiable(info)
        ctx.save_for_backward(out)
        ctx.upper = upper
        return out, info

    @staticmethod
    def backward(ctx, grad, grad_info):
        L, = ctx.saved_tensors
        if ctx.upper:  # U = L^H
            L, grad = adjoint_of(L), adjoint_of(grad)
        # L^-H M L^-1 with M = (X + tril(X, -1)^H) / 2, X = tril(L^H gL): Hermitian but for the imaginary part of
        # its diagonal, as torch's (a real M is symmetric)
        n = L.shape[-1]
        inverse = inverse_of(L)
        X = (adjoint_of(L) @ grad) * _lower(grad, n, 1.0)
        middle = (X + adjoint_of(X * _lower(grad, n, 0.0))) * 0.5
        return adjoint_of(inverse) @ middle @ inverse, None, None

    @staticmethod
    def jvp(ctx, tangent, *_):
        # A = L L^H gives L^-1 dA L^-H = S + S^H for the lower-triangular S = L^-1 dL: S is that matrix's lower
        # triangle with half its diagonal, for any dA (torch's tangent; the backward's transpose would make dA
        # Hermitian first, which changes it where dA is not)
        factor = ctx.result[0]
        L = adjoint_of(factor) if ctx.primals[1] else factor
        n = L.shape[-1]
        left = triangular_solve_with(L, tangent, upper=False, unit=False)
        both_sides = adjoint_of(triangular_solve_with(L, adjoint_of(left), upper=False, unit=False))
        dL = L @ (both_sides * _lower(both_sides, n, 0.5))
        return (adjoint_of(dL) if ctx.primals[1] else dL), None


class CholeskyOld(Cholesky):
    """``ember.cholesky``: the same factor, under torch's older name."""

    backward_name = "CholeskyBackward0"
    torch_saved_tensors = {"result": 0}
    torch_saved_values = {"upper": "upper"}


# ----------------------------------------------------------------- QR


_QR_MODES = ("reduced", "complete", "r")


# NumPy's qr loops over a stack in C, at a few microseconds a matrix where geqrf and orgqr by ctypes cost tens:
# it is the faster below this many columns (or rows), even computing single precision in double.
_QR_BY_LAPACK_FROM = 96


def qr_arrays(data: np.ndarray, mode: str) -> tuple:
    """(Q, R) of each matrix, Q empty for ``mode`` 'r': from LAPACK's geqrf and orgqr where NumPy brings them
    (in the input's precision, as torch: NumPy's qr computes single precision in double), else NumPy's qr."""
    (m, n), k = data.shape[-2:], min(data.shape[-2:])
    if k < _QR_BY_LAPACK_FROM or not (_lapack.available("geqrf", data.dtype) and _lapack.available("orgqr", data.dtype)
                                      and _finite(data)):
        if mode == "r":
            return np.zeros(0, data.dtype), quietly(IGNORE_ALL, np.linalg.qr, data, "r")
        return quietly(IGNORE_ALL, np.linalg.qr, data, mode)
    reflectors, tau = _lapack.geqrf(data)
    columns = m if mode == "complete" else k  # of Q, and rows of R
    R = np.triu(reflectors[..., :columns, :])
    if mode == "r":
        return np.zeros(0, data.dtype), R
    if columns > n:  # complete Q of a tall matrix: orgqr fills the columns beyond the reflectors' own
        reflectors = np.concatenate([reflectors, np.zeros(data.shape[:-1] + (columns - n,), data.dtype)], -1)
    return _lapack.orgqr(reflectors[..., :columns], tau), R


class QRDecomposition(Function):
    """Q (orthonormal columns) and R (upper triangular) with A = Q R; ``mode`` as numpy/torch ('r': no Q)."""

    backward_name = "LinalgQrBackward0"

    @staticmethod
    def forward(ctx, A, mode):
        ctx.set_materialize_grads(False)
        Q, R = qr_arrays(A._data, mode)
        Q, R = wrap(np.ascontiguousarray(Q)), wrap(np.ascontiguousarray(R))
        ctx.save_for_backward(Q, R)
        ctx.mode = mode
        return Q, R

    @staticmethod
    def backward(ctx, grad_Q, grad_R):
        Q, R = ctx.saved_tensors
        m, n = Q.shape[-2] if ctx.mode != "r" else 0, R.shape[-1]
        if ctx.mode == "r":
            raise RuntimeError("linalg.qr: The derivative of linalg.qr depends on Q, which is not computed when "
                               "mode='r'. Please use linalg.qr(A, mode='reduced') if you are going to differentiate "
                               "through linalg.qr.")
        if ctx.mode == "complete" and m > n:
            raise RuntimeError("linalg.qr: The QR decomposition is not differentiable when mode='complete' and "
                               "nrows > ncols; use mode='reduced'")
        if m >= n:
            return _qr_backward_square(Q, R, grad_Q, grad_R), None
        X, grad_X = R[..., :m], (None if grad_R is None else grad_R[..., :m])
        grad_Y = None if grad_R is None else grad_R[..., m:]
        if grad_Y is not None:
            moved = Q @ (R[..., m:] @ adjoint_of(grad_Y))  # Y = Q^H A_Y also depends on Q
            grad_Q = moved if grad_Q is None else grad_Q + moved
        left = _qr_backward_square(Q, X, grad_Q, grad_X)
        return _joined(left, [left, R[..., m:] * 0 if grad_Y is None else Q @ grad_Y], -1), None


def _qr_backward_square(Q, R, grad_Q, grad_R):
    """The gradient of A = Q R for R square: (gQ + Q sym(triu(gR R^H - Q^H gQ))) R^-H, where sym(X) = X + X^H
    with the real part of X's diagonal once (R's diagonal is real: its imaginary part has no gradient)."""
    if grad_Q is None and grad_R is None:
        return Q @ R * 0
    X = 0
    if grad_R is not None:
        X = grad_R @ adjoint_of(R)
    if grad_Q is not None:
        X = X - adjoint_of(Q) @ grad_Q
    n = R.shape[-1]
    X = X * _lower(Q, n, 1.0).mT
    mirrored = X + adjoint_of(X) - _diag_embed(X.diagonal(0, -2, -1).real)
    b = Q @ mirrored if grad_Q is None else grad_Q + Q @ mirrored
    # b R^-H, by a triangular solve: a zero on R's diagonal (A of lower rank) gives inf and nan, as torch's
    return TriangularSolve.apply(adjoint_of(R), b, False, False, False)


# ----------------------------------------------------------------- singular values


def _svd_arrays(data: np.ndarray, vectors: bool, full: bool = False) -> tuple:
    """NumPy's reduced SVD ``(U, S, Vh)`` of the matrices in ``data`` (U and Vh None unless ``vectors``)."""
    if not np.isfinite(data).all():
        if np.isnan(data).any():
            raise LinAlgError(
                "linalg.svd: The algorithm failed to converge because the input matrix contained non-finite "
                "values (nan); the input must be finite, e.g. check (A != A).any() first"
            )
        # inf (and no nan): nan results, as torch, without LAPACK's complaints on stderr
        (m, n), batch = data.shape[-2:], data.shape[:-2]
        k = min(m, n)
        U, Vh = (np.full(batch + shape, np.nan, data.dtype) for shape in (((m, m), (n, n)) if full else ((m, k), (k, n))))
        S = np.full(batch + (k,), np.nan, data.real.dtype)  # (real for a complex A too)
        return (U, S, Vh) if vectors else (None, S, None)
    try:
        if vectors:
            return quietly(IGNORE_ALL, np.linalg.svd, data, full)
        return None, quietly(IGNORE_ALL, np.linalg.svd, data, False, False), None
    except np.linalg.LinAlgError as error:
        raise LinAlgError(f"linalg.svd: The algorithm failed to converge ({error})") from None


def eigh_arrays(data: np.ndarray, uplo: str = "L") -> tuple:
    """NumPy's ``eigh`` of the symmetric (Hermitian) matrices in ``data``; where it fails, torch's error."""
    try:
        return np.linalg.eigh(data, UPLO=uplo)
    except np.linalg.LinAlgError:
        raise LinAlgError("linalg.eigh: The algorithm failed to converge because the input matrix is ill-conditioned "
                          "or has too many repeated eigenvalues (or holds inf or nan); check that it is finite, e.g. "
                          "A.isfinite().all()") from None


class SingularValueDecomposition(Function):
    """The reduced SVD ``A = U diag(S) Vh`` of each matrix in ``A``: outputs U, S (descending), Vh.

    One Function for all three, so that the gradient of S, ``U diag(dS) Vh``, is itself differentiable:
    U and Vh are saved as outputs of this node, so their gradients come back to this same backward.
    U and Vh are None when no gradient will be needed (the singular values alone are cheaper).
    """

    backward_name = "LinalgSvdBackward0"

    @staticmethod
    def forward(ctx, A, vectors=False, full=False):
        ctx.set_materialize_grads(False)  # an output nobody used gets None: no work, no division for it
        arrays = _svd_arrays(A._data, vectors or ctx.needs_input_grad[0], full)
        U, S, Vh = (None if a is None else wrap(a) for a in arrays)
        ctx.save_for_backward(U, S, Vh)
        return U, S, Vh

    @staticmethod
    def backward(ctx, grad_U, grad_S, grad_Vh):
        U, S, Vh = ctx.saved_tensors
        k = S.shape[-1]
        if U.shape[-1] != k or Vh.shape[-2] != k:  # full matrices: the columns beyond k have no gradient (as torch)
            U, Vh = U[..., :k], Vh[..., :k, :]
            grad_U = None if grad_U is None else grad_U[..., :k]
            grad_Vh = None if grad_Vh is None else grad_Vh[..., :k, :]
        grad = None if grad_S is None else U @ (grad_S.unsqueeze(-1) * Vh)  # U diag(dS) Vh
        if grad_U is not None or grad_Vh is not None:
            vectors = _singular_vectors_backward(U, S, Vh, grad_U, grad_Vh)
            grad = vectors if grad is None else grad + vectors
        return grad, None, None


def _singular_vectors_backward(U: Tensor, S: Tensor, Vh: Tensor, grad_U, grad_Vh) -> Tensor:
    """The part of A's gradient that comes through U and Vh (distinct nonzero singular values).

    With F[i, j] = 1 / (s_j^2 - s_i^2) off the diagonal and 0 on it, V = Vh^H, X = U^H dU and Y = V^H dV:
    U ((F o (X - X^H)) S + S (F o (Y - Y^H)) + i Im diag(X - Y) / 2S) Vh, plus, for the columns that a tall U or
    a wide Vh leaves out, (I - U U^H) dU S^-1 Vh and U S^-1 dVh (I - V V^H). The imaginary diagonal term is
    the complex case's: a pair of singular vectors is defined up to one common phase, which the loss may not
    depend on (checked).
    """
    squares = S * S
    gaps = squares.unsqueeze(-2) - squares.unsqueeze(-1)  # [..., i, j] = s_j^2 - s_i^2
    diagonal = wrap(np.eye(S.shape[-1], dtype=bool))
    F = where(diagonal, 0.0, 1.0 / where(diagonal, 1.0, gaps))
    (m, k), n = U.shape[-2:], Vh.shape[-1]
    terms, outside = [], []  # k x k matrices to put between U and Vh; gradients outside their span
    turn_U = turn_V = 0  # Im diag(U^H dU), Im diag(V^H dV): how the loss changes as the vectors' phases turn
    if grad_U is not None:
        projected = adjoint_of(U) @ grad_U
        terms.append(F * (projected - adjoint_of(projected)) * S.unsqueeze(-2))  # (F o skew) S: S scales columns
        turn_U = projected.diagonal(0, -2, -1).imag if U._data.dtype.kind == "c" else 0
        if m > k:  # a tall U: dU's part outside U's columns
            outside.append((grad_U - U @ projected) / S.unsqueeze(-2) @ Vh)
    if grad_Vh is not None:
        projected = Vh @ adjoint_of(grad_Vh)  # V^H dV
        terms.append(S.unsqueeze(-1) * (F * (projected - adjoint_of(projected))))  # S (F o skew): S scales rows
        turn_V = projected.diagonal(0, -2, -1).imag if U._data.dtype.kind == "c" else 0
        if n > k:  # a wide Vh: dVh's part outside Vh's rows
            outside.append(U @ ((grad_Vh - grad_Vh @ adjoint_of(Vh) @ Vh) / S.unsqueeze(-1)))
    if U._data.dtype.kind == "c":
        _check_singular_phases(turn_U + turn_V)
        terms.append(_diag_embed((turn_U - turn_V) * 0.5j / S))
    return sum(outside, U @ sum(terms[1:], terms[0]) @ Vh)


def _check_singular_phases(turn: Tensor) -> None:
    """Refuse a loss that changes when a pair of singular vectors turns by a common phase (``turn`` is
    Im diag(U^H dU + V^H dV), 0 for a loss that does not)."""
    if not np.allclose(turn._data, 0, rtol=1e-2, atol=1e-2):
        raise RuntimeError("svd_backward: The singular vectors in the complex case are specified up to "
                           "multiplication by e^{i phi}. The specified loss function depends on this phase term, "
                           "making it ill-defined; use only quantities that do not depend on it (e.g. S, |U|, U V^H)")


# ----------------------------------------------------------------- symmetric eigenproblems


class SymmetricEigen(Function):
    """The eigenvalues (ascending) and eigenvectors of each symmetric matrix, read from its ``uplo`` triangle."""

    backward_name = "LinalgEighBackward0"

    @staticmethod
    def forward(ctx, A, uplo):
        ctx.set_materialize_grads(False)
        values, vectors = eigh_arrays(A._data, uplo)
        values, vectors = wrap(values), wrap(vectors)
        ctx.save_for_backward(values, vectors)
        return values, vectors

    @staticmethod
    def backward(ctx, grad_values, grad_vectors):
        values, V = ctx.saved_tensors
        if grad_values is None and grad_vectors is None:
            return None, None
        if grad_vectors is None:  # V diag(gL) V^H
            return (V * grad_values[..., None, :]) @ adjoint_of(V), None
        n = values.shape[-1]
        projected = adjoint_of(V) @ grad_vectors
        if V._data.dtype.kind == "c":
            _check_phase_invariance("linalg_eigh_backward", adjoint_of(V)._data, grad_vectors._data)
        eye = _eye(values, n)
        gaps = values[..., None, :] - values[..., :, None] + eye  # l_j - l_i, 1 on the diagonal
        middle = (projected - adjoint_of(projected)) * 0.5 / gaps * (1 - eye)
        if grad_values is not None:
            middle = middle + _diag_embed(grad_values)
        return V @ middle @ adjoint_of(V), None


# ----------------------------------------------------------------- general eigenproblems


def eig_arrays(op: str, data: np.ndarray, vectors: bool = True) -> tuple:
    """LAPACK's (geev) eigenvalues and unit eigenvectors (None unless ``vectors``) of each matrix, always
    complex (complex64 for single precision): NumPy gives real arrays where every eigenvalue is real. Infs and
    NaNs are refused with vectors, as torch does; the eigenvalues alone are torch's (NaN mostly)."""
    kind = np.result_type(data.dtype, np.complex64)
    finite = np.isfinite(data).all()
    if not vectors:
        values = np.linalg.eigvals(data) if finite else eigenvalues_of_non_finite(data, kind)
        return values.astype(kind, copy=False), None
    if not finite:
        raise RuntimeError(f"{op}: input tensor should not contain infs or NaNs; replace them first, "
                           "e.g. A.nan_to_num()")
    values, vectors = np.linalg.eig(data)
    return values.astype(kind, copy=False), vectors.astype(kind, copy=False)


class Eigen(Function):
    """The eigenvalues and eigenvectors (each of unit norm) of each square matrix, complex whatever ``A`` is.

    An eigenvector is only defined up to a phase e^(i phi); so the backward refuses a loss that depends on it.
    """

    backward_name = "LinalgEigBackward0"

    @staticmethod
    def forward(ctx, A, op):
        ctx.set_materialize_grads(False)  # eigvals: no gradient for the vectors, no work for them
        values, vectors = (wrap(x) for x in eig_arrays(op, A._data))
        ctx.save_for_backward(values, vectors)
        return values, vectors

    @staticmethod
    def backward(ctx, grad_values, grad_vectors):
        if grad_values is None and grad_vectors is None:
            return None, None
        values, vectors = ctx.saved_tensors
        return eig_backward(values, vectors, grad_values, grad_vectors), None

    @staticmethod
    def jvp(ctx, tangent, op_tangent):
        values, vectors = ctx.saved_tensors
        return eig_jvp(values, vectors, tangent)


def eig_jvp(L, V, dA) -> tuple:
    """torch's tangents of A = V diag(L) V^-1: dL = diag(dP) with dP = V^-1 dA V, and dV = W - V diag(Re diag(V^H W))
    with W = V (dP / E), E[i, j] = l_j - l_i and a zero diagonal for dP / E: each vector keeps its unit norm.
    (The map to V is not holomorphic, so the tangent cannot be read off the backward.)"""
    if dA.dtype != V.dtype:
        dA = dA.to(V.dtype)
    projected = solve_with(V, dA @ V, False)
    eye = _eye(L, L.shape[-1])
    gaps = L[..., None, :] - L[..., :, None] + eye
    turned = V @ (projected / gaps * (1 - eye))
    return projected.diagonal(0, -2, -1), turned - V * (adjoint_of(V) @ turned).diagonal(0, -2, -1).real[..., None, :]


def eig_backward(L, V, grad_L, grad_V):
    """torch's gradient of A = V diag(L) V^-1: V^-H (diag(gL) + (V^H gV - V^H V diag(re diag(V^H gV))) / E) V^H,
    where E[i, j] = conj(l_j - l_i) off the diagonal (the diagonal is gL's). The real part for a real A is taken
    by the engine."""
    Vh = adjoint_of(V)
    if grad_V is None:
        middle = _diag_embed(grad_L)
    else:
        _check_phase_invariance("linalg_eig_backward", _data(Vh), _data(grad_V))
        projected = Vh @ grad_V
        n = L.shape[-1]
        eye = _eye(L, n)
        conj_L = conjugated(L)
        gaps = conj_L[..., None, :] - conj_L[..., :, None] + eye  # 1 on the diagonal, replaced below
        along = projected.diagonal(0, -2, -1).real  # the part of gV that only rescales each vector
        middle = (projected - Vh @ (V * along[..., None, :])) / gaps
        if grad_L is not None:
            middle = middle * (1 - eye) + _diag_embed(grad_L)
    return solve_with(Vh, middle @ Vh, False)


def _check_phase_invariance(op: str, Vh: np.ndarray, grad_V: np.ndarray) -> None:
    """Refuse a loss that changes when an eigenvector is turned by a phase: then Im diag(V^H gV) is not 0."""
    turned = np.einsum("...ij,...ji->...i", Vh, grad_V).imag
    if not np.allclose(turned, 0, rtol=1e-2, atol=1e-2):
        raise RuntimeError(f"{op}: The eigenvectors in the complex case are specified up to multiplication by "
                           "e^{i phi}. The specified loss function depends on this quantity, so it is ill-defined; "
                           "use only quantities that do not depend on the phases (e.g. eigenvalues, |V|, V V^H)")


# ----------------------------------------------------------------- pseudo-inverse, least squares


def _tolerance(S: np.ndarray, shape: tuple, atol, rtol) -> np.ndarray:
    """The cut below which singular values count as zero: max(atol, rtol * largest), with torch's defaults."""
    if rtol is None:
        default = np.finfo(S.dtype).eps * max(shape[-2:])
        rtol = default if atol is None else np.where(np.asarray(atol) > 0, 0.0, default)
    largest = S.max(-1, keepdims=True, initial=0.0)
    # (a trailing 1 so that cuts given per batch entry broadcast with the batch, not with the singular values)
    return np.maximum(0.0 if atol is None else np.asarray(atol)[..., None], np.asarray(rtol)[..., None] * largest)


def pinv_array(data: np.ndarray, atol, rtol, hermitian: bool) -> np.ndarray:
    """The pseudo-inverse of each matrix, from its SVD (its eigendecomposition if ``hermitian``)."""
    if hermitian:
        values, V = eigh_arrays(data)
        S, U, Vh = np.abs(values), V * np.sign(values)[..., None, :], np.conj(V).swapaxes(-1, -2)
    else:
        U, S, Vh = _svd_arrays(data, True)
    with np.errstate(all="ignore"):  # (a tiny tolerance may underflow, and the cut values' inverses are not used)
        keep = S > _tolerance(S, data.shape, atol, rtol)
        inverted = np.where(keep, 1.0 / np.where(keep, S, 1.0), 0.0).astype(data.dtype)
        scaled = np.conj(Vh).swapaxes(-1, -2) * inverted[..., None, :]
        return np.ascontiguousarray(scaled @ np.conj(U).swapaxes(-1, -2))


def _pinv_backward(grad, P, A):
    """The gradient of P = pinv(A): -P^H gP P^H + (I - A P) gP^H P P^H + P^H P gP^H (I - P A)."""
    gh, Ph = adjoint_of(grad), adjoint_of(P)
    first = -(Ph @ grad @ Ph)
    outside_rows = gh @ P @ Ph
    outside_columns = Ph @ P @ gh
    return first + outside_rows - A @ (P @ outside_rows) + outside_columns - (outside_columns @ P) @ A


class PseudoInverse(Function):
    backward_name = "LinalgPinvBackward0"
    backward_on_arrays = True

    @staticmethod
    def forward(ctx, A, atol, rtol, hermitian):
        out = wrap(pinv_array(A._data, atol, rtol, hermitian))
        ctx.save_for_backward(A, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        A, P = ctx.saved_tensors
        return _pinv_backward(grad, P, A), None, None, None


def pinv_of(A):
    if type(A) is np.ndarray:
        return quietly(IGNORE_ALL, np.linalg.pinv, A)
    return PseudoInverse.apply(A, None, None, False)


class LeastSquares(Function):
    """The least-squares (minimum-norm) solution X of A X = B, as pinv(A) B; ``rcond`` cuts small singular
    values. B holds vectors if ``vector``."""

    backward_name = "LinalgLstsqBackward0"
    backward_on_arrays = True

    @staticmethod
    def forward(ctx, A, B, rcond, vector):
        right = B._data[..., None] if vector else B._data
        solution = pinv_array(A._data, None, rcond, False) @ right
        ctx.save_for_backward(A, B)
        ctx.vector = vector
        return wrap(solution[..., 0] if vector else solution)

    @staticmethod
    def backward(ctx, grad):
        A, B = ctx.saved_tensors
        if ctx.vector:
            grad, B = grad[..., None], B[..., None]
        P = pinv_of(A)
        needs = ctx.needs_input_grad
        grad_A = _pinv_backward(grad @ adjoint_of(B), P, A) if needs[0] else None
        grad_B = adjoint_of(P) @ grad if needs[1] else None
        if ctx.vector and grad_B is not None:
            grad_B = grad_B[..., 0]
        return grad_A, grad_B, None, None


# ----------------------------------------------------------------- the matrix exponential

# The [13/13] Pade approximant of exp (Higham, "The scaling and squaring method for the matrix exponential
# revisited", 2005): the coefficients b_k and the largest 1-norm for which it is accurate to double precision.
_PADE_13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0, 129060195264000.0,
            10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0, 1.0)
_THETA_13 = 5.371920351148152


def expm_array(data: np.ndarray) -> np.ndarray:
    """exp of each matrix in ``data`` (computed in double): scaled down by 2^s, Pade, squared back s times."""
    A = data.astype(np.result_type(data.dtype, np.float64))
    n = A.shape[-1]
    if not A.size:
        return np.zeros(data.shape, data.dtype)
    norms = np.abs(A).sum(-2).max(-1)
    finite = np.isfinite(norms)
    if not finite.all():  # as torch: nan for a matrix holding inf or nan, without disturbing the others' scaling
        A = np.where(finite[..., None, None], A, 0)
    norm = norms[finite].max() if finite.any() else 0.0
    s = max(0, int(math.ceil(math.log2(norm / _THETA_13)))) if norm > _THETA_13 else 0
    A = A / 2.0 ** s
    b = _PADE_13
    eye = np.eye(n)
    A2 = A @ A
    A4 = A2 @ A2
    A6 = A4 @ A2
    U = A @ (A6 @ (b[13] * A6 + b[11] * A4 + b[9] * A2) + b[7] * A6 + b[5] * A4 + b[3] * A2 + b[1] * eye)
    V = A6 @ (b[12] * A6 + b[10] * A4 + b[8] * A2) + b[6] * A6 + b[4] * A4 + b[2] * A2 + b[0] * eye
    result = np.linalg.solve(V - U, V + U)
    for _ in range(s):
        result = result @ result
    if not finite.all():
        result[~finite] = np.nan
    return result.astype(data.dtype)


class MatrixExponential(Function):
    """exp(A) = I + A + A^2/2! + ... of each matrix."""

    backward_name = "LinalgMatrixExpBackward0"
    torch_saved_tensors = {"self": 0}
    backward_on_arrays = True

    @staticmethod
    def forward(ctx, A):
        ctx.save_for_backward(A)
        return wrap(expm_array(A._data))

    @staticmethod
    def backward(ctx, grad):
        # the derivative of exp at A in direction G is the upper-right block of exp([[A, G], [0, A]]); the
        # gradient is that block for A^H and the incoming gradient
        A, = ctx.saved_tensors
        n = A.shape[-1]
        At = adjoint_of(A)
        zeros = At * 0
        block = _joined(grad, [_joined(grad, [At, grad], -1), _joined(grad, [zeros, At], -1)], -2)
        exponential = expm_array(block) if type(block) is np.ndarray else MatrixExponential.apply(block)
        return exponential[..., :n, n:]
