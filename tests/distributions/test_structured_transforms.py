"""CatTransform, StackTransform, CorrCholeskyTransform, PositiveDefiniteTransform, CumulativeDistributionTransform,
their constraint registrations and MixtureSameFamilyConstraint, against torch."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import ember
from twins import both, both_raise

TRANSFORMS = {
    "CorrCholesky": (lambda T, lib: T.CorrCholeskyTransform(), (6,)),
    "PositiveDefinite": (lambda T, lib: T.PositiveDefiniteTransform(), (2, 2)),
    "Cat": (lambda T, lib: T.CatTransform([T.ExpTransform(), T.AffineTransform(1.0, 3.0)], dim=-1, lengths=[1, 2]),
            (2, 3)),
    "Cat-dim0": (lambda T, lib: T.CatTransform([T.SigmoidTransform(), T.ExpTransform()], dim=0, lengths=[2, 1]),
                 (3, 2)),
    "Cat-events": (lambda T, lib: T.CatTransform([T.IndependentTransform(T.SigmoidTransform(), 1),
                                                   T.ExpTransform()], dim=0, lengths=[2, 1]), (3, 2)),
    "Stack": (lambda T, lib: T.StackTransform([T.ExpTransform(), T.SigmoidTransform()], dim=1), (3, 2)),
    "CumulativeDistribution": (lambda T, lib: T.CumulativeDistributionTransform(
        lib.distributions.Normal(lib.tensor(0.5, dtype=lib.float64), 2.0)), (2, 3)),
}


@pytest.mark.parametrize("name", sorted(TRANSFORMS))
@settings(max_examples=15, deadline=None)
@given(st.data())
def test_transforms_match_torch(name, data):
    build, shape = TRANSFORMS[name]
    xs = data.draw(st.lists(st.floats(-2.0, 2.0), min_size=int(np.prod(shape)), max_size=int(np.prod(shape))))

    def run(lib):
        t = build(lib.distributions.transforms, lib)
        x = lib.tensor(xs, dtype=lib.float64).reshape(shape)
        y = t(x)
        return (y, t.inv(y), _or_missing(lambda: t.log_abs_det_jacobian(x, y)), tuple(t.forward_shape(shape)),
                tuple(t.inverse_shape(tuple(y.shape))), t.domain.event_dim, t.codomain.event_dim, t.bijective,
                _or_missing(lambda: bool(t.codomain.check(y).all())))
    both(run)


def _or_missing(compute):
    """What ``compute`` gives, or a marker where it fails (torch has no Jacobian for PositiveDefiniteTransform,
    and cannot check a cat constraint whose pieces have different event dims): both libraries must agree."""
    try:
        return compute()
    except (NotImplementedError, RuntimeError):
        return "missing"


def test_corr_cholesky_log_det_is_that_of_the_jacobian():
    """log|det ∂y/∂x| over the free coordinates (the strict lower triangle), by central differences."""
    t = ember.distributions.transforms.CorrCholeskyTransform()
    x = np.array([0.5, -0.2, 1.0, 0.3, -1.5, 0.7])
    rows, cols = np.tril_indices(4, -1)

    def free(v):
        return t(ember.tensor(v, dtype=ember.float64)).numpy()[rows, cols]
    h = 1e-6
    jacobian = np.stack([(free(x + h * e) - free(x - h * e)) / (2 * h) for e in np.eye(6)], axis=1)
    expected = np.linalg.slogdet(jacobian)[1]
    got = t.log_abs_det_jacobian(ember.tensor(x, dtype=ember.float64), t(ember.tensor(x, dtype=ember.float64)))
    np.testing.assert_allclose(got.item(), expected, rtol=1e-7)


def test_transform_errors_match_torch():
    def cat_too_short(lib):
        T = lib.distributions.transforms
        return T.CatTransform([T.ExpTransform(), T.ExpTransform()], dim=0, lengths=[1, 2])(lib.zeros(2))
    both_raise(cat_too_short, AssertionError, "must equal length 3")
    both_raise(lambda lib: lib.distributions.transforms.StackTransform(
        [lib.distributions.transforms.ExpTransform()], dim=0)(lib.zeros(2)), AssertionError, "len\\(transforms\\) 1")
    both_raise(lambda lib: lib.distributions.transforms.CatTransform([1]), AssertionError, "Transform")
    both_raise(lambda lib: lib.distributions.transforms.CorrCholeskyTransform().forward_shape((4,)), ValueError,
               "flattened lower-diagonal")
    both_raise(lambda lib: lib.distributions.transforms.CorrCholeskyTransform().inverse_shape((3, 2)), ValueError,
               "not square")


def test_cache_and_equality():
    T = ember.distributions.transforms
    for t in (T.CorrCholeskyTransform(cache_size=1), T.PositiveDefiniteTransform(cache_size=1),
              T.CatTransform([T.ExpTransform()], cache_size=1), T.StackTransform([T.ExpTransform()], cache_size=1),
              T.CumulativeDistributionTransform(ember.distributions.Normal(0.0, 1.0)).with_cache(1)):
        x = ember.ones((3,) if isinstance(t, T.CorrCholeskyTransform) else (1, 1)) * 0.3
        assert t.inv(t(x)) is x
    assert T.CorrCholeskyTransform() == T.CorrCholeskyTransform() != T.PositiveDefiniteTransform()


@pytest.mark.parametrize("registry", ["biject_to", "transform_to"])
@pytest.mark.parametrize("constraint", [
    lambda C: C.corr_cholesky, lambda C: C.positive_definite, lambda C: C.positive_semidefinite,
    lambda C: C.cat([C.positive, C.interval(-1.0, 2.0)], dim=-1, lengths=[2, 2]),
    lambda C: C.stack([C.real, C.positive, C.unit_interval], dim=-1),
], ids=["corr_cholesky", "positive_definite", "positive_semidefinite", "cat", "stack"])
def test_constraint_registry_matches_torch(registry, constraint):
    def run(lib):
        D = lib.distributions
        c = constraint(D.constraints)
        try:
            t = getattr(D, registry)(c)
        except NotImplementedError:
            return "not registered"
        x = lib.tensor([[0.3, -1.2, 2.0, 0.7], [0.0, 0.5, -0.4, 1.1]], dtype=lib.float64)
        x = x[:, :3].reshape(2, 3) if isinstance(c, type(D.constraints.stack([], -1))) else x
        x = x.reshape(2, 2, 2) if c.event_dim == 2 and not isinstance(c, type(D.constraints.corr_cholesky)) else x
        x = x[:, :3] if c is D.constraints.corr_cholesky else x
        y = t(x)
        return y, bool(c.check(y).all()), t.inv(y)
    both(run, prepare=lambda v: v if isinstance(v, str) else [np.array(a.numpy()) if hasattr(a, "numpy") else a
                                                              for a in v])


def test_mixture_same_family_constraint_matches_torch():
    def run(lib):
        D = lib.distributions
        c = D.constraints.MixtureSameFamilyConstraint(D.constraints.independent(D.constraints.positive, 1))
        mixture = D.MixtureSameFamily(D.Categorical(lib.tensor([0.3, 0.7])),
                                      D.Gamma(lib.tensor([1.0, 2.0]), lib.tensor([1.0, 3.0])))
        values = lib.tensor([[[1.0, 2.0], [-1.0, 2.0]], [[0.5, 0.5], [0.0, 1.0]]])
        return (c.check(values), c.event_dim, c.is_discrete, repr(c), repr(mixture.support),
                mixture.support.check(lib.tensor([1.0, -1.0, 0.0])))
    both(run, prepare=lambda v: [np.array(a.numpy()) if hasattr(a, "numpy") else a for a in v])
    both_raise(lambda lib: lib.distributions.constraints.MixtureSameFamilyConstraint(3), AssertionError,
               "Constraint")
