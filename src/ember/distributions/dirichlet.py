"""``Dirichlet(concentration)``: a random point of the simplex; ``rsample`` is reparameterised.

>>> import ember
>>> from ember.distributions import Dirichlet
>>> d = Dirichlet(ember.tensor([1.0, 2.0, 3.0]))
>>> d.mean, d.log_prob(ember.tensor([0.2, 0.3, 0.5]))
(tensor([0.1667, 0.3333, 0.5000]), tensor(1.5041))
"""
from __future__ import annotations

import ember
from ember import Size
from ember.distributions import constraints
from ember.distributions._gamma_sampling import standard_gamma
from ember.distributions.exp_family import ExponentialFamily

__all__ = ["Dirichlet"]


class Dirichlet(ExponentialFamily):
    """The Dirichlet distribution over the last dim, with positive ``concentration``."""

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(Dirichlet, batch_shape, _instance, ("concentration",))

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        gammas = standard_gamma(self.concentration.expand(shape))
        point = gammas / gammas.sum(-1, keepdim=True)
        info = ember.finfo(point.dtype)
        return point.clamp(min=info.tiny, max=1 - info.eps)  # keep log_prob of a draw finite

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        c = self.concentration
        return ember.xlogy(c - 1.0, value).sum(-1) + ember.lgamma(c.sum(-1)) - ember.lgamma(c).sum(-1)

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self):
        shifted = (self.concentration - 1).clamp(min=0.0)
        mode = shifted / shifted.sum(-1, keepdim=True)
        # every concentration below 1: the density is unbounded at every vertex; take the first, as torch does
        below_one = (self.concentration < 1).all(dim=-1)
        vertex = ember.nn.functional.one_hot(ember.zeros_like(below_one, dtype=ember.int64),
                                             self.concentration.shape[-1])
        return ember.where(below_one.unsqueeze(-1), vertex.to(mode.dtype), mode)

    @property
    def variance(self):
        total = self.concentration.sum(-1, keepdim=True)
        return self.concentration * (total - self.concentration) / (total.pow(2) * (total + 1))

    def entropy(self):
        c = self.concentration
        k = c.size(-1)
        total = c.sum(-1)
        return (ember.lgamma(c).sum(-1) - ember.lgamma(total) - (k - total) * ember.digamma(total)
                - ((c - 1.0) * ember.digamma(c)).sum(-1))

    @property
    def _natural_params(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return x.lgamma().sum(-1) - ember.lgamma(x.sum(-1))
