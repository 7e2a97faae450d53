"""Pieces several families share: the location pair of mean and mode, and the two ways to give probabilities.

>>> import ember
>>> from ember.distributions import Bernoulli
>>> Bernoulli(logits=ember.tensor([0.0])).probs
tensor([0.5000])
"""
from __future__ import annotations

import math
import numbers

import ember
from ember import Size
from ember.distributions import constraints
from ember.distributions.utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits


def one_of_probs_logits(name: str, probs, logits):
    """The one parameter given of ``probs`` and ``logits``, with the name it was given under."""
    if (probs is None) == (logits is None):
        raise ValueError(f"Either `probs` or `logits` must be specified, but not both (for {name}).")
    return ("probs", probs) if probs is not None else ("logits", logits)


class LocationFamily:
    """A family symmetric and unimodal about ``loc``: its mean and mode are ``loc``."""

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc


class LocationScale(LocationFamily):
    """A family of ``loc + scale * x`` for ``x`` from one standard member: real ``loc``, positive ``scale``."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        scalar = isinstance(loc, numbers.Number) and isinstance(scale, numbers.Number)
        super().__init__(Size() if scalar else self.loc.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(type(self), batch_shape, _instance, ("loc", "scale"))


class BinaryProbabilities:
    """A family with one success probability per element, given as ``probs`` or as ``logits`` (log-odds)."""

    def _take_probs_or_logits(self, probs=None, logits=None) -> Size:
        """Store the parameter given (and ``_param``); return the batch shape it implies."""
        name, given = one_of_probs_logits(type(self).__name__, probs, logits)
        (value,) = broadcast_all(given)
        setattr(self, name, value)
        self._param = value
        return Size() if isinstance(given, numbers.Number) else value.size()

    def _reset_param(self):
        self._param = self.__dict__.get("probs", self.__dict__.get("logits"))

    def _new(self, *args, **kwargs):
        return self._param.new(*args, **kwargs)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.size()


class CategoricalParameters:
    """A family built on a Categorical (``self._categorical``), whose parameters it shows as its own."""

    def _new(self, *args, **kwargs):
        return self._categorical._new(*args, **kwargs)

    @property
    def _param(self):
        return self._categorical._param

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def param_shape(self):
        return self._categorical.param_shape


class FoldedAtZero:
    """The law of ``|x|`` for ``x`` from ``self.base_dist``, symmetric about 0 with a ``scale``: twice the base's
    density on ``[0, ∞)`` (HalfNormal, HalfCauchy)."""

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    @property
    def scale(self):
        return self.base_dist.scale

    @property
    def mode(self):
        return ember.zeros_like(self.scale)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = ember.as_tensor(value, dtype=self.scale.dtype)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return ember.where(value >= 0, log_prob, ember.full_like(log_prob, -math.inf))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        return self.base_dist.entropy() - math.log(2)
