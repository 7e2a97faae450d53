"""``swap_tensors``: exchange two tensor objects' contents, so that every reference to one now sees the other.

>>> import ember
>>> a, b = ember.ones(2), ember.zeros(3, requires_grad=True)
>>> swap_tensors(a, b)
>>> a, b
(tensor([0., 0., 0.], requires_grad=True), tensor([1., 1.]))
"""
from __future__ import annotations

from ember._tensor import Tensor


def swap_tensors(t1: Tensor, t2: Tensor) -> None:
    """Swap everything two tensors hold (values, autograd state, attributes) and their classes, in place.

    What ``Module`` conversions use to replace a parameter while its holders keep the object.
    """
    for i, t in enumerate((t1, t2), 1):
        if not isinstance(t, Tensor):
            raise TypeError(f"swap_tensors: expected t{i} to be a Tensor, got {type(t).__name__}")
    if t1 is t2:
        return
    state1, state2 = dict(t1.__dict__), dict(t2.__dict__)
    t1.__dict__.clear()
    t1.__dict__.update(state2)
    t2.__dict__.clear()
    t2.__dict__.update(state1)
    t1.__class__, t2.__class__ = t2.__class__, t1.__class__
