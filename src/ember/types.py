"""The type aliases that annotations use, as ``torch.types``: ``Number``, ``Device``, ``FileLike``, ``_size`` ...

>>> import ember
>>> from ember.types import Device, Number, _size
>>> def place(x: ember.Tensor, device: Device = None) -> ember.Tensor:
...     return x if device is None else x.to(device)
>>> isinstance(2.5, ember.types._Number), ember.Size([2, 3]) == (2, 3)
(True, True)

ember has no symbolic sizes, so the ``*LikeType`` aliases are the plain Python types and ``py_sym_types`` is
empty.
"""
from __future__ import annotations

import os
from builtins import bool as _bool, bytes as _bytes, complex as _complex, float as _float, int as _int  # noqa: F401
from builtins import str as _str  # noqa: F401
from collections.abc import Sequence
from typing import IO, TYPE_CHECKING, Protocol, TypeAlias, Union

from ember._dtype import dtype as _dtype  # noqa: F401
from ember._layout import layout as _layout  # noqa: F401
from ember._quantized_dtypes import qscheme as _qscheme  # noqa: F401
from ember._size import Size
from ember._tensor import Tensor, device as _device

if TYPE_CHECKING:
    from ember.autograd.graph import GradientEdge  # noqa: F401

__all__ = ["Number", "Device", "FileLike", "Storage"]

_TensorOrTensors: TypeAlias = Tensor | Sequence[Tensor]
_TensorOrOptionalTensors: TypeAlias = Tensor | Sequence[Tensor | None]
_TensorOrTensorsOrGradEdge: TypeAlias = Union[Tensor, Sequence[Tensor], "GradientEdge", Sequence["GradientEdge"]]
_size: TypeAlias = Size | list[int] | tuple[int, ...]
_symsize: TypeAlias = Size | Sequence[int]
_dispatchkey: TypeAlias = str

# without symbolic sizes, an int-like value is an int (and so on)
IntLikeType: TypeAlias = int
FloatLikeType: TypeAlias = float
BoolLikeType: TypeAlias = bool
py_sym_types: tuple = ()

Number: TypeAlias = int | float | bool
_Number = (int, float, bool)
FileLike: TypeAlias = str | os.PathLike[str] | IO[bytes]
Device: TypeAlias = _device | str | int | None


class Storage(Protocol):
    """What annotations mean by a storage: ``ember.UntypedStorage`` and ``ember.TypedStorage`` have these."""

    device: _device
    dtype: _dtype

    def element_size(self) -> int: ...

    def nbytes(self) -> int: ...

    def data_ptr(self) -> int: ...

    def cpu(self) -> Storage: ...

    def is_shared(self) -> bool: ...

    def share_memory_(self) -> Storage: ...
