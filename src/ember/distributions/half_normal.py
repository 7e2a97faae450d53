"""``HalfNormal(scale)``: the absolute value of a Normal(0, scale) draw.

>>> import ember
>>> from ember.distributions import HalfNormal
>>> HalfNormal(ember.tensor([1.0])).log_prob(ember.tensor([0.5]))
tensor([-0.3508])
"""
from __future__ import annotations

import math

from ember.distributions._shared import FoldedAtZero
from ember.distributions.normal import Normal
from ember.distributions.transformed_distribution import TransformedDistribution
from ember.distributions.transforms import AbsTransform

__all__ = ["HalfNormal"]


class HalfNormal(FoldedAtZero, TransformedDistribution):
    """The distribution of ``|x|`` for ``x ~ Normal(0, scale)``."""

    def __init__(self, scale, validate_args=None):
        super().__init__(Normal(0, scale, validate_args=False), AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(HalfNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def variance(self):
        return self.scale.pow(2) * (1 - 2 / math.pi)
