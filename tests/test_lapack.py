"""ember._lapack: the LAPACK routines of NumPy's OpenBLAS, against torch, and the NumPy paths they replace, which
stay where the library is missing (``_lapack.enabled = False`` stands for that)."""
import ctypes

import numpy as np
import pytest
import torch

import ember
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


# ----------------------------------------------------------------- LU


LU_SHAPES = [(5, 5), (1, 1), (7, 4), (4, 7), (3, 6, 6), (2, 3, 5, 4), (0, 4, 4), (0, 0), (3, 0), (2, 0, 3)]


def lu_of_both(a):
    mine = ember.linalg.lu_factor_ex(ember.tensor(a))
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
    assert residuals[0] <= 2 * residuals[1]
