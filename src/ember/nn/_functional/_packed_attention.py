"""Self-attention read straight from the in-projection's packed output: no head is copied out, none copied back.

Multi-head self-attention projects its input once into rows of ``3 E`` (query, key and value side by side).
Composed of ops, the heads are three chunks reshaped and permuted, the attended values are permuted back and
copied into rows of ``E``, and the backward copies each head's gradient back and concatenates the three. Here
one op reads the heads as strided views of the packed rows (NumPy's batched products take them as they are),
writes the attended values straight into rows of ``E``, and its backward writes the three gradients straight
into one packed array, the layout the in-projection's backward takes.

>>> import ember
>>> packed = ember.ones(2, 5, 12)  # batch 2, sequence 5, 3 x E with E = 4
>>> out, weights = PackedSelfAttention.apply(packed, None, 2, 0.5, True)
>>> out.shape, weights.shape
(ember.Size([2, 5, 4]), ember.Size([2, 2, 5, 5]))
"""
from __future__ import annotations

import numpy as np

import ember
from ember._ops._support import wrap
from ember.autograd.function import Function
from ember.nn import functional as F
from ember.nn._functional.attention import _attention_backward, attention_weights, transposed

__all__ = ["PackedSelfAttention"]


def _heads(packed, num_heads: int, batch_first: bool):
    """Query, key and value of ``packed`` (``[N, L, 3E]``, or ``[L, N, 3E]`` unless ``batch_first``), each as
    ``[N, H, L, E / H]`` views; of an array or a tensor."""
    lead = tuple(packed.shape[:-1])
    width = packed.shape[-1] // (3 * num_heads)
    split = packed.reshape(*lead, 3, num_heads, width)
    order = (2, 0, 3, 1, 4) if batch_first else (2, 1, 3, 0, 4)
    split = split.transpose(order) if isinstance(split, np.ndarray) else split.permute(order)
    return split[0], split[1], split[2]


def _merged(rows: np.ndarray, num_heads: int, batch_first: bool) -> np.ndarray:
    """Rows of ``E`` (``[N, L, E]`` or ``[L, N, E]``) seen as ``[N, H, L, E / H]``: writing the view fills them."""
    split = rows.reshape(*rows.shape[:-1], num_heads, rows.shape[-1] // num_heads)
    return split.transpose(0, 2, 1, 3) if batch_first else split.transpose(1, 2, 0, 3)


class PackedSelfAttention(Function):
    """``softmax(q k^T * scale + mask) v`` per head, with ``q, k, v`` the three thirds of ``packed``'s rows;
    returns the attended values in rows of ``E`` (laid out as ``packed``) and the weights ``[N, H, L, L]``.

    The same arithmetic as ``Attention``; only where the operands live differs. With ``create_graph`` the
    backward recomputes the weights and runs ``Attention``'s formula in ember ops, so it has a graph.
    """

    backward_name = "AttentionBackward0"
    backward_on_arrays = True

    @staticmethod
    def forward(ctx, packed, mask, num_heads, scale, batch_first):
        p = packed._data
        q, k, v = _heads(p, num_heads, batch_first)
        weights = attention_weights(q, k, mask, scale)
        out = np.empty(p.shape[:-1] + (p.shape[-1] // 3,), p.dtype)
        np.matmul(weights, v, out=_merged(out, num_heads, batch_first))
        result = wrap(weights)  # saved as an output: version-checked, and freed after a backward
        ctx.save_for_backward(packed, mask, result)
        ctx.constants = (num_heads, scale, batch_first)
        ctx.set_materialize_grads(False)
        return wrap(out), result

    @staticmethod
    def backward(ctx, grad_out, grad_weights):
        packed, mask, weights = ctx.saved_tensors
        if grad_out is None and grad_weights is None:
            return None, None, None, None, None
        if isinstance(grad_out if grad_out is not None else grad_weights, np.ndarray):
            grad_packed, grad_scores = _backward_on_arrays(grad_out, grad_weights, packed, weights, *ctx.constants)
        else:
            grad_packed, grad_scores = _backward_recorded(grad_out, grad_weights, packed, mask, *ctx.constants)
        needs = ctx.needs_input_grad
        return grad_packed if needs[0] else None, grad_scores if needs[1] else None, None, None, None


def _backward_on_arrays(grad_out, grad_weights, packed, weights, num_heads: int, scale: float,
                        batch_first: bool) -> tuple:
    """``Attention``'s backward formula with each product written into its place in one packed gradient."""
    q, k, v = _heads(packed, num_heads, batch_first)
    grad_packed = np.empty_like(packed)
    grad_q, grad_k, grad_v = _heads(grad_packed, num_heads, batch_first)
    if grad_out is None:
        grad_v[...] = 0
        grad_scores = grad_weights.copy()
    else:
        grad = _merged(grad_out, num_heads, batch_first)
        np.matmul(weights.swapaxes(-1, -2), grad, out=grad_v)
        grad_scores = np.matmul(grad, transposed(v))
        if grad_weights is not None:
            grad_scores += grad_weights
    # weights * (grad_weights - rowsum(grad_weights * weights)), in place
    grad_scores -= np.einsum("...i,...i->...", grad_scores, weights)[..., None]  # no array of the products
    grad_scores *= weights
    scale = np.asarray(scale, packed.dtype)
    scaled = np.multiply(k, scale)
    np.matmul(grad_scores, scaled, out=grad_q)
    np.matmul(grad_scores.swapaxes(-1, -2), np.multiply(q, scale, out=scaled), out=grad_k)  # (one temporary)
    return grad_packed, grad_scores


def _backward_recorded(grad_out, grad_weights, packed, mask, num_heads: int, scale: float, batch_first: bool):
    """The backward in ember ops (under ``create_graph``): the weights recomputed, the gradients restacked."""
    q, k, v = _heads(packed, num_heads, batch_first)
    weights = F.softmax((q * scale) @ k.transpose(-2, -1) + (0 if mask is None else mask), -1)
    if grad_out is None:
        grad = ember.zeros(tuple(weights.shape[:-1]) + (v.shape[-1],), dtype=grad_weights.dtype)
    else:
        split = grad_out.reshape(*grad_out.shape[:-1], num_heads, grad_out.shape[-1] // num_heads)
        grad = split.permute(0, 2, 1, 3) if batch_first else split.permute(1, 2, 0, 3)
    grad_q, grad_k, grad_v, grad_scores = _attention_backward(grad, grad_weights, q, k, v, weights, scale)
    stacked = ember.stack([grad_q, grad_k, grad_v])  # [3, N, H, L, E / H]
    stacked = stacked.permute(1, 3, 0, 2, 4) if batch_first else stacked.permute(3, 1, 0, 2, 4)
    return stacked.reshape(packed.shape), grad_scores

