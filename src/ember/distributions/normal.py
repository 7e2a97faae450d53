"""``Normal(loc, scale)``: the Gaussian distribution.

>>> import ember
>>> from ember.distributions import Normal
>>> d = Normal(ember.tensor([0.0]), ember.tensor([2.0]))
>>> d.log_prob(ember.tensor([0.0]))
tensor([-1.6121])
>>> d.cdf(ember.tensor([0.0]))
tensor([0.5000])
"""
from __future__ import annotations

import math

import ember
from ember import Size
from ember.distributions._shared import LocationScale
from ember.distributions.exp_family import ExponentialFamily

__all__ = ["Normal"]

_HALF_LOG_TWO_PI = 0.5 * math.log(2 * math.pi)


class Normal(LocationScale, ExponentialFamily):
    """The normal distribution with mean ``loc`` and standard deviation ``scale``."""

    _mean_carrier_measure = 0

    @property
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        with ember.no_grad():
            return ember.normal(self.loc.expand(shape), self.scale.expand(shape))

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        eps = ember.randn(shape, dtype=self.loc.dtype)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -((value - self.loc) ** 2) / (2 * self.variance) - self.scale.log() - _HALF_LOG_TWO_PI

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + ember.erf((value - self.loc) * self.scale.reciprocal() / math.sqrt(2)))

    def icdf(self, value):
        return self.loc + self.scale * ember.erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self):
        return 0.5 + _HALF_LOG_TWO_PI + ember.log(self.scale)

    @property
    def _natural_params(self):
        return (self.loc / self.scale.pow(2), -0.5 * self.scale.pow(2).reciprocal())

    def _log_normalizer(self, x, y):
        return -0.25 * x.pow(2) / y + 0.5 * ember.log(-math.pi / y)
