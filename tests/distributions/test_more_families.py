"""The circular, matrix and bounded families against torch: values, shapes, gradients, draws and validation."""
import math

import numpy as np
import pytest
import torch

import ember
from tests.distributions.more_cases import MORE_CASES
from tests.distributions import test_families as families
from tests.distributions.test_families import _make, _value, _with_leaves
from tests.distributions.test_validation import _same_messages
from twins import assert_same, both, both_raise, to_numpy

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

_BY_NAME = {case.name: case for case in MORE_CASES}
_BY_ICDF = ["HalfCauchy", "ContinuousBernoulli-probs", "ContinuousBernoulli-logits", "GeneralizedPareto", "Kumaraswamy"]


def _both(program, rtol=None):
    """``both``, or with a looser relative tolerance where torch approximates."""
    if rtol is None:
        return both(program)
    expected, actual = to_numpy(program(torch)), to_numpy(program(ember))
    for want, got in zip(expected, actual):
        np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-9)
    return actual


def _scores(lib, case):
    d = _make(lib, case)
    value = _value(lib, case)
    out = [d.log_prob(value) if m == "log_prob" else d.entropy() if m == "entropy" else getattr(d, m)
           for m in case.methods]
    if case.cdf:
        out.append(d.cdf(value))
    if case.name in _BY_ICDF:
        out.append(d.icdf(d.cdf(value)))
    return out


@pytest.mark.parametrize("case", MORE_CASES, ids=repr)
def test_values_match_torch(case):
    _both(lambda lib: _scores(lib, case), case.extra.get("rtol"))


@pytest.mark.parametrize("case", MORE_CASES, ids=repr)
def test_shapes_and_expand_match_torch(case):
    families.test_shapes_and_expand_match_torch(case)
    both(lambda lib: (type(_make(lib, case).expand((3,) + tuple(_make(lib, case).batch_shape))).__name__,
                      repr(_make(lib, case).support).replace("torch.", "ember.")), prepare=lambda v: v)


@pytest.mark.parametrize("case", [c for c in MORE_CASES if "scalar" not in c.name], ids=repr)
def test_log_prob_gradient_matches_torch(case):
    def gradients(lib):
        d, leaves = _with_leaves(lib, case)
        return list(lib.autograd.grad(d.log_prob(_value(lib, case)).sum(), leaves))
    rtol = case.extra.get("rtol")
    _both(gradients, rtol and 10 * rtol)


@pytest.mark.parametrize("name", _BY_ICDF)
def test_rsample_gradient_matches_torch_at_the_same_noise(name):
    """Each draw is icdf(u) for a uniform u; torch's icdf at ember's u gives the same draw and gradients."""
    case = _BY_NAME[name]
    ember.manual_seed(3)
    d, leaves = _with_leaves(ember, case)
    draws = d.rsample((500,))
    grads = ember.autograd.grad(draws.sum(), leaves)
    noise = torch.tensor(d.cdf(draws).detach().numpy())
    d_torch, leaves_torch = _with_leaves(torch, case)
    draws_torch = d_torch.icdf(noise)
    grads_torch = torch.autograd.grad(draws_torch.sum(), leaves_torch)
    single = draws.dtype == ember.float32  # the noise went through a single-precision cdf
    np.testing.assert_allclose(draws.detach().numpy(), draws_torch.detach().numpy(), rtol=1e-4 if single else 1e-9,
                               atol=1e-12)
    for got, want in zip(grads, grads_torch):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-3 if single else 1e-7)


def test_logistic_normal_rsample_gradient_matches_torch_at_the_same_noise():
    case = _BY_NAME["LogisticNormal"]
    ember.manual_seed(4)
    d, (loc, scale) = _with_leaves(ember, case)
    draws = d.rsample((300,))
    grads = ember.autograd.grad((draws * ember.tensor([1.0, 2.0, 3.0], dtype=ember.float64)).sum(), [loc, scale])
    noise = (d.transforms[0].inv(draws.detach()) - loc.detach()) / scale.detach()
    d_torch, (loc_t, scale_t) = _with_leaves(torch, case)
    draws_torch = d_torch.transforms[0](loc_t + scale_t * torch.tensor(noise.numpy()))
    grads_torch = torch.autograd.grad((draws_torch * torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)).sum(),
                                      [loc_t, scale_t])
    assert_same(to_numpy(list(grads_torch)), to_numpy(list(grads)))


@pytest.mark.parametrize("name", ["Wishart-cov", "InverseGamma", "FisherSnedecor", "ContinuousBernoulli-logits",
                                  "Kumaraswamy"])
def test_rsample_pathwise_gradient_is_the_gradient_of_the_mean(name):
    """The average gradient of many draws is the gradient of the mean (Gamma-based draws are implicit)."""
    case = _BY_NAME[name]
    ember.manual_seed(5)
    d, leaves = _with_leaves(ember, case)
    draws = d.rsample((20000,))
    estimate = ember.autograd.grad(draws.mean(0).sum(), leaves, allow_unused=True, retain_graph=True)
    exact = ember.autograd.grad(d.mean.sum(), leaves, allow_unused=True)
    for got, want, leaf in zip(estimate, exact, leaves):
        want = ember.zeros_like(leaf) if want is None else want  # the mean does not depend on this one
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=0.05, atol=0.02)


@pytest.mark.parametrize("name", ["Wishart-cov", "InverseGamma", "ContinuousBernoulli-probs", "FisherSnedecor",
                                  "GeneralizedPareto", "Kumaraswamy"])
def test_sample_moments(name):
    """With a fixed seed, the mean and variance of many draws are within a few standard errors."""
    ember.manual_seed(6)
    d = _make(ember, _BY_NAME[name])
    n = 20000
    draws = d.sample((n,)).numpy()
    mean, variance = d.mean.numpy(), d.variance.numpy()
    assert np.all(np.abs(draws.mean(0) - mean) <= 5 * np.sqrt(variance / n))
    fourth = ((draws - mean) ** 4).mean(0)
    assert np.all(np.abs(draws.var(0) - variance) <= 5 * np.sqrt((fourth - variance ** 2) / n) + 1e-9)


def test_von_mises_draws_have_the_circular_moments():
    ember.manual_seed(7)
    loc = ember.tensor([0.5, 3.0, -2.0], dtype=ember.float64)
    kappa = ember.tensor([0.3, 8.0, 1e-6], dtype=ember.float64)
    d = ember.distributions.VonMises(loc, kappa)
    n = 20000
    draws = d.sample((n,))
    assert draws.dtype == ember.float64 and bool(((draws >= -math.pi) & (draws < math.pi)).all())
    resultant = ember.cos(draws - loc).mean(0).numpy()
    np.testing.assert_allclose(resultant, 1 - d.variance.numpy(), atol=5 / math.sqrt(n))
    np.testing.assert_allclose(ember.sin(draws - loc).mean(0).numpy(), 0.0, atol=5 / math.sqrt(n))


@pytest.mark.parametrize("dim, eta", [(2, 0.5), (4, 2.0), (5, 1.0)])
def test_lkj_draws_are_correlation_factors_with_the_marginal_variance(dim, eta):
    """Each correlation of an LKJ(η) matrix has variance 1/(2η + dim - 1), in every row (the onion method's
    Beta must grow with the row for that)."""
    ember.manual_seed(8)
    d = ember.distributions.LKJCholesky(dim, ember.tensor(eta, dtype=ember.float64))
    n = 20000
    factors = d.sample((n,))
    assert bool(ember.distributions.constraints.corr_cholesky.check(factors).all())
    rows, cols = np.tril_indices(dim, -1)
    correlations = (factors @ factors.mT).numpy()[:, rows, cols]
    expected = 1 / (2 * eta + dim - 1)
    assert np.all(np.abs(correlations.mean(0)) <= 5 * math.sqrt(expected / n))
    assert np.all(np.abs(correlations.var(0) - expected) <= 5 * math.sqrt(2 / n) * expected)


def _midpoints(low: float, high: float, n: int = 20000):
    """The midpoints of ``n`` equal cells of ``[low, high]``, and the cells' width."""
    width = (high - low) / n
    return low + width * (ember.arange(n, dtype=ember.float64) + 0.5), width


@pytest.mark.parametrize("build, low, high", [
    (lambda D, t: D.VonMises(t(1.0), t(3.0)), -math.pi, math.pi),
    (lambda D, t: D.ContinuousBernoulli(t(0.15)), 0.0, 1.0),
    (lambda D, t: D.Kumaraswamy(t(2.0), t(3.0)), 0.0, 1.0),
    (lambda D, t: D.GeneralizedPareto(t(1.0), t(2.0), t(-0.5)), 1.0, 5.0),
], ids=["VonMises", "ContinuousBernoulli", "Kumaraswamy", "GeneralizedPareto"])
def test_densities_integrate_to_one(build, low, high):
    t = lambda v: ember.tensor(v, dtype=ember.float64)  # noqa: E731
    points, width = _midpoints(low, high)
    density = build(ember.distributions, t).log_prob(points).exp()
    assert abs(density.sum().item() * width - 1) < 1e-6


def test_lkj_density_of_two_by_two_factors_integrates_to_one():
    r, width = _midpoints(-1.0, 1.0)
    factors = ember.zeros(r.shape + (2, 2), dtype=ember.float64)
    factors[:, 0, 0] = 1.0
    factors[:, 1, 0] = r
    factors[:, 1, 1] = (1 - r * r).sqrt()
    for eta in (1.0, 1.5, 3.0):
        density = ember.distributions.LKJCholesky(2, ember.tensor(eta, dtype=ember.float64)).log_prob(factors).exp()
        assert abs(density.sum().item() * width - 1) < 1e-6


@pytest.mark.parametrize("name, build", [
    ("VonMises", lambda D, a, b: D.VonMises(a, b).log_prob(a * 0.3 - b)),
    ("VonMises-variance", lambda D, a, b: D.VonMises(a, b).variance),
    ("LKJCholesky", lambda D, a, b: D.LKJCholesky(3, a).log_prob(ember.linalg.cholesky(
        ember.eye(3, dtype=ember.float64) * 0.7 + 0.3)) + b.sum()),
    ("Wishart", lambda D, a, b: D.Wishart(a + 2, covariance_matrix=ember.diag_embed(b)).log_prob(
        ember.diag_embed(a * b))),
    ("ContinuousBernoulli", lambda D, a, b: D.ContinuousBernoulli(logits=a - b).log_prob(b / 3)),
    ("Kumaraswamy", lambda D, a, b: D.Kumaraswamy(a, b).entropy()),
])
def test_gradgradcheck(name, build):
    families.test_gradgradcheck(name, build)  # gradcheck and gradgradcheck at a = [1.5, 0.7], b = [2.0, 1.3]


@pytest.mark.parametrize("build", [
    lambda lib, D: D.VonMises(lib.zeros(2), -lib.ones(2)),
    lambda lib, D: D.HalfCauchy(lib.tensor([-1.0])),
    lambda lib, D: D.InverseGamma(lib.tensor(1.0), lib.tensor(0.0)),
    lambda lib, D: D.ContinuousBernoulli(logits=lib.tensor([float("nan")])),
    lambda lib, D: D.FisherSnedecor(lib.tensor([-1.0]), lib.tensor([1.0])),
    lambda lib, D: D.GeneralizedPareto(lib.tensor(0.0), lib.tensor(-1.0), lib.tensor(0.1)),
    lambda lib, D: D.Kumaraswamy(lib.tensor([1.0]), lib.tensor([-2.0])),
    lambda lib, D: D.LogisticNormal(lib.zeros(2), lib.tensor([1.0, -1.0])),
    lambda lib, D: D.Wishart(lib.tensor(3.0), covariance_matrix=lib.tensor([[1.0, 2.0], [2.0, 1.0]])),
], ids=["VonMises", "HalfCauchy", "InverseGamma", "ContinuousBernoulli", "FisherSnedecor",
        "GeneralizedPareto", "Kumaraswamy", "LogisticNormal", "Wishart"])
def test_invalid_parameters_raise_as_torch(build):
    _same_messages(lambda lib: build(lib, lib.distributions), ValueError, "Expected parameter")


@pytest.mark.parametrize("build, value", [
    (lambda lib, D: D.LKJCholesky(2), [[1.0, 0.0], [0.8, 0.8]]),
    (lambda lib, D: D.Wishart(lib.tensor(3.0), covariance_matrix=lib.eye(2)), [[1.0, 2.0], [2.0, 1.0]]),
    (lambda lib, D: D.HalfCauchy(lib.tensor([1.0])), [-1.0]),
    (lambda lib, D: D.InverseGamma(lib.tensor([1.0]), lib.tensor([1.0])), [0.0]),
    (lambda lib, D: D.ContinuousBernoulli(lib.tensor([0.3])), [1.5]),
    (lambda lib, D: D.FisherSnedecor(lib.tensor([1.0]), lib.tensor([1.0])), [-0.5]),
    (lambda lib, D: D.GeneralizedPareto(lib.tensor([1.0]), lib.tensor([1.0]), lib.tensor([-0.5])), [3.5]),
    (lambda lib, D: D.Kumaraswamy(lib.tensor([1.0]), lib.tensor([1.0])), [1.5]),
    (lambda lib, D: D.LogisticNormal(lib.zeros(2), lib.ones(2)), [0.5, 0.6, 0.1]),
    (lambda lib, D: D.VonMises(lib.zeros(2), lib.ones(2)), [0.0, float("nan")]),
], ids=["LKJCholesky", "Wishart", "HalfCauchy", "InverseGamma", "ContinuousBernoulli", "FisherSnedecor",
        "GeneralizedPareto", "Kumaraswamy", "LogisticNormal", "VonMises"])
def test_values_outside_the_support_raise_as_torch(build, value):
    _same_messages(lambda lib: build(lib, lib.distributions).log_prob(lib.tensor(value)), ValueError)


def test_constructor_errors_match_torch():
    _same_messages(lambda lib: lib.distributions.LKJCholesky(1), ValueError, "dim=1")
    _same_messages(lambda lib: lib.distributions.Wishart(lib.tensor(0.5), covariance_matrix=lib.eye(2)), ValueError,
                   "expected to be greater than ndim - 1")
    _same_messages(lambda lib: lib.distributions.ContinuousBernoulli(lib.tensor([1.5]), validate_args=True),
                   ValueError, "probs has invalid values")
    both_raise(lambda lib: lib.distributions.ContinuousBernoulli(), ValueError, "Either `probs` or `logits`")
    # torch reports the Beta it builds inside; ember names the parameter given
    both_raise(lambda lib: lib.distributions.LKJCholesky(3, lib.tensor([1.0, 0.0])), ValueError,
               "Expected parameter concentration")


def test_single_precision_draws_and_scores_keep_torch_dtypes():
    def dtypes(lib):
        D, t = lib.distributions, lib.tensor
        made = [D.VonMises(t([0.0]), t([1.0])), D.VonMises(0.0, 2.0), D.LKJCholesky(3, 1.0),
                D.Wishart(4, covariance_matrix=lib.eye(2)), D.HalfCauchy(1.0), D.InverseGamma(t([2.0]), 1.0),
                D.ContinuousBernoulli(t([0.3])), D.FisherSnedecor(t([3.0]), 4.0), D.GeneralizedPareto(0.0, 1.0, 0.2),
                D.Kumaraswamy(t([2.0]), 3.0), D.LogisticNormal(lib.zeros(2), 1.0)]
        return [(tuple(d.batch_shape), tuple(d.event_shape), str(d.sample().dtype)[6:],
                 str(d.log_prob(d.sample()).dtype)[6:], tuple(d.log_prob(d.sample((2,))).shape)) for d in made]
    both(dtypes, prepare=lambda v: v)


def test_wishart_redraws_a_singular_draw(monkeypatch):
    d = ember.distributions.Wishart(ember.tensor([3.0, 4.0]), covariance_matrix=ember.eye(2))
    draw = d._bartlett_sample
    calls = []

    def first_singular(sample_shape):
        calls.append(sample_shape)
        sample = draw(sample_shape)
        return sample * 0 if len(calls) == 1 else sample
    monkeypatch.setattr(d, "_bartlett_sample", first_singular)
    with pytest.warns(UserWarning, match="Singular sample detected"):
        sample = d.rsample((3,))
    assert len(calls) == 2 and bool(ember.distributions.constraints.positive_definite.check(sample).all())
