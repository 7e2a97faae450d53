"""What the dtypes can hold: ``finfo``, ``iinfo`` and ``can_cast``, as torch has them.

>>> import ember
>>> ember.finfo(ember.float16)
finfo(resolution=0.001, min=-65504, max=65504, eps=0.000976562, smallest_normal=6.10352e-05, tiny=6.10352e-05, dtype=float16)
>>> ember.iinfo(ember.uint8).max, ember.can_cast(ember.float32, ember.int32)
(255, False)
"""
from __future__ import annotations

import numpy as np

from ember import _dtype


class finfo:
    """The limits of a floating dtype (the default dtype if none is given)."""

    __module__ = "ember"  # where users reach it (the class prints as ember.finfo)

    def __init__(self, type: _dtype.dtype | None = None):
        d = _dtype.defaults.floating if type is None else _dtype.to_dtype(type).to_real()  # complex: its parts'
        if not d.is_floating_point:
            raise TypeError("ember.finfo() requires a floating point input type. Use ember.iinfo to handle 'ember.finfo'")
        info = numpy_finfo(d)
        self.bits = info.bits
        self.eps, self.max, self.min = float(info.eps), float(info.max), float(info.min)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        self.resolution = 10.0 ** -info.precision  # as torch: a power of ten (NumPy's is rounded to the dtype)
        self.dtype = d.name

    def __repr__(self) -> str:
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})")


def numpy_finfo(d: _dtype.dtype):
    """NumPy's limits of ``d``; bfloat16's come from ml_dtypes, whose finfo NumPy's does not know."""
    if d.name == "bfloat16":
        import ml_dtypes  # d.np above has already said how to install it, if it is missing

        return ml_dtypes.finfo(d.np)
    return np.finfo(d.np)


class iinfo:
    """The limits of an integer dtype."""

    __module__ = "ember"

    def __init__(self, type: _dtype.dtype):
        d = _dtype.to_dtype(type)
        if d.is_floating_point or d.is_complex or d is _dtype.bool_:
            raise TypeError(f"ember.iinfo() requires an integer input type. Use ember.finfo to handle '{d!r}'")
        info = np.iinfo(d.np)
        self.bits, self.max, self.min, self.dtype = info.bits, int(info.max), int(info.min), d.name

    def __repr__(self) -> str:
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"  # as torch: 6 digits


def can_cast(from_: _dtype.dtype, to: _dtype.dtype) -> bool:
    """Whether torch's casting rule allows ``from_`` into ``to``: never to a lower category (float to int, int to bool)."""
    return _dtype.to_dtype(from_)._kind <= _dtype.to_dtype(to)._kind
