"""The table of distributions the tests run over: one row per family and parameterisation.

A row builds the same distribution in torch and in ember from plain NumPy parameters (float64),
and names values inside its support to score.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

RNG = np.random.default_rng(7)
_SPD = np.array([[2.0, 0.3, 0.1], [0.3, 1.5, -0.2], [0.1, -0.2, 1.0]])


@dataclass
class Case:
    name: str
    build: Callable  # build(lib, D, t) -> distribution; t(array) makes a float64 tensor of lib
    values: np.ndarray  # points of the support, broadcastable to batch_shape + event_shape
    methods: tuple = ("log_prob", "entropy", "mean", "variance", "stddev", "mode")
    cdf: bool = False
    reparameterised: bool = False
    params: tuple = ()  # names of the parameters to check gradients for (they are the build's leaves)
    extra: dict = field(default_factory=dict)

    def __repr__(self):
        return self.name


def _positive(*shape):
    return RNG.uniform(0.5, 3.0, shape)


CASES = [
    Case("Normal", lambda lib, D, t: D.Normal(t([0.0, 1.0, -2.0]), t([1.0, 0.5, 2.0])),
         np.array([[0.3, 1.2, -1.0], [2.0, -1.0, 0.0]]), cdf=True, reparameterised=True),
    Case("Normal-scalar", lambda lib, D, t: D.Normal(0.5, 2.0), np.array([0.3, -1.0]), cdf=True),
    Case("Bernoulli-probs", lambda lib, D, t: D.Bernoulli(probs=t([0.2, 0.5, 0.9])),
         np.array([[0.0, 1.0, 1.0], [1.0, 0.0, 0.0]])),
    Case("Bernoulli-logits", lambda lib, D, t: D.Bernoulli(logits=t([-1.0, 0.3, 2.0])),
         np.array([0.0, 1.0, 1.0])),
    Case("Categorical-probs", lambda lib, D, t: D.Categorical(probs=t([[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]])),
         np.array([[0, 2], [1, 1]]), methods=("log_prob", "entropy", "mode")),
    Case("Categorical-logits", lambda lib, D, t: D.Categorical(logits=t([1.0, -1.0, 0.5, 2.0])),
         np.array([0, 3, 2]), methods=("log_prob", "entropy", "mode")),
    Case("OneHotCategorical", lambda lib, D, t: D.OneHotCategorical(probs=t([[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]])),
         np.array([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]])),
    Case("Uniform", lambda lib, D, t: D.Uniform(t([0.0, -1.0]), t([2.0, 3.0])), np.array([[0.5, 2.5], [1.9, -0.9]]),
         methods=("log_prob", "entropy", "mean", "variance", "stddev"), cdf=True, reparameterised=True),
    Case("Beta", lambda lib, D, t: D.Beta(t([2.0, 0.7, 3.0]), t([1.5, 2.0, 3.0])), np.array([0.3, 0.6, 0.5]),
         reparameterised=True),
    Case("Gamma", lambda lib, D, t: D.Gamma(t([2.0, 0.7, 5.0]), t([1.5, 2.0, 0.5])), np.array([0.3, 1.6, 8.0]),
         reparameterised=True),
    Case("Dirichlet", lambda lib, D, t: D.Dirichlet(t([[2.0, 1.0, 3.0], [0.5, 4.0, 2.0]])),
         np.array([[0.2, 0.3, 0.5], [0.1, 0.6, 0.3]]), reparameterised=True),
    Case("Exponential", lambda lib, D, t: D.Exponential(t([0.5, 2.0])), np.array([0.3, 1.7]), cdf=True,
         reparameterised=True),
    Case("Laplace", lambda lib, D, t: D.Laplace(t([0.0, 1.0]), t([1.0, 0.5])), np.array([0.4, -0.3]), cdf=True,
         reparameterised=True),
    Case("Poisson", lambda lib, D, t: D.Poisson(t([0.5, 3.0, 10.0])), np.array([0.0, 2.0, 12.0]),
         methods=("log_prob", "mean", "variance", "stddev", "mode")),
    Case("Binomial", lambda lib, D, t: D.Binomial(10, probs=t([0.2, 0.5, 0.7])), np.array([1.0, 5.0, 10.0])),
    Case("Binomial-logits", lambda lib, D, t: D.Binomial(t([5.0, 8.0]), logits=t([0.3, -1.0])),
         np.array([2.0, 8.0]), methods=("log_prob", "mean", "variance", "mode")),
    Case("Multinomial", lambda lib, D, t: D.Multinomial(6, probs=t([[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]])),
         np.array([[1.0, 2.0, 3.0], [6.0, 0.0, 0.0]]), methods=("log_prob", "entropy", "mean", "variance")),
    Case("MultivariateNormal-cov", lambda lib, D, t: D.MultivariateNormal(t([0.0, 1.0, -1.0]), t(_SPD)),
         np.array([[0.5, 0.5, 0.5], [1.0, -1.0, 0.0]]), methods=("log_prob", "entropy", "mean", "variance"),
         reparameterised=True),
    Case("MultivariateNormal-tril", lambda lib, D, t: D.MultivariateNormal(
        t([[0.0, 1.0, -1.0], [1.0, 2.0, 3.0]]), scale_tril=t(np.linalg.cholesky(_SPD))),
         np.array([0.5, 0.5, 0.5]), methods=("log_prob", "entropy", "variance")),
    Case("MultivariateNormal-precision", lambda lib, D, t: D.MultivariateNormal(
        t([0.0, 1.0, -1.0]), precision_matrix=t(_SPD)), np.array([0.5, 0.5, 0.5]),
         methods=("log_prob", "entropy", "variance")),
    Case("LowRankMultivariateNormal", lambda lib, D, t: D.LowRankMultivariateNormal(
        t([0.0, 1.0, -1.0]), t([[1.0, 0.2], [0.3, -0.5], [0.0, 0.7]]), t([0.5, 1.0, 2.0])),
         np.array([[0.5, 0.5, 0.5], [1.0, -1.0, 0.0]]), methods=("log_prob", "entropy", "mean", "variance"),
         reparameterised=True),
    Case("Independent", lambda lib, D, t: D.Independent(D.Normal(t([[0.0, 1.0], [2.0, 3.0]]), t([1.0, 2.0])), 1),
         np.array([[0.5, 0.5], [1.0, 2.0]]), reparameterised=True),
    Case("LogNormal-by-transform", lambda lib, D, t: D.TransformedDistribution(
        D.Normal(t([0.0, 1.0]), t([1.0, 0.5])), [D.transforms.ExpTransform()]),
         np.array([0.5, 3.0]), methods=("log_prob",), cdf=True, reparameterised=True),
    Case("Affine-Sigmoid", lambda lib, D, t: D.TransformedDistribution(
        D.Normal(t([0.0, 1.0]), t([1.0, 0.5])), [D.transforms.AffineTransform(1.0, 2.0),
                                                   D.transforms.SigmoidTransform()]),
         np.array([0.5, 0.9]), methods=("log_prob",), cdf=True, reparameterised=True),
    Case("StickBreaking", lambda lib, D, t: D.TransformedDistribution(
        D.Independent(D.Normal(t([0.0, 1.0]), t([1.0, 0.5])), 1), [D.transforms.StickBreakingTransform()]),
         np.array([0.2, 0.5, 0.3]), methods=("log_prob",), reparameterised=True),
    Case("RelaxedBernoulli", lambda lib, D, t: D.RelaxedBernoulli(t(0.7), probs=t([0.2, 0.8])),
         np.array([0.3, 0.9]), methods=("log_prob",), reparameterised=True),
    Case("RelaxedOneHotCategorical", lambda lib, D, t: D.RelaxedOneHotCategorical(
        t(0.5), logits=t([1.0, -0.5, 0.2])), np.array([0.2, 0.3, 0.5]), methods=("log_prob",),
         reparameterised=True),
    Case("MixtureSameFamily", lambda lib, D, t: D.MixtureSameFamily(
        D.Categorical(probs=t([0.3, 0.7])), D.Normal(t([-1.0, 2.0]), t([0.5, 1.5]))),
         np.array([0.0, 1.5, -1.0]), methods=("log_prob", "mean", "variance"), cdf=True),
    Case("MixtureSameFamily-mvn", lambda lib, D, t: D.MixtureSameFamily(
        D.Categorical(logits=t([[0.3, 0.7, 0.1], [1.0, 0.0, -1.0]])),
        D.Independent(D.Normal(t(np.arange(12.0).reshape(2, 3, 2) / 4), t(np.ones((2, 3, 2)))), 1)),
         np.array([[0.0, 1.5], [-1.0, 0.5]]), methods=("log_prob", "mean", "variance")),
    Case("LogNormal", lambda lib, D, t: D.LogNormal(t([0.0, 0.5]), t([1.0, 0.3])), np.array([0.5, 3.0]),
         cdf=True, reparameterised=True),
    Case("HalfNormal", lambda lib, D, t: D.HalfNormal(t([1.0, 2.5])), np.array([0.5, 3.0]), cdf=True,
         reparameterised=True),
    Case("Cauchy", lambda lib, D, t: D.Cauchy(t([0.0, 1.0]), t([1.0, 0.5])), np.array([0.4, -2.0]), cdf=True,
         methods=("log_prob", "entropy", "mode"), reparameterised=True),
    Case("Geometric", lambda lib, D, t: D.Geometric(t([0.3, 0.8])), np.array([2.0, 0.0])),
    Case("Chi2", lambda lib, D, t: D.Chi2(t([3.0, 5.0])), np.array([2.0, 0.5]), cdf=True, reparameterised=True),
    Case("StudentT", lambda lib, D, t: D.StudentT(t([6.0, 9.0]), t([0.0, 1.0]), t([1.0, 2.0])),
         np.array([0.5, -1.0]), reparameterised=True),
    Case("Gumbel", lambda lib, D, t: D.Gumbel(t([0.0, 1.0]), t([1.0, 0.5])), np.array([0.4, -2.0]), cdf=True,
         reparameterised=True),
    Case("NegativeBinomial", lambda lib, D, t: D.NegativeBinomial(t([3.0, 5.5]), probs=t([0.4, 0.2])),
         np.array([2.0, 0.0]), methods=("log_prob", "mean", "variance", "mode")),
    Case("NegativeBinomial-logits", lambda lib, D, t: D.NegativeBinomial(t([2.0, 1.0]), logits=t([0.3, -1.0])),
         np.array([4.0, 1.0]), methods=("log_prob", "mean", "variance", "mode")),
    Case("Weibull", lambda lib, D, t: D.Weibull(t([1.0, 2.0]), t([2.0, 0.8])), np.array([0.5, 3.0]), cdf=True,
         reparameterised=True),
    Case("Pareto", lambda lib, D, t: D.Pareto(t([1.0, 0.5]), t([5.0, 6.5])), np.array([2.0, 0.7]), cdf=True,
         reparameterised=True),
]
