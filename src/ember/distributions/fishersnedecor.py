"""``FisherSnedecor(df1, df2)``: the F distribution, the ratio of two scaled chi-squared draws.

>>> import ember
>>> from ember.distributions import FisherSnedecor
>>> d = FisherSnedecor(ember.tensor([4.0]), ember.tensor([6.0]))
>>> d.mean, d.log_prob(ember.tensor([1.0]))
(tensor([1.5000]), tensor([-0.8802]))
"""
from __future__ import annotations

import math
import numbers

import ember
from ember import Size
from ember.distributions import constraints
from ember.distributions.distribution import Distribution
from ember.distributions.gamma import Gamma
from ember.distributions.utils import broadcast_all

__all__ = ["FisherSnedecor"]


def _nan_unless(condition, value):
    return ember.where(condition, value, ember.full_like(value, math.nan))


class FisherSnedecor(Distribution):
    """``(X₁ / df1) / (X₂ / df2)`` for independent ``X₁ ~ χ²(df1)``, ``X₂ ~ χ²(df2)``; reparameterised."""

    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1, df2, validate_args=None):
        self.df1, self.df2 = broadcast_all(df1, df2)
        # χ²(d)/d is Gamma(d/2, d)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2)
        scalar = isinstance(df1, numbers.Number) and isinstance(df2, numbers.Number)
        super().__init__(Size() if scalar else self.df1.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(FisherSnedecor, batch_shape, _instance, ("df1", "df2"))
        new._gamma1 = self._gamma1.expand(batch_shape)
        new._gamma2 = self._gamma2.expand(batch_shape)
        return new

    @property
    def mean(self):
        df2 = self.df2
        return _nan_unless(df2 > 2, df2 / (df2 - 2))

    @property
    def mode(self):
        df1, df2 = self.df1, self.df2
        return _nan_unless(df1 > 2, (df1 - 2) / df1 * df2 / (df2 + 2))

    @property
    def variance(self):
        df1, df2 = self.df1, self.df2
        variance = 2 * df2.pow(2) * (df1 + df2 - 2) / (df1 * (df2 - 2).pow(2) * (df2 - 4))
        return _nan_unless(df2 > 4, variance)

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        tiny = ember.finfo(self.df1.dtype).tiny
        x1 = self._gamma1.rsample(sample_shape).reshape(shape)
        x2 = self._gamma2.rsample(sample_shape).reshape(shape).clamp(min=tiny)
        return (x1 / x2).clamp(min=tiny)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        half1, half2 = self.df1 * 0.5, self.df2 * 0.5
        ratio = self.df1 / self.df2
        log_beta = half1.lgamma() + half2.lgamma() - (half1 + half2).lgamma()
        log_kernel = half1 * ratio.log() + (half1 - 1) * ember.log(value) - (half1 + half2) * ember.log1p(ratio * value)
        return log_kernel - log_beta
