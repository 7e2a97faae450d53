"""scaled_dot_product_attention, MultiheadAttention and the Transformer layers against torch, same weights."""
import numpy as np
import pytest
import torch

import ember
from ember import nn
from ember.nn import functional as F

from tests.nn.test_rnn import both, close, compare, copy_weights


def twins(name, *args, **kwargs):
    torch.manual_seed(0)
    t = getattr(torch.nn, name)(*args, **kwargs)
    e = getattr(nn, name)(*args, **kwargs)
    copy_weights(t, e)
    return t.eval(), e.eval()


def bool_mask(shape, seed=4):
    mask = np.random.default_rng(seed).random(shape) < 0.3
    mask[..., 0] = False  # every query keeps a key: rows masked out entirely give NaN in torch's MHA
    return ember.tensor(mask), torch.tensor(mask)


# ------------------------------------------------------------------------- scaled_dot_product_attention


def sdpa_inputs(q_shape=(2, 3, 4, 5), kv_shape=(2, 3, 6, 5)):
    return both(q_shape, 0), both(kv_shape, 1), both(kv_shape, 2)


@pytest.mark.parametrize("kwargs", [{}, {"is_causal": True}, {"scale": 0.3}], ids=["plain", "causal", "scale"])
def test_sdpa_matches_torch(kwargs):
    (eq, tq), (ek, tk), (ev, tv) = sdpa_inputs()
    e = F.scaled_dot_product_attention(eq, ek, ev, **kwargs)
    t = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, **kwargs)
    close(e, t)
    e.sum().backward()
    t.sum().backward()
    for ea, ta in [(eq, tq), (ek, tk), (ev, tv)]:
        close(ea.grad, ta.grad)


def test_sdpa_masks():
    (eq, tq), (ek, tk), (ev, tv) = sdpa_inputs()
    em, tm = bool_mask((4, 6))
    em[1] = False  # a query with no key: torch gives zeros
    tm[1] = False
    close(F.scaled_dot_product_attention(eq, ek, ev, attn_mask=em),
          torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, attn_mask=tm))
    ef, tf = both((3, 4, 6), 7)
    close(F.scaled_dot_product_attention(eq, ek, ev, attn_mask=ef),
          torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, attn_mask=tf))


def test_sdpa_gqa_and_errors():
    (eq, tq), (ek, tk), (ev, tv) = sdpa_inputs((1, 4, 3, 2), (1, 2, 5, 2))
    close(F.scaled_dot_product_attention(eq, ek, ev, enable_gqa=True),
          torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, enable_gqa=True))
    with pytest.raises(RuntimeError, match="scaled_dot_product_attention"):
        F.scaled_dot_product_attention(eq, eq[..., :1], eq)


@pytest.mark.parametrize("shapes, dtypes", [
    (((3,), (3,), (3,)), ("float32",) * 3),
    (((2, 3), (2, 3), (2, 3)), ("float64", "float32", "float32")),
], ids=["1d", "mixed_dtypes"])
def test_sdpa_input_errors_match_torch(shapes, dtypes):
    """Checked before the products, so the message names query, key and value rather than matmul."""
    args = [np.ones(s, dtype=d) for s, d in zip(shapes, dtypes)]
    with pytest.raises(RuntimeError, match="Expected query, key, and value") as e_err:
        F.scaled_dot_product_attention(*map(ember.tensor, args))
    with pytest.raises(RuntimeError) as t_err:
        torch.nn.functional.scaled_dot_product_attention(*map(torch.tensor, args))
    assert str(t_err.value).split(",")[0] == str(e_err.value).split(",")[0]


def test_sdpa_dropout_keeps_shape_and_zeroes():
    ember.manual_seed(0)
    q = ember.randn(1, 1, 8, 4)
    out = F.scaled_dot_product_attention(q, q, ember.ones(1, 1, 8, 4), dropout_p=0.5)
    assert out.shape == (1, 1, 8, 4)
    assert not np.allclose(out.numpy(), 1.0)


def test_sdpa_gradcheck():
    q, k, v = (ember.randn(1, 2, 3, 2, dtype=ember.float64, requires_grad=True) for _ in range(3))

    def fn(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)

    assert ember.autograd.gradcheck(fn, (q, k, v))
    assert ember.autograd.gradgradcheck(fn, (q, k, v))


# ---------------------------------------------------------------------------------- MultiheadAttention


MHA_CONFIGS = [{}, {"bias": False}, {"add_bias_kv": True}, {"add_zero_attn": True}, {"kdim": 3, "vdim": 5},
               {"batch_first": True}, {"add_bias_kv": True, "add_zero_attn": True, "kdim": 3, "vdim": 5}]


@pytest.mark.parametrize("kwargs", MHA_CONFIGS, ids=[str(k) for k in MHA_CONFIGS])
def test_mha_matches_torch(kwargs):
    t, e = twins("MultiheadAttention", 4, 2, **kwargs)
    first = kwargs.get("batch_first")
    eq, tq = both((2, 3, 4) if first else (3, 2, 4), 0)
    ek, tk = both((2, 5, kwargs.get("kdim", 4)) if first else (5, 2, kwargs.get("kdim", 4)), 1)
    ev, tv = both((2, 5, kwargs.get("vdim", 4)) if first else (5, 2, kwargs.get("vdim", 4)), 2)
    compare(t, e, (tq, tk, tv), (eq, ek, ev))


@pytest.mark.parametrize("average", [True, False])
def test_mha_masks_and_weights(average):
    t, e = twins("MultiheadAttention", 4, 2)
    eq, tq = both((3, 2, 4))
    ek, tk = both((5, 2, 4), 1)
    epad, tpad = bool_mask((2, 5))
    emask, tmask = both((3, 5), 3)
    kwargs = {"average_attn_weights": average}
    compare(t, e, (tq, tk, tk, tpad, True, tmask), (eq, ek, ek, epad, True, emask))
    ebm, tbm = bool_mask((4, 3, 5), 5)
    close(e(eq, ek, ek, attn_mask=ebm, **kwargs)[1], t(tq, tk, tk, attn_mask=tbm, **kwargs)[1])
    assert e(eq, ek, ek, need_weights=False)[1] is None


def test_mha_unbatched_and_gradcheck():
    t, e = twins("MultiheadAttention", 4, 2)
    eq, tq = both((3, 4))
    compare(t, e, (tq, tq, tq), (eq, eq, eq))
    x = ember.randn(2, 1, 4, dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(lambda x: e(x, x, x)[0], (x,))
    assert ember.autograd.gradgradcheck(lambda x: e(x, x, x)[0], (x,))


def test_mha_repr_state_dict_and_errors():
    for kwargs in [{}, {"kdim": 3, "vdim": 5, "add_bias_kv": True}]:
        t, e = torch.nn.MultiheadAttention(4, 2, **kwargs), nn.MultiheadAttention(4, 2, **kwargs)
        assert repr(e) == repr(t)
        assert list(e.state_dict()) == list(t.state_dict())
    with pytest.raises(AssertionError):
        nn.MultiheadAttention(5, 2)
    e = nn.MultiheadAttention(4, 2)
    with pytest.raises(AssertionError, match="embedding dimension"):
        e(ember.zeros(3, 2, 5), ember.zeros(3, 2, 5), ember.zeros(3, 2, 5))
    with pytest.raises(RuntimeError, match="is_causal"):
        e(ember.zeros(3, 2, 4), ember.zeros(3, 2, 4), ember.zeros(3, 2, 4), is_causal=True)
    with pytest.raises(RuntimeError, match="attn_mask"):
        e(ember.zeros(3, 2, 4), ember.zeros(3, 2, 4), ember.zeros(3, 2, 4), attn_mask=ember.zeros(2, 2))


MHA_SHAPE_ERROR_CASES = [
    # (query, key, value, attn_mask, key_padding_mask, kdim)
    ((3, 2, 4), (5, 2, 4), (5, 2, 4), (3, 4), None, None),
    ((3, 2, 4), (5, 2, 4), (5, 2, 4), (2, 3, 5), None, None),
    ((3, 2, 4), (5, 2, 4), (5, 2, 4), (4, 1, 5), None, None),
    ((3, 2, 4), (5, 2, 4), (5, 2, 4), (4, 3, 5, 1), None, None),
    ((3, 2, 4), (5, 2, 4), (5, 2, 4), (5,), None, None),
    ((3, 4), (5, 4), (5, 4), (4, 3, 4), None, None),
    ((3, 4), (5, 4), (5, 4), (4, 3, 5, 1), None, None),
    ((3, 2, 4), (5, 2, 4), (5, 2, 4), None, (1, 5), None),
    ((3, 2, 4), (5, 2, 4), (5, 2, 4), None, (2, 4), None),
    ((3, 2, 4), (5, 2, 4), (5, 2, 4), None, (2, 5, 1), None),
    ((3, 4), (5, 4), (5, 4), None, (2, 5), None),
    ((3, 2, 4), (4, 2, 4), (5, 2, 4), None, None, None),
    ((3, 2, 4), (5, 2, 4), (5, 2, 3), None, None, None),
    ((3, 2, 4), (4, 2, 3), (5, 2, 3), None, None, 3),
    ((3, 2, 4), (5, 4), (5, 4), None, None, None),
    ((3, 4), (5, 2, 4), (5, 2, 4), None, None, None),
    ((1, 3, 2, 4), (5, 2, 4), (5, 2, 4), None, None, None),
]


@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("query, key, value, attn_mask, key_padding_mask, kdim", MHA_SHAPE_ERROR_CASES)
def test_mha_shape_errors_match_torch(query, key, value, attn_mask, key_padding_mask, kdim, need_weights):
    errors = []
    for lib in (torch, ember):
        module = lib.nn.MultiheadAttention(4, 2, kdim=kdim, vdim=kdim)
        masks = {"attn_mask": None if attn_mask is None else lib.zeros(attn_mask),
                 "key_padding_mask": None if key_padding_mask is None else lib.zeros(key_padding_mask)}
        with pytest.raises(Exception) as error:
            module(lib.zeros(query), lib.zeros(key), lib.zeros(value), need_weights=need_weights, **masks)
        errors.append((error.type, str(error.value).replace("torch.", "ember.")))
    assert errors[1] == errors[0]


def test_mha_integer_mask_error_matches_torch():
    with pytest.raises(AssertionError) as t_err:
        torch.nn.MultiheadAttention(4, 2)(*[torch.zeros(3, 2, 4)] * 3, attn_mask=torch.zeros(3, 3, dtype=torch.int64))
    with pytest.raises(AssertionError) as e_err:
        nn.MultiheadAttention(4, 2)(*[ember.zeros(3, 2, 4)] * 3, attn_mask=ember.zeros(3, 3, dtype=ember.int64))
    assert str(e_err.value) == str(t_err.value)


def test_mha_initialisation():
    e = nn.MultiheadAttention(8, 2, add_bias_kv=True)
    assert np.all(e.in_proj_bias.detach().numpy() == 0) and np.all(e.out_proj.bias.detach().numpy() == 0)
    assert np.abs(e.in_proj_weight.detach().numpy()).max() <= np.sqrt(6 / (8 + 24))


# ---------------------------------------------------------------------------------------- Transformer


LAYER_CONFIGS = [{}, {"norm_first": True}, {"activation": "gelu", "batch_first": True}, {"bias": False}]


@pytest.mark.parametrize("kwargs", LAYER_CONFIGS, ids=[str(k) for k in LAYER_CONFIGS])
def test_encoder_layer_matches_torch(kwargs):
    t, e = twins("TransformerEncoderLayer", 4, 2, 8, dropout=0.0, **kwargs)
    t.train()
    e.train()
    ex, tx = both((2, 3, 4) if kwargs.get("batch_first") else (3, 2, 4))
    mask = nn.Transformer.generate_square_subsequent_mask(3).double()
    compare(t, e, (tx, torch.tensor(mask.numpy())), (ex, mask))


@pytest.mark.parametrize("kwargs", LAYER_CONFIGS, ids=[str(k) for k in LAYER_CONFIGS])
def test_decoder_layer_matches_torch(kwargs):
    t, e = twins("TransformerDecoderLayer", 4, 2, 8, dropout=0.0, **kwargs)
    first = kwargs.get("batch_first")
    ex, tx = both((2, 3, 4) if first else (3, 2, 4))
    em, tm = both((2, 5, 4) if first else (5, 2, 4), 1)
    epad, tpad = bool_mask((2, 5))
    mask = nn.Transformer.generate_square_subsequent_mask(3).double()
    compare(t, e, (tx, tm, torch.tensor(mask.numpy()), None, None, tpad), (ex, em, mask, None, None, epad))


def test_callable_activation_and_stacks():
    for activation in [torch.nn.functional.gelu, None]:
        kwargs = {} if activation is None else {"activation": activation}
        t_layer = torch.nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0, **kwargs)
        e_layer = nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0,
                                             **({} if activation is None else {"activation": F.gelu}))
        t = torch.nn.TransformerEncoder(t_layer, 2, torch.nn.LayerNorm(4), enable_nested_tensor=False)
        e = nn.TransformerEncoder(e_layer, 2, nn.LayerNorm(4), enable_nested_tensor=False)
        copy_weights(t, e)
        ex, tx = both((3, 2, 4))
        compare(t, e, (tx,), (ex,))
    t_dec = torch.nn.TransformerDecoder(torch.nn.TransformerDecoderLayer(4, 2, 8, dropout=0.0), 2)
    e_dec = nn.TransformerDecoder(nn.TransformerDecoderLayer(4, 2, 8, dropout=0.0), 2)
    copy_weights(t_dec, e_dec)
    ex, tx = both((3, 2, 4))
    em, tm = both((5, 2, 4), 1)
    compare(t_dec, e_dec, (tx, tm), (ex, em))


@pytest.mark.parametrize("batch_first", [False, True])
def test_transformer_matches_torch(batch_first):
    options = dict(d_model=4, nhead=2, num_encoder_layers=2, num_decoder_layers=1, dim_feedforward=8, dropout=0.0,
                   batch_first=batch_first)
    t, e = twins("Transformer", **options)
    es, ts = both((2, 5, 4) if batch_first else (5, 2, 4))
    et, tt = both((2, 3, 4) if batch_first else (3, 2, 4), 1)
    mask = nn.Transformer.generate_square_subsequent_mask(3).double()
    compare(t, e, (ts, tt, None, torch.tensor(mask.numpy())), (es, et, None, mask))
    assert repr(e) == repr(t)
    assert list(e.state_dict()) == list(t.state_dict())


def test_transformer_errors_and_mask():
    close(nn.Transformer.generate_square_subsequent_mask(4), torch.nn.Transformer.generate_square_subsequent_mask(4))
    e = nn.Transformer(4, 2, 1, 1, 8)
    with pytest.raises(RuntimeError, match="batch number"):
        e(ember.zeros(3, 2, 4), ember.zeros(3, 1, 4))
    with pytest.raises(RuntimeError, match="d_model"):
        e(ember.zeros(3, 2, 5), ember.zeros(3, 2, 5))
    with pytest.raises(RuntimeError, match="relu/gelu"):
        nn.TransformerEncoderLayer(4, 2, activation="tanh")


def test_encoder_layer_repr_and_gradcheck():
    t = torch.nn.TransformerDecoderLayer(4, 2, 8, norm_first=True)
    e = nn.TransformerDecoderLayer(4, 2, 8, norm_first=True)
    assert repr(e) == repr(t)
    assert list(e.state_dict()) == list(t.state_dict())
    layer = nn.TransformerEncoderLayer(4, 2, 6, dropout=0.0, norm_first=True).double()
    x = ember.randn(2, 1, 4, dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(layer, (x,))
    assert ember.autograd.gradgradcheck(layer, (x,))


def _mismatch_warnings(lib, build) -> list:
    """The messages of the mask-type warnings a call of ``build(lib)`` gives (a bool padding beside a float mask)."""
    import warnings

    lib.manual_seed(0)
    padding = lib.tensor([[False, True, False]])
    mask = lib.nn.Transformer.generate_square_subsequent_mask(3)
    x = lib.randn(1, 3, 8)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        build(lib, x, mask, padding)
    return [str(w.message).split(" Use same type")[0] for w in caught if "mismatched" in str(w.message)]


@pytest.mark.parametrize("name", ["mha", "encoder layer", "encoder", "decoder layer", "decoder"])
def test_mismatched_mask_types_warn_as_torch(name):
    calls = {
        "mha": lambda lib, x, m, p: lib.nn.MultiheadAttention(8, 2, batch_first=True)(
            x, x, x, key_padding_mask=p, attn_mask=m),
        "encoder layer": lambda lib, x, m, p: lib.nn.TransformerEncoderLayer(8, 2, 16, batch_first=True)(
            x, src_mask=m, src_key_padding_mask=p),
        "encoder": lambda lib, x, m, p: lib.nn.TransformerEncoder(
            lib.nn.TransformerEncoderLayer(8, 2, 16, batch_first=True), 2, enable_nested_tensor=False)(
            x, mask=m, src_key_padding_mask=p),
        "decoder layer": lambda lib, x, m, p: lib.nn.TransformerDecoderLayer(8, 2, 16, batch_first=True)(
            x, x, tgt_mask=m, tgt_key_padding_mask=p),
        "decoder": lambda lib, x, m, p: lib.nn.TransformerDecoder(
            lib.nn.TransformerDecoderLayer(8, 2, 16, batch_first=True), 2)(x, x, tgt_mask=m, tgt_key_padding_mask=p),
    }
    expected = _mismatch_warnings(torch, calls[name])
    assert expected  # torch warns on every one of these
    assert _mismatch_warnings(ember, calls[name]) == expected


def test_mismatched_mask_types_keep_the_result():
    """The bool padding, converted to a float mask, masks the same keys as before."""
    ember.manual_seed(0)
    layer = nn.TransformerEncoderLayer(8, 2, 16, batch_first=True, dropout=0.0)
    x = ember.randn(2, 3, 8)
    padding = ember.tensor([[False, True, False], [False, False, True]])
    mask = nn.Transformer.generate_square_subsequent_mask(3)
    with pytest.warns(UserWarning, match="mismatched src_key_padding_mask and src_mask"):
        mixed = layer(x, src_mask=mask, src_key_padding_mask=padding)
    floats = layer(x, src_mask=mask, src_key_padding_mask=ember.zeros(2, 3).masked_fill(padding, float("-inf")))
    assert ember.equal(mixed, floats)


def encoder_twins(layer_kwargs, **kwargs):
    torch.manual_seed(0)
    t = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(8, 2, 16, **layer_kwargs), 2,
                                    norm=torch.nn.LayerNorm(8), **kwargs)
    e = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, **layer_kwargs), 2, norm=nn.LayerNorm(8), **kwargs)
    copy_weights(t, e)
    return t.eval(), e.eval()


@pytest.mark.parametrize("padding", [[[0, 0, 0, 0, 0], [0, 0, 0, 1, 1]], [[0, 0, 0, 0, 0], [0, 1, 0, 1, 1]]],
                         ids=["left_aligned", "not_left_aligned"])
@pytest.mark.parametrize("as_float", [False, True])
@pytest.mark.parametrize("grad", [False, True])
def test_encoder_in_evaluation_fills_padded_positions_as_torch(padding, as_float, grad):
    """Without gradients, torch's encoder of batch-first layers runs each sequence at its own length (nested
    tensors) and pads the results with zeros, before the final norm."""
    t, e = encoder_twins({"batch_first": True})
    (ex, tx) = both((2, 5, 8))
    mask = np.array(padding, dtype=bool)
    e_mask, t_mask = ember.tensor(mask), torch.tensor(mask)
    if as_float:
        e_mask, t_mask = e_mask.double() * -1e9, t_mask.double() * -1e9
    with torch.set_grad_enabled(grad), ember.set_grad_enabled(grad):
        close(e(ex, src_key_padding_mask=e_mask), t(tx, src_key_padding_mask=t_mask))


def test_encoder_says_why_it_cannot_run_nested_as_torch():
    unfit = ({}, {"batch_first": True, "norm_first": True}, {"batch_first": True, "activation": "gelu", "bias": False})
    for layer_kwargs in unfit:
        with pytest.warns(UserWarning) as t_warnings:
            t, _ = encoder_twins(layer_kwargs)
        with pytest.warns(UserWarning, match="enable_nested_tensor is True") as e_warnings:
            _, e = encoder_twins(layer_kwargs)
        assert str(e_warnings[0].message) == str(t_warnings[0].message)
        assert e.use_nested_tensor is t.use_nested_tensor is False
    t, e = encoder_twins({"batch_first": True})
    assert e.use_nested_tensor is t.use_nested_tensor is True
    assert e.layers[0].activation_relu_or_gelu == t.layers[0].activation_relu_or_gelu == 1


def dead_row_masks():
    padding = np.zeros((2, 5), dtype=bool)
    padding[1] = True  # the second sequence has no key left
    attn = np.zeros((5, 5), dtype=bool)
    attn[2] = True  # nor has the third query
    return padding, attn


@pytest.mark.parametrize("grad", [False, True], ids=["inference", "grad"])
@pytest.mark.parametrize("need_weights", [False, True])
@pytest.mark.parametrize("which", ["padding", "attn"])
def test_mha_queries_without_keys_match_torch(grad, need_weights, which):
    """torch gives 0 there without weights (its scaled_dot_product_attention) and NaN with them, or on its fused
    inference path; ember follows."""
    t, e = twins("MultiheadAttention", 8, 2, batch_first=True)
    padding, attn = dead_row_masks()
    masks = {"key_padding_mask": padding} if which == "padding" else {"attn_mask": attn}
    ex, tx = both((2, 5, 8))
    with torch.set_grad_enabled(grad), ember.set_grad_enabled(grad):
        t_out = t(tx, tx, tx, need_weights=need_weights, **{k: torch.tensor(v) for k, v in masks.items()})
        e_out = e(ex, ex, ex, need_weights=need_weights, **{k: ember.tensor(v) for k, v in masks.items()})
    assert (e_out[1] is None) == (t_out[1] is None)
    np.testing.assert_allclose(e_out[0].detach().numpy(), t_out[0].detach().numpy(), rtol=1e-9, atol=1e-11)


def test_mha_without_weights_gives_finite_gradients_for_queries_without_keys():
    t, e = twins("MultiheadAttention", 8, 2)
    padding, _ = dead_row_masks()
    (ex, tx) = both((5, 2, 8))
    weights = np.random.default_rng(3).standard_normal((5, 2, 8))
    (t(tx, tx, tx, torch.tensor(padding), False)[0] * torch.tensor(weights)).sum().backward()
    (e(ex, ex, ex, ember.tensor(padding), False)[0] * ember.tensor(weights)).sum().backward()
    assert np.isfinite(ex.grad.numpy()).all()
    close(ex.grad, tx.grad)
    for (name, tp), (_, ep) in zip(t.named_parameters(), e.named_parameters()):
        close(ep.grad, tp.grad)


def test_mha_merge_masks_matches_torch():
    t, e = twins("MultiheadAttention", 4, 2, batch_first=True)
    attn = np.triu(np.ones((5, 5), dtype=bool), 1)
    padding = np.zeros((3, 5), dtype=bool)
    padding[1, 3:] = True
    per_head = np.broadcast_to(attn, (6, 5, 5))
    for a, k in [(None, None), (None, padding), (attn, None), (attn, padding), (per_head, padding)]:
        results = []
        for lib, m in ((torch, t), (ember, e)):
            merged, kind = m.merge_masks(None if a is None else lib.tensor(a), None if k is None else lib.tensor(k),
                                         lib.zeros(3, 5, 4))
            results.append((kind, None if merged is None else merged.numpy().tolist()))
        assert results[0] == results[1]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("kwargs", [{}, {"is_causal": True}, {"mask": "bool"}, {"mask": "float"}])
def test_sdpa_in_half_precision_computes_in_single_as_torch(dtype, kwargs):
    """torch attends in single precision and rounds the result once: the very same values come out."""
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in ((2, 3, 5, 8), (2, 3, 7, 8), (2, 3, 7, 6))]
    mask = {"bool": rng.random((5, 7)) < 0.7, "float": rng.standard_normal((5, 7)).astype(np.float32)}
    results = []
    for lib in (torch, ember):
        q, k, v = (lib.tensor(a).to(getattr(lib, dtype)) for a in arrays)
        options = dict(kwargs)
        if "mask" in options:
            options = {"attn_mask": lib.tensor(mask[options.pop("mask")])}
        out = lib.nn.functional.scaled_dot_product_attention(q, k, v, **options)
        assert out.dtype == getattr(lib, dtype)
        results.append(out.float().numpy())
    np.testing.assert_array_equal(results[1], results[0])
