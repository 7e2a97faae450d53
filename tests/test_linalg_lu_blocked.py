"""The LU family on matrices large enough for the recursive (blocked) factorization: LAPACK's pivots and info,
factors within rounding of torch's, in float32, float64 and complex, single and stacked, square and not; on
NumPy's OpenBLAS and on the NumPy paths alike."""
import numpy as np
import pytest
import torch

import ember
from ember import _lapack
from ember._ops import decompositions

SHAPES = [(150, 150), (130, 70), (70, 130), (3, 90, 90), (2, 2, 40, 75), (41, 33)]
DTYPES = ["float32", "float64", "complex64", "complex128"]


@pytest.fixture(autouse=True, params=["lapack", "numpy"])
def lapack_or_numpy(request, monkeypatch):
    """Each test on LAPACK's routines and on the NumPy paths that stand in where NumPy brings none."""
    monkeypatch.setattr(_lapack, "enabled", request.param == "lapack")


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


SOLVE_SHAPES = [((5, 5), (5, 3)), ((150, 150), (150, 4)), ((3, 70, 70), (70, 2)), ((70, 70), (2, 70, 5)),
                ((1, 1), (1, 1)), ((0, 0), (0, 2)), ((40, 40), (40, 0)), ((64, 16, 16), (64, 16, 4))]


@pytest.mark.parametrize("shapes", SOLVE_SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("adjoint", [False, True])
def test_lu_solve_matches_torch(shapes, dtype, left, adjoint):
    a, b = random_matrices(shapes[0], dtype, seed=1), random_matrices(shapes[1], dtype, seed=2)
    if not left:
        b = np.ascontiguousarray(b.swapaxes(-1, -2))
    mine, theirs = (L.linalg.lu_solve(*L.linalg.lu_factor(L.tensor(a)), L.tensor(b), left=left, adjoint=adjoint)
                    for L in (ember, torch))
    mine, theirs = mine.resolve_conj().numpy(), theirs.resolve_conj().numpy()
    assert mine.shape == theirs.shape and mine.dtype == theirs.dtype
    tolerance = 1e-3 if dtype in ("float32", "complex64") else 1e-10
    np.testing.assert_allclose(mine, theirs, rtol=tolerance, atol=tolerance)


def test_lu_solve_reads_non_contiguous_operands():
    a = random_matrices((60, 60), "float64", seed=4)
    b = random_matrices((7, 60), "float64", seed=5)
    mine, theirs = (L.linalg.lu_solve(*L.linalg.lu_factor(L.tensor(a).mT), L.tensor(b).mT) for L in (ember, torch))
    # (atol: an entry near 0 takes the rounding of its column's largest, which two LAPACKs round differently)
    np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-10, atol=1e-12 * np.abs(theirs.numpy()).max())


def test_lu_solve_keeps_trsm_columns_apart_on_a_singular_factor():
    LU = np.array([[2.0, 1.0], [0.5, 0.0]])  # U has a zero on its diagonal: trsm divides by it
    pivots = np.array([1, 2], np.int32)
    b = np.array([[1.0, 0.0], [1.0, 0.0]])
    mine, theirs = (L.linalg.lu_solve(L.tensor(LU), L.tensor(pivots), L.tensor(b)) for L in (ember, torch))
    np.testing.assert_array_equal(mine.numpy(), theirs.numpy())


@pytest.mark.parametrize("shape", [(9, 9), (3, 40, 25), (25, 40), (2, 0, 0)])
def test_lu_unpack_permutation_matches_torch(shape):
    a = random_matrices(shape, "float32", seed=6)
    mine, theirs = (L.lu_unpack(*L.linalg.lu_factor(L.tensor(a))) for L in (ember, torch))
    np.testing.assert_array_equal(mine.P.numpy(), theirs.P.numpy())
    np.testing.assert_allclose(mine.L.numpy(), theirs.L.numpy(), rtol=1e-4, atol=1e-5)


def test_many_pivot_vectors_take_the_stacked_swaps():
    a = random_matrices((decompositions._SWAPS_IN_PYTHON + 3, 6, 6), "float64", seed=8)
    mine, theirs = (L.lu_unpack(*L.linalg.lu_factor(L.tensor(a))).P.numpy() for L in (ember, torch))
    np.testing.assert_array_equal(mine, theirs)


@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("unit", [True, False])
def test_triangular_solve_arrays_matches_torch(upper, unit):
    rng = np.random.default_rng(9)
    T = rng.standard_normal((2, 90, 90)) + np.eye(90) * 10
    B = rng.standard_normal((90, 3))
    theirs = torch.linalg.solve_triangular(torch.tensor(T), torch.tensor(B), upper=upper, unitriangular=unit)
    np.testing.assert_allclose(decompositions.triangular_solve_arrays(T, B, upper, unit), theirs.numpy(),
                               rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("left", [True, False])
def test_solve_triangular_on_many_rows_matches_torch(dtype, upper, left):
    a = random_matrices((2, 120, 120), dtype, seed=10) + 6 * np.eye(120, dtype=dtype)
    b = random_matrices((120, 7) if left else (7, 120), dtype, seed=11)
    mine, theirs = (L.linalg.solve_triangular(L.tensor(a), L.tensor(b), upper=upper, left=left) for L in (ember, torch))
    tolerance = 1e-4 if dtype in ("float32", "complex64") else 1e-12
    np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=tolerance, atol=tolerance)


def test_solve_triangular_divides_by_a_zero_diagonal_as_torch():
    a = np.triu(np.ones((3, 3)))
    a[1, 1] = 0
    mine, theirs = (L.linalg.solve_triangular(L.tensor(a), L.tensor(np.ones((3, 2))), upper=True)
                    for L in (ember, torch))
    np.testing.assert_array_equal(mine.numpy(), theirs.numpy())


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("shapes", [((3, 90, 90), (90, 5)), ((40, 40), (2, 40, 3)), ((0, 0), (0, 2)), ((6, 16, 16), (6, 16, 4))])
def test_cholesky_solve_matches_torch(dtype, upper, shapes):
    a = random_matrices(shapes[0], dtype, seed=12)
    n = shapes[0][-1]
    A = a @ np.conj(a.swapaxes(-1, -2)) + n * np.eye(n, dtype=dtype)
    factor = np.linalg.cholesky(A)
    factor = np.ascontiguousarray(np.conj(factor.swapaxes(-1, -2))) if upper else factor
    b = random_matrices(shapes[1], dtype, seed=13)
    mine, theirs = (L.cholesky_solve(L.tensor(b), L.tensor(factor), upper).resolve_conj().numpy() for L in (ember, torch))
    assert mine.shape == theirs.shape and mine.dtype == theirs.dtype
    tolerance = 1e-4 if dtype in ("float32", "complex64") else 1e-12
    np.testing.assert_allclose(mine, theirs, rtol=tolerance, atol=tolerance)


def test_cholesky_solve_of_a_singular_factor_is_nan_as_torch():
    factor, b = np.array([[1.0, 0.0], [1.0, 0.0]]), np.ones((2, 1))
    mine, theirs = (L.cholesky_solve(L.tensor(b), L.tensor(factor)) for L in (ember, torch))
    np.testing.assert_array_equal(mine.numpy(), theirs.numpy())


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,k", [((228, 171), 171), ((3, 70, 50), 50), ((70, 60), 33), ((5, 3), 2), ((40, 40), 0)])
def test_householder_product_by_blocks_matches_torch(dtype, shape, k):
    geqrf = torch.geqrf(torch.tensor(random_matrices(shape, dtype, seed=14)))
    A, tau = geqrf.a.numpy(), np.ascontiguousarray(geqrf.tau.numpy()[..., :k])
    mine, theirs = (L.linalg.householder_product(L.tensor(A), L.tensor(tau)).numpy() for L in (ember, torch))
    assert mine.shape == theirs.shape and mine.dtype == theirs.dtype
    tolerance = 2e-6 if dtype in ("float32", "complex64") else 1e-14
    np.testing.assert_allclose(mine, theirs, rtol=0, atol=tolerance)


def test_householder_product_reads_no_entry_above_the_diagonal():
    geqrf = torch.geqrf(torch.tensor(random_matrices((50, 40), "float64", seed=15)))
    A = geqrf.a.numpy().copy()
    A[np.triu_indices(40)] = np.nan
    mine, theirs = (L.linalg.householder_product(L.tensor(A), L.tensor(geqrf.tau.numpy())) for L in (ember, torch))
    np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=0, atol=1e-14)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(228, 171), (3, 70, 50), (40, 33)])
def test_geqrf_by_panels_matches_torch(dtype, shape):
    a = random_matrices(shape, dtype, seed=16)
    (mine_a, mine_tau), theirs = ember.geqrf(ember.tensor(a)), torch.geqrf(torch.tensor(a))
    tolerance = 2e-5 if dtype in ("float32", "complex64") else 1e-12
    np.testing.assert_allclose(mine_a.numpy(), theirs.a.numpy(), rtol=0, atol=tolerance * np.abs(a).max() * 10)
    np.testing.assert_allclose(mine_tau.numpy(), theirs.tau.numpy(), rtol=0, atol=tolerance)


@pytest.fixture
def narrow_leaves(monkeypatch):
    """Leaves of 3 columns and triangles of 3 rows, so that small matrices take the recursive paths."""
    monkeypatch.setattr(decompositions, "_LU_LEAF_COLUMNS", 3)
    monkeypatch.setattr(decompositions, "_TRIANGLE_LEAF", 3)


@pytest.mark.parametrize("shape", [(9, 9), (10, 7), (7, 10)])
def test_lu_factor_gradients_on_recursive_paths(shape, narrow_leaves):
    a = ember.tensor(random_matrices(shape, "float64", seed=17), requires_grad=True)
    packed = lambda x: ember.linalg.lu_factor(x).LU
    assert ember.autograd.gradcheck(packed, (a,))
    assert ember.autograd.gradgradcheck(packed, (a,))


def test_lu_solve_gradients_on_recursive_paths(narrow_leaves):
    a = ember.tensor(random_matrices((9, 9), "float64", seed=18) + 4 * np.eye(9), requires_grad=True)
    b = ember.tensor(random_matrices((9, 2), "float64", seed=19), requires_grad=True)
    solved = lambda x, y: ember.linalg.lu_solve(*ember.linalg.lu_factor(x), y, adjoint=True)
    assert ember.autograd.gradcheck(solved, (a, b))
    assert ember.autograd.gradgradcheck(solved, (a, b))


def test_lu_solve_without_gradient_on_recursive_paths_matches_torch(narrow_leaves):
    a, b = random_matrices((2, 11, 11), "float64", seed=20), random_matrices((11, 4), "float64", seed=21)
    for adjoint in (False, True):
        mine, theirs = (L.linalg.lu_solve(*L.linalg.lu_factor(L.tensor(a)), L.tensor(b), adjoint=adjoint)
                        for L in (ember, torch))
        np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("shape", [(2, 90, 90), (16, 16)])
def test_cholesky_inverse_matches_torch(dtype, upper, shape):
    a = random_matrices(shape, dtype, seed=22)
    n = shape[-1]
    factor = np.linalg.cholesky(a @ np.conj(a.swapaxes(-1, -2)) + n * np.eye(n, dtype=dtype))
    factor = np.ascontiguousarray(np.conj(factor.swapaxes(-1, -2))) if upper else factor
    mine, theirs = (L.cholesky_inverse(L.tensor(factor), upper).resolve_conj().numpy() for L in (ember, torch))
    assert mine.shape == theirs.shape and mine.dtype == theirs.dtype
    tolerance = 1e-5 if dtype in ("float32", "complex64") else 1e-13
    np.testing.assert_allclose(mine, theirs, rtol=0, atol=tolerance * np.abs(theirs).max())
