"""``Beta(concentration1, concentration0)``: a random probability; ``rsample`` is reparameterised.

>>> import ember
>>> from ember.distributions import Beta
>>> d = Beta(ember.tensor([2.0]), ember.tensor([2.0]))
>>> d.mean, d.log_prob(ember.tensor([0.5]))
(tensor([0.5000]), tensor([0.4055]))
"""
from __future__ import annotations

import numbers

import ember
from ember import Size
from ember.distributions import constraints
from ember.distributions.dirichlet import Dirichlet
from ember.distributions.exp_family import ExponentialFamily
from ember.distributions.utils import broadcast_all

__all__ = ["Beta"]


class Beta(ExponentialFamily):
    """The Beta distribution: a two-category Dirichlet, of which this is the first coordinate."""

    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        if isinstance(concentration1, numbers.Real) and isinstance(concentration0, numbers.Real):
            pair = ember.tensor([float(concentration1), float(concentration0)])
        else:
            concentration1, concentration0 = broadcast_all(concentration1, concentration0)
            pair = ember.stack([concentration1, concentration0], -1)
        self._dirichlet = Dirichlet(pair, validate_args=validate_args)
        super().__init__(self._dirichlet._batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Beta, _instance)
        batch_shape = Size(batch_shape)
        new._dirichlet = self._dirichlet.expand(batch_shape)
        ExponentialFamily.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def concentration1(self):
        return self._dirichlet.concentration[..., 0]

    @property
    def concentration0(self):
        return self._dirichlet.concentration[..., 1]

    @property
    def mean(self):
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self):
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self):
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape=()):
        return self._dirichlet.rsample(sample_shape).select(-1, 0)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        both = ember.stack([value, 1.0 - value], -1)
        return self._dirichlet.log_prob(both)

    def entropy(self):
        return self._dirichlet.entropy()

    @property
    def _natural_params(self):
        return (self.concentration1, self.concentration0)

    def _log_normalizer(self, x, y):
        return ember.lgamma(x) + ember.lgamma(y) - ember.lgamma(x + y)
