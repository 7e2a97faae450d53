"""What the unsigned dtypes wider than a byte (uint16, uint32, uint64) need beyond their entries in ``_dtype``.

torch gives them "limited support": they never promote with another integer or bool type (``_dtype``
refuses that), and uint64 takes Python ints up to 2**64 - 1, which NumPy's default int64 cannot hold.

>>> import ember
>>> ember.tensor([2 ** 64 - 1], dtype=ember.uint64)
tensor([18446744073709551615], dtype=ember.uint64)
"""
from __future__ import annotations

import numpy as np

_TOP = 2 ** 64


def uint64_numbers(op: str, data) -> np.ndarray:
    """Python ints (nested lists too) as uint64. Unlike the narrower unsigned types, torch does not wrap a
    negative int into uint64, and refuses one, as it refuses an int from 2**64 up.

    >>> uint64_numbers("tensor", [[0, 2 ** 63]])
    array([[                  0, 9223372036854775808]], dtype=uint64)
    """
    natural = np.array(data, dtype=object if _has_big(data) else None)
    if natural.size and natural.dtype.kind in "iuO":
        low, high = natural.min(), natural.max()
        if low < 0:
            raise OverflowError(f"{op}: can't convert negative int to unsigned (got {low}): uint64 holds 0 to "
                                "2**64 - 1; pass dtype=ember.int64 for negative values")
        if high >= _TOP:
            raise OverflowError(f"{op}: int too big to convert (got {high}): uint64 holds at most 2**64 - 1")
    return natural.astype(np.uint64)


def _has_big(data) -> bool:
    """Whether a (nested) list holds an int beyond int64, which NumPy would otherwise make uint64 or object."""
    if isinstance(data, (list, tuple)):
        return any(_has_big(item) for item in data)
    return type(data) is int and not -2 ** 63 <= data < 2 ** 63
