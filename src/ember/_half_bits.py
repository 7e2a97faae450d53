"""float32 <-> float16 conversions on bit patterns, bit for bit as NumPy's casts, several times faster on large
arrays.

NumPy converts between single and half one element at a time (a scalar loop). Here the common elements go
through a few whole-array integer passes instead:

- half to single reads each half's single from a table of all 65536 (filled once by NumPy's own cast);
- single to half rounds the bit patterns of singles in the half's normal range with integer adds (round to
  nearest, ties to even), and leaves the rest (zeros, subnormals, overflows, infinities, NaNs) to NumPy's
  cast, element by element where there are few, or for the whole array where there are many.

>>> import numpy as np
>>> x = np.linspace(-70000, 70000, 5000, dtype=np.float32)
>>> np.array_equal(half_from_single(x).view(np.uint16), x.astype(np.float16).view(np.uint16))
True
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

BITWISE_FROM = 4096
"""Elements from which the bitwise conversions beat NumPy's casts (below, the passes' overheads dominate)."""

_SIGNLESS = np.uint32(0x7FFFFFFF)
_HALF_NORMAL_LOW = np.uint32(0x38800000)  # 2 ** -14, the smallest normal half, as single bits
_HALF_NORMAL_SPAN = np.uint32(0x47800000 - 0x38800000)  # up to 2 ** 16: above lies only overflow
# from 2 ** -14 up to a half's exponent 1 (the bits below stay), plus half a half's ulp less one
_REBIASED_HALF_ULP = np.uint32(0x00800FFF)
_DROPPED_BITS = np.uint32(13)  # a single's mantissa has 13 bits more than a half's
_ONE = np.uint32(1)
_SIGN_SHIFT, _HALF_SIGN = np.uint32(16), np.uint32(0x8000)  # a single's sign bit, 31, is a half's 15
_MOSTLY_RARE = 8  # one element in this many needing NumPy's cast: NumPy's cast for the whole array


def half_from_single(single: np.ndarray) -> np.ndarray:
    """``single.astype(np.float16)``, bit for bit, for a float32 array of any shape and layout."""
    if single.size < BITWISE_FROM:
        return single.astype(np.float16)
    flat = np.ascontiguousarray(single).reshape(-1)
    bits = flat.view(np.uint32)
    from_normal_low = bits & _SIGNLESS
    from_normal_low -= _HALF_NORMAL_LOW  # wraps below 0: such elements then look huge, as they are rare
    rare = from_normal_low >= _HALF_NORMAL_SPAN
    rare_count = np.count_nonzero(rare)
    if rare_count * _MOSTLY_RARE > flat.size:
        return single.astype(np.float16)
    half_bits = _rounded_half_bits(from_normal_low, bits)
    if rare_count:
        positions = np.flatnonzero(rare)
        half_bits[positions] = flat[positions].astype(np.float16).view(np.uint16)
    return half_bits.view(np.float16).reshape(single.shape)


def _rounded_half_bits(from_normal_low: np.ndarray, bits: np.ndarray) -> np.ndarray:
    """The half bits of singles (``bits``) in the half's normal range, given their signless bits less those
    of 2 ** -14 (overwritten): the exponent rebiased and the mantissa cut to 10 bits, rounded to nearest even
    (adding half an ulp less one, and one more where the kept mantissa is odd, carries exactly at or past
    the midpoint; a carry out of the mantissa moves to the next exponent, up to infinity)."""
    scratch = bits >> _DROPPED_BITS  # the lowest mantissa bit the half keeps, then the sign (one buffer)
    scratch &= _ONE
    from_normal_low += scratch
    from_normal_low += _REBIASED_HALF_ULP
    from_normal_low >>= _DROPPED_BITS
    np.right_shift(bits, _SIGN_SHIFT, out=scratch)
    scratch &= _HALF_SIGN
    from_normal_low |= scratch
    return from_normal_low.astype(np.uint16)


def single_from_half(half: np.ndarray) -> np.ndarray:
    """``half.astype(np.float32)``, bit for bit, for a float16 array of any shape and layout."""
    if half.size < BITWISE_FROM:
        return half.astype(np.float32)
    return np.take(_singles_of_every_half(), half.view(np.uint16))


@lru_cache(maxsize=1)
def _singles_of_every_half() -> np.ndarray:
    """The single of each of the 65536 half bit patterns, by NumPy's cast (256 KiB, filled on first use)."""
    table = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16).astype(np.float32)
    table.flags.writeable = False
    return table
