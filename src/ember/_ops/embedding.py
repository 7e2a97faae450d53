"""The embedding lookup as one op, as in torch: rows of a weight matrix picked by integer indices.

Its backward adds each output row's gradient into the weight row it came from, skipping
``padding_idx`` and, with ``scale_grad_by_freq``, dividing by how often the index occurs.

>>> import ember
>>> w = ember.tensor([[0., 1.], [2., 3.]], requires_grad=True)
>>> out = ember.nn.functional.embedding(ember.tensor([1, 1]), w)
>>> out.sum().backward(); w.grad
tensor([[0., 0.],
        [2., 2.]])
"""
from __future__ import annotations

import numpy as np

import ember
from ember._ops._jvp import linear_jvp
from ember._ops._support import wrap
from ember.autograd.function import Function


class Embedding(Function):
    """``weight[indices]``, with torch's gradient rules for ``padding_idx`` and ``scale_grad_by_freq``."""

    backward_name = "EmbeddingBackward0"
    jvp = linear_jvp(0)

    @staticmethod
    def forward(ctx, weight, indices, padding_idx, scale_grad_by_freq, sparse=False):
        ctx.save_for_backward(indices)
        ctx.rows = weight._data.shape[0]
        ctx.padding_idx = padding_idx
        ctx.scale_grad_by_freq = scale_grad_by_freq
        ctx.sparse = sparse
        return wrap(np.take(weight._data, indices._data, axis=0))

    @staticmethod
    def backward(ctx, grad):
        (indices,) = ctx.saved_tensors
        if ctx.sparse:
            from ember._ops.sparse import embedding_sparse_backward

            weight_grad = embedding_sparse_backward(grad, indices, ctx.rows, ctx.padding_idx, ctx.scale_grad_by_freq)
        else:
            weight_grad = embedding_backward(grad, indices, ctx.rows, ctx.padding_idx, ctx.scale_grad_by_freq)
        return weight_grad, None, None, None, None


def embedding_backward(grad, indices, rows: int, padding_idx: int | None, scale_grad_by_freq: bool):
    """The weight's gradient, ``[rows, dim]``, in ember ops (so it has a gradient of its own)."""
    flat = indices.reshape(-1)
    grad = grad.reshape(flat.shape[0], grad.shape[-1])
    if scale_grad_by_freq:
        counts = ember.bincount(flat, minlength=rows)[flat]
        grad = grad / counts.unsqueeze(1).to(grad.dtype)
    if padding_idx is not None:
        grad = ember.where((flat == padding_idx).unsqueeze(1), ember.zeros((), dtype=grad.dtype), grad)
    return ember.zeros((rows, grad.shape[-1]), dtype=grad.dtype).index_add(0, flat, grad)


class EmbeddingBag(Function):
    """The sum, mean or max of each bag of looked-up rows (``rows[i]`` belongs to bag ``bags[i]``): one op, as
    torch's ``embedding_bag``, so its result shows torch's ``grad_fn``. An empty bag gives zeros."""

    backward_name = "EmbeddingBagBackward0"

    @staticmethod
    def forward(ctx, rows, bags, count: int, mode: str):
        values, where = rows._data, bags._data
        out = np.zeros((count, values.shape[1]), dtype=values.dtype)
        ctx.mode, ctx.rows = mode, values.shape[0]
        if mode == "max":
            out.fill(-np.inf)
            np.maximum.at(out, where, values)
            # the first row of each bag that attains its maximum, per column (ctx.rows where a bag is empty)
            positions = np.where(values == out[where], np.arange(ctx.rows)[:, None], ctx.rows)
            first = np.full(out.shape, ctx.rows, dtype=np.int64)
            np.minimum.at(first, where, positions)
            ctx.first = wrap(first)
            return wrap(np.where(first == ctx.rows, 0, out).astype(values.dtype))
        np.add.at(out, where, values)
        scale = np.ones(count, dtype=values.dtype)
        if mode == "mean":
            scale = 1 / np.maximum(np.bincount(where, minlength=count), 1).astype(values.dtype)
            out *= scale[:, None]
        ctx.save_for_backward(bags, wrap(scale))
        return wrap(out)

    @staticmethod
    def backward(ctx, grad):
        if ctx.mode == "max":
            room = ember.zeros((ctx.rows + 1, grad.shape[1]), dtype=grad.dtype)  # a spare row for empty bags
            return room.scatter(0, ctx.first, grad)[: ctx.rows], None, None, None
        bags, scale = ctx.saved_tensors
        return (grad * scale.unsqueeze(1)).index_select(0, bags), None, None, None

    @staticmethod
    def jvp(ctx, tangent, *_):
        rows, bags, count, mode = ctx.primals
        if mode != "max":  # linear in the rows
            return EmbeddingBag.apply(tangent, bags, count, mode)
        padded = ember.cat([tangent, ember.zeros((1, tangent.shape[1]), dtype=tangent.dtype)])
        return padded.gather(0, ctx.first)
