"""LAPACK's factorizations and solves, from the OpenBLAS that NumPy's wheels carry: LU (``getrf``, ``getrs``),
triangular solves (``trsm``), Cholesky solves (``potrs``) and Householder QR (``geqrf``, ``orgqr`` / ``ungqr``);
and BLAS's ``gemm``, which ``_blas`` calls to add a product into an array as it is made, and ``axpy``
(``_axpy``).

NumPy's wheels ship a whole OpenBLAS, LAPACK included, in ``numpy.libs/`` (``numpy/.dylibs/`` on macOS), with
64-bit integers and its symbols renamed (``scipy_dgetrf_64_``; NumPy 1.x's wheels: ``dgetrf_64_``). NumPy
itself reaches only part of it, so ember opens that library with ``ctypes`` on the first call (never at import)
and calls it once per matrix of a batch. The library is the very one NumPy loaded, so its thread pool is the one
``ember.set_num_threads`` sizes. Where it is not there (NumPy from conda, built on MKL, or a build of its own)
or lacks a routine, :func:`available` says so and the callers compute on NumPy instead; ``enabled = False``
sends them there too (the tests use it to check both ways).

LAPACK reads matrices by columns: a C-ordered stack of matrices is copied, transposed, into one whose every
matrix is its Fortran layout, and the results are handed back as transposed views of it (the strides torch's
results have too). ``trsm`` goes through OpenBLAS's row-major cblas interface and reads its triangle in place.

>>> import numpy as np
>>> from ember import _lapack
>>> if _lapack.available("getrf", np.dtype(np.float64)):
...     LU, pivots, info = _lapack.getrf(np.array([[1., 2.], [3., 4.]]))
...     print(LU.tolist(), pivots.tolist(), int(info))
... else:
...     print([[3.0, 4.0], [0.3333333333333333, 0.6666666666666667]], [2, 2], 0)
[[3.0, 4.0], [0.3333333333333333, 0.6666666666666667]] [2, 2] 0
"""
from __future__ import annotations

import ctypes
import glob
import math
import os

import numpy as np

enabled = True  # False: every caller computes on NumPy, as where the library is missing

_library = None  # None: not looked for yet; False: not found or not loadable
_names = ("", "")  # the prefix and suffix of the library's LAPACK symbols
_routines: dict = {}  # (routine, dtype letter) -> the ctypes function, or None where the library lacks it
_LETTERS = {np.dtype(np.float32): "s", np.dtype(np.float64): "d", np.dtype(np.complex64): "c",
            np.dtype(np.complex128): "z"}
# The Householder routines' names differ for real and complex matrices.
_REAL_OR_COMPLEX = {"orgqr": "ungqr"}
_ROW_MAJOR, _NO_TRANS, _TRANS, _CONJ_TRANS = 101, 111, 112, 113
_UPPER, _LOWER, _NON_UNIT, _UNIT, _LEFT = 121, 122, 131, 132, 141
_INTEGER = ctypes.c_int64
_POINTER = ctypes.c_void_p


# ----------------------------------------------------------------- finding the library


def available(routine: str, dtype: np.dtype) -> bool:
    """Whether ``routine`` (``"getrf"``, ``"trsm"``, ...) can run on matrices of ``dtype`` here and now."""
    return enabled and _function(routine, dtype) is not None


def _function(routine: str, dtype: np.dtype):
    letter = _LETTERS.get(dtype)
    if letter is None:
        return None
    key = routine, letter
    if key not in _routines:
        _routines[key] = _bind(routine, letter)
    return _routines[key]


def _bind(routine: str, letter: str):
    """The ctypes function of ``routine`` for one dtype, with its arguments declared, or None."""
    library = _opened()
    if library is None:
        return None
    if letter in "cz":
        routine = _REAL_OR_COMPLEX.get(routine, routine)
    prefix, suffix = _names
    # cblas_?trsm is named cblas_dtrsm64_ where LAPACK's routines are dgetrf_64_
    name = f"{prefix}cblas_{letter}{routine}{suffix.lstrip('_')}" if routine in _CBLAS \
        else f"{prefix}{letter}{routine}{suffix}"
    function = getattr(library, name, None)
    if function is None:
        return None
    function.restype = None
    function.argtypes = _CBLAS[routine](letter) if routine in _CBLAS else [_POINTER] * _ARGUMENTS[routine]
    return function


# How many arguments each LAPACK routine takes, all by address: its own, then the hidden lengths that gfortran
# adds for character arguments (one for getrs's trans, one for potrs's uplo).
_ARGUMENTS = {"getrf": 6, "getrs": 10, "potrs": 9, "geqrf": 8, "orgqr": 9, "ungqr": 9}


def _trsm_arguments(letter: str) -> list:
    """cblas_?trsm(layout, side, uplo, trans, diag, m, n, alpha, A, lda, B, ldb): enums as C ints, sizes as
    64-bit ints, a real alpha by value, a complex one by address."""
    alpha = {"s": ctypes.c_float, "d": ctypes.c_double}.get(letter, _POINTER)
    return [ctypes.c_int] * 5 + [_INTEGER, _INTEGER, alpha, _POINTER, _INTEGER, _POINTER, _INTEGER]


def _gemm_arguments(letter: str) -> list:
    """cblas_?gemm(layout, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc): real scalars by value,
    complex ones by address."""
    scalar = {"s": ctypes.c_float, "d": ctypes.c_double}.get(letter, _POINTER)
    return [ctypes.c_int] * 3 + [_INTEGER] * 3 + [scalar, _POINTER, _INTEGER, _POINTER, _INTEGER, scalar, _POINTER,
                                                  _INTEGER]


def _axpy_arguments(letter: str) -> list:
    """cblas_?axpy(n, alpha, x, incx, y, incy): sizes and steps as 64-bit ints, a real alpha by value."""
    return [_INTEGER, {"s": ctypes.c_float, "d": ctypes.c_double}.get(letter, _POINTER), _POINTER, _INTEGER,
            _POINTER, _INTEGER]


_CBLAS = {"trsm": _trsm_arguments, "gemm": _gemm_arguments, "axpy": _axpy_arguments}  # from the cblas interface


def _opened():
    global _library
    if _library is None:
        _library = _load() or False
    return _library or None


def _load():
    """NumPy's OpenBLAS, opened, with ``_names`` set from the symbols it has, or None."""
    global _names
    for path in _candidate_paths():
        try:
            library = ctypes.CDLL(path)
        except OSError:
            continue
        for prefix, suffix in (("scipy_", "_64_"), ("", "_64_")):
            if hasattr(library, f"{prefix}dgetrf{suffix}"):
                _names = prefix, suffix
                return library
    return None


def _candidate_paths() -> list:
    """The OpenBLAS libraries a NumPy wheel brings: beside the package (Linux, Windows) or inside it (macOS)."""
    package = os.path.dirname(np.__file__)
    patterns = (os.path.join(package + ".libs", "lib*openblas*"), os.path.join(package, ".dylibs", "lib*openblas*"),
                os.path.join(package + ".libs", "*openblas*.dll"))
    return sorted(path for pattern in patterns for path in glob.glob(pattern))


# ----------------------------------------------------------------- layouts


def _fortran_stack(data: np.ndarray, batch: tuple, dtype: np.dtype | None = None) -> np.ndarray:
    """A new C-ordered stack (count, n, m) of the matrices of ``data`` (broadcast to ``batch``, cast to ``dtype``),
    each transposed: each holds its matrix in LAPACK's column-major layout."""
    m, n = data.shape[-2:]
    stack = np.empty((math.prod(batch), n, m), dtype or data.dtype)
    if data.shape[:-2] != batch:  # (broadcast_to costs more than the copy of a small matrix: only where needed)
        data = np.broadcast_to(data, batch + (m, n))
    stack.reshape(batch + (n, m))[...] = data.swapaxes(-1, -2)
    return stack


def _batch(*shapes: tuple) -> tuple:
    """The batch dims that ``shapes`` broadcast to (at no cost where they are the same, as mostly)."""
    first = shapes[0]
    return first if all(shape == first for shape in shapes[1:]) else np.broadcast_shapes(*shapes)


def _offsets(data: np.ndarray, batch: tuple) -> list:
    """The byte offset of each matrix of ``data`` broadcast to ``batch``, in C order of the batch."""
    if not batch:
        return [0]
    own = data.shape[:-2]
    strides = (0,) * (len(batch) - len(own)) + tuple(0 if size == 1 else stride
                                                      for size, stride in zip(own, data.strides[:-2]))
    offsets = np.zeros(batch, np.intp)
    for axis, (size, stride) in enumerate(zip(batch, strides)):
        shape = [1] * len(batch)
        shape[axis] = size
        offsets = offsets + (np.arange(size) * stride).reshape(shape)
    return offsets.reshape(-1).tolist()


def _address(array: np.ndarray) -> int:
    return array.__array_interface__["data"][0]  # (a little cheaper than array.ctypes.data)


def _integers(*values: int) -> tuple:
    """Integers that LAPACK reads (or writes, as info) by address: the ctypes array that holds them (keep it
    alive, read info from it) and their addresses."""
    held = (_INTEGER * len(values))(*values)
    start = ctypes.addressof(held)
    return held, [start + 8 * i for i in range(len(values))]


def _letter(character: str) -> bytes:
    """A character argument: ctypes passes a bytes object by the address of its first character."""
    return character.encode()


# ----------------------------------------------------------------- LU


def getrf(data: np.ndarray) -> tuple:
    """(LU, pivots, info) of each matrix of ``data`` (..., m, n) by LAPACK's getrf: L (unit diagonal, not
    stored) and U packed in one matrix, int32 pivots counted from 1, info the first zero pivot (0: none)."""
    shape = data.shape
    (m, n), k = shape[-2:], min(shape[-2:])
    batch = shape[:-2]
    stack = _fortran_stack(data, batch)
    pivots = np.empty((len(stack), k), np.int64)
    info = np.zeros(len(stack), np.int32)
    if m and n:
        function = _function("getrf", data.dtype)
        held, (rows, columns, lead, result) = _integers(m, n, m, 0)
        step, start, pivot_start = m * n * data.itemsize, _address(stack), _address(pivots)
        for i in range(len(stack)):
            function(rows, columns, start + i * step, lead, pivot_start + i * k * 8, result)
            if held[3]:
                info[i] = held[3]
    LU = stack.reshape(batch + (n, m)).swapaxes(-1, -2)
    return LU, pivots.astype(np.int32).reshape(batch + (k,)), info.reshape(batch)


def getrs(LU: np.ndarray, pivots: np.ndarray, B: np.ndarray, adjoint: bool) -> np.ndarray:
    """A^-1 B (A^-H B if ``adjoint``) for each square A of packed factors ``LU`` and ``pivots`` (as getrf's, valid:
    each between 1 and n), batch dims broadcast, by LAPACK's getrs."""
    n, columns = LU.shape[-1], B.shape[-1]
    batch = _batch(LU.shape[:-2], pivots.shape[:-1], B.shape[:-2])
    factors = _column_major(LU)
    solution = _fortran_stack(B, batch, LU.dtype)
    pivots64 = np.ascontiguousarray(pivots, np.int64)
    if n and columns and solution.size:
        function = _function("getrs", LU.dtype)
        trans = _letter("C" if adjoint else "N")
        held, (order, count, lead, result) = _integers(n, columns, n, 0)
        step, start = n * columns * solution.itemsize, _address(solution)
        factor_start, pivot_start = _address(factors), _address(pivots64)
        pivot_offsets = _offsets(pivots64[..., None], batch)
        threads = _one_thread() if n * columns < _GETRS_THREADED_SIZE else None
        try:
            for i, offset in enumerate(_offsets(factors, batch)):
                function(trans, order, count, factor_start + offset, lead, pivot_start + pivot_offsets[i],
                         start + i * step, lead, result, 1)
        finally:
            if threads is not None:
                _set_threads(threads)
    return solution.reshape(batch + (columns, n)).swapaxes(-1, -2)


# OpenBLAS's getrs hands every system to its thread pool, however small (its getrf and gesv keep those under
# 10000 elements on one thread): a 3 x 3 solve then costs some 1.4 ms of CPU on two threads instead of 8 us, and
# much more wall time on a busy machine. Below this size getrs runs on one thread, as getrf does.
_GETRS_THREADED_SIZE = 10000
_thread_controls = None  # OpenBLAS's (get, set) of its thread count, bound on first use; False where it lacks them


def _one_thread() -> int | None:
    """Put OpenBLAS on one thread; the count it had, to give back with ``_set_threads`` (None if none to give)."""
    controls = _threads()
    if not controls:
        return None
    count = controls[0]()
    if count <= 1:
        return None
    controls[1](1)
    return count


def _set_threads(count: int) -> None:
    _threads()[1](count)


def _threads():
    global _thread_controls
    if _thread_controls is None:
        prefix, suffix = _names  # openblas_get_num_threads64_ where LAPACK's routines are dgetrf_64_
        name = f"{prefix}openblas_{{}}_num_threads{suffix.lstrip('_')}"
        get, put = (getattr(_library, name.format(verb), None) for verb in ("get", "set"))
        if get is not None and put is not None:
            get.restype, get.argtypes, put.restype, put.argtypes = ctypes.c_int, [], None, [ctypes.c_int]
        _thread_controls = (get, put) if get is not None and put is not None else False
    return _thread_controls


def _column_major(matrices: np.ndarray) -> np.ndarray:
    """``matrices`` as a view of which each matrix's columns are contiguous one after the other (LAPACK's layout)
    where they are so already, else a copy laid out so (batch strides kept where the view is used)."""
    m = matrices.shape[-2]
    item = matrices.itemsize
    if matrices.strides[-2] == item and (matrices.shape[-1] <= 1 or matrices.strides[-1] == m * item):
        return matrices
    return np.ascontiguousarray(matrices.swapaxes(-1, -2)).swapaxes(-1, -2)


# ----------------------------------------------------------------- triangular solves


def trsm(T: np.ndarray, B: np.ndarray, upper: bool, unit: bool, adjoint: bool = False) -> np.ndarray:
    """T^-1 B (T^-H B if ``adjoint``) for the triangular matrices T (their ``upper`` or lower triangle, ones on
    the diagonal if ``unit``), batch dims broadcast, by BLAS's trsm: a zero on the diagonal gives inf or nan in
    the columns it meets, and no error."""
    n, columns = T.shape[-1], B.shape[-1]
    batch = _batch(T.shape[:-2], B.shape[:-2])
    solution = np.array(B if B.shape[:-2] == batch else np.broadcast_to(B, batch + B.shape[-2:]), T.dtype, order="C")
    if not (n and columns and solution.size):
        return solution
    T, transposed, lead = _row_major(T, adjoint)
    if transposed:  # cblas reads M = T^T: T X = B is M^T X = B, and (for real T only) T^H X = B is M X = B
        operation = _NO_TRANS if adjoint else _TRANS
    else:
        operation = _CONJ_TRANS if adjoint else _NO_TRANS
    triangle = _UPPER if upper != transposed else _LOWER
    function = _function("trsm", T.dtype)
    one = _one(T.dtype)
    step, start, triangle_start = n * columns * solution.itemsize, _address(solution), _address(T)
    for i, offset in enumerate(_offsets(T, batch)):
        function(_ROW_MAJOR, _LEFT, triangle, operation, _UNIT if unit else _NON_UNIT, n, columns, one,
                 triangle_start + offset, lead, start + i * step, columns)
    return solution


def _row_major(T: np.ndarray, adjoint: bool) -> tuple:
    """(T or a copy, whether cblas reads it as the transpose of a row-major matrix, its leading dimension):
    rows or columns contiguous are read in place; a complex T with contiguous columns is read so only for a
    solve that is not adjoint (cblas has no conjugate without transposition)."""
    item = T.itemsize
    rows, columns = T.strides[-2:]
    n = T.shape[-1]
    if n == 1 or (columns == item and rows >= n * item and rows % item == 0):
        return T, False, max(1, rows // item if n > 1 else n)
    if rows == item and columns >= n * item and columns % item == 0 and (T.dtype.kind != "c" or not adjoint):
        return T, True, columns // item
    copy = np.ascontiguousarray(T)
    return copy, False, n


_COMPLEX_ONES = {np.dtype(np.complex64): np.ones(1, np.complex64), np.dtype(np.complex128): np.ones(1, np.complex128)}


def _one(dtype: np.dtype):
    """trsm's alpha of 1: by value for real dtypes, by the address of a complex 1 (kept here) for complex ones."""
    return _address(_COMPLEX_ONES[dtype]) if dtype.kind == "c" else 1.0


def potrs(factor: np.ndarray, B: np.ndarray, upper: bool) -> np.ndarray:
    """A^-1 B for A = L L^H (or U^H U if ``upper``), from the Cholesky factors ``factor``, batch dims broadcast,
    by LAPACK's potrs."""
    n, columns = factor.shape[-1], B.shape[-1]
    batch = _batch(factor.shape[:-2], B.shape[:-2])
    factors = _column_major(factor)
    solution = _fortran_stack(B, batch, factor.dtype)
    if n and columns and solution.size:
        function = _function("potrs", factor.dtype)
        triangle = _letter("U" if upper else "L")
        held, (order, count, lead, result) = _integers(n, columns, n, 0)
        step, start, factor_start = n * columns * solution.itemsize, _address(solution), _address(factors)
        for i, offset in enumerate(_offsets(factors, batch)):
            function(triangle, order, count, factor_start + offset, lead, start + i * step, lead, result, 1)
    return solution.reshape(batch + (columns, n)).swapaxes(-1, -2)


# ----------------------------------------------------------------- Householder QR


def geqrf(data: np.ndarray) -> tuple:
    """(a, tau) of each matrix by LAPACK's geqrf: R on and above the diagonal, the reflectors' vectors below it
    (their leading 1 not stored), and the reflectors' scales."""
    (m, n), k = data.shape[-2:], min(data.shape[-2:])
    batch = data.shape[:-2]
    stack = _fortran_stack(data, batch)
    tau = np.zeros((len(stack), k), data.dtype)
    if k and len(stack):
        function = _function("geqrf", data.dtype)
        work, size = _workspace(data.dtype, n)
        held, (rows, columns, lead, work_size, result) = _integers(m, n, m, size, 0)
        step, start, tau_start, work_start = m * n * data.itemsize, _address(stack), _address(tau), _address(work)
        for i in range(len(stack)):
            function(rows, columns, start + i * step, lead, tau_start + i * k * data.itemsize, work_start, work_size,
                     result)
    return stack.reshape(batch + (n, m)).swapaxes(-1, -2), tau.reshape(batch + (k,))


def orgqr(A: np.ndarray, tau: np.ndarray) -> np.ndarray:
    """The first n columns of H_1 ... H_k from geqrf's reflectors ``A`` (m, n) and scales ``tau`` (k), with
    m >= n >= k, batch dims broadcast, by LAPACK's orgqr (ungqr for complex matrices)."""
    (m, n), k = A.shape[-2:], tau.shape[-1]
    batch = _batch(A.shape[:-2], tau.shape[:-1])
    stack = _fortran_stack(A, batch)
    scales = np.ascontiguousarray(np.broadcast_to(tau, batch + (k,)), A.dtype).reshape(len(stack), k)
    if n and len(stack):
        function = _function("orgqr", A.dtype)
        work, size = _workspace(A.dtype, n)
        held, (rows, columns, reflectors, lead, work_size, result) = _integers(m, n, k, m, size, 0)
        step, start, tau_start, work_start = m * n * A.itemsize, _address(stack), _address(scales), _address(work)
        for i in range(len(stack)):
            function(rows, columns, reflectors, start + i * step, lead, tau_start + i * k * A.itemsize, work_start,
                     work_size, result)
    return stack.reshape(batch + (n, m)).swapaxes(-1, -2)


def _workspace(dtype: np.dtype, columns: int) -> tuple:
    """(work array, its length) for geqrf or orgqr on matrices of ``columns`` columns: enough for blocks of 64
    columns (their best, where LAPACK's block size is at most 64; 32 in its reference) without asking LAPACK
    (a query costs as much as a small matrix's whole factorization)."""
    size = max(1, columns) * 64
    return np.empty(size, dtype), size
