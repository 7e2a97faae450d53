"""``nn.grad``: a convolution's gradients as functions, against torch's, and inside a custom Function."""
import numpy as np
import pytest
import torch

import ember

CASES = [  # (dims, input shape, weight shape, options)
    (1, (2, 4, 9), (6, 2, 3), dict(stride=2, padding=1, dilation=1, groups=2)),
    (2, (1, 3, 7, 6), (4, 3, 3, 2), dict(stride=(2, 1), padding=(1, 0), dilation=(1, 2))),
    (2, (2, 2, 5, 5), (2, 1, 2, 2), dict(groups=2)),
    (3, (1, 2, 4, 5, 4), (3, 2, 2, 3, 2), dict(stride=1, padding=1, dilation=(2, 1, 1))),
]


@pytest.mark.parametrize("dims, input_shape, weight_shape, options", CASES)
def test_input_and_weight_gradients_are_torchs(dims, input_shape, weight_shape, options):
    rng = np.random.default_rng(dims)
    x, w = rng.standard_normal(input_shape), rng.standard_normal(weight_shape)
    out_shape = getattr(torch.nn.functional, f"conv{dims}d")(torch.tensor(x), torch.tensor(w), **options).shape
    g = rng.standard_normal(tuple(out_shape))
    for name in ("input", "weight"):
        results = []
        for lib in (torch, ember):
            fn = getattr(lib.nn.grad, f"conv{dims}d_{name}")
            first = lib.tensor(x).shape if name == "input" else lib.tensor(x)
            second = lib.tensor(w) if name == "input" else lib.tensor(w).shape
            results.append(fn(first, second, lib.tensor(g), **options).numpy())
        np.testing.assert_allclose(results[1], results[0], rtol=1e-10, atol=1e-12)


class ConvByHand(ember.autograd.Function):
    """The seeds' pattern: a Function whose backward calls the gradient functions."""

    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return ember.nn.functional.conv2d(x, w, stride=2, padding=1)

    @staticmethod
    def backward(ctx, grad_output):
        x, w = ctx.saved_tensors
        return (ember.nn.grad.conv2d_input(x.shape, w, grad_output, stride=2, padding=1),
                ember.nn.grad.conv2d_weight(x, w.shape, grad_output, stride=2, padding=1))


def test_a_function_built_on_them_passes_gradcheck_and_gradgradcheck():
    rng = np.random.default_rng(0)
    x = ember.tensor(rng.standard_normal((1, 2, 5, 4)), requires_grad=True)
    w = ember.tensor(rng.standard_normal((3, 2, 3, 3)), requires_grad=True)
    assert ember.autograd.gradcheck(ConvByHand.apply, (x, w))
    assert ember.autograd.gradgradcheck(ConvByHand.apply, (x, w))
