"""``Binomial(total_count=1, probs=None, logits=None)``: successes in ``total_count`` trials.

>>> import ember
>>> from ember.distributions import Binomial
>>> d = Binomial(10, probs=ember.tensor([0.5]))
>>> d.mean, d.log_prob(ember.tensor([5.0]))
(tensor([5.]), tensor([-1.4020]))
"""
from __future__ import annotations

import ember
from ember import Size
from ember.distributions import constraints
from ember.distributions._shared import BinaryProbabilities, one_of_probs_logits
from ember.distributions.distribution import Distribution
from ember.distributions.utils import broadcast_all
from ember.nn.functional import softplus

__all__ = ["Binomial"]


class Binomial(BinaryProbabilities, Distribution):
    """The number of successes in ``total_count`` independent trials, each succeeding with ``probs``."""

    arg_constraints = {"total_count": constraints.nonnegative_integer, "probs": constraints.unit_interval,
                       "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        name, given = one_of_probs_logits("Binomial", probs, logits)
        self.total_count, value = broadcast_all(total_count, given)
        self.total_count = self.total_count.type_as(value)
        self._take_probs_or_logits(**{name: value})
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(Binomial, batch_shape, _instance, ("total_count", "probs", "logits"))
        new._reset_param()
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=Size()):
        """``ember.binomial`` of the counts and probabilities expanded to the sample's shape, as torch draws it."""
        shape = self._extended_shape(sample_shape)
        with ember.no_grad():
            return ember.binomial(self.total_count.expand(shape), self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        n = self.total_count
        log_choose = ember.lgamma(n + 1) - ember.lgamma(value + 1) - ember.lgamma(n - value + 1)
        # k log p + (n - k) log(1 - p) = k * logits - n * log(1 + exp(logits))
        return log_choose + value * self.logits - n * softplus(self.logits)

    def entropy(self):
        total = int(self.total_count.max())
        if not (self.total_count == total).all():
            raise NotImplementedError("Inhomogeneous total count not supported by `entropy`.")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(ember.exp(log_prob) * log_prob).sum(0)

    def enumerate_support(self, expand=True):
        total = int(self.total_count.max())
        if not (self.total_count == total).all():
            raise NotImplementedError("Inhomogeneous total count not supported by `enumerate_support`.")
        values = ember.arange(1 + total, dtype=self._param.dtype)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + self._batch_shape) if expand else values
