"""``Categorical(probs=None, logits=None)``: one of ``K`` categories, with weights along the last dim.

>>> import ember
>>> from ember.distributions import Categorical
>>> d = Categorical(probs=ember.tensor([0.5, 0.25, 0.25]))
>>> d.log_prob(ember.tensor(1)).exp(), d.entropy()
(tensor(0.2500), tensor(1.0397))
"""
from __future__ import annotations

import math

import ember
from ember import Size
from ember.distributions import constraints
from ember.distributions._shared import one_of_probs_logits
from ember.distributions.distribution import Distribution
from ember.distributions.utils import lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Categorical"]


def draw_categories(probs: ember.Tensor, sample_shape: Size) -> ember.Tensor:
    """Category indices of shape ``sample_shape + probs.shape[:-1]``: ``multinomial`` with replacement, the draws
    of each distribution in a row, as torch draws them (so a seed gives torch's samples)."""
    count = math.prod(sample_shape)
    shape = tuple(sample_shape) + tuple(probs.shape[:-1])
    if count == 0 or math.prod(shape) == 0:
        return ember.zeros(shape, dtype=ember.int64)
    rows = probs.detach().reshape(-1, probs.shape[-1])
    return ember.multinomial(rows, count, True).T.reshape(shape)


class Categorical(Distribution):
    """Draws an index in ``[0, K)`` with probability proportional to ``probs`` (or ``exp(logits)``)."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(constraints.real, 1)}
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        name, given = one_of_probs_logits("Categorical", probs, logits)
        if given.dim() < 1:
            raise ValueError(f"`{name}` parameter must be at least one-dimensional.")
        if name == "probs":
            self.probs = given / given.sum(-1, keepdim=True)
        else:
            self.logits = given - given.logsumexp(dim=-1, keepdim=True)
        self._param = self.probs if name == "probs" else self.logits
        self._num_events = self._param.size()[-1]
        batch_shape = self._param.size()[:-1] if self._param.dim() > 1 else Size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(Categorical, batch_shape, _instance, ("probs", "logits"))
        new._param = new.__dict__.get("probs", new.__dict__.get("logits"))
        new._num_events = self._num_events
        return new

    def _new(self, *args, **kwargs):
        return self._param.new(*args, **kwargs)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits)

    @property
    def param_shape(self):
        return self._param.size()

    @property
    def mean(self):
        return ember.full(self._extended_shape(), float("nan"), dtype=self.probs.dtype)

    @property
    def mode(self):
        return self.probs.argmax(dim=-1)

    @property
    def variance(self):
        return ember.full(self._extended_shape(), float("nan"), dtype=self.probs.dtype)

    def sample(self, sample_shape=Size()):
        if not isinstance(sample_shape, Size):
            sample_shape = Size(sample_shape)
        return draw_categories(self.probs, sample_shape)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        log_pmf = self.logits
        if value.shape[:-1] != log_pmf.shape[:-1]:  # a batch of values against one distribution, or the reverse
            value, log_pmf = ember.broadcast_tensors(value, log_pmf)
            value = value[..., :1]
        return log_pmf.gather(-1, value).squeeze(-1)

    def entropy(self):
        smallest = ember.finfo(self.logits.dtype).min
        logits = ember.clamp(self.logits, min=smallest)  # -inf logits (zero probabilities) add 0, not nan
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand=True):
        values = ember.arange(self._num_events, dtype=ember.int64)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + self._batch_shape) if expand else values
