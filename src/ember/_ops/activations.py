"""The elu family (``elu``, ``celu``, ``selu``) as one op, as in torch (``EluBackward0``).

One op rather than a composite because the gradient of ``expm1`` computed from its result
(``result + 1``) loses ``exp(x)`` for very negative ``x``; this backward uses ``exp(x)`` itself.

>>> import ember
>>> ember.nn.functional.elu(ember.tensor([-1., 2.], requires_grad=True))
tensor([-0.6321,  2.0000], grad_fn=<EluBackward0>)
"""
from __future__ import annotations

import numpy as np

import ember
from ember._ops._support import wrap
from ember.autograd.function import Function


class Elu(Function):
    """``scale * x`` where ``x > 0``, else ``scale * alpha * (exp(x * input_scale) - 1)``."""

    backward_name = "EluBackward0"

    @staticmethod
    def forward(ctx, input, alpha, scale, input_scale):
        x = input._data
        if x.dtype.kind != "f":
            raise NotImplementedError(f'"elu" not implemented for integer or bool input ({input.dtype}); '
                                      "convert it first, e.g. x.float()")
        ctx.save_for_backward(input)
        ctx.constants = (alpha, scale, input_scale)
        negative = alpha * np.expm1(np.minimum(x, 0) * input_scale)
        return wrap((np.where(x > 0, x, negative) * scale).astype(x.dtype, copy=False))

    @staticmethod
    def backward(ctx, grad):
        (input,) = ctx.saved_tensors
        return elu_backward(grad, input, *ctx.constants), None, None, None


def elu_backward(grad, input, alpha: float, scale: float, input_scale: float):
    """``grad`` times the derivative: ``scale`` above 0, ``scale * alpha * input_scale * exp(x * input_scale)``
    at and below 0 (so the gradient at 0 is the left one, as torch's)."""
    slope = ember.exp(input.clamp(max=0) * input_scale) * (scale * alpha * input_scale)
    return grad * ember.where(input > 0, ember.full((), scale, dtype=input.dtype), slope)
