"""``HalfCauchy(scale)``: the absolute value of a Cauchy(0, scale) draw.

>>> import ember
>>> from ember.distributions import HalfCauchy
>>> d = HalfCauchy(ember.tensor([1.0]))
>>> d.log_prob(ember.tensor([1.0])), d.cdf(ember.tensor([1.0]))
(tensor([-1.1447]), tensor([0.5000]))
"""
from __future__ import annotations

import math

import ember
from ember.distributions._shared import FoldedAtZero
from ember.distributions.cauchy import Cauchy
from ember.distributions.transformed_distribution import TransformedDistribution
from ember.distributions.transforms import AbsTransform

__all__ = ["HalfCauchy"]


class HalfCauchy(FoldedAtZero, TransformedDistribution):
    """The distribution of ``|x|`` for ``x ~ Cauchy(0, scale)``: no finite mean or variance."""

    def __init__(self, scale, validate_args=None):
        super().__init__(Cauchy(0, scale, validate_args=False), AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(HalfCauchy, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        return ember.full(self._extended_shape(), math.inf, dtype=self.scale.dtype)

    @property
    def variance(self):
        return self.base_dist.variance
