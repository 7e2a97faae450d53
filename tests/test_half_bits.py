"""The bitwise float32 <-> float16 conversions: bit for bit NumPy's casts, for every class of bit pattern, on
arrays large enough to take them (and small ones, which NumPy converts); through ember's casts, torch's values."""
import numpy as np
import pytest
import torch

import ember
from ember._half_bits import BITWISE_FROM, half_from_single, single_from_half

EVERY_HALF = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16)


def numpy_half(single: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):
        return single.astype(np.float16)


def assert_same_bits(mine: np.ndarray, expected: np.ndarray) -> None:
    assert mine.dtype == expected.dtype and mine.shape == expected.shape
    unsigned = np.uint16 if mine.dtype == np.float16 else np.uint32
    np.testing.assert_array_equal(mine.view(unsigned), expected.view(unsigned))


def as_singles(bits) -> np.ndarray:
    return np.asarray(bits, dtype=np.uint64).astype(np.uint32).view(np.float32)


def test_every_half_becomes_numpys_single_and_back():
    singles = single_from_half(EVERY_HALF)
    assert_same_bits(singles, EVERY_HALF.astype(np.float32))
    assert_same_bits(half_from_single(singles), EVERY_HALF)  # NaN payloads included


def test_random_single_bit_patterns_round_as_numpys():
    """Uniform bit patterns (every exponent: subnormals, overflows, NaNs), and patterns in the half's range."""
    rng = np.random.default_rng(0)
    uniform = as_singles(rng.integers(0, 1 << 32, 400_000))
    in_range = as_singles(rng.integers(0x33000000, 0x47800000, 400_000) | (rng.integers(0, 2, 400_000) << 31))
    for singles in (uniform, in_range):
        assert_same_bits(half_from_single(singles), numpy_half(singles))


def midpoints_of_neighbouring_halves() -> np.ndarray:
    """The singles halfway between each pair of neighbouring finite halves (both signs), and one single ulp
    either side of each: ties go to the even half."""
    halves = EVERY_HALF[np.isfinite(EVERY_HALF)].astype(np.float32)
    halves = np.sort(halves[halves >= 0])
    middle = (halves[:-1] + halves[1:]) / 2  # exact: halves have 11 bits, singles 24
    middle = np.concatenate([middle, [np.float32(65520.0)]])  # between the largest half and the next power
    around = [middle, np.nextafter(middle, np.float32(0)), np.nextafter(middle, np.float32(np.inf))]
    return np.concatenate(around + [-m for m in around]).astype(np.float32)


def test_ties_round_to_even_as_numpys():
    singles = midpoints_of_neighbouring_halves()
    assert singles.size > BITWISE_FROM
    assert_same_bits(half_from_single(singles), numpy_half(singles))


SPECIALS = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 65504.0, 65519.996, 65520.0, 65536.0, 1e38,
                     -1e38, 2.0 ** -24, 2.0 ** -25, 3 * 2.0 ** -26, 2.0 ** -14, 2.0 ** -14 * (1 - 2.0 ** -11),
                     1e-45, -1e-40, 6.1e-5], dtype=np.float32)
NAN_PAYLOADS = as_singles([0x7F800001, 0x7FC00000, 0xFFC00001, 0x7F802000, 0xFFFFFFFF, 0x7FBFFFFF])


@pytest.mark.parametrize("rare_share", [0.001, 0.05, 0.3, 1.0])
def test_mostly_normal_arrays_with_special_values_as_numpys(rare_share):
    """Zeros, subnormals, overflows, infinities and NaNs (with payloads) among ordinary values: converted one
    by one where they are few, the whole array by NumPy where they are many."""
    rng = np.random.default_rng(1)
    singles = rng.standard_normal(50_000).astype(np.float32)
    specials = np.concatenate([SPECIALS, NAN_PAYLOADS])
    chosen = rng.random(singles.size) < rare_share
    singles[chosen] = rng.choice(specials, np.count_nonzero(chosen))
    assert_same_bits(half_from_single(singles), numpy_half(singles))


@pytest.mark.parametrize("shape", [(), (0,), (3,), (BITWISE_FROM - 1,), (160, 300), (2, 0, 5)])
def test_any_shape_and_layout_as_numpys(shape):
    singles = np.asarray(np.random.default_rng(2).standard_normal(shape) * 1000, dtype=np.float32)
    for layout in (singles, singles.T, singles[..., ::2] if singles.ndim else singles):
        assert_same_bits(half_from_single(layout), numpy_half(layout))
        halves = numpy_half(layout)
        assert_same_bits(single_from_half(halves.T), halves.T.astype(np.float32))


@pytest.mark.parametrize("expression", ["x.half()", "x.half().float()", "x.t().half()", "x.to(L.float16)",
                                        "x.half().t().float()", "x.double().half()", "x.half().to(L.float32)"])
def test_ember_casts_through_half_as_torch(expression):
    """Values of every size class, the rounding ties and the specials (NaNs compared as NaN)."""
    values = np.concatenate([midpoints_of_neighbouring_halves()[:40_000], SPECIALS,
                             np.random.default_rng(3).standard_normal(4000).astype(np.float32) * 3e4])
    values = values[: values.size // 200 * 200].reshape(200, -1)

    def program(L):
        result = eval(expression, {"L": L, "x": L.tensor(values)})
        return result.float().numpy()

    np.testing.assert_array_equal(program(ember), program(torch))


def test_the_gradient_through_half_as_torch():
    values = np.random.default_rng(4).standard_normal((100, 100)).astype(np.float32)

    def program(L):
        x = L.tensor(values, requires_grad=True)
        (x.half().float() * L.tensor(values)).sum().backward()
        return x.grad.numpy()

    np.testing.assert_array_equal(program(ember), program(torch))
