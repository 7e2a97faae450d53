"""``MultiheadAttention``: attention over several heads with learned input and output projections.

>>> import ember
>>> attention = ember.nn.MultiheadAttention(4, 2, batch_first=True)
>>> out, weights = attention(ember.ones(1, 3, 4), ember.ones(1, 5, 4), ember.ones(1, 5, 4))
>>> out.shape, weights.shape
(ember.Size([1, 3, 4]), ember.Size([1, 3, 5]))
"""
from __future__ import annotations

import ember
from ember._creation import empty
from ember._tensor import Tensor
from ember.backends import mha
from ember.nn import functional as F, init
from ember.nn.modules.linear import Linear
from ember.nn.modules.module import Module
from ember.nn.parameter import Parameter

__all__ = ["MultiheadAttention", "NonDynamicallyQuantizableLinear"]


def _sequence_first(query: Tensor, key: Tensor, value: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """``[N, L, E]`` inputs as ``[L, N, E]``, keeping shared ones shared (self-attention projects them at once)."""
    if query is key and key is value:
        query = key = value = query.transpose(0, 1)
        return query, key, value
    if key is value:
        key = value = key.transpose(0, 1)
        return query.transpose(0, 1), key, value
    return query.transpose(0, 1), key.transpose(0, 1), value.transpose(0, 1)


class NonDynamicallyQuantizableLinear(Linear):
    """The output projection of ``MultiheadAttention``: a ``Linear`` under the name torch gives it."""


class MultiheadAttention(Module):
    """Attention of ``num_heads`` heads of ``embed_dim // num_heads`` features each.

    With ``kdim == vdim == embed_dim`` the three input projections are one ``in_proj_weight`` ``[3E, E]``; else
    ``q_proj_weight``, ``k_proj_weight`` and ``v_proj_weight``. Initialised as torch: xavier-uniform projections,
    zero biases, xavier-normal ``bias_k``/``bias_v``.
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False, kdim: int | None = None,
                 vdim: int | None = None, batch_first: bool = False, device=None, dtype=None) -> None:
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} and "
                             f"num_heads={num_heads} instead")
        if embed_dim % num_heads:
            raise AssertionError("embed_dim must be divisible by num_heads")
        super().__init__()
        self.embed_dim, self.num_heads, self.dropout, self.batch_first = embed_dim, num_heads, dropout, batch_first
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.head_dim = embed_dim // num_heads
        factory = {"device": device, "dtype": dtype}
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(empty((3 * embed_dim, embed_dim), **factory))
            for name in ("q_proj_weight", "k_proj_weight", "v_proj_weight"):
                self.register_parameter(name, None)
        else:
            self.q_proj_weight = Parameter(empty((embed_dim, embed_dim), **factory))
            self.k_proj_weight = Parameter(empty((embed_dim, self.kdim), **factory))
            self.v_proj_weight = Parameter(empty((embed_dim, self.vdim), **factory))
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(empty(3 * embed_dim, **factory))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, **factory)
        if add_bias_kv:
            self.bias_k = Parameter(empty((1, 1, embed_dim), **factory))
            self.bias_v = Parameter(empty((1, 1, embed_dim), **factory))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            for weight in (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight):
                init.xavier_uniform_(weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
            init.xavier_normal_(self.bias_v)

    def forward(self, query: Tensor, key: Tensor, value: Tensor, key_padding_mask: Tensor | None = None,
                need_weights: bool = True, attn_mask: Tensor | None = None, average_attn_weights: bool = True,
                is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
        # torch's fused path gives NaN where a query has no key left, as the weights' path does; the path without
        # weights gives 0 there
        masked = attn_mask is not None or key_padding_mask is not None
        weighted = need_weights or masked and self._fast_path(query, key, value, attn_mask, key_padding_mask)
        if self.batch_first and query.dim() == 3:
            query, key, value = _sequence_first(query, key, value)
        out, weights = F.multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight, self.in_proj_bias,
            self.bias_k, self.bias_v, self.add_zero_attn, self.dropout, self.out_proj.weight, self.out_proj.bias,
            training=self.training, key_padding_mask=key_padding_mask, need_weights=weighted,
            attn_mask=attn_mask, use_separate_proj_weight=not self._qkv_same_embed_dim,
            q_proj_weight=self.q_proj_weight, k_proj_weight=self.k_proj_weight, v_proj_weight=self.v_proj_weight,
            average_attn_weights=average_attn_weights, is_causal=is_causal)
        if self.batch_first and query.dim() == 3:
            out = out.transpose(0, 1)
        return out, (weights if need_weights else None)

    def merge_masks(self, attn_mask: Tensor | None, key_padding_mask: Tensor | None,
                    query: Tensor) -> tuple[Tensor | None, int | None]:
        """The masks as one, and its kind: the padding mask alone (kind 1), or both as ``[N, H, L, L]`` (kind 2,
        their sum: a logical or of bool masks), for a batch-first self-attention ``query`` ``[N, L, E]``."""
        if attn_mask is None:
            return key_padding_mask, (None if key_padding_mask is None else 1)
        batch, length, _ = query.shape
        if attn_mask.dim() == 3:
            merged = attn_mask.view(batch, -1, length, length)
        else:
            merged = attn_mask.view(1, 1, length, length).expand(batch, self.num_heads, -1, -1)
        if key_padding_mask is not None:
            merged = merged + key_padding_mask.view(batch, 1, 1, length).expand(-1, self.num_heads, -1, -1)
        return merged, 2

    def _fast_path(self, query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None,
                   key_padding_mask: Tensor | None) -> bool:
        """Whether torch's module takes its fused path (inference on batch-first self-attention, bool masks)."""
        if not (mha.get_fastpath_enabled() and query.dim() == 3 and query is key and key is value):
            return False
        if any(m is not None and m.is_floating_point() for m in (attn_mask, key_padding_mask)):
            return False
        weights = (self.in_proj_weight, self.in_proj_bias, self.out_proj.weight, self.out_proj.bias)
        if self.in_proj_weight is None or any(w is not None and w.dtype != query.dtype for w in weights[:2]):
            return False
        if self.training or self.num_heads % 2 or not self.batch_first or self.bias_k is not None:
            return False
        if self.bias_v is not None or self.add_zero_attn or not self._qkv_same_embed_dim:
            return False
        return not (ember.is_grad_enabled() and any(t is not None and t.requires_grad for t in (query, *weights)))
