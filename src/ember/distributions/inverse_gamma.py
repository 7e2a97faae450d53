"""``InverseGamma(concentration, rate)``: the reciprocal of a Gamma(concentration, rate) draw.

>>> import ember
>>> from ember.distributions import InverseGamma
>>> d = InverseGamma(ember.tensor([3.0]), ember.tensor([2.0]))
>>> d.mean, d.log_prob(ember.tensor([1.0]))
(tensor([1.]), tensor([-0.6137]))
"""
from __future__ import annotations

import math

import ember
from ember.distributions import constraints
from ember.distributions.gamma import Gamma
from ember.distributions.transformed_distribution import TransformedDistribution
from ember.distributions.transforms import PowerTransform

__all__ = ["InverseGamma"]


class InverseGamma(TransformedDistribution):
    """The distribution of ``1 / x`` for ``x ~ Gamma(concentration, rate)``; ``rate`` scales it."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, concentration, rate, validate_args=None):
        base = Gamma(concentration, rate, validate_args=validate_args)
        super().__init__(base, PowerTransform(-base.rate.new_ones(())), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(InverseGamma, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def concentration(self):
        return self.base_dist.concentration

    @property
    def rate(self):
        return self.base_dist.rate

    @property
    def mean(self):
        c = self.concentration
        return ember.where(c > 1, self.rate / (c - 1), ember.full_like(c, math.inf))

    @property
    def mode(self):
        return self.rate / (self.concentration + 1)

    @property
    def variance(self):
        c = self.concentration
        finite = self.rate.square() / ((c - 1).square() * (c - 2))
        return ember.where(c > 2, finite, ember.full_like(c, math.inf))

    def entropy(self):
        c = self.concentration
        return c + self.rate.log() + c.lgamma() - (1 + c) * c.digamma()
