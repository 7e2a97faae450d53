"""Checkpoints in PyTorch's own file format: ``ember.save`` writes what ``torch.load`` reads, and back.

A checkpoint is an uncompressed zip holding ``data.pkl`` (the pickled object,
each tensor a call to torch's rebuild function over a storage id), one record
per storage under ``data/``, and ``byteorder`` and ``version`` records.
Loading is weights-only by default: the pickle may build tensors, parameters and
plain containers and call nothing else (see ``add_safe_globals`` to allow more).

>>> import io, ember
>>> buffer = io.BytesIO()
>>> x = ember.arange(6.).view(2, 3)
>>> ember.save({"x": x, "row": x[1]}, buffer)
>>> loaded = ember.load(io.BytesIO(buffer.getvalue()))
>>> loaded["row"]
tensor([3., 4., 5.])
>>> loaded["row"][0] = 9.  # the row still views the same storage as x
>>> loaded["x"]
tensor([[0., 1., 2.],
        [9., 4., 5.]])
"""
from __future__ import annotations

import contextlib
import io
import mmap as _mmap
import os
import pickle
import struct
import sys
import tempfile
import warnings
from typing import IO, Any, Callable, Union

from ember.serialization._archive import ArchiveReader, ArchiveWriter
from ember.serialization._loading import LEGACY_MAGIC, LEGACY_PROTOCOL, read_archive, read_legacy
from ember.serialization._locations import (
    SourceChangeWarning, check_module_version_greater_or_equal, default_restore_location, location_tag, mkdtemp,
    validate_cuda_device,
)
from ember.serialization._options import (
    LoadEndianness, get_crc32_options, get_default_load_endianness, get_default_mmap_options, set_crc32_options,
    set_default_load_endianness, set_default_mmap_options, skip_data, skipping_data,
)
from ember.serialization._options import MAP_SHARED as _MAP_SHARED
from ember.serialization._pickler import Pickler
from ember.serialization._safe_globals import add_safe_globals, clear_safe_globals, get_safe_globals, safe_globals
from ember.serialization._unpickler import UnpicklingError, unsafe_globals
from ember.utils.serialization import config

__all__ = [
    "DEFAULT_PROTOCOL", "LoadEndianness", "SourceChangeWarning", "UnpicklingError", "add_safe_globals",
    "check_module_version_greater_or_equal", "clear_safe_globals", "default_restore_location", "location_tag",
    "mkdtemp", "validate_cuda_device", "get_crc32_options", "set_crc32_options", "get_default_load_endianness",
    "get_default_mmap_options", "get_safe_globals", "get_unsafe_globals_in_checkpoint",
    "load", "safe_globals", "save", "set_default_load_endianness", "set_default_mmap_options", "skip_data",
]

DEFAULT_PROTOCOL = 2  # torch's: files stay readable by every Python 3

FileLike = Union[str, os.PathLike, IO[bytes]]


def save(obj: Any, f: FileLike, pickle_module: Any = pickle, pickle_protocol: int = DEFAULT_PROTOCOL,
         _use_new_zipfile_serialization: bool = True, _disable_byteorder_record: bool = False) -> None:
    """Write ``obj`` (a tensor, a state dict, nested containers of tensors and plain values) to ``f``.

    ``f`` is a path or a binary file object. A path is written under a temporary
    name and renamed when complete, so a failed save never leaves a file that loads.
    Tensors that share memory are saved once and share it again when loaded.
    ``_use_new_zipfile_serialization=False`` writes torch's legacy format (before 1.6) instead.

    >>> import io, ember
    >>> buffer = io.BytesIO()
    >>> ember.save(ember.nn.Linear(2, 1).state_dict(), buffer)
    >>> sorted(ember.load(io.BytesIO(buffer.getvalue())))
    ['bias', 'weight']
    """
    if pickle_module is not pickle:
        raise ValueError("ember.save: pickle_module must be the pickle module; ember writes torch's format itself")
    if not _use_new_zipfile_serialization and skipping_data():
        raise RuntimeError("Cannot use skip_data=True with _use_new_zipfile_serialization=False: torch's legacy "
                           "format has no records to leave empty; save in the zip format")
    # (_disable_byteorder_record is accepted as torch accepts it: its zip writer keeps the record all the same)
    write = _write_checkpoint if _use_new_zipfile_serialization else _write_legacy
    if isinstance(f, (str, os.PathLike)):
        _save_atomically(obj, os.fspath(f), pickle_protocol, write)
    elif hasattr(f, "write"):
        _save_to_stream(obj, f, pickle_protocol, write)
    else:
        raise TypeError(f"ember.save: f must be a path or a binary file object, not {type(f).__name__}")


def _save_to_stream(obj: Any, f: IO[bytes], protocol: int, write: Callable) -> None:
    seekable = getattr(f, "seekable", lambda: False)()
    target = f if seekable else io.BytesIO()  # zip records are aligned by file position, which needs tell()
    write(obj, target, protocol)
    if not seekable:
        f.write(target.getbuffer())


def _write_checkpoint(obj: Any, f: IO[bytes], protocol: int) -> None:
    pickled = io.BytesIO()
    pickler = Pickler(pickled, protocol)
    pickler.dump(obj)
    alignment = _storage_alignment()
    writer = ArchiveWriter(f, alignment=alignment, crc=bool(config.save.compute_crc32))
    writer.write("data.pkl", pickled.getbuffer())
    writer.write(".format_version", b"1")
    writer.write(".storage_alignment", str(alignment).encode("ascii"))
    writer.write("byteorder", sys.byteorder.encode("ascii"))
    skip = skipping_data()
    for storage in pickler.storages.values():
        if skip:
            writer.write_zeros(f"data/{storage.key}", storage.data().nbytes)
        else:
            writer.write(f"data/{storage.key}", storage.data())
    writer.write("version", b"3\n")
    writer.write(".data/serialization_id", f"{int.from_bytes(os.urandom(16), 'little'):040d}".encode("ascii"))
    writer.close()


def _storage_alignment() -> int:
    alignment = config.save.storage_alignment
    if isinstance(alignment, bool) or not isinstance(alignment, int) or alignment <= 0:
        raise ValueError(f"ember.save: config.save.storage_alignment must be a positive int (a byte boundary such "
                         f"as 64), got {alignment!r}")
    return alignment


def _write_legacy(obj: Any, f: IO[bytes], protocol: int) -> None:
    """torch's format before 1.6: pickles of a magic number, the protocol and system information, then the
    object, then the list of storage keys, then each storage's element count and bytes."""
    for header in (LEGACY_MAGIC, LEGACY_PROTOCOL, _LEGACY_SYSTEM):
        pickle.dump(header, f, protocol=protocol)
    pickler = Pickler(f, protocol, legacy=True)
    pickler.dump(obj)
    storages = sorted(pickler.storages.values(), key=lambda storage: storage.key)
    pickle.dump([storage.key for storage in storages], f, protocol=protocol)
    for storage in storages:
        f.write(struct.pack("<q", storage.persistent_id()[4]))
        f.write(storage.data())


_LEGACY_SYSTEM = {"protocol_version": LEGACY_PROTOCOL, "little_endian": sys.byteorder == "little",
                  "type_sizes": {"short": 2, "int": 4, "long": 4}}


def _open_temporary(path: str) -> tuple[IO[bytes], str]:
    """A new file beside ``path``, with the permissions a plain ``open(path, "wb")`` would give."""
    directory, name = os.path.split(os.path.abspath(path))
    handle, temporary = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=directory)
    os.chmod(temporary, 0o666 & ~_umask())
    return os.fdopen(handle, "wb"), temporary


def _umask() -> int:
    if _UMASK[0] is None:
        _UMASK[0] = os.umask(0o022)
        os.umask(_UMASK[0])
    return _UMASK[0]


_UMASK = [None]


def _save_atomically(obj: Any, path: str, protocol: int, write: Callable) -> None:
    parent = os.path.dirname(path)
    if parent and not os.path.isdir(parent):
        raise RuntimeError(f"Parent directory {parent} does not exist.")
    if os.path.isdir(path):  # (found before writing: the rename would fail only at the end, naming the temporary)
        raise RuntimeError(f"ember.save: open file failed: {path} is a directory; give the path of a file in it")
    f, temporary = _open_temporary(path)
    try:
        with f:
            write(obj, f, protocol)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def load(f: FileLike, map_location: Any = None, pickle_module: Any = None, *, weights_only: bool | None = None,
         mmap: bool | None = None, **pickle_load_args) -> Any:
    """Read a checkpoint written by ``ember.save`` or ``torch.save`` (zip format, or the legacy one before 1.6).

    ``weights_only=True`` (the default) builds tensors, parameters and plain
    containers only; anything else raises ``ember.serialization.UnpicklingError``.
    ``mmap=True`` maps the storages from the file instead of reading them (privately, unless
    ``set_default_mmap_options(mmap.MAP_SHARED)`` asks for writes to reach the file).
    ``map_location`` (``'cpu'``, a device, a dict or a callable) is accepted as
    torch accepts it; every storage lands on the CPU.

    >>> import io, ember
    >>> buffer = io.BytesIO()
    >>> ember.save([ember.ones(2), 3, "epoch"], buffer)
    >>> ember.load(io.BytesIO(buffer.getvalue()), map_location="cpu")
    [tensor([1., 1.]), 3, 'epoch']
    """
    # as torch: naming a pickle_module (and leaving weights_only unset) asks for a full, trusting load
    weights_only = pickle_module is None if weights_only is None else weights_only
    if pickle_module is not None and weights_only:
        raise RuntimeError(
            "ember.load: Can not safely load weights when explicit pickle_module is specified; "
            "pass weights_only=False to use it with a file you trust"
        )
    if pickle_load_args and weights_only:
        _check_weights_only_args(pickle_load_args)
    options = dict(map_location=map_location, weights_only=bool(weights_only),
                   unpickler=(pickle_module or pickle).Unpickler, pickle_load_args=pickle_load_args)
    mmap = config.load.mmap if mmap is None else mmap
    if isinstance(f, (str, os.PathLike)) and os.fspath(f).endswith(".safetensors"):
        return _load_safetensors(os.fspath(f), map_location)
    with _opened(f, bool(mmap)) as (file, mapped):
        start = file.tell()
        magic = file.read(4)
        file.seek(start)
        if magic == b"PK\x03\x04":
            return read_archive(ArchiveReader(file, mapped), **options)
        if mapped is not None:
            raise RuntimeError("ember.load: mmap=True needs torch's zip format; this file is in the legacy format")
        return read_legacy(file.read(), **options)


def _load_safetensors(path: str, map_location) -> dict:
    """A path ending in ``.safetensors`` is read as a safetensors file, as torch.load reads it: its tensors by
    name. ``map_location`` may only name a device there."""
    for kind, form in ((dict, "dict"), (Callable, "callable")):
        if isinstance(map_location, kind):
            raise RuntimeError(f"Loading safetensors file with {form} map_location is not supported. Use a device "
                               "string or ember.device instead.")
    from ember.utils import safetensors

    try:
        safetensors._package()
    except ImportError as error:
        raise RuntimeError(f"Attempting to load a safetensors file but safetensors is not installed: {error}") from None
    return safetensors.load_file(path, device="cpu" if map_location is None else str(map_location))


def _check_weights_only_args(pickle_load_args: dict) -> None:
    """A weights-only load takes ``encoding`` (which its reader has no use for: Python 3 pickles hold no
    Python 2 strings) and no other unpickler argument, and warns that they only matter with weights_only=False."""
    unexpected = sorted(set(pickle_load_args) - {"encoding"})
    if unexpected:
        raise TypeError(f"ember.load: unexpected keyword arguments {unexpected} for a weights-only load, whose "
                        "unpickler takes only encoding; pass them with weights_only=False")
    warnings.warn("pickle_load_args only works if `weights_only=False`.", UserWarning, stacklevel=3)


def get_unsafe_globals_in_checkpoint(f: FileLike) -> list[str]:
    """The globals (``"module.name"``) a checkpoint's pickle names that a weights-only load would refuse.

    The pickle is read, never run: what it lists is what ``add_safe_globals`` would need before ``load``.

    >>> import io, ember, collections
    >>> buffer = io.BytesIO()
    >>> ember.save({"t": ember.ones(1), "f": collections.namedtuple}, buffer)
    >>> ember.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(buffer.getvalue()))
    ['collections.namedtuple']
    """
    with _opened(f, False) as (file, _):
        start = file.tell()
        magic = file.read(4)
        file.seek(start)
        if magic != b"PK\x03\x04":
            raise ValueError("Expected input to be a checkpoint returned by torch.save (a zip file)")
        return unsafe_globals(ArchiveReader(file).read_small("data.pkl"))


@contextlib.contextmanager
def _opened(f: FileLike, mapped: bool):
    """``(seekable binary file, map of it or None)`` for a path or a file object."""
    if isinstance(f, (str, os.PathLike)):
        shared = mapped and get_default_mmap_options() == _MAP_SHARED
        with open(f, "r+b" if shared else "rb") as file:
            with _mapping(file, mapped) as mapping:
                yield file, mapping
        return
    if not hasattr(f, "read"):
        raise TypeError(f"ember.load: f must be a path or a binary file object, not {type(f).__name__}")
    if mapped and not _has_descriptor(f):
        raise ValueError(f"ember.load: f must be a file path in order to use the mmap argument; a "
                         f"{type(f).__name__} has no file to map. Pass the checkpoint's path, or load without mmap")
    if not getattr(f, "seekable", lambda: False)():
        f = io.BytesIO(f.read())
    with _mapping(f, mapped) as mapping:
        yield f, mapping


def _has_descriptor(f: IO[bytes]) -> bool:
    """Whether the file object ``f`` stands on an open file, which mmap can map (a BytesIO does not)."""
    try:
        f.fileno()
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        return False
    return True


@contextlib.contextmanager
def _mapping(file: IO[bytes], mapped: bool):
    if not mapped:
        yield None
        return
    shared = get_default_mmap_options() == _MAP_SHARED
    try:
        mapping = _mmap.mmap(file.fileno(), 0, access=_mmap.ACCESS_WRITE if shared else _mmap.ACCESS_COPY)
    except (OSError, ValueError, io.UnsupportedOperation) as error:
        opened = " opened for writing (pass its path)" if shared else ""
        raise RuntimeError(f"ember.load: mmap=True needs a non-empty file on disk{opened} ({error})") from None
    yield mapping  # tensors keep the map alive; it closes when the last of them goes
