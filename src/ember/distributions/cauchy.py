"""``Cauchy(loc, scale)``: the Lorentz distribution, with no mean or variance.

>>> import ember
>>> from ember.distributions import Cauchy
>>> d = Cauchy(ember.tensor([0.0]), ember.tensor([1.0]))
>>> d.log_prob(ember.tensor([1.0])), d.cdf(ember.tensor([1.0]))
(tensor([-1.8379]), tensor([0.7500]))
"""
from __future__ import annotations

import math

import ember
from ember import Size
from ember.distributions._shared import LocationScale
from ember.distributions.distribution import Distribution

__all__ = ["Cauchy"]


class Cauchy(LocationScale, Distribution):
    """The Cauchy distribution, density ``1 / (π scale (1 + ((x - loc) / scale)²))``."""

    @property
    def mean(self):
        return ember.full(self._extended_shape(), math.nan, dtype=self.loc.dtype)

    @property
    def variance(self):
        return ember.full(self._extended_shape(), math.inf, dtype=self.loc.dtype)

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        eps = ember.empty(shape, dtype=self.loc.dtype).cauchy_()
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        return -math.log(math.pi) - self.scale.log() - z.pow(2).log1p()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return ember.atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value):
        return ember.tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()
