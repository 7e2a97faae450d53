"""Two small parts of torch's Tensor: ``is_inference`` (made under ``inference_mode``) and the legacy constructor
``Tensor.new``.

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

import numpy as np

from ember._ops._support import ember_function, require_tensor, wrap
from ember._ops.views import alias
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
