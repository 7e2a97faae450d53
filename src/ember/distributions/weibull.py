"""``Weibull(scale, concentration)``: ``scale * E^(1/concentration)`` for a unit exponential ``E``.

>>> import ember
>>> from ember.distributions import Weibull
>>> d = Weibull(ember.tensor([1.0]), ember.tensor([2.0]))
>>> d.log_prob(ember.tensor([0.5])), d.mean
(tensor([-0.2500]), tensor([0.8862]))
"""
from __future__ import annotations

import math

import ember
from ember.distributions import constraints
from ember.distributions.exponential import Exponential
from ember.distributions.transformed_distribution import TransformedDistribution
from ember.distributions.transforms import AffineTransform, PowerTransform
from ember.distributions.utils import broadcast_all

__all__ = ["Weibull"]

_EULER_GAMMA = 0.57721566490153286


class Weibull(TransformedDistribution):
    """The Weibull distribution, CDF ``1 - exp(-(x / scale)^concentration)``."""

    arg_constraints = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, scale, concentration, validate_args=None):
        self.scale, self.concentration = broadcast_all(scale, concentration)
        self.concentration_reciprocal = self.concentration.reciprocal()
        base = Exponential(ember.ones_like(self.scale), validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration_reciprocal), AffineTransform(0, self.scale)]
        super().__init__(base, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Weibull, _instance)
        new.scale = self.scale.expand(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        new.concentration_reciprocal = new.concentration.reciprocal()
        base = self.base_dist.expand(batch_shape)
        transforms = [PowerTransform(exponent=new.concentration_reciprocal), AffineTransform(0, new.scale)]
        TransformedDistribution.__init__(new, base, transforms, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.scale * ember.exp(ember.lgamma(1 + self.concentration_reciprocal))

    @property
    def mode(self):
        k = self.concentration
        return self.scale * ((k - 1) / k) ** k.reciprocal()

    @property
    def variance(self):
        first = ember.exp(ember.lgamma(1 + self.concentration_reciprocal))
        second = ember.exp(ember.lgamma(1 + 2 * self.concentration_reciprocal))
        return self.scale.pow(2) * (second - first.pow(2))

    def entropy(self):
        return (_EULER_GAMMA * (1 - self.concentration_reciprocal) + ember.log(self.scale * self.concentration_reciprocal)
                + 1)
