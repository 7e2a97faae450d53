"""Gumbel-softmax: a differentiable sample of a categorical distribution given by logits.

>>> import ember
>>> sample = ember.nn.functional.gumbel_softmax(ember.zeros(2, 3), hard=True)
>>> sample.sum(-1)
tensor([1., 1.])
"""
from __future__ import annotations

import warnings

import ember
from ember._ops._support import user_stacklevel
from ember._tensor import Tensor
from ember.overrides import overridable

__all__ = ["gumbel_softmax"]


@overridable("ember.nn.functional")
def gumbel_softmax(logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10, dim: int = -1) -> Tensor:
    """A sample of the Gumbel-softmax distribution over ``dim``: softmax of ``(logits + gumbel noise) / tau``.

    With ``hard=True`` the sample is one-hot (the noisy argmax), and its gradient is the soft sample's
    (the straight-through estimator).
    """
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=user_stacklevel())
    noise = -ember.empty_like(logits).exponential_().log()
    soft = ((logits + noise) / tau).softmax(dim)
    if not hard:
        return soft
    chosen = soft.max(dim, keepdim=True)[1]
    one_hot = ember.zeros_like(logits).scatter_(dim, chosen, 1.0)
    return one_hot - soft.detach() + soft
