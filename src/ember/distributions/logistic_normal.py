"""``LogisticNormal(loc, scale)``: a point of the simplex, the stick-breaking image of a Normal vector.

A ``K``-vector ``loc`` gives draws on the ``(K+1)``-simplex.

>>> import ember
>>> from ember.distributions import LogisticNormal
>>> d = LogisticNormal(ember.zeros(2), ember.ones(2))
>>> d.event_shape, d.sample().shape
(ember.Size([3]), ember.Size([3]))
>>> d.log_prob(ember.tensor([0.2, 0.3, 0.5]))
tensor(1.2980)
"""
from __future__ import annotations

from ember.distributions import constraints
from ember.distributions.normal import Normal
from ember.distributions.transformed_distribution import TransformedDistribution
from ember.distributions.transforms import StickBreakingTransform

__all__ = ["LogisticNormal"]


class LogisticNormal(TransformedDistribution):
    """``StickBreakingTransform()(x)`` for ``x ~ Normal(loc, scale)`` over the last dim."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        base = Normal(loc, scale, validate_args=validate_args)
        if not base.batch_shape:
            base = base.expand([1])  # a scalar is a 1-vector: draws on the 2-simplex
        super().__init__(base, StickBreakingTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LogisticNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def loc(self):
        return self.base_dist.base_dist.loc

    @property
    def scale(self):
        return self.base_dist.base_dist.scale
