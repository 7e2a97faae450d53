"""conv_tbc against torch: values, gradients to input, weight and bias, and its errors."""
import numpy as np
import pytest
import torch

import ember


@pytest.mark.parametrize("pad", [0, 1, 3])
def test_conv_tbc_as_torch(pad):
    rng = np.random.default_rng(pad)
    arrays = [rng.standard_normal((7, 2, 3)), rng.standard_normal((3, 3, 4)), rng.standard_normal(4)]
    ours = [ember.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    out_e, out_t = ember.conv_tbc(*ours, pad), torch.conv_tbc(*theirs, pad)
    np.testing.assert_allclose(out_e.detach().numpy(), out_t.detach().numpy(), rtol=1e-12, atol=1e-12)
    weights = rng.standard_normal(tuple(out_t.shape))
    (out_e * ember.tensor(weights)).sum().backward()
    (out_t * torch.tensor(weights)).sum().backward()
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-10, atol=1e-12)
    assert ember.nn.functional.conv_tbc is ember.conv_tbc


@pytest.mark.parametrize("shapes, message", [
    (((2, 3), (3, 3, 4), (4,)), "Input must have 3 dims: time, batch, in_channel"),
    (((7, 2, 3), (3, 2, 4), (4,)), "Input dim 2 \\(input channels\\) is not == dim 1 in the weight tensor"),
    (((7, 2, 3), (3, 3, 4), (2,)), "Bias size must equal dim 2 in the weight tensor \\(output channels\\)"),
])
def test_errors_as_torch(shapes, message):
    with pytest.raises(RuntimeError, match=message):
        torch.conv_tbc(*[torch.ones(s) for s in shapes])
    with pytest.raises(RuntimeError, match=message):
        ember.conv_tbc(*[ember.ones(s) for s in shapes])


def test_the_protocol_helpers_are_reexported_as_in_torch():
    assert ember.nn.functional.has_torch_function is ember.overrides.has_torch_function
    assert ember.nn.functional.handle_torch_function is ember.overrides.handle_torch_function
