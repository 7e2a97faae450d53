"""floor_divide (//, div(rounding_mode='floor')) of float32 and float64 arrays large enough for the fast paths (the
floor of the quotient, in double precision): torch's values bit for bit, for every bit pattern, quotients a hair from
an integer, quotients near the bounds of the fast paths, special values and signed zeros."""
import numpy as np
import pytest
import torch

import ember
from ember._ops._support import wrap

N = 20_000
SPECIAL = np.array([0.0, -0.0, 1.0, -1.0, 0.7, -0.7, 1.4, -1.4, 2.1, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 3e38,
                    -3e38, 2.0 ** 20, 2.0 ** 24 + 2], np.float32)


def _assert_same_bits(mine: np.ndarray, expected: np.ndarray) -> None:
    same = (mine.view(np.uint32) == expected.view(np.uint32)) | (np.isnan(mine) & np.isnan(expected))
    assert same.all(), f"{(~same).sum()} differ, first at {np.flatnonzero(~same.ravel())[:5]}"


def _assert_torchs(x, y) -> None:
    """ember's floor_divide, // and div(rounding_mode='floor') all give torch's floor_divide, bit for bit."""
    theirs = torch.floor_divide(torch.as_tensor(x), torch.as_tensor(y)).numpy()
    a, b = ember.tensor(x), ember.tensor(y) if isinstance(y, np.ndarray) else y
    for mine in (ember.floor_divide(a, b), a // b, ember.div(a, b, rounding_mode="floor")):
        _assert_same_bits(mine.numpy(), theirs)


def _near_multiples(bound: int, seed: int) -> tuple:
    """Dividends one ulp either side of exact multiples: quotients a hair from an integer, up to ``bound``."""
    rng = np.random.default_rng(seed)
    y = rng.standard_normal(N).astype(np.float32)
    x = (rng.integers(-bound, bound, N).astype(np.float32) * y).astype(np.float32)
    return np.concatenate([x, np.nextafter(x, np.float32(np.inf)), np.nextafter(x, np.float32(-np.inf))]), \
        np.tile(y, 3)


def test_every_bit_pattern_gives_torchs_quotient():
    rng = np.random.default_rng(0)
    x, y = (rng.integers(0, 2 ** 32, N, dtype=np.uint64).astype(np.uint32).view(np.float32) for _ in range(2))
    _assert_torchs(x, y)


@pytest.mark.parametrize("bound", [2 ** 10, 2 ** 20 - 1, 2 ** 24])
def test_quotients_next_to_an_integer_are_floored_as_torch(bound):
    _assert_torchs(*_near_multiples(bound, bound))


def test_quotients_just_under_the_bound_of_the_fast_path():
    rng = np.random.default_rng(2)
    y = rng.uniform(0.5, 4, N).astype(np.float32) * rng.choice(np.float32([-1, 1]), N)
    x = (rng.uniform(2 ** 19, 2 ** 20 - 1, N) * y).astype(np.float32)
    _assert_torchs(x, y)


@pytest.mark.parametrize("divisor", [0.7, -0.7, 0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, 3, "pairs", "0-d"])
def test_special_values_and_signed_zeros(divisor):
    if divisor == "pairs":  # every special value against every other
        x, y = (np.tile(v.ravel(), 100) for v in np.meshgrid(SPECIAL, SPECIAL))
    else:
        x = np.tile(SPECIAL, 100)
        y = np.array(0.7, np.float32) if divisor == "0-d" else divisor
    _assert_torchs(x, y)


def test_small_quotients_keep_the_sign_of_zero():
    rng = np.random.default_rng(3)
    x = rng.standard_normal(N).astype(np.float32) * 1e-3
    x[::7] = -0.0
    x[1::7] = 0.0
    y = rng.standard_normal(N).astype(np.float32)
    _assert_torchs(x, y)


def test_numbers_either_side_broadcast_and_non_contiguous_inputs_equal_torchs():
    rng = np.random.default_rng(4)
    x = (rng.standard_normal((200, 300)) * 10).astype(np.float32)
    y = (rng.standard_normal((300, 1)) * 3).astype(np.float32)
    cases = [lambda lib, a, b: lib.floor_divide(a[:, ::2].T, b[::2]), lambda lib, a, b: 3 // a,
             lambda lib, a, b: a // 16_777_217, lambda lib, a, b: lib.div(a.T, 0.3, rounding_mode="floor"),
             lambda lib, a, b: 1e8 // a, lambda lib, a, b: lib.floor_divide(a, b.T)]
    for case in cases:
        theirs = case(torch, torch.tensor(x), torch.tensor(y)).numpy()
        mine = case(ember, ember.tensor(x), ember.tensor(y)).numpy()
        assert mine.dtype == theirs.dtype
        _assert_same_bits(mine, theirs)


def test_gradient_of_floor_division_is_zero_as_torchs():
    rng = np.random.default_rng(5)
    x, y = rng.standard_normal(3000).astype(np.float32), rng.standard_normal(3000).astype(np.float32)
    grads = []
    for lib in (ember, torch):
        a, b = lib.tensor(x, requires_grad=True), lib.tensor(y, requires_grad=True)
        lib.div(a, b, rounding_mode="floor").sum().backward()
        grads.append((a.grad.numpy(), b.grad.numpy()))
    for mine, theirs in zip(*grads):
        np.testing.assert_array_equal(mine, theirs)


def _double_cases() -> dict:
    rng = np.random.default_rng(6)
    signs = rng.choice([-1.0, 1.0], (2, N))
    bits = rng.integers(0, 2 ** 63, (2, N)).view(np.float64)
    cases = {"bits": (np.abs(bits[0]) * signs[0], np.abs(bits[1]) * signs[1]),
             "integers": (rng.integers(-1000, 1000, N).astype(float), rng.integers(-20, 20, N).astype(float)),
             "underflowing": (rng.standard_normal(N) * 1e-300, rng.standard_normal(N) * 1e300)}
    for bound in (2 ** 45, 2 ** 52):  # quotients a hair from an integer, either side of the bound of the fast path
        y = rng.uniform(-4, 4, N)
        x = rng.integers(-bound, bound, N) * y
        cases[bound] = (np.concatenate([x, np.nextafter(x, np.inf), np.nextafter(x, -np.inf)]), np.tile(y, 3))
    special = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 5e-324, -5e-324, 1.7e308, -1.7e308, 0.5])
    cases["specials"] = tuple(np.tile(v.ravel(), 100) for v in np.meshgrid(special, special))
    return cases


@pytest.mark.parametrize("case", ["bits", "integers", "underflowing", 2 ** 45, 2 ** 52, "specials"])
def test_double_quotients_are_torchs(case):
    x, y = _double_cases()[case]
    with np.errstate(invalid="ignore"):
        theirs = torch.floor_divide(torch.tensor(x), torch.tensor(y)).numpy()
    reversed_x = wrap(x[::-1]).flip(0)  # (non-contiguous: a negative stride, which ember.tensor refuses, as torch)
    for mine in (ember.floor_divide(ember.tensor(x), ember.tensor(y)).numpy(), (reversed_x // ember.tensor(y)).numpy()):
        same = (mine.view(np.uint64) == theirs.view(np.uint64)) | (np.isnan(mine) & np.isnan(theirs))
        assert same.all(), f"{(~same).sum()} differ, first at {np.flatnonzero(~same)[:5]}"
