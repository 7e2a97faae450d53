"""DLPack: tensors shared with other array libraries (NumPy, torch, JAX, CuPy on the CPU) without a copy.

NumPy implements the protocol both ways, so ember hands it the work: ``from_dlpack``
wraps ``np.from_dlpack``'s array, and ``Tensor.__dlpack__`` exports the tensor's array.

>>> import numpy as np
>>> a = np.zeros(3, np.float32)
>>> t = ember.from_dlpack(a)
>>> t[0] = 5.0
>>> a
array([5., 0., 0.], dtype=float32)
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ember._creation import from_numpy
from ember._tensor import Tensor
from ember.overrides import not_overridable

_CPU = 1  # DLPack's device type code for the CPU


class _Capsule:
    """A bare DLPack capsule (what ``to_dlpack`` returns) presented as an object with ``__dlpack__``."""

    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, **kwargs):
        return self.capsule

    def __dlpack_device__(self) -> tuple:
        return (_CPU, 0)


def _is_capsule(obj: Any) -> bool:
    return type(obj).__name__ == "PyCapsule"


class _WritableAlias:
    """An array's memory offered again, writable. A bare capsule (DLPack before version 1) has no read-only
    flag, so NumPy reads its memory as read-only; torch treats it as writable, and so does ember."""

    def __init__(self, array: np.ndarray):
        self.array = array  # keeps the capsule's owner alive as long as the alias lives
        interface = dict(array.__array_interface__)
        interface["data"] = (interface["data"][0], False)
        self.__array_interface__ = interface


@not_overridable  # its argument is another library's array, whose __torch_function__ is not ember's
def from_dlpack(ext_tensor: Any, *, device=None, copy: bool | None = None) -> Tensor:
    """A tensor over the memory of ``ext_tensor``: anything with ``__dlpack__`` (a NumPy array, a torch tensor,
    a JAX or CuPy CPU array) or a capsule from ``to_dlpack``. It shares memory unless ``copy=True``.

    >>> import numpy as np
    >>> ember.from_dlpack(np.arange(3))
    tensor([0, 1, 2])
    """
    if device is not None and str(device).split(":")[0] != "cpu":
        raise RuntimeError(f"from_dlpack: ember runs on the CPU only; device {device!r} is not available")
    source = _Capsule(ext_tensor) if _is_capsule(ext_tensor) else ext_tensor
    if not hasattr(source, "__dlpack__"):
        raise TypeError(f"from_dlpack: expected an object with __dlpack__ or a DLPack capsule, "
                        f"got {type(ext_tensor).__name__}")
    try:
        array = np.from_dlpack(source, copy=copy)
    except BufferError as error:
        raise RuntimeError(f"from_dlpack: the producer cannot share its memory with the CPU: {error}") from None
    if source is not ext_tensor and not array.flags.writeable:
        array = np.asarray(_WritableAlias(array))
    return from_numpy(array)


@not_overridable
def to_dlpack(tensor: Tensor):
    """A DLPack capsule of ``tensor``'s memory, for a library that takes capsules (prefer passing the tensor).

    >>> ember.utils.dlpack.to_dlpack(ember.ones(2)).__class__.__name__
    'PyCapsule'
    """
    return tensor.__dlpack__()


def dlpack(self: Tensor, *, stream: Any = None, max_version: tuple | None = None, dl_device: tuple | None = None,
           copy: bool | None = None):
    """``Tensor.__dlpack__``: the tensor's memory as a DLPack capsule; a layout DLPack consumers refuse (negative
    strides) is exported as a copy unless ``copy=False``."""
    if self.requires_grad:
        raise RuntimeError("Can't export tensors that require gradient, use tensor.detach()")
    data = self._data
    if any(s < 0 for s in data.strides):
        if copy is False:
            raise BufferError("__dlpack__: the tensor has negative strides, which DLPack consumers refuse; "
                              "allow a copy (copy=None) or export t.contiguous()")
        data, copy = np.ascontiguousarray(data), None
    return data.__dlpack__(stream=stream, max_version=max_version, dl_device=dl_device, copy=copy)


def dlpack_device(self: Tensor) -> tuple:
    """``Tensor.__dlpack_device__``: (CPU, 0)."""
    return (_CPU, 0)
