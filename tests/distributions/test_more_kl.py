"""kl_divergence for the continuous Bernoulli and the transformed families, against torch and by quadrature."""
import math

import numpy as np
import pytest

import ember
from twins import both



def _cb(D, t):
    return D.ContinuousBernoulli(t([0.2, 0.7]))


PAIRS = {
    "ContinuousBernoulli": lambda D, t: (D.ContinuousBernoulli(t([0.2, 0.7, 0.4999])),
                                         D.ContinuousBernoulli(logits=t([0.0, -2.0, 1.0]))),
    "Beta-ContinuousBernoulli": lambda D, t: (D.Beta(t([2.0, 1.0]), t([3.0, 0.5])), _cb(D, t)),
    "Uniform-ContinuousBernoulli": lambda D, t: (D.Uniform(t([0.1, 0.0]), t([0.5, 1.2])), _cb(D, t)),
    "ContinuousBernoulli-Exponential": lambda D, t: (_cb(D, t), D.Exponential(t([2.0, 1.0]))),
    "ContinuousBernoulli-Normal": lambda D, t: (_cb(D, t), D.Normal(t([0.3, -1.0]), t([1.0, 2.0]))),
    "ContinuousBernoulli-Uniform": lambda D, t: (_cb(D, t), D.Uniform(t([-0.5, 0.2]), t([2.0, 1.5]))),
    "ContinuousBernoulli-Pareto": lambda D, t: (_cb(D, t), D.Pareto(t([1.0, 2.0]), t([1.0, 3.0]))),
    "Normal-ContinuousBernoulli": lambda D, t: (D.Normal(t([0.0, 1.0]), t([1.0, 1.0])), _cb(D, t)),
    "Gumbel-ContinuousBernoulli": lambda D, t: (D.Gumbel(t([0.0, 1.0]), t([1.0, 1.0])), _cb(D, t)),
    "Exponential-ContinuousBernoulli": lambda D, t: (D.Exponential(t([1.0])), D.ContinuousBernoulli(t([0.2]))),
    "HalfCauchy": lambda D, t: (D.HalfCauchy(t([1.0, 2.0])), D.HalfCauchy(t([0.7, 1.5]))),
    "InverseGamma": lambda D, t: (D.InverseGamma(t([2.0, 0.5]), t([1.0, 3.0])),
                                  D.InverseGamma(t([1.0, 2.0]), t([4.0, 0.8]))),
    "LogisticNormal": lambda D, t: (D.LogisticNormal(t([0.0, 1.0]), t([1.0, 2.0])),
                                    D.LogisticNormal(t([0.5, -1.0]), t([0.7, 1.5]))),
}


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_kl_matches_torch(name):
    both(lambda lib: lib.distributions.kl_divergence(*PAIRS[name](lib.distributions,
                                                                  lambda a: lib.tensor(a, dtype=lib.float64))))


def _kl_by_quadrature(p, q, low: float, high: float, n: int = 200000) -> float:
    width = (high - low) / n
    x = low + width * (ember.arange(n, dtype=ember.float64) + 0.5)
    log_p = p.log_prob(x)
    return float((log_p.exp() * (log_p - q.log_prob(x))).sum().detach()) * width


def test_kl_against_a_uniform_covering_the_unit_interval_is_finite():
    """Where the Uniform covers exactly [0, 1], the divergence is finite (torch reports inf on those edges)."""
    D = ember.distributions
    t = lambda v: ember.tensor(v, dtype=ember.float64)  # noqa: E731
    cb, uniform = D.ContinuousBernoulli(t(0.8)), D.Uniform(t(0.0), t(1.0))
    assert abs(D.kl_divergence(cb, uniform).item() - _kl_by_quadrature(cb, uniform, 0.0, 1.0)) < 1e-7
    assert abs(D.kl_divergence(uniform, cb).item() - _kl_by_quadrature(uniform, cb, 0.0, 1.0)) < 1e-7
    wider = D.Uniform(t(-0.5), t(2.0))
    assert abs(D.kl_divergence(cb, wider).item() - _kl_by_quadrature(cb, wider, 0.0, 1.0)) < 1e-7
    assert D.kl_divergence(cb, D.Uniform(t(0.1), t(1.0))).item() == math.inf


def test_continuous_bernoulli_kl_by_quadrature_and_gradients():
    D = ember.distributions
    probs = ember.tensor(0.3, dtype=ember.float64, requires_grad=True)
    p, q = D.ContinuousBernoulli(probs), D.ContinuousBernoulli(ember.tensor(0.75, dtype=ember.float64))
    kl = D.kl_divergence(p, q)
    assert abs(kl.item() - _kl_by_quadrature(p, q, 0.0, 1.0)) < 1e-8
    assert D.kl_divergence(p, p).abs().item() < 1e-12
    (gradient,) = ember.autograd.grad(kl, probs)
    h = 1e-6
    step = [D.kl_divergence(D.ContinuousBernoulli(ember.tensor(v, dtype=ember.float64)), q).item()
            for v in (0.3 + h, 0.3 - h)]
    np.testing.assert_allclose(gradient.item(), (step[0] - step[1]) / (2 * h), rtol=1e-6)
