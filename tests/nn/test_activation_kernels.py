"""The activations computed by one kernel each (hardswish, hardsigmoid, softshrink, ...) against torch: bit for
bit on random and special values in every float dtype, gradients at the kinks, the in-place forms, and second
derivatives; logsigmoid and softplus against the exact values."""
import numpy as np
import pytest
import torch

import ember
from ember.autograd import gradcheck, gradgradcheck

SPECIAL = [-np.inf, -4.0, -3.0, -2.9999998, -0.5, -0.3, -0.0, 0.0, 0.3, 0.5, 2.9999998, 3.0, 4.0, np.inf, np.nan]
DTYPES = ["float32", "float64", "float16", "bfloat16"]
PIECEWISE = ["hardswish", "hardsigmoid", "softshrink", "hardshrink"]


def _values(dtype: str, size: int = 5120) -> np.ndarray:
    """Random values over the kinks (-3..3 and beyond), then the special ones; float64, cast by each library.

    torch's vectorised loop takes 16 or 32 elements at a time and leaves the rest to a scalar loop: the random
    values (a multiple of 64) go through the first, the special ones through the second, whose formula is the one
    torch's source spells out for nan (the vectorised one can differ there, and in softshrink's sign of zero)."""
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


@pytest.mark.parametrize("name", PIECEWISE)
@pytest.mark.parametrize("dtype", DTYPES)
def test_values_and_gradients_equal_torch_bit_for_bit(name, dtype):
    (value, grad, node), (their_value, their_grad, their_node) = _both(name, _values(dtype), dtype)
    np.testing.assert_array_equal(value[:-len(SPECIAL)], their_value[:-len(SPECIAL)])
    np.testing.assert_array_equal(grad, their_grad)
    assert node == their_node
    if name == "softshrink":  # torch's scalar loop gives -0 inside the band below 0, its vectorised one +0 (ember)
        value, their_value = (np.where(np.abs(v) == 1e-300, 0.0, v) for v in (value, their_value))
    np.testing.assert_array_equal(value[-len(SPECIAL):], their_value[-len(SPECIAL):])


@pytest.mark.parametrize("name", PIECEWISE)
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


@pytest.mark.parametrize("name", PIECEWISE)
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


@pytest.mark.parametrize("name", PIECEWISE)
def test_integer_and_complex_inputs_are_refused_as_torch_refuses_them(name):
    for array in (np.arange(3), np.array([1 + 1j])):
        with pytest.raises(Exception) as theirs:
            getattr(torch.nn.functional, name)(torch.tensor(array))
        with pytest.raises(type(theirs.value)):
            getattr(ember.nn.functional, name)(ember.tensor(array))


# ---------------------------------------------------------------- logsigmoid and softplus: computed in double

SMOOTH = [("logsigmoid", {}), ("softplus", {}), ("softplus", {"beta": 2.0, "threshold": 1.0}),
          ("softplus", {"beta": 0.5, "threshold": 30.0})]


def _reference(name: str, x: np.ndarray, beta: float = 1.0, threshold: float = 20.0) -> np.ndarray:
    """The exact value (to double precision) of what the float32 op should round: log(sigmoid(x)) or softplus
    with torch's branch (x itself where the float32 beta * x is above the threshold)."""
    wide = x.astype(np.float64)
    if name == "logsigmoid":
        return -np.logaddexp(0, -wide)
    scaled = x * np.float32(beta)
    return np.where(scaled > np.float32(threshold), wide, np.logaddexp(0, scaled.astype(np.float64)) / beta)


def _ulps(values: np.ndarray, reference: np.ndarray) -> float:
    spacing = np.spacing(np.abs(reference).astype(np.float32)).astype(np.float64)
    return float(np.max(np.abs(values.astype(np.float64) - reference) / spacing))


@pytest.mark.parametrize("name,kwargs", SMOOTH)
def test_float32_values_are_within_half_an_ulp_and_no_worse_than_torchs(name, kwargs):
    rng = np.random.default_rng(5)
    x = np.concatenate([rng.standard_normal(50_000) * 8, rng.uniform(-100, 100, 50_000),
                        rng.uniform(-1e-3, 1e-3, 5_000)]).astype(np.float32)
    reference = _reference(name, x, **kwargs)
    mine = getattr(ember.nn.functional, name)(ember.tensor(x), **kwargs).numpy()
    theirs = getattr(torch.nn.functional, name)(torch.tensor(x), **kwargs).numpy()
    assert _ulps(mine, reference) <= 0.5001
    assert _ulps(mine, reference) <= _ulps(theirs, reference)


@pytest.mark.parametrize("name,kwargs", SMOOTH)
@pytest.mark.parametrize("dtype", DTYPES)
def test_special_values_gradients_and_dtypes_match_torch(name, kwargs, dtype):
    array = np.concatenate([_values(dtype, 2000), [-200.0, -90.0, -20.0, 20.0, 90.0, 200.0]])
    (value, grad, node), (their_value, their_grad, their_node) = _both(name, array, dtype, **kwargs)
    assert node == their_node
    # torch rounds each step in float32 (twice for half and bfloat16): a few units of the dtype's last place
    # (and below the smallest normal number, in the few bits a subnormal has)
    rtol = {"float32": 4e-7, "float64": 1e-15, "float16": 2e-3, "bfloat16": 1.6e-2}[dtype]
    atol = float(torch.finfo(getattr(torch, dtype)).tiny)
    for mine, theirs in ((value, their_value), (grad, their_grad)):
        assert np.array_equal(np.isnan(mine), np.isnan(theirs))
        finite = ~np.isnan(theirs)
        np.testing.assert_allclose(mine[finite], theirs[finite], rtol=rtol, atol=atol)
    finite = ~np.isnan(their_value)
    assert np.array_equal(np.signbit(value[finite]), np.signbit(their_value[finite]))


@pytest.mark.parametrize("name,kwargs", SMOOTH)
def test_smooth_ones_pass_gradcheck_gradgradcheck_and_give_torchs_second_derivative(name, kwargs):
    array = np.array([-30.0, -3.0, -0.5, 0.0, 0.4, 1.5, 3.0, 25.0])
    function = getattr(ember.nn.functional, name)
    x = ember.tensor(array, requires_grad=True)
    assert gradcheck(lambda t: function(t, **kwargs), (x,))
    assert gradgradcheck(lambda t: function(t, **kwargs), (x,))
    seconds = []
    for lib in (ember, torch):
        t = lib.tensor(array, requires_grad=True)
        (grad,) = lib.autograd.grad(getattr(lib.nn.functional, name)(t, **kwargs).sum(), t, create_graph=True)
        (second,) = lib.autograd.grad((grad * lib.arange(8.0)).sum(), t)
        seconds.append((grad.detach().numpy(), second.numpy()))
    # torch's second derivative of logsigmoid loses 4e-6 (relative) at 25: ember's is compared with the exact one
    for mine, theirs in zip(*seconds):
        np.testing.assert_allclose(mine, theirs, rtol=1e-5 if name == "logsigmoid" else 1e-14, atol=0)
    if name == "logsigmoid":
        exact = -np.arange(8.0) / (1 + np.exp(-array)) / (1 + np.exp(array))  # -sigmoid(x) sigmoid(-x)
        np.testing.assert_allclose(seconds[0][1], exact, rtol=1e-14)


@pytest.mark.parametrize("shape,view", [((), None), ((0, 3), None), ((40, 30), "t"), ((30, 40), "step")])
@pytest.mark.parametrize("name,kwargs", SMOOTH)
def test_smooth_ones_on_zero_dim_empty_and_non_contiguous_inputs(name, kwargs, shape, view):
    array = np.random.default_rng(2).standard_normal(shape) * 4
    results = []
    for lib in (ember, torch):
        x = lib.tensor(array, requires_grad=True)
        seen = x.t() if view == "t" else x[:, ::2] if view == "step" else x
        y = getattr(lib.nn.functional, name)(seen, **kwargs)
        y.sum().backward()
        results.append((y.detach().numpy(), x.grad.numpy()))
    for mine, theirs in zip(*results):
        np.testing.assert_allclose(mine, theirs, rtol=1e-15, atol=1e-300)


@pytest.mark.parametrize("name", PIECEWISE + ["logsigmoid", "softplus", "selu", "elu"])
def test_extreme_values_raise_no_floating_point_error(name):
    """-inf * 0 is nan and exp overflows, as in torch, silently (NumPy would warn, or raise under errstate)."""
    values = np.array([-np.inf, -1e38, -100.0, -3.0, 0.0, 3.0, 100.0, 1e38, np.inf, np.nan] * 500, np.float32)
    with np.errstate(all="raise"):
        for upstream in (ember.ones(len(values)), ember.zeros(len(values))):
            x = ember.tensor(values, requires_grad=True)
            getattr(ember.nn.functional, name)(x).backward(upstream)


@pytest.mark.parametrize("dtype", DTYPES + ["int64", "int32", "uint8"])
def test_threshold_equals_torchs_in_every_dtype_with_its_gradient(dtype):
    array = np.round(np.abs(_values(dtype))) if dtype == "uint8" else _values(dtype)
    if dtype.startswith(("int", "uint")):
        array = np.nan_to_num(np.round(array), posinf=100, neginf=-100)
    differentiable = not dtype.startswith(("int", "uint"))
    results = []
    for lib in (ember, torch):
        x = lib.tensor(array, dtype=getattr(lib, dtype), requires_grad=differentiable)
        y = lib.nn.functional.threshold(x, 0.5, 2)
        results.append([_bits(y.detach(), lib)])
        if differentiable:
            y.backward(lib.full_like(y, -1.5))
            results[-1] += [_bits(x.grad, lib), y.grad_fn.name()]
    for mine, theirs in zip(*results):
        np.testing.assert_array_equal(mine, theirs)
    x = ember.tensor([0.2, 0.7, -1.0, 3.0], dtype=ember.float64, requires_grad=True)
    assert gradcheck(lambda t: ember.nn.functional.threshold(t, 0.5, 9.0), (x,))
    assert gradgradcheck(lambda t: ember.nn.functional.threshold(t, 0.5, 9.0), (x,))
