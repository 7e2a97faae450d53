"""float32 to float16 for gradient compression, fast where NumPy's conversion is slow.

NumPy converts values that are subnormal in float16 (below 2**-14 in magnitude, common among gradients)
some 40 times slower than normal ones, which made compression cost more than it saved. A float16
subnormal is a sign and a count of steps of 2**-24, so those values are converted here by rounding
(to nearest, ties to even, as IEEE and NumPy do) to whole steps, and written as bits. The results are
bit for bit NumPy's. (The way back, float16 to float32, NumPy does at a tolerable speed.)
"""
from __future__ import annotations

import numpy as np

_STEPS = np.float32(2.0 ** 24)  # float16 subnormals are multiples of 2**-24
_SMALLEST_NORMAL = np.float32(2.0 ** -14)


def to_half(a: np.ndarray) -> np.ndarray:
    """A float32 array as float16 (NumPy's rounding; beyond float16's range, infinity without a warning)."""
    with np.errstate(over="ignore"):
        magnitude = np.abs(a)
        tiny = magnitude < _SMALLEST_NORMAL  # NaN compares False: the normal path keeps it
        if not tiny.any():
            return a.astype(np.float16)
        bits = np.where(tiny, np.float32(0), a).astype(np.float16).view(np.uint16)
        steps = np.rint(np.fmin(magnitude, _SMALLEST_NORMAL) * _STEPS).astype(np.uint16)
        steps |= np.signbit(a).astype(np.uint16) << 15
        return np.where(tiny, steps, bits).view(np.float16)
