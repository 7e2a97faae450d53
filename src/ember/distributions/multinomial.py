"""``Multinomial(total_count=1, probs=None, logits=None)``: counts of ``total_count`` Categorical draws.

>>> import ember
>>> from ember.distributions import Multinomial
>>> d = Multinomial(4, probs=ember.tensor([0.5, 0.5]))
>>> d.sample().sum(), d.log_prob(ember.tensor([2.0, 2.0]))
(tensor(4.), tensor(-0.9808))
"""
from __future__ import annotations

import ember
from ember import Size
from ember.distributions import constraints
from ember.distributions._shared import CategoricalParameters
from ember.distributions.binomial import Binomial
from ember.distributions.categorical import Categorical
from ember.distributions.distribution import Distribution

__all__ = ["Multinomial"]


class Multinomial(CategoricalParameters, Distribution):
    """How many of ``total_count`` draws fall in each of ``K`` categories (the last dim of ``probs``)."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        param = self._categorical._param
        super().__init__(param.shape[:-1], param.shape[-1:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Multinomial, _instance)
        batch_shape = Size(batch_shape)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        new._binomial = Binomial(total_count=self.total_count, probs=new.probs)
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=Size()):
        """``total_count`` categories drawn per sample and counted, as torch draws them."""
        sample_shape = Size(sample_shape)
        drawn = self._categorical.sample(Size((self.total_count,)) + sample_shape)
        drawn = drawn.permute(*range(1, drawn.dim()), 0)  # the draws last: (sample, batch, draw)
        counts = ember.zeros(self._extended_shape(sample_shape), dtype=ember.int64)
        return counts.scatter_add_(-1, drawn, ember.ones_like(drawn)).type_as(self.probs)

    def entropy(self):
        # H = -log n! - n Σ p log p + Σ_i E[log X_i!], with X_i ~ Binomial(n, p_i)
        n = ember.tensor(float(self.total_count), dtype=self.probs.dtype)
        support = self._binomial.enumerate_support(False)[1:]  # log 0! is 0: k = 0 adds nothing
        weights = ember.exp(self._binomial.log_prob(support))
        expected_log_factorials = (weights * ember.lgamma(support + 1)).sum([0, -1])
        cross = (self.probs * self.logits).sum(-1)
        return -ember.lgamma(n + 1) - self.total_count * cross + expected_log_factorials

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = ember.broadcast_tensors(self.logits, value)
        # a category never drawn adds 0 even where its probability is 0 (0 * -inf would be nan)
        logits = ember.where((value == 0) & (logits == -float("inf")), ember.zeros_like(logits), logits)
        log_factorial_n = ember.lgamma(value.sum(-1) + 1)
        log_factorial_xs = ember.lgamma(value + 1).sum(-1)
        return log_factorial_n - log_factorial_xs + (logits * value).sum(-1)
