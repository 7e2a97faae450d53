"""``MultivariateNormal(loc, covariance_matrix=None, precision_matrix=None, scale_tril=None)``.

Everything is computed from the lower Cholesky factor ``L`` of the covariance (``Σ = L Lᵀ``).

>>> import ember
>>> from ember.distributions import MultivariateNormal
>>> d = MultivariateNormal(ember.zeros(2), ember.eye(2))
>>> d.log_prob(ember.zeros(2)), d.entropy()
(tensor(-1.8379), tensor(2.8379))
"""
from __future__ import annotations

import math

import ember
from ember import Size
from ember.distributions import constraints
from ember.distributions._shared import LocationFamily
from ember.distributions.distribution import Distribution
from ember.distributions.utils import lazy_property

__all__ = ["MultivariateNormal"]


def batch_mahalanobis(scale_tril, x):
    """``xᵀ (L Lᵀ)⁻¹ x`` for each vector ``x`` (the last dim), by triangular solves.

    One factor for a batch of vectors (the common case: a batch scored by one distribution) is one
    solve with every vector as a column, rather than a solve per vector.
    """
    if scale_tril.dim() == 2:
        columns = x.reshape(-1, x.shape[-1]).mT
        solved = ember.linalg.solve_triangular(scale_tril, columns, upper=False)
        return solved.pow(2).sum(-2).reshape(x.shape[:-1])
    batch = ember.broadcast_shapes(x.shape[:-1], scale_tril.shape[:-2])
    factor = scale_tril.expand(batch + scale_tril.shape[-2:])
    solved = ember.linalg.solve_triangular(factor, x.expand(batch + x.shape[-1:]).unsqueeze(-1), upper=False)
    return solved.squeeze(-1).pow(2).sum(-1)


def half_log_det(scale_tril):
    """``log det (L Lᵀ) / 2``: the sum of the logs of ``L``'s diagonal."""
    return scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)


def precision_to_scale_tril(precision):
    """The Cholesky factor of ``precision⁻¹``, by inverting the Cholesky factor of ``precision``."""
    flipped = ember.linalg.cholesky(ember.flip(precision, (-2, -1)))
    factor = ember.transpose(ember.flip(flipped, (-2, -1)), -2, -1)
    eye = ember.eye(precision.shape[-1], dtype=precision.dtype)
    return ember.linalg.solve_triangular(factor, eye, upper=False)


def _one_matrix(covariance_matrix, precision_matrix, scale_tril):
    given = [m for m in (covariance_matrix, precision_matrix, scale_tril) if m is not None]
    if len(given) != 1:
        raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
    if given[0].dim() < 2:
        names = {id(covariance_matrix): "covariance_matrix", id(precision_matrix): "precision_matrix",
                 id(scale_tril): "scale_tril"}
        raise ValueError(f"{names[id(given[0])]} must be at least two-dimensional, with optional leading "
                         "batch dimensions")


class CholeskyParameterised:
    """A family given by one of ``covariance_matrix``, ``precision_matrix`` and ``scale_tril``, and computed from
    ``_unbroadcasted_scale_tril``, the covariance's lower Cholesky factor; the matrices are shown at the shape
    ``_matrix_shape()``."""

    def _keep_matrix(self, batch_shape, covariance_matrix, precision_matrix, scale_tril) -> None:
        """The matrix given, broadcast to ``batch_shape``, under its own name (before validation)."""
        if scale_tril is not None:
            self.scale_tril = scale_tril.expand(batch_shape + (-1, -1))
        elif covariance_matrix is not None:
            self.covariance_matrix = covariance_matrix.expand(batch_shape + (-1, -1))
        else:
            self.precision_matrix = precision_matrix.expand(batch_shape + (-1, -1))

    def _set_factor(self, covariance_matrix, precision_matrix, scale_tril) -> None:
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = ember.linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = precision_to_scale_tril(precision_matrix)

    def _matrix_shape(self):
        return self._batch_shape + self._event_shape + self._event_shape

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        factor = self._unbroadcasted_scale_tril
        return (factor @ factor.mT).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        return ember.cholesky_inverse(self._unbroadcasted_scale_tril).expand(self._matrix_shape())


class MultivariateNormal(CholeskyParameterised, LocationFamily, Distribution):
    """The Gaussian over vectors, with mean ``loc`` and one of the three matrix parameterisations."""

    arg_constraints = {"loc": constraints.real_vector, "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite, "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        _one_matrix(covariance_matrix, precision_matrix, scale_tril)
        matrix = next(m for m in (covariance_matrix, precision_matrix, scale_tril) if m is not None)
        batch_shape = ember.broadcast_shapes(matrix.shape[:-2], loc.shape[:-1])
        event = loc.shape[-1:]
        self._keep_matrix(batch_shape, covariance_matrix, precision_matrix, scale_tril)
        self.loc = loc.expand(batch_shape + (-1,))
        super().__init__(batch_shape, event, validate_args=validate_args)
        self._set_factor(covariance_matrix, precision_matrix, scale_tril)

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(MultivariateNormal, batch_shape, _instance,
                             ("loc", "covariance_matrix", "scale_tril", "precision_matrix"))
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        return new

    @property
    def variance(self):
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(self._batch_shape + self._event_shape)

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        eps = ember.randn(shape, dtype=self.loc.dtype)
        return self.loc + (self._unbroadcasted_scale_tril @ eps.unsqueeze(-1)).squeeze(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        m = batch_mahalanobis(self._unbroadcasted_scale_tril, value - self.loc)
        k = self._event_shape[0]
        return -0.5 * (k * math.log(2 * math.pi) + m) - half_log_det(self._unbroadcasted_scale_tril)

    def entropy(self):
        k = self._event_shape[0]
        h = 0.5 * k * (1.0 + math.log(2 * math.pi)) + half_log_det(self._unbroadcasted_scale_tril)
        return h if len(self._batch_shape) == 0 else h.expand(self._batch_shape)
