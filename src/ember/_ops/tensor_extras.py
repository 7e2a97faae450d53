"""Small parts of torch's Tensor: ``is_inference`` (made under ``inference_mode``), the legacy constructor
``Tensor.new``, the deprecated out-of-place ``resize`` and ``resize_as``, and ``slice_inverse``.

A tensor made under ``inference_mode`` carries a flag (set by the one helper that wraps every new array), and
so do its views and ``detach()``; a view of a normal tensor stays normal, as in torch.

>>> import ember
>>> with ember.inference_mode():
...     made = ember.ones(2)
>>> ember.is_inference(made), ember.ones(2).is_inference()
(True, False)
>>> ember.ones(2, dtype=ember.float64).new(2, 3).dtype
ember.float64
"""
from __future__ import annotations

import warnings

import numpy as np

from ember._ops._support import ember_function, require_tensor, user_stacklevel, wrap
from ember._ops.diagonals import _element_offset, _element_strides, as_strided
from ember._ops.views import _shape_arg, alias, reshape
from ember._size import Size
from ember._tensor import Tensor


@ember_function
def is_inference(input: Tensor) -> bool:
    """Whether ``input`` was made under ``inference_mode`` (or is a view or ``detach()`` of such a tensor).

    >>> ember.is_inference(ember.zeros(1))
    False
    """
    return require_tensor(input, "is_inference")._inference


def new(self: Tensor, *args, device=None) -> Tensor:
    """The legacy constructor, in ``self``'s dtype: ``new()`` (empty), ``new(*sizes)`` or ``new(size)``
    (uninitialised), ``new(data)`` (a list or tuple of values) or ``new(other)`` (``other``, of the same dtype).

    >>> ember.tensor([1, 2]).new([3.7, 4])
    tensor([3, 4])
    """
    import ember

    dtype = self.dtype
    if not args or all(isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in args):
        return ember.empty(tuple(int(a) for a in args) or (0,), dtype=dtype, device=device)
    if len(args) > 1:
        raise TypeError(f"new(): expected sizes (ints) or one argument (a size, data or a tensor), got {args!r}")
    (data,) = args
    if isinstance(data, Size):
        return ember.empty(tuple(data), dtype=dtype, device=device)
    if isinstance(data, Tensor):
        if data.dtype != dtype:
            raise TypeError(f"new(): expected a tensor of dtype {dtype}, got one of {data.dtype}; convert it first, "
                            f"e.g. other.to({dtype})")
        return alias(data)
    if not isinstance(data, (list, tuple, np.ndarray)):
        raise TypeError(f"new(): data must be a sequence (got {type(data).__name__})")
    values = np.array(data)
    return wrap(values.astype(dtype.np) if values.size else np.empty(values.shape, dtype.np))


def resize(self: Tensor, *sizes) -> Tensor:
    """Deprecated (as in torch): ``self`` in the shape ``sizes``, which must hold as many elements (a view where
    the memory allows, as ``reshape``).

    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     ember.arange(4).resize(2, 2)
    tensor([[0, 1],
            [2, 3]])
    """
    return _resized("resize", require_tensor(self, "resize"), _shape_arg("resize", sizes, None, "size"))


def resize_as(self: Tensor, tensor: Tensor) -> Tensor:
    """Deprecated (as in torch): ``resize`` to the shape of ``tensor``."""
    shape = require_tensor(tensor, "resize_as", 1, "tensor")._data.shape
    return _resized("resize_as", require_tensor(self, "resize_as"), shape)


def _resized(op: str, x: Tensor, shape: tuple) -> Tensor:
    warnings.warn(f"non-inplace {op} is deprecated", UserWarning, stacklevel=user_stacklevel())
    count, have = int(np.prod(shape)), x._data.size
    if count != have:
        raise RuntimeError(
            f"requested resize to {'x'.join(map(str, shape))} ({count} elements in total), but the given tensor has a "
            f"size of {'x'.join(map(str, x._data.shape))} ({have} elements). autograd's resize can only change the "
            "shape of a given tensor, while preserving the number of elements. Use resize_ (in place) to change it"
        )
    return reshape(x, shape)


@ember_function
def slice_inverse(input: Tensor, src: Tensor, dim: int = 0, start: int | None = None, end: int | None = None,
                  step: int = 1) -> Tensor:
    """The view of ``input``'s memory that ``src`` has (its sizes, strides and storage offset): given a slice of a
    tensor as ``input`` and that tensor as ``src``, the whole tensor again (``dim``, ``start``, ``end`` and
    ``step`` name the slice, as torch's signature has them; the view does not need them).

    >>> base = ember.arange(6.).reshape(2, 3)
    >>> ember.slice_inverse(base[:, 1:], base, 1, 1)
    tensor([[0., 1., 2.],
            [3., 4., 5.]])
    """
    x = require_tensor(input, "slice_inverse")
    whole = require_tensor(src, "slice_inverse", 2, "src")._data
    return as_strided(x, whole.shape, _element_strides(whole), _element_offset(whole))
