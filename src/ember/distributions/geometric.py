"""``Geometric(probs=None, logits=None)``: the number of failures before the first success.

>>> import ember
>>> from ember.distributions import Geometric
>>> d = Geometric(ember.tensor([0.3]))
>>> d.mean, d.log_prob(ember.tensor([2.0]))
(tensor([2.3333]), tensor([-1.9173]))
"""
from __future__ import annotations

import ember
from ember import Size
from ember.distributions import constraints
from ember.distributions._shared import BinaryProbabilities
from ember.distributions.distribution import Distribution
from ember.nn.functional import binary_cross_entropy_with_logits

__all__ = ["Geometric"]


class Geometric(BinaryProbabilities, Distribution):
    """Failures before the first success of trials that each succeed with ``probs``."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None):
        batch_shape = self._take_probs_or_logits(probs, logits)
        super().__init__(batch_shape, validate_args=validate_args)
        if self._validate_args and probs is not None and not bool((self.probs > 0).all()):
            raise ValueError(f"Expected parameter probs ({type(self.probs).__name__} of shape "
                             f"{tuple(self.probs.shape)}) of distribution {self!r} to be positive but found invalid "
                             f"values:\n{self.probs[self.probs <= 0]}")

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(Geometric, batch_shape, _instance, ("probs", "logits"))
        new._reset_param()
        return new

    @property
    def mean(self):
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        return ember.zeros_like(self.probs)

    @property
    def variance(self):
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        tiny = ember.finfo(self.probs.dtype).tiny
        with ember.no_grad():
            u = ember.rand(shape, dtype=self.probs.dtype).clamp(min=tiny)
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value, probs = ember.broadcast_tensors(value, self.probs)
        # a sure success (p = 1) has no failures: 0 * log(0) counts as 0
        failures = ember.where((probs == 1) & (value == 0), ember.zeros_like(probs), value * (-probs).log1p())
        return failures + self.probs.log()

    def entropy(self):
        return binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none") / self.probs
