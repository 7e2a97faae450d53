"""Reparameterised draws from the standard Gamma distribution, with implicit gradients.

A Gamma(α, 1) draw ``x`` is ``F⁻¹(u; α)`` for a uniform ``u`` that does not depend on ``α``, so
``dx/dα = -(∂F/∂α)(x; α) / f(x; α)`` with ``F`` the CDF (the regularized incomplete gamma function)
and ``f`` the density; ``∂F/∂α`` comes from differentiating ``F``'s power series term by term, in float64.
Beta and Dirichlet draws are normalised Gamma draws, so their gradients follow by the chain rule.

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
from ember import _dtype, _random, _stream_rejection
from ember._ops._special_math import digamma
from ember._ops._support import wrap
from ember.autograd.function import Function

_MAX_TERMS = 100000  # the series needs about x - α + a few √x terms: far fewer for any likely draw


def implicit_gamma_gradient(alpha: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``dx/dα`` for a Gamma(α, 1) draw ``x`` that moves with ``α`` along a fixed quantile.

    With ``P(α, x) = x^α e^-x / Γ(α+1) · S`` and ``S = Σₙ tₙ``, ``tₙ = xⁿ / ((α+1)…(α+n))``, both ``∂P/∂α`` and
    the density carry the factor ``x^α e^-x / Γ(α)``, which cancels: ``dx/dα = -(x/α)(S (log x - ψ(α+1)) + ∂S/∂α)``
    with ``∂S/∂α = -Σₙ tₙ Σₖ≤ₙ 1/(α+k)``. So nothing underflows, even far in the tails.
    """
    a, x = (np.array(v, np.float64) for v in np.broadcast_arrays(alpha, x))
    term, total, harmonic, slope = np.ones_like(x), np.ones_like(x), np.zeros_like(x), np.zeros_like(x)
    with np.errstate(all="ignore"):
        for n in range(1, _MAX_TERMS):
            step = 1.0 / (a + n)
            term *= x * step
            harmonic += step
            total += term
            slope -= term * harmonic
            if not ((term > 1e-17 * total) | (term * harmonic > 1e-17 * np.abs(slope))).any():
                break
        gradient = -(x / a) * (total * (np.log(x) - digamma(a + 1)) + slope)
    return np.nan_to_num(gradient, nan=0.0, posinf=0.0, neginf=0.0)


class StandardGamma(Function):
    """A Gamma(α, 1) draw for each element of ``α``, differentiable with respect to ``α``."""

    backward_name = "StandardGammaBackward0"

    @staticmethod
    def forward(ctx, alpha):
        data = alpha._data
        draws = _stream_rejection.gamma(_random.chosen(None), data.astype(np.float64))  # (torch's draws)
        tiny = _dtype.float_info(data.dtype).tiny
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
