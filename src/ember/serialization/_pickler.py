"""The pickle of ``ember.save``: tensors written as torch writes them, storages as separate records.

A tensor pickles as a call to ``torch._utils._rebuild_tensor_v2`` over a
persistent storage id, exactly the names torch's own ``torch.load`` admits with
``weights_only=True``. The standard picklers refuse to name a global they cannot
import (and ember never imports torch), so ``Pickler`` extends Python's own
pure-Python pickler, the one kept in step with the C pickler, with a writer for
such names; everything else pickles as usual.
"""
from __future__ import annotations

import pickle
import types
from collections import OrderedDict

import numpy as np

from ember import _dtype
from ember._layout import layout, sparse_coo, strided
from ember._size import Size
from ember._tensor import Tensor, _AUTOGRAD_STATE, device, torch_strides
from ember.utils.hooks import warn_if_has_hooks
from ember.nn.parameter import Parameter
from ember.storage import TypedStorage, UntypedStorage
from ember.serialization._rebuild import STORAGE_OF_DTYPE
from ember._quantized_dtypes import QuantizedDtype, qscheme
from ember.serialization._quantized import quantizer_params


class TorchName:
    """A global as torch names it (``torch._utils._rebuild_tensor_v2``), written by name, never imported."""

    _made: dict = {}

    def __init__(self, module: str, name: str):
        self.module, self.name = module, name

    def __call__(self, *args):  # pickle wants a callable; the call itself happens in torch.load or ember.load
        raise TypeError(f"{self.module}.{self.name} is written into checkpoints by name and is not called here")

    @classmethod
    def of(cls, module: str, name: str) -> "TorchName":
        # One object per name, so the pickle's memo writes each name once.
        key = (module, name)
        if key not in cls._made:
            cls._made[key] = cls(module, name)
        return cls._made[key]


_REBUILD_TENSOR = TorchName.of("torch._utils", "_rebuild_tensor_v2")
_REBUILD_TENSOR_V3 = TorchName.of("torch._utils", "_rebuild_tensor_v3")  # for dtypes with no legacy storage class
_REBUILD_PARAMETER = TorchName.of("torch._utils", "_rebuild_parameter")
_REBUILD_PARAMETER_WITH_STATE = TorchName.of("torch._utils", "_rebuild_parameter_with_state")
_REBUILD_FROM_TYPE = TorchName.of("torch._tensor", "_rebuild_from_type_v2")
_TENSOR = TorchName.of("torch", "Tensor")
_REBUILD_QTENSOR = TorchName.of("torch._utils", "_rebuild_qtensor")
_REBUILD_SPARSE = TorchName.of("torch._utils", "_rebuild_sparse_tensor")


class StorageRef:
    """One block of memory saved as one record; tensors viewing it refer to it by persistent id."""

    def __init__(self, key: str, owner: np.ndarray, dtype: _dtype.dtype):
        self.key, self.owner, self.dtype = key, owner, dtype

    def persistent_id(self) -> tuple:
        if self.dtype.name not in STORAGE_OF_DTYPE:  # (uint16 ...) raw bytes, counted in bytes, as torch saves them
            return ("storage", TorchName.of("torch.storage", "UntypedStorage"), self.key, "cpu", self.owner.nbytes)
        storage_type = TorchName.of("torch", STORAGE_OF_DTYPE[self.dtype.name])
        return ("storage", storage_type, self.key, "cpu", self.owner.nbytes // self.dtype.itemsize)

    def data(self) -> memoryview:
        owner = self.owner if self.owner.flags.c_contiguous else self.owner.T  # an F-ordered block, read as C
        return memoryview(owner.reshape(-1).view(np.uint8)) if owner.size else memoryview(b"")


def _raise_as_the_c_pickler(obj, protocol: int) -> None:
    """Raise the C pickler's error for a global it cannot name (torch saves with that pickler).

    For a local class or function, Python 3.11's C pickler raises AttributeError where the pure-Python
    one raises PicklingError; pickling the object alone with the C pickler gives its exact error.
    """
    try:
        pickle.dumps(obj, protocol)
    except Exception as refused:
        raise refused from None


def _memory_owner(data: np.ndarray) -> np.ndarray:
    owner = data
    while isinstance(owner.base, np.ndarray):
        owner = owner.base
    return owner


# what ember itself keeps in a tensor's __dict__: never saved (torch keeps none of it there)
_NOT_SAVED = _AUTOGRAD_STATE | {"_inference", "_fw", "_grad_dtype", "_levels"}


def _python_state(tensor: Tensor) -> dict:
    """The attributes a program set on ``tensor`` (``t.name = ...``), which torch saves with it."""
    return {k: v for k, v in tensor.__dict__.items() if k not in _NOT_SAVED}


class Pickler(pickle._Pickler):
    """Pickles ``obj`` with tensors as torch's rebuild calls; ``storages`` lists the records to write."""

    dispatch = dict(pickle._Pickler.dispatch)

    def __init__(self, file, protocol: int, legacy: bool = False):
        super().__init__(file, protocol)
        self.legacy = legacy  # torch's format before 1.6, whose storage ids end with a (never used) view
        self.storages: dict[int, StorageRef] = {}
        self.no_hooks = OrderedDict()  # one empty dict for every tensor: pickled once, then referred to

    def _write_name(self, obj, module: str, name: str) -> None:
        self.write(pickle.GLOBAL + f"{module}\n{name}\n".encode("ascii"))
        self.memoize(obj)

    dispatch[TorchName] = lambda self, obj: self._write_name(obj, obj.module, obj.name)
    dispatch[_dtype.dtype] = lambda self, obj: self._write_name(obj, "torch", obj.name)
    dispatch[QuantizedDtype] = dispatch[_dtype.dtype]
    dispatch[qscheme] = lambda self, obj: self._write_name(obj, "torch", obj.name)

    def save_global(self, obj, name=None):
        try:
            super().save_global(obj, name)
        except pickle.PicklingError:
            if name is None:
                _raise_as_the_c_pickler(obj, self.proto)
            raise

    dispatch[types.FunctionType] = save_global  # the base table holds the base method, bypassing the override

    def persistent_id(self, obj):
        kind = type(obj)
        if kind is not StorageRef:
            if kind is UntypedStorage or kind is TypedStorage:  # a storage saved for itself, as torch saves one
                return self.persistent_id(self._storage_of(obj))
            return None
        saved_id = obj.persistent_id()
        if not self.legacy:
            return saved_id
        if obj.dtype.name not in STORAGE_OF_DTYPE:  # torch itself writes such a file, and then cannot read it
            raise RuntimeError(
                f"ember.save: torch's legacy format has no storage class for {obj.dtype}; save in the zip "
                "format (the default, without _use_new_zipfile_serialization=False)"
            )
        return saved_id + (None,)

    def reducer_override(self, obj):
        kind = type(obj)
        if kind is Size:
            return TorchName.of("torch", "Size"), (tuple(obj),)
        if kind is device:
            return TorchName.of("torch", "device"), (str(obj),)
        if kind is layout:
            return TorchName.of("torch.serialization", "_get_layout"), (f"torch.{obj.name}",)
        if not isinstance(obj, Tensor):
            return NotImplemented
        if obj.layout is not strided:  # as torch writes a sparse tensor: its indices, values and size
            if obj.layout is not sparse_coo:  # compressed: both index tensors, values and size
                parts = (Tensor._wrap(obj._cidx), Tensor._wrap(obj._pidx), Tensor._wrap(obj._val),
                         Size(obj._data.shape))
                return _REBUILD_SPARSE, (obj.layout, parts)
            parts = (Tensor._wrap(obj._ind), Tensor._wrap(obj._val), Size(obj._data.shape), obj._coalesced)
            return _REBUILD_SPARSE, (obj.layout, parts)
        if obj._hooks:
            warn_if_has_hooks(obj)
        hooks = self.no_hooks  # torch's backward hooks are never saved; the slot stays empty
        if isinstance(obj, Parameter):
            state = _python_state(obj)
            if state:
                return _REBUILD_PARAMETER_WITH_STATE, (obj.detach(), obj.requires_grad, hooks, state)
            return _REBUILD_PARAMETER, (obj.detach(), obj.requires_grad, hooks)
        args = self._tensor_args(obj, hooks)
        if obj.is_quantized:  # torch's form: the quantizer's parameters after the layout
            return _REBUILD_QTENSOR, args[:4] + (quantizer_params(obj),) + args[4:]
        rebuild = _REBUILD_TENSOR
        if obj.dtype.name not in STORAGE_OF_DTYPE:
            args, rebuild = args + (obj.dtype,), _REBUILD_TENSOR_V3
        state = _python_state(obj)
        if kind is not Tensor or state:  # torch's form for a subclass, or for attributes set on a tensor
            return _REBUILD_FROM_TYPE, (rebuild, _TENSOR if kind is Tensor else kind, args, state)
        return rebuild, args

    def _storage_of(self, storage) -> StorageRef:
        """The record of a storage object: its bytes (``UntypedStorage``) or elements (``TypedStorage``), the
        same record as the tensors over that memory (torch refuses the two kinds on one block, and so does
        ember)."""
        if type(storage) is UntypedStorage:
            return self._storage(storage._bytes, _dtype.uint8)[0]
        return self._storage(storage._elements(), storage.dtype)[0]

    def _tensor_args(self, tensor: Tensor, hooks: OrderedDict) -> tuple:
        data = tensor._data
        storage, offset = self._storage(data, tensor.dtype)
        strides = torch_strides(data) if offset is not None else torch_strides(storage.owner)
        return (storage, offset or 0, tuple(data.shape), strides, tensor.requires_grad, hooks)

    def _storage(self, data: np.ndarray, dtype: _dtype.dtype) -> tuple:
        """The storage ``data`` lies in and its offset there, in elements; offset None: a copy of its own."""
        owner = _memory_owner(data)
        shared = (owner.flags.c_contiguous or owner.flags.f_contiguous) and owner.nbytes % dtype.itemsize == 0
        offset = data.__array_interface__["data"][0] - owner.__array_interface__["data"][0]
        if not shared or offset % dtype.itemsize or any(s < 0 or s % dtype.itemsize for s in data.strides):
            return self._new_storage(np.ascontiguousarray(data), dtype), None  # reversed or odd strides: copied
        found = self.storages.get(id(owner))
        if found is None:
            found = self._new_storage(owner, dtype)
        elif found.dtype is not dtype:
            raise RuntimeError(
                f"ember.save: tensors of {found.dtype} and {dtype} view the same memory; torch's format keeps one "
                "element type per storage. Save a copy of one of them (t.clone())"
            )
        return found, offset // dtype.itemsize

    def _new_storage(self, owner: np.ndarray, dtype: _dtype.dtype) -> StorageRef:
        ref = StorageRef(str(len(self.storages)), owner, dtype)
        self.storages[id(owner)] = ref  # the ref keeps the owner alive, so its id stays unique while saving
        return ref
