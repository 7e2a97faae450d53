"""``ember.special``: torch.special's functions, on the ops of ``_ops/special_functions.py`` and ``_ops/pointwise.py``.

Where torch's special function is another name of a top-level op (``special.erf`` of ``erf``), it runs the
same op and records the same node.

>>> import ember
>>> ember.special.ndtr(ember.tensor([0.0, 1.0]))
tensor([0.5000, 0.8413])
>>> ember.special.gammaln(ember.tensor([3.0]))
tensor([0.6931])
"""
from __future__ import annotations

from ember._ops import _special_math as _math, pointwise as _pointwise, special_functions as _special
from ember._ops import statistics as _statistics, unary as _unary
from ember._ops._support import require_tensor
from ember._tensor import Tensor
from ember.overrides import overridable

special_function = overridable("ember.special")
"""Decorator for a public function of ``ember.special`` (it dispatches through the protocol)."""

_out = _pointwise._out


@special_function
def expit(input, *, out=None) -> Tensor:
    """The logistic sigmoid, 1 / (1 + exp(-input)).

    >>> ember.special.expit(ember.tensor([0.0]))
    tensor([0.5000])
    """
    return _out("expit", _unary.Sigmoid.apply(require_tensor(input, "expit")), out, input)


@special_function
def logit(input, eps: float | None = None, *, out=None) -> Tensor:
    """log(p / (1 - p)), p clamped to [eps, 1 - eps] if eps is given.

    >>> ember.special.logit(ember.tensor([0.5]))
    tensor([0.])
    """
    return _out("logit", _pointwise.Logit.apply(input, eps), out, input)


@special_function
def erf(input, *, out=None) -> Tensor:
    """The error function.

    >>> ember.special.erf(ember.tensor([0.5]))
    tensor([0.5205])
    """
    return _out("erf", _special.Erf.apply(input), out, input)


@special_function
def erfc(input, *, out=None) -> Tensor:
    """1 - erf(input).

    >>> ember.special.erfc(ember.tensor([0.5]))
    tensor([0.4795])
    """
    return _out("erfc", _special.Erfc.apply(input), out, input)


@special_function
def erfcx(input, *, out=None) -> Tensor:
    """The scaled complementary error function exp(input^2) erfc(input).

    >>> ember.special.erfcx(ember.tensor([0.0, 30.0]))
    tensor([1.0000, 0.0188])
    """
    return _out("erfcx", _special.Erfcx.apply(input), out, input)


@special_function
def erfinv(input, *, out=None) -> Tensor:
    """The inverse of erf.

    >>> ember.special.erfinv(ember.tensor([0.5]))
    tensor([0.4769])
    """
    return _out("erfinv", _special.Erfinv.apply(input), out, input)


@special_function
def gammaln(input, *, out=None) -> Tensor:
    """log |gamma(input)| (torch's lgamma).

    >>> ember.special.gammaln(ember.tensor([0.5]))
    tensor([0.5724])
    """
    return _out("gammaln", _special.Lgamma.apply(require_tensor(input, "gammaln")), out, input)


@special_function
def digamma(input, *, out=None) -> Tensor:
    """The derivative of gammaln.

    >>> ember.special.digamma(ember.tensor([1.0]))
    tensor([-0.5772])
    """
    return _out("digamma", _special.Digamma.apply(input), out, input)


psi = digamma


@special_function
def polygamma(n: int, input, *, out=None) -> Tensor:
    """The n-th derivative of digamma.

    >>> ember.special.polygamma(2, ember.tensor([1.0]))
    tensor([-2.4041])
    """
    return _special.polygamma_as("special_polygamma", n, input, out)


@special_function
def multigammaln(input, p: int, *, out=None) -> Tensor:
    """The log of the multivariate gamma function of dimension ``p`` (inf where an lgamma term has a pole).

    >>> ember.special.multigammaln(ember.tensor([2.0]), 2)
    tensor([0.4516])
    """
    return _special.mvlgamma.__wrapped__(require_tensor(input, "multigammaln"), p, out=out)


@special_function
def gammainc(input, other, *, out=None) -> Tensor:
    """The regularized lower incomplete gamma function P(a, x) (torch's igamma); differentiable in x only.

    >>> ember.special.gammainc(ember.tensor([2.0]), ember.tensor([3.0]))
    tensor([0.8009])
    """
    return _special.incomplete_gamma("gammainc", _special.Igamma, input, other, out)


@special_function
def gammaincc(input, other, *, out=None) -> Tensor:
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x) (torch's igammac).

    >>> ember.special.gammaincc(ember.tensor([2.0]), ember.tensor([3.0]))
    tensor([0.1991])
    """
    return _special.incomplete_gamma("gammaincc", _special.Igammac, input, other, out)


@special_function
def zeta(input, other, *, out=None) -> Tensor:
    """The Hurwitz zeta function, the sum over k >= 0 of (other + k) ** -input; either may be a number.

    Differentiable in ``other`` only, as in torch.

    >>> ember.special.zeta(2.0, ember.tensor([1.0, 2.0]))
    tensor([1.6449, 0.6449])
    """
    return _out("zeta", _special.zeta(input, other), out, input, other)


@special_function
def xlogy(input, other, *, out=None) -> Tensor:
    """input * log(other), 0 where input is 0.

    >>> ember.special.xlogy(ember.tensor([0.0, 1.0]), 2.0)
    tensor([0.0000, 0.6931])
    """
    return _special.xlogy.__wrapped__(input, other, out=out)


@special_function
def xlog1py(input, other, *, out=None) -> Tensor:
    """input * log1p(other), 0 where input is 0 (unless other is nan); either may be a number.

    >>> ember.special.xlog1py(ember.tensor([0.0, 1.0]), ember.tensor([-1.0, 1.0]))
    tensor([0.0000, 0.6931])
    """
    result = _special.binary("xlog1py", input, other, _special.Xlog1py, _special.Xlog1pyScalarSelf,
                             _special.Xlog1pyScalarOther)
    return _out("xlog1py", result, out, input, other)


@special_function
def entr(input, *, out=None) -> Tensor:
    """The elementwise entropy -x log x: 0 at 0, -inf below.

    >>> ember.special.entr(ember.tensor([0.0, 0.5]))
    tensor([0.0000, 0.3466])
    """
    return _out("entr", _special.Entr.apply(input), out, input)


@special_function
def sinc(input, *, out=None) -> Tensor:
    """sin(pi x) / (pi x), 1 at 0.

    >>> ember.special.sinc(ember.tensor([1.5]))
    tensor([-0.2122])
    """
    return _out("sinc", _pointwise.Sinc.apply(input), out, input)


@special_function
def i0(input, *, out=None) -> Tensor:
    """The modified Bessel function of the first kind, order 0.

    >>> ember.special.i0(ember.tensor([2.0]))
    tensor([2.2796])
    """
    return _out("i0", _special.I0.apply(input), out, input)


@special_function
def i0e(input, *, out=None) -> Tensor:
    """exp(-|x|) i0(x), which stays finite for large x.

    >>> ember.special.i0e(ember.tensor([0.0, 1000.0]))
    tensor([1.0000, 0.0126])
    """
    return _out("i0e", _special.I0e.apply(input), out, input)


@special_function
def i1(input, *, out=None) -> Tensor:
    """The modified Bessel function of the first kind, order 1.

    >>> ember.special.i1(ember.tensor([1.0]))
    tensor([0.5652])
    """
    return _out("i1", _special.I1.apply(input), out, input)


@special_function
def i1e(input, *, out=None) -> Tensor:
    """exp(-|x|) i1(x).

    >>> ember.special.i1e(ember.tensor([1.0]))
    tensor([0.2079])
    """
    return _out("i1e", _special.I1e.apply(input), out, input)


@special_function
def ndtr(input, *, out=None) -> Tensor:
    """The standard normal distribution function, 0.5 erfc(-x / sqrt(2)) (precise in the left tail).

    One op: its node is ``SpecialNdtrBackward0`` where torch's, composed, is ``MulBackward1``.

    >>> ember.special.ndtr(ember.tensor([-1.0]))
    tensor([0.1587])
    """
    require_tensor(input, "ndtr")
    return _out("ndtr", _special.Ndtr.apply(input), out, input)


@special_function
def ndtri(input, *, out=None) -> Tensor:
    """The inverse of ndtr: the x with ndtr(x) = p; -inf at 0, inf at 1, nan outside.

    >>> ember.special.ndtri(ember.tensor([0.5, 0.975]))
    tensor([0.0000, 1.9600])
    """
    return _out("ndtri", _special.Ndtri.apply(input), out, input)


@special_function
def log_ndtr(input, *, out=None) -> Tensor:
    """log(ndtr(input)), finite far into the left tail.

    >>> ember.special.log_ndtr(ember.tensor([-40.0]))
    tensor([-804.6085])
    """
    return _out("log_ndtr", _special.LogNdtr.apply(input), out, input)


@special_function
def round(input, *, decimals: int = 0, out=None) -> Tensor:
    """Round half to even, to ``decimals`` places (recorded as torch's round with decimals, even for 0).

    >>> ember.special.round(ember.tensor([0.5, 1.5, 2.25]), decimals=1)
    tensor([0.5000, 1.5000, 2.2000])
    """
    places = _unary.decimal_places(decimals, "special_round")
    return _pointwise._out_of_its_dtype("round", _unary.RoundDecimals.apply(input, places), out, input)


@special_function
def expm1(input, *, out=None) -> Tensor:
    """exp(input) - 1.

    >>> ember.special.expm1(ember.tensor([0.0]))
    tensor([0.])
    """
    return _out("expm1", _pointwise.Expm1.apply(input), out, input)


@special_function
def exp2(input, *, out=None) -> Tensor:
    """2 ** input.

    >>> ember.special.exp2(ember.tensor([2.0]))
    tensor([4.])
    """
    return _out("exp2", _pointwise.Exp2.apply(input), out, input)


@special_function
def log1p(input, *, out=None) -> Tensor:
    """log(1 + input).

    >>> ember.special.log1p(ember.tensor([0.0]))
    tensor([0.])
    """
    return _out("log1p", _pointwise.Log1p.apply(input), out, input)


@special_function
def softmax(input, dim: int, *, dtype=None) -> Tensor:
    """``ember.softmax`` under its ``special`` name.

    >>> ember.special.softmax(ember.tensor([0., 0.]), 0)
    tensor([0.5000, 0.5000])
    """
    return _statistics.softmax.__wrapped__(input, dim, dtype)


@special_function
def log_softmax(input, dim: int, *, dtype=None) -> Tensor:
    """``ember.log_softmax`` under its ``special`` name.

    >>> ember.special.log_softmax(ember.tensor([0., 0.]), 0)
    tensor([-0.6931, -0.6931])
    """
    return _statistics.log_softmax.__wrapped__(input, dim, dtype)


@special_function
def logsumexp(input, dim, keepdim: bool = False, *, out=None) -> Tensor:
    """``ember.logsumexp`` under its ``special`` name.

    >>> ember.special.logsumexp(ember.tensor([0., 0.]), 0)
    tensor(0.6931)
    """
    return _statistics.logsumexp.__wrapped__(input, dim, keepdim, out=out)


@special_function
def chebyshev_polynomial_t(x, n, *, out=None) -> Tensor:
    """The Chebyshev polynomial of the first kind, T_n of degree ``n`` (0 for n < 0) at ``x``; either may be a number.

    >>> ember.special.chebyshev_polynomial_t(ember.tensor([0.5, 1.0]), 2)
    tensor([-0.5000,  1.0000])
    """
    return _special.orthogonal_polynomial("chebyshev_polynomial_t", "t", x, n, out)


@special_function
def chebyshev_polynomial_u(x, n, *, out=None) -> Tensor:
    """The Chebyshev polynomial of the second kind, U_n of degree ``n`` (0 for n < 0) at ``x``; either may be a number.

    >>> ember.special.chebyshev_polynomial_u(ember.tensor([0.5, 1.0]), 2)
    tensor([0., 3.])
    """
    return _special.orthogonal_polynomial("chebyshev_polynomial_u", "u", x, n, out)


@special_function
def chebyshev_polynomial_v(x, n, *, out=None) -> Tensor:
    """The Chebyshev polynomial of the third kind, V_n of degree ``n`` (0 for n < 0) at ``x``; either may be a number.

    >>> ember.special.chebyshev_polynomial_v(ember.tensor([0.5, 1.0]), 2)
    tensor([-1.,  1.])
    """
    return _special.orthogonal_polynomial("chebyshev_polynomial_v", "v", x, n, out)


@special_function
def chebyshev_polynomial_w(x, n, *, out=None) -> Tensor:
    """The Chebyshev polynomial of the fourth kind, W_n of degree ``n`` (0 for n < 0) at ``x``; either may be a number.

    >>> ember.special.chebyshev_polynomial_w(ember.tensor([0.5, 1.0]), 2)
    tensor([1., 5.])
    """
    return _special.orthogonal_polynomial("chebyshev_polynomial_w", "w", x, n, out)


@special_function
def hermite_polynomial_h(x, n, *, out=None) -> Tensor:
    """The (physicists') Hermite polynomial H_n of degree ``n`` (0 for n < 0) at ``x``; either may be a number.

    >>> ember.special.hermite_polynomial_h(ember.tensor([0.5, 1.0]), 2)
    tensor([-1.,  2.])
    """
    return _special.orthogonal_polynomial("hermite_polynomial_h", "h", x, n, out)


@special_function
def hermite_polynomial_he(x, n, *, out=None) -> Tensor:
    """The (probabilists') Hermite polynomial He_n of degree ``n`` (0 for n < 0) at ``x``; either may be a number.

    >>> ember.special.hermite_polynomial_he(ember.tensor([0.5, 1.0]), 2)
    tensor([-0.7500,  0.0000])
    """
    return _special.orthogonal_polynomial("hermite_polynomial_he", "he", x, n, out)


@special_function
def laguerre_polynomial_l(x, n, *, out=None) -> Tensor:
    """The Laguerre polynomial L_n of degree ``n`` (0 for n < 0) at ``x``; either may be a number.

    >>> ember.special.laguerre_polynomial_l(ember.tensor([0.5, 1.0]), 2)
    tensor([ 0.1250, -0.5000])
    """
    return _special.orthogonal_polynomial("laguerre_polynomial_l", "l", x, n, out)


@special_function
def legendre_polynomial_p(x, n, *, out=None) -> Tensor:
    """The Legendre polynomial P_n of degree ``n`` (0 for n < 0) at ``x``; either may be a number.

    >>> ember.special.legendre_polynomial_p(ember.tensor([0.5, 1.0]), 2)
    tensor([-0.1250,  1.0000])
    """
    return _special.orthogonal_polynomial("legendre_polynomial_p", "p", x, n, out)


@special_function
def shifted_chebyshev_polynomial_t(x, n, *, out=None) -> Tensor:
    """The Chebyshev polynomial chebyshev_polynomial_t(2 x - 1, n), shifted to [0, 1].

    >>> ember.special.shifted_chebyshev_polynomial_t(ember.tensor([0.75, 1.0]), 2)
    tensor([-0.5000,  1.0000])
    """
    return _special.orthogonal_polynomial("shifted_chebyshev_polynomial_t", "t", x, n, out, shifted=True)


@special_function
def shifted_chebyshev_polynomial_u(x, n, *, out=None) -> Tensor:
    """The Chebyshev polynomial chebyshev_polynomial_u(2 x - 1, n), shifted to [0, 1].

    >>> ember.special.shifted_chebyshev_polynomial_u(ember.tensor([0.75, 1.0]), 2)
    tensor([0., 3.])
    """
    return _special.orthogonal_polynomial("shifted_chebyshev_polynomial_u", "u", x, n, out, shifted=True)


@special_function
def shifted_chebyshev_polynomial_v(x, n, *, out=None) -> Tensor:
    """The Chebyshev polynomial chebyshev_polynomial_v(2 x - 1, n), shifted to [0, 1].

    >>> ember.special.shifted_chebyshev_polynomial_v(ember.tensor([0.75, 1.0]), 2)
    tensor([-1.,  1.])
    """
    return _special.orthogonal_polynomial("shifted_chebyshev_polynomial_v", "v", x, n, out, shifted=True)


@special_function
def shifted_chebyshev_polynomial_w(x, n, *, out=None) -> Tensor:
    """The Chebyshev polynomial chebyshev_polynomial_w(2 x - 1, n), shifted to [0, 1].

    >>> ember.special.shifted_chebyshev_polynomial_w(ember.tensor([0.75, 1.0]), 2)
    tensor([1., 5.])
    """
    return _special.orthogonal_polynomial("shifted_chebyshev_polynomial_w", "w", x, n, out, shifted=True)


@special_function
def modified_bessel_i0(input, *, out=None) -> Tensor:
    """I0, as ``i0`` gives it, without a gradient (as torch).

    >>> ember.special.modified_bessel_i0(ember.tensor([1.0]))
    tensor([1.2661])
    """
    return _special.without_gradient("modified_bessel_i0", _math.i0, input, out)


@special_function
def modified_bessel_i1(input, *, out=None) -> Tensor:
    """I1, as ``i1`` gives it, without a gradient (as torch).

    >>> ember.special.modified_bessel_i1(ember.tensor([1.0]))
    tensor([0.5652])
    """
    return _special.without_gradient("modified_bessel_i1", _math.i1, input, out)


@special_function
def bessel_j0(input, *, out=None) -> Tensor:
    """The Bessel function of the first kind J0, without a gradient (as torch); nan at +-inf, as torch gives.

    To 1e-15 absolute; torch's own values are up to 5e-7 off below 25.

    >>> ember.special.bessel_j0(ember.tensor([0.0, 1.0]))
    tensor([1.0000, 0.7652])
    """
    return _special.without_gradient("bessel_j0", lambda v: _math.bessel_j(0, v), input, out)


@special_function
def bessel_j1(input, *, out=None) -> Tensor:
    """The Bessel function of the first kind J1, without a gradient (as torch); nan at +-inf, as torch gives.

    >>> ember.special.bessel_j1(ember.tensor([0.0, 1.0]))
    tensor([0.0000, 0.4401])
    """
    return _special.without_gradient("bessel_j1", lambda v: _math.bessel_j(1, v), input, out)


@special_function
def bessel_y0(input, *, out=None) -> Tensor:
    """The Bessel function of the second kind Y0 (-inf at 0, nan below and at inf, as torch), without a gradient.

    To 2e-15 absolute; torch's own values are up to 1e-6 off below 25.

    >>> ember.special.bessel_y0(ember.tensor([1.0]))
    tensor([0.0883])
    """
    return _special.without_gradient("bessel_y0", lambda v: _math.bessel_y(0, v), input, out)


@special_function
def bessel_y1(input, *, out=None) -> Tensor:
    """The Bessel function of the second kind Y1 (-inf at 0, nan below and at inf, as torch), without a gradient.

    >>> ember.special.bessel_y1(ember.tensor([1.0]))
    tensor([-0.7812])
    """
    return _special.without_gradient("bessel_y1", lambda v: _math.bessel_y(1, v), input, out)


@special_function
def modified_bessel_k0(input, *, out=None) -> Tensor:
    """The modified Bessel function of the second kind K0 (inf at 0, nan below), without a gradient (as torch).

    >>> ember.special.modified_bessel_k0(ember.tensor([1.0]))
    tensor([0.4210])
    """
    return _special.without_gradient("modified_bessel_k0", lambda v: _math.bessel_k(0, v), input, out)


@special_function
def modified_bessel_k1(input, *, out=None) -> Tensor:
    """The modified Bessel function of the second kind K1, without a gradient (as torch).

    >>> ember.special.modified_bessel_k1(ember.tensor([1.0]))
    tensor([0.6019])
    """
    return _special.without_gradient("modified_bessel_k1", lambda v: _math.bessel_k(1, v), input, out)


@special_function
def scaled_modified_bessel_k0(x, *, out=None) -> Tensor:
    """exp(x) K0(x), which stays finite for large x, without a gradient (as torch).

    >>> ember.special.scaled_modified_bessel_k0(ember.tensor([1.0, 1000.0]))
    tensor([1.1445, 0.0396])
    """
    return _special.without_gradient("scaled_modified_bessel_k0", lambda v: _math.scaled_bessel_k(0, v), x, out, "x")


@special_function
def scaled_modified_bessel_k1(x, *, out=None) -> Tensor:
    """exp(x) K1(x), without a gradient (as torch).

    >>> ember.special.scaled_modified_bessel_k1(ember.tensor([1.0]))
    tensor([1.6362])
    """
    return _special.without_gradient("scaled_modified_bessel_k1", lambda v: _math.scaled_bessel_k(1, v), x, out, "x")


@special_function
def spherical_bessel_j0(x, *, out=None) -> Tensor:
    """The spherical Bessel function j0(x) = sin(x) / x (1 at 0), without a gradient (as torch).

    >>> ember.special.spherical_bessel_j0(ember.tensor([0.0, 3.0]))
    tensor([1.0000, 0.0470])
    """
    return _special.without_gradient("spherical_bessel_j0", _math.spherical_bessel_j0, x, out, "x")


# ---- the Airy function
from ember._ops import airy as _airy  # noqa: E402


@special_function
def airy_ai(x, *, out=None) -> Tensor:
    """The Airy function Ai(x), the solution of y'' = x y that decays as x grows, without a gradient (as torch).

    >>> ember.special.airy_ai(ember.tensor([0.0, 1.0, -2.0]))
    tensor([0.3550, 0.1353, 0.2274])
    """
    return _special.without_gradient("airy_ai", _airy.airy_ai, x, out, "x")
