"""The settings of ``save`` and ``load`` that ``ember.serialization`` exposes, as torch.serialization's.

- ``skip_data()``: a ``with`` block in which ``save`` writes each storage's record as zeros of its size (the
  bytes can be written in a later pass) and ``load`` builds tensors of the right shapes without reading theirs;
- ``set_default_load_endianness``: the byte order of a checkpoint that has no ``byteorder`` record;
- ``set_default_mmap_options``: whether ``load(mmap=True)`` maps the file privately (changes stay in the
  process) or shared (changes reach the file);
- ``set_crc32_options``: whether ``save`` writes each record's CRC-32.

All but ``skip_data`` live in ``ember.utils.serialization.config``, where torch keeps them.

>>> import io, ember
>>> buffer = io.BytesIO()
>>> with ember.serialization.skip_data():
...     ember.save(ember.ones(3), buffer)
>>> ember.load(io.BytesIO(buffer.getvalue()))
tensor([0., 0., 0.])
"""
from __future__ import annotations

import enum
import mmap
import sys
import threading

from ember.utils.serialization import config

MAP_PRIVATE = getattr(mmap, "MAP_PRIVATE", None)  # (Windows has neither)
MAP_SHARED = getattr(mmap, "MAP_SHARED", None)


class LoadEndianness(enum.Enum):
    """The byte orders ``set_default_load_endianness`` takes."""

    NATIVE = 1
    LITTLE = 2
    BIG = 3


def get_default_load_endianness() -> LoadEndianness | None:
    """The byte order assumed for a checkpoint without a ``byteorder`` record (None: little-endian, the order of
    the files written before the record existed)."""
    return config.load.endianness


def set_default_load_endianness(endianness: LoadEndianness | None) -> None:
    """Assume ``endianness`` for checkpoints without a ``byteorder`` record.

    >>> import ember
    >>> ember.serialization.set_default_load_endianness(ember.serialization.LoadEndianness.LITTLE)
    >>> ember.serialization.set_default_load_endianness(None)  # back to the default
    """
    if endianness is not None and not isinstance(endianness, LoadEndianness):
        raise TypeError(f"Invalid argument type in function set_default_load_endianness: expected a "
                        f"LoadEndianness or None, got {type(endianness).__name__}")
    config.load.endianness = endianness


def fallback_byte_order() -> str:
    """``"little"`` or ``"big"``: what a checkpoint without a ``byteorder`` record is read as."""
    endianness = config.load.endianness
    if endianness is LoadEndianness.BIG:
        return "big"
    if endianness is LoadEndianness.NATIVE:
        return sys.byteorder
    return "little"


def get_crc32_options() -> bool:
    """Whether ``save`` computes and writes each record's CRC-32 (the default, True).

    >>> import ember
    >>> ember.serialization.get_crc32_options()
    True
    """
    return config.save.compute_crc32


def set_crc32_options(compute_crc32: bool) -> None:
    """Whether ``save`` writes each record's CRC-32. With False the CRC fields hold 0, as torch writes them:
    ``ember.load`` and ``torch.load`` read such files (without checking), while zip tools report bad CRCs.

    >>> import io, ember
    >>> ember.serialization.set_crc32_options(False)
    >>> buffer = io.BytesIO()
    >>> ember.save(ember.ones(2), buffer)
    >>> ember.serialization.set_crc32_options(True)
    >>> ember.load(io.BytesIO(buffer.getvalue()))
    tensor([1., 1.])
    """
    config.save.compute_crc32 = compute_crc32


def get_default_mmap_options() -> int | None:
    """``mmap.MAP_PRIVATE`` (the default) or ``mmap.MAP_SHARED``: how ``load(mmap=True)`` maps the file."""
    return config.load.mmap_flags


class set_default_mmap_options:
    """Map files for ``load(mmap=True)`` with ``flags``: ``mmap.MAP_PRIVATE`` (writes to the tensors stay in the
    process) or ``mmap.MAP_SHARED`` (they reach the file). Called, it sets the default; as a ``with`` block, it
    sets it for the block.

    >>> import mmap, ember
    >>> with ember.serialization.set_default_mmap_options(mmap.MAP_SHARED):
    ...     ember.serialization.get_default_mmap_options() == mmap.MAP_SHARED
    True
    >>> ember.serialization.get_default_mmap_options() == mmap.MAP_PRIVATE
    True
    """

    def __init__(self, flags: int) -> None:
        if MAP_PRIVATE is None:
            raise RuntimeError("Changing the default mmap options is not supported on this platform (no mmap flags)")
        if flags != MAP_PRIVATE and flags != MAP_SHARED:
            raise ValueError("Invalid argument in function set_default_mmap_options, expected mmap.MAP_PRIVATE or "
                             f"mmap.MAP_SHARED, but got {flags}")
        self.previous = config.load.mmap_flags
        config.load.mmap_flags = flags

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc_info) -> None:
        config.load.mmap_flags = self.previous


_thread = threading.local()  # skip_data is per thread, as a save on another thread is another program's


class skip_data:
    """In this block, ``save`` writes every storage record as zeros of its size, and ``load`` builds each
    tensor over zeros without reading its record: a checkpoint's layout written (or read) without its data.

    ``materialize_fake_tensors`` is accepted for torch's signature: ember has no fake tensors.
    """

    def __init__(self, materialize_fake_tensors: bool = False) -> None:
        self.materialize_fake_tensors = materialize_fake_tensors

    def __enter__(self) -> None:
        self.previous = skipping_data()
        _thread.skip_data = True

    def __exit__(self, *exc_info) -> None:
        _thread.skip_data = self.previous


def skipping_data() -> bool:
    """Whether a ``skip_data`` block is open on this thread."""
    return getattr(_thread, "skip_data", False)
