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


def shared_memory(a: np.ndarray, b: np.ndarray) -> "str | None":
    """How ``a`` and ``b`` share memory, as torch tells it: 'full' (the same elements, laid out alike), 'partial'
    (some elements), or None (none; or too hard to tell, where one is not dense: torch then checks nothing).

    >>> x = np.arange(8.)
    >>> shared_memory(x[:4], x[:4]), shared_memory(x[2:], x[:4]), shared_memory(x[4:], x[:4]), shared_memory(x, x[::2])
    ('full', 'partial', None, None)
    """
    if not a.size or not b.size or not same_owner(a, b) or not (_dense(a) and _dense(b)):
        return None
    a_low, b_low = a.__array_interface__["data"][0], b.__array_interface__["data"][0]
    a_high, b_high = a_low + a.nbytes, b_low + b.nbytes  # dense, with no negative stride: the bytes it spans
    if a_low == b_low and a_high == b_high:
        return "full" if a.strides == b.strides else "partial"
    return "partial" if a_low < b_high and b_low < a_high else None


def may_share(a, b) -> bool:
    """Whether tensors ``a`` and ``b`` may share memory, told cheaply for the in-place ops' hot paths: a view
    shares its base's version counter, so tensors with different counters (or none yet) are taken as apart.
    Memory shared around the views (two ``from_numpy`` of one array, ``.data``) is not seen: such a write then
    runs as NumPy's, as if from a copy of the input, where torch would refuse it."""
    counter = a._vc
    return counter is not None and counter is b._vc


def same_owner(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether ``a`` and ``b`` lie in memory of one owner (a quick test: arrays that do not cannot share memory)."""
    return _owner(a) is _owner(b)


def _owner(array: np.ndarray):
    """The array (or other object) that owns ``array``'s memory: arrays that share memory share it."""
    while isinstance(array.base, np.ndarray):
        array = array.base
    return array if array.base is None else array.base


def _dense(array: np.ndarray) -> bool:
    """Whether ``array``'s elements fill the memory they span, each once, in some order of its dims."""
    if array.flags.c_contiguous or array.flags.f_contiguous:
        return True
    expected = array.itemsize
    for stride, size in sorted((s, n) for s, n in zip(array.strides, array.shape) if n != 1):
        if stride != expected:
            return False
        expected *= size
    return True


def refuse_shared_memory(op: str, target: np.ndarray, source: np.ndarray, full_too: bool = False) -> None:
    """As torch: an in-place op refuses an input that shares part of the written memory (its result would depend
    on the order of the writes); an index op refuses one that shares any of it (``full_too``)."""
    shared = shared_memory(target, source)
    if shared == "partial" or shared == "full" and full_too:
        raise RuntimeError(f"{op}(): unsupported operation: some elements of the input tensor and the written-to "
                           "tensor refer to a single memory location; clone() the input first")
