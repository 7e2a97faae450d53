"""``ember.distributions``: probability distributions, sampling, scoring and KL divergences.

Each family is a ``Distribution`` subclass in a module of its own. ``rsample`` is reparameterised (its
draws carry gradients to the parameters); Gamma, Beta and Dirichlet draws carry implicit gradients.

The families load on first use (``import ember`` stays quick): this module maps each public name to
the module that defines it.

>>> import ember
>>> import ember.distributions as D
>>> d = D.Normal(ember.tensor([0.0, 1.0]), ember.tensor([1.0, 2.0]))
>>> d.log_prob(ember.tensor([0.0, 1.0]))
tensor([-0.9189, -1.6121])
>>> D.kl_divergence(d, D.Normal(0.0, 1.0))
tensor([0.0000, 1.3069])
"""
import importlib

_HOME = {  # public name -> the module (of this package) that defines it
    "AbsTransform": "transforms",
    "AffineTransform": "transforms",
    "Bernoulli": "bernoulli",
    "Beta": "beta",
    "biject_to": "constraint_registry",
    "Binomial": "binomial",
    "Categorical": "categorical",
    "Cauchy": "cauchy",
    "Chi2": "chi2",
    "ComposeTransform": "transforms",
    "constraint_registry": "constraint_registry",
    "constraints": "constraints",
    "Dirichlet": "dirichlet",
    "Distribution": "distribution",
    "Exponential": "exponential",
    "ExponentialFamily": "exp_family",
    "ExpTransform": "transforms",
    "Gamma": "gamma",
    "Gumbel": "gumbel",
    "Geometric": "geometric",
    "HalfNormal": "half_normal",
    "identity_transform": "transforms",
    "Independent": "independent",
    "IndependentTransform": "transforms",
    "kl": "kl",
    "kl_divergence": "kl",
    "Laplace": "laplace",
    "LogNormal": "log_normal",
    "LowerCholeskyTransform": "transforms",
    "LowRankMultivariateNormal": "lowrank_multivariate_normal",
    "MixtureSameFamily": "mixture_same_family",
    "Multinomial": "multinomial",
    "MultivariateNormal": "multivariate_normal",
    "NegativeBinomial": "negative_binomial",
    "Normal": "normal",
    "OneHotCategorical": "one_hot_categorical",
    "OneHotCategoricalStraightThrough": "one_hot_categorical",
    "Pareto": "pareto",
    "Poisson": "poisson",
    "PowerTransform": "transforms",
    "register_kl": "kl",
    "RelaxedBernoulli": "relaxed_bernoulli",
    "RelaxedOneHotCategorical": "relaxed_categorical",
    "ReshapeTransform": "transforms",
    "SigmoidTransform": "transforms",
    "SoftmaxTransform": "transforms",
    "SoftplusTransform": "transforms",
    "StickBreakingTransform": "transforms",
    "StudentT": "studentT",
    "TanhTransform": "transforms",
    "Transform": "transforms",
    "transform_to": "constraint_registry",
    "TransformedDistribution": "transformed_distribution",
    "transforms": "transforms",
    "Uniform": "uniform",
    "utils": "utils",
    "Weibull": "weibull",
    "CatTransform": "transforms",
    "ContinuousBernoulli": "continuous_bernoulli",
    "CorrCholeskyTransform": "transforms",
    "CumulativeDistributionTransform": "transforms",
    "FisherSnedecor": "fishersnedecor",
    "GeneralizedPareto": "generalized_pareto",
    "HalfCauchy": "half_cauchy",
    "InverseGamma": "inverse_gamma",
    "Kumaraswamy": "kumaraswamy",
    "LKJCholesky": "lkj_cholesky",
    "LogisticNormal": "logistic_normal",
    "PositiveDefiniteTransform": "transforms",
    "StackTransform": "transforms",
    "VonMises": "von_mises",
    "Wishart": "wishart",
}

__all__ = sorted(_HOME)


def __getattr__(name: str):
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module 'ember.distributions' has no attribute '{name}'")
    module = importlib.import_module(f"ember.distributions.{home}")
    value = module if home == name else getattr(module, name)
    globals()[name] = value  # later look-ups find it directly
    return value


def __dir__() -> list:
    return sorted(set(globals()) | set(_HOME))
