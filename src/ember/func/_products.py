"""Matrix products per sample, the products per-sample gradients are made of.

Under ``vmap(grad(...))`` a layer's weight is expanded to one copy per sample, so ``x @ W`` becomes a stack
of small products. As a stacked ``matmul``, NumPy computes them (and the outer products of the backward)
one at a time; here the forward is one matrix product when every sample shares the weight's memory (an
expanded weight), and a weight gradient made of outer products is one broadcast multiplication.
"""
from __future__ import annotations

import numpy as np

from ember import _blas
from ember._ops._jvp import product_jvp
from ember._ops._support import wrap
from ember._tensor import Tensor
from ember.autograd.function import Function


class StackedProduct(Function):
    """``a[..., m, k] @ b[..., k, n]`` for stacks of matrices that broadcast along the leading dims."""

    backward_name = "StackedProductBackward"
    jvp = product_jvp(0, 1)

    @staticmethod
    def forward(ctx, a: Tensor, b: Tensor) -> Tensor:
        ctx.save_for_backward(a if ctx.needs_input_grad[1] else None, b if ctx.needs_input_grad[0] else None)
        x, w = a._data, b._data
        lead = w.ndim - 2
        if x.ndim == w.ndim and not any(w.strides[:lead]) and x.shape[:lead] == np.broadcast_shapes(
                x.shape[:lead], w.shape[:lead]):  # one matrix seen by every sample: one product
            product = _blas.matmul(x.reshape(-1, x.shape[-1]), w[(0,) * lead])
            return wrap(product.reshape(x.shape[:-1] + (w.shape[-1],)))
        return wrap(_blas.matmul(x, w))

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        needs = ctx.needs_input_grad
        grad_a = StackedProduct.apply(grad, b.mT) if needs[0] else None
        grad_b = None
        if needs[1]:  # one row per sample (a vector's product): the products are outer products
            grad_b = Outer.apply(a[..., 0, :], grad[..., 0, :]) if a.shape[-2] == 1 else \
                StackedProduct.apply(a.mT, grad)
        return grad_a, grad_b


class Outer(Function):
    """``u[..., k]`` times ``v[..., n]`` into ``[..., k, n]``: one outer product per sample (faster by einsum than
    by broadcasting ``*``, which walks the result through a size-1 axis)."""

    backward_name = "OuterBackward"
    jvp = product_jvp(0, 1)

    @staticmethod
    def forward(ctx, u: Tensor, v: Tensor) -> Tensor:
        ctx.save_for_backward(u, v)
        return wrap(np.einsum("...i,...j->...ij", u._data, v._data))

    @staticmethod
    def backward(ctx, grad):
        u, v = ctx.saved_tensors
        needs = ctx.needs_input_grad
        return (StackedProduct.apply(grad, v.unsqueeze(-1)).squeeze(-1) if needs[0] else None,
                StackedProduct.apply(grad.mT, u.unsqueeze(-1)).squeeze(-1) if needs[1] else None)


def stacked_product(a: Tensor, b: Tensor) -> Tensor:
    """The physical product of batched matrices ``a`` and ``b`` (see ``StackedProduct``)."""
    return StackedProduct.apply(a, b)
