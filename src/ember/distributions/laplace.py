"""``Laplace(loc, scale)``: the double exponential distribution.

>>> import ember
>>> from ember.distributions import Laplace
>>> d = Laplace(ember.tensor([0.0]), ember.tensor([1.0]))
>>> d.log_prob(ember.tensor([1.0])), d.cdf(ember.tensor([0.0]))
(tensor([-1.6931]), tensor([0.5000]))
"""
from __future__ import annotations

import math

import ember
from ember import Size
from ember.distributions._shared import LocationScale
from ember.distributions.distribution import Distribution

__all__ = ["Laplace"]


class Laplace(LocationScale, Distribution):
    """The Laplace distribution, density ``exp(-|x - loc| / scale) / (2 scale)``."""

    @property
    def variance(self):
        return 2 * self.scale.pow(2)

    @property
    def stddev(self):
        return math.sqrt(2) * self.scale

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        eps = ember.finfo(self.loc.dtype).eps
        u = ember.empty(shape, dtype=self.loc.dtype).uniform_(eps - 1, 1)  # open at -1: log1p(-|u|) stays finite
        return self.loc - self.scale * u.sign() * ember.log1p(-u.abs())

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -ember.log(2 * self.scale) - ember.abs(value - self.loc) / self.scale

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        centred = value - self.loc
        return 0.5 - 0.5 * centred.sign() * ember.expm1(-centred.abs() / self.scale)

    def icdf(self, value):
        centred = value - 0.5
        return self.loc - self.scale * centred.sign() * ember.log1p(-2 * centred.abs())

    def entropy(self):
        return 1 + ember.log(2 * self.scale)
