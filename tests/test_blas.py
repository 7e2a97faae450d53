"""ember's product kernel (``ember._blas``): MKL's gemm where the ``mkl`` extra is installed (on Intel's CPUs,
or wherever ``EMBER_MKL=1``), NumPy's matmul otherwise, with equal results for every layout and dtype, and
gradients that still check."""
import contextlib
import os
import subprocess
import sys
from importlib import metadata

import numpy as np
import pytest
import torch
from hypothesis import given, strategies as st

import ember
from ember import _blas

try:
    MKL_INSTALLED = bool(metadata.files("mkl"))
except metadata.PackageNotFoundError:
    MKL_INSTALLED = False


@pytest.fixture
def mkl():
    """MKL taken for products whatever the CPU (as ``EMBER_MKL=1``), then the choice made again as before."""
    before = os.environ.get("EMBER_MKL")
    os.environ["EMBER_MKL"] = "1"
    try:
        if not _blas.reload():
            pytest.skip("the mkl extra is not installed")
        yield
    finally:
        if before is None:
            del os.environ["EMBER_MKL"]
        else:
            os.environ["EMBER_MKL"] = before
        _blas.reload()


@pytest.fixture(params=["mkl", "numpy"])
def kernel(request, monkeypatch):
    """Each test once on MKL (every product, however small: the thresholds are lowered) and once with MKL
    switched off; the value is the expected change of ``_blas.calls`` per product MKL takes."""
    if request.param == "mkl":
        request.getfixturevalue("mkl")
        monkeypatch.setattr(_blas, "THRESHOLD", 1)
        monkeypatch.setattr(_blas, "BATCHED_THRESHOLD", 1)
        yield 1
    else:
        with ember.backends.mkl.flags(enabled=False):
            yield 0


def _taken() -> int:
    return _blas.calls["gemm"] + _blas.calls["batched"]


def _check(x, y, expected_calls, out=None):
    before = _taken()
    expected = np.matmul(x, y) if out is None else out + np.matmul(x, y)
    result = _blas.matmul(x, y, out=out)
    tolerance = 1e-5 if x.dtype in (np.float32, np.complex64) else 1e-12
    np.testing.assert_allclose(result, expected, rtol=tolerance, atol=tolerance * 10)
    assert result.shape == expected.shape and result.dtype == expected.dtype
    assert _taken() - before == expected_calls


def _array(shape, dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    values = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        values = values + 1j * rng.standard_normal(shape)
    return values.astype(dtype)


LAYOUTS = {
    "C": lambda a: a,
    "F": np.asfortranarray,
    "transposed": lambda a: np.ascontiguousarray(a.T).T,
    "row-strided": lambda a: np.pad(a, ((0, 0), (0, 3)))[:, :a.shape[1]],
    "column-strided": lambda a: np.pad(a, ((0, 2), (0, 0))).T.copy().T[:a.shape[0]],
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
@pytest.mark.parametrize("left", LAYOUTS)
@pytest.mark.parametrize("right", LAYOUTS)
def test_two_dimensional_layouts(kernel, dtype, left, right):
    x, y = LAYOUTS[left](_array((7, 5), dtype)), LAYOUTS[right](_array((5, 6), dtype, 1))
    _check(x, y, kernel)


@pytest.mark.parametrize("shapes", [((1, 5), (5, 6)), ((7, 1), (1, 6)), ((7, 5), (5, 1)), ((1, 1), (1, 1))])
def test_one_row_and_one_column(kernel, shapes):
    (x_shape, y_shape) = shapes
    x, y = _array(x_shape), _array(y_shape, seed=1)
    _check(x, y, kernel)
    _check(np.asfortranarray(x), y.T.copy().T, kernel)


@pytest.mark.parametrize("x_shape, y_shape", [((3, 4, 5), (5, 2)), ((3, 4, 5), (3, 5, 2)), ((1, 4, 5), (3, 5, 2)),
                                              ((2, 3, 4, 5), (5, 2)), ((2, 1, 4, 5), (1, 1, 5, 2)),
                                              ((4, 5), (3, 5, 2))])
def test_batches_and_broadcast_batches(kernel, x_shape, y_shape):
    x, y = _array(x_shape), _array(y_shape, seed=1)
    _check(x, y, kernel)
    _check(np.swapaxes(np.swapaxes(x, -1, -2).copy(), -1, -2), y, kernel)  # each matrix transposed in memory


def test_batch_dims_without_one_stride_go_to_numpy(kernel):
    x = _array((2, 3, 4, 5))
    y = np.broadcast_to(_array((3, 5, 2), seed=1), (2, 3, 5, 2))
    _check(x, y, 0)  # y's batch strides are (0, 80): no single stride walks it, so one gemm call cannot
    _check(_array((2, 3, 4, 5)), _array((2, 1, 5, 2), seed=1), 0)


@pytest.mark.parametrize("make", [
    lambda: (_array((6, 8))[:, ::2], _array((4, 3))),  # no contiguous dim
    lambda: (_array((4, 5))[::-1], _array((5, 3))),  # negative strides
    lambda: (_array((4, 5)).astype(np.float16), _array((5, 3)).astype(np.float16)),
    lambda: (np.arange(20).reshape(4, 5), np.arange(15).reshape(5, 3)),
    lambda: (np.ones((4, 5), bool), np.ones((5, 3), bool)),
    lambda: (_array((4, 5), np.float32), _array((5, 3))),  # mixed dtypes: NumPy promotes
    lambda: (_array((4, 5)).astype(">f8"), _array((5, 3)).astype(">f8")),
    lambda: (_array(5), _array((5, 3))),
])
def test_what_cblas_cannot_read_goes_to_numpy(kernel, make):
    _check(*make(), 0)


@pytest.mark.parametrize("x_shape, y_shape", [((0, 5), (5, 3)), ((4, 0), (0, 3)), ((4, 5), (5, 0)), ((0, 4, 5), (5, 3))])
def test_empty_products(kernel, x_shape, y_shape):
    _check(_array(x_shape), _array(y_shape), 0)  # nothing to multiply: NumPy's answer (zeros where k is 0)


@pytest.mark.parametrize("dtype", [np.float32, np.complex128])
def test_accumulating_into_out(kernel, dtype):
    x, y = _array((3, 4, 5), dtype), _array((3, 5, 2), dtype, 1)
    _check(x, y, kernel, out=_array((3, 4, 2), dtype, 2))
    _check(x[0], y[0], kernel, out=_array((4, 2), dtype, 3))
    _check(x[0], y[0], 0, out=_array((2, 4), dtype).T)  # out not C-contiguous: NumPy adds


@pytest.mark.parametrize("dtype", [np.float32, np.complex128])
def test_writing_over_out(kernel, dtype):
    # add=False: out's old values are gone, the product is written into it in place
    x, y = _array((3, 4, 5), dtype), _array((5, 2), dtype, 1)
    for out in (_array((3, 4, 2), dtype, 2), np.full((3, 4, 2), np.nan, dtype)):
        before = _taken()
        result = _blas.matmul(x, y, out=out, add=False)
        assert result is out and _taken() - before == kernel
        np.testing.assert_allclose(out, np.matmul(x, y), rtol=1e-5, atol=1e-5)


@pytest.mark.usefixtures("mkl")
@given(st.integers(1, 9), st.integers(1, 9), st.integers(1, 9), st.sampled_from(list(LAYOUTS)),
       st.sampled_from(list(LAYOUTS)), st.sampled_from([np.float32, np.float64, np.complex64]))
def test_random_shapes_and_layouts(m, k, n, left, right, dtype):
    with ember.backends.mkl.flags(enabled=True):
        saved, _blas.THRESHOLD = _blas.THRESHOLD, 1
        try:
            x, y = LAYOUTS[left](_array((m, k), dtype)), LAYOUTS[right](_array((k, n), dtype, 1))
            _check(x, y, 1 if _blas.loaded() else 0)
        finally:
            _blas.THRESHOLD = saved


def test_small_products_stay_on_numpy():
    before = _taken()
    x = _array((32, 32))
    np.testing.assert_array_equal(_blas.matmul(x, x), x @ x)
    np.testing.assert_array_equal(_blas.matmul(np.stack([x] * 8), x), np.stack([x] * 8) @ x)
    assert _taken() == before


@pytest.mark.usefixtures("mkl")
def test_installed_mkl_is_taken_by_large_products():
    assert ember.backends.mkl.is_available()
    before = dict(_blas.calls)
    a, b = ember.randn(512, 128), ember.randn(128, 512)
    (a @ b).sum()
    ember.nn.functional.linear(a, ember.randn(64, 128))
    ember.bmm(ember.randn(4, 128, 128), ember.randn(4, 128, 128))
    assert _blas.calls["gemm"] == before["gemm"] + 2 and _blas.calls["batched"] == before["batched"] + 1


@pytest.mark.usefixtures("mkl")
def test_set_num_threads_sizes_mkl_too():
    assert _blas.loaded()
    before = ember.get_num_threads()
    try:
        ember.set_num_threads(1)
        assert _blas.threads() == 1 and ember.get_num_threads() == 1
        ember.set_num_threads(2)
        assert _blas.threads() == 2 and ember.get_num_threads() == 2
        x = _array((512, 512), np.float32)  # two threads, beside torch's OpenMP runtime: each does its share
        np.testing.assert_allclose(_blas.matmul(x, x), x.astype(np.float64) @ x, rtol=1e-3, atol=1e-3)
    finally:
        ember.set_num_threads(before)


_PROBE = """
import numpy as np
import ember
from ember import _blas
def mapped():
    return any("mkl_rt" in line for line in open("/proc/self/maps"))
at_import = mapped()
ember.set_num_threads(1)  # before MKL is loaded: it takes the count when it loads
ember.ones(256, 256) @ ember.ones(256, 256)
print(at_import, mapped(), ember.backends.mkl.is_available(), _blas.calls["gemm"], _blas.threads())
if _blas.loaded():  # two threads on Intel's OpenMP runtime, then torch's runtime loaded after it
    ember.set_num_threads(2)
    x = np.random.default_rng(0).standard_normal((512, 512)).astype(np.float32)
    exact = x.astype(np.float64) @ x
    first = _blas.matmul(x, x)
    import torch
    torch.set_num_threads(2)
    by_torch = (torch.from_numpy(x) @ torch.from_numpy(x)).numpy()
    print(all(np.allclose(r, exact, rtol=1e-3, atol=1e-3) for r in (first, by_torch, _blas.matmul(x, x))))
"""


@pytest.mark.skipif(not MKL_INSTALLED or not os.path.exists("/proc/self/maps"),
                    reason="needs the mkl extra and /proc (Linux)")
@pytest.mark.parametrize("switch, expected", [("1", "False True True 1 1 True"), ("0", "False False False 0 None"),
                                               (None, "on Intel's CPUs as with 1, elsewhere not loaded")])
def test_loaded_on_the_first_large_product_kept_out_by_the_variable_and_right_beside_torch(switch, expected):
    environment = dict(os.environ, EMBER_MKL=switch or "")
    if switch is None:
        del environment["EMBER_MKL"]
        expected = "False True True 1 1 True" if _blas._intel_cpu() else "False False True 0 None"
    done = subprocess.run([sys.executable, "-c", _PROBE], env=environment, capture_output=True, text=True,
                          check=True)
    assert done.stdout.split() == expected.split()


@pytest.mark.parametrize("variable, installed, intel, expected", [
    (None, True, True, True), (None, True, False, False), ("1", True, False, True), ("0", True, True, False),
    (None, False, True, False), ("1", False, False, False),
])
def test_mkl_is_wanted_where_installed_on_intel_cpus_or_asked_for(monkeypatch, variable, installed, intel, expected):
    if variable is None:
        monkeypatch.delenv("EMBER_MKL", raising=False)
    else:
        monkeypatch.setenv("EMBER_MKL", variable)
    monkeypatch.setattr(_blas, "_installed_file", lambda *args: "/lib/libmkl_rt.so" if installed else None)
    monkeypatch.setattr(_blas, "_intel_cpu", lambda: intel)
    assert _blas.mkl_wanted() is expected
    assert _blas.mkl_installed() is (installed and variable != "0")


def test_flags_restore_the_switch():
    assert ember.backends.mkl.enabled
    with ember.backends.mkl.flags(enabled=False):
        assert not ember.backends.mkl.enabled
    assert ember.backends.mkl.enabled


def _gradcheck(function, *shapes):
    inputs = [ember.randn(*shape, dtype=ember.float64, requires_grad=True) for shape in shapes]
    assert ember.autograd.gradcheck(function, inputs)
    assert ember.autograd.gradgradcheck(function, inputs)


@pytest.mark.parametrize("function, shapes", [
    (ember.matmul, [(3, 4), (4, 5)]),
    (ember.matmul, [(2, 3, 4), (4, 5)]),
    (ember.bmm, [(2, 3, 4), (2, 4, 5)]),
    (lambda x, w, b: ember.nn.functional.linear(x, w, b), [(3, 4), (5, 4), (5,)]),
    (lambda b, x, y: ember.baddbmm(b, x, y, beta=0.5, alpha=2.0), [(2, 3, 5), (2, 3, 4), (2, 4, 5)]),
    (lambda x, w: ember.nn.functional.conv2d(x, w, padding=1), [(2, 2, 5, 5), (3, 2, 3, 3)]),
    (lambda x, y: ember.einsum("bij,bjk->bik", x, y), [(2, 3, 4), (2, 4, 5)]),
    (lambda q, k, v: ember.nn.functional.scaled_dot_product_attention(q, k, v), [(2, 3, 4)] * 3),
])
def test_gradients_check_through_the_kernel(kernel, function, shapes):
    before = _taken()
    ember.manual_seed(0)
    with _one_thread():  # the kernel fixture sends gradcheck's thousands of tiny products, which no pool speeds
        _gradcheck(function, *shapes)  # up, to MKL: on its thread pool they took five times the CPU
    assert (_taken() > before) == bool(kernel)


@contextlib.contextmanager
def _one_thread():
    before = ember.get_num_threads()
    ember.set_num_threads(1)
    try:
        yield
    finally:
        ember.set_num_threads(before)


def test_layers_match_torch_through_the_kernel(kernel):
    rng = np.random.default_rng(0)
    x, w, b = (rng.standard_normal(s).astype(np.float32) for s in [(4, 3, 9, 9), (6, 3, 3, 3), (6,)])
    values = []
    for lib in (ember, torch):
        xs, ws, bs = (lib.tensor(a, requires_grad=True) for a in (x, w, b))
        y = lib.nn.functional.conv2d(xs, ws, bs, padding=1).flatten(1)
        out = lib.nn.functional.linear(y, lib.ones(5, y.shape[1]) / 100)
        out.square().sum().backward()
        values.append([t.detach().numpy() for t in (out, xs.grad, ws.grad, bs.grad)])
    for mine, theirs in zip(*values):
        np.testing.assert_allclose(mine, theirs, rtol=1e-4, atol=1e-4)


def test_config_reports_the_products_kernel():
    shown = ember.__config__.show()
    assert shown.startswith("ember ") and f"NumPy {np.__version__}" in shown
    if _blas.loaded():
        assert "Math Kernel Library" in shown and "mkl_get_max_threads() : " in ember.__config__.parallel_info()
    elif MKL_INSTALLED:
        assert "the mkl extra is installed, but on CPUs other than Intel's" in shown
    else:
        assert "the mkl extra is not installed" in shown


@pytest.fixture
def openblas_adds(monkeypatch):
    """MKL off, every product added into ``out`` offered to NumPy's OpenBLAS (its threshold lowered): skipped where
    that library has no gemm to offer it to."""
    from ember import _lapack

    if not _lapack.available("gemm", np.dtype(np.float64)):
        pytest.skip("NumPy's OpenBLAS, or its cblas gemm, is not there")
    monkeypatch.setattr(_blas, "ADDED_THRESHOLD", 1)
    with ember.backends.mkl.flags(enabled=False):
        yield


def _added(x, y, out, expected_calls: int) -> None:
    before, expected = _blas.calls["openblas_gemm"], out + np.matmul(x, y)
    result = _blas.matmul(x, y, out=out)
    assert result is out and _blas.calls["openblas_gemm"] - before == expected_calls
    tolerance = 1e-5 if x.dtype == np.float32 else 1e-12
    np.testing.assert_allclose(out, expected, rtol=tolerance, atol=tolerance * 10)


@pytest.mark.usefixtures("openblas_adds")
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("left", LAYOUTS)
@pytest.mark.parametrize("right", LAYOUTS)
def test_products_added_into_out_by_numpys_openblas_in_every_readable_layout(dtype, left, right):
    x, y = LAYOUTS[left](_array((7, 5), dtype)), LAYOUTS[right](_array((5, 6), dtype, 1))
    _added(x, y, _array((7, 6), dtype, 2), 1)
    _added(x, y, np.pad(_array((7, 6), dtype, 3), ((0, 0), (0, 2)))[:, :6], 1)  # out's rows one stride apart


@pytest.mark.usefixtures("openblas_adds")
@pytest.mark.parametrize("make", [
    lambda: (_array((4, 5)), _array((5, 3)), _array((3, 4)).T),  # out's columns contiguous: gemm writes rows
    lambda: (_array((4, 5)).astype(np.complex128), _array((5, 3)).astype(np.complex128),
             _array((4, 3)).astype(np.complex128)),
    lambda: (_array((4, 5), np.float32), _array((5, 3), np.float32), _array((4, 3))),  # out of another dtype
    lambda: (_array((6, 8))[:, ::2], _array((4, 3)), _array((6, 3))),  # no contiguous dim
    lambda: (_array((3, 4, 5)), _array((5, 2)), _array((3, 4, 2))),  # a stack
    lambda: (_array((4, 0)), _array((0, 3)), _array((4, 3))),  # nothing to add
])
def test_what_gemm_cannot_add_in_place_numpy_adds(make):
    _added(*make(), 0)


@pytest.mark.usefixtures("openblas_adds")
def test_an_out_that_shares_memory_with_an_operand_is_added_by_numpy():
    both = _array((4, 8))
    x, out = both[:, :4], both[:, 4:]  # gemm would read x while it writes out: NumPy's temporary keeps them apart
    _added(x, _array((4, 4), seed=1), out, 0)


def test_small_or_switched_off_adds_stay_on_numpy(monkeypatch):
    from ember import _lapack

    x, y = _array((128, 64), np.float32), _array((64, 128), np.float32, 1)
    with ember.backends.mkl.flags(enabled=False):
        _added(x[:64], y[:, :64], _array((64, 64), np.float32, 2), 0)  # 4,096 entries: the temporary costs less
        monkeypatch.setattr(_lapack, "enabled", False)
        _added(x, y, _array((128, 128), np.float32, 2), 0)
        monkeypatch.setattr(_lapack, "enabled", True)
        _added(x, y, _array((128, 128), np.float32, 2), 1 if _lapack.available("gemm", x.dtype) else 0)
