"""``MixtureSameFamily(mixture_distribution, component_distribution)``: a mixture of one family's components.

The rightmost batch dim of ``component_distribution`` indexes the components; ``mixture_distribution``
(a Categorical) weights them.

>>> import ember
>>> from ember.distributions import Categorical, MixtureSameFamily, Normal
>>> mix = Categorical(probs=ember.tensor([0.5, 0.5]))
>>> d = MixtureSameFamily(mix, Normal(ember.tensor([-1.0, 1.0]), ember.tensor([1.0, 1.0])))
>>> d.mean, d.variance
(tensor(0.), tensor(2.))
"""
from __future__ import annotations

import ember
from ember import Size
from ember.distributions import constraints
from ember.distributions.categorical import Categorical
from ember.distributions.distribution import Distribution

__all__ = ["MixtureSameFamily"]


def _check_parts(mixture, component) -> None:
    if not isinstance(mixture, Categorical):
        raise ValueError(f"MixtureSameFamily: the mixture distribution must be a Categorical, got "
                         f"{type(mixture).__name__}")
    if not isinstance(component, Distribution):
        raise ValueError(f"MixtureSameFamily: the component distribution must be a Distribution, got "
                         f"{type(component).__name__}")
    mixture_batch, component_batch = mixture.batch_shape, component.batch_shape[:-1]
    for size1, size2 in zip(reversed(mixture_batch), reversed(component_batch)):
        if size1 != 1 and size2 != 1 and size1 != size2:
            raise ValueError(f"`mixture_distribution.batch_shape` ({mixture_batch}) is not compatible with "
                             f"`component_distribution.batch_shape`({component_batch})")
    k_mixture = mixture.logits.shape[-1]
    k_component = component.batch_shape[-1]
    if k_mixture != k_component:
        raise ValueError(f"`mixture_distribution component` ({k_mixture}) does not equal "
                         f"`component_distribution.batch_shape[-1]` ({k_component})")


class MixtureSameFamily(Distribution):
    """Draw a component index from ``mixture_distribution``, then a value from that component."""

    arg_constraints: dict = {}
    has_rsample = False

    def __init__(self, mixture_distribution: Categorical, component_distribution: Distribution,
                 validate_args=None):
        _check_parts(mixture_distribution, component_distribution)
        self._mixture_distribution = mixture_distribution
        self._component_distribution = component_distribution
        self._num_component = component_distribution.batch_shape[-1]
        self._event_ndims = len(component_distribution.event_shape)
        super().__init__(component_distribution.batch_shape[:-1], component_distribution.event_shape,
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        batch_shape = Size(batch_shape)
        new = self._get_checked_instance(MixtureSameFamily, _instance)
        new._component_distribution = self._component_distribution.expand(batch_shape + (self._num_component,))
        new._mixture_distribution = self._mixture_distribution.expand(batch_shape)
        new._num_component = self._num_component
        new._event_ndims = self._event_ndims
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property
    def support(self):
        return constraints.MixtureSameFamilyConstraint(self._component_distribution.support)

    @property
    def mixture_distribution(self):
        return self._mixture_distribution

    @property
    def component_distribution(self):
        return self._component_distribution

    def _weights(self):
        """The mixture probabilities, shaped to broadcast against the components' moments."""
        probs = self._mixture_distribution.probs
        return probs.reshape(probs.shape + (1,) * self._event_ndims)  # batch dims broadcast from the left

    @property
    def mean(self):
        return (self._weights() * self._component_distribution.mean).sum(-1 - self._event_ndims)

    @property
    def variance(self):
        # total variance: the mean of the variances plus the variance of the means
        weights, dim = self._weights(), -1 - self._event_ndims
        mean_of_variances = (weights * self._component_distribution.variance).sum(dim)
        centred = self._component_distribution.mean - self._pad(self.mean)
        return mean_of_variances + (weights * centred.pow(2)).sum(dim)

    def cdf(self, x):
        x = self._pad(x)
        return (self._component_distribution.cdf(x) * self._mixture_distribution.probs).sum(-1)

    def log_prob(self, x):
        if self._validate_args:
            self._validate_sample(x)
        log_prob_x = self._component_distribution.log_prob(self._pad(x))
        log_mix = ember.log_softmax(self._mixture_distribution.logits, dim=-1)
        return ember.logsumexp(log_prob_x + log_mix, dim=-1)

    def sample(self, sample_shape=Size()):
        with ember.no_grad():
            sample_len, batch_len = len(sample_shape), len(self.batch_shape)
            gather_dim = sample_len + batch_len
            indices = self._mixture_distribution.sample(sample_shape)
            draws = self._component_distribution.sample(sample_shape)
            index_shape = indices.shape + (1,) * (len(self.event_shape) + 1)
            index = indices.reshape(index_shape).expand(
                indices.shape + (1,) + self.event_shape)
            return draws.gather(gather_dim, index).squeeze(gather_dim)

    def _pad(self, x):
        return x.unsqueeze(-1 - self._event_ndims)

    def __repr__(self):
        return (f"MixtureSameFamily(\n  {self._mixture_distribution},\n  {self._component_distribution})")
