"""The Tensor's conversions to complex dtypes: ``cfloat``, ``cdouble``, and ``chalf``, which ember refuses.

>>> import ember
>>> ember.tensor([1., 2.]).cfloat()
tensor([1.+0.j, 2.+0.j])
>>> ember.tensor([1, 2]).cdouble().dtype
ember.complex128
"""
from __future__ import annotations

from ember import _dtype
from ember._ops.copy import to
from ember._tensor import Tensor


def _cast(self: Tensor, dtype: _dtype.dtype, memory_format) -> Tensor:
    return to(self, dtype) if memory_format is None else to(self, dtype, memory_format=memory_format)


def cfloat(self: Tensor, memory_format=None) -> Tensor:
    """``self.to(ember.complex64)``.

    >>> ember.tensor([1.5]).cfloat()
    tensor([1.5000+0.j])
    """
    return _cast(self, _dtype.complex64, memory_format)


def cdouble(self: Tensor, memory_format=None) -> Tensor:
    """``self.to(ember.complex128)``.

    >>> ember.tensor([1j]).cdouble().dtype
    ember.complex128
    """
    return _cast(self, _dtype.complex128, memory_format)


def chalf(self: Tensor, memory_format=None) -> Tensor:
    """torch's complex32 (two halves): ember has no such dtype, so this is refused with the nearest one to use.

    >>> ember.ones(1).chalf()
    Traceback (most recent call last):
    TypeError: chalf: ember has no complex32 (complex half) dtype; use x.cfloat() (complex64) instead
    """
    raise TypeError("chalf: ember has no complex32 (complex half) dtype; use x.cfloat() (complex64) instead")
