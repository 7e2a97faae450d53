"""nextafter of float32 and float64 arrays large enough for the fast path (a step of the bits): torch's values bit
for bit, for every bit pattern, special values, signed zeros, equal operands, broadcast and non-contiguous inputs."""
import warnings

import numpy as np
import pytest
import torch

import ember

N = 20_000
BITS = {np.float32: np.uint32, np.float64: np.uint64}


def _specials(dtype) -> np.ndarray:
    info = np.finfo(dtype)
    return np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, info.max, -info.max, info.smallest_subnormal,
                     -info.smallest_subnormal, info.tiny, -info.tiny], dtype)


def _random_bits(dtype, seed: int) -> np.ndarray:
    unsigned = BITS[dtype]
    return np.random.default_rng(seed).integers(0, np.iinfo(unsigned).max, N, dtype=unsigned).view(dtype)


def _assert_torchs(x: np.ndarray, y: np.ndarray) -> None:
    theirs = torch.nextafter(torch.tensor(x), torch.tensor(y)).numpy()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # inf - inf and overflows in the test for special elements stay quiet
        mine = ember.nextafter(ember.tensor(x), ember.tensor(y)).numpy()
    assert mine.dtype == theirs.dtype and mine.shape == theirs.shape
    unsigned = BITS[theirs.dtype.type]
    same = (mine.view(unsigned) == theirs.view(unsigned)) | (np.isnan(mine) & np.isnan(theirs))
    assert same.all(), f"{(~same).sum()} differ, first at {np.flatnonzero(~same.ravel())[:5]}"


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_every_bit_pattern_steps_as_torch(dtype):
    _assert_torchs(_random_bits(dtype, 0), _random_bits(dtype, 1))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_special_values_against_each_other(dtype):
    x, y = (np.tile(v.ravel(), 20) for v in np.meshgrid(_specials(dtype), _specials(dtype)))
    _assert_torchs(x, y)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_equal_operands_and_steps_toward_and_away_from_zero(dtype):
    x = _random_bits(dtype, 2)
    x[np.isnan(x)] = 1.0
    _assert_torchs(x, x.copy())
    _assert_torchs(x, np.zeros_like(x))
    _assert_torchs(x, np.where(x > 0, np.inf, -np.inf).astype(dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_broadcast_and_non_contiguous_operands(dtype):
    x, y = _random_bits(dtype, 3), _random_bits(dtype, 4)
    _assert_torchs(x[:300, None], y[None, :400])
    _assert_torchs(x[::2], y[1::2])
    _assert_torchs(x[:400].reshape(20, 20).T, y[:20])
