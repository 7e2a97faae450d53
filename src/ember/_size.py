"""``ember.Size``: the shape of a tensor, a tuple of ints.

>>> Size([2, 3])
ember.Size([2, 3])
>>> Size([2, 3]).numel()
6
"""
from __future__ import annotations

import math
import operator


class Size(tuple):
    """A tuple of dimension sizes that prints like ``ember.Size([2, 3])``."""

    __module__ = "ember"  # so that the class prints as ember.Size, where users reach it

    def __new__(cls, sizes=()):
        size = tuple.__new__(cls, sizes)
        for n in size:  # (a loop, not all(...), as every .shape passes here: the ints need no conversion)
            if type(n) is not int:
                break
        else:
            return size
        return tuple.__new__(cls, [_dim_size(n, i) for i, n in enumerate(size)])

    def __repr__(self) -> str:
        return f"ember.Size({list(self)})"

    def numel(self) -> int:
        return math.prod(self)

    def __getitem__(self, index):
        item = tuple.__getitem__(self, index)
        return Size(item) if isinstance(index, slice) else item

    def __add__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented  # so `size + [4]` fails as `tuple + list` does
        return Size(tuple.__add__(self, other))

    def __radd__(self, other):  # (4,) + size is a Size too
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple.__add__(other, self))

    def __mul__(self, times):
        result = tuple.__mul__(self, times)
        return result if result is NotImplemented else Size(result)

    __rmul__ = __mul__


def _dim_size(item, position: int) -> int:
    """``item`` as a plain int, as torch takes it: anything with ``__index__`` (a bool, a NumPy integer,
    a one-element integer tensor)."""
    try:
        return operator.index(item)
    except TypeError:
        raise TypeError(
            f"ember.Size() takes an iterable of 'int' (item {position} is '{type(item).__name__}')"
        ) from None
