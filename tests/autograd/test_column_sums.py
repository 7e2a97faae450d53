"""A gradient broadcast along one new leading dim (a linear layer's bias) is summed down by the engine; float
matrices from 4,096 entries go through a product with ones. Both paths against torch."""
import numpy as np
import pytest
import torch

import ember


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("rows", [3, 300])  # 3 x 20 entries: NumPy's sum; 300 x 20: the product with ones
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
