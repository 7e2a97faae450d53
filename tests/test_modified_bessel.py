"""The modified Bessel functions I0, I1, K0, K1 (and their scaled forms) against mpmath at 40 digits, in float64
and float32, across their ranges and near the points where their evaluation changes method; and against torch
on 0-d, empty, broadcast and non-contiguous inputs and the non-finite values."""
from __future__ import annotations

import functools

import mpmath as mp
import numpy as np
import pytest
import torch

import ember

mp.mp.dps = 40


@functools.lru_cache(maxsize=None)
def besselk(order: int, x: mp.mpf) -> mp.mpf:
    """mpmath's K at 40 digits, kept: K and its scaled form are checked at the same points, and mpmath takes
    up to 70 ms a point between 10 and 60, where its series cancels."""
    return mp.besselk(order, x)


# name -> (the reference at an mpf, the op on a library, whether it is defined for negative x)
FUNCTIONS = {
    "modified_bessel_k0": (lambda x: besselk(0, x), lambda lib, x: lib.special.modified_bessel_k0(x), False),
    "modified_bessel_k1": (lambda x: besselk(1, x), lambda lib, x: lib.special.modified_bessel_k1(x), False),
    "scaled_modified_bessel_k0": (lambda x: mp.exp(x) * besselk(0, x),
                                  lambda lib, x: lib.special.scaled_modified_bessel_k0(x), False),
    "scaled_modified_bessel_k1": (lambda x: mp.exp(x) * besselk(1, x),
                                  lambda lib, x: lib.special.scaled_modified_bessel_k1(x), False),
    "modified_bessel_i0": (lambda x: mp.besseli(0, x), lambda lib, x: lib.special.modified_bessel_i0(x), True),
    "modified_bessel_i1": (lambda x: mp.besseli(1, x), lambda lib, x: lib.special.modified_bessel_i1(x), True),
    "i0e": (lambda x: mp.exp(-abs(x)) * mp.besseli(0, x), lambda lib, x: lib.special.i0e(x), True),
    "i1e": (lambda x: mp.exp(-abs(x)) * mp.besseli(1, x), lambda lib, x: lib.special.i1e(x), True),
}

SWITCH_POINTS = (1.0, 2.0, 8.0, 30.0, 50.0)


def _points(negative: bool) -> np.ndarray:
    near_switches = np.concatenate([np.nextafter(p, [0.0, 100.0]) for p in SWITCH_POINTS] + [SWITCH_POINTS])
    rng = np.random.default_rng(7)
    # (the reference costs up to 70 ms a point between 10 and 60: 50 random points there, beside the grid's)
    positive = np.concatenate([np.geomspace(1e-6, 700, 400), rng.uniform(0, 60, 50), near_switches])
    return np.concatenate([positive, -positive]) if negative else positive


def _worst_relative_error(name: str, dtype) -> float:
    reference, op, negative = FUNCTIONS[name]
    x = _points(negative).astype(dtype)
    x = x[np.abs(x) < (85 if dtype == np.float32 else 700)]
    expected = np.array([float(reference(mp.mpf(float(v)))) for v in x])
    got = op(ember, ember.tensor(x)).numpy().astype(np.float64)
    finite = np.isfinite(expected) & (np.abs(expected) > np.finfo(dtype).tiny)
    return float(np.max(np.abs(got - expected)[finite] / np.abs(expected[finite])))


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_float64_values_are_within_a_few_units_in_the_last_place(name):
    assert _worst_relative_error(name, np.float64) < 2e-15  # about 9 units: torch's own are within 10


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_float32_values_are_rounded_once(name):
    assert _worst_relative_error(name, np.float32) < 6.0e-8  # half a unit in the last place


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_odd_shapes_and_nonfinite_values_match_torch(name, dtype):
    _, op, _ = FUNCTIONS[name]
    values = np.array([[0.0, -0.0, np.inf, -np.inf, np.nan, -1.0, 1e-300, 1.5],
                       [2.0, 0.5, 30.0, 50.0, 700.0, 1e4, 3.0, 0.01]])
    for shaped in (values[0, 7], values[:0], values.T[::2], values[:, :1] + values[1]):
        arrays = [lib.tensor(np.asarray(shaped).astype(dtype)) for lib in (torch, ember)]
        arrays = [a.transpose(0, 1) if a.dim() == 2 else a for a in arrays]  # non-contiguous
        expected, got = (op(lib, a).numpy() for lib, a in zip((torch, ember), arrays))
        assert got.shape == expected.shape and got.dtype == expected.dtype
        np.testing.assert_allclose(got, expected, rtol=1e-14 if dtype == "float64" else 3e-6, equal_nan=True)


@pytest.mark.parametrize("name", ["i1", "i1e"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_second_derivatives_at_zero_are_finite_as_torchs(name, dtype):
    """The first derivative at 0 is the limit 1/2; its own derivative there is 0 (where the formula I1(x) / x
    would give 0 * inf = nan)."""
    values = np.array([0.0, -0.0, 0.5, -2.0, 3.0], dtype=dtype)
    results = []
    for lib in (ember, torch):
        x = lib.tensor(values, requires_grad=True)
        first, = lib.autograd.grad(getattr(lib.special, name)(x).sum(), x, create_graph=True)
        second, = lib.autograd.grad(first.sum(), x)
        results.append((first.detach().numpy(), second.numpy()))
    for mine, theirs in zip(*results):
        np.testing.assert_allclose(mine, theirs, rtol=1e-12, atol=1e-6 if dtype == "float32" else 1e-14)


@pytest.mark.parametrize("name", ["i1", "i1e"])
def test_gradgradcheck_through_zero(name):
    x = ember.tensor([0.0, 0.4, -1.5], dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(getattr(ember.special, name), (x,))
    assert ember.autograd.gradgradcheck(getattr(ember.special, name), (x,))
