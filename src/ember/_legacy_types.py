"""The legacy tensor types: ``ember.FloatTensor`` and its kin, as constructors and in ``isinstance``.

Each is a class whose instances are never made: calling it makes a plain ``Tensor`` of its dtype,
and ``isinstance(x, ember.FloatTensor)`` asks whether ``x`` is a tensor of that dtype.

>>> import ember
>>> ember.LongTensor([1, 2])
tensor([1, 2])
>>> ember.FloatTensor(2, 3).shape
ember.Size([2, 3])
>>> isinstance(ember.ones(2), ember.FloatTensor), isinstance(ember.ones(2), ember.DoubleTensor)
(True, False)
"""
from __future__ import annotations

from ember import _dtype as D
from ember._size import Size
from ember._tensor import Tensor, device as _device


class tensortype(type):
    """The type of the legacy tensor types: ``isinstance`` checks a tensor's dtype, calling one makes a tensor."""

    dtype: D.dtype

    def __instancecheck__(cls, value) -> bool:
        return isinstance(value, Tensor) and value.dtype is cls.dtype

    def __call__(cls, *args, device=None, **kwargs) -> Tensor:
        if device is not None:
            _device(device)
        if kwargs:
            raise TypeError(
                f"{cls.__name__}() got unexpected keyword arguments {sorted(kwargs)}: the legacy constructors take "
                f"data or sizes and device= only; for other options use ember.tensor(data, dtype={cls.dtype})"
            )
        return _construct(cls, args)


def _construct(cls: tensortype, args: tuple) -> Tensor:
    from ember._creation import empty, tensor

    name = cls.__name__
    if not args:
        return empty(0, dtype=cls.dtype)
    if all(type(a) is int for a in args) or len(args) == 1 and isinstance(args[0], Size):
        return empty(*args, dtype=cls.dtype)  # sizes: uninitialised memory (ember's is zeros)
    if len(args) > 1:
        raise TypeError(
            f"{name}(): expected data (a sequence), a tensor or sizes (ints), got {len(args)} arguments of types "
            f"{[type(a).__name__ for a in args]}"
        )
    data = args[0]
    if isinstance(data, Tensor):
        if data.dtype is not cls.dtype:
            raise TypeError(
                f"{name}(): expected a tensor of dtype {cls.dtype}, got {data.dtype}; convert it with "
                f"x.to({cls.dtype}) or x.type(ember.{name})"
            )
        return data  # as torch: the same tensor, not a copy
    if isinstance(data, (str, bytes)) or not hasattr(data, "__len__") and not hasattr(data, "__array__"):
        raise TypeError(f"{name}(): data must be a sequence (got {type(data).__name__})")
    return tensor(data, dtype=cls.dtype)


def _legacy(name: str, dtype: D.dtype) -> tensortype:
    cls = tensortype(name, (), {"dtype": dtype, "__module__": "ember", "__doc__": f"Tensors of dtype {dtype}."})
    cls.__qualname__ = name
    return cls


FloatTensor = _legacy("FloatTensor", D.float32)
DoubleTensor = _legacy("DoubleTensor", D.float64)
HalfTensor = _legacy("HalfTensor", D.float16)
LongTensor = _legacy("LongTensor", D.int64)
IntTensor = _legacy("IntTensor", D.int32)
ShortTensor = _legacy("ShortTensor", D.int16)
CharTensor = _legacy("CharTensor", D.int8)
ByteTensor = _legacy("ByteTensor", D.uint8)
BoolTensor = _legacy("BoolTensor", D.bool_)
BFloat16Tensor = _legacy("BFloat16Tensor", D.bfloat16)  # (its values need ml_dtypes, which says so when missing)

LEGACY_TYPES = (FloatTensor, DoubleTensor, HalfTensor, LongTensor, IntTensor, ShortTensor, CharTensor, ByteTensor,
                BoolTensor, BFloat16Tensor)
