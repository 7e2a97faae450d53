"""``Kumaraswamy(concentration1, concentration0)``: a Beta-like law on ``(0, 1)`` with a closed-form CDF.

>>> import ember
>>> from ember.distributions import Kumaraswamy
>>> d = Kumaraswamy(ember.tensor([2.0]), ember.tensor([3.0]))
>>> d.mean, d.log_prob(ember.tensor([0.5]))
(tensor([0.4571]), tensor([0.5232]))
"""
from __future__ import annotations

import math

import ember
from ember.distributions import constraints
from ember.distributions.transformed_distribution import TransformedDistribution
from ember.distributions.transforms import AffineTransform, PowerTransform
from ember.distributions.uniform import Uniform
from ember.distributions.utils import broadcast_all

__all__ = ["Kumaraswamy"]

_EULER_GAMMA = 0.57721566490153286


def _moments(a, b, n: int):
    """``E[Xⁿ] = b B(1 + n/a, b)`` for ``X ~ Kumaraswamy(a, b)``."""
    shifted = 1 + n / a
    return b * ember.exp(ember.lgamma(shifted) + ember.lgamma(b) - ember.lgamma(shifted + b))


class Kumaraswamy(TransformedDistribution):
    """Density ``a b x^(a-1) (1 - x^a)^(b-1)``: ``(1 - u^(1/b))^(1/a)`` for a uniform ``u``."""

    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        base = Uniform(ember.full_like(self.concentration0, 0), ember.full_like(self.concentration0, 1),
                       validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration0.reciprocal()), AffineTransform(loc=1.0, scale=-1.0),
                      PowerTransform(exponent=self.concentration1.reciprocal())]
        super().__init__(base, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Kumaraswamy, _instance)
        new.concentration1 = self.concentration1.expand(batch_shape)
        new.concentration0 = self.concentration0.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        return _moments(self.concentration1, self.concentration0, 1)

    @property
    def mode(self):
        a, b = self.concentration1, self.concentration0
        log_mode = b.reciprocal() * (-b).log1p() - (-b * a).log1p()
        no_mode = (b < 1) | (a < 1)
        return ember.where(no_mode, ember.full_like(log_mode, math.nan), log_mode).exp()

    @property
    def variance(self):
        return _moments(self.concentration1, self.concentration0, 2) - self.mean.pow(2)

    def entropy(self):
        t1 = 1 - self.concentration1.reciprocal()
        t0 = 1 - self.concentration0.reciprocal()
        harmonic = ember.digamma(self.concentration0 + 1) + _EULER_GAMMA
        return t0 + t1 * harmonic - self.concentration1.log() - self.concentration0.log()
