"""``y += alpha * x`` on float32 arrays, each element rounded once, by the saxpy of NumPy's OpenBLAS.

torch adds a multiple of a float32 tensor (``add(alpha=)``, ``add_``, ``lerp``) with a fused multiply-add:
every element rounded once. ember's own way to round once computes in double (``arithmetic.fused_single``):
five passes over arrays twice as wide, ten to twenty-five times torch's time on a million elements. The
saxpy kernels of OpenBLAS for CPUs with FMA use it, in one pass at memory speed. On its first call this module
checks that the saxpy at hand rounds as ``fused_single`` does, on lengths that reach every part of a kernel
(its vector loop and its tails), and uses it only then; elsewhere (no such library, a saxpy that rounds
twice, ``_lapack.enabled`` off) the callers keep the double way.

Reading an array's address (``.ctypes.data``) costs about 2 us, more than saxpy's whole call on 8,192 elements.
A pair of arrays updated step after step (a momentum buffer and its parameter) is passed as ``lasting``: it is
checked and its addresses read once, kept while the arrays live, so that the one-rounding update is also the
faster one from about a thousand elements up and costs a fraction of a microsecond more below.

>>> import numpy as np
>>> y = np.ones(5000, np.float32)
>>> axpy_single(0.5, np.full(5000, 2, np.float32), y) in (True, False), float(y[0]) in (2.0, 1.0)
(True, True)
"""
from __future__ import annotations

import ctypes
import weakref

import numpy as np

from ember import _lapack

FROM = 4096  # fewer elements: reading two addresses and the ctypes call cost more than computing in double
_SINGLE = np.dtype(np.float32)
_saxpy = None  # None: not checked yet; the ctypes function once it passed the check; False if it did not


def axpy_single(alpha: float, x: np.ndarray, y: np.ndarray, lasting: bool = False) -> bool:
    """``y += alpha * x``, rounded once per element, for float32 ``x`` and ``y`` of one shape, both C-contiguous,
    ``y`` writable and not overlapping ``x`` (unless it is ``x`` itself), at least ``FROM`` elements. False, with
    nothing done, where saxpy cannot do that here.

    ``lasting``: ``x`` and ``y`` are a pair updated call after call (a momentum buffer and its parameter), of
    any size. They are checked on their first call only, and their addresses kept while both live: an array's
    data, shape and dtype stay as they are while it lives (NumPy refuses to resize in place an array that has a
    weak reference), and these arrays are not made read-only in between."""
    if lasting:
        kept = _pairs.get(id(y))
        if kept is None or kept[0]() is not y or kept[1]() is not x:
            kept = _keep(x, y)
        if kept[2] is None or not _lapack.enabled:
            return False
        size, x_at, y_at = kept[2]
        _saxpy(size, alpha, x_at, 1, y_at, 1)
        return True
    addresses = _addresses(x, y, FROM)
    if addresses is None:
        return False
    _saxpy(x.size, alpha, addresses[0], 1, addresses[1], 1)
    return True


def _addresses(x: np.ndarray, y: np.ndarray, least: int) -> tuple | None:
    """The data addresses of ``x`` and ``y`` if saxpy can add the one into the other, as ``axpy_single`` says."""
    if x.dtype is not _SINGLE or y.dtype is not _SINGLE or x.shape != y.shape or x.size < least \
            or not (x.flags.c_contiguous and y.flags.c_contiguous and y.flags.writeable) or not _lapack.enabled:
        return None
    if not (_saxpy if _saxpy is not None else _checked()):
        return None
    x_at, y_at = x.ctypes.data, y.ctypes.data
    # (both contiguous: each spans exactly [address, address + nbytes))
    if x_at != y_at and x_at < y_at + y.nbytes and y_at < x_at + x.nbytes:
        return None
    return x_at, y_at


# id(y) -> (a weak reference to y, one to x, and saxpy's size and two addresses, or None where it cannot add x
# into y), while y lives
_pairs: dict = {}


def _keep(x: np.ndarray, y: np.ndarray) -> tuple:
    addresses = _addresses(x, y, 0)
    key = id(y)
    kept = (weakref.ref(y, lambda _, key=key: _pairs.pop(key, None)), weakref.ref(x),
            None if addresses is None else (x.size,) + addresses)
    if _lapack.enabled:  # (switched off, it is checked again when switched on)
        _pairs[key] = kept
    return kept


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
