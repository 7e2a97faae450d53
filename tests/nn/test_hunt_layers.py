"""Mismatches against torch found by a sweep of ember.nn's layers and functions: each test failed before its fix."""
from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.nn.functional as F

from tests.nn.test_padding_and_pooling_variants import _compare

torch = pytest.importorskip("torch")
TF = torch.nn.functional


# ---------------------------------------------------------------------------------------------- vector norms


@pytest.mark.parametrize("p", [3, 0.5, -1, 1.5])
def test_normalize_of_a_zero_row_has_torch_gradient_not_nan(p):
    # the composed (|x| ** p).sum() ** (1 / p) gave nan at a zero row; torch's norm gradient is 0 there
    x = np.random.default_rng(0).standard_normal((3, 4))
    x[0] = 0
    x[1, 2] = 0
    _compare(lambda t: F.normalize(t, p=p, dim=1), lambda t: TF.normalize(t, p=p, dim=1), x, atol=1e-10)


@pytest.mark.parametrize("p", [3, 0.5, -2.5])
@pytest.mark.parametrize("dim, keepdim", [(None, False), (1, True), ((0, 2), False)])
def test_vector_norm_gradient_at_zeros_matches_torch(p, dim, keepdim):
    x = np.random.default_rng(2).standard_normal((2, 3, 4))
    x[0, 0] = 0
    x[1, :, 1] = 0
    _compare(lambda t: ember.linalg.vector_norm(t, p, dim, keepdim),
                          lambda t: torch.linalg.vector_norm(t, p, dim, keepdim), x, atol=1e-10)


def test_vector_norm_of_a_general_order_has_torch_second_derivative():
    x = np.random.default_rng(3).standard_normal((3, 4))
    ex, tx = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    (eg,) = ember.autograd.grad(ember.linalg.vector_norm(ex, 3, 1).sum(), ex, create_graph=True)
    (tg,) = torch.autograd.grad(torch.linalg.vector_norm(tx, 3, 1).sum(), tx, create_graph=True)
    (eg * eg).sum().backward()
    (tg * tg).sum().backward()
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), atol=1e-10)


# ---------------------------------------------------------------------------------------------- pad


@pytest.mark.parametrize("mode, shape, pads", [
    ("reflect", (1, 1, 3, 3), (-2, -2, 1, 1)),  # a crop past the size: ember gave an empty dim
    ("replicate", (1, 1, 3, 3), (0, 0, -2, -2)),
    ("circular", (1, 1, 3), (-2, -2)),
    ("reflect", (1, 1, 2), (-1, -1)),  # torch's 1-D reflect and replicate refuse an empty result
    ("replicate", (1, 2), (-1, -1)),
    ("reflect", (1, 1, 3), (-4, 1)),
    ("constant", (1, 1, 3), (-4, 1)),  # a constant pad crops first: an IndexError in ember before
])
def test_pad_refuses_what_torch_refuses(mode, shape, pads):
    with pytest.raises(RuntimeError):
        TF.pad(torch.zeros(shape), pads, mode=mode)
    with pytest.raises(RuntimeError, match="pad: padding"):
        F.pad(ember.zeros(shape), pads, mode=mode)


@pytest.mark.parametrize("mode, shape, pads", [
    ("reflect", (1, 1, 2, 2), (0, 0, -1, -1)),  # an empty dim, as torch's 2-D and 3-D kernels give
    ("replicate", (1, 1, 2, 2, 2), (-1, -1, 0, 0, 0, 0)),
    ("constant", (1, 1, 3), (-3, 1)),
    ("circular", (1, 1, 3), (-3, 0)),
    ("reflect", (1, 1, 3), (-2, 0)),
])
def test_pad_still_crops_what_torch_crops(mode, shape, pads):
    assert tuple(F.pad(ember.zeros(shape), pads, mode=mode).shape) == tuple(TF.pad(torch.zeros(shape), pads,
                                                                                     mode=mode).shape)


# ---------------------------------------------------------------------------------------------- layer norm


@pytest.mark.parametrize("shape, normalized_shape", [((2, 0), (0,)), ((2, 3, 0), (3, 0)), ((0, 0), (0,))])
def test_layer_and_rms_norm_over_empty_dims_give_empty_outputs_as_torch(shape, normalized_shape):
    # ember's row path reshaped the input to (-1, 0), which numpy refuses
    for ember_norm, torch_norm in ((F.layer_norm, TF.layer_norm), (F.rms_norm, TF.rms_norm)):
        ex, tx = ember.zeros(shape, requires_grad=True), torch.zeros(shape, requires_grad=True)
        ew, tw = ember.ones(normalized_shape, requires_grad=True), torch.ones(normalized_shape, requires_grad=True)
        eo, to = ember_norm(ex, normalized_shape, ew), torch_norm(tx, normalized_shape, tw)
        assert tuple(eo.shape) == tuple(to.shape)
        eo.sum().backward()
        to.sum().backward()
        assert tuple(ex.grad.shape) == tuple(tx.grad.shape) and tuple(ew.grad.shape) == tuple(tw.grad.shape)
