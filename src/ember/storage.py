"""Storages: the block of memory behind a tensor and its views, as bytes (``UntypedStorage``) or elements
(``TypedStorage``, deprecated in torch and here).

A tensor's storage is the NumPy array that owns its memory, seen whole: every view of a tensor has the
same storage, which is how programs check that two tensors share memory.

>>> import ember
>>> t = ember.arange(6.).view(2, 3)
>>> v = t[1, 1:]
>>> s = v.untyped_storage()
>>> s.nbytes(), s.data_ptr() == t.data_ptr(), v.storage_offset()
(24, True, 4)
>>> print(repr(s).splitlines()[-1])
[ember.storage.UntypedStorage(device=cpu) of size 24]
"""
from __future__ import annotations

import mmap
import warnings

import numpy as np

from ember import _dtype
from ember._tensor import Tensor, device as _device

__all__ = ["TypedStorage", "UntypedStorage"]


def _owner(array: np.ndarray) -> np.ndarray:
    """The array that owns ``array``'s memory (the start of the chain of views)."""
    while isinstance(array.base, np.ndarray):
        array = array.base
    return array


def _as_bytes(array: np.ndarray) -> np.ndarray:
    """An owning array's memory as a flat array of bytes, sharing it."""
    if array.flags.c_contiguous or array.flags.f_contiguous:
        return array.reshape(-1, order="A").view(np.uint8)
    return np.ascontiguousarray(array).reshape(-1).view(np.uint8)  # (a strided owner: only NumPy makes one)


class UntypedStorage:
    """A block of bytes, shared with every tensor made on it.

    ``UntypedStorage(n)`` makes a new block of ``n`` zero bytes; ``tensor.untyped_storage()`` gives a tensor's.
    """

    def __init__(self, size: int = 0, *, device=None):
        if device is not None:
            _device(device)
        self._bytes = np.zeros(int(size), np.uint8)

    @classmethod
    def _of(cls, array: np.ndarray) -> "UntypedStorage":
        storage = object.__new__(cls)
        storage._bytes = _as_bytes(_owner(array))
        return storage

    device = _device("cpu")
    is_cuda = False

    def nbytes(self) -> int:
        return self._bytes.size

    def size(self) -> int:
        return self._bytes.size

    def __len__(self) -> int:
        return self._bytes.size

    def element_size(self) -> int:
        return 1

    def data_ptr(self) -> int:
        return self._bytes.__array_interface__["data"][0]

    def __getitem__(self, index):
        value = self._bytes[index]
        return int(value) if isinstance(index, int) else UntypedStorage._of(value)

    def __setitem__(self, index, value) -> None:
        self._bytes[index] = value

    def tolist(self) -> list:
        return self._bytes.tolist()

    def fill_(self, value: int) -> "UntypedStorage":
        self._bytes[...] = value
        return self

    def copy_(self, source: "UntypedStorage", non_blocking: bool = False) -> "UntypedStorage":
        if source.nbytes() != self.nbytes():
            raise RuntimeError(f"copy_: storages of {source.nbytes()} and {self.nbytes()} bytes differ in size")
        self._bytes[...] = source._bytes
        return self

    def clone(self) -> "UntypedStorage":
        copy = object.__new__(UntypedStorage)
        copy._bytes = self._bytes.copy()
        return copy

    def cpu(self) -> "UntypedStorage":
        return self

    def is_shared(self) -> bool:
        return in_shared_memory(self._bytes)

    def is_pinned(self, device="cuda") -> bool:
        return False

    def __repr__(self) -> str:
        values = "\n".join(f" {v}" for v in self._bytes.tolist())
        return (values + "\n" if values else "") + f"[ember.storage.UntypedStorage(device=cpu) of size {self.nbytes()}]"


class TypedStorage:
    """A tensor's storage counted in elements of its dtype (deprecated, as in torch: prefer ``untyped_storage``)."""

    def __init__(self, *args, dtype=None, device=None):
        if device is not None:
            _device(device)
        self.dtype = _dtype.to_dtype(dtype) if dtype is not None else _dtype.defaults.floating
        size = args[0] if args and isinstance(args[0], int) else 0
        self._untyped = UntypedStorage(size * self.dtype.itemsize)

    @classmethod
    def _of(cls, array: np.ndarray, dtype: _dtype.dtype) -> "TypedStorage":
        storage = object.__new__(cls)
        storage.dtype = dtype
        storage._untyped = UntypedStorage._of(array)
        return storage

    device = _device("cpu")

    def _elements(self) -> np.ndarray:
        usable = self._untyped.nbytes() // self.dtype.itemsize * self.dtype.itemsize
        return self._untyped._bytes[:usable].view(self.dtype.np)

    def untyped(self) -> UntypedStorage:
        return self._untyped

    def size(self) -> int:
        return self._untyped.nbytes() // self.dtype.itemsize

    def __len__(self) -> int:
        return self.size()

    def element_size(self) -> int:
        return self.dtype.itemsize

    def nbytes(self) -> int:
        return self._untyped.nbytes()

    def data_ptr(self) -> int:
        return self._untyped.data_ptr()

    def __getitem__(self, index: int):
        return self._elements()[index].item()

    def __setitem__(self, index, value) -> None:
        self._elements()[index] = value

    def tolist(self) -> list:
        return self._elements().tolist()

    def is_shared(self) -> bool:
        return False

    def __repr__(self) -> str:
        values = "\n".join(f" {v}" for v in self.tolist())
        return (values + "\n" if values else "") + \
            f"[ember.storage.TypedStorage(dtype={self.dtype!r}, device=cpu) of size {self.size()}]"


def untyped_storage(self: Tensor) -> UntypedStorage:
    """The bytes behind this tensor and every view of its memory."""
    return UntypedStorage._of(self._data)


def storage(self: Tensor) -> TypedStorage:
    """The memory behind this tensor, counted in its elements (deprecated: use ``untyped_storage``)."""
    warnings.warn(
        "TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the only storage "
        "class. This should only matter to you if you are using storages directly. To access UntypedStorage "
        "directly, use tensor.untyped_storage() instead of tensor.storage()", UserWarning, stacklevel=2)
    return TypedStorage._of(self._data, _dtype.from_numpy_dtype(self._data.dtype))


def is_shared(self: Tensor) -> bool:
    """Whether the tensor's memory is shared memory (``share_memory_`` moves it there), which forked processes see."""
    return in_shared_memory(self._data)


def in_shared_memory(array: np.ndarray) -> bool:
    while isinstance(array.base, np.ndarray):
        array = array.base
    owner = array.base.obj if isinstance(array.base, memoryview) else array.base  # (np.frombuffer's arrays)
    return isinstance(owner, mmap.mmap)


def is_pinned(self: Tensor, device=None) -> bool:
    """False: pinned memory is for copies to an accelerator, which ember has none of."""
    return False


def pin_memory(self: Tensor, device=None) -> Tensor:
    """Refused as torch refuses it without an accelerator."""
    raise RuntimeError("Cannot access accelerator device when none is available: pin_memory() pins host memory "
                       "for copies to an accelerator; on the CPU, use the tensor as it is")


def set_(self: Tensor, source=None, storage_offset: int = 0, size=None, stride=None) -> Tensor:
    """Make this tensor use other memory: ``source``'s (a tensor of the same dtype, or a storage, from
    ``storage_offset`` with ``size`` and ``stride`` in elements), or none (``set_()``: empty).

    >>> t = ember.arange(6.)
    >>> ember.tensor([1.]).set_(t.untyped_storage(), 2, (2, 2), (1, 2))
    tensor([[2., 4.],
            [3., 5.]])
    """
    from ember._tensor import version_counter
    from ember.autograd.grad_mode import state

    if self._requires_grad and self._grad_fn is None and state.enabled:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
    dtype = self._data.dtype
    if source is None:
        data = np.empty(0, dtype)
    elif isinstance(source, Tensor):
        if source._data.dtype != dtype:
            raise RuntimeError(f"set_: could not set a tensor of type {self.dtype} to a tensor of type "
                               f"{source.dtype}; convert one first, e.g. source.to({self.dtype})")
        data = source._data
    elif isinstance(source, (UntypedStorage, TypedStorage)):
        data = _on_storage(source.untyped() if isinstance(source, TypedStorage) else source, dtype, storage_offset,
                           size, stride)
    else:
        raise TypeError(f"set_: expected a Tensor or a storage as source, got {type(source).__name__}")
    self._data = data
    version_counter(self)[0] += 1
    return self


def _on_storage(storage: UntypedStorage, dtype: np.dtype, offset: int, size, stride) -> np.ndarray:
    """An array of ``dtype`` on ``storage``'s bytes, sharing them; sizes and strides in elements."""
    elements = storage.nbytes() // dtype.itemsize
    size = (elements - offset,) if size is None else tuple(size)
    if stride is None:
        stride, step = [], 1
        for n in reversed(size):
            stride.insert(0, step)
            step *= max(n, 1)
    stride = tuple(stride)
    if len(stride) != len(size):
        raise RuntimeError(f"set_: size {list(size)} and stride {list(stride)} must have as many dims")
    last = offset + sum((n - 1) * s for n, s in zip(size, stride)) if all(size) else offset - 1
    if offset < 0 or last >= elements:
        raise RuntimeError(f"set_: size {list(size)}, stride {list(stride)} and storage offset {offset} reach element "
                           f"{last}, beyond the storage's {elements} elements of {dtype}")
    return np.ndarray(size, dtype, buffer=storage._bytes, offset=offset * dtype.itemsize,
                      strides=tuple(s * dtype.itemsize for s in stride))
