"""``ContinuousBernoulli(probs=None, logits=None, lims=(0.499, 0.501))``: a density on ``[0, 1]``.

Its density is ``C(λ) λ^x (1 - λ)^(1 - x)`` (Loaiza-Ganem and Cunningham, 2019): the Bernoulli likelihood
normalised over the unit interval. Near ``λ = 1/2`` (inside ``lims``) the normaliser and moments are
computed from their Taylor series, where the closed forms lose precision.

>>> import ember
>>> from ember.distributions import ContinuousBernoulli
>>> d = ContinuousBernoulli(ember.tensor([0.2, 0.5]))
>>> d.mean
tensor([0.3880, 0.5000])
>>> d.log_prob(ember.tensor([0.3, 0.3]))
tensor([0.1984, 0.0000])
"""
from __future__ import annotations

import math
import numbers

import ember
from ember import Size
from ember.distributions import constraints
from ember.distributions._shared import BinaryProbabilities, one_of_probs_logits
from ember.distributions.exp_family import ExponentialFamily
from ember.distributions.utils import broadcast_all, clamp_probs, lazy_property, logits_to_probs
from ember.nn.functional import binary_cross_entropy_with_logits

__all__ = ["ContinuousBernoulli"]


class ContinuousBernoulli(BinaryProbabilities, ExponentialFamily):
    """The continuous Bernoulli distribution with shape parameter ``probs`` (or its ``logits``)."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        name, given = one_of_probs_logits("ContinuousBernoulli", probs, logits)
        (value,) = broadcast_all(given)
        if name == "probs":
            if validate_args is not None and not bool(self.arg_constraints["probs"].check(value).all()):
                raise ValueError("The parameter probs has invalid values")
            value = clamp_probs(value)  # 0 and 1 would put the whole mass at a point
        setattr(self, name, value)
        self._param = value
        self._lims = lims
        batch_shape = Size() if isinstance(given, numbers.Number) else value.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(ContinuousBernoulli, batch_shape, _instance, ("probs", "logits"))
        new._lims = self._lims
        new._reset_param()
        return new

    @lazy_property
    def probs(self):
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))  # kept off 0 and 1, as when given

    def _outside_unstable_region(self):
        return (self.probs <= self._lims[0]) | (self.probs > self._lims[1])

    def _cut_probs(self):
        """``probs``, with those near 1/2 moved to ``lims[0]`` so the closed forms stay finite there."""
        return ember.where(self._outside_unstable_region(), self.probs, ember.full_like(self.probs, self._lims[0]))

    def _cont_bern_log_norm(self):
        """``log C(λ)``, with ``C(λ) = 2 atanh(1 - 2λ) / (1 - 2λ)``."""
        cut = self._cut_probs()
        below_half = ember.where(cut <= 0.5, cut, ember.zeros_like(cut))
        above_half = ember.where(cut >= 0.5, cut, ember.ones_like(cut))
        log_norm = ember.log((ember.log1p(-cut) - ember.log(cut)).abs()) - ember.where(
            cut <= 0.5, ember.log1p(-2.0 * below_half), ember.log(2.0 * above_half - 1.0))
        x = (self.probs - 0.5).pow(2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return ember.where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self):
        cut = self._cut_probs()
        mean = cut / (2.0 * cut - 1.0) + 1.0 / (ember.log1p(-cut) - ember.log(cut))
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x.pow(2)) * x
        return ember.where(self._outside_unstable_region(), mean, taylor)

    @property
    def variance(self):
        cut = self._cut_probs()
        variance = cut * (cut - 1.0) / (1.0 - 2.0 * cut).pow(2) + 1.0 / (ember.log1p(-cut) - ember.log(cut)).pow(2)
        x = (self.probs - 0.5).pow(2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return ember.where(self._outside_unstable_region(), variance, taylor)

    def rsample(self, sample_shape=Size()):
        u = ember.rand(self._extended_shape(sample_shape), dtype=self.probs.dtype)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -binary_cross_entropy_with_logits(logits, value, reduction="none") + self._cont_bern_log_norm()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        cut = self._cut_probs()
        cdf = (cut.pow(value) * (1.0 - cut).pow(1.0 - value) + cut - 1.0) / (2.0 * cut - 1.0)
        inside = ember.where(self._outside_unstable_region(), cdf, value)
        return ember.where(value <= 0.0, ember.zeros_like(value),
                           ember.where(value >= 1.0, ember.ones_like(value), inside))

    def icdf(self, value):
        cut = self._cut_probs()
        closed = (ember.log1p(-cut + value * (2.0 * cut - 1.0)) - ember.log1p(-cut)) / (ember.log(cut)
                                                                                        - ember.log1p(-cut))
        return ember.where(self._outside_unstable_region(), closed, value)

    def entropy(self):
        log_probs0, log_probs1 = ember.log1p(-self.probs), ember.log(self.probs)
        return self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm() - log_probs0

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        """``log ∫ exp(x t) dt`` over ``[0, 1]``, i.e. ``log((eˣ - 1) / x)``, by its Taylor series near 0."""
        outside = (x <= self._lims[0] - 0.5) | (x > self._lims[1] - 0.5)
        cut = ember.where(outside, x, ember.full_like(x, self._lims[0] - 0.5))
        log_norm = ember.log(ember.expm1(cut).abs()) - ember.log(cut.abs())
        taylor = 0.5 * x + x.pow(2) / 24.0 - x.pow(4) / 2880.0
        return ember.where(outside, log_norm, taylor)
