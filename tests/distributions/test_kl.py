"""kl_divergence against torch for every registered pair, and register_kl's dispatch."""
import numpy as np
import pytest

import ember
from twins import both, both_raise

_SPD = np.array([[2.0, 0.3, 0.1], [0.3, 1.5, -0.2], [0.1, -0.2, 1.0]])
_SPD2 = np.array([[1.0, -0.4, 0.0], [-0.4, 2.5, 0.3], [0.0, 0.3, 0.7]])

# name -> builder(D, t) of two distributions of the kind, with different parameters
FAMILIES = {
    "Normal": lambda D, t: (D.Normal(t([0.0, 1.0]), t([1.0, 2.0])), D.Normal(t([0.5, -1.0]), t([0.7, 1.5]))),
    "Bernoulli": lambda D, t: (D.Bernoulli(t([0.2, 0.0, 0.6])), D.Bernoulli(t([0.5, 0.3, 0.9]))),
    "Binomial": lambda D, t: (D.Binomial(5, t([0.2, 0.6])), D.Binomial(5, t([0.5, 0.9]))),
    "Categorical": lambda D, t: (D.Categorical(t([[0.2, 0.8, 0.0], [0.3, 0.3, 0.4]])),
                                 D.Categorical(t([[0.5, 0.25, 0.25], [0.1, 0.6, 0.3]]))),
    "OneHotCategorical": lambda D, t: (D.OneHotCategorical(t([0.2, 0.8])), D.OneHotCategorical(t([0.5, 0.5]))),
    "Uniform": lambda D, t: (D.Uniform(t([0.0, 1.0]), t([1.0, 2.0])), D.Uniform(t([-1.0, 1.5]), t([2.0, 3.0]))),
    "Beta": lambda D, t: (D.Beta(t([2.0, 0.5]), t([1.0, 3.0])), D.Beta(t([1.0, 2.0]), t([4.0, 0.8]))),
    "Gamma": lambda D, t: (D.Gamma(t([2.0, 0.5]), t([1.0, 3.0])), D.Gamma(t([1.0, 2.0]), t([4.0, 0.8]))),
    "Dirichlet": lambda D, t: (D.Dirichlet(t([2.0, 0.5, 1.0])), D.Dirichlet(t([1.0, 2.0, 3.0]))),
    "Exponential": lambda D, t: (D.Exponential(t([2.0, 0.5])), D.Exponential(t([1.0, 3.0]))),
    "Laplace": lambda D, t: (D.Laplace(t([0.0, 1.0]), t([1.0, 2.0])), D.Laplace(t([0.5, -1.0]), t([0.7, 1.5]))),
    "Poisson": lambda D, t: (D.Poisson(t([2.0, 0.5])), D.Poisson(t([1.0, 3.0]))),
    "MultivariateNormal": lambda D, t: (D.MultivariateNormal(t([0.0, 1.0, 2.0]), t(_SPD)),
                                        D.MultivariateNormal(t([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]), t(_SPD2))),
    "LowRankMultivariateNormal": lambda D, t: (
        D.LowRankMultivariateNormal(t([0.0, 1.0, 2.0]), t([[1.0], [0.5], [-0.3]]), t([1.0, 0.5, 2.0])),
        D.LowRankMultivariateNormal(t([1.0, 0.0, 0.0]), t([[0.2, 0.1], [0.0, 1.0], [0.3, 0.3]]), t([0.7, 1.0, 1.0]))),
    "HalfNormal": lambda D, t: (D.HalfNormal(t([1.0, 2.0])), D.HalfNormal(t([0.7, 1.5]))),
    "Cauchy": lambda D, t: (D.Cauchy(t([0.0, 1.0]), t([1.0, 2.0])), D.Cauchy(t([0.5, -1.0]), t([0.7, 1.5]))),
    "Gumbel": lambda D, t: (D.Gumbel(t([0.0, 1.0]), t([1.0, 2.0])), D.Gumbel(t([0.5, -1.0]), t([0.7, 1.5]))),
    "Geometric": lambda D, t: (D.Geometric(t([0.2, 0.7])), D.Geometric(t([0.5, 0.4]))),
    "LogNormal": lambda D, t: (D.LogNormal(t([0.0, 1.0]), t([1.0, 2.0])), D.LogNormal(t([0.5, -1.0]), t([0.7, 1.5]))),
    "Independent": lambda D, t: (D.Independent(D.Normal(t([0.0, 1.0]), t([1.0, 2.0])), 1),
                                 D.Independent(D.Normal(t([0.5, -1.0]), t([0.7, 1.5])), 1)),
    "TransformedDistribution": lambda D, t: (
        D.TransformedDistribution(D.Normal(t([0.0, 1.0]), t([1.0, 2.0])), [D.transforms.ExpTransform()]),
        D.TransformedDistribution(D.Normal(t([0.5, -1.0]), t([0.7, 1.5])), [D.transforms.ExpTransform()])),
}

CROSS = [("Uniform", "Normal"), ("Exponential", "Normal"), ("Gamma", "Normal"), ("Laplace", "Normal"),
         ("Beta", "Normal"), ("Exponential", "Gamma"), ("Gamma", "Exponential"), ("Uniform", "Exponential"),
         ("Uniform", "Gamma"), ("Beta", "Uniform"), ("Normal", "Uniform"), ("Normal", "Gamma"),
         ("Laplace", "Beta"), ("Gamma", "Uniform"), ("Exponential", "Beta"),
         ("MultivariateNormal", "LowRankMultivariateNormal"), ("LowRankMultivariateNormal", "MultivariateNormal")]


def _pair(lib, first, second):
    D = lib.distributions
    t = lambda a: lib.tensor(np.asarray(a), dtype=lib.float64)  # noqa: E731
    return FAMILIES[first](D, t)[0], FAMILIES[second](D, t)[1]


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_same_family_matches_torch(name):
    both(lambda lib: lib.distributions.kl_divergence(*_pair(lib, name, name)))


@pytest.mark.parametrize("first, second", CROSS)
def test_across_families_matches_torch(first, second):
    both(lambda lib: lib.distributions.kl_divergence(*_pair(lib, first, second)))


@pytest.mark.parametrize("name", ["Normal", "Gamma", "Beta", "Dirichlet", "MultivariateNormal"])
def test_kl_is_differentiable_and_zero_at_equality(name):
    D = ember.distributions
    leaves = []

    def leaf(array):
        leaves.append(ember.tensor(np.asarray(array), dtype=ember.float64, requires_grad=True))
        return leaves[-1]
    p, q = FAMILIES[name](D, leaf)
    assert bool((D.kl_divergence(p, p).abs() < 1e-12).all())
    grads = ember.autograd.grad(D.kl_divergence(p, q).sum(), leaves, allow_unused=True)
    assert any(g is not None and bool(ember.isfinite(g).all()) for g in grads)


def test_unregistered_pair_raises():
    both_raise(lambda lib: lib.distributions.kl_divergence(*_pair(lib, "Poisson", "Normal")), NotImplementedError)


def test_register_kl_prefers_the_most_specific_pair():
    D = ember.distributions

    class MyNormal(D.Normal):
        pass

    @D.register_kl(MyNormal, D.Normal)
    def _kl_mine(p, q):
        return ember.tensor(-1.0)

    p, q = MyNormal(0.0, 1.0), D.Normal(1.0, 1.0)
    assert D.kl_divergence(p, q).item() == -1.0
    assert D.kl_divergence(q, p).item() == 0.5  # (Normal, MyNormal) still uses (Normal, Normal)
    with pytest.raises(TypeError, match="subclasses of Distribution"):
        D.register_kl(int, D.Normal)
