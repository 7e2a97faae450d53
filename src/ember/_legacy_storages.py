"""The legacy typed storage classes (``ember.FloatStorage`` and its kin): a ``TypedStorage`` of one dtype each,
what ``Tensor.storage_type()`` names.

>>> import ember
>>> ember.FloatStorage(3).size(), ember.FloatStorage(3).dtype
(3, ember.float32)
"""
from __future__ import annotations

from ember import _dtype as D
from ember.storage import TypedStorage


class _LegacyStorage(TypedStorage):
    """A ``TypedStorage`` whose dtype is fixed by its class."""

    legacy_dtype: D.dtype

    def __init__(self, *args, device=None) -> None:
        super().__init__(*args, dtype=self.legacy_dtype, device=device)


def _storage_class(name: str, dtype: D.dtype) -> type:
    cls = type(name, (_LegacyStorage,), {"legacy_dtype": dtype, "__doc__": f"A typed storage of {dtype!r}."})
    cls.__module__ = "ember"
    return cls


# (name, dtype) of each class, in torch's order; the names are spelled out below, for readers and linters
_TABLE = (("DoubleStorage", D.float64), ("FloatStorage", D.float32), ("HalfStorage", D.float16),
          ("BFloat16Storage", D.bfloat16), ("LongStorage", D.int64), ("IntStorage", D.int32),
          ("ShortStorage", D.int16), ("CharStorage", D.int8), ("ByteStorage", D.uint8), ("BoolStorage", D.bool_),
          ("ComplexDoubleStorage", D.complex128), ("ComplexFloatStorage", D.complex64))
(DoubleStorage, FloatStorage, HalfStorage, BFloat16Storage, LongStorage, IntStorage, ShortStorage, CharStorage,
 ByteStorage, BoolStorage, ComplexDoubleStorage, ComplexFloatStorage) = CLASSES = tuple(
    _storage_class(name, dtype) for name, dtype in _TABLE)
OF_DTYPE = {cls.legacy_dtype: cls for cls in CLASSES}
Storage = FloatStorage  # torch's old default storage type
