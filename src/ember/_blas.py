"""The one array kernel of ember's matrix products: Intel MKL's ``cblas_?gemm`` when the ``mkl`` extra is
installed and the CPU is Intel's, NumPy's ``matmul`` otherwise.

NumPy's wheels bring OpenBLAS, which runs the skinny products of a training step (an im2col matrix of
``[12544, 400]`` by ``[400, 32]``, a transformer's ``[512, 128]`` by ``[128, 512]``) about a third slower than
MKL on one thread of an Intel CPU. On other CPUs (AMD's) MKL takes a generic path and is the slower one, by 0
to 25 % on those products; there it is left out unless ``EMBER_MKL=1`` asks for it. MKL is loaded with
``ctypes`` on the first product large enough to gain from it (never at import) and takes float32, float64,
complex64 and complex128 operands it can read in place: matrices whose rows or columns are contiguous (a
transposed operand is passed as transposed, a row-strided one with its leading dimension), and stacks of them
one stride apart (``cblas_?gemm_batch_strided``, a broadcast operand with stride 0). Everything else (integers,
half precision, 1-D operands, other strides, empty or small products, where the call costs more than NumPy's
whole product) stays on NumPy, as does every product when ``EMBER_MKL=0`` is set or
``ember.backends.mkl.enabled`` is False.

Without MKL, a large product added into an array (a convolution sums one product per kernel row) goes to the
gemm of NumPy's own OpenBLAS, opened by ``_lapack``, with beta 1: added as it is made, not made in a temporary
and added in a second pass.

>>> import numpy as np
>>> from ember import _blas
>>> a = np.arange(6.).reshape(2, 3)
>>> _blas.matmul(a, a.T)
array([[ 5., 14.],
       [14., 50.]])
"""
from __future__ import annotations

import ctypes
import math
import os

import numpy as np

from ember import _lapack

# m * n * k of one matrix product from which MKL's beats NumPy's (bench/bench_blas.py measures the crossings):
# below, MKL's own set-up and the ctypes call (about 3 us) cost more than OpenBLAS's whole product, and square
# products of 128 are no faster. In a stack, MKL's batched call pays from a quarter of that per matrix; on
# smaller ones (the attention of a small transformer, 32 products of [64, 32] by [32, 64]) it is 1.3 to 1.6
# times slower than NumPy's loop over them.
THRESHOLD = 1 << 22
BATCHED_THRESHOLD = 1 << 20

_ROW_MAJOR, _NO_TRANS, _TRANS = 101, 111, 112
_INT_MAX = 2 ** 31 - 1  # MKL's LP64 interface takes sizes and strides as C ints
_INTEL_THREADS, _SEQUENTIAL, _GNU_THREADS = 0, 1, 3  # MKL's threading layers, as MKL_Set_Threading_Layer numbers them

_library = None  # None: not looked for yet; False: not installed, not loadable or switched off by EMBER_MKL=0
_kernels: dict = {}  # dtype -> (gemm, gemm_batch_strided, the scalars 1 and 0 as they take them)
_switch = None  # ember.backends.mkl, whose ``enabled`` is read on every large product
calls = {"gemm": 0, "batched": 0, "openblas_gemm": 0}  # products MKL (or OpenBLAS, added into an array) has
# run: tests check that the path is taken


def matmul(x: np.ndarray, y: np.ndarray, out: np.ndarray | None = None, add: bool = True) -> np.ndarray:
    """``np.matmul(x, y)`` (or added into ``out``, of the product's shape and dtype, when given; written over
    it with ``add=False``), by MKL where it can and pays; the result is C-contiguous either way."""
    if x.ndim == 2 == y.ndim and out is None and x.dtype.kind != "V":
        (m, k), n = x.shape, y.shape[1]
        if m * k * n < THRESHOLD:  # the many small products of a step, first, at the least cost
            return x.dot(y) if m * n * x.itemsize < MATMUL_FROM_BYTES else _of_two_matrices(x, y)
    if _library is False or x.ndim < 2 or y.ndim < 2 or x.dtype.char not in "fdFD":
        return _by_numpy(x, y, out, add)
    m, k, n = x.shape[-2], x.shape[-1], y.shape[-1]
    if m * n * k < (THRESHOLD if x.ndim == 2 == y.ndim else BATCHED_THRESHOLD) \
            or (x.dtype is not y.dtype and x.dtype != y.dtype) or not x.dtype.isnative or k != y.shape[-2] \
            or (out is not None and out.dtype != x.dtype) or not _usable():
        return _by_numpy(x, y, out, add)
    batch = x.shape[:-2] if y.ndim == 2 else np.broadcast_shapes(x.shape[:-2], y.shape[:-2])
    result = _gemm(x, y, batch, out, add)
    return _by_numpy(x, y, out, add) if result is None else result


def product(a, b):
    """``a @ b`` for a formula that runs on arrays (a first-order backward) or on tensors (one that records its
    graph, where the tensors' matmul reaches :func:`matmul` in its forward)."""
    return matmul(a, b) if type(a) is np.ndarray else a @ b


def _by_numpy(x: np.ndarray, y: np.ndarray, out: np.ndarray | None, add: bool = True) -> np.ndarray:
    if out is not None and not add:
        return np.matmul(x, y, out=out)
    if out is not None and _added_by_openblas(x, y, out):
        return out
    # (not for ml_dtypes' bfloat16, kind 'V', whose dot answers in single)
    result = _of_two_matrices(x, y) if x.ndim == 2 and y.ndim == 2 and x.dtype.kind != "V" else np.matmul(x, y)
    if out is None:
        return result
    out += result
    return out


# bytes of a product's result from which NumPy's matmul makes it faster than dot: dot zeroes its result before
# BLAS writes over it, which on 64 KB (64 x 128 float64, 128 x 128 float32) costs more than matmul's larger
# fixed cost (about 0.6 us); at 32 KB (the small MLP's 64 x 128 float32 products) dot is 2 to 20 % faster
MATMUL_FROM_BYTES = 1 << 16


def _of_two_matrices(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``x @ y`` for two matrices by NumPy: ``dot``, whose fixed cost is half ``matmul``'s, on small results;
    ``matmul`` on large ones, where it is also the same BLAS call with the same bits: float and complex
    operands of one dtype, each C- or F-contiguous, no dimension of 1 (dot takes other BLAS routines there)."""
    m, n = x.shape[0], y.shape[1]
    if m * n * x.itemsize < MATMUL_FROM_BYTES or x.dtype.char not in "fdFD" or x.dtype != y.dtype \
            or min(m, n, x.shape[1]) < 2 or not (x.flags.c_contiguous or x.flags.f_contiguous) \
            or not (y.flags.c_contiguous or y.flags.f_contiguous) or not (x.flags.aligned and y.flags.aligned):
        return x.dot(y)
    return np.matmul(x, y)


# m * n of a product added into ``out`` from which NumPy's OpenBLAS adds it as it makes it: below, the second
# pass over a temporary that this saves costs less than the ctypes call (about 2 us)
ADDED_THRESHOLD = 1 << 13


def _added_by_openblas(x: np.ndarray, y: np.ndarray, out: np.ndarray) -> bool:
    """``out += x @ y`` by the gemm of the OpenBLAS that NumPy loaded (``_lapack`` opens it), with beta 1: the
    product is added as it is made, where NumPy's matmul makes it in a temporary and adds that in a second pass
    (a sixth of a LeNet forward's convolutions, which sum one product per kernel row). False, with nothing
    done, where that library or its gemm is missing, for other dtypes and small products, and where gemm
    cannot read the operands or write ``out`` in place."""
    if x.ndim != 2 or y.ndim != 2 or x.dtype.char not in "fd" or not (x.dtype == y.dtype == out.dtype) \
            or not x.dtype.isnative or not out.flags.writeable:
        return False
    (m, k), n = x.shape, y.shape[1]
    if m * n < ADDED_THRESHOLD or k == 0 or out.shape != (m, n) or max(m, n, k) > _INT_MAX:
        return False
    c, a, b = _matrix_layout(out, m, n), _matrix_layout(x, m, k), _matrix_layout(y, k, n)
    if c is None or c[0] != _NO_TRANS or a is None or b is None or np.may_share_memory(out, x) \
            or np.may_share_memory(out, y) or not _lapack.enabled:
        return False
    gemm = _lapack._function("gemm", x.dtype)
    if gemm is None:
        return False
    calls["openblas_gemm"] += 1
    gemm(_ROW_MAJOR, a[0], b[0], m, n, k, 1.0, x.ctypes.data, a[1], y.ctypes.data, b[1], 1.0, out.ctypes.data, c[1])
    return True


def _usable() -> bool:
    if _library is None:
        _load()
    return _library is not False and _switch.enabled


def _gemm(x: np.ndarray, y: np.ndarray, batch: tuple, out: np.ndarray | None, add: bool = True) -> np.ndarray | None:
    """The product by MKL, or None where MKL cannot read an operand (or write ``out``) in place."""
    m, k, n = x.shape[-2], x.shape[-1], y.shape[-1]
    a, b = _matrix_layout(x, m, k), _matrix_layout(y, k, n)
    count = math.prod(batch)
    if a is None or b is None or max(m, n, k, count * m * n) > _INT_MAX:
        return None
    if out is None:
        result, accumulate = np.empty(batch + (m, n), x.dtype), False
    elif out.shape == batch + (m, n) and out.flags.c_contiguous and out.flags.writeable:
        result, accumulate = out, add
    else:
        return None
    if count == 0:
        return result
    gemm, batched, one, zero = _kernels[x.dtype]
    beta = one if accumulate else zero
    if count == 1:
        calls["gemm"] += 1
        gemm(_ROW_MAJOR, a[0], b[0], m, n, k, one, x.ctypes.data, a[1], y.ctypes.data, b[1], beta,
             result.ctypes.data, n)
        return result
    strides = _batch_stride(x, batch), _batch_stride(y, batch)
    if None in strides:
        return None
    calls["batched"] += 1
    batched(_ROW_MAJOR, a[0], b[0], m, n, k, one, x.ctypes.data, a[1], strides[0], y.ctypes.data, b[1],
            strides[1], beta, result.ctypes.data, n, m * n, count)
    return result


def _matrix_layout(a: np.ndarray, rows: int, columns: int) -> tuple | None:
    """(transpose flag, leading dimension) that cblas reads the last two dims of ``a`` with, if it can."""
    if not a.flags.aligned:
        return None
    item = a.itemsize
    step_row, step_column = a.strides[-2:]
    if columns == 1 or step_column == item:  # rows contiguous: row-major, as it is
        lead = columns if rows == 1 else step_row // item
        if lead >= columns and step_row % item == 0 and lead <= _INT_MAX:
            return _NO_TRANS, lead
    if rows == 1 or step_row == item:  # columns contiguous: the transpose of a row-major matrix
        lead = rows if columns == 1 else step_column // item
        if lead >= rows and step_column % item == 0 and lead <= _INT_MAX:
            return _TRANS, lead
    return None


def _batch_stride(a: np.ndarray, batch: tuple) -> int | None:
    """The one stride, in items, between consecutive matrices of ``a`` broadcast to ``batch`` and taken in C
    order, if there is one (0 for a matrix that every product shares)."""
    own = a.shape[:-2]
    strides = (0,) * (len(batch) - len(own)) + tuple(0 if n == 1 else s for n, s in zip(own, a.strides[:-2]))
    first = expected = None
    for size, stride in zip(reversed(batch), reversed(strides)):
        if size == 1:
            continue
        if expected is None:
            first = stride
        elif stride != expected:
            return None
        expected = stride * size
    first = first or 0
    if first < 0 or first % a.itemsize or first // a.itemsize > _INT_MAX:
        return None
    return first // a.itemsize


def _load() -> None:
    """Open MKL's single dynamic library and its cblas functions, or note (``_library = False``) that there is
    none to open."""
    global _library, _switch
    from ember.backends import mkl as switch

    _switch = switch
    path = _installed_file("mkl", "mkl_rt") if mkl_wanted() else None
    if path is None:
        _library = False
        return
    try:
        _library = _opened.get(path) or _opened.setdefault(path, _open(path))
    except (OSError, AttributeError):  # a broken or foreign install: NumPy's products stay correct
        _library = False


_opened: dict = {}  # path -> MKL as opened once (its threading layer can be set only before its first call)


def mkl_installed() -> bool:
    """Whether the ``mkl`` extra is installed and not kept out by ``EMBER_MKL=0``."""
    return os.environ.get("EMBER_MKL") != "0" and _installed_file("mkl", "mkl_rt") is not None


def mkl_wanted() -> bool:
    """Whether MKL should run the products: installed, and the CPU is Intel's (or ``EMBER_MKL=1`` asks)."""
    return mkl_installed() and (os.environ.get("EMBER_MKL") == "1" or _intel_cpu())


def _intel_cpu() -> bool:
    """Whether the CPU is Intel's, where MKL dispatches to its fast kernels."""
    try:
        with open("/proc/cpuinfo") as info:
            vendor = next((line for line in info if line.startswith("vendor_id")), "")
        return "GenuineIntel" in vendor
    except OSError:  # not Linux
        import platform

        return "intel" in platform.processor().lower() or (platform.system(), platform.machine()) == ("Darwin",
                                                                                                    "x86_64")


def reload() -> bool:
    """Choose again whether MKL runs the products, as the environment now says (for tests that set
    ``EMBER_MKL``); returns whether it does."""
    global _library
    _library = None
    return loaded()


def _installed_file(distribution: str, stem: str) -> str | None:
    """The path of the shared library ``stem`` that an installed distribution brings, if there is one."""
    from importlib import metadata

    try:
        files = metadata.files(distribution) or []
    except metadata.PackageNotFoundError:
        return None
    found = [f for f in files if f.name.startswith(("lib" + stem + ".", stem + ".")) and
             (".so" in f.name or f.name.endswith((".dll", ".dylib")))]
    return str(found[0].locate()) if found else None


def _open(path: str) -> ctypes.CDLL:
    layer = _threading_layer()
    library = ctypes.CDLL(path)
    if "MKL_THREADING_LAYER" not in os.environ:
        library.MKL_Set_Threading_Layer(layer)
    for dtype, letter, scalar in ((np.float32, "s", ctypes.c_float), (np.float64, "d", ctypes.c_double),
                                  (np.complex64, "c", ctypes.c_void_p), (np.complex128, "z", ctypes.c_void_p)):
        _kernels[np.dtype(dtype)] = _kernel(library, letter, scalar, np.dtype(dtype))
    from ember import _threads

    if _threads.requested() is not None:
        library.MKL_Set_Num_Threads(_threads.requested())
    return library


def _threading_layer() -> int:
    """The OpenMP runtime MKL's threads run on, made ready: MKL's threading layers find the runtime's symbols
    in the process's global scope, so it must be the one already there, if any.

    GNU's (torch loads its libgomp globally) answers MKL's ``omp_get_thread_num`` whichever layer runs: on
    Intel's layer, every thread would be told it is thread 0 and the product would be wrong; so MKL runs on
    GNU's layer then. Otherwise Intel's runtime is loaded into the global scope (the copy already in the
    process if there is one, as a second copy aborts the process; else the intel-openmp wheel's), and
    libraries loaded later that ask for GNU's runtime get Intel's, which answers for it. With neither,
    MKL runs on one thread.
    """
    if os.name == "posix":
        process = ctypes.CDLL(None)
        if hasattr(process, "GOMP_parallel") and not hasattr(process, "__kmpc_fork_call"):
            return _GNU_THREADS
    try:
        ctypes.CDLL("libiomp5.so", mode=ctypes.RTLD_GLOBAL)  # by name: a loaded copy is found first
        return _INTEL_THREADS
    except OSError:
        path = _installed_file("intel-openmp", "iomp5") or _installed_file("intel-openmp", "libiomp5md")
    if path is None:
        return _SEQUENTIAL
    ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    return _INTEL_THREADS


def _kernel(library: ctypes.CDLL, letter: str, scalar: type, dtype: np.dtype) -> tuple:
    integer, pointer = ctypes.c_int, ctypes.c_void_p
    gemm, batched = getattr(library, f"cblas_{letter}gemm"), getattr(library, f"cblas_{letter}gemm_batch_strided")
    gemm.argtypes = [integer] * 6 + [scalar, pointer, integer, pointer, integer, scalar, pointer, integer]
    batched.argtypes = [integer] * 6 + [scalar, pointer, integer, integer, pointer, integer, integer, scalar,
                                        pointer, integer, integer, integer]
    gemm.restype = batched.restype = None
    if scalar is ctypes.c_void_p:  # complex scalars go by address: kept alive here, with the kernel
        one, zero = np.ones(1, dtype), np.zeros(1, dtype)
        return gemm, batched, one.ctypes.data_as(pointer), zero.ctypes.data_as(pointer)
    return gemm, batched, 1.0, 0.0


def loaded() -> bool:
    """Whether MKL is installed and loads (loading it now if it was not yet)."""
    if _library is None:
        _load()
    return _library is not False


def version() -> str | None:
    """MKL's own version line, if it is loaded."""
    if not _library:
        return None
    text = ctypes.create_string_buffer(256)
    _library.mkl_get_version_string(text, len(text))
    return text.value.decode(errors="replace").strip()


def set_threads(n: int) -> None:
    """Give MKL ``n`` threads, if it is loaded (on loading, it takes what ``set_num_threads`` asked for)."""
    if _library:
        _library.MKL_Set_Num_Threads(n)


def threads() -> int | None:
    """MKL's threads, if it is loaded."""
    return _library.MKL_Get_Max_Threads() if _library else None
