"""``Gamma(concentration, rate)``: shape ``concentration``, inverse scale ``rate``; ``rsample`` is reparameterised.

>>> import ember
>>> from ember.distributions import Gamma
>>> d = Gamma(ember.tensor([2.0]), ember.tensor([3.0]))
>>> d.mean, d.log_prob(ember.tensor([1.0]))
(tensor([0.6667]), tensor([-0.8028]))
"""
from __future__ import annotations

import numbers

import ember
from ember import Size
from ember.distributions import constraints
from ember.distributions._gamma_sampling import standard_gamma
from ember.distributions.exp_family import ExponentialFamily
from ember.distributions.utils import broadcast_all

__all__ = ["Gamma"]


class Gamma(ExponentialFamily):
    """The Gamma distribution, density ``rate^c x^(c-1) exp(-rate x) / Γ(c)``."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        scalar = isinstance(concentration, numbers.Number) and isinstance(rate, numbers.Number)
        super().__init__(Size() if scalar else self.concentration.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(Gamma, batch_shape, _instance, ("concentration", "rate"))

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        draws = standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        return draws.clamp(min=ember.finfo(draws.dtype).tiny)  # dividing by a large rate may underflow to 0

    def log_prob(self, value):
        value = ember.as_tensor(value, dtype=self.rate.dtype)
        if self._validate_args:
            self._validate_sample(value)
        c, rate = self.concentration, self.rate
        return ember.xlogy(c, rate) + ember.xlogy(c - 1, value) - rate * value - ember.lgamma(c)

    def entropy(self):
        c = self.concentration
        return c - ember.log(self.rate) + ember.lgamma(c) + (1.0 - c) * ember.digamma(c)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return ember.special.gammainc(self.concentration, self.rate * value)

    @property
    def _natural_params(self):
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x, y):
        return ember.lgamma(x + 1) + (x + 1) * ember.log(-y.reciprocal())
