"""Writing into memory that NumPy marks read-only because it was seen through an expand.

An expanded tensor's array shows some elements more than once (a dim of stride 0), and ember keeps such
arrays read-only so that an in-place op cannot write two results into one place. NumPy passes the flag on to
every view, though a view (``x.expand(3, 4)[:, 0]``) may show each element once: torch writes into such a
view, and into the expanded tensor itself for the writes whose result does not depend on the order of the
elements (``fill_``, ``zero_``, a write at positions). ``writable_alias`` gives those writes a writable view
of the same memory; memory that is read-only where it is owned (ember's shared constants, a read-only NumPy
array) has none.

>>> base = np.zeros(3)
>>> seen_twice = np.broadcast_to(base, (2, 3))
>>> overlaps(seen_twice), overlaps(seen_twice[0])
(True, False)
>>> writable_alias(seen_twice[0])[1] = 5.0
>>> base
array([0., 5., 0.])
"""
from __future__ import annotations

import numpy as np


def overlaps(array: np.ndarray) -> bool:
    """Whether ``array`` shows some element more than once (a dim of stride 0 and size above 1)."""
    for n, stride in zip(array.shape, array.strides):
        if stride == 0 and n > 1:
            return True
    return False


class _Memory:
    """What NumPy views through ``__array_interface__``; it keeps the memory's owner alive."""

    def __init__(self, interface: dict, owner: np.ndarray):
        self.__array_interface__ = interface
        self.base = owner


def writable_alias(array: np.ndarray) -> np.ndarray | None:
    """A writable view of exactly ``array``'s elements, if the memory they lie in is writable where it is owned;
    else None."""
    owner = array.base
    while owner is not None:
        if isinstance(owner, np.ndarray) and owner.flags.writeable:
            interface = dict(array.__array_interface__)
            interface["data"] = (interface["data"][0], False)  # (address, read-only)
            return np.asarray(_Memory(interface, owner))
        owner = getattr(owner, "base", None)
    return None


def assign(target: np.ndarray, value) -> None:
    """``target[...] = value``, through ``writable_alias`` where NumPy marks ``target`` read-only only because it
    was seen through an expand (the caller has made sure that the order of its elements does not matter)."""
    try:
        target[...] = value
    except ValueError:
        alias = None if target.flags.writeable else writable_alias(target)
        if alias is None:
            raise
        alias[...] = value
