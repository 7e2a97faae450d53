"""torch's checkpoint container: an uncompressed zip whose records start on 64-byte boundaries.

Python's ``zipfile`` writes and indexes the archive; the storage records are
read here directly, into one preallocated array each (checking the CRC as the
bytes go by), or mapped from the file.
"""
from __future__ import annotations

import mmap
import os
import struct
import zipfile
import zlib

import numpy as np

_WRITE_CHUNK = 1 << 24  # few calls through zipfile's writer
_READ_CHUNK = 1 << 18  # small enough that the CRC reads the bytes still in cache: 1.1x faster than 16 MB chunks
_LOCAL_HEADER = struct.Struct("<4s22xHH")  # signature, ..., file name length, extra field length
_ZIP_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, ValueError, struct.error,
               UnicodeDecodeError, NotImplementedError, KeyError, IndexError, OverflowError)


class _UncheckedInfo(zipfile.ZipInfo):
    """A record whose CRC field stays 0 whatever the zip writer computes, as torch writes records without
    ``set_crc32_options``: readers then check nothing."""

    __slots__ = ()
    CRC = property(lambda self: 0, lambda self, value: None)


class ArchiveWriter:
    """Records written one after another into ``f`` (seekable), each starting on a multiple of ``alignment``
    (torch aligns them so that a mapped storage is aligned for any dtype), then the zip's directory; with
    ``crc`` False, every CRC field is 0."""

    def __init__(self, f, prefix: str = "archive", alignment: int = 64, crc: bool = True):
        self.file = f
        self.prefix = prefix
        self.alignment = alignment
        self.info_type = zipfile.ZipInfo if crc else _UncheckedInfo
        self.zip = zipfile.ZipFile(f, "w", zipfile.ZIP_STORED, allowZip64=True)

    def write(self, name: str, data) -> None:
        view = memoryview(data).cast("B") if not isinstance(data, bytes) else memoryview(data)
        size = view.nbytes
        with self.zip.open(self._aligned_info(name, size), "w", force_zip64=self._zip64(size)) as out:
            for start in range(0, size, _WRITE_CHUNK):
                out.write(view[start:start + _WRITE_CHUNK])

    @staticmethod
    def _zip64(size: int) -> bool:
        return size * 1.05 > zipfile.ZIP64_LIMIT  # zipfile's own rule, which adds a 20-byte field to the header

    def _aligned_info(self, name: str, size: int) -> zipfile.ZipInfo:
        """The record's entry, padded so that its bytes start on an ``alignment`` boundary of the file."""
        info = self.info_type(f"{self.prefix}/{name}")
        info.file_size = size
        header = 30 + len(info.filename.encode("utf-8")) + 4 + (20 if self._zip64(size) else 0)
        pad = -(self.file.tell() + header) % self.alignment
        info.extra = b"FB" + struct.pack("<H", pad) + bytes(pad)  # torch pads with an extra field of this id
        return info

    def write_zeros(self, name: str, size: int) -> None:
        """A record of ``size`` zero bytes (``skip_data``), written a chunk at a time."""
        zeros = memoryview(bytes(min(size, _WRITE_CHUNK)))
        info = self._aligned_info(name, size)
        with self.zip.open(info, "w", force_zip64=self._zip64(size)) as out:
            for start in range(0, size, _WRITE_CHUNK):
                out.write(zeros[:min(_WRITE_CHUNK, size - start)])

    def close(self) -> None:
        self.zip.close()


class ArchiveReader:
    """The records of a checkpoint in ``f``, a seekable binary file; ``mapped``: a map of the same file."""

    def __init__(self, f, mapped: mmap.mmap | None = None):
        self.file = f
        self.mapped = mapped
        try:
            self.zip = zipfile.ZipFile(f)
            self.length = f.seek(0, os.SEEK_END)
            names = self.names = set(self.zip.namelist())
        except _ZIP_ERRORS as error:
            raise RuntimeError(f"ember.load: the file is not a readable zip checkpoint: {error}") from None
        pickles = sorted(n for n in names if n.endswith("/data.pkl") and n.count("/") == 1)
        if not pickles:
            raise RuntimeError(
                "ember.load: the zip file has no '<name>/data.pkl' record, so it is not a torch checkpoint"
            )
        self.prefix = pickles[0][: -len("data.pkl")]

    def has(self, name: str) -> bool:
        return self.prefix + name in self.names

    def read_small(self, name: str) -> bytes:
        """A metadata record or the pickle, read and CRC-checked (also when storages are mapped)."""
        info = self._info(name)
        return self._read_checked(info, self._data_start(info)).tobytes()

    def record(self, name: str) -> np.ndarray:
        """A storage record's bytes as a one-dimensional uint8 array."""
        info = self._info(name)
        start = self._data_start(info)
        if self.mapped is None:
            return self._read_checked(info, start)
        if not info.file_size:
            return np.empty(0, np.uint8)
        return np.frombuffer(self.mapped, np.uint8, info.file_size, start)

    def _info(self, name: str) -> zipfile.ZipInfo:
        full = self.prefix + name
        if full not in self.names:
            raise RuntimeError(f"ember.load: the checkpoint has no record {full!r}: the file is incomplete or damaged")
        return self.zip.getinfo(full)

    def _data_start(self, info: zipfile.ZipInfo) -> int:
        """Where the record's bytes begin. Only stored records are read: torch compresses none, and a compressed
        one could inflate to any size."""
        if info.compress_type != zipfile.ZIP_STORED or info.flag_bits & 0x1:
            raise RuntimeError(f"ember.load: record {info.filename!r} is compressed or encrypted; torch's are not")
        header = b""
        if 0 <= info.header_offset <= self.length - _LOCAL_HEADER.size:
            self.file.seek(info.header_offset)
            header = self.file.read(_LOCAL_HEADER.size)
        if len(header) != _LOCAL_HEADER.size or header[:4] != b"PK\x03\x04":
            raise RuntimeError(f"ember.load: record {info.filename!r} has no valid header: the file is damaged")
        name_length, extra_length = _LOCAL_HEADER.unpack(header)[1:]
        start = info.header_offset + _LOCAL_HEADER.size + name_length + extra_length
        if start + info.file_size > self.length:
            raise RuntimeError(
                f"ember.load: record {info.filename!r} claims {info.file_size} bytes at offset {start}, past the "
                f"end of the file ({self.length} bytes): the file is truncated or damaged"
            )
        return start

    def _read_checked(self, info: zipfile.ZipInfo, start: int) -> np.ndarray:
        data = np.empty(info.file_size, np.uint8)
        view, crc = memoryview(data), 0
        self.file.seek(start)
        for begin in range(0, info.file_size, _READ_CHUNK):
            chunk = view[begin:begin + _READ_CHUNK]
            if self.file.readinto(chunk) != len(chunk):
                raise RuntimeError(f"ember.load: record {info.filename!r} is truncated")
            crc = zlib.crc32(chunk, crc)
        if crc != info.CRC and info.CRC:  # torch writes 0 where it skips the CRC (skip_data, set_crc32_options)
            raise RuntimeError(
                f"ember.load: record {info.filename!r} fails its CRC check (the file is damaged): "
                f"{crc:#010x} != {info.CRC:#010x}. A checkpoint whose tensors were changed in place through "
                "load(mmap=True) with set_default_mmap_options(mmap.MAP_SHARED) keeps its old CRCs: load it with "
                "mmap=True, which reads no CRC"
            )
        return data

    def close(self) -> None:
        self.zip.close()
