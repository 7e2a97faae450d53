"""``RelaxedOneHotCategorical(temperature, probs=None, logits=None)``: a reparameterised point of the simplex.

Draws are ``softmax((logits + Gumbel noise) / temperature)`` (the Gumbel-softmax); as the temperature
falls they approach one-hot vectors.

>>> import ember
>>> from ember.distributions import RelaxedOneHotCategorical
>>> d = RelaxedOneHotCategorical(ember.tensor(0.5), probs=ember.tensor([0.2, 0.8]))
>>> x = d.rsample()
>>> x.shape, bool((x.sum(-1) - 1).abs() < 1e-5)
(ember.Size([2]), True)
"""
from __future__ import annotations

import ember
from ember import Size
from ember.distributions import constraints
from ember.distributions._shared import CategoricalParameters
from ember.distributions.categorical import Categorical
from ember.distributions.distribution import Distribution
from ember.distributions.relaxed_bernoulli import Relaxed
from ember.distributions.transforms import ExpTransform
from ember.distributions.utils import clamp_probs

__all__ = ["ExpRelaxedCategorical", "RelaxedOneHotCategorical"]


class ExpRelaxedCategorical(CategoricalParameters, Distribution):
    """The log of a RelaxedOneHotCategorical draw (a log-simplex point)."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits)
        self.temperature = temperature
        param = self._categorical._param
        super().__init__(param.size()[:-1], param.size()[-1:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(ExpRelaxedCategorical, _instance)
        batch_shape = Size(batch_shape)
        new.temperature = self.temperature
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        u = clamp_probs(ember.rand(shape, dtype=self.logits.dtype))
        gumbels = -((-(u.log())).log())
        scores = (self.logits + gumbels) / self.temperature
        return scores - scores.logsumexp(dim=-1, keepdim=True)

    def log_prob(self, value):
        k = self._categorical._num_events
        if self._validate_args:
            self._validate_sample(value)
        logits, value = ember.broadcast_tensors(self.logits, value)
        temperature = ember.as_tensor(self.temperature, dtype=logits.dtype)
        # the density of the Concrete distribution, in log space: log Γ(k) + (k - 1) log τ + Σ scores
        log_scale = ember.lgamma(ember.full_like(temperature, float(k))) + (k - 1) * temperature.log()
        score = logits - value * temperature
        score = (score - score.logsumexp(dim=-1, keepdim=True)).sum(-1)
        return score + log_scale


class RelaxedOneHotCategorical(Relaxed):
    """The Concrete (Gumbel-softmax) relaxation of OneHotCategorical at ``temperature``."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base = ExpRelaxedCategorical(temperature, probs, logits, validate_args=validate_args)
        super().__init__(base, ExpTransform(), validate_args=validate_args)
