"""Each distribution of the table against torch's: values, shapes, expand, gradients and sampling moments."""
import numpy as np
import pytest
import torch
from hypothesis import given, strategies as st

import ember
from tests.distributions.cases import CASES
from twins import assert_same, both

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def _make(lib, case):
    return case.build(lib, lib.distributions, lambda a: lib.tensor(np.asarray(a), dtype=lib.float64))


def _value(lib, case):
    dtype = lib.int64 if case.values.dtype.kind == "i" else lib.float64
    return lib.tensor(case.values, dtype=dtype)


def _evaluate(lib, case, method):
    d = _make(lib, case)
    if method == "log_prob":
        return d.log_prob(_value(lib, case))
    if method == "entropy":
        return d.entropy()
    return getattr(d, method)


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_values_match_torch(case):
    for method in case.methods + (("cdf",) if case.cdf else ()):
        if method == "cdf":
            both(lambda lib: _make(lib, case).cdf(_value(lib, case)))
        else:
            both(lambda lib: _evaluate(lib, case, method))


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_shapes_and_expand_match_torch(case):
    def shapes(lib):
        d = _make(lib, case)
        wider = d.expand((4,) + tuple(d.batch_shape))
        sample = d.sample((5, 2))
        value = _value(lib, case)
        return (tuple(d.batch_shape), tuple(d.event_shape), tuple(sample.shape), str(sample.dtype)[6:],
                tuple(wider.batch_shape), tuple(wider.sample().shape), tuple(wider.log_prob(wider.sample()).shape),
                d.has_rsample, d.has_enumerate_support)
    both(shapes, prepare=lambda v: v)


def _with_leaves(lib, case):
    """The case's distribution built from leaves that require grad, and those leaves."""
    leaves = []

    def leaf(array):
        leaves.append(lib.tensor(np.asarray(array), dtype=lib.float64, requires_grad=True))
        return leaves[-1]
    return case.build(lib, lib.distributions, leaf), leaves


@pytest.mark.parametrize("case", [c for c in CASES if c.reparameterised], ids=repr)
def test_rsample_is_differentiable(case):
    """rsample's draws carry gradients to every parameter; where the mean is known, the average pathwise
    gradient is the mean's gradient."""
    ember.manual_seed(0)
    d, leaves = _with_leaves(ember, case)
    assert d.has_rsample
    draws = d.rsample((4000,))
    grads = ember.autograd.grad(draws.mean(0).sum(), leaves, allow_unused=True, retain_graph=True)
    assert any(g is not None for g in grads)
    assert all(bool(ember.isfinite(g).all()) for g in grads if g is not None)
    if "mean" in case.methods:
        exact = ember.autograd.grad(d.mean.sum(), leaves, allow_unused=True)
        for got, want in zip(grads, exact):
            if want is not None:
                np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=0.1, atol=0.05)


NORMAL_FAMILIES = {
    "Normal": lambda D, p: D.Normal(p[0], p[1]),
    "Gamma": lambda D, p: D.Gamma(p[0], p[1]),
    "Beta": lambda D, p: D.Beta(p[0], p[1]),
    "Laplace": lambda D, p: D.Laplace(p[0], p[1]),
    "Uniform": lambda D, p: D.Uniform(p[0], p[0] + p[1]),
    "Exponential": lambda D, p: D.Exponential(p[1]),
}


@pytest.mark.parametrize("family", sorted(NORMAL_FAMILIES))
def test_rsample_pathwise_gradient_estimates_gradient_of_moments(family):
    """d/dθ E[x] and d/dθ E[x²] by averaging rsample gradients match the analytic moments' gradients."""
    ember.manual_seed(1)
    D = ember.distributions
    params = [ember.tensor([1.5, 0.8], dtype=ember.float64, requires_grad=True),
              ember.tensor([2.0, 1.2], dtype=ember.float64, requires_grad=True)]
    d = NORMAL_FAMILIES[family](D, params)
    n = 40000
    x = d.rsample((n,))
    estimate = ember.autograd.grad((x + x * x).mean(0).sum(), params, allow_unused=True)
    exact = ember.autograd.grad((d.mean + d.variance + d.mean ** 2).sum(), params, allow_unused=True)
    for got, want in zip(estimate, exact):
        if want is None:
            continue
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=0.08, atol=0.03)


@pytest.mark.parametrize("case", [c for c in CASES if "mean" in c.methods and "variance" in c.methods], ids=repr)
def test_sample_moments(case):
    """With a fixed seed, the mean and variance of many draws are within a few standard errors."""
    ember.manual_seed(2)
    d = _make(ember, case)
    n = 20000
    draws = d.sample((n,)).double().numpy()
    mean, variance = d.mean.numpy(), d.variance.numpy()
    assert np.all(np.abs(draws.mean(0) - mean) <= 5 * np.sqrt(variance / n) + 1e-9)
    fourth = ((draws - mean) ** 4).mean(0)
    assert np.all(np.abs(draws.var(0) - variance) <= 5 * np.sqrt(np.maximum(fourth - variance ** 2, 0) / n) + 1e-3 * variance + 1e-9)


@pytest.mark.parametrize("case", [c for c in CASES if "log_prob" in c.methods and "scalar" not in c.name], ids=repr)
def test_log_prob_gradient_matches_torch(case):
    def gradient(lib):
        d, leaves = _with_leaves(lib, case)
        grads = lib.autograd.grad(d.log_prob(_value(lib, case)).sum(), leaves, allow_unused=True)
        return [g if g is not None else lib.zeros_like(p) for g, p in zip(grads, leaves)]
    both(gradient)


@pytest.mark.parametrize("name, build", [
    ("Normal", lambda D, a, b: D.Normal(a, b).log_prob(a * 0.3)),
    ("Gamma", lambda D, a, b: D.Gamma(a, b).log_prob(b)),
    ("Beta", lambda D, a, b: D.Beta(a, b).entropy()),
    ("Dirichlet", lambda D, a, b: D.Dirichlet(ember.stack([a, b], -1)).entropy()),
    ("MultivariateNormal", lambda D, a, b: D.MultivariateNormal(a, ember.diag_embed(b)).log_prob(a * 0)),
    ("LowRank", lambda D, a, b: D.LowRankMultivariateNormal(a, b.unsqueeze(-1), b * b).log_prob(a * 0)),
])
def test_gradgradcheck(name, build):
    a = ember.tensor([1.5, 0.7], dtype=ember.float64, requires_grad=True)
    b = ember.tensor([2.0, 1.3], dtype=ember.float64, requires_grad=True)
    fn = lambda x, y: build(ember.distributions, x, y)  # noqa: E731
    assert ember.autograd.gradcheck(fn, (a, b))
    assert ember.autograd.gradgradcheck(fn, (a, b))


def test_icdf_inverts_cdf():
    D = ember.distributions
    p = ember.tensor([0.1, 0.5, 0.8], dtype=ember.float64)
    for d in (D.Normal(0.5, 2.0), D.Exponential(ember.tensor(1.5)), D.Laplace(1.0, 0.5),
              D.Uniform(-1.0, 3.0)):
        assert_same(p.numpy(), d.cdf(d.icdf(p)).numpy())
    both(lambda lib: lib.distributions.Normal(0.5, 2.0).icdf(lib.tensor([0.1, 0.5, 0.8])))


def test_enumerate_support_matches_torch():
    def supports(lib):
        D = lib.distributions
        t = lambda a: lib.tensor(a, dtype=lib.float64)  # noqa: E731
        return (D.Bernoulli(t([0.2, 0.4])).enumerate_support(), D.Categorical(t([0.2, 0.8])).enumerate_support(),
                D.Binomial(3, t([0.2, 0.4])).enumerate_support(expand=False),
                D.OneHotCategorical(t([[0.2, 0.8]] * 2)).enumerate_support())
    both(supports)


def test_gamma_implicit_gradient_is_exact():
    """Against the derivative of the regularized incomplete gamma function in 30-digit arithmetic, and
    against torch's (approximate) _standard_gamma_grad."""
    mpmath = pytest.importorskip("mpmath")
    from ember.distributions._gamma_sampling import implicit_gamma_gradient
    mpmath.mp.dps = 30
    alpha = np.array([0.05, 0.3, 1.0, 2.5, 10.0, 20.0, 300.0])
    x = np.array([1e-6, 0.2, 1.3, 4.0, 18.0, 18.0, 310.0])

    def exact(a, v):
        slope = mpmath.diff(lambda b: mpmath.gammainc(b, 0, v, regularized=True), a)
        return float(-slope / mpmath.exp((a - 1) * mpmath.log(v) - v - mpmath.loggamma(a)))
    got = implicit_gamma_gradient(alpha, x)
    np.testing.assert_allclose(got, [exact(mpmath.mpf(a), mpmath.mpf(v)) for a, v in zip(alpha, x)], rtol=1e-10)
    np.testing.assert_allclose(got, torch._standard_gamma_grad(torch.tensor(alpha), torch.tensor(x)).numpy(),
                               rtol=2e-3)


@pytest.mark.parametrize("build", [
    lambda D, t: D.Normal(t([0.0, 1.0]), t([1.0, 2.0])),
    lambda D, t: D.Exponential(t([0.5, 2.0])),
    lambda D, t: D.Gamma(t([2.0, 0.7]), t([1.5, 2.0])),
    lambda D, t: D.Bernoulli(t([0.2, 0.7])),
], ids=["Normal", "Exponential", "Gamma", "Bernoulli"])
def test_exponential_family_entropy_by_autograd_matches_closed_form(build):
    d = build(ember.distributions, lambda a: ember.tensor(a, dtype=ember.float64))
    np.testing.assert_allclose(ember.distributions.ExponentialFamily.entropy(d).detach().numpy(),
                               d.entropy().numpy(), rtol=1e-10, atol=1e-12)


@given(st.floats(-3.0, 3.0), st.floats(0.2, 5.0), st.floats(0.2, 5.0), st.floats(0.05, 8.0))
def test_log_prob_and_entropy_match_torch_over_parameters(loc, scale, concentration, value):
    def run(lib):
        D = lib.distributions
        t = lambda v: lib.tensor(v, dtype=lib.float64)  # noqa: E731
        return (D.Normal(t(loc), t(scale)).log_prob(t(value)), D.Gamma(t(concentration), t(scale)).log_prob(t(value)),
                D.Laplace(t(loc), t(scale)).cdf(t(value)), D.Gamma(t(concentration), t(scale)).entropy(),
                D.Beta(t(concentration), t(scale)).log_prob(t(value / 8.5)), D.Poisson(t(scale)).log_prob(t(round(value))))
    both(run)


def test_single_precision_draws_and_scores_keep_torch_dtypes():
    def dtypes(lib):
        D = lib.distributions
        t = lib.tensor
        made = [D.Normal(t([0.0, 1.0]), 1.0), D.Gamma(t([2.0, 3.0]), 1.0), D.Beta(t([2.0]), t([1.0])),
                D.Dirichlet(t([1.0, 2.0])), D.Bernoulli(t([0.3])), D.Categorical(t([0.2, 0.8])), D.Poisson(t([2.0])),
                D.Binomial(5, t([0.3])), D.Multinomial(3, t([0.2, 0.8])), D.Exponential(t([1.0])),
                D.Laplace(t([0.0]), t([1.0])), D.Uniform(t([0.0]), t([1.0])), D.RelaxedBernoulli(t(0.5), t([0.3])),
                D.RelaxedOneHotCategorical(t(0.5), t([0.3, 0.7])), D.OneHotCategorical(t([0.3, 0.7])),
                D.MultivariateNormal(lib.zeros(2), lib.eye(2)),
                D.LowRankMultivariateNormal(lib.zeros(2), lib.ones(2, 1), lib.ones(2))]
        return [(str(d.sample().dtype)[6:], str(d.log_prob(d.sample()).dtype)[6:]) for d in made]
    both(dtypes, prepare=lambda v: v)


def test_modes_at_the_edges_match_torch():
    def modes(lib):
        D = lib.distributions
        t = lib.tensor
        return (D.Dirichlet(t([[0.5, 0.9, 0.7], [2.0, 3.0, 1.0]])).mode, D.Bernoulli(t([0.5, 0.2, 0.7])).mode,
                D.Gamma(t([0.5, 3.0]), 1.0).mode, D.Binomial(4, t([0.5, 0.9])).mode, D.Beta(t([0.5]), t([0.7])).mode)
    both(modes)
