"""Activations that are one op, as in torch: the elu family (``EluBackward0``, ``CeluBackward0``),
``hardtanh``, ``leaky_relu``, ``gelu``, ``hardswish``, ``hardsigmoid``, ``logsigmoid``, ``softplus``,
``softshrink`` and ``hardshrink``, each with its backward in ember ops (so it has a second derivative) and, for
most, a first-order backward on the arrays.

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
from ember._ops._quiet import IGNORE_ALL, quietly
from ember._ops._select import select
from ember._ops._special_math import erf, erf_single
from ember._ops._support import refuse_complex, row_major, wrap
from ember._ops.tied_gradients import tied_to_inputs
from ember.autograd.function import Function


class Elu(Function):
    """``scale * x`` where ``x > 0``, else ``scale * alpha * (exp(x * input_scale) - 1)``."""

    backward_name = "EluBackward0"
    torch_saved_tensors = {"self": 0}
    torch_saved_values = {"alpha": lambda node: node.constants[0], "scale": lambda node: node.constants[1],
                          "input_scale": lambda node: node.constants[2]}
    backward_on_arrays = True  # a first-order backward runs on the arrays (see _elu_slope)
    jvp = elementwise_jvp()

    @staticmethod
    def forward(ctx, input, alpha, scale, input_scale):
        x = input._data
        if _dtype.kind(x.dtype) != "f":
            raise NotImplementedError(f'"elu" not implemented for integer or bool input ({input.dtype}); '
                                      "convert it first, e.g. x.float()")
        ctx.save_for_backward(input)
        ctx.constants = (alpha, scale, input_scale)
        negative = alpha * np.expm1(_negative_part(x) * input_scale)
        return wrap((select(x > 0, x, negative) * scale).astype(x.dtype, copy=False))

    @staticmethod
    def backward(ctx, grad):
        (input,) = ctx.saved_tensors
        if type(grad) is np.ndarray:
            return quietly(IGNORE_ALL, _elu_gradient, grad, input, ctx.constants), None, None, None
        return elu_backward(grad, input, *ctx.constants), None, None, None


def _negative_part(x: np.ndarray) -> np.ndarray:
    """``min(x, 0)`` (no overflow in elu's exp), with -0.0 kept, so that elu(-0.0) is -0.0 as torch's: NumPy's
    minimum gives its second operand where the two are equal, but its half one its first."""
    zero = np.zeros((), x.dtype)
    return np.minimum(x, zero) if x.dtype == np.float16 else np.minimum(zero, x)


class Celu(Elu):
    """``celu``: ``elu`` with ``input_scale = 1 / alpha``, recorded under torch's own node name."""

    backward_name = "CeluBackward0"
    torch_saved_tensors = {"self": 0}
    torch_saved_values = {"alpha": lambda node: node.constants[0]}


def _elu_gradient(grad: np.ndarray, x: np.ndarray, constants: tuple) -> np.ndarray:
    slope = _elu_slope(x, *constants)
    return np.multiply(grad, slope, out=slope if grad.shape == slope.shape else None)


def _elu_slope(x: np.ndarray, alpha: float, scale: float, input_scale: float) -> np.ndarray:
    """``elu_backward``'s slope of an array, the same steps in place on one fresh array."""
    slope = np.minimum(x, 0, out=_fresh(x))
    if input_scale != 1:
        slope *= input_scale
    np.exp(slope, out=slope)
    slope *= scale * alpha * input_scale
    return select(x > 0, np.full((), scale, x.dtype), slope)


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
    torch_saved_tensors = {"self": 0}
    torch_saved_values = {"min_val": lambda node: node.option[0], "max_val": lambda node: node.option[1]}
    backward_on_arrays = True
    jvp = elementwise_jvp()

    @staticmethod
    def forward(ctx, input, min_val, max_val):
        x = _saving_input(ctx, input, (min_val, max_val), "hardtanh")
        return wrap(np.clip(x, min_val, max_val).astype(x.dtype, copy=False))

    @staticmethod
    def backward(ctx, grad):
        (input,) = ctx.saved_tensors
        low, high = ctx.option
        if type(grad) is np.ndarray:
            inside = np.greater(input, low)
            inside &= input < high
            return _zero_where_not(inside, grad), None, None
        gradient = ember.where((input > low) & (input < high), grad, ember.zeros((), dtype=grad.dtype))
        return tied_to_inputs(gradient, ctx, 0), None, None


class LeakyRelu(Function):
    """``x`` where ``x > 0``, else ``negative_slope * x`` (at 0 the gradient is the slope)."""

    backward_name = "LeakyReluBackward0"
    torch_saved_tensors = {"self": 0}
    torch_saved_values = {"negative_slope": "option"}
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
        return tied_to_inputs(ember.where(input > 0, grad, grad * ctx.option), ctx, 0), None


_SQRT_HALF = 0.7071067811865476
_INV_SQRT_2PI = 0.3989422804014327
_TANH_K = 0.7978845608028654  # sqrt(2 / pi)
_TANH_C = 0.044715


class Gelu(Function):
    """``x * Phi(x)`` (``approximate='none'``) or ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))``."""

    backward_name = "GeluBackward0"
    torch_saved_tensors = {"self": 0}
    torch_saved_values = {"approximate": "option"}
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
    density = np.multiply(x, x, out=np.empty_like(x))  # (out: a 0-d product would be a NumPy scalar)
    density *= np.float32(-0.5)
    np.exp(density, out=density)
    density *= x
    density *= np.float32(_INV_SQRT_2PI)
    cdf = np.asarray(erf_single(x * np.float32(_SQRT_HALF)))
    cdf += np.float32(1)
    cdf *= np.float32(0.5)
    return np.add(cdf, density, out=cdf)


def gelu_derivative(x, approximate: str):
    """``d gelu / dx`` in ember ops (so gelu has a second derivative)."""
    if approximate == "tanh":
        t = ember.tanh(_TANH_K * (x + _TANH_C * x * x * x))
        return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * (_TANH_K * (1 + 3 * _TANH_C * x * x))
    return 0.5 * (1 + ember.erf(x * _SQRT_HALF)) + x * ember.exp(-0.5 * x * x) * _INV_SQRT_2PI


_SINGLE = np.dtype(np.float32)
_SIXTH = float(np.float32(1 / 6))  # torch's 1/6 is a single-precision constant in every dtype


def _working(x: np.ndarray) -> np.ndarray:
    """``x`` in the precision torch's kernels compute it in: half and bfloat16 in single, rounded once at the end."""
    return x if x.dtype.itemsize > 2 else x.astype(_SINGLE)


def _fresh(like: np.ndarray) -> np.ndarray:
    """An array to compute into with ``out=`` (a ufunc of a 0-d array would return a NumPy scalar instead)."""
    return np.empty_like(like)


def _shifted_and_clipped(x: np.ndarray) -> np.ndarray:
    """relu6(x + 3) in a fresh array (a nan stays nan), the factor both hard activations share."""
    result = np.add(x, 3, out=_fresh(x))
    return np.clip(result, 0, 6, out=result)


def _zero_where_not(condition: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``values`` where ``condition`` holds, else +0.0 exactly (not ``0 * value``, which is nan for inf, -0 for
    negatives): torch's kernels return a zero there."""
    return select(condition, values, np.zeros((), values.dtype))


class _HardActivation(Function):
    """hardswish and hardsigmoid: ``relu6(x + 3)``, times ``x`` for hardswish (``times_input``), over 6, in
    torch's order of operations (so its rounding, and nan for -inf), a pass each; the backward on arrays."""

    backward_on_arrays = True  # a first-order backward runs on the arrays (``gradient_of_arrays``)
    jvp = elementwise_jvp()
    op, times_input = "", False

    @staticmethod
    def forward(ctx, input):
        kind = ctx._forward_cls
        x = _saving_input(ctx, input, None, kind.op)
        return wrap(quietly(IGNORE_ALL, _hard_activation, x, kind.times_input))

    @staticmethod
    def backward(ctx, grad):
        (input,) = ctx.saved_tensors
        kind = ctx._forward_cls
        if type(grad) is np.ndarray:  # (quietly: -inf * 0 is nan, as torch's, without NumPy's warning)
            return quietly(IGNORE_ALL, kind.gradient_of_arrays, grad, input)
        return tied_to_inputs(kind.gradient(grad, input), ctx, 0)


def _hard_activation(x: np.ndarray, times_input: bool) -> np.ndarray:
    work = _working(x)
    result = _shifted_and_clipped(work)
    if times_input:
        np.multiply(result, work, out=result)
    return np.divide(result, 6, out=result).astype(x.dtype, copy=False)


def hardswish_backward(grad, x):
    """``grad`` times hardswish's slope, in ember ops (so it has a second derivative): 0 at and below -3 (whatever
    ``grad`` is), ``x / 3 + 1/2`` up to 3, and ``grad`` itself from 3 on and at nan, as torch's."""
    middle = grad * (x / 3 + 0.5)
    return ember.where(x <= -3, ember.zeros((), dtype=grad.dtype), ember.where(x < 3, middle, grad))


def _hardswish_gradient(grad: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``hardswish_backward`` of arrays, with the same values, in a few passes and two selections by bits."""
    work, grad_work = _working(x), _working(grad)
    slope = np.divide(work, 3, out=_fresh(work))
    slope += 0.5
    middle = np.multiply(grad_work, slope, out=slope) if grad_work.shape == slope.shape else grad_work * slope
    above = ~(work <= -3)  # (not work > -3: a nan input passes grad on)
    return _zero_where_not(above, select(work < 3, middle, grad_work)).astype(x.dtype, copy=False)


class Hardswish(_HardActivation):
    backward_name = "HardswishBackward0"
    torch_saved_tensors = {"self": 0}
    op, times_input = "hardswish", True
    gradient, gradient_of_arrays = staticmethod(hardswish_backward), staticmethod(_hardswish_gradient)


def hardsigmoid_backward(grad, x):
    """``grad / 6`` (as torch: times 1/6 in single precision) strictly inside (-3, 3), else 0 (also at nan)."""
    return ember.where((x > -3) & (x < 3), grad * _SIXTH, ember.zeros((), dtype=grad.dtype))


def _hardsigmoid_gradient(grad: np.ndarray, x: np.ndarray) -> np.ndarray:
    work = _working(x)
    inside = np.greater(work, -3)
    inside &= work < 3
    return _zero_where_not(inside, np.multiply(_working(grad), _SIXTH)).astype(x.dtype, copy=False)


class Hardsigmoid(_HardActivation):
    backward_name = "HardsigmoidBackward0"
    op = "hardsigmoid"
    gradient, gradient_of_arrays = staticmethod(hardsigmoid_backward), staticmethod(_hardsigmoid_gradient)


_DOUBLE = np.dtype(np.float64)


def _through_double(step, x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """``step`` (which works in place) on a double-precision copy of ``x``, rounded once to ``dtype``: float32's
    exp and log1p in NumPy are off by 2-3 units in the last place, torch's by 1.5; these are off by half of one."""
    return quietly(IGNORE_ALL, _rounded, step, x, dtype)


def _rounded(step, x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    return step(np.array(x, _DOUBLE)).astype(dtype, copy=False)


def _log_sigmoid(x: np.ndarray) -> np.ndarray:
    result = _through_double(_log_sigmoid_in_place, x, _working(x).dtype)
    # + 0: a value too small for single precision is 0, not -0, as torch's (whose exp(-|x|) underflows first);
    # half and bfloat16 are rounded from single precision, as torch's (so there a tiny value is -0)
    return np.add(result, 0, out=result).astype(x.dtype, copy=False)


def _log_sigmoid_in_place(x: np.ndarray) -> np.ndarray:
    """``min(x, 0) - log1p(exp(-|x|))``: no exp overflows."""
    tail = np.abs(x, out=_fresh(x))
    np.negative(tail, out=tail)
    np.exp(tail, out=tail)
    np.log1p(tail, out=tail)
    np.minimum(x, 0, out=x)
    return np.subtract(x, tail, out=x)


def _sigmoid_of_negative_in_place(x: np.ndarray) -> np.ndarray:
    """``1 / (1 + exp(x))``, logsigmoid's slope (0 where exp overflows)."""
    np.exp(x, out=x)
    x += 1
    return np.reciprocal(x, out=x)


def _times_slope(grad: np.ndarray, slope_in_place, x: np.ndarray) -> np.ndarray:
    """``grad`` times a slope computed from ``x`` in double precision: the product in single precision for half
    and bfloat16 (rounded once, as torch's kernels), else in the dtype."""
    work = _working(x).dtype
    slope = _through_double(slope_in_place, x, work)
    return np.multiply(grad.astype(work, copy=False), slope, out=slope if grad.shape == slope.shape else None) \
        .astype(x.dtype, copy=False)


class LogSigmoid(Function):
    """``log(sigmoid(x))`` without overflow, in double precision and rounded once; the slope is ``sigmoid(-x)``."""

    backward_name = "LogSigmoidBackward0"
    backward_on_arrays = True
    jvp = elementwise_jvp()

    @staticmethod
    def forward(ctx, input):
        x = _saving_input(ctx, input, None, "log_sigmoid")
        return wrap(row_major(quietly(IGNORE_ALL, _log_sigmoid, x)))  # (torch's is row-major, whatever the input's)

    @staticmethod
    def backward(ctx, grad):
        (input,) = ctx.saved_tensors
        if type(grad) is np.ndarray:
            return quietly(IGNORE_ALL, _times_slope, grad, _sigmoid_of_negative_in_place, input)
        return grad * ember.sigmoid(-input)


def _softplus_in_place(scaled: np.ndarray) -> np.ndarray:
    np.exp(scaled, out=scaled)
    return np.log1p(scaled, out=scaled)


def _sigmoid_in_place(scaled: np.ndarray) -> np.ndarray:
    np.negative(scaled, out=scaled)
    return _sigmoid_of_negative_in_place(scaled)


class Softplus(Function):
    """``log1p(exp(beta * x)) / beta``, and ``x`` itself where ``beta * x > threshold`` (``beta * x`` and the test
    in the input's precision, as torch's); the smooth part in double precision, rounded once."""

    backward_name = "SoftplusBackward0"
    torch_saved_tensors = {"self": 0}
    torch_saved_values = {"beta": lambda node: node.option[0], "threshold": lambda node: node.option[1]}
    backward_on_arrays = True
    jvp = elementwise_jvp()

    @staticmethod
    def forward(ctx, input, beta, threshold):
        x = _saving_input(ctx, input, (beta, threshold), "softplus")
        return wrap(quietly(IGNORE_ALL, _softplus, x, beta, threshold))

    @staticmethod
    def backward(ctx, grad):
        (input,) = ctx.saved_tensors
        beta, threshold = ctx.option
        if type(grad) is np.ndarray:
            return quietly(IGNORE_ALL, _softplus_gradient, grad, input, beta, threshold), None, None
        scaled = input * beta
        return ember.where(scaled > threshold, grad, grad * ember.sigmoid(scaled)), None, None


def _softplus(x: np.ndarray, beta: float, threshold: float) -> np.ndarray:
    work = _working(x)
    scaled = _scaled(work, beta)
    smooth = _through_double(_softplus_in_place, scaled, _DOUBLE)
    if beta != 1:
        smooth /= beta
    return _kept_above(scaled, threshold, work, smooth.astype(work.dtype)).astype(x.dtype, copy=False)


def _scaled(x: np.ndarray, beta: float) -> np.ndarray:
    return x if beta == 1 else np.multiply(x, x.dtype.type(beta))


def _softplus_gradient(grad: np.ndarray, x: np.ndarray, beta: float, threshold: float) -> np.ndarray:
    """``grad * sigmoid(beta * x)``, and ``grad`` itself above the threshold. Where the sigmoid of the threshold
    rounds to 1 (a threshold of 17.4 or more in single precision, the default 20) every slope above it does too,
    and grad times 1 is grad: no selection is needed."""
    work = _working(x)
    scaled = _scaled(work, beta)
    product = _times_slope(grad, _sigmoid_in_place, scaled)
    if _sigmoid_rounds_to_one(threshold, product.dtype):
        return product.astype(x.dtype, copy=False)
    return _kept_above(scaled, threshold, _working(grad), product).astype(x.dtype, copy=False)


def _kept_above(scaled: np.ndarray, threshold: float, kept: np.ndarray, smooth: np.ndarray) -> np.ndarray:
    """``kept`` where ``scaled > threshold``, else ``smooth``; no selection where nothing is above (the usual case
    of the default threshold, 20)."""
    above = scaled > threshold
    return select(above, kept, smooth) if above.any() else smooth


def _sigmoid_rounds_to_one(threshold: float, dtype: np.dtype) -> bool:
    return bool(dtype.type(1 / (1 + np.exp(-np.float64(threshold)))) == 1)


def _outside_band(x: np.ndarray, lambd: float) -> np.ndarray:
    """Where ``x`` is not in ``[-lambd, lambd]``, nan included: where clipping it to the band changes it."""
    return np.clip(x, -lambd, lambd) != x


class _Shrink(Function):
    """softshrink and hardshrink: ``x`` moved toward 0 by ``lambd`` (soft) or kept (hard) outside
    ``[-lambd, lambd]``, a zero inside; the gradient passes outside only (and at nan), as torch's."""

    backward_on_arrays = True  # a first-order backward runs on the arrays
    jvp = elementwise_jvp()
    op = ""

    @staticmethod
    def forward(ctx, input, lambd):
        x = _saving_input(ctx, input, lambd, ctx._forward_cls.op)
        return wrap(quietly(IGNORE_ALL, ctx._forward_cls.shrunk, x, lambd))

    @staticmethod
    def backward(ctx, grad):
        (input,) = ctx.saved_tensors
        if type(grad) is np.ndarray:
            return _zero_where_not(_outside_band(input, ctx.option), grad), None
        outside = (input < -ctx.option) | (input > ctx.option) | input.isnan()
        return tied_to_inputs(ember.where(outside, grad, ember.zeros((), dtype=grad.dtype)), ctx, 0), None


class Softshrink(_Shrink):
    backward_name = "SoftshrinkBackward0"
    op = "softshrink"

    @staticmethod
    def shrunk(x: np.ndarray, lambd: float) -> np.ndarray:
        """``x - clip(x, -lambd, lambd)``: ``x - lambd`` above, ``x + lambd`` below (each as torch rounds it), +0
        inside (as torch's vectorised kernel; its scalar loop, which takes the last few elements, gives -0 to the
        negative ones) and nan at nan."""
        return np.subtract(x, np.clip(x, -lambd, lambd), out=_fresh(x))


class Hardshrink(_Shrink):
    backward_name = "HardshrinkBackward0"
    op = "hardshrink"

    @staticmethod
    def shrunk(x: np.ndarray, lambd: float) -> np.ndarray:
        return _zero_where_not(_outside_band(x, lambd), x).astype(x.dtype, copy=False)


class Threshold(Function):
    """``value`` where ``x <= threshold`` (so a nan, at no side of it, is kept), else ``x``; the gradient passes
    where ``x`` is kept."""

    backward_name = "ThresholdBackward0"
    backward_on_arrays = True
    jvp = elementwise_jvp()

    @staticmethod
    def forward(ctx, input, threshold, value):
        x = _saving_input(ctx, input, threshold, "threshold")
        return wrap(select(x <= threshold, np.full((), value, x.dtype), x))

    @staticmethod
    def backward(ctx, grad):
        (input,) = ctx.saved_tensors
        if type(grad) is np.ndarray:
            return _zero_where_not(~(input <= ctx.option), grad), None, None
        gradient = ember.where(input <= ctx.option, ember.zeros((), dtype=grad.dtype), grad)
        return tied_to_inputs(gradient, ctx, 0), None, None
