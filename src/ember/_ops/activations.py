"""Activations that are one op, as in torch: the elu family (``EluBackward0``, ``CeluBackward0``),
``hardtanh``, ``leaky_relu`` and ``gelu``, each with its backward in ember ops (so it has a second derivative).

The elu family is one op rather than a composite also because the gradient of ``expm1`` computed from its result
(``result + 1``) loses ``exp(x)`` for very negative ``x``; this backward uses ``exp(x)`` itself.

>>> import ember
>>> ember.nn.functional.elu(ember.tensor([-1., 2.], requires_grad=True))
tensor([-0.6321,  2.0000], grad_fn=<EluBackward0>)
"""
from __future__ import annotations

import numpy as np

from ember import _dtype

import ember
from ember._ops._jvp import elementwise_jvp
from ember._ops._select import select
from ember._ops._special_math import erf, erf_single
from ember._ops._support import refuse_complex, wrap
from ember.autograd.function import Function


class Elu(Function):
    """``scale * x`` where ``x > 0``, else ``scale * alpha * (exp(x * input_scale) - 1)``."""

    backward_name = "EluBackward0"
    jvp = elementwise_jvp()

    @staticmethod
    def forward(ctx, input, alpha, scale, input_scale):
        x = input._data
        if _dtype.kind(x.dtype) != "f":
            raise NotImplementedError(f'"elu" not implemented for integer or bool input ({input.dtype}); '
                                      "convert it first, e.g. x.float()")
        ctx.save_for_backward(input)
        ctx.constants = (alpha, scale, input_scale)
        negative = alpha * np.expm1(np.minimum(x, 0) * input_scale)
        return wrap((select(x > 0, x, negative) * scale).astype(x.dtype, copy=False))

    @staticmethod
    def backward(ctx, grad):
        (input,) = ctx.saved_tensors
        return elu_backward(grad, input, *ctx.constants), None, None, None


class Celu(Elu):
    """``celu``: ``elu`` with ``input_scale = 1 / alpha``, recorded under torch's own node name."""

    backward_name = "CeluBackward0"


def elu_backward(grad, input, alpha: float, scale: float, input_scale: float):
    """``grad`` times the derivative: ``scale`` above 0, ``scale * alpha * input_scale * exp(x * input_scale)``
    at and below 0 (so the gradient at 0 is the left one, as torch's)."""
    slope = ember.exp(input.clamp(max=0) * input_scale) * (scale * alpha * input_scale)
    return grad * ember.where(input > 0, ember.full((), scale, dtype=input.dtype), slope)


def _saving_input(ctx, input, option, op: str):
    """Save what a pointwise backward needs (the input and the op's one option); the input's array, which must
    be real (these activations compare with 0, and complex numbers have no order)."""
    ctx.save_for_backward(input)
    ctx.option = option
    return refuse_complex(op, input._data)


class Hardtanh(Function):
    """``x`` clipped to ``[min_val, max_val]``; the gradient passes strictly inside only."""

    backward_name = "HardtanhBackward0"
    jvp = elementwise_jvp()

    @staticmethod
    def forward(ctx, input, min_val, max_val):
        x = _saving_input(ctx, input, (min_val, max_val), "hardtanh")
        return wrap(np.clip(x, min_val, max_val).astype(x.dtype, copy=False))

    @staticmethod
    def backward(ctx, grad):
        (input,) = ctx.saved_tensors
        low, high = ctx.option
        return ember.where((input > low) & (input < high), grad, ember.zeros((), dtype=grad.dtype)), None, None


class LeakyRelu(Function):
    """``x`` where ``x > 0``, else ``negative_slope * x`` (at 0 the gradient is the slope)."""

    backward_name = "LeakyReluBackward0"
    jvp = elementwise_jvp()

    @staticmethod
    def forward(ctx, input, negative_slope):
        x = _saving_input(ctx, input, negative_slope, "leaky_relu")
        if x.dtype.kind == "f" and 0 < negative_slope <= 1:  # the larger of x and slope * x: no branch per element
            # (a slope of 0 would make nan of inf, which x > 0 keeps)
            return wrap(np.maximum(x, x * negative_slope))
        return wrap(np.where(x > 0, x, x * negative_slope).astype(x.dtype, copy=False))

    @staticmethod
    def backward(ctx, grad):
        (input,) = ctx.saved_tensors
        return ember.where(input > 0, grad, grad * ctx.option), None


_SQRT_HALF = 0.7071067811865476
_INV_SQRT_2PI = 0.3989422804014327
_TANH_K = 0.7978845608028654  # sqrt(2 / pi)
_TANH_C = 0.044715


class Gelu(Function):
    """``x * Phi(x)`` (``approximate='none'``) or ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))``."""

    backward_name = "GeluBackward0"
    backward_on_arrays = True  # a first-order backward runs on the arrays (see _gelu_slope)
    jvp = elementwise_jvp()

    @staticmethod
    def forward(ctx, input, approximate):
        x = _saving_input(ctx, input, approximate, "gelu")
        if approximate == "tanh":
            result = 0.5 * x * (1 + np.tanh(_TANH_K * (x + _TANH_C * x * x * x)))
        elif x.dtype == np.float32:  # erf in single precision, as torch's kernel computes it
            result = np.float32(0.5) * x * (1 + erf_single(x * np.float32(_SQRT_HALF)))
        else:
            result = 0.5 * x * (1 + erf(x * _SQRT_HALF))
        return wrap(np.asarray(result).astype(x.dtype, copy=False))

    @staticmethod
    def backward(ctx, grad):
        (input,) = ctx.saved_tensors
        if type(grad) is np.ndarray:
            return grad * _gelu_slope(input, ctx.option), None
        return grad * gelu_derivative(input, ctx.option), None


def _gelu_slope(x: np.ndarray, approximate: str) -> np.ndarray:
    """``gelu_derivative`` of an array, in its dtype: float32 takes erf in single precision, and the steps run in
    place on a few arrays rather than through a dozen ops."""
    if approximate == "tanh" or x.dtype != np.float32:
        return gelu_derivative(wrap(x), approximate)._data
    density = np.multiply(x, x)
    density *= np.float32(-0.5)
    np.exp(density, out=density)
    density *= x
    density *= np.float32(_INV_SQRT_2PI)
    cdf = erf_single(x * np.float32(_SQRT_HALF))
    cdf += np.float32(1)
    cdf *= np.float32(0.5)
    return np.add(cdf, density, out=cdf)


def gelu_derivative(x, approximate: str):
    """``d gelu / dx`` in ember ops (so gelu has a second derivative)."""
    if approximate == "tanh":
        t = ember.tanh(_TANH_K * (x + _TANH_C * x * x * x))
        return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * (_TANH_K * (1 + 3 * _TANH_C * x * x))
    return 0.5 * (1 + ember.erf(x * _SQRT_HALF)) + x * ember.exp(-0.5 * x * x) * _INV_SQRT_2PI
