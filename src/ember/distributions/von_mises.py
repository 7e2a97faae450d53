"""``VonMises(loc, concentration)``: the circular normal distribution of an angle.

Angles are read modulo 2π: ``loc`` and scored values may be any real number; draws lie in ``[-π, π)``.

>>> import ember
>>> from ember.distributions import VonMises
>>> d = VonMises(ember.tensor([0.0]), ember.tensor([2.0]))
>>> d.log_prob(ember.tensor([0.5]))
tensor([-0.9067])
>>> d.variance
tensor([0.3022])
"""
from __future__ import annotations

import math

import ember
from ember import Size
from ember.distributions import constraints
from ember.distributions._shared import LocationFamily
from ember.distributions.distribution import Distribution
from ember.distributions.utils import broadcast_all

__all__ = ["VonMises"]


def _log_bessel_i0(x):
    """``log I₀(x)`` from the exponentially scaled Bessel function, so it stays finite for large ``x``."""
    return ember.special.i0e(x).log() + x


def _bessel_ratio(x):
    """``I₁(x) / I₀(x)``: the mean resultant length ``E[cos(θ - loc)]``."""
    return ember.special.i1e(x) / ember.special.i0e(x)


def _proposal_r(kappa):
    """The parameter ``r`` of Best and Fisher's wrapped-Cauchy envelope (a Taylor form for tiny ``kappa``)."""
    tau = 1 + (1 + 4 * kappa.pow(2)).sqrt()
    rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
    return ember.where(kappa < 1e-5, 1 / kappa + kappa, (1 + rho.pow(2)) / (2 * rho))


def _rejection_sample(loc, kappa, shape):
    """Best and Fisher's (1979) rejection sampler, in float64 (single precision can loop for tiny ``kappa``)."""
    r = _proposal_r(kappa).expand(shape)
    kappa = kappa.expand(shape)
    x = ember.zeros(shape, dtype=ember.float64)
    done = ember.zeros(shape, dtype=ember.bool)
    while not bool(done.all()):
        u1, u2, u3 = ember.rand((3,) + tuple(shape), dtype=ember.float64).unbind()
        z = ember.cos(math.pi * u1)
        f = (1 + r * z) / (r + z)
        c = kappa * (r - f)
        accept = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
        x = ember.where(accept & ~done, (u3 - 0.5).sign() * f.clamp(-1.0, 1.0).acos(), x)
        done = done | accept
    return (x + math.pi + loc) % (2 * math.pi) - math.pi


class VonMises(LocationFamily, Distribution):
    """Density ``exp(κ cos(x - loc)) / (2π I₀(κ))`` on the circle; ``mean`` and ``variance`` are circular."""

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, Size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(VonMises, batch_shape, _instance, ("loc", "concentration"))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        kappa = self.concentration
        return kappa * ember.cos(value - self.loc) - math.log(2 * math.pi) - _log_bessel_i0(kappa)

    @property
    def variance(self):
        """The circular variance ``1 - I₁(κ)/I₀(κ)``."""
        return 1 - _bessel_ratio(self.concentration)

    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        with ember.no_grad():
            loc, kappa = self.loc.to(ember.float64), self.concentration.to(ember.float64)
            return _rejection_sample(loc, kappa, shape).to(self.loc.dtype)
