"""``biject_to`` and ``transform_to``: from unconstrained reals to the values a constraint allows.

``biject_to(c)`` is a bijection (so a density can be carried through it, as in HMC);
``transform_to(c)`` need only reach every value (as for optimising a constrained parameter).

>>> import ember
>>> from ember.distributions import constraints
>>> from ember.distributions.constraint_registry import biject_to, transform_to
>>> biject_to(constraints.positive)(ember.tensor([0.0]))
tensor([1.])
>>> transform_to(constraints.simplex)(ember.zeros(2))
tensor([0.5000, 0.5000])
"""
from __future__ import annotations

from ember.distributions import constraints
from ember.distributions import transforms as T

__all__ = ["ConstraintRegistry", "biject_to", "transform_to"]


class ConstraintRegistry:
    """A table from constraint classes to factories ``factory(constraint) -> Transform``."""

    def __init__(self):
        self._registry: dict = {}

    def register(self, constraint, factory=None):
        """Register ``factory`` for a constraint class (or an instance's class); usable as a decorator."""
        if factory is None:
            return lambda factory: self.register(constraint, factory)
        if isinstance(constraint, constraints.Constraint):
            constraint = type(constraint)
        if not isinstance(constraint, type) or not issubclass(constraint, constraints.Constraint):
            raise TypeError(f"Expected constraint to be either a Constraint subclass or instance, but got "
                            f"{constraint}")
        self._registry[constraint] = factory
        return factory

    def __call__(self, constraint):
        try:
            factory = self._registry[type(constraint)]
        except KeyError:
            raise NotImplementedError(f"Cannot transform {type(constraint).__name__} constraints") from None
        return factory(constraint)


biject_to = ConstraintRegistry()
transform_to = ConstraintRegistry()


def _real(constraint):
    return T.identity_transform


def _independent(registry):
    def factory(constraint):
        base = registry(constraint.base_constraint)
        return T.IndependentTransform(base, constraint.reinterpreted_batch_ndims)
    return factory


def _above(constraint):
    return T.ComposeTransform([T.ExpTransform(), T.AffineTransform(constraint.lower_bound, 1)])


def _below(constraint):
    return T.ComposeTransform([T.ExpTransform(), T.AffineTransform(constraint.upper_bound, -1)])


def _interval(constraint):
    low, high = constraint.lower_bound, constraint.upper_bound
    if isinstance(low, (int, float)) and isinstance(high, (int, float)) and low == 0 and high == 1:
        return T.SigmoidTransform()
    return T.ComposeTransform([T.SigmoidTransform(), T.AffineTransform(low, high - low)])


for _registry in (biject_to, transform_to):
    _registry.register(constraints.real, _real)
    _registry.register(constraints._IndependentConstraint, _independent(_registry))
    for _kind in (constraints._GreaterThan, constraints._GreaterThanEq):
        _registry.register(_kind, _above)
    _registry.register(constraints._LessThan, _below)
    for _kind in (constraints._Interval, constraints._HalfOpenInterval):
        _registry.register(_kind, _interval)
biject_to.register(constraints.simplex, lambda constraint: T.StickBreakingTransform())
transform_to.register(constraints.simplex, lambda constraint: T.SoftmaxTransform())
transform_to.register(constraints.lower_cholesky, lambda constraint: T.LowerCholeskyTransform())
transform_to.register(constraints.positive_definite, lambda constraint: T.PositiveDefiniteTransform())
transform_to.register(constraints.positive_semidefinite, lambda constraint: T.PositiveDefiniteTransform())
for _registry in (biject_to, transform_to):
    _registry.register(constraints.corr_cholesky, lambda constraint: T.CorrCholeskyTransform())


def _pieces(registry):
    """The factories for ``cat`` and ``stack`` constraints: one transform per piece, from ``registry``."""
    def cat(constraint):
        return T.CatTransform([registry(c) for c in constraint.cseq], constraint.dim, constraint.lengths)

    def stack(constraint):
        return T.StackTransform([registry(c) for c in constraint.cseq], constraint.dim)
    return cat, stack


for _registry in (biject_to, transform_to):
    _cat, _stack = _pieces(_registry)
    _registry.register(constraints.cat, _cat)
    _registry.register(constraints.stack, _stack)
