"""Argument and sample validation as torch's, constraints, transforms and reprs."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import ember
from twins import both, both_raise


def _same_messages(program, error=ValueError, *fragments):
    torch_message, ember_message = both_raise(program, error, *fragments)
    assert ember_message == torch_message.replace("torch.", "ember.")


@pytest.mark.parametrize("build", [
    lambda lib, D: D.Normal(lib.zeros(2), -lib.ones(2)),
    lambda lib, D: D.Bernoulli(probs=lib.tensor([1.5])),
    lambda lib, D: D.Categorical(probs=lib.tensor([-0.5, 1.5])),
    lambda lib, D: D.Gamma(lib.tensor(1.0), lib.tensor(0.0)),
    lambda lib, D: D.Uniform(lib.tensor([2.0]), lib.tensor([1.0])),
    lambda lib, D: D.Dirichlet(lib.tensor([1.0, -1.0])),
    lambda lib, D: D.MultivariateNormal(lib.zeros(2), lib.tensor([[1.0, 2.0], [2.0, 1.0]])),
    lambda lib, D: D.Geometric(lib.tensor([0.0, 0.5])),
], ids=["Normal", "Bernoulli", "Categorical", "Gamma", "Uniform", "Dirichlet", "MultivariateNormal", "Geometric"])
def test_invalid_parameters_raise_as_torch(build):
    _same_messages(lambda lib: build(lib, lib.distributions), ValueError, "Expected parameter")


@pytest.mark.parametrize("build, value", [
    (lambda lib, D: D.Bernoulli(0.3), [0.5]),
    (lambda lib, D: D.Exponential(lib.tensor([1.0])), [-1.0]),
    (lambda lib, D: D.Poisson(lib.tensor([1.0])), [1.5]),
    (lambda lib, D: D.Beta(lib.tensor([1.0]), lib.tensor([1.0])), [1.5]),
    (lambda lib, D: D.Normal(lib.zeros(3), 1.0), [0.0, 1.0]),
    (lambda lib, D: D.Dirichlet(lib.ones(3)), [0.5, 0.6, 0.1]),
], ids=["Bernoulli", "Exponential", "Poisson", "Beta", "shape", "simplex"])
def test_values_outside_the_support_raise_as_torch(build, value):
    _same_messages(lambda lib: build(lib, lib.distributions).log_prob(lib.tensor(value)), ValueError)


def test_validation_can_be_turned_off():
    D = ember.distributions
    assert D.Normal(0.0, -1.0, validate_args=False).scale.item() == -1.0
    D.Distribution.set_default_validate_args(False)
    try:
        assert D.Exponential(ember.tensor([1.0])).log_prob(ember.tensor([-1.0])).item() == 1.0
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        D.Exponential(ember.tensor([1.0])).log_prob(ember.tensor([-1.0]))
    both_raise(lambda lib: lib.distributions.Distribution.set_default_validate_args("yes"), ValueError)


def test_probs_and_logits_are_exclusive():
    both_raise(lambda lib: lib.distributions.Bernoulli(probs=lib.tensor(0.2), logits=lib.tensor(0.1)), ValueError,
               "Either `probs` or `logits` must be specified, but not both")
    both_raise(lambda lib: lib.distributions.Categorical(), ValueError, "Either `probs` or `logits`")


def test_reprs_match_torch():
    def reprs(lib):
        D = lib.distributions
        return [repr(d).replace("torch.", "ember.") for d in (
            D.Normal(lib.zeros(2), 1.0), D.Normal(0.0, 1.0), D.Categorical(probs=lib.tensor([0.5, 0.5])),
            D.Gamma(lib.ones(2, 3), 2.0), D.Independent(D.Normal(lib.zeros(2), 1.0), 1),
            D.constraints.real, D.constraints.positive, D.constraints.interval(0.0, 1.0),
            D.constraints.independent(D.constraints.real, 1), D.constraints.simplex, D.constraints.integer_interval(0, 3),
            D.Normal(0.0, 1.0).support, D.Binomial(3, lib.tensor([0.5])).support,
            D.transforms.ExpTransform(), D.transforms.SigmoidTransform().inv)]
    both(reprs, prepare=lambda v: v)


CONSTRAINTS = ["real", "positive", "nonnegative", "unit_interval", "boolean", "nonnegative_integer",
               "positive_integer", "simplex", "lower_cholesky", "positive_definite", "lower_triangular",
               "real_vector", "one_hot", "symmetric", "positive_semidefinite"]


@pytest.mark.parametrize("name", CONSTRAINTS)
def test_constraint_checks_match_torch(name):
    values = [[[1.0, 0.0], [0.5, 2.0]], [[0.0, 1.0], [1.0, 0.0]], [[2.0, 0.3], [0.3, 1.0]],
              [[-1.0, 0.5], [0.5, 0.0]], [[0.25, 0.75], [1.0, 0.0]], [[float("nan"), 1.0], [3.0, 4.0]]]
    both(lambda lib: [getattr(lib.distributions.constraints, name).check(lib.tensor(v)) for v in values])
    both(lambda lib: (getattr(lib.distributions.constraints, name).event_dim,
                      getattr(lib.distributions.constraints, name).is_discrete), prepare=lambda v: v)


TRANSFORMS = {
    "Exp": lambda T, lib: T.ExpTransform(),
    "Sigmoid": lambda T, lib: T.SigmoidTransform(),
    "Tanh": lambda T, lib: T.TanhTransform(),
    "Softplus": lambda T, lib: T.SoftplusTransform(),
    "Affine": lambda T, lib: T.AffineTransform(lib.tensor([1.0, -2.0], dtype=lib.float64), 3.0),
    "Power": lambda T, lib: T.PowerTransform(lib.tensor(2.5, dtype=lib.float64)),
    "Compose": lambda T, lib: T.ComposeTransform([T.AffineTransform(0.5, 2.0), T.ExpTransform()]),
    "StickBreaking": lambda T, lib: T.StickBreakingTransform(),
    "Independent": lambda T, lib: T.IndependentTransform(T.ExpTransform(), 1),
    "Reshape": lambda T, lib: T.ReshapeTransform((2,), (2, 1)),
}


@pytest.mark.parametrize("name", sorted(TRANSFORMS))
@given(st.lists(st.floats(0.1, 2.0), min_size=2, max_size=2))
def test_transforms_match_torch(name, xs):
    def run(lib):
        t = TRANSFORMS[name](lib.distributions.transforms, lib)
        x = lib.tensor(xs, dtype=lib.float64)
        y = t(x)
        return (y, t.inv(y), t.log_abs_det_jacobian(x, y), tuple(t.forward_shape((3, 2))),
                t.domain.event_dim, t.codomain.event_dim, t.bijective)
    both(run)


def test_transform_inverse_and_cache():
    T = ember.distributions.transforms
    t = T.ExpTransform(cache_size=1)
    x = ember.tensor([0.3])
    assert t.inv(t(x)) is x and t.inv.inv is t
    assert T.ComposeTransform([T.ExpTransform(), T.AffineTransform(1.0, 2.0)]).inv(ember.tensor([3.0])).item() == 0.0
    assert T.ExpTransform() == T.ExpTransform() and T.ExpTransform() != T.SigmoidTransform()
    with pytest.raises(ValueError, match="cache_size"):
        T.ExpTransform(cache_size=2)


def test_sample_n_warns_and_sample_shapes():
    d = ember.distributions.Normal(ember.zeros(2), 1.0)
    with pytest.warns(UserWarning, match="sample_n"):
        assert d.sample_n(3).shape == (3, 2)
    assert d.sample().shape == (2,) and d.sample([4, 1]).shape == (4, 1, 2)
    assert not d.sample().requires_grad


def test_rsample_not_available_raises():
    both_raise(lambda lib: lib.distributions.Bernoulli(lib.tensor(0.5)).rsample(), NotImplementedError)


@pytest.mark.parametrize("registry", ["biject_to", "transform_to"])
@pytest.mark.parametrize("constraint", [
    lambda C: C.real, lambda C: C.positive, lambda C: C.unit_interval, lambda C: C.simplex,
    lambda C: C.greater_than(2.0), lambda C: C.less_than(1.0), lambda C: C.interval(1.0, 3.0),
    lambda C: C.independent(C.positive, 1), lambda C: C.real_vector, lambda C: C.half_open_interval(0.0, 2.0),
])
def test_constraint_registry_matches_torch(registry, constraint):
    def run(lib):
        D = lib.distributions
        c = constraint(D.constraints)
        t = getattr(D, registry)(c)
        x = lib.tensor([[0.3, -1.2, 2.0], [0.0, 0.5, -0.4]], dtype=lib.float64)
        y = t(x)
        if not t.bijective:  # softmax onto the simplex: many-to-one, no inverse or Jacobian
            return y, bool(c.check(y).all())
        return y, bool(c.check(y).all()), t.inv(y), t.log_abs_det_jacobian(x, y)
    both(run)
