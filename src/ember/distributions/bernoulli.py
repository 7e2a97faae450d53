"""``Bernoulli(probs=None, logits=None)``: a coin with chance ``probs`` of 1.

>>> import ember
>>> from ember.distributions import Bernoulli
>>> d = Bernoulli(probs=ember.tensor([0.25]))
>>> d.log_prob(ember.tensor([1.0])), d.mean
(tensor([-1.3863]), tensor([0.2500]))
"""
from __future__ import annotations

import ember
from ember import Size
from ember.distributions import constraints
from ember.distributions._shared import BinaryProbabilities
from ember.distributions.exp_family import ExponentialFamily
from ember.distributions.utils import broadcast_all
from ember.nn.functional import binary_cross_entropy_with_logits

__all__ = ["Bernoulli"]


class Bernoulli(BinaryProbabilities, ExponentialFamily):
    """Draws 1 with probability ``probs`` (or ``sigmoid(logits)``) and 0 otherwise."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0

    def __init__(self, probs=None, logits=None, validate_args=None):
        batch_shape = self._take_probs_or_logits(probs, logits)
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(Bernoulli, batch_shape, _instance, ("probs", "logits"))
        new._reset_param()
        return new

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        mode = (self.probs >= 0.5).to(self.probs.dtype)
        return ember.where(self.probs == 0.5, ember.full_like(mode, float("nan")), mode)

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        with ember.no_grad():
            return ember.bernoulli(self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self):
        return binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand=True):
        values = ember.arange(2, dtype=self._param.dtype)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + self._batch_shape) if expand else values

    @property
    def _natural_params(self):
        return (ember.logit(self.probs),)

    def _log_normalizer(self, x):
        return ember.log1p(ember.exp(x))
