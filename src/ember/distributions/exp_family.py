"""``ExponentialFamily``: the base of distributions with density ``exp(<t(x), θ> - F(θ) + k(x))``.

Its ``entropy`` is the Bregman divergence form, computed with autograd from the log normaliser ``F``.

>>> import ember
>>> from ember.distributions import Normal, ExponentialFamily
>>> isinstance(Normal(0.0, 1.0), ExponentialFamily)
True
"""
from __future__ import annotations

import ember
from ember.distributions.distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """A distribution of the exponential family; subclasses give ``_natural_params`` and ``_log_normalizer``."""

    @property
    def _natural_params(self) -> tuple:
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError

    def entropy(self):
        # H = F(θ) - <θ, ∇F(θ)> - E[k(x)], with ∇F taken by autograd
        result = -self._mean_carrier_measure
        params = [p.detach().requires_grad_() for p in self._natural_params]
        log_normalizer = self._log_normalizer(*params)
        gradients = ember.autograd.grad(log_normalizer.sum(), params, create_graph=True)
        result = result + log_normalizer
        for param, gradient in zip(params, gradients):
            result = result - (param * gradient).reshape(self._batch_shape + (-1,)).sum(-1)
        return result
