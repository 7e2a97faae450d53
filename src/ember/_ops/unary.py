"""Elementwise functions of one tensor: exp, log, sqrt, sigmoid, tanh, relu, abs, clamp, rounding.

Each backward is a line of ember ops, so it can itself be differentiated.

>>> import ember
>>> x = ember.tensor([0.5, 2.0], dtype=ember.float64, requires_grad=True)
>>> ember.autograd.gradcheck(ember.tanh, (x,))
True
"""
from __future__ import annotations

import numpy as np

from ember._ops._support import ember_function, float_result, require_tensor, wrap
from ember._tensor import Tensor
from ember.autograd.function import Function


def _floating(op: str, x: Tensor) -> np.ndarray:
    return float_result(require_tensor(x, op)._data)


class Exp(Function):
    backward_name = "ExpBackward0"

    @staticmethod
    def forward(ctx, x):
        out = wrap(np.exp(_floating("exp", x)))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return grad * out


class Log(Function):
    backward_name = "LogBackward0"

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        with np.errstate(divide="ignore", invalid="ignore"):
            return wrap(np.log(_floating("log", x)))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad / x


class Sqrt(Function):
    backward_name = "SqrtBackward0"

    @staticmethod
    def forward(ctx, x):
        with np.errstate(invalid="ignore"):
            out = wrap(np.sqrt(_floating("sqrt", x)))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return grad / (2 * out)


class Sigmoid(Function):
    backward_name = "SigmoidBackward0"

    @staticmethod
    def forward(ctx, x):
        data = _floating("sigmoid", x)
        with np.errstate(over="ignore"):
            out = wrap((1 / (1 + np.exp(-data))).astype(data.dtype, copy=False))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return grad * out * (1 - out)


class Tanh(Function):
    backward_name = "TanhBackward0"

    @staticmethod
    def forward(ctx, x):
        out = wrap(np.tanh(_floating("tanh", x)))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return grad * (1 - out * out)


class Relu(Function):
    backward_name = "ReluBackward0"

    @staticmethod
    def forward(ctx, x):
        out = wrap(np.maximum(require_tensor(x, "relu")._data, 0).astype(x._data.dtype, copy=False))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return grad * (out > 0)  # NOTE: the gradient at exactly 0 is 0, as in torch


class Abs(Function):
    backward_name = "AbsBackward0"

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return wrap(np.abs(require_tensor(x, "abs")._data))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * sign(x)


class Clamp(Function):
    backward_name = "ClampBackward1"

    @staticmethod
    def forward(ctx, x, min, max):
        data = require_tensor(x, "clamp")._data
        if min is None and max is None:
            raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
        ctx.save_for_backward(x)
        ctx.bounds = (min, max)
        out = data
        if min is not None:
            out = np.maximum(out, min)
        if max is not None:
            out = np.minimum(out, max)
        return wrap(out.astype(data.dtype, copy=False) if data.dtype.kind == "f" else out)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        low, high = ctx.bounds
        inside = x == x  # all True, then narrowed by each bound (inclusive, as torch)
        if low is not None:
            inside = inside & (x >= low)
        if high is not None:
            inside = inside & (x <= high)
        return grad * inside, None, None


class _Rounding(Function):
    """floor, ceil, round, trunc, sign: piecewise constant, so their gradient is zero."""

    numpy_function = None

    @classmethod
    def forward(cls, ctx, x):
        return wrap(cls.numpy_function(require_tensor(x, cls.__name__.lower())._data))

    @staticmethod
    def backward(ctx, grad):
        return grad * 0


class Floor(_Rounding):
    backward_name = "FloorBackward0"
    numpy_function = staticmethod(np.floor)


class Ceil(_Rounding):
    backward_name = "CeilBackward0"
    numpy_function = staticmethod(np.ceil)


class Trunc(_Rounding):
    backward_name = "TruncBackward0"
    numpy_function = staticmethod(np.trunc)


class Round(_Rounding):
    backward_name = "RoundBackward0"
    numpy_function = staticmethod(np.round)


class Sign(_Rounding):
    backward_name = "SignBackward0"
    numpy_function = staticmethod(np.sign)


@ember_function
def exp(input) -> Tensor:
    return Exp.apply(input)


@ember_function
def log(input) -> Tensor:
    """Natural logarithm; -inf at 0 and nan below, as in torch."""
    return Log.apply(input)


@ember_function
def sqrt(input) -> Tensor:
    return Sqrt.apply(input)


@ember_function
def sigmoid(input) -> Tensor:
    """``1 / (1 + exp(-input))``."""
    return Sigmoid.apply(input)


@ember_function
def tanh(input) -> Tensor:
    return Tanh.apply(input)


@ember_function
def relu(input) -> Tensor:
    """``max(input, 0)``."""
    return Relu.apply(input)


@ember_function
def abs(input) -> Tensor:
    return Abs.apply(input)


absolute = abs


@ember_function
def clamp(input, min=None, max=None) -> Tensor:
    """Limit values to ``[min, max]`` (numbers; either may be None).

    >>> ember.clamp(ember.tensor([-2., 0.5, 3.]), min=0., max=1.)
    tensor([0.0000, 0.5000, 1.0000])
    """
    return Clamp.apply(input, _number(min), _number(max))


clip = clamp


def _number(bound):
    if isinstance(bound, Tensor):
        return bound.item()
    return bound


@ember_function
def floor(input) -> Tensor:
    return Floor.apply(input)


@ember_function
def ceil(input) -> Tensor:
    return Ceil.apply(input)


@ember_function
def trunc(input) -> Tensor:
    return Trunc.apply(input)


@ember_function
def round(input) -> Tensor:
    return Round.apply(input)


@ember_function
def sign(input) -> Tensor:
    return Sign.apply(input)
