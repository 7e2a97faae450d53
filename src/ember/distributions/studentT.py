"""``StudentT(df, loc=0.0, scale=1.0)``: Student's t distribution, reparameterised.

>>> import ember
>>> from ember.distributions import StudentT
>>> StudentT(ember.tensor([3.0])).log_prob(ember.tensor([0.5]))
tensor([-1.1610])
"""
from __future__ import annotations

import math

import ember
from ember import Size
from ember.distributions import constraints
from ember.distributions.chi2 import Chi2
from ember.distributions.distribution import Distribution
from ember.distributions.utils import broadcast_all

__all__ = ["StudentT"]


class StudentT(Distribution):
    """``loc + scale * t`` with ``t`` Student-t with ``df`` degrees of freedom."""

    arg_constraints = {"df": constraints.positive, "loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(self.df.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(StudentT, batch_shape, _instance, ("df", "loc", "scale"))
        new._chi2 = self._chi2.expand(batch_shape)
        return new

    @property
    def mean(self):
        return ember.where(self.df > 1, self.loc, ember.full_like(self.loc, math.nan))

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        df = self.df
        finite = self.scale.pow(2) * df / (df - 2)
        infinite = ember.full_like(finite, math.inf)
        return ember.where(df > 2, finite, ember.where(df > 1, infinite, ember.full_like(finite, math.nan)))

    def rsample(self, sample_shape=Size()):
        # a standard normal over the root of an independent chi-squared per degree of freedom
        shape = self._extended_shape(sample_shape)
        x = ember.randn(shape, dtype=self.df.dtype)
        z = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * x * ember.rsqrt(z / self.df)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        df = self.df
        normaliser = (self.scale.log() + 0.5 * df.log() + 0.5 * math.log(math.pi) + ember.lgamma(0.5 * df)
                      - ember.lgamma(0.5 * (df + 1.0)))
        return -0.5 * (df + 1.0) * ember.log1p(y.pow(2) / df) - normaliser

    def entropy(self):
        df = self.df
        log_beta = ember.lgamma(0.5 * df) + math.lgamma(0.5) - ember.lgamma(0.5 * (df + 1))
        return (self.scale.log() + 0.5 * (df + 1) * (ember.digamma(0.5 * (df + 1)) - ember.digamma(0.5 * df))
                + 0.5 * df.log() + log_beta)
