"""relu's gradient (torch's threshold_backward) bit for bit as torch's: 0 where the output is 0 (or negative), the
incoming gradient elsewhere, a NaN output keeping its gradient; on arrays small enough for ``np.where`` and large
enough for the bit masks, float32 and float64, contiguous and strided gradients, and differentiated again."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import ember
from ember._ops._select import FROM as SELECT_BY_BITS_FROM
from ember.autograd import gradcheck, gradgradcheck


def _input_and_gradient(n: int, dtype) -> tuple:
    """Inputs with every case relu's gradient tells apart, and gradients with signed zeros, infinities and NaNs."""
    rng = np.random.default_rng(n)
    x = rng.standard_normal(n).astype(dtype)
    x[::7] = 0.0
    x[1::11] = -0.0
    x[2::13] = np.nan
    x[3::17] = np.inf
    x[4::19] = -np.inf
    x[5::23] = np.finfo(dtype).tiny / 4  # subnormal, positive: kept
    g = rng.standard_normal(n).astype(dtype)
    g[::5] = -0.0
    g[1::29] = np.nan
    g[2::31] = -np.inf
    return x, g


def _bits(array: np.ndarray) -> np.ndarray:
    return array.view(f"u{array.dtype.itemsize}")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [37, SELECT_BY_BITS_FROM - 1, SELECT_BY_BITS_FROM, 64 * 128 + 3])
def test_relu_gradient_bits_match_torch(dtype, n):
    x, g = _input_and_gradient(n, dtype)
    grads = []
    for lib in (ember, torch):
        xt = lib.tensor(x, requires_grad=True)
        lib.relu(xt).backward(lib.tensor(g))
        grads.append(np.asarray(xt.grad.detach().numpy() if lib is torch else xt.grad.numpy()))
    np.testing.assert_array_equal(_bits(grads[0]), _bits(grads[1]))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_relu_gradient_of_a_strided_gradient_matches_torch(dtype):
    """The incoming gradient a transposed or every-other-column view: read in place, bits kept."""
    x, g = _input_and_gradient(2 * 96 * 128, dtype)
    x, g = x.reshape(96, 256)[:, ::2].copy(), g.reshape(256, 96)
    results = []
    for lib in (ember, torch):
        xt = lib.tensor(x, requires_grad=True)
        strided = lib.tensor(g).T[:, ::2]  # [96, 128], no unit stride
        (grad,) = lib.autograd.grad(lib.relu(xt), xt, strided)
        results.append(grad.detach().numpy() if lib is torch else grad.numpy())
    np.testing.assert_array_equal(_bits(results[0]), _bits(results[1]))


def test_relu_gradient_recorded_agrees_with_the_array_path():
    """create_graph=True takes ThresholdBackward, the array path does not: the same bits either way."""
    x, g = _input_and_gradient(SELECT_BY_BITS_FROM + 5, np.float32)
    first = []
    for create_graph in (False, True):
        xt = ember.tensor(x, requires_grad=True)
        (grad,) = ember.autograd.grad(ember.relu(xt), xt, ember.tensor(g, requires_grad=True),
                                      create_graph=create_graph)
        first.append(grad.detach().numpy())
    np.testing.assert_array_equal(_bits(first[0]), _bits(first[1]))


@pytest.mark.parametrize("n", [6, SELECT_BY_BITS_FROM + 2])
def test_relu_gradient_differentiated_twice(n):
    rng = np.random.default_rng(1)
    values = rng.standard_normal(n)
    values[np.abs(values) < 1e-3] = 0.5  # away from the kink, where finite differences are meaningless
    x = ember.tensor(values, requires_grad=True)
    assert gradcheck(ember.relu, (x,))
    assert gradgradcheck(ember.relu, (x,))
    grad_out = ember.tensor(rng.standard_normal(n), requires_grad=True)
    assert gradcheck(lambda g: ember.autograd.grad(ember.relu(x), x, g, create_graph=True)[0], (grad_out,))
