"""``OneHotCategorical(probs=None, logits=None)``: a Categorical draw as a one-hot vector.

>>> import ember
>>> from ember.distributions import OneHotCategorical
>>> d = OneHotCategorical(probs=ember.tensor([0.5, 0.5]))
>>> d.sample().sum(), d.log_prob(ember.tensor([0.0, 1.0]))
(tensor(1.), tensor(-0.6931))
"""
from __future__ import annotations

import ember
from ember import Size
from ember.distributions import constraints
from ember.distributions._shared import CategoricalParameters
from ember.distributions.categorical import Categorical
from ember.distributions.distribution import Distribution
from ember.nn.functional import one_hot

__all__ = ["OneHotCategorical", "OneHotCategoricalStraightThrough"]


class OneHotCategorical(CategoricalParameters, Distribution):
    """A one-hot vector of length ``K`` whose hot index is Categorical(``probs``)."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits)
        param = self._categorical._param
        super().__init__(param.size()[:-1], param.size()[-1:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(OneHotCategorical, _instance)
        batch_shape = Size(batch_shape)
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self._categorical.probs

    @property
    def mode(self):
        probs = self._categorical.probs
        return one_hot(probs.argmax(dim=-1), probs.shape[-1]).to(probs.dtype)

    @property
    def variance(self):
        return self._categorical.probs * (1 - self._categorical.probs)

    def sample(self, sample_shape=Size()):
        probs = self._categorical.probs
        indices = self._categorical.sample(sample_shape)
        return one_hot(indices, probs.shape[-1]).to(probs.dtype)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self._categorical.log_prob(value.max(-1)[1])

    def entropy(self):
        return self._categorical.entropy()

    def enumerate_support(self, expand=True):
        n = self.event_shape[0]
        values = ember.eye(n, dtype=self._param.dtype)
        values = values.view((n,) + (1,) * len(self.batch_shape) + (n,))
        return values.expand((n,) + self.batch_shape + (n,)) if expand else values


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """OneHotCategorical whose ``rsample`` passes gradients straight through to ``probs``."""

    has_rsample = True

    def rsample(self, sample_shape=Size()):
        draws = self.sample(sample_shape)
        probs = self._categorical.probs
        return draws + (probs - probs.detach())
