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
from ember._ops._quiet import IGNORE_INVALID, quietly
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
        if reduction == "none":
            return wrap(squared)
        total = np.sum(squared)
        if reduction == "sum":
            return wrap(np.asarray(total))
        if not squared.size:
            return wrap(np.asarray(quietly(IGNORE_INVALID, np.multiply, total, np.nan)))  # nan, quietly, as in torch
        return wrap(np.asarray(total / squared.size))

    @staticmethod
    def backward(ctx, grad):
        input, target = ctx.saved_tensors
        needs = ctx.needs_input_grad
        # as torch: target's gradient is the same formula with the two swapped (so an equal pair gives +0, not -0);
        # each has the shape the operands broadcast to, and the engine sums it back to the operand's
        return (mse_loss_backward(grad, input, target, ctx.reduction) if needs[0] else None,
                mse_loss_backward(grad, target, input, ctx.reduction) if needs[1] else None,
                None)


def mse_loss_backward(grad, input, target, reduction: str):
    """``norm * (input - target) * grad``, on arrays, or (recorded, as torch's node) on tensors.

    ``norm`` is 2, divided by the number of elements for ``'mean'``.
    """
    if isinstance(grad, np.ndarray):
        return _mse_gradient(grad, input, target, reduction)
    return MseLossBackward.apply(grad, input, target, reduction)


def _norm(reduction: str, count: int) -> float:
    return 2.0 / count if reduction == "mean" and count else 2.0


def _mse_gradient(grad: np.ndarray, input: np.ndarray, target: np.ndarray, reduction: str) -> np.ndarray:
    difference = input - target
    return _norm(reduction, difference.size) * difference * grad  # torch's order of operations


class MseLossBackward(Function):
    """mse_loss's gradient as an op of its own, so that it can be differentiated again (torch's mse_loss_backward)."""

    backward_name = "MseLossBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, input, target, reduction):
        ctx.save_for_backward(grad, input, target)
        ctx.reduction = reduction
        return wrap(_mse_gradient(grad._data, input._data, target._data, reduction))

    @staticmethod
    def backward(ctx, grad_grad):
        grad, input, target = ctx.saved_tensors
        needs = ctx.needs_input_grad
        difference = input - target
        norm = _norm(ctx.reduction, difference.numel())
        if needs[0]:
            # grad is one number unless reduction is 'none': then the sum over the elements it scaled
            grad_of_grad = norm * difference * grad_grad
            grad_of_grad = grad_of_grad if ctx.reduction == "none" else grad_of_grad.sum()
        # the gradient is linear in input and target, with slopes norm * grad and -norm * grad
        scaled = norm * grad_grad * grad if needs[1] or needs[2] else None
        return (grad_of_grad if needs[0] else None,
                scaled if needs[1] else None,
                -scaled if needs[2] else None,
                None)
