"""sigmoid's steps taken in place on its result: values as torch's on every kind of input the float32 and
float64 path takes (0-d, where NumPy gives scalars, large, infinite, nan, non-contiguous), and the input unchanged."""
import math

import numpy as np
import pytest
import torch

import ember
from twins import both, leaf

_VALUES = [0.0, -0.0, 1.5, -1.5, 17.0, -17.0, 88.0, -88.0, 89.0, -89.0, 710.0, -710.0, 1e30, -1e30,
           math.inf, -math.inf, math.nan]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_sigmoid_of_extreme_values_as_torch(dtype):
    def program(lib):
        x = lib.tensor(_VALUES, dtype=getattr(lib, dtype))
        return x.sigmoid(), lib.sigmoid(x.reshape(-1, 1).t()), x[3].sigmoid(), x

    both(program, prepare=lambda out: [t.float().numpy() for t in out])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sigmoid_of_0_d_and_non_contiguous_tensors_as_torch(dtype):
    values = np.random.default_rng(0).standard_normal((5, 4)) * 6

    def program(lib):
        x = lib.tensor(values, dtype=getattr(lib, dtype))
        return x.t().sigmoid(), x[::2, 1:].sigmoid(), x[0, 0].sigmoid(), lib.tensor(2.5).sigmoid()

    both(program)


def test_sigmoid_gradients_to_the_second_order():
    x = leaf(ember, np.random.default_rng(1).standard_normal((3, 4)) * 3)
    assert ember.autograd.gradcheck(ember.sigmoid, (x,))
    assert ember.autograd.gradgradcheck(ember.sigmoid, (x,))
    scalar = leaf(ember, 0.7)
    assert ember.autograd.gradgradcheck(ember.sigmoid, (scalar,))
    torch_scalar = torch.tensor(0.7, dtype=torch.float64)
    np.testing.assert_allclose(ember.sigmoid(scalar).item(), torch.sigmoid(torch_scalar).item(), rtol=1e-15)
