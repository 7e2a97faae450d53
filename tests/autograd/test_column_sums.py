"""A gradient broadcast along one new leading dim (a linear layer's bias) is summed down by the engine; float
matrices of up to 1,024 rows go through a product with ones (a vector kept per length), longer ones by blocks.
Both paths against torch."""
import numpy as np
import pytest
import torch

import ember


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("rows", [3, 300, 3000])  # the product with ones up to 1,024 rows, then by blocks
def test_bias_gradient_matches_torch(dtype, rows):
    rng = np.random.default_rng(rows)
    x, w, b, g = (rng.standard_normal(s).astype(dtype) for s in ((rows, 7), (20, 7), (20,), (rows, 20)))
    grads = []
    for lib in (ember, torch):
        bias = lib.tensor(b, requires_grad=True)
        lib.nn.functional.linear(lib.tensor(x), lib.tensor(w), bias).backward(lib.tensor(g))
        grads.append(bias.grad.numpy())
    tolerance = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(grads[0], grads[1], rtol=tolerance, atol=tolerance)
    assert grads[0].dtype == dtype


def test_a_broadcast_add_sums_its_gradient_down_as_torch():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((4096, 3)), rng.standard_normal(3)
    grads = []
    for lib in (ember, torch):
        bias = lib.tensor(b, requires_grad=True)
        ((lib.tensor(a) + bias) ** 2).sum().backward()
        grads.append(bias.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12)


@pytest.mark.parametrize("shape", [(64, 10), (1, 5), (0, 4), (64, 128)])
def test_column_sums_of_float_matrices_are_a_product_with_ones(shape):
    from ember.autograd.engine import column_sums

    g = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    total = column_sums(g)
    np.testing.assert_array_equal(total, np.ones(shape[0], np.float32).dot(g))
    assert total.shape == shape[1:] and total.dtype == np.float32
    again = column_sums(g.copy())  # the ones are shared between calls, never written
    np.testing.assert_array_equal(again, total)
