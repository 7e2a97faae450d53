"""Multi-head attention's core as one op (``Attention``): values, weights and every gradient against torch, under
masks and with the weights in the loss; gradients of gradients and forward mode through it."""
import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import ember
from ember.nn import functional as F
from ember.nn._functional.attention import Attention

from tests.nn.test_rnn import both, close, copy_weights
from tests.twins import both as in_both_libraries


@settings(max_examples=20, deadline=None)
@given(mask=st.sampled_from(["none", "float", "bool", "padding"]), need_weights=st.booleans(),
       average=st.booleans(), seed=st.integers(0, 99))
def test_attention_with_masks_and_weights_in_the_loss_matches_torch(mask, need_weights, average, seed):
    torch.manual_seed(seed)
    t, e = torch.nn.MultiheadAttention(6, 2), ember.nn.MultiheadAttention(6, 2)
    copy_weights(t, e)
    (eq, tq), (ek, tk) = both((4, 3, 6), seed), both((5, 3, 6), seed + 1)
    rng = np.random.default_rng(seed)
    kwargs = [{}, {}]
    if mask == "float":
        m = rng.standard_normal((4, 5))
        kwargs = [{"attn_mask": ember.tensor(m)}, {"attn_mask": torch.tensor(m)}]
    elif mask in ("bool", "padding"):
        m = rng.random((4, 5) if mask == "bool" else (3, 5)) < 0.4
        m[..., 0] = False  # every query keeps a key
        name = "attn_mask" if mask == "bool" else "key_padding_mask"
        kwargs = [{name: ember.tensor(m)}, {name: torch.tensor(m)}]
    results = []
    for module, q, k, extra in ((e, eq, ek, kwargs[0]), (t, tq, tk, kwargs[1])):
        out, weights = module(q, k, k, need_weights=need_weights, average_attn_weights=average, **extra)
        loss = out.square().sum() + (weights.cos().sum() if need_weights else 0)
        loss.backward()
        results.append([out, q.grad, k.grad] + [p.grad for p in module.parameters()] +
                       ([weights] if need_weights else []))
    for mine, theirs in zip(*results):
        close(mine, theirs)


def test_mha_runs_its_attention_as_one_op_and_dropout_composed():
    x = ember.randn(3, 2, 4, requires_grad=True)
    mha = ember.nn.MultiheadAttention(4, 2)
    _, weights = mha(x, x, x)
    names = set()
    stack = [weights.grad_fn]
    while stack:
        node = stack.pop()
        if node is not None and node.name() not in names:
            names.add(node.name())
            stack.extend(n for n, _ in node.next_functions)
    assert "AttentionBackward0" in names and "SoftmaxBackward0" not in names
    mha_dropout = ember.nn.MultiheadAttention(4, 2, dropout=0.5)
    assert mha_dropout(x, x, x)[0].shape == (3, 2, 4)  # dropout of the weights keeps the composed ops


def test_attention_gradgradcheck_with_a_learnable_mask_and_the_weights_used():
    rng = np.random.default_rng(0)
    q, k, v, mask = (ember.tensor(rng.standard_normal(s), requires_grad=True)
                     for s in ((2, 3, 4), (2, 5, 4), (2, 5, 2), (3, 5)))

    def f(q, k, v, mask):
        out, weights = Attention.apply(q, k, v, mask, 0.7)
        return out, weights

    assert ember.autograd.gradcheck(f, (q, k, v, mask))
    assert ember.autograd.gradgradcheck(f, (q, k, v, mask))


@pytest.mark.parametrize("moving", [(0, 1, 2, 3), (1,), (2,)], ids=["all", "key", "value"])
def test_attention_forward_mode_matches_torch(moving):
    # the inputs in `moving` carry tangents, the others are held constant
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal(s) for s in ((2, 3, 4), (2, 5, 4), (2, 5, 2), (3, 5))]
    tangents = [rng.standard_normal(arrays[i].shape) for i in moving]

    def torch_attention(*moved):
        q, k, v, mask = (moved[moving.index(i)] if i in moving else torch.tensor(a) for i, a in enumerate(arrays))
        weights = torch.softmax((q * 0.7) @ k.transpose(-2, -1) + mask, -1)
        return weights @ v, weights

    def ember_attention(*moved):
        inputs = (moved[moving.index(i)] if i in moving else ember.tensor(a) for i, a in enumerate(arrays))
        return Attention.apply(*inputs, 0.7)

    primals = [arrays[i] for i in moving]
    mine = ember.func.jvp(ember_attention, tuple(map(ember.tensor, primals)), tuple(map(ember.tensor, tangents)))
    theirs = torch.func.jvp(torch_attention, tuple(map(torch.tensor, primals)), tuple(map(torch.tensor, tangents)))
    for m, t in zip(mine, theirs):
        for a, b in zip(m, t):
            close(a, b)


def test_weights_changed_in_place_before_backward_raise_as_torch():
    q = ember.randn(2, 3, 4, requires_grad=True)
    out, weights = Attention.apply(q, q, q, None, 0.5)
    weights.mul_(2)  # the backward reads the weights: as torch's softmax output, they are version-checked
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()


@pytest.mark.parametrize("size", [1.0, 40.0])  # scores near 0 (exps taken as they are) and far (largest out first)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_attention_weights_of_small_and_large_scores_match_torch(size, dtype):
    rng = np.random.default_rng(3)
    q, k = (rng.standard_normal((2, 5, 8)).astype(dtype) * size for _ in range(2))
    v = rng.standard_normal((2, 5, 3)).astype(dtype)
    out, weights = Attention.apply(*map(ember.tensor, (q, k, v)), None, 1.0)
    expected = torch.softmax(torch.tensor(q) @ torch.tensor(k).transpose(-2, -1), -1)
    assert np.isfinite(weights.numpy()).all()
    tolerance = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(weights.numpy(), expected.numpy(), rtol=tolerance, atol=tolerance)
    np.testing.assert_allclose(out.numpy(), (expected @ torch.tensor(v)).numpy(), rtol=tolerance, atol=tolerance)


def test_attention_weights_of_a_long_row_of_large_scores_stay_finite():
    # 20,000 scores of 79: each exp is finite in single precision, but their sum is not; the largest goes first
    q, k = ember.full((1, 1, 1), 79.0 ** 0.5), ember.full((1, 20000, 1), 79.0 ** 0.5)
    _, weights = Attention.apply(q, k, ember.ones(1, 20000, 1), None, 1.0)
    np.testing.assert_allclose(weights.numpy(), np.full((1, 1, 20000), 1 / 20000), rtol=1e-4)


@pytest.mark.parametrize("mask_kind", ["float", "bool"])
@pytest.mark.parametrize("keys", [3, 5])
def test_sdpa_applies_a_mask_and_is_causal_together_as_torch(mask_kind, keys):
    """torch 2.13 takes both: the mask, and the causal mask (aligned top-left) on top of it."""
    rng = np.random.default_rng(keys)
    q, k = rng.standard_normal((1, 2, 3, 4)), rng.standard_normal((1, 2, keys, 4))
    mask = rng.standard_normal((3, keys)) if mask_kind == "float" else rng.random((3, keys)) > 0.3
    mask[:, 0] = True if mask_kind == "bool" else mask[:, 0]  # every row keeps a key

    def program(lib):
        query, key = lib.tensor(q, requires_grad=True), lib.tensor(k, requires_grad=True)
        out = lib.nn.functional.scaled_dot_product_attention(query, key, key, attn_mask=lib.tensor(mask),
                                                             is_causal=True)
        (out * lib.arange(1.0, 5.0, dtype=lib.float64)).sum().backward()
        return out, query.grad, key.grad

    in_both_libraries(program)
