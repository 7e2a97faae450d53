"""``LogNormal(loc, scale)``: ``exp`` of a Normal(loc, scale) draw.

>>> import ember
>>> from ember.distributions import LogNormal
>>> d = LogNormal(ember.tensor([0.0]), ember.tensor([1.0]))
>>> d.log_prob(ember.tensor([1.0])), d.mode
(tensor([-0.9189]), tensor([0.3679]))
"""
from __future__ import annotations

from ember.distributions import constraints
from ember.distributions.normal import Normal
from ember.distributions.transformed_distribution import TransformedDistribution
from ember.distributions.transforms import ExpTransform

__all__ = ["LogNormal"]


class LogNormal(TransformedDistribution):
    """The distribution of ``exp(x)`` for ``x ~ Normal(loc, scale)``."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        super().__init__(Normal(loc, scale, validate_args=validate_args), ExpTransform(),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LogNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def loc(self):
        return self.base_dist.loc

    @property
    def scale(self):
        return self.base_dist.scale

    @property
    def mean(self):
        return (self.loc + self.scale.pow(2) / 2).exp()

    @property
    def mode(self):
        return (self.loc - self.scale.square()).exp()

    @property
    def variance(self):
        square = self.scale.pow(2)
        return square.expm1() * (2 * self.loc + square).exp()

    def entropy(self):
        return self.base_dist.entropy() + self.loc
