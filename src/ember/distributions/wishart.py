"""``Wishart(df, covariance_matrix=None, precision_matrix=None, scale_tril=None)``: random positive definite
matrices, the law of ``Σₖ xₖ xₖᵀ`` for ``df`` Gaussian vectors ``xₖ`` of covariance ``Σ``.

``rsample`` uses the Bartlett decomposition, so draws are reparameterised (through ``Chi2`` for the diagonal).

>>> import ember
>>> from ember.distributions import Wishart
>>> d = Wishart(ember.tensor(4.0), covariance_matrix=ember.eye(2))
>>> d.mean
tensor([[4., 0.],
        [0., 4.]])
>>> d.log_prob(2 * ember.eye(2)), d.entropy()
(tensor(-4.5310), tensor(6.3014))
"""
from __future__ import annotations

import math
import numbers
import warnings

import ember
from ember import Size
from ember.distributions import constraints
from ember.distributions.chi2 import Chi2
from ember.distributions.exp_family import ExponentialFamily
from ember.distributions.multivariate_normal import CholeskyParameterised, _one_matrix, half_log_det
from ember.distributions.utils import vec_to_tril_matrix

__all__ = ["Wishart"]

_LOG_2 = math.log(2)


def mvdigamma(x, p: int):
    """The multivariate digamma function: ``Σᵢ ψ(x - i/2)`` for ``i < p`` (the derivative of ``mvlgamma``)."""
    if not bool(x.gt((p - 1) / 2).all()):
        raise ValueError(f"mvdigamma: every x must be greater than (p - 1) / 2 = {(p - 1) / 2}")
    halves = ember.arange(p, dtype=x.dtype) / 2
    return ember.digamma(x.unsqueeze(-1) - halves).sum(-1)


class Wishart(CholeskyParameterised, ExponentialFamily):
    """The Wishart distribution with ``df`` degrees of freedom (``df > p - 1`` for ``p × p`` matrices)."""

    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self):
        return {"covariance_matrix": constraints.positive_definite,
                "precision_matrix": constraints.positive_definite, "scale_tril": constraints.lower_cholesky,
                "df": constraints.greater_than(self.event_shape[-1] - 1)}

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        _one_matrix(covariance_matrix, precision_matrix, scale_tril)
        matrix = next(m for m in (covariance_matrix, precision_matrix, scale_tril) if m is not None)
        event_shape = matrix.shape[-2:]
        if isinstance(df, numbers.Number):
            batch_shape = Size(matrix.shape[:-2])
            self.df = ember.tensor(df, dtype=matrix.dtype)
        else:
            batch_shape = ember.broadcast_shapes(matrix.shape[:-2], df.shape)
            self.df = df.expand(batch_shape)
        p = event_shape[-1]
        if bool(self.df.le(p - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {p - 1}.")
        self._keep_matrix(batch_shape, covariance_matrix, precision_matrix, scale_tril)
        if bool(self.df.lt(p).any()):
            warnings.warn("Low df values detected. Singular samples are highly likely to occur for ndim - 1 < df "
                          "< ndim.", stacklevel=2)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._set_factor(covariance_matrix, precision_matrix, scale_tril)
        self._dist_chi2 = self._bartlett_chi2()

    def _bartlett_chi2(self):
        """The squared diagonal of the Bartlett factor: Chi2(df - i) for row ``i``."""
        p = self._event_shape[-1]
        steps = ember.arange(p, dtype=self._unbroadcasted_scale_tril.dtype)
        return Chi2(self.df.unsqueeze(-1) - steps.expand(self._batch_shape + (-1,)))

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(Wishart, batch_shape, _instance,
                             ("df", "covariance_matrix", "scale_tril", "precision_matrix"))
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(new.batch_shape + self.event_shape)
        new._dist_chi2 = new._bartlett_chi2()
        return new

    def _matrix_shape(self):
        return self._batch_shape + self._event_shape

    def _per_matrix(self, value):
        """``value`` (one number per distribution) shaped to scale each matrix."""
        return value.reshape(self._batch_shape + (1, 1))

    @property
    def mean(self):
        return self._per_matrix(self.df) * self.covariance_matrix

    @property
    def mode(self):
        factor = self.df - self._event_shape[-1] - 1
        factor = ember.where(factor > 0, factor, ember.full_like(factor, math.nan))  # no mode: df <= p + 1
        return self._per_matrix(factor) * self.covariance_matrix

    @property
    def variance(self):
        cov = self.covariance_matrix
        diagonal = cov.diagonal(dim1=-2, dim2=-1)
        return self._per_matrix(self.df) * (cov.pow(2) + diagonal.unsqueeze(-1) * diagonal.unsqueeze(-2))

    def _bartlett_sample(self, sample_shape):
        """``(L A)(L A)ᵀ`` with ``A`` lower triangular: ``√Chi2(df - i)`` on the diagonal, N(0, 1) below it."""
        p = self._event_shape[-1]
        diagonal = self._dist_chi2.rsample(sample_shape).sqrt()
        diagonal = diagonal.clamp(min=ember.finfo(diagonal.dtype).eps)
        below = ember.randn(Size(sample_shape) + self._batch_shape + (p * (p - 1) // 2,), dtype=diagonal.dtype)
        factor = self._unbroadcasted_scale_tril @ (ember.diag_embed(diagonal) + vec_to_tril_matrix(below, -1))
        return factor @ factor.mT

    def rsample(self, sample_shape=Size(), max_try_correction=None):
        """A reparameterised draw; a draw that is numerically singular is redrawn up to
        ``max_try_correction`` times (10 by default)."""
        max_try_correction = 10 if max_try_correction is None else max_try_correction
        sample = self._bartlett_sample(sample_shape)
        singular = ~self.support.check(sample)
        if bool(singular.any()):
            warnings.warn("Singular sample detected.", stacklevel=2)
            for _ in range(max_try_correction):
                redrawn = self._bartlett_sample(sample_shape)
                sample = ember.where(singular[..., None, None], redrawn, sample)
                singular = ~self.support.check(sample)
                if not bool(singular.any()):
                    break
        return sample

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        nu, p = self.df, self._event_shape[-1]
        factor = self._unbroadcasted_scale_tril
        trace = ember.cholesky_solve(value, factor).diagonal(dim1=-2, dim2=-1).sum(-1)
        return (-nu * (p * _LOG_2 / 2 + half_log_det(factor)) - ember.mvlgamma(nu / 2, p=p)
                + (nu - p - 1) / 2 * ember.linalg.slogdet(value).logabsdet - trace / 2)

    def entropy(self):
        nu, p = self.df, self._event_shape[-1]
        return ((p + 1) * (p * _LOG_2 / 2 + half_log_det(self._unbroadcasted_scale_tril))
                + ember.mvlgamma(nu / 2, p=p) - (nu - p - 1) / 2 * mvdigamma(nu / 2, p=p) + nu * p / 2)

    @property
    def _natural_params(self):
        return -self.precision_matrix / 2, (self.df - self._event_shape[-1] - 1) / 2

    def _log_normalizer(self, x, y):
        p = self._event_shape[-1]
        shifted = y + (p + 1) / 2
        return shifted * (-ember.linalg.slogdet(-2 * x).logabsdet + _LOG_2 * p) + ember.mvlgamma(shifted, p=p)
