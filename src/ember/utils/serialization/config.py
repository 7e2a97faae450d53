"""What ``ember.save`` and ``ember.load`` do when an argument does not say, as torch's
``torch.utils.serialization.config``: set an attribute and every later save or load follows it.
``ember.serialization``'s setters (``set_crc32_options``, ``set_default_load_endianness``,
``set_default_mmap_options``) write these same attributes.

>>> from ember.utils.serialization import config
>>> config.save.compute_crc32, config.save.storage_alignment, config.load.mmap
(True, 64, False)
"""
from __future__ import annotations

import mmap as _mmap
from typing import Any


class load:
    """Defaults of ``ember.load``."""

    mmap: bool = False  # what mmap=None means
    endianness: Any = None  # a LoadEndianness: the byte order of a checkpoint without a byteorder record
    mmap_flags: int | None = getattr(_mmap, "MAP_PRIVATE", None)  # MAP_PRIVATE or MAP_SHARED, for mmap=True
    calculate_storage_offsets: bool = False  # (torch's; ember always finds each record through the zip's index)


class save:
    """Defaults of ``ember.save``."""

    compute_crc32: bool = True  # False: every record's CRC field is written as 0, which torch and ember skip
    use_pinned_memory_for_d2h: bool = False  # (torch's, for copies from a GPU; ember runs on the CPU)
    storage_alignment: int = 64  # the byte boundary each record's data starts on
