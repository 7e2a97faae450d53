"""The activations computed by one kernel each (hardswish, hardsigmoid, ...) against torch: bit for bit on random
and special values in every float dtype, gradients at the kinks, the in-place forms, and second derivatives."""
import numpy as np
import pytest
import torch

import ember
from ember.autograd import gradcheck, gradgradcheck

SPECIAL = [-np.inf, -4.0, -3.0, -2.9999998, -0.5, -0.0, 0.0, 0.5, 2.9999998, 3.0, 4.0, np.inf, np.nan]
DTYPES = ["float32", "float64", "float16", "bfloat16"]


def _values(dtype: str, size: int = 5000) -> np.ndarray:
    """Random values over the kinks (-3..3 and beyond), then the special ones; float64, cast by each library."""
    random = np.random.default_rng(0).standard_normal(size) * 4
    return np.concatenate([random, SPECIAL])


def _both(name: str, array: np.ndarray, dtype: str, **kwargs):
    """(ember's, torch's) result and gradient for the same input and a random upstream gradient, as float64."""
    upstream = np.random.default_rng(1).standard_normal(array.shape)
    out = []
    for lib in (ember, torch):
        x = lib.tensor(array, dtype=getattr(lib, dtype), requires_grad=True)
        y = getattr(lib.nn.functional, name)(x, **kwargs)
        y.backward(lib.tensor(upstream, dtype=getattr(lib, dtype)))
        out.append((_bits(y.detach(), lib), _bits(x.grad, lib), y.grad_fn.name()))
    return out


def _bits(t, lib) -> np.ndarray:
    """The values, as float64 (exact for every float dtype), for an equality that also tells -0.0 from 0.0."""
    wide = t.to(lib.float64).numpy()
    return np.where(wide == 0, np.copysign(1, wide) * 1e-300, wide)  # (-0.0 and 0.0 made different)


@pytest.mark.parametrize("name", ["hardswish", "hardsigmoid"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_values_and_gradients_equal_torch_bit_for_bit(name, dtype):
    (value, grad, node), (their_value, their_grad, their_node) = _both(name, _values(dtype), dtype)
    np.testing.assert_array_equal(value, their_value)
    np.testing.assert_array_equal(grad, their_grad)
    assert node == their_node


@pytest.mark.parametrize("name", ["hardswish", "hardsigmoid"])
@pytest.mark.parametrize("shape,view", [((), None), ((0, 3), None), ((40, 30), "t"), ((30, 40), "step")])
def test_zero_dim_empty_and_non_contiguous_inputs(name, shape, view):
    array = np.random.default_rng(2).standard_normal(shape) * 4
    results = []
    for lib in (ember, torch):
        x = lib.tensor(array, requires_grad=True)
        seen = x.t() if view == "t" else x[:, ::2] if view == "step" else x
        y = getattr(lib.nn.functional, name)(seen)
        y.sum().backward()
        results.append((y.detach().numpy(), x.grad.numpy()))
    for mine, theirs in zip(*results):
        np.testing.assert_array_equal(mine, theirs)


@pytest.mark.parametrize("name", ["hardswish", "hardsigmoid"])
def test_inplace_form_writes_the_input_and_has_torchs_gradient(name):
    array = _values("float32")
    results = []
    for lib in (ember, torch):
        leaf = lib.tensor(array, requires_grad=True)
        x = leaf * 1
        y = getattr(lib.nn.functional, name)(x, inplace=True)
        assert y is x
        y.backward(lib.ones_like(y))
        results.append((y.detach().numpy(), leaf.grad.numpy()))
    for mine, theirs in zip(*results):
        np.testing.assert_array_equal(mine, theirs)


@pytest.mark.parametrize("name", ["hardswish", "hardsigmoid"])
def test_gradcheck_and_gradgradcheck_in_float64(name):
    x = ember.tensor(np.array([-3.5, -2.0, -0.3, 0.0, 0.4, 2.5, 3.6]), requires_grad=True)
    function = getattr(ember.nn.functional, name)
    assert gradcheck(function, (x,))
    assert gradgradcheck(function, (x,))


def test_hardswish_second_derivative_equals_torchs():
    array = np.array([-4.0, -3.0, -1.5, 0.0, 1.5, 3.0, 4.0, np.nan])
    seconds = []
    for lib in (ember, torch):
        x = lib.tensor(array, requires_grad=True)
        (grad,) = lib.autograd.grad(lib.nn.functional.hardswish(x).sum(), x, create_graph=True)
        (second,) = lib.autograd.grad((grad * lib.arange(8.0)).sum(), x)
        seconds.append((grad.detach().numpy(), second.numpy()))
    for mine, theirs in zip(*seconds):
        np.testing.assert_array_equal(mine, theirs)


@pytest.mark.parametrize("name", ["hardswish", "hardsigmoid"])
def test_integer_and_complex_inputs_are_refused_as_torch_refuses_them(name):
    for array in (np.arange(3), np.array([1 + 1j])):
        with pytest.raises(Exception) as theirs:
            getattr(torch.nn.functional, name)(torch.tensor(array))
        with pytest.raises(type(theirs.value)):
            getattr(ember.nn.functional, name)(ember.tensor(array))
