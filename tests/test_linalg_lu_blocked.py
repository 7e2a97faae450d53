"""The LU family on matrices large enough for the recursive (blocked) factorization: LAPACK's pivots and info,
factors within rounding of torch's, in float32, float64 and complex, single and stacked, square and not."""
import numpy as np
import pytest
import torch

import ember
from ember._ops import decompositions

SHAPES = [(150, 150), (130, 70), (70, 130), (3, 90, 90), (2, 2, 40, 75), (41, 33)]
DTYPES = ["float32", "float64", "complex64", "complex128"]


def random_matrices(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if dtype.startswith("complex"):
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype)


def both_factors(a):
    mine = ember.linalg.lu_factor_ex(ember.tensor(a))
    theirs = torch.linalg.lu_factor_ex(torch.tensor(a))
    return [x.numpy() for x in mine], [x.numpy() for x in theirs]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_pivots_match_lapack_and_factors_agree_within_rounding(shape, dtype):
    a = random_matrices(shape, dtype)
    (LU, pivots, info), (LU_t, pivots_t, info_t) = both_factors(a)
    assert LU.dtype == LU_t.dtype and pivots.dtype == pivots_t.dtype == np.int32
    np.testing.assert_array_equal(pivots, pivots_t)
    np.testing.assert_array_equal(info, info_t)
    tolerance = 2e-4 if dtype in ("float32", "complex64") else 1e-11
    assert np.abs(LU - LU_t).max() <= tolerance * np.abs(LU_t).max()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("zero_column", [0, 31, 64, 99])
def test_an_exact_zero_column_gives_lapacks_info_and_no_nan(zero_column, dtype):
    a = random_matrices((2, 100, 100), dtype, seed=zero_column)
    a[1, :, zero_column] = 0
    (LU, pivots, info), (LU_t, pivots_t, info_t) = both_factors(a)
    np.testing.assert_array_equal(info, info_t)
    assert info.tolist() == [0, zero_column + 1]
    np.testing.assert_array_equal(pivots, pivots_t)
    assert np.isfinite(LU).all()
    np.testing.assert_allclose(LU, LU_t, rtol=0, atol=2e-4 * np.abs(LU_t).max())


@pytest.mark.parametrize("shape", [(120, 120), (90, 60), (60, 90), (4, 50, 50)])
def test_the_product_of_the_factors_is_the_matrix(shape):
    a = random_matrices(shape, "float64", seed=3)
    P, L, U = ember.linalg.lu(ember.tensor(a))
    np.testing.assert_allclose((P @ L @ U).numpy(), a, rtol=0, atol=1e-12 * np.abs(a).max() * shape[-1])


def test_the_leaf_width_does_not_change_the_result(monkeypatch):
    a = random_matrices((3, 70, 50), "float64", seed=5)
    whole = decompositions.lu_arrays(a)
    monkeypatch.setattr(decompositions, "_LU_LEAF_COLUMNS", 1)
    halved = decompositions.lu_arrays(a)
    np.testing.assert_array_equal(whole[1], halved[1])
    np.testing.assert_allclose(whole[0], halved[0], rtol=1e-12, atol=1e-12)


def test_unit_lower_solve_matches_numpy():
    rng = np.random.default_rng(7)
    L = np.tril(rng.standard_normal((2, 70, 70)) / 8, -1) + np.eye(70) * 5  # the diagonal is not read
    B = rng.standard_normal((2, 70, 9))
    unit = np.tril(L, -1) + np.eye(70)
    np.testing.assert_allclose(decompositions.unit_lower_solve(L, B), np.linalg.solve(unit, B), rtol=1e-12)
