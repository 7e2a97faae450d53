"""SGD's float32 update bit for bit as torch's: both given the same gradients, step after step, so that only the
update's arithmetic is compared (``p -= lr * buf`` rounded once per element, as torch's ``add_(alpha=-lr)``)."""
from __future__ import annotations

import gc

import numpy as np
import pytest
import torch

import ember
from ember import _axpy, _lapack

SHAPES = [(64, 64), (64,), (128, 128), (128,), (10, 128), (10,), (3,), (4099,)]  # a step's, and lengths with tails


@pytest.fixture
def saxpy():
    if not _lapack.enabled or not _axpy._checked():
        pytest.skip("this OpenBLAS has no saxpy that rounds once")


def _gradients(steps: int, seed: int = 0) -> list:
    rng = np.random.default_rng(seed)
    return [[rng.standard_normal(shape).astype(np.float32) for shape in SHAPES] for _ in range(steps)]


def _trained(lib, gradients: list, **hyper) -> list:
    rng = np.random.default_rng(1)
    params = [lib.nn.Parameter(lib.tensor(rng.standard_normal(shape).astype(np.float32))) for shape in SHAPES]
    optimizer = lib.optim.SGD(params, **hyper)
    for step in gradients:
        optimizer.zero_grad()
        for param, grad in zip(params, step):
            param.grad = lib.tensor(grad)
        optimizer.step()
    return [param.detach().numpy().copy() for param in params]


@pytest.mark.parametrize("lr", [0.01, 0.3])
def test_sgd_with_momentum_in_float32_is_torch_bit_for_bit(saxpy, lr):
    gradients = _gradients(50)
    ours, theirs = (_trained(lib, gradients, lr=lr, momentum=0.9) for lib in (ember, torch))
    for shape, a, b in zip(SHAPES, ours, theirs):
        np.testing.assert_array_equal(a.view(np.int32), b.view(np.int32), err_msg=f"parameter of shape {shape}")


def test_sgd_without_momentum_in_float32_is_torch_bit_for_bit_on_large_parameters(saxpy):
    """Without a momentum buffer the gradient is new each step: saxpy takes it from ``_axpy.FROM`` elements."""
    gradients = _gradients(20, seed=2)
    ours, theirs = (_trained(lib, gradients, lr=0.05) for lib in (ember, torch))
    for shape, a, b in zip(SHAPES, ours, theirs):
        if np.prod(shape) >= _axpy.FROM:
            np.testing.assert_array_equal(a.view(np.int32), b.view(np.int32), err_msg=f"parameter of shape {shape}")
        else:
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


def test_sgd_follows_a_parameter_whose_data_is_replaced(saxpy):
    """``param.data = ...`` gives the parameter a new array: the update goes to it, not to the old address."""
    gradients = _gradients(6, seed=3)
    results = []
    for lib in (ember, torch):
        param = lib.nn.Parameter(lib.zeros(64, 64))
        optimizer = lib.optim.SGD([param], lr=0.1, momentum=0.9)
        for k, step in enumerate(gradients):
            if k == 3:
                param.data = lib.ones(64, 64)
            param.grad = lib.tensor(step[0])
            optimizer.step()
        results.append(param.detach().numpy().copy())
    np.testing.assert_array_equal(results[0].view(np.int32), results[1].view(np.int32))


def test_a_kept_pair_goes_with_its_arrays(saxpy):
    x, y = np.ones(10, np.float32), np.zeros(10, np.float32)
    assert _axpy.axpy_single(0.5, x, y, lasting=True)
    assert _axpy.axpy_single(0.5, x, y, lasting=True)
    np.testing.assert_array_equal(y, np.ones(10, np.float32))
    key = id(y)
    assert _axpy._pairs[key][0]() is y
    del x, y
    gc.collect()
    assert key not in _axpy._pairs


def test_lasting_arrays_that_overlap_are_refused(saxpy):
    """Checked on the first call, refused on every call after."""
    data = np.arange(100, dtype=np.float32)
    x, y = data[1:], data[:-1]
    assert not _axpy.axpy_single(0.5, x, y, lasting=True)
    assert not _axpy.axpy_single(0.5, x, y, lasting=True)
    np.testing.assert_array_equal(data, np.arange(100, dtype=np.float32))
    same = np.ones(7, np.float32)
    assert _axpy.axpy_single(1.0, same, same, lasting=True)  # the same array on both sides: y += y
    np.testing.assert_array_equal(same, np.full(7, 2, np.float32))


def test_a_kept_pair_takes_the_double_way_when_saxpy_is_switched_off(saxpy, monkeypatch):
    x, y = np.ones(10, np.float32), np.zeros(10, np.float32)
    assert _axpy.axpy_single(0.5, x, y, lasting=True)
    monkeypatch.setattr(_lapack, "enabled", False)
    assert not _axpy.axpy_single(0.5, x, y, lasting=True)
    monkeypatch.setattr(_lapack, "enabled", True)
    assert _axpy.axpy_single(0.5, x, y, lasting=True)
    np.testing.assert_array_equal(y, np.ones(10, np.float32))


def test_a_kept_pair_with_another_x_is_checked_again(saxpy):
    y = np.zeros(10, np.float32)
    assert _axpy.axpy_single(1.0, np.ones(10, np.float32), y, lasting=True)
    assert not _axpy.axpy_single(1.0, np.ones(20, np.float32)[::2], y, lasting=True)  # not contiguous
    assert _axpy.axpy_single(1.0, np.full(10, 2, np.float32), y, lasting=True)
    np.testing.assert_array_equal(y, np.full(10, 3, np.float32))
