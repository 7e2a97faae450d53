"""Reading a checkpoint's pickle and storages: torch's zip format, and its legacy format (before 1.6)."""
from __future__ import annotations

import io
import struct
from typing import Any, Callable

import numpy as np

from ember._dtype import dtype as _dtype_class
from ember._tensor import device
from ember.serialization._archive import ArchiveReader
from ember.serialization._options import fallback_byte_order, skipping_data
from ember.serialization._rebuild import TORCH_GLOBALS, LoadedStorage, StorageType, Unsupported, ember_layer
from ember.serialization._unpickler import RestrictedUnpickler, UnpicklingError

_MISSING_ITEMSIZE = {"bfloat16": 2, "complex32": 4, "complex64": 8, "complex128": 16, "qint32": 4}
LEGACY_MAGIC = 0x1950A86A20F9469CFC6C
LEGACY_PROTOCOL = 1001


def _itemsize(storage_type: StorageType) -> int:
    dtype = storage_type.dtype
    if dtype is None:
        return 1
    return getattr(dtype, "itemsize", None) or _MISSING_ITEMSIZE.get(dtype.name, 1)


def _check_storage_id(saved_id, fields: int) -> tuple:
    if not (isinstance(saved_id, tuple) and len(saved_id) == fields and saved_id[0] == "storage"):
        raise UnpicklingError(f"ember.load: unknown persistent id {saved_id!r} (only storages are supported)")
    _, storage_type, key, location, numel = saved_id[:5]
    if not isinstance(storage_type, StorageType):
        raise UnpicklingError(f"ember.load: {storage_type!r} is not a storage type")
    if not isinstance(key, str) or not isinstance(location, str) or type(numel) is not int or numel < 0:
        raise UnpicklingError(f"ember.load: malformed storage id {saved_id!r}")
    return storage_type, key, location, numel


def _placement(map_location) -> Callable:
    """``place(bytes, location)``: the storage's bytes where ``map_location`` puts them (always the CPU)."""
    if map_location is None:
        return lambda data, location: data
    if callable(map_location) and not isinstance(map_location, device):
        return lambda data, location: _mapped(map_location(data, location), data)
    if isinstance(map_location, dict):
        return lambda data, location: _on_cpu(map_location.get(location, "cpu"), data)
    _on_cpu(map_location, None)
    return lambda data, location: data


def _on_cpu(target, data):
    if not isinstance(target, (str, device)):
        raise TypeError(f"ember.load: map_location must be a str, a device, a dict or a callable, not {target!r}")
    device(target)  # refuses a device other than the CPU, naming it
    return data


def _mapped(result, data):
    if result is None:
        return data
    if not isinstance(result, np.ndarray):
        raise TypeError(f"ember.load: a map_location function must return the storage (an array) or None, "
                        f"not {type(result).__name__}")
    return np.ascontiguousarray(result).reshape(-1).view(np.uint8)


def _unpickle(data: bytes, position: int, persistent_load: Callable, options: dict) -> tuple[Any, int]:
    """The object pickled at ``position`` in ``data``, and where its pickle ends."""
    if options["weights_only"]:
        reader = RestrictedUnpickler(data, persistent_load, position)
        return reader.load(), reader.pos
    stream = io.BytesIO(data)
    stream.seek(position)
    unpickler = _trusted_unpickler(options["unpickler"])(stream, **options["pickle_load_args"])
    unpickler.persistent_load = persistent_load
    return unpickler.load(), stream.tell()


def _trusted_unpickler(base: type) -> type:
    class TrustedUnpickler(base):
        """``weights_only=False``: any global, except that torch's names become ember's."""

        def find_class(self, module: str, name: str):
            found = TORCH_GLOBALS.get(f"{module}.{name}") or ember_layer(module, name)
            if found is not None:
                return found
            if module == "torch" or module.startswith("torch."):
                raise UnpicklingError(f"ember.load: the file refers to {module}.{name}, which ember does not have")
            return super().find_class(module, name)

    return TrustedUnpickler


def read_archive(reader: ArchiveReader, map_location=None, **options) -> Any:
    """The object in a zip checkpoint: its pickle, with each storage record read (or mapped) once."""
    swap = _byte_order(reader)
    place = _placement(map_location)
    skip = skipping_data()  # tensors over zeros: their records are not read
    storages: dict[str, np.ndarray] = {}

    def persistent_load(saved_id):
        storage_type, key, location, numel = _check_storage_id(saved_id, 5)
        if key not in storages:
            expected = numel * _itemsize(storage_type)
            data = np.zeros(expected, np.uint8) if skip else reader.record(f"data/{key}")
            if data.nbytes != expected:
                raise RuntimeError(
                    f"ember.load: storage {key!r} should hold {numel} elements ({expected} bytes) of "
                    f"{storage_type!r} but its record has {data.nbytes} bytes: the file is damaged"
                )
            storages[key] = place(_swapped(data, storage_type) if swap else data, location)
        return LoadedStorage(storages[key], storage_type.dtype, key)

    result, _ = _unpickle(reader.read_small("data.pkl"), 0, persistent_load, options)
    return refuse_unsupported(result)


def _byte_order(reader: ArchiveReader) -> bool:
    """Whether the storages must be byte-swapped (a file written on a big-endian machine)."""
    if not reader.has("byteorder"):
        return fallback_byte_order() != _NATIVE  # (little-endian, as files before the record, unless set otherwise)
    order = reader.read_small("byteorder")
    if order not in (b"little", b"big"):
        raise RuntimeError(f"ember.load: the byteorder record says {order[:20]!r}; expected 'little' or 'big'")
    return order.decode() != _NATIVE


_NATIVE = "little" if np.little_endian else "big"


def _swapped(data: np.ndarray, storage_type: StorageType) -> np.ndarray:
    dtype = storage_type.dtype
    if dtype is None or not hasattr(dtype, "np") or dtype.itemsize == 1:
        return data
    return data.view(dtype.np).byteswap().view(np.uint8)


def read_legacy(data: bytes, map_location=None, **options) -> Any:
    """The object in a file of torch's legacy format: pickles of a magic number, the protocol and system
    information, then the object, then the list of storage keys, then each storage's element count and bytes."""
    if not data:
        raise EOFError("Ran out of input")  # (what torch's unpickling of an empty file raises)
    if not data.startswith(b"\x80"):
        raise UnpicklingError(
            "ember.load: not a checkpoint: neither torch's zip format nor its legacy pickle format "
            f"(the file begins {data[:8]!r})"
        )
    plain = dict(options, weights_only=True)
    refuse_storage = lambda saved_id: _raise(UnpicklingError("ember.load: a storage before the legacy header"))
    magic, position = _unpickle(data, 0, refuse_storage, plain)
    if magic != LEGACY_MAGIC:
        raise RuntimeError("ember.load: the file is a pickle but not a torch checkpoint (wrong magic number); "
                           "if it is a plain pickle you trust, read it with the pickle module")
    protocol, position = _unpickle(data, position, refuse_storage, plain)
    info, position = _unpickle(data, position, refuse_storage, plain)
    if protocol != LEGACY_PROTOCOL or not isinstance(info, dict) or not info.get("little_endian", False):
        raise RuntimeError(f"ember.load: unsupported legacy checkpoint (protocol {protocol!r}, or big-endian)")
    storages: dict[str, tuple] = {}
    result, position = _unpickle(data, position, _legacy_storages(storages, len(data)), options)
    keys, position = _unpickle(data, position, refuse_storage, plain)
    _fill_legacy(data, position, keys, storages, _placement(map_location))
    return refuse_unsupported(result)


def _raise(error: Exception):
    raise error


def _legacy_storages(storages: dict, budget: int) -> Callable:
    """The legacy ``persistent_load``: each storage is allocated empty and filled after the pickle is read;
    the bytes allocated in all never exceed the file's length."""

    def persistent_load(saved_id):
        storage_type, key, location, numel = _check_storage_id(saved_id, 6)
        if key not in storages:
            nbytes = numel * _itemsize(storage_type)
            if nbytes + sum(s[0].nbytes for s in storages.values()) > budget:
                raise RuntimeError(f"ember.load: storage {key!r} claims {nbytes} bytes, more than the file has")
            storages[key] = (np.zeros(nbytes, np.uint8), storage_type, location)
        whole, _, _ = storages[key]
        view = saved_id[5]
        if view is None:
            return LoadedStorage(whole, storage_type.dtype, key)
        return _legacy_view(whole, storage_type, key, view)

    return persistent_load


def _legacy_view(whole: np.ndarray, storage_type: StorageType, key: str, view) -> LoadedStorage:
    if not (isinstance(view, tuple) and len(view) == 3 and all(type(v) is int and v >= 0 for v in view[1:])):
        raise UnpicklingError(f"ember.load: malformed storage view {view!r}")
    itemsize = _itemsize(storage_type)
    start, stop = view[1] * itemsize, (view[1] + view[2]) * itemsize
    if stop > whole.nbytes:
        raise RuntimeError(f"ember.load: a view of storage {key!r} reaches past its end")
    return LoadedStorage(whole[start:stop], storage_type.dtype, key)


def _fill_legacy(data: bytes, position: int, keys, storages: dict, place: Callable) -> None:
    if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys) or set(keys) != set(storages):
        raise RuntimeError("ember.load: the legacy checkpoint's list of storages does not match its pickle")
    for key in keys:
        whole, storage_type, location = storages[key]
        if position + 8 > len(data):
            raise RuntimeError(f"ember.load: the legacy checkpoint is truncated before storage {key!r}")
        (numel,) = struct.unpack_from("<q", data, position)
        end = position + 8 + whole.nbytes
        if numel * _itemsize(storage_type) != whole.nbytes or end > len(data):
            raise RuntimeError(f"ember.load: storage {key!r} in the legacy checkpoint is truncated or damaged")
        whole[:] = np.frombuffer(data, np.uint8, whole.nbytes, position + 8)
        place(whole, location)
        position = end


def refuse_unsupported(result: Any) -> Any:
    """``result``, or a TypeError naming where in it a tensor of a dtype ember lacks is. Storages saved for
    themselves (``torch.save(t.untyped_storage())``) become ember's ``TypedStorage``, as torch loads them."""
    pending, seen, bare_storages = [(result, "the checkpoint")], set(), False
    while pending:
        obj, path = pending.pop()
        if isinstance(obj, (Unsupported, LoadedStorage)):
            if isinstance(obj, LoadedStorage):
                bare_storages = True
                continue
            raise TypeError(
                f"ember.load: {path} is a tensor of {obj.dtype!r} (storage record {obj.record!r}), a dtype ember "
                "does not have; convert it before saving, e.g. in torch: t.float()"
            )
        if id(obj) in seen or not isinstance(obj, (dict, list, tuple, set)):
            continue
        seen.add(id(obj))
        items = obj.items() if isinstance(obj, dict) else enumerate(obj)
        pending.extend((value, f"{path}[{key!r}]" if path != "the checkpoint" else f"[{key!r}]")
                       for key, value in items)
    return _with_typed_storages(result, {}) if bare_storages else result


def _with_typed_storages(obj: Any, done: dict) -> Any:
    """``obj`` with each storage in it (in dicts, lists and tuples) as a ``TypedStorage`` over its bytes; dicts
    and lists are changed in place, tuples rebuilt. ``done`` maps ids already converted to their result."""
    if id(obj) in done:
        return done[id(obj)]
    if isinstance(obj, LoadedStorage):
        done[id(obj)] = converted = typed_storage(obj)
        return converted
    done[id(obj)] = obj
    if isinstance(obj, dict):
        for key, value in obj.items():
            obj[key] = _with_typed_storages(value, done)
    elif isinstance(obj, list):
        obj[:] = [_with_typed_storages(value, done) for value in obj]
    elif isinstance(obj, tuple):
        items = [_with_typed_storages(value, done) for value in obj]
        if any(new is not old for new, old in zip(items, obj)):
            done[id(obj)] = type(obj)(items) if type(obj) is tuple else type(obj)(*items)
    return done[id(obj)]


def typed_storage(storage: LoadedStorage):
    """A storage saved for itself, as torch loads one: a ``TypedStorage`` of its element type (uint8 for raw
    bytes), sharing memory with the tensors loaded over it."""
    from ember._dtype import uint8
    from ember.storage import TypedStorage

    dtype = uint8 if storage.dtype is None else storage.dtype
    if not isinstance(dtype, _dtype_class) or not hasattr(dtype, "np"):
        raise TypeError(f"ember.load: storage record {storage.key!r} is a storage of {dtype!r}, an element type "
                        "ember's storages do not hold; save the tensor instead of its storage")
    return TypedStorage._of(storage.data.view(dtype.np), dtype)
