"""``GeneralizedPareto(loc, scale, concentration)``: the limit law of excesses over a high threshold.

``concentration`` ``ξ > 0`` gives a heavy tail, ``ξ = 0`` the exponential, ``ξ < 0`` a bounded support
``[loc, loc - scale/ξ]``. Draws are reparameterised through the inverse CDF.

>>> import ember
>>> from ember.distributions import GeneralizedPareto
>>> d = GeneralizedPareto(ember.tensor([0.0]), ember.tensor([2.0]), ember.tensor([0.5]))
>>> d.mean, d.log_prob(ember.tensor([1.0])), d.cdf(ember.tensor([1.0]))
(tensor([4.]), tensor([-1.3626]), tensor([0.3600]))
"""
from __future__ import annotations

import math
import numbers

import ember
from ember import Size
from ember.distributions import constraints
from ember.distributions.distribution import Distribution
from ember.distributions.utils import broadcast_all

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    """The generalized Pareto distribution, survival function ``(1 + ξ z)^(-1/ξ)`` for ``z = (x - loc)/scale``."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive, "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        scalar = all(isinstance(v, numbers.Number) for v in (loc, scale, concentration))
        super().__init__(Size() if scalar else self.loc.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(GeneralizedPareto, batch_shape, _instance, ("loc", "scale", "concentration"))

    def _zero_and_safe_concentration(self):
        """Where ``ξ`` is (close to) 0, and ``ξ`` with those entries set to 1 so no branch divides by 0."""
        xi = self.concentration
        zero = ember.isclose(xi, ember.zeros_like(xi))
        return zero, ember.where(zero, ember.ones_like(xi), xi)

    def rsample(self, sample_shape=Size()):
        u = ember.rand(self._extended_shape(sample_shape), dtype=self.loc.dtype)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        zero, xi = self._zero_and_safe_concentration()
        power = 1 / xi + ember.ones_like(z)
        nonzero = ember.where(power == 0, power, power * ember.log1p(xi * z))
        return -self.scale.log() - ember.where(zero, z, nonzero)

    def log_survival_function(self, value):
        """``log P(X > value)``."""
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        zero, xi = self._zero_and_safe_concentration()
        return ember.where(zero, -z, -ember.log1p(xi * z) / xi)

    def log_cdf(self, value):
        """``log P(X <= value)``."""
        return ember.log1p(-ember.exp(self.log_survival_function(value)))

    def cdf(self, value):
        return ember.exp(self.log_cdf(value))

    def icdf(self, value):
        zero, xi = self._zero_and_safe_concentration()
        log_u = ember.log1p(-value)
        nonzero = self.loc + self.scale / xi * ember.expm1(-xi * log_u)
        return ember.where(zero, self.loc - self.scale * log_u, nonzero)

    @property
    def mean(self):
        xi = self.concentration
        finite = xi < 1
        mean = self.loc + self.scale / (1 - ember.where(finite, xi, ember.full_like(xi, 0.5)))
        return ember.where(finite, mean, ember.full_like(mean, math.nan))

    @property
    def variance(self):
        xi = self.concentration
        finite = xi < 0.5
        safe = ember.where(finite, xi, ember.full_like(xi, 0.25))
        variance = self.scale.pow(2) / ((1 - safe).pow(2) * (1 - 2 * safe))
        return ember.where(finite, variance, ember.full_like(variance, math.nan))

    @property
    def mode(self):
        return self.loc

    def entropy(self):
        return (self.scale.log() + self.concentration + 1).expand(self._batch_shape)

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        lower = self.loc
        upper = ember.where(self.concentration < 0, lower - self.scale / self.concentration,
                            ember.full_like(lower, math.inf))
        return constraints.interval(lower, upper)
