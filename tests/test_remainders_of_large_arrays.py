"""remainder and fmod of float32 arrays large enough for the fast path (computed through double precision):
exactly C's fmod, and torch's remainder built on it, for every bit pattern, special values and signed zeros."""
import warnings

import numpy as np
import pytest
import torch

import ember
from ember.autograd import gradcheck, gradgradcheck

N = 20_000
SPECIAL = np.array([0.0, -0.0, 1.0, -1.0, 0.7, -0.7, 1.4, -1.4, 2.1, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 3e38,
                    -3e38, 2.0 ** 28, 2.0 ** 29 + 64], np.float32)


def _exact(op: str, x, y) -> np.ndarray:
    """NumPy's fmod (exact), and torch's remainder rule on it: moved by one divisor where the signs differ."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mod = np.fmod(x, y)
        if op == "fmod":
            return mod
        y = np.broadcast_to(np.asarray(y, np.float32), mod.shape)
        return np.where((mod != 0) & ((y < 0) != (mod < 0)), (mod + y).astype(np.float32), mod)


def _assert_same_bits(mine: np.ndarray, expected: np.ndarray) -> None:
    same = (mine.view(np.uint32) == expected.view(np.uint32)) | (np.isnan(mine) & np.isnan(expected))
    assert same.all(), f"{(~same).sum()} differ, first at {np.flatnonzero(~same.ravel())[:5]}"


def _ember(op: str, x, y) -> np.ndarray:
    divisor = ember.tensor(y) if isinstance(y, np.ndarray) else y
    return getattr(ember, op)(ember.tensor(x), divisor).numpy()


def _random_bits(seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 2 ** 32, N, dtype=np.uint64).astype(np.uint32).view(np.float32)


def _near_multiples() -> tuple:
    """Dividends one ulp either side of exact multiples: quotients a hair from an integer, up to 2**27."""
    rng = np.random.default_rng(3)
    y = rng.standard_normal(N).astype(np.float32)
    x = (rng.integers(-2 ** 27, 2 ** 27, N).astype(np.float32) * y).astype(np.float32)
    return np.concatenate([x, np.nextafter(x, np.float32(np.inf)), np.nextafter(x, np.float32(-np.inf))]), \
        np.tile(y, 3)


@pytest.mark.parametrize("op", ["fmod", "remainder"])
def test_every_bit_pattern_gives_the_exact_remainder(op):
    x, y = _random_bits(0), _random_bits(1)
    _assert_same_bits(_ember(op, x, y), _exact(op, x, y))


@pytest.mark.parametrize("op", ["fmod", "remainder"])
def test_quotients_next_to_an_integer_are_truncated_right(op):
    x, y = _near_multiples()
    _assert_same_bits(_ember(op, x, y), _exact(op, x, y))
    _assert_same_bits(_ember(op, x, y), getattr(torch, op)(torch.tensor(x), torch.tensor(y)).numpy())


@pytest.mark.parametrize("op", ["fmod", "remainder"])
@pytest.mark.parametrize("divisor", [0.7, -0.7, 0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, "pairs", "0-d"])
def test_special_values_and_signed_zeros(op, divisor):
    if divisor == "pairs":  # every special value against every other
        x, y = (np.tile(v.ravel(), 100) for v in np.meshgrid(SPECIAL, SPECIAL))
    else:
        x = np.tile(SPECIAL, 100)
        y = np.array(0.7, np.float32) if divisor == "0-d" else divisor
    _assert_same_bits(_ember(op, x, y), _exact(op, x, np.float32(y)))


@pytest.mark.parametrize("op", ["fmod", "remainder"])
def test_torchs_values_where_its_vector_kernel_does_not_overflow(op):
    """torch's vectorised float32 kernel gives nan where x * (1 / y) overflows (its scalar path, which handles the
    last elements, does not): everywhere else its values are ember's."""
    x, y = _random_bits(4), _random_bits(5)
    theirs = getattr(torch, op)(torch.tensor(x), torch.tensor(y)).numpy()
    with np.errstate(all="ignore"):
        overflowing = ~np.isfinite(x * (np.float32(1) / y))
    kept = ~(overflowing & np.isnan(theirs))
    _assert_same_bits(_ember(op, x, y)[kept], theirs[kept])


@pytest.mark.parametrize("op", ["fmod", "remainder"])
def test_broadcast_non_contiguous_and_half_inputs_equal_torchs(op):
    rng = np.random.default_rng(6)
    x = (rng.standard_normal((200, 300)) * 10).astype(np.float32)
    y = (rng.standard_normal((300, 1)) * 3).astype(np.float32)
    for lib_x, lib_y in [(x[:, ::2].T, y[::2]), (x.astype(np.float16), y.T.astype(np.float16))]:
        theirs = getattr(torch, op)(torch.tensor(lib_x), torch.tensor(lib_y)).numpy()
        mine = getattr(ember, op)(ember.tensor(lib_x), ember.tensor(lib_y)).numpy()
        np.testing.assert_array_equal(mine, theirs)


@pytest.mark.parametrize("op", ["fmod", "remainder"])
def test_gradients_equal_torchs_and_pass_gradcheck(op):
    rng = np.random.default_rng(7)
    x = rng.standard_normal(3000) * 5
    y = np.abs(rng.standard_normal(3000)) + 0.5
    grads = []
    for lib in (ember, torch):
        a, b = lib.tensor(x, requires_grad=True), lib.tensor(y, requires_grad=True)
        (getattr(lib, op)(a, b) * lib.tensor(y)).sum().backward()
        c = lib.tensor(x, requires_grad=True)
        getattr(lib, op)(c, 0.7).sum().backward()
        grads.append((a.grad.numpy(), b.grad.numpy(), c.grad.numpy()))
    for mine, theirs in zip(*grads):
        np.testing.assert_array_equal(mine, theirs)
    small = ember.tensor(x[:6], requires_grad=True), ember.tensor(y[:6], requires_grad=True)
    function = getattr(ember, op)
    assert gradcheck(function, small) and gradgradcheck(function, small)


@pytest.mark.parametrize("op", ["fmod", "remainder"])
def test_finite_operands_keep_the_dividends_sign_on_zero_remainders(op):
    """Exact multiples, signed zeros and tiny dividends, all finite (the fast path throughout)."""
    rng = np.random.default_rng(8)
    y = rng.uniform(0.5, 4, N).astype(np.float32) * rng.choice(np.float32([-1, 1]), N)
    x = (rng.integers(-1000, 1000, N).astype(np.float32) * y).astype(np.float32)
    x[::5], x[1::5], x[2::5] = 0.0, -0.0, np.float32(1e-45) * rng.choice(np.float32([-1, 1]), len(x[2::5]))
    _assert_same_bits(_ember(op, x, y), _exact(op, x, y))
    _assert_same_bits(_ember(op, x, y), getattr(torch, op)(torch.tensor(x), torch.tensor(y)).numpy())


def _double_cases() -> dict:
    rng = np.random.default_rng(9)
    signs = rng.choice([-1.0, 1.0], N)
    cases = {"normal": (rng.standard_normal(N) * 10, rng.standard_normal(N)),
             "integers": (rng.integers(-1000, 1000, N).astype(float), rng.integers(1, 20, N) * signs),
             "tiny dividends and signed zeros": (np.where(signs > 0, 0.0, -0.0) + rng.standard_normal(N) * 1e-300 *
                                                 (rng.random(N) < 0.5), rng.standard_normal(N)),
             "far apart": (np.ldexp(rng.uniform(-1, 1, N), rng.integers(-850, 890, N)),
                           np.ldexp(rng.uniform(0.5, 1, N), rng.integers(-850, 890, N)))}
    for bound in (2 ** 3, 2 ** 45, 2 ** 52):  # quotients a hair from an integer (2**52: past the fast path)
        y = rng.uniform(-4, 4, N)
        x = rng.integers(-bound, bound, N) * y
        cases[bound] = (np.concatenate([x, np.nextafter(x, np.inf), np.nextafter(x, -np.inf)]), np.tile(y, 3))
    return cases


@pytest.mark.parametrize("op", ["fmod", "remainder"])
@pytest.mark.parametrize("case", ["normal", "integers", "tiny dividends and signed zeros", 8, 2 ** 45, 2 ** 52])
def test_double_remainders_are_torchs(op, case):
    x, y = _double_cases()[case]
    mine = getattr(ember, op)(ember.tensor(x), ember.tensor(y)).numpy()
    theirs = getattr(torch, op)(torch.tensor(x), torch.tensor(y)).numpy()
    same = (mine.view(np.uint64) == theirs.view(np.uint64)) | (np.isnan(mine) & np.isnan(theirs))
    assert same.all(), f"{(~same).sum()} differ, first at {np.flatnonzero(~same)[:5]}"


def test_double_fmod_is_exact_where_quotients_are_far_from_one():
    """(NumPy's exact fmod; torch's float64 fmod is not exact for some of these quotients, of up to 2**1700)"""
    x, y = _double_cases()["far apart"]
    _assert_same_bits(ember.fmod(ember.tensor(x), ember.tensor(y)).numpy().view(np.uint64).view(np.float32),
                      np.fmod(x, y).view(np.uint64).view(np.float32))
