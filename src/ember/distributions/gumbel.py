"""``Gumbel(loc, scale)``: the distribution of the maximum of many draws (type I extreme values).

>>> import ember
>>> from ember.distributions import Gumbel
>>> d = Gumbel(ember.tensor([0.0]), ember.tensor([1.0]))
>>> d.log_prob(ember.tensor([0.5])), d.cdf(ember.tensor([0.0]))
(tensor([-1.1065]), tensor([0.3679]))
"""
from __future__ import annotations

import math

import ember
from ember import Size
from ember.distributions._shared import LocationScale
from ember.distributions.distribution import Distribution

__all__ = ["Gumbel"]

_EULER_GAMMA = 0.57721566490153286


class Gumbel(LocationScale, Distribution):
    """The Gumbel distribution, CDF ``exp(-exp(-(x - loc) / scale))``."""

    @property
    def mean(self):
        return self.loc + self.scale * _EULER_GAMMA

    @property
    def stddev(self):
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        info = ember.finfo(self.loc.dtype)
        u = ember.rand(shape, dtype=self.loc.dtype).clamp(min=info.tiny, max=1 - info.eps)
        return self.loc - self.scale * (-u.log()).log()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        return -(z + ember.exp(-z)) - self.scale.log()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return ember.exp(-ember.exp(-(value - self.loc) / self.scale))

    def icdf(self, value):
        return self.loc - self.scale * (-value.log()).log()

    def entropy(self):
        return self.scale.log() + (1 + _EULER_GAMMA)
