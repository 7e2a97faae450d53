"""ember.special against mpmath at high precision, on grids that reach the hard regimes of each function (large
parameters, arguments near a transition, extreme magnitudes), in float64 and float32. Each tolerance is no
looser than what torch achieves on the same points."""
from __future__ import annotations

import math
import time

import mpmath
import numpy as np
import pytest
import torch

import ember


def _relative_error(values: np.ndarray, exact: np.ndarray) -> np.ndarray:
    """|values - exact| / |exact|, 0 where both are 0 or both nan, inf where only one is nan."""
    values, exact = np.asarray(values, np.float64), np.asarray(exact, np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        error = np.abs(values - exact) / np.abs(exact)
    error[(values == exact) | (np.isnan(values) & np.isnan(exact))] = 0.0
    error[np.isnan(values) != np.isnan(exact)] = np.inf
    return error


# ----------------------------------------------------------------- the regularized incomplete gamma functions


def _exact_gammainc(a: float, x: float, upper: bool) -> float:
    """P(a, x) or Q(a, x) at 60 digits: P by x^a e^-x / gamma(a + 1) 1F1(1; a + 1; x) (mpmath's own gammainc
    gives up on its series for a in the millions), Q by mpmath where P is close to 1, so that 1 - P does not
    cancel."""
    with mpmath.workdps(60):
        a, x = mpmath.mpf(a), mpmath.mpf(x)
        if x > a:
            q = mpmath.gammainc(a, x, mpmath.inf, regularized=True)
            return float(q if upper else 1 - q)
        p = mpmath.exp(a * mpmath.log(x) - x - mpmath.loggamma(a + 1)) * mpmath.hyp1f1(1, a + 1, x, maxterms=10**8)
        if upper and p > 0.5:
            return float(mpmath.gammainc(a, x, mpmath.inf, regularized=True))
        return float(1 - p if upper else p)


def _around(a: float) -> list[float]:
    """x at a few standard deviations (sqrt(a)) either side of a, and 30% off it (the edge of Temme's band)."""
    spread = math.sqrt(a)
    return [a + k * spread for k in (-5, -2, -1, -0.3, 0, 0.3, 1, 2, 5) if a + k * spread > 0] + [0.69 * a, 1.31 * a]


_LARGE_SHAPES = [20.5, 50.0, 150.0, 201.0, 1e3, 1e5]
_NEAR_A = [(a, x) for a in _LARGE_SHAPES for x in _around(a)] + [(1e8, 1e8), (1e8, 1e8 - 1e4), (1e8, 1e8 + 3e4)]


@pytest.mark.parametrize("name, upper", [("igamma", False), ("igammac", True)])
def test_incomplete_gamma_large_shape_near_x(name, upper):
    # The series and continued fraction need some sqrt(a) terms here and ran out of them (P(1e8, 1e8) was
    # 0.477 for 0.50000001); Temme's uniform expansion takes this band. torch (Cephes) is off by 1e-11 at
    # a = 1e5 and 1e-9 next to a = 20: ember stays within 1e-14.
    a, x = np.array(_NEAR_A).T
    exact = np.array([_exact_gammainc(ai, xi, upper) for ai, xi in _NEAR_A])
    values = getattr(ember, name)(ember.tensor(a), ember.tensor(x)).numpy()
    assert _relative_error(values, exact).max() < 1e-14


@pytest.mark.parametrize("name, upper", [("igamma", False), ("igammac", True)])
def test_incomplete_gamma_large_shape_far_from_x(name, upper):
    # x^a e^-x / gamma(a) as exp(a log x - x - lgamma(a)) lost the last four digits (1e-11 at a = 1e4) and all of
    # them at x = 1e-10 beside a = 20: the exponent's terms are far larger than the exponent.
    points = [(a, x) for a in (10.0, 19.5, 20.5, 50.0, 150.0, 1e3, 1e4, 1e5)
              for x in (1e-10, 1e-3, 0.1 * a, 0.5 * a, 1.5 * a, 2 * a, 10 * a)]
    a, x = np.array(points).T
    exact = np.array([_exact_gammainc(ai, xi, upper) for ai, xi in points])
    values = getattr(ember, name)(ember.tensor(a), ember.tensor(x)).numpy()
    error = _relative_error(values, exact)[exact > 1e-300]
    torch_error = _relative_error(getattr(torch, name)(torch.tensor(a), torch.tensor(x)).numpy(), exact)
    assert error.max() < 2e-13
    assert error.max() <= max(torch_error[exact > 1e-300].max(), 1e-13)


@pytest.mark.parametrize("name, upper", [("igamma", False), ("igammac", True)])
def test_incomplete_gamma_float32_large_shape(name, upper):
    # float32 data is computed in double and rounded once: correctly rounded here, where torch's float32
    # kernel is off in the fourth digit (a = 1e8).
    points = [(a, x) for a in (30.0, 1e3, 1e6) for x in _around(a)[1:-3]] + [(1e8, 1e8), (1e8, 1e8 + 1e4)]
    a, x = (np.array(v, np.float32) for v in zip(*points))
    exact = np.array([_exact_gammainc(float(ai), float(xi), upper) for ai, xi in zip(a, x)])
    values = getattr(ember, name)(ember.tensor(a), ember.tensor(x)).numpy()
    assert values.dtype == np.float32
    np.testing.assert_array_equal(values, exact.astype(np.float32))


@pytest.mark.parametrize("a, x", [(50.0, 45.0), (50.0, 60.0), (300.0, 310.0), (1e4, 9950.0)])
def test_incomplete_gamma_gradient_in_x_large_shape(a, x):
    shape = ember.tensor([a], dtype=ember.float64)
    point = ember.tensor([x], dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(lambda v: ember.special.gammainc(shape, v), (point,))
    assert ember.autograd.gradcheck(lambda v: ember.special.gammaincc(shape, v), (point,))
    assert ember.autograd.gradgradcheck(lambda v: ember.igamma(shape, v), (point,))


# ----------------------------------------------------------------- lgamma


def _exact_lgamma(x: float) -> float:
    with mpmath.workdps(40):
        return float(mpmath.log(abs(mpmath.gamma(mpmath.mpf(x)))))


def test_lgamma_between_its_zeros_and_below_ten():
    # Stirling's series from x + n >= 10 less log(x (x + 1) ...) cancelled to 2.8e-14 relative at x = 1.6 (torch:
    # 2e-16), and the reflection formula at x = -2.5 to 2.2e-14 (log(pi) against lgamma(3.5)).
    x = np.concatenate([np.linspace(-9.995, 9.995, 1000), [1.5983585559263973, 2.3173696645524693, -2.5,
                                                            -3.9702608901851066, 0.7129945433354170, 1e-300, 0.4999]])
    exact = np.array([_exact_lgamma(v) for v in x])
    values = ember.lgamma(ember.tensor(x)).numpy()
    eps = np.finfo(np.float64).eps
    assert (np.abs(values - exact) <= 2 * eps * np.maximum(np.abs(exact), 1)).all()
    positive = x > 0  # (next to the zeros below -2, log|gamma| is the difference of two terms near 0.1 to 1)
    assert _relative_error(values[positive], exact[positive]).max() <= 4 * eps


# ----------------------------------------------------------------- the normal distribution's tails

_NORMAL_TAIL = [1.0, 1.5, 3.0, 7.3022033648965712, 7.9, 10.0, 12.582163030794185, 19.80552959892389, 25.0, 30.0,
                35.0, 37.5]


def _exact_upper_normal(x: float) -> mpmath.mpf:
    return mpmath.ncdf(-mpmath.mpf(x))


@pytest.mark.parametrize("name", ["ndtr", "log_ndtr"])
def test_normal_distribution_in_its_far_tails(name):
    # erfc(x / sqrt(2)) magnifies the rounding of x / sqrt(2) by x^2: log_ndtr(35) was 1.3e-13 off (torch 4.5e-14)
    # and float64 ndtr(-35) too (torch gives 0 from -27 on). exp(-x^2/2) with x^2 split exactly keeps 2 ulps.
    x = np.array(_NORMAL_TAIL)
    with mpmath.workdps(50):
        if name == "ndtr":
            x, exact = -x, np.array([float(_exact_upper_normal(v)) for v in x])
        else:
            exact = np.array([float(mpmath.log1p(-_exact_upper_normal(v))) for v in x])
    values = getattr(ember.special, name)(ember.tensor(x)).numpy()
    assert _relative_error(values, exact).max() <= 3 * np.finfo(np.float64).eps


# ----------------------------------------------------------------- Bessel functions at the ends of the doubles


@pytest.mark.parametrize("name, order", [("i0", 0), ("i1", 1), ("modified_bessel_i0", 0), ("modified_bessel_i1", 1)])
def test_modified_bessel_i_finite_where_exp_overflows(name, order):
    # exp(-|x|) I(x) times exp(|x|) overflowed from 709.8 on, where I0 and I1 are finite up to 713.98 (torch: inf).
    x = np.array([700.0, 709.9, 710.0, 713.0, -713.5, 713.98])
    with mpmath.workdps(40):
        exact = np.array([float(mpmath.besseli(order, v)) for v in x])
    values = getattr(ember.special, name)(ember.tensor(x)).numpy()
    assert _relative_error(values, exact).max() <= 4 * np.finfo(np.float64).eps
    assert np.isinf(getattr(ember.special, name)(ember.tensor([714.0, 1e4], dtype=ember.float64)).numpy()).all()


@pytest.mark.parametrize("name, exact", [("bessel_j0", lambda v: mpmath.besselj(0, v)),
                                         ("bessel_j1", lambda v: mpmath.besselj(1, v)),
                                         ("bessel_y0", lambda v: mpmath.bessely(0, v)),
                                         ("bessel_y1", lambda v: mpmath.bessely(1, v))])
def test_bessel_first_and_second_kind_near_the_largest_double(name, exact):
    # sqrt(2 / (pi x)) overflowed pi x (or went subnormal) near the top of the doubles: 0 for 9e-156 (torch is
    # off by a factor of 4 from 1e20 on).
    x = np.array([1e20, 1e200, 1e300, 5e307, 1.7e308])
    with mpmath.workdps(40):
        reference = np.array([float(exact(mpmath.mpf(v))) for v in x])
    values = getattr(ember.special, name)(ember.tensor(x)).numpy()
    assert _relative_error(values, reference).max() <= 1e-14


def _bessel_y_points() -> np.ndarray:
    """(0, 25]: subnormals, log-spaced points from 1e-300, uniform points, and points at and next to the first zeros
    of Y0 and Y1 (where only an absolute error is meaningful)."""
    near_zeros = []
    with mpmath.workdps(30):
        for order in (0, 1):
            zeros = [float(mpmath.besselyzero(order, k)) for k in range(1, 9)]
            near_zeros += [z * (1 + d) for z in zeros if z <= 25 for d in (0.0, 1e-12, -1e-9, 1e-6, -1e-3)]
    return np.concatenate([[5e-324, 1e-320, 1e-310, 2.2e-308], np.geomspace(1e-300, 25.0, 200),
                           np.linspace(0.0, 25.0, 201)[1:], near_zeros])


@pytest.mark.parametrize("name, order", [("bessel_y0", 0), ("bessel_y1", 1)])
def test_bessel_second_kind_up_to_25_by_backward_recurrence(name, order):
    # Neumann's series now takes J_0 ... J_61 from Miller's backward recurrence rather than a 128-point trapezoidal
    # rule, which left 6.75 (Y0) and 3.75 (Y1) units of eps max(1, |Y|) on these points (now 1.7 and 2.1).
    x = _bessel_y_points()
    with mpmath.workdps(40):
        exact = np.array([float(mpmath.bessely(order, mpmath.mpf(v))) for v in x])  # -inf for Y1 at 5e-324
    values = getattr(ember.special, name)(ember.tensor(x)).numpy()
    with np.errstate(invalid="ignore"):
        error = np.abs(values - exact) / np.maximum(1.0, np.abs(exact))
    error[values == exact] = 0.0
    assert error.max() <= 3 * np.finfo(np.float64).eps


@pytest.mark.parametrize("name", ["bessel_y0", "bessel_y1"])
def test_bessel_second_kind_on_a_large_input_is_fast(name):
    # J_0 ... J_61 by the trapezoidal rule took 8,000 cosines per element: 1.6 s or more on 128 x 128 points.
    x = ember.tensor(np.random.default_rng(0).uniform(0.0, 25.0, (128, 128)))
    start = time.process_time()
    getattr(ember.special, name)(x)
    assert time.process_time() - start < 0.5


@pytest.mark.parametrize("name, order, scaled", [("modified_bessel_k0", 0, False), ("modified_bessel_k1", 1, False),
                                                 ("scaled_modified_bessel_k0", 0, True),
                                                 ("scaled_modified_bessel_k1", 1, True)])
def test_modified_bessel_k_at_the_smallest_subnormal(name, order, scaled):
    # log(x / 2) rounded x / 2 to 0: K0(5e-324) came out inf for 744.56, K1 nan for inf (torch: the same).
    x = np.array([5e-324, 1e-320, 1e-310, 1e-300])
    with mpmath.workdps(40):
        exact = [mpmath.besselk(order, mpmath.mpf(v)) * (mpmath.exp(v) if scaled else 1) for v in x]
        exact = np.array([float(v) if v < 1e308 else np.inf for v in exact])
    values = getattr(ember.special, name)(ember.tensor(x)).numpy()
    assert _relative_error(values, exact).max() <= 2 * np.finfo(np.float64).eps


# ----------------------------------------------------------------- erfc and erfcx


@pytest.mark.parametrize("name", ["erfc", "erfcx"])
def test_erfc_continued_fraction_converged_from_three_to_four(name):
    # 25 terms of Laplace's continued fraction left 2.6e-15 at x = 3 (torch: 3.9e-16); 32 reach rounding.
    x = np.linspace(3.0, 4.0, 201)
    with mpmath.workdps(40):
        exact = np.array([float(mpmath.erfc(v) * (mpmath.exp(v * v) if name == "erfcx" else 1))
                          for v in map(mpmath.mpf, x)])
    values = getattr(ember.special, name)(ember.tensor(x)).numpy()
    assert _relative_error(values, exact).max() <= 3 * np.finfo(np.float64).eps


# ----------------------------------------------------------------- the Airy function far from 0


def test_airy_ai_phase_and_decay_from_an_exact_two_thirds_power():
    # zeta = 2/3 |x|^(3/2) rounded three times put the phase of Ai(x < 0) off by 4e-12 radians at x = -1000 and
    # by 1e-7 at -1e6 (torch: the same); exp(-zeta) magnified it to 1.2e-13 relative at x = 100.
    left = -np.geomspace(8.8, 1e10, 300)
    right = np.linspace(8.8, 100.0, 100)
    with mpmath.workdps(60):
        exact_left = np.array([float(mpmath.airyai(mpmath.mpf(v))) for v in left])
        exact_right = np.array([float(mpmath.airyai(mpmath.mpf(v))) for v in right])
    envelope = 1 / (math.sqrt(math.pi) * np.abs(left) ** 0.25)  # (relative errors explode at the zeros)
    values_left = ember.special.airy_ai(ember.tensor(left)).numpy()
    assert (np.abs(values_left - exact_left) / envelope).max() <= 2 * np.finfo(np.float64).eps
    values_right = ember.special.airy_ai(ember.tensor(right)).numpy()
    assert _relative_error(values_right, exact_right).max() <= 4 * np.finfo(np.float64).eps


# ----------------------------------------------------------------- digamma next to its poles


def test_digamma_next_to_the_negative_poles():
    # The reflection's cotangent took pi (x - trunc(x)), up to pi away from 0 and rounded relative to that: 6e-7
    # relative at -10 + 1e-10 (torch: the same, and 7e-5 elsewhere below 0); the distance to the nearest
    # integer is exact and keeps pi times it precise.
    poles = np.arange(1.0, 31.0)
    x = np.concatenate([-poles + 1e-10, -poles - 1e-10, -poles + 1e-5, -poles - 0.3, [-0.9999999999999999]])
    with mpmath.workdps(40):
        exact = np.array([float(mpmath.digamma(mpmath.mpf(v))) for v in x])
    values = ember.digamma(ember.tensor(x)).numpy()
    assert _relative_error(values, exact).max() <= 1e-14


# ----------------------------------------------------------------- polygamma far below zero


@pytest.mark.parametrize("n", [2, 3, 4])
def test_polygamma_far_below_zero_is_quick_and_matches_torch(n):
    """torch sums one term per unit of -x (it never returns at -1e9); ember finds zeta there through positive
    arguments. Between the poles far below 0 polygamma is periodic but for a term of the order of |x|^-n, so at
    -1e12 - f it is torch's value at -1e6 - f (which torch sums quickly)."""
    near = np.array([-1e6 - 0.25, -12345.125, -1e5 - 0.5, -3e4 - 0.75])
    far = near - np.array([1e12 - 1e6, 0, 0, 3e9])
    want = torch.polygamma(n, torch.tensor(near)).numpy()
    assert np.allclose(ember.polygamma(n, ember.tensor(far)).numpy(), want, rtol=1e-6, atol=1e-9)
