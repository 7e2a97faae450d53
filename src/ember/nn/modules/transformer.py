"""Transformer layers: encoder and decoder layers (post-norm or pre-norm), their stacks and ``Transformer``.

>>> import ember
>>> layer = ember.nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16, batch_first=True)
>>> encoder = ember.nn.TransformerEncoder(layer, num_layers=2)
>>> encoder(ember.ones(1, 5, 8)).shape
ember.Size([1, 5, 8])
>>> ember.nn.Transformer.generate_square_subsequent_mask(3)
tensor([[0., -inf, -inf],
        [0., 0., -inf],
        [0., 0., 0.]])
"""
from __future__ import annotations

import copy
import warnings
from typing import Callable

import numpy as np

import ember
from ember._ops._support import user_stacklevel
from ember._tensor import Tensor
from ember.backends import mha
from ember.nn import functional as F, init
from ember.nn._functional.attention import padding_beside_mask
from ember.nn.modules.activation import GELU, ReLU
from ember.nn.modules.attention import MultiheadAttention
from ember.nn.modules.container import ModuleList
from ember.nn.modules.dropout import Dropout
from ember.nn.modules.linear import Linear
from ember.nn.modules.module import Module
from ember.nn.modules.normalization import LayerNorm

__all__ = ["Transformer", "TransformerDecoder", "TransformerDecoderLayer", "TransformerEncoder",
           "TransformerEncoderLayer"]


def _activation(activation: str | Callable) -> Callable:
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    if isinstance(activation, str):
        raise RuntimeError(f"activation should be relu/gelu, not {activation}")
    return activation


def _clones(module: Module, count: int) -> ModuleList:
    return ModuleList([copy.deepcopy(module) for _ in range(count)])


def _square_subsequent_mask(size: int, dtype=None) -> Tensor:
    above = np.triu(np.ones((size, size), dtype=bool), 1)
    return ember.zeros(size, size, dtype=dtype).masked_fill(ember.tensor(above), float("-inf"))


class _TransformerLayer(Module):
    """What the encoder and decoder layers share: the attentions (one, or two with ``_cross_attention``), the
    position-wise MLP, and one LayerNorm and Dropout per residual block, registered in torch's order."""

    _cross_attention = False

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: str | Callable = F.relu, layer_norm_eps: float = 1e-05, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        factory = {"device": device, "dtype": dtype}
        attention = {"dropout": dropout, "bias": bias, "batch_first": batch_first, **factory}
        self.self_attn = MultiheadAttention(d_model, nhead, **attention)
        if self._cross_attention:
            self.multihead_attn = MultiheadAttention(d_model, nhead, **attention)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **factory)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **factory)
        self.norm_first = norm_first
        blocks = 3 if self._cross_attention else 2
        for i in range(1, blocks + 1):
            setattr(self, f"norm{i}", LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory))
        for i in range(1, blocks + 1):
            setattr(self, f"dropout{i}", Dropout(dropout))
        self.activation = _activation(activation)

    def _ff_block(self, x: Tensor, dropout: Dropout) -> Tensor:
        return dropout(self.linear2(self.dropout(self.activation(self.linear1(x)))))


def _attend(attention: MultiheadAttention, x: Tensor, memory: Tensor, mask, padding, is_causal: bool,
            dropout: Dropout) -> Tensor:
    out = attention(x, memory, memory, attn_mask=mask, key_padding_mask=padding, need_weights=False,
                    is_causal=is_causal)[0]
    return dropout(out)


class TransformerEncoderLayer(_TransformerLayer):
    """Self-attention then a feed-forward block, each with a residual and a LayerNorm (before with
    ``norm_first``, else after)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        # which of torch's fused activations the layer uses: 1 for relu, 2 for gelu, 0 for any other
        relu = self.activation is F.relu or isinstance(self.activation, ReLU)
        gelu = self.activation is F.gelu or isinstance(self.activation, GELU)
        self.activation_relu_or_gelu = 1 if relu else 2 if gelu else 0

    def forward(self, src: Tensor, src_mask: Tensor | None = None, src_key_padding_mask: Tensor | None = None,
                is_causal: bool = False) -> Tensor:
        x = src
        src_key_padding_mask = padding_beside_mask(src_key_padding_mask, "src_key_padding_mask", src_mask, "src_mask",
                                                   src.dtype)
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            return x + self._ff_block(self.norm2(x), self.dropout2)
        x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
        return self.norm2(x + self._ff_block(x, self.dropout2))

    def _sa_block(self, x: Tensor, mask, padding, is_causal: bool) -> Tensor:
        return _attend(self.self_attn, x, x, mask, padding, is_causal, self.dropout1)


class TransformerDecoderLayer(_TransformerLayer):
    """Self-attention, attention over the encoder's memory, then a feed-forward block; each with a residual
    and a LayerNorm."""

    _cross_attention = True

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None, memory_mask: Tensor | None = None,
                tgt_key_padding_mask: Tensor | None = None, memory_key_padding_mask: Tensor | None = None,
                tgt_is_causal: bool = False, memory_is_causal: bool = False) -> Tensor:
        x = tgt
        self_args = (tgt_mask, tgt_key_padding_mask, tgt_is_causal, self.dropout1)
        memory_args = (memory_mask, memory_key_padding_mask, memory_is_causal, self.dropout2)
        if self.norm_first:
            y = self.norm1(x)
            x = x + _attend(self.self_attn, y, y, *self_args)
            x = x + _attend(self.multihead_attn, self.norm2(x), memory, *memory_args)
            return x + self._ff_block(self.norm3(x), self.dropout3)
        x = self.norm1(x + _attend(self.self_attn, x, x, *self_args))
        x = self.norm2(x + _attend(self.multihead_attn, x, memory, *memory_args))
        return self.norm3(x + self._ff_block(x, self.dropout3))


class TransformerEncoder(Module):
    """``num_layers`` copies of an encoder layer, then an optional final norm."""

    def __init__(self, encoder_layer: TransformerEncoderLayer, num_layers: int, norm: Module | None = None,
                 enable_nested_tensor: bool = True, mask_check: bool = True) -> None:
        super().__init__()
        self.layers = _clones(encoder_layer, num_layers)
        self.num_layers, self.norm = num_layers, norm
        self.enable_nested_tensor, self.mask_check = enable_nested_tensor, mask_check
        why_not = _why_not_nested(encoder_layer)
        if enable_nested_tensor and why_not:
            warnings.warn(f"enable_nested_tensor is True, but self.use_nested_tensor is False because {why_not}",
                          stacklevel=user_stacklevel())
        self.use_nested_tensor = enable_nested_tensor and not why_not

    def forward(self, src: Tensor, mask: Tensor | None = None, src_key_padding_mask: Tensor | None = None,
                is_causal: bool | None = None) -> Tensor:
        output = src
        src_key_padding_mask = padding_beside_mask(src_key_padding_mask, "src_key_padding_mask", mask, "mask", src.dtype)
        for layer in self.layers:
            output = layer(output, src_mask=mask, is_causal=bool(is_causal), src_key_padding_mask=src_key_padding_mask)
        if self._runs_nested(src, mask, src_key_padding_mask):
            # torch runs each sequence at its own length here, and pads the results back with zeros
            output = output.masked_fill((src_key_padding_mask != 0).unsqueeze(-1), 0.0)
        return self.norm(output) if self.norm is not None else output

    def _runs_nested(self, src: Tensor, mask: Tensor | None, padding: Tensor | None) -> bool:
        """Whether torch's encoder takes its nested-tensor path for these arguments."""
        if not (mha.get_fastpath_enabled() and getattr(self, "use_nested_tensor", False)) or self.layers[0].training:
            return False
        if src.dim() != 3 or padding is None or mask is not None:
            return False
        kept = (padding == 0).numpy()
        if self.mask_check and (np.diff(kept.astype(np.int8), axis=1) > 0).any():
            return False  # not left-aligned: some padding precedes a kept position
        first = self.layers[0]
        weights = [src, first.self_attn.in_proj_weight, first.self_attn.in_proj_bias, first.self_attn.out_proj.weight,
                   first.self_attn.out_proj.bias, first.norm1.weight, first.norm1.bias, first.norm2.weight,
                   first.norm2.bias, first.linear1.weight, first.linear1.bias, first.linear2.weight,
                   first.linear2.bias]
        return not (ember.is_grad_enabled() and any(w is not None and w.requires_grad for w in weights))


def _why_not_nested(layer: Module) -> str:
    """Why torch's encoder of copies of ``layer`` cannot run nested tensors ("" when it can)."""
    reasons = [
        (not isinstance(layer, TransformerEncoderLayer), "encoder_layer was not TransformerEncoderLayer"),
        (lambda: layer.norm_first, "encoder_layer.norm_first was True"),
        (lambda: not layer.self_attn.batch_first,
         "encoder_layer.self_attn.batch_first was not True(use batch_first for better inference performance)"),
        (lambda: not layer.self_attn._qkv_same_embed_dim, "encoder_layer.self_attn._qkv_same_embed_dim was not True"),
        (lambda: layer.self_attn.in_proj_bias is None, "encoder_layer.self_attn was passed bias=False"),
        (lambda: not layer.activation_relu_or_gelu, "encoder_layer.activation_relu_or_gelu was not True"),
        (lambda: layer.norm1.eps != layer.norm2.eps,
         "encoder_layer.norm1.eps was not equal to encoder_layer.norm2.eps"),
        (lambda: layer.self_attn.num_heads % 2 == 1, "encoder_layer.self_attn.num_heads is odd"),
    ]
    for failing, reason in reasons:
        if failing is True or (callable(failing) and failing()):
            return reason
    return ""


class TransformerDecoder(Module):
    """``num_layers`` copies of a decoder layer, then an optional final norm."""

    def __init__(self, decoder_layer: TransformerDecoderLayer, num_layers: int, norm: Module | None = None) -> None:
        super().__init__()
        self.layers = _clones(decoder_layer, num_layers)
        self.num_layers, self.norm = num_layers, norm

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None, memory_mask: Tensor | None = None,
                tgt_key_padding_mask: Tensor | None = None, memory_key_padding_mask: Tensor | None = None,
                tgt_is_causal: bool | None = None, memory_is_causal: bool = False) -> Tensor:
        output = tgt
        for layer in self.layers:
            output = layer(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                           tgt_key_padding_mask=tgt_key_padding_mask,
                           memory_key_padding_mask=memory_key_padding_mask, tgt_is_causal=bool(tgt_is_causal),
                           memory_is_causal=memory_is_causal)
        return self.norm(output) if self.norm is not None else output


class Transformer(Module):
    """An encoder-decoder transformer; weights of two or more dims are re-initialised xavier-uniform, as torch."""

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6, num_decoder_layers: int = 6,
                 dim_feedforward: int = 2048, dropout: float = 0.1, activation: str | Callable = F.relu,
                 custom_encoder=None, custom_decoder=None, layer_norm_eps: float = 1e-05, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        options = {"dim_feedforward": dim_feedforward, "dropout": dropout, "activation": activation,
                   "layer_norm_eps": layer_norm_eps, "batch_first": batch_first, "norm_first": norm_first,
                   "bias": bias, "device": device, "dtype": dtype}
        norm = {"eps": layer_norm_eps, "bias": bias, "device": device, "dtype": dtype}
        self.encoder = custom_encoder if custom_encoder is not None else TransformerEncoder(
            TransformerEncoderLayer(d_model, nhead, **options), num_encoder_layers, LayerNorm(d_model, **norm))
        self.decoder = custom_decoder if custom_decoder is not None else TransformerDecoder(
            TransformerDecoderLayer(d_model, nhead, **options), num_decoder_layers, LayerNorm(d_model, **norm))
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first
        for p in self.parameters():
            if p.dim() > 1:
                init.xavier_uniform_(p)

    def forward(self, src: Tensor, tgt: Tensor, src_mask: Tensor | None = None, tgt_mask: Tensor | None = None,
                memory_mask: Tensor | None = None, src_key_padding_mask: Tensor | None = None,
                tgt_key_padding_mask: Tensor | None = None, memory_key_padding_mask: Tensor | None = None,
                src_is_causal: bool | None = None, tgt_is_causal: bool | None = None,
                memory_is_causal: bool = False) -> Tensor:
        batch_dim = 0 if self.batch_first else 1
        if src.dim() == 3 and src.shape[batch_dim] != tgt.shape[batch_dim]:
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask, is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask, tgt_is_causal=tgt_is_causal,
                            memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device=None, dtype=None) -> Tensor:
        """A float ``[sz, sz]`` mask: ``-inf`` above the diagonal (future positions), 0 elsewhere."""
        return _square_subsequent_mask(sz, dtype)
