"""ember._lapack: the LAPACK routines of NumPy's OpenBLAS, against torch, and the NumPy paths they replace, which
stay where the library is missing (``_lapack.enabled = False`` stands for that)."""
import ctypes

import numpy as np
import pytest
import torch

import ember
from ember._ops._support import wrap
from ember import _lapack
from ember._ops import decompositions
from test_linalg_lu_blocked import random_matrices

DTYPES = ["float32", "float64", "complex64", "complex128"]
SINGLE = ("float32", "complex64")


def tolerance(dtype):
    return 1e-4 if dtype in SINGLE else 1e-11


@pytest.fixture
def numpy_only(monkeypatch):
    monkeypatch.setattr(_lapack, "enabled", False)


@pytest.fixture
def calls(monkeypatch):
    """Counts the calls of each routine of ``_lapack`` that the decompositions make."""
    counted = {}

    def counting(name):
        routine = getattr(_lapack, name)

        def call(*args, **kwargs):
            counted[name] = counted.get(name, 0) + 1
            return routine(*args, **kwargs)
        return call
    for name in ("getrf", "getrs", "trsm", "geqrf", "orgqr"):
        monkeypatch.setattr(_lapack, name, counting(name))
    return counted


def test_numpys_openblas_is_found():
    assert _lapack.available("getrf", np.dtype(np.float64)), "NumPy from a wheel brings OpenBLAS's LAPACK"
    assert not _lapack.available("getrf", np.dtype(np.float16))


def test_disabled_means_unavailable(numpy_only):
    assert not _lapack.available("getrf", np.dtype(np.float64))


def test_without_the_library_the_numpy_paths_answer(monkeypatch, calls):
    monkeypatch.setattr(_lapack, "_candidate_paths", lambda: [])  # as with NumPy built on MKL
    monkeypatch.setattr(_lapack, "_library", None)
    monkeypatch.setattr(_lapack, "_routines", {})
    assert not _lapack.available("getrf", np.dtype(np.float64))
    a = random_matrices((5, 5), "float64", seed=34)
    (LU, pivots, info), (LU_t, pivots_t, info_t) = lu_of_both(a)
    np.testing.assert_array_equal(pivots, pivots_t)
    np.testing.assert_allclose(LU, LU_t, rtol=0, atol=1e-12)
    assert not calls


def test_openblas_threads_follow_set_num_threads():
    _lapack.available("getrf", np.dtype(np.float64))
    count = _lapack._library.scipy_openblas_get_num_threads64_
    count.restype = ctypes.c_int
    before = ember.get_num_threads()
    try:
        ember.set_num_threads(1)
        assert count() == 1
    finally:
        ember.set_num_threads(before)


@pytest.mark.parametrize("n,columns,threads_in_the_call", [(3, 2, 1), (100, 100, 2)])
def test_getrs_runs_small_systems_on_one_thread_and_gives_the_count_back(monkeypatch, n, columns,
                                                                        threads_in_the_call):
    # OpenBLAS's getrs wakes its whole pool for any system: a tiny solve on two threads cost 100 times the CPU
    a = random_matrices((2, n, n), "float64", seed=3) + 3 * np.eye(n)
    b = random_matrices((2, n, columns), "float64", seed=4)
    LU, pivots, _ = _lapack.getrf(a)
    count = _lapack._threads()[0]
    routine, seen = _lapack._function("getrs", np.dtype(np.float64)), []

    def counting_threads(*args):
        seen.append(count())
        return routine(*args)
    monkeypatch.setitem(_lapack._routines, ("getrs", "d"), counting_threads)
    before = ember.get_num_threads()
    try:
        ember.set_num_threads(2)
        np.testing.assert_allclose(_lapack.getrs(LU, pivots, b, False), np.linalg.solve(a, b), rtol=1e-10,
                                   atol=1e-12)
        assert seen == [threads_in_the_call] * 2 and count() == 2
    finally:
        ember.set_num_threads(before)


# ----------------------------------------------------------------- LU


LU_SHAPES = [(5, 5), (1, 1), (7, 4), (4, 7), (3, 6, 6), (2, 3, 5, 4), (0, 4, 4), (0, 0), (3, 0), (2, 0, 3)]


def lu_of_both(a):
    mine = ember.linalg.lu_factor_ex(wrap(a))  # (a as it is laid out, negative strides too, which ember.tensor refuses)
    theirs = torch.linalg.lu_factor_ex(torch.tensor(np.ascontiguousarray(a)))
    return [x.numpy() for x in mine], [x.numpy() for x in theirs]


@pytest.mark.parametrize("shape", LU_SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_getrf_matches_torch(shape, dtype, calls):
    a = random_matrices(shape, dtype)
    (LU, pivots, info), (LU_t, pivots_t, info_t) = lu_of_both(a)
    assert calls.get("getrf") == 1 or not a.size
    assert LU.shape == LU_t.shape and LU.dtype == LU_t.dtype and pivots.dtype == np.int32 == pivots_t.dtype
    np.testing.assert_array_equal(pivots, pivots_t)
    np.testing.assert_array_equal(info, info_t)
    np.testing.assert_allclose(LU, LU_t, rtol=0, atol=tolerance(dtype) * 10)


@pytest.mark.parametrize("shape", LU_SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_getrf_without_lapack_matches_torch(shape, dtype, numpy_only, calls):
    a = random_matrices(shape, dtype)
    (LU, pivots, info), (LU_t, pivots_t, info_t) = lu_of_both(a)
    assert not calls
    np.testing.assert_array_equal(pivots, pivots_t)
    np.testing.assert_allclose(LU, LU_t, rtol=0, atol=tolerance(dtype) * 10)


def test_getrf_reads_a_non_contiguous_stack():
    a = random_matrices((6, 9, 8), "float64", seed=1)[::2, 1:, ::-1].swapaxes(-1, -2)
    (LU, pivots, info), (LU_t, pivots_t, info_t) = lu_of_both(a)
    np.testing.assert_array_equal(pivots, pivots_t)
    np.testing.assert_allclose(LU, LU_t, rtol=0, atol=1e-12)


@pytest.mark.parametrize("dtype", DTYPES)
def test_getrf_reports_the_first_zero_pivot(dtype):
    a = random_matrices((3, 6, 6), dtype, seed=2)
    a[1, :, 2] = 0
    a[2] = 0
    (LU, pivots, info), (LU_t, pivots_t, info_t) = lu_of_both(a)
    assert info.tolist() == info_t.tolist() == [0, 3, 1]
    np.testing.assert_array_equal(pivots, pivots_t)
    assert np.isfinite(LU).all()


@pytest.mark.parametrize("value", [np.nan, np.inf])
def test_non_finite_matrices_take_the_numpy_path(value, calls):
    a = random_matrices((2, 4, 4), "float32", seed=3)
    a[1, 2, 1] = value
    LU, pivots, info = ember.linalg.lu_factor_ex(ember.tensor(a))
    assert "getrf" not in calls
    LU_numpy, pivots_numpy, info_numpy = decompositions._lu_by_numpy(a)
    np.testing.assert_array_equal(pivots.numpy(), pivots_numpy)
    np.testing.assert_array_equal(LU.numpy(), LU_numpy)


def test_large_stacks_of_tiny_matrices_take_the_numpy_path(calls):
    a = random_matrices((decompositions._LU_MATRICES_PER_COLUMN * 2 + 1, 2, 2), "float64", seed=4)
    (LU, pivots, info), (LU_t, pivots_t, info_t) = lu_of_both(a)
    assert "getrf" not in calls
    np.testing.assert_array_equal(pivots, pivots_t)
    np.testing.assert_allclose(LU, LU_t, rtol=0, atol=1e-12)


@pytest.mark.parametrize("shape", [(5, 5), (6, 4), (4, 6)])
def test_lu_factor_gradients(shape):
    a = ember.tensor(random_matrices(shape, "float64", seed=5), requires_grad=True)
    packed = lambda x: ember.linalg.lu_factor(x).LU
    assert ember.autograd.gradcheck(packed, (a,))
    assert ember.autograd.gradgradcheck(packed, (a,))


def test_getrf_float32_accuracy_is_torchs():
    """The factors' residual |P L U - A| in float32, against a float64 reference, is no worse than torch's."""
    a = random_matrices((512, 512), "float32", seed=6)
    residuals = []
    for library in (ember, torch):
        P, L, U = (x.numpy().astype(np.float64) for x in library.linalg.lu(library.tensor(a)))
        residuals.append(np.abs(P @ L @ U - a).max())
    assert residuals[0] <= residuals[1]


def float32_solve_errors(solve, a, b, reference):
    """The largest error of ``solve(library, A, B)`` in float32, by ember and by torch, relative to the largest
    entry of the float64 ``reference``."""
    return [np.abs(solve(library, library.tensor(a), library.tensor(b)).numpy() - reference).max()
            / np.abs(reference).max() for library in (ember, torch)]


def test_solve_triangular_and_lu_solve_float32_accuracy_is_torchs():
    rng = np.random.default_rng(33)
    a = (rng.standard_normal((300, 300)) + 30 * np.eye(300)).astype(np.float32)
    b = rng.standard_normal((300, 40)).astype(np.float32)
    T = np.triu(a)
    errors = float32_solve_errors(lambda L, x, y: L.linalg.solve_triangular(x, y, upper=True), T, b,
                                  np.linalg.solve(T.astype(np.float64), b.astype(np.float64)))
    assert errors[0] <= errors[1]
    LU, pivots = torch.linalg.lu_factor(torch.tensor(a))  # the same factors for both: only the solve differs
    P, L, U = (x.double().numpy() for x in torch.lu_unpack(LU, pivots))
    reference = np.linalg.solve(P @ L @ U, b.astype(np.float64))
    solve = lambda library, x, y: library.linalg.lu_solve(library.tensor(LU.numpy()), library.tensor(pivots.numpy()), y)
    errors = float32_solve_errors(solve, a, b, reference)
    assert errors[0] <= errors[1]


# ----------------------------------------------------------------- solves with the LU factors, triangular solves


SOLVE_SHAPES = [((6, 6), (6, 3)), ((3, 6, 6), (6, 2)), ((6, 6), (2, 6, 4)), ((2, 1, 5, 5), (3, 5, 1)), ((1, 1), (1, 1)),
                ((0, 0), (0, 2)), ((4, 4), (4, 0)), ((0, 3, 3), (3, 2))]


@pytest.fixture(params=[True, False], ids=["lapack", "numpy"])
def lapack(request, monkeypatch):
    monkeypatch.setattr(_lapack, "enabled", request.param)
    return request.param


def solve_operands(shapes, dtype, seed):
    """A well-conditioned A (its diagonal raised) and B of the given shapes."""
    a = random_matrices(shapes[0], dtype, seed) + 3 * np.eye(shapes[0][-1], dtype=dtype)
    return a, random_matrices(shapes[1], dtype, seed + 1)


@pytest.mark.parametrize("shapes", SOLVE_SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("adjoint", [False, True])
def test_lu_solve_matches_torch(shapes, dtype, adjoint, lapack, calls):
    a, b = solve_operands(shapes, dtype, seed=10)
    mine, theirs = (L.linalg.lu_solve(*L.linalg.lu_factor(L.tensor(a)), L.tensor(b), adjoint=adjoint).resolve_conj()
                    for L in (ember, torch))
    assert ("getrs" in calls) == lapack or not mine.numel()
    mine, theirs = mine.numpy(), theirs.numpy()
    assert mine.shape == theirs.shape and mine.dtype == theirs.dtype
    np.testing.assert_allclose(mine, theirs, rtol=tolerance(dtype), atol=tolerance(dtype))


def test_lu_solve_reads_factors_in_either_layout():
    a = (random_matrices((2, 7, 7), "complex128", seed=12) + 3 * np.eye(7)).astype("complex128")
    b = random_matrices((2, 7, 3), "complex128", seed=13)
    LU, pivots, _ = _lapack.getrf(a)
    for factors in (LU, np.ascontiguousarray(LU)):
        for adjoint in (False, True):
            expected = np.linalg.solve(np.conj(a.swapaxes(-1, -2)) if adjoint else a, b)
            np.testing.assert_allclose(_lapack.getrs(factors, pivots, b, adjoint), expected, rtol=1e-12)


def test_lu_solve_with_pivots_out_of_range_takes_the_numpy_path(calls):
    LU = random_matrices((3, 3), "float64", seed=14)
    with pytest.raises(IndexError):
        decompositions.lu_solve_arrays(LU, np.array([1, 4, 3], np.int32), np.ones((3, 1)), False)
    assert "getrs" not in calls


def triangles(T, upper, unit):
    kept = np.triu(T) if upper else np.tril(T)
    if unit:
        kept = kept - kept * np.eye(T.shape[-1]) + np.eye(T.shape[-1])
    return kept


def layouts(T):
    """T as it is, with its columns contiguous, and read backwards."""
    return {"rows": T, "columns": np.ascontiguousarray(T.swapaxes(-1, -2)).swapaxes(-1, -2),
            "strided": np.ascontiguousarray(T[..., ::-1, ::-1])[..., ::-1, ::-1]}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("unit", [True, False])
@pytest.mark.parametrize("adjoint", [False, True])
@pytest.mark.parametrize("layout", ["rows", "columns", "strided"])
def test_trsm_in_every_layout_matches_numpy(dtype, upper, unit, adjoint, layout):
    T = (random_matrices((3, 7, 7), dtype, seed=15) + 4 * np.eye(7)).astype(dtype)
    B = random_matrices((3, 7, 5), dtype, seed=16)
    kept = triangles(T, upper, unit)
    expected = np.linalg.solve(np.conj(kept.swapaxes(-1, -2)) if adjoint else kept, B)
    solution = _lapack.trsm(layouts(T)[layout], B, upper, unit, adjoint)
    np.testing.assert_allclose(solution, expected, rtol=tolerance(dtype), atol=tolerance(dtype))


@pytest.mark.parametrize("shapes", SOLVE_SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("left", [True, False])
def test_solve_triangular_matches_torch(shapes, dtype, left, lapack, calls):
    T, B = solve_operands(shapes, dtype, seed=17)
    if not left:
        B = np.ascontiguousarray(B.swapaxes(-1, -2))
    mine, theirs = (L.linalg.solve_triangular(L.tensor(T), L.tensor(B), upper=False, left=left) for L in (ember, torch))
    assert ("trsm" in calls) == lapack or not mine.numel()
    np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=tolerance(dtype), atol=tolerance(dtype))


def test_a_zero_on_the_diagonal_gives_torchs_inf_and_nan_column_by_column():
    T = np.array([[2.0, 1.0, 0.0], [0.0, 0.0, 3.0], [0.0, 0.0, 1.0]])
    B = np.array([[1.0, 0.0], [1.0, 0.0], [1.0, 2.0]])
    mine, theirs = (L.linalg.solve_triangular(L.tensor(T), L.tensor(B), upper=True) for L in (ember, torch))
    np.testing.assert_array_equal(mine.numpy(), theirs.numpy())


def test_stacks_of_tiny_triangles_take_the_numpy_path(calls):
    T = random_matrices((4 * decompositions._TRIANGULAR_MATRICES_PER_ROW + 1, 4, 4), "float32", seed=19)
    decompositions.triangular_solve_arrays(T + 4 * np.eye(4, dtype=np.float32), T, True, False)
    assert "trsm" not in calls


def test_triangular_and_lu_solve_gradients(lapack):
    a = ember.tensor(random_matrices((5, 5), "float64", seed=20) + 3 * np.eye(5), requires_grad=True)
    b = ember.tensor(random_matrices((5, 2), "float64", seed=21), requires_grad=True)
    triangular = lambda x, y: ember.linalg.solve_triangular(x, y, upper=True)
    lu_solved = lambda x, y: ember.linalg.lu_solve(*ember.linalg.lu_factor(x), y, adjoint=True)
    for function in (triangular, lu_solved):
        assert ember.autograd.gradcheck(function, (a, b))
        assert ember.autograd.gradgradcheck(function, (a, b))


# ----------------------------------------------------------------- Householder QR


QR_SHAPES = [(7, 5), (5, 7), (6, 6), (1, 1), (3, 8, 4), (2, 1, 4, 3), (0, 3), (3, 0), (0, 4, 4)]
LARGE_QR_SHAPES = [(100, 97), (97, 100), (2, 130, 100), (0, 100, 100)]


@pytest.mark.parametrize("shape", QR_SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_geqrf_and_householder_product_match_torch(shape, dtype, lapack, calls):
    a = random_matrices(shape, dtype, seed=22)
    mine, theirs = ember.geqrf(ember.tensor(a)), torch.geqrf(torch.tensor(a))
    if a.size:
        assert ("geqrf" in calls) == lapack
    atol = tolerance(dtype) * 10
    np.testing.assert_allclose(mine[0].numpy(), theirs[0].numpy(), rtol=0, atol=atol)
    np.testing.assert_allclose(mine[1].numpy(), theirs[1].numpy(), rtol=0, atol=atol)
    if shape[-2] < shape[-1]:
        return
    Q, Q_t = (L.linalg.householder_product(*factors) for L, factors in ((ember, mine), (torch, theirs)))
    if Q.numel():
        assert ("orgqr" in calls) == lapack
    np.testing.assert_allclose(Q.numpy(), Q_t.numpy(), rtol=0, atol=atol)


def test_householder_product_broadcasts_and_takes_fewer_reflectors(lapack, calls):
    a = random_matrices((2, 6, 4), "complex128", seed=23)
    tau = random_matrices((3, 1, 2), "complex128", seed=24)
    mine = ember.linalg.householder_product(ember.tensor(a).expand(3, 2, 6, 4), ember.tensor(tau).expand(3, 2, 2))
    theirs = torch.linalg.householder_product(torch.tensor(a).expand(3, 2, 6, 4), torch.tensor(tau).expand(3, 2, 2))
    np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=0, atol=1e-12)
    assert ("orgqr" in calls) == lapack


def test_stacks_of_tiny_matrices_take_the_numpy_householder_paths(calls):
    a = random_matrices((16 * decompositions._GEQRF_MATRICES_PER_COLUMN + 1, 2, 2), "float64", seed=25)
    decompositions.householder_product_arrays(*decompositions.householder_arrays(a))
    assert not calls


def test_householder_product_gradients(lapack):
    a = ember.tensor(random_matrices((5, 3), "float64", seed=26), requires_grad=True)
    tau = ember.tensor(random_matrices((2,), "float64", seed=27), requires_grad=True)
    assert ember.autograd.gradcheck(ember.linalg.householder_product, (a, tau))
    assert ember.autograd.gradgradcheck(ember.linalg.householder_product, (a, tau))


def test_geqrf_float32_accuracy_is_torchs():
    """|Q R - A| in float32, Q from the reflectors, against a float64 reference: no worse than torch's."""
    a = random_matrices((228, 171), "float32", seed=28)
    residuals = []
    for library in (ember, torch):
        reflectors, tau = library.geqrf(library.tensor(a))
        Q = library.linalg.householder_product(reflectors, tau).numpy().astype(np.float64)
        residuals.append(np.abs(Q @ np.triu(reflectors.numpy().astype(np.float64))[:171] - a).max())
    assert residuals[0] <= 2 * residuals[1]


@pytest.mark.parametrize("shape", QR_SHAPES + LARGE_QR_SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_qr_matches_torch(shape, dtype, mode, lapack, calls):
    a = random_matrices(shape, dtype, seed=29)
    mine, theirs = ember.linalg.qr(ember.tensor(a), mode=mode), torch.linalg.qr(torch.tensor(a), mode=mode)
    if a.size:
        assert ("geqrf" in calls) == (lapack and min(shape[-2:]) >= decompositions._QR_BY_LAPACK_FROM)
    for x, y in zip(mine, theirs):
        assert x.shape == y.shape and x.numpy().dtype == y.numpy().dtype
        scale = np.abs(y.numpy()).max(initial=1.0)
        np.testing.assert_allclose(x.numpy(), y.numpy(), rtol=0, atol=tolerance(dtype) * 10 * scale)


def test_qr_gradients(lapack):
    a = ember.tensor(random_matrices((5, 3), "float64", seed=30), requires_grad=True)
    for mode in ("reduced", "complete"):
        function = lambda x: tuple(ember.linalg.qr(x[..., :3, :] if mode == "complete" else x, mode=mode))
        assert ember.autograd.gradcheck(function, (a,))
        assert ember.autograd.gradgradcheck(function, (a,))


# ----------------------------------------------------------------- Cholesky solves


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("layout", ["rows", "columns"])
def test_potrs_matches_torchs_cholesky_solve(dtype, upper, layout):
    a = random_matrices((2, 6, 6), dtype, seed=31)
    A = a @ np.conj(a.swapaxes(-1, -2)) + 6 * np.eye(6, dtype=dtype)
    factor = torch.linalg.cholesky(torch.tensor(A), upper=upper)
    B = random_matrices((3, 1, 6, 2), dtype, seed=32)
    expected = torch.cholesky_solve(torch.tensor(B), factor, upper=upper).numpy()
    solution = _lapack.potrs(layouts(factor.numpy())[layout], B, upper)
    assert solution.shape == expected.shape
    np.testing.assert_allclose(solution, expected, rtol=tolerance(dtype), atol=tolerance(dtype))
