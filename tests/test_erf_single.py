"""erf in single precision (``_special_math.erf_single``): float32 erf and GELU, within torch's accuracy."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import ember
from ember._ops import _special_math as F

SPECIALS = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, -1e-30, 1e-45, 0.99999994, 1.0, 3.9999998, 4.0,
                     1e38, -3e38], np.float32)


def _ulps(values: np.ndarray, exact: np.ndarray) -> np.ndarray:
    return np.abs(values.astype(np.float64) - exact) / np.spacing(np.abs(exact).astype(np.float32))


def test_as_close_to_erf_in_double_as_torchs_float32_erf():
    # evaluated in double and rounded once: 0.55 units in the last place at worst (torch's: 0.64)
    x = np.linspace(-6, 6, 400_001).astype(np.float32)
    exact = F.erf(x.astype(np.float64))
    away_from_zero = exact != 0
    mine = _ulps(F.erf_single(x), exact)[away_from_zero].max()
    theirs = _ulps(torch.erf(torch.from_numpy(x)).numpy(), exact)[away_from_zero].max()
    assert mine <= 0.56 and mine <= theirs


def test_special_values_as_torch_and_quietly():
    with warnings.catch_warnings(), np.errstate(over="raise", invalid="raise", divide="raise"):
        warnings.simplefilter("error")
        mine = F.erf_single(SPECIALS)
    theirs = torch.erf(torch.from_numpy(SPECIALS)).numpy()
    np.testing.assert_allclose(mine, theirs, rtol=3e-7, atol=0)
    assert np.array_equal(np.signbit(mine), np.signbit(theirs))
    assert mine.dtype == np.float32


def test_small_activations_take_one_polynomial():
    x = np.linspace(-0.9, 0.9, 1001).astype(np.float32)
    np.testing.assert_allclose(F.erf_single(x), torch.erf(torch.from_numpy(x)).numpy(), rtol=3e-7, atol=1e-9)


@pytest.mark.parametrize("scale", [0.5, 3.0])
def test_float32_erf_and_gelu_match_torch(scale):
    x = (np.random.default_rng(0).standard_normal((64, 96)) * scale).astype(np.float32)
    for mine, theirs in [(ember.erf, torch.erf), (ember.nn.functional.gelu, torch.nn.functional.gelu)]:
        np.testing.assert_allclose(mine(ember.tensor(x)).numpy(), theirs(torch.from_numpy(x)).numpy(), rtol=1e-5,
                                   atol=1e-6)
    np.testing.assert_array_equal(ember.erf(ember.tensor(x)).numpy(), F.erf_single(x))  # the float32 path is taken


@pytest.mark.parametrize("value", [0.3, 2.5, -7.0, np.nan])
def test_a_0d_array_as_torch(value):
    x = np.array(value, np.float32)
    result = F.erf_single(x)
    assert result.shape == () and result.dtype == np.float32
    np.testing.assert_allclose(result, torch.erf(torch.from_numpy(x)).numpy(), rtol=3e-7)


INVERSE_SPECIALS = np.array([0.0, -0.0, 1.0, -1.0, 1.5, -2.0, np.nan, np.inf, 1e-30, 0.99999994, -0.99999994, 0.9966],
                            np.float32)


def test_erfinv_within_three_units_in_the_last_place_of_erfinv_in_double():
    y = np.linspace(-1, 1, 400_001).astype(np.float32)[1:-1]
    exact = F.erfinv(y.astype(np.float64))
    away_from_zero = exact != 0
    assert _ulps(F.erfinv_single(y), exact)[away_from_zero].max() <= 3


def test_erfinv_special_values_and_0d_as_torch():
    with np.errstate(invalid="ignore", divide="ignore"):  # (the log of what lies beyond 1, quieted by the op)
        mine = F.erfinv_single(INVERSE_SPECIALS)
        single = F.erfinv_single(np.array(0.3, np.float32))
    theirs = torch.erfinv(torch.from_numpy(INVERSE_SPECIALS)).numpy()
    np.testing.assert_allclose(mine, theirs, rtol=3e-7, atol=0)
    assert mine.dtype == np.float32 and single.shape == () and single.dtype == np.float32
    np.testing.assert_allclose(single, torch.erfinv(torch.tensor(0.3)).numpy(), rtol=3e-7)


def test_float32_erfinv_and_trunc_normal_take_single_precision():
    y = np.random.default_rng(1).uniform(-1, 1, (50, 40)).astype(np.float32)
    np.testing.assert_array_equal(ember.erfinv(ember.tensor(y)).numpy(), F.erfinv_single(y))
    np.testing.assert_allclose(ember.erfinv(ember.tensor(y)).numpy(), torch.erfinv(torch.from_numpy(y)).numpy(),
                               rtol=1e-5, atol=1e-6)
    ember.manual_seed(0)
    weight = ember.nn.init.trunc_normal_(ember.empty(300, 200), std=1.0, a=-1.5, b=2.0)
    assert weight.dtype == ember.float32 and -1.5 <= float(weight.min()) and float(weight.max()) <= 2.0


@pytest.mark.parametrize("layout", ["C", "transposed", "strided", "Fortran"])
def test_erf_and_erfinv_of_any_layout_with_far_elements_as_torch(layout):
    x = (np.random.default_rng(1).standard_normal((300, 200)) * 2).astype(np.float32)  # many beyond 1
    x = {"C": x, "transposed": x.T, "strided": x[::2, ::3], "Fortran": np.asfortranarray(x)}[layout]
    y = np.tanh(x * np.float32(0.5)).astype(np.float32)
    for mine, theirs, values in [(F.erf_single, torch.erf, x), (F.erfinv_single, torch.erfinv, y)]:
        expected = theirs(torch.from_numpy(np.ascontiguousarray(values))).numpy()
        np.testing.assert_allclose(mine(values), expected, rtol=2e-6, atol=1e-7)
