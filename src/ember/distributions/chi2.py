"""``Chi2(df)``: the sum of ``df`` squared standard normals (a Gamma(df / 2, 1 / 2)).

>>> import ember
>>> from ember.distributions import Chi2
>>> d = Chi2(ember.tensor([3.0]))
>>> d.mean, d.log_prob(ember.tensor([2.0]))
(tensor([3.]), tensor([-1.5724]))
"""
from __future__ import annotations

from ember.distributions import constraints
from ember.distributions.gamma import Gamma

__all__ = ["Chi2"]


class Chi2(Gamma):
    """The chi-squared distribution with ``df`` degrees of freedom."""

    arg_constraints = {"df": constraints.positive}

    def __init__(self, df, validate_args=None):
        super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(Chi2, batch_shape, _instance, ("concentration", "rate"))

    @property
    def df(self):
        return self.concentration * 2
