"""Activation layers and their functional forms against torch: values, gradients (kinks included), repr."""
import numpy as np
import pytest
import torch

import ember
from ember import nn
from ember.nn import functional as F

# (module name, constructor arguments): each is built in both libraries and run on the same input
MODULES = [
    ("ReLU6", ()), ("ReLU6", (True,)), ("LeakyReLU", ()), ("LeakyReLU", (0.2, True)), ("RReLU", ()),
    ("RReLU", (0.1, 0.3, True)), ("ELU", ()), ("ELU", (0.5,)), ("CELU", ()), ("CELU", (2.0,)), ("SELU", ()),
    ("GELU", ()), ("GELU", ("tanh",)), ("SiLU", ()), ("Mish", ()), ("Softplus", ()), ("Softplus", (2.0, 1.0)),
    ("Softsign", ()), ("Softshrink", ()), ("Softshrink", (1.0,)), ("Hardshrink", ()), ("Hardshrink", (1.0,)),
    ("Tanhshrink", ()), ("Threshold", (0.5, -2.0)), ("Hardtanh", ()), ("Hardtanh", (-2.0, 3.0)),
    ("Hardswish", ()), ("Hardsigmoid", ()), ("LogSigmoid", ()), ("Sigmoid", ()), ("Tanh", ()), ("GLU", ()),
    ("GLU", (0,)), ("Softmax", (1,)), ("LogSoftmax", (0,)), ("Softmin", (-1,)), ("PReLU", ()),
]
# the kinks of the piecewise ones (0, ±0.5, ±1, ±3, 6, the threshold 0.5) and points on either side
POINTS = np.array([[-7.0, -3.0, -2.5, -1.0, -0.5, -0.2],
                   [0.0, 0.2, 0.5, 1.0, 3.0, 6.0],
                   [7.0, 25.0, -30.0, 2.0, -1.5, 0.7],
                   [-0.0, 1.5, -2.0, 4.0, 0.3, -4.0]])


def _pair(name, args):
    return getattr(torch.nn, name)(*args), getattr(nn, name)(*args)


def _run(module, lib, array, dtype):
    module.to(dtype)
    x = lib.tensor(array, dtype=dtype, requires_grad=True)
    y = module(x * 1)  # a non-leaf, so the in-place forms may write into it
    y.backward(lib.ones_like(y))
    return y.detach().numpy(), x.grad.numpy()


@pytest.mark.parametrize("name,args", MODULES, ids=lambda v: str(v))
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_module_matches_torch_with_gradients_at_kinks(name, args, dtype):
    expected, actual = _pair(name, args)
    expected.eval(), actual.eval()  # RReLU's slope is random in training only
    tol = dict(rtol=1e-10, atol=1e-12) if dtype == "float64" else dict(rtol=1e-5, atol=1e-6)
    if name == "Hardsigmoid":  # torch's backward multiplies by 1/6 rounded to float32, in float64 too
        tol = dict(rtol=1e-7, atol=1e-12)
    for want, got in zip(_run(expected, torch, POINTS, getattr(torch, dtype)),
                         _run(actual, ember, POINTS, getattr(ember, dtype))):
        np.testing.assert_allclose(got, want, **tol)


@pytest.mark.parametrize("name,args", MODULES, ids=lambda v: str(v))
def test_repr_matches_torch(name, args):
    expected, actual = _pair(name, args)
    assert repr(actual) == repr(expected)


FUNCTIONS = ["relu6", "leaky_relu", "elu", "celu", "selu", "gelu", "silu", "mish", "softplus", "softsign",
             "softshrink", "hardshrink", "tanhshrink", "hardtanh", "hardswish", "hardsigmoid", "logsigmoid", "glu"]


@pytest.mark.parametrize("name", FUNCTIONS)
def test_gradcheck_and_gradgradcheck(name):
    rng = np.random.default_rng(0)
    # away from the kinks, where finite differences are meaningless
    values = rng.uniform(0.1, 0.4, (3, 4)) * rng.choice([-1, 1], (3, 4)) + rng.choice([-2.0, 0.0, 2.0], (3, 4))
    x = ember.tensor(values, requires_grad=True)
    function = getattr(F, name)
    assert ember.autograd.gradcheck(function, (x,))
    assert ember.autograd.gradgradcheck(function, (x,))


def test_prelu_per_channel_values_gradients_and_gradcheck():
    rng = np.random.default_rng(1)
    values, slopes = rng.normal(size=(2, 3, 4)), rng.uniform(0.1, 0.5, 3)
    grads = []
    for lib in (torch, ember):
        x = lib.tensor(values, requires_grad=True)
        w = lib.tensor(slopes, requires_grad=True)
        y = lib.nn.functional.prelu(x, w)
        (y * y).sum().backward()
        grads.append([y.detach().numpy(), x.grad.numpy(), w.grad.numpy()])
    for want, got in zip(*grads):
        np.testing.assert_allclose(got, want, rtol=1e-10)
    x, w = ember.tensor(values, requires_grad=True), ember.tensor(slopes, requires_grad=True)
    assert ember.autograd.gradgradcheck(F.prelu, (x, w))
    module = nn.PReLU(3)
    assert repr(module) == "PReLU(num_parameters=3)" and list(module.state_dict()) == ["weight"]
    with pytest.raises(RuntimeError, match="prelu"):
        F.prelu(ember.ones(2, 4), ember.ones(3))


def test_inplace_forms_write_into_the_input_and_match():
    for name, kwargs in [("relu6", {}), ("leaky_relu", {"negative_slope": 0.1}), ("elu", {}), ("selu", {}),
                         ("celu", {}), ("hardtanh", {}), ("threshold", {"threshold": 0.5, "value": 1.0}),
                         ("silu", {}), ("mish", {}), ("hardswish", {}), ("hardsigmoid", {})]:
        values = POINTS.copy()
        x = ember.tensor(values)
        out = getattr(F, name)(x, inplace=True, **kwargs)
        assert out is x, name
        expected = getattr(torch.nn.functional, name)(torch.tensor(values), **kwargs)
        np.testing.assert_allclose(x.numpy(), expected.numpy(), rtol=1e-12, err_msg=name)


def test_rrelu_training_draws_slopes_between_lower_and_upper():
    x = -ember.ones(2000)
    y = F.rrelu(x, 0.1, 0.3, training=True)
    slopes = -y.numpy()
    assert slopes.min() >= 0.1 and slopes.max() <= 0.3 and abs(slopes.mean() - 0.2) < 0.01
    assert np.unique(slopes).size > 100
    positive = ember.tensor([1.0, 2.0])
    assert F.rrelu(positive, training=True).tolist() == [1.0, 2.0]


def test_softmax2d_normalises_over_channels():
    values = np.random.default_rng(2).normal(size=(2, 3, 4, 5))
    got = nn.Softmax2d()(ember.tensor(values)).numpy()
    np.testing.assert_allclose(got, torch.nn.Softmax2d()(torch.tensor(values)).numpy(), rtol=1e-12)
    with pytest.raises(ValueError, match="Softmax2d"):
        nn.Softmax2d()(ember.ones(3, 4))


def test_extreme_inputs_give_no_nan_or_warnings():
    values = np.array([-1000.0, -50.0, 0.0, 50.0, 1000.0])
    with np.errstate(all="raise"):
        for name in ["softplus", "logsigmoid", "elu", "selu", "celu", "mish", "silu"]:
            x = ember.tensor(values, requires_grad=True)
            y = getattr(F, name)(x)
            y.sum().backward()
            t = torch.tensor(values, requires_grad=True)
            getattr(torch.nn.functional, name)(t).sum().backward()
            np.testing.assert_allclose(y.detach().numpy(), getattr(torch.nn.functional, name)(
                torch.tensor(values)).numpy(), rtol=1e-12, err_msg=name)
            np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-12, atol=1e-300, err_msg=name)


@pytest.mark.parametrize("call,error", [
    (lambda lib: lib.nn.functional.glu(lib.ones(2, 3)), RuntimeError),
    (lambda lib: lib.nn.functional.gelu(lib.ones(2), approximate="sigmoid"), RuntimeError),
    (lambda lib: lib.nn.functional.softshrink(lib.ones(2), -1.0), RuntimeError),
    (lambda lib: lib.nn.Hardtanh(1.0, -1.0), AssertionError),
])
def test_errors_have_torch_types(call, error):
    with pytest.raises(error):
        call(torch)
    with pytest.raises(error):
        call(ember)


def test_functional_forms_dispatch_through_torch_function():
    seen = []

    class Mode(ember.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(func.__name__)
            return func(*args, **(kwargs or {}))

    with Mode():
        F.gelu(ember.ones(2))
    assert "gelu" in seen


def test_single_node_activations_have_torch_node_names():
    x = ember.randn(3, requires_grad=True)
    for name, node in [("elu", "EluBackward0"), ("celu", "CeluBackward0"), ("selu", "EluBackward0"),
                       ("gelu", "GeluBackward0"), ("hardtanh", "HardtanhBackward0"), ("relu6", "HardtanhBackward0"),
                       ("leaky_relu", "LeakyReluBackward0")]:
        assert getattr(F, name)(x).grad_fn.name() == node
        assert getattr(torch.nn.functional, name)(torch.randn(3, requires_grad=True)).grad_fn.name() == node


@pytest.mark.parametrize("name,args", [("elu_", ()), ("celu_", (2.0,)), ("selu_", ()), ("leaky_relu_", (0.2,)),
                                       ("hardtanh_", (-0.5, 0.5)), ("threshold_", (0.5, 2.0)), ("relu_", ()),
                                       ("rrelu_", ())])
def test_inplace_functions_match_torch_with_gradients(name, args):
    results = []
    for lib in (torch, ember):
        x = lib.tensor(POINTS, requires_grad=True)
        y = x * 1
        out = getattr(lib.nn.functional, name)(y, *args)
        assert out is y
        (out * out).sum().backward()
        results.append((out.detach().numpy(), x.grad.numpy()))
    for want, got in zip(*results):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
