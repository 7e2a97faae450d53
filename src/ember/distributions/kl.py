"""``kl_divergence(p, q)``: KL(p ‖ q) for registered pairs of distribution types, and ``register_kl``.

The most specific registered pair wins: a pair registered for a subclass is preferred to one for its base.

>>> import ember
>>> from ember.distributions import Normal, kl_divergence
>>> kl_divergence(Normal(0.0, 1.0), Normal(1.0, 1.0))
tensor(0.5000)
"""
from __future__ import annotations

import math
import warnings

import ember
from ember.distributions.bernoulli import Bernoulli
from ember.distributions.beta import Beta
from ember.distributions.binomial import Binomial
from ember.distributions.categorical import Categorical
from ember.distributions.continuous_bernoulli import ContinuousBernoulli
from ember.distributions.cauchy import Cauchy
from ember.distributions.dirichlet import Dirichlet
from ember.distributions.distribution import Distribution
from ember.distributions.exponential import Exponential
from ember.distributions.gamma import Gamma
from ember.distributions.geometric import Geometric
from ember.distributions.gumbel import Gumbel
from ember.distributions.half_normal import HalfNormal
from ember.distributions.independent import Independent
from ember.distributions.laplace import Laplace
from ember.distributions.lowrank_multivariate_normal import LowRankMultivariateNormal
from ember.distributions.multivariate_normal import MultivariateNormal, batch_mahalanobis, half_log_det
from ember.distributions.normal import Normal
from ember.distributions.pareto import Pareto
from ember.distributions.one_hot_categorical import OneHotCategorical
from ember.distributions.poisson import Poisson
from ember.distributions.transformed_distribution import TransformedDistribution
from ember.distributions.uniform import Uniform
from ember.distributions.utils import _sum_rightmost
from ember.nn.functional import softplus

__all__ = ["kl_divergence", "register_kl"]

_KL_REGISTRY: dict = {}  # (type_p, type_q) -> function, as registered
_KL_MEMOIZE: dict = {}  # (type_p, type_q) -> the function chosen for that exact pair
_EULER_GAMMA = 0.57721566490153286


def register_kl(type_p: type, type_q: type):
    """A decorator that registers ``fn(p, q)`` as KL(p ‖ q) for ``p`` of ``type_p`` and ``q`` of ``type_q``.

    >>> from ember.distributions import Distribution
    >>> class Point(Distribution):
    ...     arg_constraints = {}
    >>> @register_kl(Point, Point)
    ... def _kl_point_point(p, q):
    ...     return ember.tensor(0.0)
    >>> kl_divergence(Point(), Point())
    tensor(0.)
    """
    for kind in (type_p, type_q):
        if not isinstance(kind, type) or not issubclass(kind, Distribution):
            raise TypeError(f"register_kl: expected subclasses of Distribution but got {kind}")

    def decorator(fn):
        _KL_REGISTRY[type_p, type_q] = fn
        _KL_MEMOIZE.clear()  # a new pair may be more specific than one chosen before
        return fn

    return decorator


def _dispatch_kl(type_p: type, type_q: type):
    matches = [(p, q) for p, q in _KL_REGISTRY if issubclass(type_p, p) and issubclass(type_q, q)]
    if not matches:
        return NotImplemented
    left = min(matches, key=lambda pair: (type_p.__mro__.index(pair[0]), type_q.__mro__.index(pair[1])))
    right = min(matches, key=lambda pair: (type_q.__mro__.index(pair[1]), type_p.__mro__.index(pair[0])))
    if _KL_REGISTRY[left] is not _KL_REGISTRY[right]:
        warnings.warn(f"Ambiguous kl_divergence({type_p.__name__}, {type_q.__name__}). Please register_kl("
                      f"{right[0].__name__}, {left[1].__name__})", RuntimeWarning, stacklevel=3)
    return _KL_REGISTRY[left]


def kl_divergence(p: Distribution, q: Distribution) -> ember.Tensor:
    """KL(p ‖ q) = E_p[log p(x) - log q(x)], batched over the distributions' batch shape."""
    pair = (type(p), type(q))
    fn = _KL_MEMOIZE.get(pair)
    if fn is None:
        fn = _KL_MEMOIZE[pair] = _dispatch_kl(*pair)
    if fn is NotImplemented:
        raise NotImplementedError(f"No KL(p || q) is implemented for p of type {type(p).__name__} and q of type "
                                  f"{type(q).__name__}; register one with @register_kl")
    return fn(p, q)


def _infinite_like(tensor):
    return ember.full_like(tensor, math.inf)


def _inf_where(mask, value):
    return ember.where(mask, _infinite_like(value), value)


# ---------------------------------------------------------------- same family


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p, q):
    return _kl_normal_normal(p.base_dist, q.base_dist)


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p, q):
    spread = (p.scale + q.scale).pow(2) + (p.loc - q.loc).pow(2)
    return (spread / (4 * p.scale * q.scale)).log()


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p, q):
    # E_p[log q(k)] = E_p[k] log(1 - q) + log q, with E_p[k] = 1/p - 1
    return -p.entropy() - (1 / p.probs - 1) * (-q.probs).log1p() - q.probs.log()


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p, q):
    ratio = p.scale / q.scale
    shift = (p.loc - q.loc) / q.scale
    return -ratio.log() + shift + _EULER_GAMMA * (ratio - 1) + ember.exp(-shift + ember.lgamma(1 + ratio)) - 1


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    # log p = -softplus(-logit p), log(1 - p) = -softplus(logit p)
    t1 = p.probs * (softplus(-q.logits) - softplus(-p.logits))
    t1 = ember.where(p.probs == 0, ember.zeros_like(t1), _inf_where(q.probs == 0, t1))
    t2 = (1 - p.probs) * (softplus(q.logits) - softplus(p.logits))
    t2 = ember.where(p.probs == 1, ember.zeros_like(t2), _inf_where(q.probs == 1, t2))
    return t1 + t2


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p, q):
    if (p.total_count < q.total_count).any():
        raise NotImplementedError("KL between Binomials where q.total_count > p.total_count is not implemented")
    kl = p.total_count * _kl_bernoulli_bernoulli(Bernoulli(probs=p.probs), Bernoulli(probs=q.probs))
    return _inf_where(p.total_count > q.total_count, kl)


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t = _inf_where((q.probs == 0).expand_as(t), t)
    t = ember.where((p.probs == 0).expand_as(t), ember.zeros_like(t), t)
    return t.sum(-1)


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    result = ((q.high - q.low) / (p.high - p.low)).log()
    return _inf_where((q.low > p.low) | (q.high < p.high), result)


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    sum_p = p.concentration.sum(-1)
    sum_q = q.concentration.sum(-1)
    t1 = sum_p.lgamma() - sum_q.lgamma()
    t2 = (p.concentration.lgamma() - q.concentration.lgamma()).sum(-1)
    t3 = p.concentration - q.concentration
    t4 = p.concentration.digamma() - sum_p.digamma().unsqueeze(-1)
    return t1 - t2 + (t3 * t4).sum(-1)


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    return _kl_dirichlet_dirichlet(p._dirichlet, q._dirichlet)


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    t1 = q.concentration * (p.rate / q.rate).log()
    t2 = ember.lgamma(q.concentration) - ember.lgamma(p.concentration)
    t3 = (p.concentration - q.concentration) * ember.digamma(p.concentration)
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p, q):
    ratio = q.rate / p.rate
    return ratio - 1 - ratio.log()


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p, q):
    scale_ratio = p.scale / q.scale
    gap = (p.loc - q.loc).abs()
    return -scale_ratio.log() + gap / q.scale + scale_ratio * ember.exp(-gap / p.scale) - 1


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


def _kl_gaussians(loc_p, tril_p, loc_q, tril_q, n: int):
    """KL between two Gaussians given by means and Cholesky factors of their covariances."""
    batch = ember.broadcast_shapes(loc_p.shape[:-1], loc_q.shape[:-1], tril_p.shape[:-2], tril_q.shape[:-2])
    tril_q = tril_q.expand(batch + (n, n))
    trace = ember.linalg.solve_triangular(tril_q, tril_p.expand(batch + (n, n)), upper=False).pow(2)
    trace = trace.reshape(batch + (-1,)).sum(-1)
    mahalanobis = batch_mahalanobis(tril_q, (loc_q - loc_p).expand(batch + (n,)))
    return half_log_det(tril_q) - half_log_det(tril_p) + 0.5 * (trace + mahalanobis - n)


def _gaussian_parts(d):
    tril = d._unbroadcasted_scale_tril if isinstance(d, MultivariateNormal) else d.scale_tril
    return d.loc, tril


@register_kl(MultivariateNormal, MultivariateNormal)
@register_kl(MultivariateNormal, LowRankMultivariateNormal)
@register_kl(LowRankMultivariateNormal, MultivariateNormal)
@register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)
def _kl_multivariatenormal_multivariatenormal(p, q):
    if p.event_shape != q.event_shape:
        raise ValueError("KL-divergence between two Multivariate Normals with different event shapes cannot be "
                         f"computed: {p.event_shape} and {q.event_shape}")
    return _kl_gaussians(*_gaussian_parts(p), *_gaussian_parts(q), p.event_shape[0])


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError("KL between Independents with different reinterpreted_batch_ndims is not "
                                  f"implemented: {p.reinterpreted_batch_ndims} and {q.reinterpreted_batch_ndims}")
    return _sum_rightmost(kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims)


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p, q):
    if p.transforms != q.transforms:
        raise NotImplementedError("KL between TransformedDistributions with different transforms is not "
                                  "implemented")
    if p.event_shape != q.event_shape:
        raise NotImplementedError("KL between TransformedDistributions with different event shapes is not "
                                  f"implemented: {p.event_shape} and {q.event_shape}")
    extra = len(p.event_shape) - len(p.base_dist.event_shape)
    return _sum_rightmost(kl_divergence(p.base_dist, q.base_dist), extra)


# ---------------------------------------------------------------- across families: -H(p) - E_p[log q]


@register_kl(Uniform, Normal)
@register_kl(ContinuousBernoulli, Normal)
@register_kl(Exponential, Normal)
@register_kl(Gamma, Normal)
@register_kl(Laplace, Normal)
@register_kl(Beta, Normal)
def _kl_to_normal(p, q):
    # E_p[(x - μ)²] = Var p + (E p - μ)², whatever p's family
    second_moment = p.variance + (p.mean - q.loc).pow(2)
    expected_log_q = -q.scale.log() - 0.5 * math.log(2 * math.pi) - second_moment / (2 * q.scale.pow(2))
    return -p.entropy() - expected_log_q


def _expected_log_gamma_density(q, mean, mean_log):
    """E_p[log q(x)] for a Gamma ``q``, from E_p[x] and E_p[log x]."""
    c, rate = q.concentration, q.rate
    return c * rate.log() - ember.lgamma(c) + (c - 1) * mean_log - rate * mean


@register_kl(Exponential, Gamma)
def _kl_exponential_gamma(p, q):
    mean_log = -_EULER_GAMMA - p.rate.log()
    return -p.entropy() - _expected_log_gamma_density(q, p.mean, mean_log)


@register_kl(Gamma, Exponential)
@register_kl(ContinuousBernoulli, Exponential)
def _kl_gamma_exponential(p, q):
    return -p.entropy() - (q.rate.log() - q.rate * p.mean)


@register_kl(Uniform, Exponential)
def _kl_uniform_exponential(p, q):
    result = -p.entropy() - (q.rate.log() - q.rate * p.mean)
    return _inf_where(p.low < 0, result)


@register_kl(Uniform, Gamma)
def _kl_uniform_gamma(p, q):
    width = p.high - p.low
    mean_log = (ember.xlogy(p.high, p.high) - p.high - ember.xlogy(p.low, p.low) + p.low) / width
    result = -p.entropy() - _expected_log_gamma_density(q, p.mean, mean_log)
    return _inf_where(p.low < 0, result)


@register_kl(Beta, Uniform)
def _kl_beta_uniform(p, q):
    result = -p.entropy() + (q.high - q.low).log()
    return _inf_where((q.low > 0) | (q.high < 1), result)


@register_kl(Normal, Uniform)
@register_kl(Normal, Exponential)
@register_kl(Normal, Gamma)
@register_kl(Normal, Beta)
@register_kl(Laplace, Uniform)
@register_kl(Laplace, Exponential)
@register_kl(Laplace, Gamma)
@register_kl(Laplace, Beta)
@register_kl(Exponential, Uniform)
@register_kl(Gamma, Uniform)
@register_kl(Exponential, Beta)
@register_kl(Gamma, Beta)
@register_kl(ContinuousBernoulli, Pareto)
@register_kl(Exponential, ContinuousBernoulli)
@register_kl(Gamma, ContinuousBernoulli)
@register_kl(Gumbel, ContinuousBernoulli)
@register_kl(Laplace, ContinuousBernoulli)
@register_kl(Normal, ContinuousBernoulli)
@register_kl(Pareto, ContinuousBernoulli)
def _kl_unbounded_to_bounded(p, q):
    # p puts mass where q has none: the divergence is infinite
    return _infinite_like(p.mean.expand(p.batch_shape) if p.batch_shape else p.mean)


# ---------------------------------------------------------------- the continuous Bernoulli


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_continuous_bernoulli_continuous_bernoulli(p, q):
    t1 = p.mean * (p.logits - q.logits)
    t2 = p._cont_bern_log_norm() + ember.log1p(-p.probs)
    t3 = -q._cont_bern_log_norm() - ember.log1p(-q.probs)
    return t1 + t2 + t3


def _expected_log_continuous_bernoulli(q, mean):
    """E_p[log q(x)] for a ContinuousBernoulli ``q``: linear in x, so only E_p[x] is needed."""
    return mean * q.logits + ember.log1p(-q.probs) + q._cont_bern_log_norm()


@register_kl(Beta, ContinuousBernoulli)
def _kl_beta_continuous_bernoulli(p, q):
    return -p.entropy() - _expected_log_continuous_bernoulli(q, p.mean)


@register_kl(Uniform, ContinuousBernoulli)
def _kl_uniform_continuous_bernoulli(p, q):
    result = -p.entropy() - _expected_log_continuous_bernoulli(q, p.mean)
    return _inf_where((p.low < 0) | (p.high > 1), result)  # mass outside [0, 1], where q has none


@register_kl(ContinuousBernoulli, Uniform)
def _kl_continuous_bernoulli_uniform(p, q):
    result = -p.entropy() + (q.high - q.low).log()
    return _inf_where((q.low > 0) | (q.high < 1), result)  # q misses part of [0, 1]
