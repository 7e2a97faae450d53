"""Self-attention read from the packed in-projection (``PackedSelfAttention``): outputs, weights and every
gradient against torch's MultiheadAttention in both layouts and under masks; gradients of gradients."""
import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import ember
from ember.nn._functional._packed_attention import PackedSelfAttention

from tests.nn.test_rnn import close, copy_weights


def _graph_names(tensor) -> set:
    names, seen, stack = set(), set(), [tensor.grad_fn]
    while stack:
        node = stack.pop()
        if node is not None and id(node) not in seen:
            seen.add(id(node))
            names.add(node.name())
            stack.extend(n for n, _ in node.next_functions)
    return names


@settings(max_examples=12, deadline=None)
@given(batch_first=st.booleans(), mask=st.sampled_from(["none", "float", "bool", "padding", "causal"]),
       need_weights=st.booleans(), average=st.booleans(), unbatched=st.booleans(), seed=st.integers(0, 99))
def test_self_attention_matches_torch(batch_first, mask, need_weights, average, unbatched, seed):
    torch.manual_seed(seed)
    t = torch.nn.MultiheadAttention(6, 2, batch_first=batch_first)
    e = ember.nn.MultiheadAttention(6, 2, batch_first=batch_first)
    copy_weights(t, e)
    rng = np.random.default_rng(seed)
    length, batch = 4, 3
    shape = (length, 6) if unbatched else ((batch, length, 6) if batch_first else (length, batch, 6))
    x = rng.standard_normal(shape)
    kwargs = [{}, {}]
    if mask == "float":
        m = rng.standard_normal((length, length))
        kwargs = [{"attn_mask": ember.tensor(m)}, {"attn_mask": torch.tensor(m)}]
    elif mask in ("bool", "padding"):
        m = rng.random((length, length) if mask == "bool" else ((length,) if unbatched else (batch, length))) < 0.4
        m[..., 0] = False  # every query keeps a key
        name = "attn_mask" if mask == "bool" else "key_padding_mask"
        kwargs = [{name: ember.tensor(m)}, {name: torch.tensor(m)}]
    elif mask == "causal":
        kwargs = [{"attn_mask": ember.nn.Transformer.generate_square_subsequent_mask(length, dtype=ember.float64),
                   "is_causal": True},
                  {"attn_mask": torch.nn.Transformer.generate_square_subsequent_mask(length, dtype=torch.float64),
                   "is_causal": True}]
    results = []
    for module, lib, extra in ((e, ember, kwargs[0]), (t, torch, kwargs[1])):
        q = lib.tensor(x, requires_grad=True)
        out, weights = module(q, q, q, need_weights=need_weights, average_attn_weights=average, **extra)
        loss = out.square().sum() + (weights.cos().sum() if need_weights else 0)
        loss.backward()
        results.append([out, q.grad] + [p.grad for p in module.parameters()] + ([weights] if need_weights else []))
    for mine, theirs in zip(*results):
        close(mine, theirs)


def test_self_attention_reads_the_projection_in_place():
    x = ember.randn(2, 5, 8, requires_grad=True)
    mha = ember.nn.MultiheadAttention(8, 2, batch_first=True)
    out, weights = mha(x, x, x)
    names = _graph_names(out)
    # no copy of the input, of the heads or of the attended values: views and transposes around the products
    assert "AttentionBackward0" in names and not names & {"CloneBackward0", "SplitBackward0", "CatBackward0",
                                                          "PermuteBackward0", "UnsafeViewBackward0"}
    assert out.is_contiguous()


@pytest.mark.parametrize("batch_first", [True, False])
def test_packed_attention_gradgradcheck_with_a_learnable_mask_and_the_weights_used(batch_first):
    rng = np.random.default_rng(0)
    packed = ember.tensor(rng.standard_normal((2, 3, 12) if batch_first else (3, 2, 12)), requires_grad=True)
    mask = ember.tensor(rng.standard_normal((3, 3)), requires_grad=True)  # [L, L]

    def f(packed, mask):
        return PackedSelfAttention.apply(packed, mask, 2, 0.7, batch_first)

    assert ember.autograd.gradcheck(f, (packed, mask))
    assert ember.autograd.gradgradcheck(f, (packed, mask))


def test_packed_attention_gradient_of_the_weights_alone():
    rng = np.random.default_rng(1)
    packed = ember.tensor(rng.standard_normal((2, 3, 12)), requires_grad=True)
    assert ember.autograd.gradcheck(lambda p: PackedSelfAttention.apply(p, None, 2, 0.5, True)[1], (packed,))


def test_weights_changed_in_place_before_backward_raise_as_torch():
    packed = ember.randn(2, 3, 12, requires_grad=True)
    out, weights = PackedSelfAttention.apply(packed, None, 2, 0.5, False)
    weights.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()


def test_float32_encoder_layer_gradients_match_torch():
    torch.manual_seed(0)
    t = torch.nn.TransformerEncoderLayer(16, 4, 32, dropout=0.0, norm_first=True, batch_first=True)
    e = ember.nn.TransformerEncoderLayer(16, 4, 32, dropout=0.0, norm_first=True, batch_first=True)
    e.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in t.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((2, 6, 16)).astype(np.float32)
    for module, lib in ((e, ember), (t, torch)):
        lib.nn.functional.mse_loss(module(lib.tensor(x)), lib.zeros(2, 6, 16)).backward()
    for (name, mine), theirs in zip(e.named_parameters(), t.parameters()):
        np.testing.assert_allclose(mine.grad.numpy(), theirs.grad.numpy(), rtol=1e-4, atol=1e-6, err_msg=name)
