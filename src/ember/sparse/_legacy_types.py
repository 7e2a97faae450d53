"""The legacy sparse tensor types, ``ember.sparse.FloatTensor`` and its kin: constructors of sparse COO tensors
(deprecated, they warn) and, in ``isinstance``, a check of layout and dtype.

>>> import warnings
>>> with warnings.catch_warnings():
...     warnings.simplefilter("ignore")
...     x = ember.sparse.FloatTensor(ember.tensor([[0, 2]]), ember.tensor([1., 5.]), ember.Size([3]))
>>> x.to_dense(), isinstance(x, ember.sparse.FloatTensor), isinstance(x.to_dense(), ember.sparse.FloatTensor)
(tensor([1., 0., 5.]), True, False)
"""
from __future__ import annotations

import warnings

from ember import _dtype as D
from ember._layout import sparse_coo
from ember._size import Size
from ember._tensor import Tensor, device as _device


class sparsetensortype(type):
    """The type of the legacy sparse types: ``isinstance`` checks a tensor's layout and dtype."""

    dtype: D.dtype

    def __instancecheck__(cls, value) -> bool:
        return isinstance(value, Tensor) and value.layout is sparse_coo and value.dtype is cls.dtype

    def __call__(cls, *args, device=None) -> Tensor:
        from ember import sparse_coo_tensor

        if device is not None:
            _device(device)
        if not args or all(type(a) is int for a in args) or len(args) == 1 and isinstance(args[0], Size):
            _deprecated("(shape, *, device=)", "(shape, dtype=, device=)")
            sizes = tuple(args[0]) if args and isinstance(args[0], Size) else args or (0,)
            return sparse_coo_tensor(_no_indices(len(sizes)),
                                     _no_values(cls.dtype), sizes)
        if len(args) in (2, 3) and all(isinstance(a, Tensor) for a in args[:2]):
            _deprecated("(indices, values, shape, *, device=)", "(indices, values, shape, dtype=, device=)")
            return sparse_coo_tensor(*args)
        raise TypeError(
            f"{cls.__name__}() takes sizes (ints or a Size), or (indices, values) or (indices, values, size) as "
            f"tensors; got {[type(a).__name__ for a in args]}. Prefer ember.sparse_coo_tensor"
        )


def _deprecated(form: str, instead: str) -> None:
    warnings.warn(f"ember.sparse.SparseTensor{form} is deprecated. Please use ember.sparse_coo_tensor{instead}.",
                  UserWarning, stacklevel=3)


def _no_indices(ndim: int) -> Tensor:
    from ember import empty, int64

    return empty(ndim, 0, dtype=int64)


def _no_values(dtype: D.dtype) -> Tensor:
    from ember import empty

    return empty(0, dtype=dtype)


def _legacy(name: str, dtype: D.dtype) -> sparsetensortype:
    cls = sparsetensortype(name, (), {"dtype": dtype, "__module__": "ember.sparse",
                                      "__doc__": f"Sparse COO tensors of dtype {dtype}."})
    cls.__qualname__ = name
    return cls


_KINDS = [("FloatTensor", D.float32), ("DoubleTensor", D.float64), ("HalfTensor", D.float16),
          ("BFloat16Tensor", D.bfloat16), ("LongTensor", D.int64), ("IntTensor", D.int32), ("ShortTensor", D.int16),
          ("CharTensor", D.int8), ("ByteTensor", D.uint8)]
(FloatTensor, DoubleTensor, HalfTensor, BFloat16Tensor, LongTensor, IntTensor, ShortTensor, CharTensor,
 ByteTensor) = (_legacy(name, dtype) for name, dtype in _KINDS)
