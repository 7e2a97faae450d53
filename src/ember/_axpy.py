"""``y += alpha * x`` on float32 arrays, each element rounded once, by the saxpy of NumPy's OpenBLAS.

torch adds a multiple of a float32 tensor (``add(alpha=)``, ``add_``, ``lerp``) with a fused multiply-add:
every element rounded once. ember's own way to round once computes in double (``arithmetic.fused_single``):
five passes over arrays twice as wide, ten to twenty-five times torch's time on a million elements. The
saxpy kernels of OpenBLAS for CPUs with FMA use it, in one pass at memory speed. On its first call this module
checks that the saxpy at hand rounds as ``fused_single`` does, on lengths that reach every part of a kernel
(its vector loop and its tails), and uses it only then; elsewhere (no such library, a saxpy that rounds
twice, ``_lapack.enabled`` off) the callers keep the double way.

>>> import numpy as np
>>> y = np.ones(5000, np.float32)
>>> axpy_single(0.5, np.full(5000, 2, np.float32), y) in (True, False), float(y[0]) in (2.0, 1.0)
(True, True)
"""
from __future__ import annotations

import ctypes

import numpy as np

from ember import _lapack

FROM = 4096  # fewer elements: the ctypes call (about 1.5 us) costs more than computing in double
_SINGLE = np.dtype(np.float32)
_saxpy = None  # None: not checked yet; the ctypes function once it passed the check; False if it did not


def axpy_single(alpha: float, x: np.ndarray, y: np.ndarray) -> bool:
    """``y += alpha * x``, rounded once per element, for float32 ``x`` and ``y`` of one shape, both C-contiguous,
    ``y`` writable and not overlapping ``x`` (unless it is ``x`` itself), at least ``FROM`` elements. False, with
    nothing done, where saxpy cannot do that here."""
    if x.dtype is not _SINGLE or y.dtype is not _SINGLE or x.shape != y.shape or x.size < FROM \
            or not (x.flags.c_contiguous and y.flags.c_contiguous and y.flags.writeable) or not _lapack.enabled:
        return False
    if x.ctypes.data != y.ctypes.data and np.may_share_memory(x, y):
        return False
    saxpy = _saxpy if _saxpy is not None else _checked()
    if not saxpy:
        return False
    saxpy(x.size, alpha, x.ctypes.data, 1, y.ctypes.data, 1)
    return True


def _checked():
    """The library's saxpy if it rounds as ``fused_single`` on every length probed, else False (kept either way)."""
    global _saxpy
    _saxpy = False
    saxpy = _lapack._function("axpy", _SINGLE)
    if saxpy is not None and _rounds_once(saxpy):
        _saxpy = saxpy
    return _saxpy


def _rounds_once(saxpy) -> bool:
    from ember._ops.arithmetic import fused_single

    rng = np.random.default_rng(0)
    for n in list(range(1, 80)) + [4099, 65_537]:
        x, y = rng.standard_normal((2, n)).astype(_SINGLE)
        y[::2] = x[::2] * np.float32(-0.7) * np.float32(1 + 2 ** -20)  # near cancellation, where roundings differ
        for alpha in (0.7, -1.3e-3):
            expected = fused_single(y, x, np.float64(np.float32(alpha)))
            saxpy(n, alpha, x.ctypes.data, 1, y.ctypes.data, 1)
            if not np.array_equal(y.view(np.int32), expected.view(np.int32)):
                return False
            y = expected
    return True
