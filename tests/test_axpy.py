"""``_axpy.axpy_single``: float32 ``y += alpha * x`` rounded once by OpenBLAS's saxpy, and the ops that take it
(``add``/``sub`` with alpha, ``add_``/``sub_`` with alpha, ``lerp`` with one weight) bit for bit as torch's,
with saxpy and without it."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import ember
from ember import _axpy, _lapack
from ember._ops.arithmetic import fused_single


@pytest.fixture(params=["saxpy", "double"])
def way(request, monkeypatch):
    """Each test runs with saxpy where the library has a fused one, and with the double-precision way."""
    if request.param == "double":
        monkeypatch.setattr(_lapack, "enabled", False)
    elif not _axpy._checked():
        pytest.skip("this OpenBLAS has no saxpy that rounds once")
    return request.param


def _arrays(n: int, seed: int = 0) -> tuple:
    rng = np.random.default_rng(seed)
    x, y = rng.standard_normal((2, n)).astype(np.float32)
    y[::3] = x[::3] * np.float32(-0.3) * np.float32(1 + 2 ** -21)  # sums that nearly cancel: roundings differ most
    return x, y


def _calls(monkeypatch) -> list:
    """Record the sizes that saxpy is called with."""
    sizes = []
    real = _axpy.axpy_single

    def counted(alpha, x, y):
        done = real(alpha, x, y)
        if done:
            sizes.append(x.size)
        return done
    for module in ("ember._ops.arithmetic", "ember._ops.inplace"):
        monkeypatch.setattr(f"{module}.axpy_single", counted)
    return sizes


@pytest.mark.parametrize("n", [_axpy.FROM - 1, _axpy.FROM, 10_007])
@pytest.mark.parametrize("alpha", [0.3, -2.7, 1e-3, 5])
def test_add_and_sub_with_alpha_as_torch(way, monkeypatch, n, alpha):
    sizes = _calls(monkeypatch)
    x, y = _arrays(n)
    for op in ("add", "sub"):
        results = [getattr(lib, op)(lib.tensor(y), lib.tensor(x), alpha=alpha).numpy() for lib in (ember, torch)]
        np.testing.assert_array_equal(*results)
        results = []
        for lib in (ember, torch):
            target = lib.tensor(y)
            getattr(target, op + "_")(lib.tensor(x), alpha=alpha)
            results.append(target.numpy())
        np.testing.assert_array_equal(*results)
    assert sizes == ([n] * 4 if way == "saxpy" and n >= _axpy.FROM else [])


@pytest.mark.parametrize("weight", [0.3, 0.5, 0.9, -1.5, float("nan")])
def test_lerp_with_one_weight_as_torch(way, monkeypatch, weight):
    sizes = _calls(monkeypatch)
    x, y = _arrays(10_007)
    results = [lib.lerp(lib.tensor(x), lib.tensor(y), weight).numpy() for lib in (ember, torch)]
    np.testing.assert_array_equal(*results)
    assert sizes == ([10_007] if way == "saxpy" and weight == weight else [])  # (a nan weight: the double way)


def test_layouts_saxpy_cannot_read_take_the_double_way_as_torch(way):
    x, y = _arrays(2 * 10_007)
    results = []
    for lib in (ember, torch):
        a, b = lib.tensor(y.reshape(2, -1)), lib.tensor(x.reshape(-1, 2)).t()  # b transposed: not contiguous
        out = [lib.add(a, b, alpha=0.3), lib.lerp(a, b, 0.2)]
        a.add_(b, alpha=-1.7)
        same = lib.tensor(x)
        same.add_(same, alpha=0.3)  # the same memory on both sides
        results.append([t.numpy() for t in out + [a, same]])
    for mine, theirs in zip(*results):
        np.testing.assert_array_equal(mine, theirs)


def test_overlapping_views_are_not_given_to_saxpy():
    data = np.arange(10_000, dtype=np.float32)
    assert not _axpy.axpy_single(0.5, data[1:], data[:-1])
    np.testing.assert_array_equal(data, np.arange(10_000, dtype=np.float32))


def test_a_read_only_tensor_still_refuses_add_in_place_as_torch():
    x = ember.ones(10_000).expand(2, 10_000)
    with pytest.raises(RuntimeError):
        x.add_(ember.ones(2, 10_000), alpha=0.5)


def test_the_check_refuses_a_saxpy_that_rounds_twice():
    def rounded_twice(n, alpha, x, incx, y, incy):
        xs = np.ctypeslib.as_array((np.ctypeslib.ctypes.c_float * n).from_address(x))
        ys = np.ctypeslib.as_array((np.ctypeslib.ctypes.c_float * n).from_address(y))
        ys += np.float32(alpha) * xs

    def rounded_once(n, alpha, x, incx, y, incy):
        xs = np.ctypeslib.as_array((np.ctypeslib.ctypes.c_float * n).from_address(x))
        ys = np.ctypeslib.as_array((np.ctypeslib.ctypes.c_float * n).from_address(y))
        ys[...] = fused_single(ys, xs, np.float64(np.float32(alpha)))

    assert not _axpy._rounds_once(rounded_twice)
    assert _axpy._rounds_once(rounded_once)
