"""Attention of ``nn.functional``: ``scaled_dot_product_attention`` and ``multi_head_attention_forward``.

``scaled_dot_product_attention`` is composed from ember ops (two batched matmuls around a softmax);
``multi_head_attention_forward`` without dropout runs its attention as one op (``Attention``) whose backward is
written in ember ops too, so gradients of any order work in both.

>>> import ember
>>> q = ember.ones(1, 2, 4)
>>> ember.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True).shape
ember.Size([1, 2, 4])
"""
from __future__ import annotations

import math
import warnings

import numpy as np

import ember
from ember import _blas, _dtype
from ember._ops._support import user_stacklevel, wrap
from ember._tensor import Tensor
from ember.autograd.function import Function
from ember.nn import functional as F
from ember.nn.attention import math_kernel_enabled
from ember.overrides import overridable

__all__ = ["multi_head_attention_forward", "scaled_dot_product_attention"]

nn_function = overridable("ember.nn.functional")


def _additive(mask: Tensor | None, dtype) -> Tensor | None:
    """A mask as a float to add to the scores: a bool mask's ``True`` (masked out) becomes ``-inf``."""
    if mask is None or mask.dtype != ember.bool:
        return mask
    return ember.zeros(mask.shape, dtype=dtype).masked_fill(mask, float("-inf"))


def padding_beside_mask(padding: Tensor | None, padding_name: str, mask: Tensor | None, mask_name: str,
                        dtype) -> Tensor | None:
    """A key padding mask given with an attention mask of another dtype (a bool one beside a float one) works,
    but torch deprecates the mix and warns: so does ember. The padding then goes on as a float mask of ``dtype``
    (as torch converts it), so that the layers it is handed to do not warn again. A mask of neither kind is
    refused here, by the caller's name for it."""
    for value, name in ((padding, padding_name), (mask, mask_name)):
        if value is not None and value.dtype != ember.bool and not value.is_floating_point():
            raise AssertionError(f"only bool and floating types of {name} are supported")
    if padding is None or mask is None or padding.dtype == mask.dtype:
        return padding
    warnings.warn(f"Support for mismatched {padding_name} and {mask_name} is deprecated. Use same type for both "
                  f"instead (e.g. both bool, or {padding_name}.to({mask.dtype}))", UserWarning,
                  stacklevel=user_stacklevel())
    return _additive(padding, dtype)


def _causal(length: int, source: int, dtype) -> Tensor:
    """``-inf`` above the diagonal of an ``[L, S]`` matrix, 0 elsewhere."""
    above = np.triu(np.ones((length, source), dtype=bool), 1)
    return _additive(ember.tensor(above), dtype)


def _softmax_rows(scores: Tensor, zero_dead_rows: bool) -> Tensor:
    """Softmax over the last dim; rows masked out entirely give 0 when ``zero_dead_rows``, else NaN as torch's MHA."""
    if not zero_dead_rows:
        return F.softmax(scores, -1)
    dead = ember.tensor(np.all(np.isneginf(scores._data), axis=-1, keepdims=True))
    if not dead.any():
        return F.softmax(scores, -1)
    return F.softmax(scores.masked_fill(dead, 0.0), -1).masked_fill(dead, 0.0)


def _swap(x):
    """The last two dims swapped, of an array or a tensor."""
    return x.swapaxes(-1, -2) if isinstance(x, np.ndarray) else x.transpose(-2, -1)


def _row_sums(x):
    return x.sum(-1, keepdims=True) if isinstance(x, np.ndarray) else x.sum(-1, keepdim=True)


def _safe_score(dtype: np.dtype, length: int) -> float:
    """How far from 0 scores may lie for their exps to be normal numbers and a row's sum of ``length`` of them
    finite (in single precision about 84 for rows of 64)."""
    info = _dtype.float_info(dtype)
    return min(math.log(float(info.max)) - math.log(max(length, 1)), -math.log(float(info.tiny))) - 1.0


def _softmax_of_rows(scores: np.ndarray) -> np.ndarray:
    """Softmax over the last dim, in place in ``scores`` (a fresh array); a row of ``-inf`` gives NaN, as torch's MHA.

    Each row's largest is taken out first only when some score is far from 0 (or not finite): NumPy's
    maximum along rows of 64 costs three times the ``exp``, where the whole array's extremes cost a tenth.
    The row sums are a product with ones (BLAS), five times faster than NumPy's sum along short rows.
    """
    limit = _safe_score(scores.dtype, scores.shape[-1])
    if scores.size and not (-limit <= scores.min() and scores.max() <= limit):  # NaN fails both: general path
        scores -= scores.max(-1, keepdims=True)
    np.exp(scores, out=scores)
    scores /= (scores @ np.ones(scores.shape[-1], scores.dtype))[..., None]
    return scores


def transposed(x: np.ndarray, scale: float = 1.0) -> np.ndarray:
    """The last two dims of an array swapped (times ``scale``), as a contiguous copy: batched products of
    small matrices take a transposed right operand at half the speed of a contiguous one (a head's ``q k^T``:
    105 against 56 µs for 32 heads of 64 x 32 in OpenBLAS, the copy 15-35 µs); the scale costs no pass more."""
    if scale == 1.0:
        return np.ascontiguousarray(x.swapaxes(-1, -2))
    return np.multiply(x.swapaxes(-1, -2), np.asarray(scale, x.dtype), order="C")


def attention_weights(q: np.ndarray, k: np.ndarray, mask: Tensor | None, scale: float) -> np.ndarray:
    """``softmax(q k^T * scale + mask)`` over the last dim, of arrays (``mask`` a tensor or None)."""
    scores = _blas.matmul(q, transposed(k, scale))
    if mask is not None:
        scores = np.add(scores, mask._data, out=scores if np.broadcast_shapes(scores.shape, mask.shape) ==
                        scores.shape else None)
    with np.errstate(invalid="ignore"):  # a row masked out entirely: NaN, as torch's
        return _softmax_of_rows(scores)


def _attention_backward(grad_out, grad_weights, query, key, value, weights, scale: float) -> tuple:
    """The gradients of ``query``, ``key``, ``value`` and the additive mask, from the weights (on arrays or
    tensors: the same formula serves a first-order backward and, in ember ops, one that records a graph)."""
    product = _blas.product
    grad_value = product(_swap(weights), grad_out)
    grad_weights = product(grad_out, _swap(value)) if grad_weights is None else \
        product(grad_out, _swap(value)) + grad_weights
    grad_scores = weights * (grad_weights - _row_sums(grad_weights * weights))
    return product(grad_scores, key) * scale, product(_swap(grad_scores), query * scale), grad_value, grad_scores


class Attention(Function):
    """``softmax(query key^T * scale + mask) value`` and the weights, as one op on ``[..., L, E]`` inputs.

    Composed of ops, the attention of a transformer block is a dozen nodes, each a new array and a
    backward of its own; here the forward makes the scores once and turns them into the weights in place,
    and the backward is five batched products. With ``create_graph`` the weights are recomputed in ember
    ops, and the same backward formula records the gradient's graph.
    """

    backward_name = "AttentionBackward0"
    backward_on_arrays = True

    @staticmethod
    def forward(ctx, query, key, value, mask, scale):
        weights = attention_weights(query._data, key._data, mask, scale)
        result = wrap(weights)  # saved as an output: version-checked, and freed after a backward
        ctx.save_for_backward(query, key, value, mask, result)
        ctx.scale = scale
        ctx.set_materialize_grads(False)
        return wrap(_blas.matmul(weights, value._data)), result

    @staticmethod
    def backward(ctx, grad_out, grad_weights):
        query, key, value, mask, weights = ctx.saved_tensors
        if grad_out is None and grad_weights is None:
            return None, None, None, None, None
        if not isinstance(grad_out if grad_out is not None else grad_weights, np.ndarray):
            # recorded: the weights as ops of the inputs
            weights = F.softmax((query * ctx.scale) @ key.transpose(-2, -1) + (0 if mask is None else mask), -1)
        if grad_out is None:
            grad_out = (np.zeros if isinstance(grad_weights, np.ndarray) else ember.zeros)(
                tuple(weights.shape[:-1]) + (value.shape[-1],), dtype=grad_weights.dtype)
        grads = _attention_backward(grad_out, grad_weights, query, key, value, weights, ctx.scale)
        needs = ctx.needs_input_grad
        return tuple(g if need else None for g, need in zip(grads, needs)) + (None,)

    @staticmethod
    def jvp(ctx, query_tangent, key_tangent, value_tangent, mask_tangent, _):
        query, key, value, mask, scale = ctx.primals
        weights = ctx.result[1].detach()
        terms = ([query_tangent @ key.transpose(-2, -1) * scale] if query_tangent is not None else []) + \
            ([query @ key_tangent.transpose(-2, -1) * scale] if key_tangent is not None else []) + \
            ([mask_tangent] if mask_tangent is not None else [])
        if terms:
            scores = sum(terms[1:], terms[0])
            weights_tangent = weights * (scores - (scores * weights).sum(-1, keepdim=True))
        else:
            weights_tangent = ember.zeros_like(weights)
        out = weights_tangent @ value
        if value_tangent is not None:
            out = out + weights @ value_tangent
        return out, weights_tangent


def _attend(query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None, dropout_p: float, scale: float,
            zero_dead_rows: bool) -> tuple[Tensor, Tensor]:
    """The attended values and the attention weights; ``mask`` is additive (or ``None``)."""
    if dropout_p == 0.0 and not zero_dead_rows and query.dtype in (ember.float32, ember.float64):
        return Attention.apply(query, key, value, mask, scale)  # half precision: the softmax's ops compute in single
    scores = (query * scale) @ key.transpose(-2, -1)
    if mask is not None:
        scores = scores + mask
    weights = _softmax_rows(scores, zero_dead_rows)
    if dropout_p > 0.0:
        weights = F.dropout(weights, dropout_p)
    return weights @ value, weights


@nn_function
def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None = None,
                                 dropout_p: float = 0.0, is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False) -> Tensor:
    """``softmax(query key^T * scale + mask) value`` over the last two dims of ``[..., L, E]`` inputs.

    A bool ``attn_mask`` marks with ``True`` the pairs that take part; a float one is added to the scores.
    ``enable_gqa`` lets ``key``/``value`` have fewer heads (dim -3) than ``query``, shared by groups.

    >>> import ember
    >>> q = ember.tensor([[[1.0, 0.0], [0.0, 1.0]]])
    >>> ember.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True)
    tensor([[[1.0000, 0.0000],
             [0.3302, 0.6698]]])
    """
    if not math_kernel_enabled():
        raise RuntimeError("No available kernel. Aborting execution. scaled_dot_product_attention: ember has only "
                           "the math kernel, and sdpa_kernel(...) left it out; include SDPBackend.MATH")
    _check_sdpa_inputs(query, key, value)
    if query.shape[-1] != key.shape[-1] or key.shape[-2] != value.shape[-2]:
        raise RuntimeError(f"scaled_dot_product_attention: query [..., L, E] and key [..., S, E] must agree in E and "
                           f"key and value in S; got query {tuple(query.shape)}, key {tuple(key.shape)}, value "
                           f"{tuple(value.shape)}")
    if enable_gqa and query.dim() >= 3 and key.shape[-3] != query.shape[-3]:
        key, value = _share_heads(query, key, value)
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    dtype = query.dtype
    if dtype in (ember.float16, ember.bfloat16):
        # computed in single precision (a single precision mask as it is) and rounded once, as torch's
        if attn_mask is not None and attn_mask.dtype not in (ember.bool, ember.float32):
            attn_mask = _sdpa_float_mask(attn_mask, dtype).float()
        query, key, value = query.float(), key.float(), value.float()
    if attn_mask is not None and attn_mask.dtype == ember.bool:
        mask = _additive(attn_mask.logical_not(), query.dtype)
    else:
        mask = _sdpa_float_mask(attn_mask, query.dtype)
    if is_causal:  # with a mask too, both apply, as torch's
        causal = _causal(query.shape[-2], key.shape[-2], query.dtype)
        mask = causal if mask is None else mask + causal
    return _attend(query, key, value, mask, dropout_p, scale, zero_dead_rows=True)[0].to(dtype)


def _check_sdpa_inputs(query: Tensor, key: Tensor, value: Tensor) -> None:
    """Ranks and dtypes as torch checks them, before any product could fail with a message about matmul."""
    if min(query.dim(), key.dim(), value.dim()) < 2:
        raise RuntimeError(f"Expected query, key, and value to all be at least 2 dimensional, but got query.dim: "
                           f"{query.dim()} key.dim: {key.dim()} and value.dim: {value.dim()} instead.")
    if not query.dtype == key.dtype == value.dtype:
        raise RuntimeError(f"Expected query, key, and value to have the same dtype, but got query.dtype: "
                           f"{query.dtype} key.dtype: {key.dtype} and value.dtype: {value.dtype} instead.")


def _sdpa_float_mask(mask: Tensor | None, dtype) -> Tensor | None:
    """A float mask in the query's dtype: torch takes one in that dtype or in single precision, nothing else."""
    if mask is None or mask.dtype == dtype:
        return mask
    if mask.dtype != ember.float32:
        raise RuntimeError(f"Expected attn_mask dtype to be bool or float or to match query dtype, but got "
                           f"attn_mask.dtype: {mask.dtype} and query.dtype: {dtype} instead; convert the mask, "
                           f"e.g. attn_mask.to({dtype})")
    return mask.to(dtype)


def _share_heads(query: Tensor, key: Tensor, value: Tensor) -> tuple[Tensor, Tensor]:
    heads, kv_heads = query.shape[-3], key.shape[-3]
    if heads % kv_heads or value.shape[-3] != kv_heads:
        raise RuntimeError(f"scaled_dot_product_attention: with enable_gqa, query's heads ({heads}) must be a "
                           f"multiple of key's and value's ({kv_heads}, {value.shape[-3]})")
    groups = heads // kv_heads
    return key.repeat_interleave(groups, -3), value.repeat_interleave(groups, -3)


def _projections(query, key, value, embed_dim, in_proj_weight, in_proj_bias, use_separate, q_w, k_w, v_w):
    if query is key and key is value and not use_separate:  # self-attention: one matmul for all three
        # a contiguous input (batch_first's is a transpose) takes linear's one addmm, the bias added in place
        # of a pass of its own: the copy is made either way, as the product's rows
        return F.linear(query.contiguous(), in_proj_weight, in_proj_bias).chunk(3, -1)
    biases = in_proj_bias.chunk(3) if in_proj_bias is not None else (None, None, None)
    if use_separate:
        weights = (q_w, k_w, v_w)
    else:
        weights = in_proj_weight.chunk(3)
    return tuple(F.linear(x, w, b) for x, w, b in zip((query, key, value), weights, biases))


def _heads(x: Tensor, batch: int, num_heads: int) -> Tensor:
    """``[L, N, E]`` as ``[N, H, L, E / H]``."""
    return x.reshape(x.shape[0], batch, num_heads, x.shape[-1] // num_heads).permute(1, 2, 0, 3)


def _static(x: Tensor, batch: int, num_heads: int) -> Tensor:
    """A precomputed ``[N * H, S, E / H]`` key or value as ``[N, H, S, E / H]``."""
    return x.reshape(batch, num_heads, x.shape[1], x.shape[2])


def _pad_column(mask: Tensor | None) -> Tensor | None:
    """One more key position that is never masked."""
    return None if mask is None else F.pad(mask, [0, 1])


@nn_function
def multi_head_attention_forward(query: Tensor, key: Tensor, value: Tensor, embed_dim_to_check: int, num_heads: int,
                                 in_proj_weight: Tensor | None, in_proj_bias: Tensor | None, bias_k: Tensor | None,
                                 bias_v: Tensor | None, add_zero_attn: bool, dropout_p: float,
                                 out_proj_weight: Tensor, out_proj_bias: Tensor | None, training: bool = True,
                                 key_padding_mask: Tensor | None = None, need_weights: bool = True,
                                 attn_mask: Tensor | None = None, use_separate_proj_weight: bool = False,
                                 q_proj_weight: Tensor | None = None, k_proj_weight: Tensor | None = None,
                                 v_proj_weight: Tensor | None = None, static_k: Tensor | None = None,
                                 static_v: Tensor | None = None, average_attn_weights: bool = True,
                                 is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
    """Multi-head attention on ``[L, N, E]`` (or unbatched ``[L, E]``) inputs: the output and the weights.

    Bool masks mark with ``True`` the positions that do *not* take part (the opposite of
    ``scaled_dot_product_attention``); float masks are added to the scores.

    >>> import ember
    >>> x = ember.ones(3, 1, 4)
    >>> out, w = ember.nn.functional.multi_head_attention_forward(
    ...     x, x, x, 4, 2, ember.ones(12, 4), None, None, None, False, 0.0, ember.eye(4), None)
    >>> out.shape, w.shape
    (ember.Size([3, 1, 4]), ember.Size([1, 3, 3]))
    """
    _check_ranks(query, key, value, key_padding_mask, attn_mask, num_heads)
    unbatched = query.dim() == 2
    key_padding_mask = padding_beside_mask(key_padding_mask, "key_padding_mask", attn_mask, "attn_mask", query.dtype)
    if unbatched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        key_padding_mask = None if key_padding_mask is None else key_padding_mask.unsqueeze(0)
    _check_mha(query, key, value, embed_dim_to_check, num_heads, attn_mask, is_causal, use_separate_proj_weight)
    _check_padding_size(key_padding_mask, query.shape[1], key.shape[0] if static_k is None else static_k.shape[1])
    length, batch, embed_dim = query.shape
    if _packs(query, key, value, use_separate_proj_weight, bias_k, bias_v, add_zero_attn, static_k, static_v,
              dropout_p if training else 0.0):
        out, weights = _packed_self_attention(query, num_heads, in_proj_weight, in_proj_bias, out_proj_weight,
                                              out_proj_bias, attn_mask, key_padding_mask, need_weights)
        return _finish(out, weights, need_weights, average_attn_weights, unbatched)
    q, k, v = _projections(query, key, value, embed_dim, in_proj_weight, in_proj_bias, use_separate_proj_weight,
                           q_proj_weight, k_proj_weight, v_proj_weight)
    attn_mask = _additive(_mask_in(attn_mask, "attn_mask", q.dtype, need_weights), q.dtype)
    key_padding_mask = _additive(_mask_in(key_padding_mask, "key_padding_mask", q.dtype, need_weights), q.dtype)
    if bias_k is not None and bias_v is not None:
        k = ember.cat([k, bias_k.expand(1, batch, embed_dim)])
        v = ember.cat([v, bias_v.expand(1, batch, embed_dim)])
        attn_mask, key_padding_mask = _pad_column(attn_mask), _pad_column(key_padding_mask)
    q = _heads(q, batch, num_heads)
    k = _heads(k, batch, num_heads) if static_k is None else _static(static_k, batch, num_heads)
    v = _heads(v, batch, num_heads) if static_v is None else _static(static_v, batch, num_heads)
    if add_zero_attn:
        k = ember.cat([k, ember.zeros(*k.shape[:2], 1, k.shape[3], dtype=k.dtype)], 2)
        v = ember.cat([v, ember.zeros(*v.shape[:2], 1, v.shape[3], dtype=v.dtype)], 2)
        attn_mask, key_padding_mask = _pad_column(attn_mask), _pad_column(key_padding_mask)
    mask, dead = _dead_rows(_merge_masks(attn_mask, key_padding_mask, batch, num_heads), need_weights)
    out, weights = _attend(q, k, v, mask, dropout_p if training else 0.0, 1.0 / math.sqrt(q.shape[-1]),
                           zero_dead_rows=False)
    if dead is not None:
        out = out.masked_fill(ember.tensor(dead), 0.0)
    out = F.linear(out.permute(2, 0, 1, 3).reshape(length, batch, embed_dim), out_proj_weight, out_proj_bias)
    return _finish(out, weights, need_weights, average_attn_weights, unbatched)


def _finish(out: Tensor, weights: Tensor, need_weights: bool, average: bool, unbatched: bool) -> tuple:
    if need_weights and average:
        weights = weights.mean(1)
    if unbatched:
        return out.squeeze(1), (weights.squeeze(0) if need_weights else None)
    return out, (weights if need_weights else None)


def _packs(query, key, value, use_separate: bool, bias_k, bias_v, add_zero_attn: bool, static_k, static_v,
           dropout_p: float) -> bool:
    """Whether the attention is plain self-attention (one input, one packed projection, no extra keys, no
    dropout) in single or double precision: then it reads its heads from the projection in place."""
    return (query is key and key is value and not use_separate and bias_k is None and bias_v is None
            and not add_zero_attn and static_k is None and static_v is None and dropout_p == 0.0
            and query.dtype in (ember.float32, ember.float64))


def _packed_self_attention(query, num_heads, in_proj_weight, in_proj_bias, out_proj_weight, out_proj_bias,
                           attn_mask, key_padding_mask, need_weights) -> tuple[Tensor, Tensor]:
    """Self-attention of an ``[L, N, E]`` query through ``PackedSelfAttention``. A batch-first input (the
    transpose of a contiguous ``[N, L, E]``) is projected in its own layout, which needs no copy, and the
    output comes back as the same transpose."""
    batch_first = query.transpose(0, 1).is_contiguous()
    rows = query.transpose(0, 1) if batch_first else query.contiguous()
    packed = F.linear(rows, in_proj_weight, in_proj_bias)
    attn_mask = _additive(_mask_in(attn_mask, "attn_mask", packed.dtype, need_weights), packed.dtype)
    key_padding_mask = _additive(_mask_in(key_padding_mask, "key_padding_mask", packed.dtype, need_weights),
                                 packed.dtype)
    mask, dead = _dead_rows(_merge_masks(attn_mask, key_padding_mask, query.shape[1], num_heads), need_weights)
    scale = 1.0 / math.sqrt(query.shape[-1] // num_heads)
    out, weights = _packed_attention.PackedSelfAttention.apply(packed, mask, num_heads, scale, batch_first)
    if dead is not None:  # per head, in the output's [N, L, E] (or [L, N, E]) layout
        length, batch, embed_dim = query.shape
        dead = np.broadcast_to(dead, (batch, num_heads, length, embed_dim // num_heads))
        dead = dead.transpose((0, 2, 1, 3) if batch_first else (2, 0, 1, 3)).reshape(out.shape)
        out = out.masked_fill(ember.tensor(dead), 0.0)
    out = F.linear(out, out_proj_weight, out_proj_bias)
    return (out.transpose(0, 1) if batch_first else out), weights


def _dead_rows(mask: Tensor | None, need_weights: bool) -> tuple[Tensor | None, np.ndarray | None]:
    """Without weights torch attends through scaled_dot_product_attention, where a query whose keys are all
    masked out gets 0 (with weights, NaN): the mask with such rows opened (so that no NaN reaches a gradient),
    and where they are, to zero the output there."""
    if need_weights or mask is None:
        return mask, None
    dead = np.all(np.isneginf(mask._data), axis=-1, keepdims=True)
    if not dead.any():
        return mask, None
    return mask.masked_fill(ember.tensor(dead), 0.0), dead


def _merge_masks(attn_mask, key_padding_mask, batch: int, num_heads: int) -> Tensor | None:
    """One additive mask broadcastable to ``[N, H, L, S]``."""
    mask = None
    if attn_mask is not None:
        mask = attn_mask if attn_mask.dim() == 2 else attn_mask.reshape(batch, num_heads, *attn_mask.shape[1:])
    if key_padding_mask is not None:
        padding = key_padding_mask.reshape(batch, 1, 1, key_padding_mask.shape[-1])
        mask = padding if mask is None else mask + padding
    return mask


def _mask_in(mask: Tensor | None, name: str, dtype, need_weights: bool) -> Tensor | None:
    """``mask`` as torch takes it: bool, or floating in the projections' dtype; without weights (torch's
    scaled_dot_product_attention path) also in single precision, then converted."""
    if mask is None or mask.dtype in (ember.bool, dtype):
        return mask
    if not mask.is_floating_point():
        raise AssertionError(f"only bool and floating types of {name} are supported")
    if need_weights:
        raise RuntimeError(f"Input dtypes must be the same, got: {name} {mask.dtype} and the projections {dtype}; "
                           f"convert the mask, e.g. {name}.to({dtype}), or pass need_weights=False")
    return _sdpa_float_mask(mask, dtype)


def _check_ranks(query: Tensor, key: Tensor, value: Tensor, key_padding_mask: Tensor | None,
                 attn_mask: Tensor | None, num_heads: int) -> None:
    """The ranks of the operands agree with the query's: unbatched ``[L, E]`` or batched ``[L, N, E]`` (torch
    asserts them before it looks at any size)."""
    if query.dim() not in (2, 3):
        raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received {query.dim()}-D query "
                             f"tensor")
    unbatched = query.dim() == 2
    rank, kind = (2, "unbatched (2-D)") if unbatched else (3, "batched (3-D)")
    if key.dim() != rank or value.dim() != rank:
        raise AssertionError(f"For {kind} `query`, expected `key` and `value` to be {rank}-D but found {key.dim()}-D "
                             f"and {value.dim()}-D tensors respectively")
    if key_padding_mask is not None and key_padding_mask.dim() != rank - 1:
        raise AssertionError(f"For {kind} `query`, expected `key_padding_mask` to be `None` or {rank - 1}-D but found "
                             f"{key_padding_mask.dim()}-D tensor instead")
    if attn_mask is None:
        return
    if attn_mask.dim() not in (2, 3):
        raise AssertionError(f"For {kind} `query`, expected `attn_mask` to be `None`, 2-D or 3-D but found "
                             f"{attn_mask.dim()}-D tensor instead")
    expected = (num_heads, query.shape[0], key.shape[0])
    if unbatched and attn_mask.dim() == 3 and attn_mask.shape != expected:
        raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got {attn_mask.shape}")


def _check_mha(query, key, value, embed_dim_to_check, num_heads, attn_mask, is_causal, use_separate: bool) -> None:
    """The sizes of batched (``[L, N, E]``) operands and of the attention mask."""
    if query.shape[-1] != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {query.shape[-1]}")
    if embed_dim_to_check % num_heads:
        raise AssertionError(f"embed_dim {embed_dim_to_check} not divisible by num_heads {num_heads}")
    if use_separate and key.shape[:2] != value.shape[:2]:
        raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match value's {value.shape[:2]}")
    if not use_separate and key.shape != value.shape:
        raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
                           "method `generate_square_subsequent_mask` to create this mask.")
    if attn_mask is None:
        return
    length, batch, source = query.shape[0], query.shape[1], key.shape[0]
    expected = (length, source) if attn_mask.dim() == 2 else (batch * num_heads, length, source)
    if attn_mask.shape != expected:
        raise RuntimeError(f"The shape of the {attn_mask.dim()}D attn_mask is {attn_mask.shape}, but should be "
                           f"{expected}.")


def _check_padding_size(key_padding_mask: Tensor | None, batch: int, source_length: int) -> None:
    """A batched padding mask is ``[N, S]``, one entry per key position."""
    if key_padding_mask is None:
        return
    if key_padding_mask.shape[0] != batch:
        raise AssertionError(f"Expected key_padded_mask.shape[0] to be {batch}, but got {key_padding_mask.shape[0]}")
    if key_padding_mask.shape[1] != source_length:
        raise AssertionError(f"Expected key_padded_mask.shape[1] to be {source_length}, but got "
                             f"{key_padding_mask.shape[1]}")


from ember.nn._functional import _packed_attention  # noqa: E402  (which reads this module's kernels)
