"""The special functions in single precision (``_special_math.erfc_single``, ``ndtr_single`` ...): float32
data takes them, within a unit in the last place of the float64 functions (as torch's float32 kernels), and
the other dtypes keep their float64 computation."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch

import ember
from ember._ops import _special_math as F

TINY, SMALLEST_SUBNORMAL = float(np.finfo(np.float32).tiny), 2.0 ** -149


def _worst_error(values: np.ndarray, exact: np.ndarray) -> tuple[float, float]:
    """The worst error in units in the last place of float32 where ``exact`` is normal, and in units of the
    smallest subnormal where it is not."""
    error = np.abs(values.astype(np.float64) - exact)
    normal = np.abs(exact) >= TINY
    ulps = error[normal] / np.spacing(np.abs(exact[normal]).astype(np.float32)).astype(np.float64)
    return ulps.max(initial=0.0), (error[~normal] / SMALLEST_SUBNORMAL).max(initial=0.0)


def _quietly(fn, *args, overflows: bool = False):
    """``fn(*args)``, failing on a warning of invalid operation, division by zero or (unless the result
    ``overflows``) overflow: underflow to a subnormal or 0 is the result's own."""
    over = "ignore" if overflows else "raise"
    with warnings.catch_warnings(), np.errstate(over=over, invalid="raise", divide="raise", under="ignore"):
        warnings.simplefilter("error")
        return fn(*args)


def _as_torch(fn, x: np.ndarray) -> np.ndarray:
    return fn(torch.from_numpy(x)).numpy()


# ----------------------------------------------------------------- erfc

ERFC_SPECIALS = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, -1e-30, 1e-45, 0.5, -0.5, 9.0, 10.0, 10.05,
                          10.5, 11.0, -11.0, 1e38, -3e38], np.float32)


@pytest.mark.parametrize("low, high", [(-10.0, 0.0), (0.0, 1.0), (1.0, 4.0), (4.0, 10.2)])
def test_erfc_within_a_unit_in_the_last_place_into_the_subnormals(low, high):
    x = np.linspace(low, high, 400_001).astype(np.float32)
    ulps, subnormal = _worst_error(F.erfc_single(x), F.erfc(x.astype(np.float64)))
    assert ulps <= 0.65 and subnormal <= 0.6  # (torch's float32 erfc: 0.83 and 0.92)


def test_erfc_special_values_as_torch_and_quietly():
    mine = _quietly(F.erfc_single, ERFC_SPECIALS)
    theirs = _as_torch(torch.erfc, ERFC_SPECIALS)
    np.testing.assert_allclose(mine, theirs, rtol=1.2e-7, atol=SMALLEST_SUBNORMAL)
    assert mine.dtype == np.float32 and np.isnan(mine[4]) and mine[2] == 0 and mine[3] == 2
    assert mine[11] == SMALLEST_SUBNORMAL and mine[13] == 0  # erfc(10) is 2.1e-45, erfc(10.5) 9e-50


@pytest.mark.parametrize("public, single, double, domain", [
    (ember.erfc, F.erfc_single, F.erfc, (-12, 12)), (ember.special.erfc, F.erfc_single, F.erfc, (-12, 12)),
    (ember.lgamma, F.lgamma_single, F.lgamma, (-30, 30)),
    (ember.special.gammaln, F.lgamma_single, F.lgamma, (-30, 30)),
    (ember.special.ndtri, F.ndtri_single, F.ndtri, (-0.1, 1.1)),
    (ember.digamma, F.digamma_single, F.digamma, (-30, 30)),
    (ember.special.psi, F.digamma_single, F.digamma, (-30, 30)),
    (ember.special.erfcx, F.erfcx_single, F.erfcx, (-9, 30))])
def test_float32_takes_single_precision_and_float64_does_not(public, single, double, domain):
    x = np.random.default_rng(0).uniform(*domain, (64, 50)).astype(np.float32)
    np.testing.assert_array_equal(public(ember.tensor(x)).numpy(), single(x))
    wide = x.astype(np.float64)
    np.testing.assert_array_equal(public(ember.tensor(wide)).numpy(), double(wide))


@pytest.mark.parametrize("fn, theirs, domain", [(ember.erfc, torch.erfc, (-6, 12)),
                                               (ember.special.ndtr, torch.special.ndtr, (-6, 12)),
                                               (ember.lgamma, torch.lgamma, (-6, 12)),
                                               (ember.special.ndtri, torch.special.ndtri, (0.0, 1.0)),
                                               (ember.digamma, torch.digamma, (0.5, 30.0))])
def test_0d_empty_and_non_contiguous_float32_as_torch(fn, theirs, domain):
    """(rtol: torch's float32 ndtri is 4 units in the last place off, its digamma 15.)"""
    base = np.random.default_rng(1).uniform(*domain, (6, 8)).astype(np.float32)
    for x in (base[:, ::3].T, base[0, 0], base[1, 1], np.zeros((0, 3), np.float32)):
        mine = fn(ember.tensor(x)[..., :] if np.ndim(x) else ember.tensor(x)).numpy()
        expected = theirs(torch.from_numpy(np.ascontiguousarray(x)) if np.ndim(x) else torch.tensor(x)).numpy()
        assert mine.shape == expected.shape and mine.dtype == np.float32
        np.testing.assert_allclose(mine, expected, rtol=2e-6, atol=1e-7)
    strided = ember.tensor(base)[:, ::2]
    assert not strided.is_contiguous()
    np.testing.assert_array_equal(fn(strided).numpy(), fn(ember.tensor(np.ascontiguousarray(base[:, ::2]))).numpy())


def test_erfc_gradient_unchanged_and_twice_differentiable():
    x = ember.tensor([-2.0, -0.3, 0.0, 0.7, 3.0], dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(ember.erfc, (x,)) and ember.autograd.gradgradcheck(ember.erfc, (x,))
    single = ember.tensor([-2.0, 0.5, 4.0], requires_grad=True)
    ember.erfc(single).sum().backward()
    expected = -2 / math.sqrt(math.pi) * np.exp(-np.array([-2.0, 0.5, 4.0]) ** 2)
    np.testing.assert_allclose(single.grad.numpy(), expected, rtol=1e-6)


# ----------------------------------------------------------------- ndtr


def _ndtr_in_double(x: np.ndarray) -> np.ndarray:
    return 0.5 * F.erfc(-x.astype(np.float64) / math.sqrt(2))


@pytest.mark.parametrize("low, high", [(-14.5, -5.0), (-5.0, 0.0), (0.0, 8.0)])
def test_ndtr_within_a_unit_in_the_last_place_in_both_tails(low, high):
    """Its argument scaled in single would be 15 units off at -9 already (and torch's float32 ndtr is 0 there)."""
    x = np.linspace(low, high, 400_001).astype(np.float32)
    ulps, subnormal = _worst_error(F.ndtr_single(x), _ndtr_in_double(x))
    assert ulps <= 0.65 and subnormal <= 0.6


def test_ndtr_special_values_quietly():
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -13.0, -14.9, -15.0, 8.0, 1e38, -1e38], np.float32)
    mine = _quietly(F.ndtr_single, x)
    np.testing.assert_allclose(mine, _ndtr_in_double(x), rtol=1.2e-7, atol=SMALLEST_SUBNORMAL)
    assert mine[0] == 0.5 and mine[2] == 1 and mine[3] == 0 and np.isnan(mine[4]) and mine[7] == 0


def test_ndtr_float32_takes_single_precision_float64_its_own_and_half_the_composition():
    x = np.random.default_rng(2).uniform(-6, 6, (40, 30)).astype(np.float32)
    np.testing.assert_array_equal(ember.special.ndtr(ember.tensor(x)).numpy(), F.ndtr_single(x))
    wide = x.astype(np.float64)  # the tail-preserving kernel, not 0.5 * erfc(x * -1/sqrt(2))
    np.testing.assert_array_equal(ember.special.ndtr(ember.tensor(wide)).numpy(), F.ndtr(wide))
    half = ember.tensor(x).half()
    np.testing.assert_allclose(ember.special.ndtr(half).float().numpy(),
                               torch.special.ndtr(torch.from_numpy(x).half()).float().numpy(), atol=1e-3)


def test_ndtr_is_one_op_with_its_gradient_and_twice_differentiable():
    x = ember.tensor([-6.0, -1.5, 0.0, 0.4, 2.5], dtype=ember.float64, requires_grad=True)
    assert ember.special.ndtr(x).grad_fn.name() == "SpecialNdtrBackward0"
    assert ember.autograd.gradcheck(ember.special.ndtr, (x,))
    assert ember.autograd.gradgradcheck(ember.special.ndtr, (x,))
    t = torch.tensor([-6.0, -1.5, 0.0, 0.4, 2.5], dtype=torch.float64, requires_grad=True)
    torch.special.ndtr(t).sum().backward()
    ember.special.ndtr(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-14)


# ----------------------------------------------------------------- lgamma


def _lgamma_grid(low: float, high: float) -> np.ndarray:
    x = np.linspace(low, high, 200_001).astype(np.float32)
    return x[x != np.floor(x)] if low < 0 else x


@pytest.mark.parametrize("low, high", [(1e-6, 0.9), (0.9, 2.1), (2.1, 8.0), (8.0, 1e3), (1e3, 4e36), (-0.99, -1e-6),
                                       (-1e4, -5.0)])
def test_lgamma_within_half_a_unit_in_the_last_place(low, high):
    """Computed in double and rounded once (torch's float32 lgamma: 0.84 units)."""
    x = _lgamma_grid(low, high)
    exact = F.lgamma(x.astype(np.float64))
    away_from_zeros = np.abs(exact) > 1e-2  # (there a float32 x carries less than lgamma's relative precision)
    assert _worst_error(F.lgamma_single(x)[away_from_zeros], exact[away_from_zeros])[0] <= 0.51


@pytest.mark.parametrize("zero", [1.0, 2.0])
def test_lgamma_keeps_its_relative_precision_next_to_its_zeros(zero):
    steps = np.arange(-2 ** 13, 2 ** 13, dtype=np.float64)
    x = np.unique(np.concatenate([zero + steps * 2.0 ** -23 * zero, zero + steps * 2.0 ** -24]).astype(np.float32))
    exact = F.lgamma(x.astype(np.float64))
    assert _worst_error(F.lgamma_single(x)[exact != 0], exact[exact != 0])[0] <= 0.51


def test_lgamma_of_negative_x_next_to_its_zeros_no_worse_than_torch_in_absolute_error():
    x = _lgamma_grid(-20.0, -1.0)
    exact = F.lgamma(x.astype(np.float64))
    near_zero = np.abs(exact) < 1e-2
    mine = np.abs(F.lgamma_single(x).astype(np.float64) - exact)[near_zero].max()
    theirs = np.abs(_as_torch(torch.lgamma, x).astype(np.float64) - exact)[near_zero].max()
    assert near_zero.sum() > 100 and mine <= 5e-10 < theirs  # (torch: 2.1e-9)


LGAMMA_SPECIALS = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, 2.0, -1.0, -2.0, -1e10, 1e-45, -1e-45, 1e-30,
                            -2.5, -0.5, 7.9999995, 8.0, 4e36, 4.2e36, 3.4e38, 0.99999994, 1.0000001], np.float32)


def test_lgamma_special_values_as_torch_and_quietly():
    mine = _quietly(F.lgamma_single, LGAMMA_SPECIALS, overflows=True)  # (lgamma(4.2e36) is inf)
    theirs = _as_torch(torch.lgamma, LGAMMA_SPECIALS)
    np.testing.assert_allclose(mine, theirs, rtol=1.2e-7, atol=0)
    assert mine.dtype == np.float32 and not np.signbit(mine[5:7]).any()  # lgamma(1) and lgamma(2) are +0


def test_lgamma_gradient_is_digamma_and_twice_differentiable():
    x = ember.tensor([-2.5, -0.3, 0.2, 1.0, 2.0, 7.5, 12.0], dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(ember.lgamma, (x,)) and ember.autograd.gradgradcheck(ember.lgamma, (x,))
    single = ember.tensor([-2.5, 0.2, 9.0], requires_grad=True)
    ember.lgamma(single).sum().backward()
    np.testing.assert_array_equal(single.grad.numpy(), ember.digamma(single.detach()).numpy())


# ----------------------------------------------------------------- ndtri


@pytest.mark.parametrize("p", [np.linspace(0, 1, 400_001)[1:-1], np.logspace(-45.8, -1, 100_001),
                               1 - np.logspace(-7.2, -1, 100_001)], ids=["uniform", "left tail", "right tail"])
def test_ndtri_within_a_unit_in_the_last_place_into_the_subnormals(p):
    """(torch's float32 ndtri: 4.3 units.)"""
    p = p.astype(np.float32)
    p = p[(p > 0) & (p < 1)]
    exact = F.ndtri(p.astype(np.float64))
    assert _worst_error(F.ndtri_single(p)[exact != 0], exact[exact != 0])[0] <= 0.55


def test_ndtri_special_values_as_torch_and_quietly():
    p = np.array([0.0, -0.0, 1.0, 0.5, np.nan, 1.5, -0.5, np.inf, -np.inf, 1e-45, 0.99999994, 6e-8, 0.075, 0.925],
                 np.float32)
    mine = _quietly(F.ndtri_single, p)
    np.testing.assert_allclose(mine, _as_torch(torch.special.ndtri, p), rtol=6e-7, atol=0)
    assert mine.dtype == np.float32 and mine[0] == mine[1] == -np.inf and mine[2] == np.inf and mine[3] == 0


def test_ndtri_gradient_and_half_refused_as_before():
    p = ember.tensor([0.01, 0.3, 0.5, 0.97], dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(ember.special.ndtri, (p,))
    assert ember.autograd.gradgradcheck(ember.special.ndtri, (p,))
    with pytest.raises(NotImplementedError, match="ndtri"):
        ember.special.ndtri(ember.tensor([0.5]).half())


# ----------------------------------------------------------------- log_ndtr


@pytest.mark.parametrize("low, high", [(-1e5, -100.0), (-100.0, -10.0), (-10.0, 0.0), (0.0, 3.0), (3.0, 14.0)])
def test_log_ndtr_within_a_unit_in_the_last_place(low, high):
    """(torch's float32 log_ndtr: 4 units left of 0, 190 in the right tail.)"""
    x = np.linspace(low, high, 200_001).astype(np.float32)
    exact = F.log_ndtr(x.astype(np.float64))
    ulps, subnormal = _worst_error(F.log_ndtr_single(x), exact)
    assert ulps <= 0.65 and subnormal <= 0.6


def test_log_ndtr_special_values_as_torch_and_quietly():
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 14.0, 20.0, -3e38, 3e38, -1e-30, 1e-30], np.float32)
    mine = _quietly(F.log_ndtr_single, x, overflows=True)  # (log_ndtr(-3e38) is -inf)
    np.testing.assert_allclose(mine, _as_torch(torch.special.log_ndtr, x), rtol=1.2e-7, atol=SMALLEST_SUBNORMAL)
    assert mine.dtype == np.float32 and mine[3] == mine[7] == -np.inf and np.isnan(mine[4]) and mine[6] == 0


def test_log_ndtr_float32_takes_single_precision_and_float64_does_not():
    x = np.random.default_rng(5).uniform(-50, 15, (40, 30)).astype(np.float32)
    np.testing.assert_array_equal(ember.special.log_ndtr(ember.tensor(x)).numpy(), F.log_ndtr_single(x))
    np.testing.assert_array_equal(ember.special.log_ndtr(ember.tensor(np.float32(-2.0))).numpy(),
                                  F.log_ndtr_single(np.array([-2.0], np.float32))[0])
    wide = x.astype(np.float64)
    np.testing.assert_array_equal(ember.special.log_ndtr(ember.tensor(wide)).numpy(), F.log_ndtr(wide))
    x = ember.tensor([-30.0, -2.0, 0.0, 3.0], dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(ember.special.log_ndtr, (x,))
    assert ember.autograd.gradgradcheck(ember.special.log_ndtr, (x,))


# ----------------------------------------------------------------- digamma


@pytest.mark.parametrize("low, high", [(1e-6, 1.0), (1.0, 2.0), (2.0, 8.0), (8.0, 1e4), (-0.99, -1e-6), (-1e5, -1.0)])
def test_digamma_within_a_unit_in_the_last_place(low, high):
    """(torch's float32 digamma: 15 units, and hundreds for negative x.)"""
    x = _lgamma_grid(low, high)
    exact = F.digamma(x.astype(np.float64))
    away_from_zeros = np.abs(exact) > 1e-2
    assert _worst_error(F.digamma_single(x)[away_from_zeros], exact[away_from_zeros])[0] <= 0.7


def test_digamma_next_to_its_zeros():
    """Relative precision next to the positive zero 1.4616...; for negative x, where the reflection cancels,
    absolute error 1e-9 (torch's float32 digamma: 7e-7 and 1e-6)."""
    zero = 1.4616321449683622
    x = np.unique((zero + np.arange(-2 ** 12, 2 ** 12) * 2.0 ** -23).astype(np.float32))
    assert _worst_error(F.digamma_single(x), F.digamma(x.astype(np.float64)))[0] <= 0.51
    x = _lgamma_grid(-20.0, -1.0)
    exact = F.digamma(x.astype(np.float64))
    near_zero = np.abs(exact) < 1e-2
    assert near_zero.sum() > 100 and np.abs(F.digamma_single(x).astype(np.float64) - exact)[near_zero].max() <= 1e-9


def test_digamma_special_values_as_torch_and_quietly():
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -1.0, -1e10, 1e-45, -1e-45, 1e-30, 7.9999995, 8.0, 3.4e38,
                  -2.5], np.float32)
    mine = _quietly(F.digamma_single, x, overflows=True)  # (digamma(1e-45) is -1/x, -inf in single)
    np.testing.assert_allclose(mine, _as_torch(torch.digamma, x), rtol=2e-6, atol=0)
    assert mine.dtype == np.float32 and mine[0] == -np.inf and mine[1] == np.inf and np.isnan(mine[3:6]).all()
    next_to_zero = np.array([1.4616321], np.float32)  # (torch's float32 digamma gives +1.1e-8, of the wrong sign)
    np.testing.assert_allclose(F.digamma_single(next_to_zero), F.digamma(next_to_zero.astype(np.float64)), rtol=1e-7)


def test_digamma_gradient_unchanged_and_twice_differentiable():
    x = ember.tensor([-2.5, -0.3, 0.2, 1.46, 7.5, 12.0], dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(ember.digamma, (x,)) and ember.autograd.gradgradcheck(ember.digamma, (x,))


# ----------------------------------------------------------------- erfcx


@pytest.mark.parametrize("low, high", [(-9.3, 0.0), (0.0, 10.5), (10.5, 100.0), (100.0, 1e30)])
def test_erfcx_within_a_unit_in_the_last_place(low, high):
    """(torch's float32 erfcx: 64 units left of 0, 7.5 right of it.)"""
    x = np.linspace(low, high, 200_001).astype(np.float32)
    assert _worst_error(F.erfcx_single(x), F.erfcx(x.astype(np.float64)))[0] <= 0.61


def test_erfcx_special_values_as_torch_and_quietly():
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 10.5, 10.500001, -9.3, -9.4, 1e30, -1e30, 3e38], np.float32)
    mine = _quietly(F.erfcx_single, x, overflows=True)  # (erfcx(-9.4) is 2 exp(88.4), inf in single)
    with np.errstate(over="ignore"):
        np.testing.assert_allclose(mine, F.erfcx(x.astype(np.float64)).astype(np.float32), rtol=1.2e-7, atol=0)
    edges = [0, 1, 2, 3, 4, 8, 9, 10, 11]  # (at -9.3 torch's float32 erfcx is 2e-6 off)
    np.testing.assert_allclose(mine[edges], _as_torch(torch.special.erfcx, x)[edges], rtol=1.2e-7, atol=0)
    assert mine.dtype == np.float32 and mine[2] == 0 and mine[3] == mine[8] == np.inf and np.isnan(mine[4])


def test_erfcx_gradient_and_half_refused_as_before():
    x = ember.tensor([-3.0, -0.2, 0.0, 1.5, 12.0], dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(ember.special.erfcx, (x,))
    assert ember.autograd.gradgradcheck(ember.special.erfcx, (x,))
    with pytest.raises(NotImplementedError, match="erfcx"):
        ember.special.erfcx(ember.tensor([0.5]).half())
