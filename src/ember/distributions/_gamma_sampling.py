"""Reparameterised draws from the standard Gamma distribution, with implicit gradients.

A Gamma(α, 1) draw ``x`` is ``F⁻¹(u; α)`` for a uniform ``u`` that does not depend on ``α``, so
``dx/dα = -(∂F/∂α)(x; α) / f(x; α)`` with ``F`` the CDF (the regularized incomplete gamma function)
and ``f`` the density. ``∂F/∂α`` is taken by a central difference of ``F`` in float64. Beta and Dirichlet
draws are normalised Gamma draws, so their gradients follow by the chain rule.

>>> import ember
>>> alpha = ember.tensor([2.0, 5.0], dtype=ember.float64, requires_grad=True)
>>> _ = ember.manual_seed(0)
>>> standard_gamma(alpha).sum().backward()
>>> bool((alpha.grad > 0).all())
True
"""
from __future__ import annotations

import numpy as np

import ember
from ember._ops._special_math import gammainc, lgamma
from ember._ops._support import wrap
from ember._random import generator
from ember.autograd.function import Function

_RELATIVE_STEP = 1e-5  # of α, for the central difference of the CDF: error about step² from the curvature


def implicit_gamma_gradient(alpha: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``dx/dα`` for a Gamma(α, 1) draw ``x`` that moves with ``α`` along a fixed quantile."""
    a, x = np.broadcast_arrays(alpha.astype(np.float64), x.astype(np.float64))
    step = _RELATIVE_STEP * a
    with np.errstate(all="ignore"):
        dcdf = (gammainc(a + step, x) - gammainc(a - step, x)) / (2 * step)
        log_density = (a - 1) * np.log(x) - x - lgamma(a)
        gradient = -dcdf * np.exp(-log_density)
    return np.nan_to_num(gradient, nan=0.0, posinf=0.0, neginf=0.0)  # where the density underflows: no signal


class StandardGamma(Function):
    """A Gamma(α, 1) draw for each element of ``α``, differentiable with respect to ``α``."""

    backward_name = "StandardGammaBackward0"

    @staticmethod
    def forward(ctx, alpha):
        data = alpha._data
        draws = generator(None).standard_gamma(data.astype(np.float64))
        tiny = np.finfo(data.dtype).tiny
        draws = np.maximum(draws, tiny).astype(data.dtype)  # a draw that underflows to 0 would have no log
        ctx.alpha, ctx.draws = data, draws
        return wrap(draws)

    @staticmethod
    def backward(ctx, grad):
        slope = implicit_gamma_gradient(ctx.alpha, ctx.draws).astype(ctx.alpha.dtype)
        return grad * wrap(slope)


def standard_gamma(alpha: ember.Tensor) -> ember.Tensor:
    """Gamma(α, 1) draws of ``alpha``'s shape, reparameterised (gradients flow to ``alpha``)."""
    return StandardGamma.apply(alpha)
