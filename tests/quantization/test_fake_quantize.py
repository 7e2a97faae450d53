"""Fake quantization against torch: values to the bit (ties to even, clamping, NaN and infinities, float64
and float16 inputs), the straight-through gradients, the learnable-parameter gradients, and the errors."""
import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import ember
from twins import both, both_raise, grad_fn_name

RANGES = [(0, 255), (-128, 127), (0, 15), (-8, 7)]
SCALES = [0.1, 0.05, 1 / 3, 0.5, 0.7, 1e-3, 2.0]


def _values(draw, shape, dtype):
    """Random values, some on ties of the grid (multiples of a quarter), some not numbers."""
    a = np.asarray(draw(st.lists(st.floats(-300, 300, width=32), min_size=int(np.prod(shape)),
                                 max_size=int(np.prod(shape))))).reshape(shape)
    if draw(st.booleans()):
        a = np.round(a * 4) / 4
    if a.size and draw(st.booleans()):
        a.reshape(-1)[0] = draw(st.sampled_from([np.nan, np.inf, -np.inf]))
    return a.astype(dtype)


@st.composite
def per_tensor_case(draw):
    dtype = draw(st.sampled_from([np.float32, np.float64, np.float16]))
    a = _values(draw, draw(st.sampled_from([(7,), (3, 4), (), (0,)])), dtype)
    quant_min, quant_max = draw(st.sampled_from(RANGES))
    zero_point = draw(st.integers(quant_min, quant_max))
    return a, draw(st.sampled_from(SCALES)), zero_point, quant_min, quant_max


@settings(max_examples=60)
@given(per_tensor_case())
def test_per_tensor_values_and_gradient_match_torch(case):
    a, scale, zero_point, quant_min, quant_max = case

    def program(lib):
        x = lib.tensor(a, requires_grad=True)
        y = lib.fake_quantize_per_tensor_affine(x, scale, zero_point, quant_min, quant_max)
        y.backward(lib.ones_like(y))
        return y.detach(), x.grad, grad_fn_name(y)

    expected, actual = program(torch), program(ember)
    np.testing.assert_array_equal(actual[0].numpy(), expected[0].numpy())
    np.testing.assert_array_equal(actual[1].numpy(), expected[1].numpy())
    assert actual[2] == expected[2] == "FakeQuantizePerTensorAffineCachemaskBackward0"


def test_per_tensor_tensor_qparams_overload():
    def program(lib):
        x = lib.tensor([-1.0, 0.25, 0.75, 2.5, 300.0], requires_grad=True)
        y = lib.fake_quantize_per_tensor_affine(x, lib.tensor([0.5]), lib.tensor([1], dtype=lib.int32), 0, 255)
        y.sum().backward()
        z = lib.fake_quantize_per_tensor_affine(x, lib.tensor(0.5), lib.tensor(3.0), 0, 7)
        return y, x.grad, z, grad_fn_name(y)

    both(program)


@st.composite
def per_channel_case(draw):
    dtype = draw(st.sampled_from([np.float32, np.float64, np.float16]))
    shape = draw(st.sampled_from([(3, 4), (2, 3, 2), (5,)]))
    a = _values(draw, shape, dtype)
    axis = draw(st.integers(0, len(shape) - 1))
    channels = shape[axis]
    quant_min, quant_max = draw(st.sampled_from(RANGES))
    scales = np.array(draw(st.lists(st.sampled_from(SCALES), min_size=channels, max_size=channels)), np.float32)
    points = np.array(draw(st.lists(st.integers(quant_min, quant_max), min_size=channels, max_size=channels)))
    if draw(st.booleans()):
        points = (points + draw(st.sampled_from([0.0, 0.25, 0.5]))).clip(quant_min, quant_max).astype(np.float32)
    else:
        points = points.astype(np.int32)
    return a, scales, points, axis, quant_min, quant_max


@settings(max_examples=60)
@given(per_channel_case())
def test_per_channel_values_and_gradient_match_torch(case):
    a, scales, points, axis, quant_min, quant_max = case

    def program(lib):
        x = lib.tensor(a, requires_grad=True)
        y = lib.fake_quantize_per_channel_affine(x, lib.tensor(scales), lib.tensor(points), axis, quant_min,
                                                 quant_max)
        y.backward(lib.ones_like(y))
        return y.detach(), x.grad, grad_fn_name(y)

    expected, actual = program(torch), program(ember)
    np.testing.assert_array_equal(actual[0].numpy(), expected[0].numpy())
    np.testing.assert_array_equal(actual[1].numpy(), expected[1].numpy())
    assert actual[2] == expected[2]


@settings(max_examples=40)
@given(st.lists(st.floats(-40, 40, width=32), min_size=1, max_size=12), st.sampled_from(SCALES),
       st.sampled_from([0.0, 3.0, 3.5, 2.4999, 7.7, -2.0]), st.sampled_from([(0, 15), (-8, 7), (0, 255)]),
       st.sampled_from([1.0, 0.25]))
def test_learnable_per_tensor_gradients_match_torch(values, scale, zero_point, bounds, grad_factor):
    quant_min, quant_max = bounds
    weights = np.linspace(-1, 2, len(values)).astype(np.float32)

    def program(lib):
        x = lib.tensor(values, requires_grad=True)
        s = lib.tensor([scale], requires_grad=True)
        z = lib.tensor([zero_point], requires_grad=True)
        y = lib._fake_quantize_learnable_per_tensor_affine(x, s, z, quant_min, quant_max, grad_factor)
        y.backward(lib.tensor(weights))
        return y.detach(), x.grad, s.grad, z.grad, grad_fn_name(y)

    expected, actual = program(torch), program(ember)
    np.testing.assert_array_equal(actual[0].numpy(), expected[0].numpy())
    np.testing.assert_array_equal(actual[1].numpy(), expected[1].numpy())
    # the parameters' gradients are sums: equal up to the order of summation
    bound = np.abs(weights).sum() * max(abs(quant_max) + abs(zero_point), 1) * 1e-6
    for e, a in zip(expected[2:4], actual[2:4]):
        assert a.shape == e.shape
        np.testing.assert_allclose(a.numpy(), e.numpy(), rtol=1e-5, atol=bound)
    assert actual[4] == expected[4]


def test_straight_through_gradient_differentiates_again_as_torch():
    """The backward (grad * mask) is written in ember ops: a second derivative through it matches torch's."""

    def program(lib):
        x = lib.tensor([-0.8, -0.2, 0.05, 0.55, 1.3, 40.0], dtype=lib.float64, requires_grad=True)
        scales, points = lib.tensor([0.25, 0.5]), lib.tensor([0, 1], dtype=lib.int32)
        y = lib.fake_quantize_per_tensor_affine(x, 0.25, 0, -8, 7) * x
        y = y + lib.fake_quantize_per_channel_affine(x.view(3, 2), scales, points, 1, -8, 7).view(6) * x * x
        (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), x)
        return y, g, gg

    both(program)


ERRORS = {
    "min-above-max": (lambda lib, x: lib.fake_quantize_per_tensor_affine(x, 0.5, 0, 5, 2),
                      RuntimeError, "`quant_min` should be less than or"),
    "zero-point-outside": (lambda lib, x: lib.fake_quantize_per_tensor_affine(x, 0.5, 300, 0, 255),
                           RuntimeError, "`zero_point` must be between `quant_min` and `quant_max`"),
    "integer-input": (lambda lib, x: lib.fake_quantize_per_tensor_affine(x.int(), 0.5, 0, 0, 255),
                      NotImplementedError, "not implemented for 'Int'"),
    "float-zero-point": (lambda lib, x: lib.fake_quantize_per_tensor_affine(x, 0.5, 1.5, 0, 255),
                         TypeError, "zero_point"),
    "two-scales": (lambda lib, x: lib.fake_quantize_per_tensor_affine(x, lib.tensor([0.5, 0.2]),
                                                                      lib.tensor([1, 2]), 0, 255),
                   RuntimeError, "a Tensor with 2 elements cannot be converted to Scalar"),
    "scale-requires-grad": (lambda lib, x: lib.fake_quantize_per_tensor_affine(
        x, lib.tensor([0.5], requires_grad=True), lib.tensor([1]), 0, 255),
        RuntimeError, "is not differentiable with respect to argument 'scale'"),
    "int64-zero-points": (lambda lib, x: lib.fake_quantize_per_channel_affine(
        x, lib.tensor([0.5, 0.2]), lib.tensor([1, 2]), 0, 0, 255),
        RuntimeError, "Zero-point must be Int32, Float or Half, found Long"),
    "float64-scales": (lambda lib, x: lib.fake_quantize_per_channel_affine(
        x, lib.tensor([0.5, 0.2]).double(), lib.tensor([1, 2], dtype=lib.int32), 0, 0, 255),
        RuntimeError, "Scale must be Float or BFloat16, found Double"),
    "wrong-channel-count": (lambda lib, x: lib.fake_quantize_per_channel_affine(
        x, lib.tensor([0.5]), lib.tensor([1], dtype=lib.int32), 0, 0, 255),
        RuntimeError, "dimensions of scale and zero-point are not consistent with input tensor"),
    "axis-out-of-range": (lambda lib, x: lib.fake_quantize_per_channel_affine(
        x, lib.tensor([0.5, 0.2, 0.1]), lib.tensor([1, 2, 3], dtype=lib.int32), 2, 0, 255),
        IndexError, "Dimension out of range"),
    "negative-axis": (lambda lib, x: lib.fake_quantize_per_channel_affine(
        x, lib.tensor([0.5, 0.2, 0.1]), lib.tensor([1, 2, 3], dtype=lib.int32), -1, 0, 255),
        RuntimeError, "`axis` must be between 0 and number of dimensions of input"),
    "channel-zero-point-outside": (lambda lib, x: lib.fake_quantize_per_channel_affine(
        x, lib.tensor([0.5, 0.2]), lib.tensor([1, -2], dtype=lib.int32), 0, 0, 255),
        RuntimeError, "`zero_point` must be between"),
}


@pytest.mark.parametrize("name", ERRORS)
def test_errors_match_torch(name):
    call, error, fragment = ERRORS[name]
    both_raise(lambda lib: call(lib, lib.tensor([[0.1, 0.7, 3.0], [1.0, -2.0, 0.0]])), error, fragment)


def test_fake_quantize_is_on_the_tensor_api_list_of_functions():
    x = ember.tensor([0.3])
    assert ember.fake_quantize_per_tensor_affine(x, 0.25, 0, 0, 255).item() == 0.25
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ember.fake_quantize_per_tensor_affine(ember.tensor([np.nan, np.inf]), 0.0, 0, 0, 255)  # quietly, as torch


@pytest.mark.parametrize("per_row, symmetric, bounds", [(False, False, (0, 255)), (False, True, (-128, 127)),
                                                          (True, False, (0, 15)), (True, True, (-128, 127))])
def test_fused_moving_average_observer_matches_torch(per_row, symmetric, bounds):
    """Three steps: observe and quantize, quantize only, observe only; the state tensors change in place."""
    rng = np.random.default_rng(7)
    steps = [rng.standard_normal((3, 4)).astype(np.float32) * s for s in (1.0, 10.0, 0.01)]
    flags = [(1, 1), (0, 1), (1, 0)]

    def program(lib):
        n = 3 if per_row else 1
        state = [lib.full((n,), float("inf")), lib.full((n,), float("-inf")), lib.ones(n),
                 lib.zeros(n, dtype=lib.int32)]
        seen = []
        for a, (observe, quantize) in zip(steps, flags):
            x = lib.tensor(a, requires_grad=True)
            y = lib.fused_moving_avg_obs_fake_quant(x, lib.tensor([observe]), lib.tensor([quantize]), *state, 0.25,
                                                    *bounds, 0, per_row, symmetric)
            (y * lib.arange(12.0).view(3, 4)).sum().backward()
            seen.append((y, x.grad, [s.clone() for s in state], grad_fn_name(y)))
        return seen

    expected, actual = program(torch), program(ember)
    for e, a in zip(expected, actual):
        np.testing.assert_array_equal(a[0].detach().numpy(), e[0].detach().numpy())
        np.testing.assert_array_equal(a[1].numpy(), e[1].numpy())
        for es, ast in zip(e[2], a[2]):
            np.testing.assert_array_equal(ast.numpy(), es.numpy())
        assert a[3] == e[3]


def test_fused_observer_errors_match_torch():
    def call(lib, x, axis, per_row):
        n = 3
        return lib.fused_moving_avg_obs_fake_quant(x, lib.tensor([1]), lib.tensor([1]), lib.ones(n), lib.ones(n),
                                                   lib.ones(n), lib.zeros(n, dtype=lib.int32), 0.1, 0, 255, axis,
                                                   per_row)

    both_raise(lambda lib: call(lib, lib.ones(2, 3), 1, True), RuntimeError, "only supported on axis == 0")
    both_raise(lambda lib: call(lib, lib.ones(3, 3).double(), 0, True), RuntimeError,
               "expected scalar type Float but found Double")


@settings(max_examples=30)
@given(st.data(), st.sampled_from([(3, 4), (2, 3, 4), (4, 1)]), st.sampled_from([(0, 15), (-128, 127), (0, 255)]),
       st.sampled_from([1.0, 0.3]))
def test_learnable_per_channel_gradients_match_torch(data, shape, bounds, grad_factor):
    quant_min, quant_max = bounds
    axis = data.draw(st.integers(0, len(shape) - 1))
    channels = shape[axis]
    a = np.asarray(data.draw(st.lists(st.floats(-40, 40, width=32), min_size=int(np.prod(shape)),
                                      max_size=int(np.prod(shape)))), np.float32).reshape(shape)
    scales = np.array(data.draw(st.lists(st.sampled_from(SCALES[:5]), min_size=channels, max_size=channels)),
                      np.float32)
    points = np.array(data.draw(st.lists(st.sampled_from([0.0, 2.5, 3.5, 7.3, -1.0, 300.0]), min_size=channels,
                                         max_size=channels)), np.float32)
    weights = np.linspace(-1, 2, a.size).astype(np.float32).reshape(shape)

    def program(lib):
        x, s, z = (lib.tensor(v, requires_grad=True) for v in (a, scales, points))
        y = lib._fake_quantize_learnable_per_channel_affine(x, s, z, axis, quant_min, quant_max, grad_factor)
        y.backward(lib.tensor(weights))
        return y.detach(), x.grad, s.grad, z.grad, grad_fn_name(y)

    expected, actual = program(torch), program(ember)
    np.testing.assert_array_equal(actual[0].numpy(), expected[0].numpy())
    np.testing.assert_array_equal(actual[1].numpy(), expected[1].numpy())
    bound = np.abs(weights).sum() * (abs(quant_max) + 300) * 1e-6  # sums, up to their order
    for e, g in zip(expected[2:4], actual[2:4]):
        np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-5, atol=bound)
    assert actual[4] == expected[4] == "FakeQuantizeLearnablePerChannelAffineBackward0"
