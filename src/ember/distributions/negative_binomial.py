"""``NegativeBinomial(total_count, probs=None, logits=None)``: successes before ``total_count`` failures.

>>> import ember
>>> from ember.distributions import NegativeBinomial
>>> d = NegativeBinomial(3.0, probs=ember.tensor([0.4]))
>>> d.mean, d.log_prob(ember.tensor([2.0]))
(tensor([2.]), tensor([-1.5733]))
"""
from __future__ import annotations

import ember
from ember import Size
from ember.distributions import constraints
from ember.distributions._shared import BinaryProbabilities, one_of_probs_logits
from ember.distributions.distribution import Distribution
from ember.distributions.gamma import Gamma
from ember.distributions.utils import broadcast_all
from ember.nn.functional import logsigmoid

__all__ = ["NegativeBinomial"]


class NegativeBinomial(BinaryProbabilities, Distribution):
    """Successes, each with probability ``probs``, counted until ``total_count`` failures."""

    arg_constraints = {"total_count": constraints.greater_than_eq(0), "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        name, given = one_of_probs_logits("NegativeBinomial", probs, logits)
        self.total_count, value = broadcast_all(total_count, given)
        self.total_count = self.total_count.type_as(value)
        self._take_probs_or_logits(**{name: value})
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(NegativeBinomial, batch_shape, _instance, ("total_count", "probs", "logits"))
        new._reset_param()
        return new

    @property
    def mean(self):
        return self.total_count * ember.exp(self.logits)

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        return self.mean / ember.sigmoid(-self.logits)

    def sample(self, sample_shape=Size()):
        # a Poisson whose rate is Gamma(total_count, (1 - p) / p): the Gamma-Poisson mixture
        with ember.no_grad():
            rate = Gamma(self.total_count, ember.exp(-self.logits), validate_args=False).sample(sample_shape)
            return ember.poisson(rate)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        r = self.total_count
        unnormalised = r * logsigmoid(-self.logits) + value * logsigmoid(self.logits)
        log_choose = ember.lgamma(r + value) - ember.lgamma(1.0 + value) - ember.lgamma(r)
        # no failures asked for and none drawn: the only outcome, probability 1
        log_choose = ember.where(r + value == 0, ember.zeros_like(log_choose), log_choose)
        return unnormalised + log_choose
