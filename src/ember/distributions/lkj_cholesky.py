"""``LKJCholesky(dim, concentration=1.0)``: Cholesky factors of random correlation matrices.

If ``L ~ LKJCholesky(dim, η)`` then ``L Lᵀ`` follows the LKJ distribution over correlation matrices,
whose density is proportional to ``det(L Lᵀ)^(η - 1)``: ``η = 1`` is uniform, larger ``η`` favours
matrices near the identity. Draws use the onion method (Lewandowski, Kurowicka and Joe, 2009).

>>> import ember
>>> from ember.distributions import LKJCholesky
>>> d = LKJCholesky(3, ember.tensor(2.0))
>>> d.log_prob(ember.eye(3))
tensor(-0.6155)
>>> L = d.sample((2,))
>>> L.shape, ember.allclose((L @ L.mT).diagonal(dim1=-2, dim2=-1), ember.ones(2, 3))
(ember.Size([2, 3, 3]), True)
"""
from __future__ import annotations

import math

import ember
from ember import Size
from ember.distributions import constraints
from ember.distributions.beta import Beta
from ember.distributions.distribution import Distribution
from ember.distributions.utils import broadcast_all

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    """The LKJ distribution over ``dim × dim`` correlation matrices, on their lower Cholesky factors."""

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim: int, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        # row k >= 1 has an off-diagonal part of squared length Beta(k/2, η + (dim - 1 - k)/2) (Sec. 3.2 of the
        # paper); row 0 has none, so its Beta is a placeholder
        k = ember.arange(dim, dtype=self.concentration.dtype)
        self._beta = Beta((k / 2).clamp(min=0.5), self.concentration.unsqueeze(-1) + (dim - 1 - k) / 2,
                          validate_args=False)  # a bad concentration is reported as this distribution's
        super().__init__(self.concentration.size(), Size((dim, dim)), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(LKJCholesky, batch_shape, _instance, ("concentration",))
        new.dim = self.dim
        new._beta = self._beta.expand(Size(batch_shape) + (self.dim,))
        return new

    def sample(self, sample_shape=Size()):
        with ember.no_grad():
            # row i: a uniform direction in its first i coordinates, scaled to a Beta-distributed length
            y = self._beta.sample(sample_shape).unsqueeze(-1)
            normal = ember.randn(self._extended_shape(sample_shape), dtype=y.dtype).tril(-1)
            norms = normal.norm(dim=-1, keepdim=True)
            direction = normal / ember.where(norms > 0, norms, ember.ones_like(norms))  # the first row is empty
            w = y.sqrt() * direction
            diagonal = (1 - w.pow(2).sum(-1)).clamp(min=ember.finfo(w.dtype).tiny).sqrt()
            return w + ember.diag_embed(diagonal)

    def log_prob(self, value):
        # det(L Lᵀ)^(η-1) = Π L_ii^(2η-2), and the map from L to L Lᵀ contributes Π L_ii^(dim-i):
        # the density of L is proportional to Π L_ii^(2η - 2 + dim - i), i = 2..dim
        if self._validate_args:
            self._validate_sample(value)
        diagonal = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = ember.arange(2, self.dim + 1, dtype=self.concentration.dtype)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalised = (order * diagonal.log()).sum(-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        # the normaliser (p. 1999 of the paper), with mvlgamma's own π term taken out
        normaliser = 0.5 * dm1 * math.log(math.pi) + ember.mvlgamma(alpha - 0.5, dm1) - ember.lgamma(alpha) * dm1
        return unnormalised - normaliser
