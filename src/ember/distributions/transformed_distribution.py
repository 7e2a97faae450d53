"""``TransformedDistribution(base_distribution, transforms)``: the law of ``f(x)`` for ``x`` from the base.

Its density is the base's at ``f⁻¹(y)``, less each transform's ``log |det J|``.

>>> import ember
>>> from ember.distributions import Normal, TransformedDistribution
>>> from ember.distributions.transforms import ExpTransform
>>> log_normal = TransformedDistribution(Normal(0.0, 1.0), [ExpTransform()])
>>> log_normal.log_prob(ember.tensor(1.0))
tensor(-0.9189)
"""
from __future__ import annotations

import ember
from ember import Size
from ember.distributions import constraints
from ember.distributions.distribution import Distribution
from ember.distributions.independent import Independent
from ember.distributions.transforms import ComposeTransform, Transform
from ember.distributions.utils import _sum_rightmost

__all__ = ["TransformedDistribution"]


def _as_transform_list(transforms) -> list:
    if isinstance(transforms, Transform):
        return [transforms]
    if isinstance(transforms, list) and all(isinstance(t, Transform) for t in transforms):
        return transforms
    raise ValueError(f"transforms must be a Transform or a list of Transforms, but was {transforms}")


class TransformedDistribution(Distribution):
    """The distribution of ``transforms[-1](... transforms[0](x))`` for ``x ~ base_distribution``."""

    arg_constraints: dict = {}

    def __init__(self, base_distribution: Distribution, transforms, validate_args=None):
        self.transforms = _as_transform_list(transforms)
        base_shape = base_distribution.batch_shape + base_distribution.event_shape
        base_event_dim = len(base_distribution.event_shape)
        transform = ComposeTransform(self.transforms)
        if len(base_shape) < transform.domain.event_dim:
            raise ValueError(f"base_distribution needs to have shape with size at least "
                             f"{transform.domain.event_dim}, but got {base_shape}.")
        forward_shape = transform.forward_shape(base_shape)
        expanded_base_shape = transform.inverse_shape(forward_shape)
        if base_shape != expanded_base_shape:
            base_batch = expanded_base_shape[:len(expanded_base_shape) - base_event_dim]
            base_distribution = base_distribution.expand(base_batch)
        extra_event_dims = transform.domain.event_dim - base_event_dim
        if extra_event_dims > 0:
            base_distribution = Independent(base_distribution, extra_event_dims)
        self.base_dist = base_distribution
        event_dim = transform.codomain.event_dim + max(base_event_dim - transform.domain.event_dim, 0)
        cut = len(forward_shape) - event_dim
        super().__init__(forward_shape[:cut], forward_shape[cut:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(TransformedDistribution, _instance)
        batch_shape = Size(batch_shape)
        shape = batch_shape + self.event_shape
        for transform in reversed(self.transforms):
            shape = transform.inverse_shape(shape)
        base_batch = shape[:len(shape) - len(self.base_dist.event_shape)]
        new.base_dist = self.base_dist.expand(base_batch)
        new.transforms = self.transforms
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=False)
    def support(self):
        if not self.transforms:
            return self.base_dist.support
        support = self.transforms[-1].codomain
        extra = len(self.event_shape) - support.event_dim
        return constraints.independent(support, extra) if extra > 0 else support

    @property
    def has_rsample(self):
        return self.base_dist.has_rsample

    def sample(self, sample_shape=Size()):
        with ember.no_grad():
            x = self.base_dist.sample(sample_shape)
            for transform in self.transforms:
                x = transform(x)
            return x

    def rsample(self, sample_shape=Size()):
        x = self.base_dist.rsample(sample_shape)
        for transform in self.transforms:
            x = transform(x)
        return x

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        event_dim = len(self.event_shape)
        log_prob, y = 0.0, value
        for transform in reversed(self.transforms):
            x = transform.inv(y)
            event_dim += transform.domain.event_dim - transform.codomain.event_dim
            jacobian = transform.log_abs_det_jacobian(x, y)
            log_prob = log_prob - _sum_rightmost(jacobian, event_dim - transform.domain.event_dim)
            y = x
        return log_prob + _sum_rightmost(self.base_dist.log_prob(y), event_dim - len(self.base_dist.event_shape))

    def _monotone_sign(self):
        sign = 1
        for transform in self.transforms:
            sign = sign * transform.sign
        if isinstance(sign, int) and sign == 1:
            return 1
        return sign

    def cdf(self, value):
        for transform in self.transforms[::-1]:
            value = transform.inv(value)
        if self._validate_args:
            self.base_dist._validate_sample(value)
        value = self.base_dist.cdf(value)
        sign = self._monotone_sign()
        return value if isinstance(sign, int) and sign == 1 else sign * (value - 0.5) + 0.5

    def icdf(self, value):
        sign = self._monotone_sign()
        if not (isinstance(sign, int) and sign == 1):
            value = sign * (value - 0.5) + 0.5
        value = self.base_dist.icdf(value)
        for transform in self.transforms:
            value = transform(value)
        return value
