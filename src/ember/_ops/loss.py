"""Losses that are one op, as in torch: one node in the graph, and a first-order backward on NumPy arrays.

>>> import ember
>>> x = ember.tensor([1., 2.], requires_grad=True)
>>> loss = ember.nn.functional.mse_loss(x, ember.tensor([1., 4.]))
>>> loss
tensor(2., grad_fn=<MseLossBackward0>)
>>> loss.backward(); x.grad
tensor([ 0., -2.])
"""
from __future__ import annotations

import numpy as np

from ember._dtype import from_numpy_dtype
from ember._ops._support import promoted_arrays, wrap
from ember.autograd.function import Function


class MseLoss(Function):
    """The squared error of ``input`` against ``target`` (broadcasting), averaged, summed or kept per element."""

    backward_name = "MseLossBackward0"
    backward_on_arrays = True

    @staticmethod
    def forward(ctx, input, target, reduction):
        x, y = promoted_arrays(input, target, "mse_loss")
        if np.result_type(x, y).kind != "f":
            raise NotImplementedError(
                f'"mse_loss" not implemented for {from_numpy_dtype(np.result_type(x, y))}: the loss of integer '
                "tensors; convert them first, e.g. input.float()"
            )
        ctx.save_for_backward(input, target)
        ctx.reduction = reduction
        difference = x - y
        squared = difference * difference
        ctx.count = squared.size
        if reduction == "none":
            return wrap(squared)
        total = np.sum(squared)
        if reduction == "sum":
            return wrap(np.asarray(total))
        with np.errstate(invalid="ignore"):  # the mean of nothing is nan, quietly, as in torch
            return wrap(np.asarray(total / squared.size if squared.size else total * np.nan))

    @staticmethod
    def backward(ctx, grad):
        input, target = ctx.saved_tensors
        needs = ctx.needs_input_grad
        scale = 2.0 / max(ctx.count, 1) if ctx.reduction == "mean" else 2.0
        gradient = (input - target) * (grad * scale)  # broadcast: the engine sums each side back to its shape
        return (gradient if needs[0] else None), (-gradient if needs[1] else None), None
