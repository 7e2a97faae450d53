"""``RelaxedBernoulli(temperature, probs=None, logits=None)``: a continuous, reparameterised coin in (0, 1).

Draws are ``sigmoid((logits + logistic noise) / temperature)``; as the temperature falls they approach 0 or 1.

>>> import ember
>>> from ember.distributions import RelaxedBernoulli
>>> d = RelaxedBernoulli(ember.tensor(0.5), probs=ember.tensor([0.3]))
>>> x = d.rsample((4,))
>>> x.shape, bool(((x > 0) & (x < 1)).all())
(ember.Size([4, 1]), True)
"""
from __future__ import annotations

import ember
from ember import Size
from ember.distributions import constraints
from ember.distributions._shared import BinaryProbabilities
from ember.distributions.distribution import Distribution
from ember.distributions.transformed_distribution import TransformedDistribution
from ember.distributions.transforms import SigmoidTransform
from ember.distributions.utils import broadcast_all, clamp_probs

__all__ = ["LogitRelaxedBernoulli", "Relaxed", "RelaxedBernoulli"]


class LogitRelaxedBernoulli(BinaryProbabilities, Distribution):
    """The logit of a RelaxedBernoulli draw: ``(logits + log u - log(1 - u)) / temperature``."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self.temperature = temperature
        batch_shape = self._take_probs_or_logits(probs, logits)
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(LogitRelaxedBernoulli, batch_shape, _instance, ("probs", "logits"))
        new.temperature = self.temperature
        new._reset_param()
        return new

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        probs = clamp_probs(self.probs.expand(shape))
        u = clamp_probs(ember.rand(shape, dtype=probs.dtype))
        return (u.log() - (-u).log1p() + probs.log() - (-probs).log1p()) / self.temperature

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        diff = logits - value * self.temperature
        return ember.log(ember.as_tensor(self.temperature, dtype=diff.dtype)) + diff - \
            2 * ember.nn.functional.softplus(diff)


class Relaxed(TransformedDistribution):
    """A relaxation: a transformed base (``base_dist``) whose temperature and probabilities it shows."""

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(type(self), _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def temperature(self):
        return self.base_dist.temperature

    @property
    def logits(self):
        return self.base_dist.logits

    @property
    def probs(self):
        return self.base_dist.probs


class RelaxedBernoulli(Relaxed):
    """The Concrete (Gumbel-sigmoid) relaxation of Bernoulli at ``temperature``."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base = LogitRelaxedBernoulli(temperature, probs, logits)
        super().__init__(base, SigmoidTransform(), validate_args=validate_args)
