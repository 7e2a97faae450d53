"""Elementwise activations of ``nn.functional``: one op each where torch's is one node (``_ops/activations.py``),
the others composed from ember ops (gradients of any order come free either way).

Where torch's gradient at a kink is a convention (``leaky_relu`` at 0 takes the slope, ``hardtanh``
at its ends takes 0, ...) the branch test (``>`` or ``>=``) is chosen to give the same one.

>>> import ember
>>> from ember.nn import functional as F
>>> F.hardtanh(ember.tensor([-2., 0.5, 3.]))
tensor([-1.0000,  0.5000,  1.0000])
"""
from __future__ import annotations

import numpy as np

import ember
from ember._dtype import LOW, scalar_type_name
from ember._ops._support import element_of, refuse_bool, refuse_complex, refuse_integers, require_tensor
from ember._ops.activations import (
    Celu, Elu, Gelu, Hardshrink, Hardsigmoid, Hardswish, Hardtanh, LeakyRelu, LogSigmoid, Softplus, Softshrink,
    Threshold,
)
from ember._tensor import Tensor
from ember._ops.tied_gradients import named_and_tied
from ember.autograd._node_names import named_node
from ember.overrides import overridable

__all__ = [
    "celu", "elu", "gelu", "glu", "hardshrink", "hardsigmoid", "hardswish", "hardtanh", "leaky_relu", "logsigmoid",
    "mish", "prelu", "relu6", "rrelu", "selu", "silu", "softmin", "softplus", "softshrink", "softsign", "tanhshrink",
    "threshold", "celu_", "elu_", "hardtanh_", "leaky_relu_", "relu_", "rrelu_", "selu_", "threshold_",
]

nn_function = overridable("ember.nn.functional")

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _finish(input: Tensor, result: Tensor, inplace: bool) -> Tensor:
    """``result``, or ``input`` overwritten with it when ``inplace`` (as torch's ``name_`` forms do)."""
    if not inplace:
        return result
    return input.copy_(result)


def _operand(input: Tensor, inplace: bool) -> Tensor:
    """What an op that saves its input should see: a copy when the result will overwrite ``input``
    and a gradient will need the original."""
    return input.clone() if inplace and input.requires_grad else input


@nn_function
def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """``x`` where ``x > threshold``, else ``value``.

    >>> ember.nn.functional.threshold(ember.tensor([0., 2.]), 1.0, -1.0)
    tensor([-1.,  2.])
    """
    require_tensor(input, "threshold", 1, "input")
    _real_only("threshold", input)
    refuse_bool("threshold_cpu", input._data)
    # as torch: both numbers must fit the input's dtype (no -0.5 for uint8, no 1e5 for a half value; a half's
    # threshold is single's), and are compared as its elements (-1 is uint8's 255)
    dtype = input._data.dtype
    threshold = element_of("threshold", threshold, np.dtype(np.float32) if dtype in LOW else dtype)
    value = element_of("threshold", value, dtype)
    return _finish(input, Threshold.apply(_operand(input, inplace), threshold, value), inplace)


def _real_only(op: str, input) -> None:
    """These activations compare with thresholds, and complex numbers have no order: torch refuses them."""
    if isinstance(input, Tensor):
        refuse_complex(op, input._data)


_threshold = threshold  # threshold_'s parameter of the same name hides the function


@nn_function
def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Tensor:
    """``x`` clipped to ``[min_val, max_val]``; the gradient is 0 at both ends, as torch's."""
    require_tensor(input, "hardtanh", 1, "input")
    if min_val > max_val:
        raise ValueError(f"hardtanh: min_val cannot be greater than max_val, but got min_val={min_val} and "
                         f"max_val={max_val}")
    if isinstance(input, Tensor) and input._data.dtype.kind == "b":  # (a clamp, which torch's refuses for bools)
        raise RuntimeError("Bool inputs not supported for hardtanh; convert the input first, e.g. x.float()")
    if isinstance(input, Tensor) and input._data.dtype.kind == "u" and (min_val < 0 or max_val < 0):
        raise RuntimeError(f"cannot do hardtanh on an unsigned type with negative limits (got [{min_val}, "
                           f"{max_val}] for {input.dtype}); use non-negative limits or a signed dtype")
    return _finish(input, Hardtanh.apply(_operand(input, inplace), min_val, max_val), inplace)


@nn_function
def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """``min(max(0, x), 6)``.

    >>> ember.nn.functional.relu6(ember.tensor([-1., 7.]))
    tensor([0., 6.])
    """
    require_tensor(input, "relu6", 1, "input")
    _real_only("relu6", input)
    return hardtanh(input, 0.0, 6.0, inplace)


@nn_function
def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """``x`` where ``x > 0``, else ``negative_slope * x`` (so the slope is the gradient at 0)."""
    require_tensor(input, "leaky_relu", 1, "input")
    refuse_integers("leaky_relu_cpu", input)
    return _finish(input, LeakyRelu.apply(_operand(input, inplace), negative_slope), inplace)


@nn_function
def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """``leaky_relu`` with a learned slope per channel (dim 1): ``weight`` has 1 or ``C`` elements."""
    refuse_integers("prelu_cpu", input)
    if isinstance(weight, Tensor) and weight.dtype != input.dtype:
        raise RuntimeError(f"prelu: Type promoting not supported. Got {scalar_type_name(input._data.dtype)} and "
                           f"{scalar_type_name(weight._data.dtype)}; "
                           f"convert the weight, e.g. weight.to({input.dtype}), or the input")
    if weight.dim() > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.dim()} "
                           f"(weight of size {list(weight.shape)})")
    channels = input.shape[1] if input.dim() >= 2 else 1
    if weight.numel() not in (1, channels):
        if input.dim() == 0:  # (torch's first complaint: a 0-d input has one channel)
            raise RuntimeError(f"prelu: Not allow zero-dim input tensor with a weight of {weight.numel()} elements; "
                               "give the input a channel dim, or use one parameter")
        raise RuntimeError(
            f"prelu: mismatch of parameter numbers and input channel size: the weight has {weight.numel()} "
            f"elements, the input {list(input.shape)} has {channels} channels; use 1 or {channels} parameters"
        )
    if weight.numel() == 1:
        slope = weight.reshape(())
    else:  # one slope per channel, broadcast over the dims after it
        slope = weight.reshape(channels, *([1] * (input.dim() - 2)))
    # the slope's piece on the inputs it is taken for: an inf input above 0 gives the slope no nan gradient
    return named_and_tied(ember.where(input > 0, input, slope * input.clamp_max(0)), "PreluKernelBackward0", input,
                          weight)


@nn_function
def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          inplace: bool = False) -> Tensor:
    """``leaky_relu`` whose slope is drawn uniformly from ``[lower, upper]`` per element in training,
    and is their mean in evaluation."""
    refuse_integers("leaky_relu_cpu", input)
    _real_only("rrelu", input)
    if lower > upper:
        raise RuntimeError(f"rrelu: Lower bound should be less than or equal to the upper bound, but got lower "
                           f"{lower} and upper {upper}")
    if not training:  # (torch's result is row-major, whatever the input's layout)
        result = leaky_relu(input if inplace else input.contiguous(), (lower + upper) / 2, inplace)
        return result if inplace else named_node(result, "RreluWithNoiseBackward0", input)
    return _finish(input, named_node(input * _rrelu_slopes(input, lower, upper), "RreluWithNoiseBackward0", input),
                   inplace)


def _rrelu_slopes(input: Tensor, lower: float, upper: float) -> Tensor:
    """1 where ``input`` is positive; elsewhere a slope from ``[lower, upper]``, drawn as torch draws it: one double
    uniform per such element, in order, between the bounds as the dtype's arithmetic holds them."""
    from ember import _random, _streams

    data = input._data
    negative = data <= 0
    if data.dtype.itemsize < 8:  # (torch computes half, bfloat16 and single in single)
        lower, upper = float(np.float32(lower)), float(np.float32(upper))
    drawn = _streams.uniform(_random.chosen(None), (int(negative.sum()),), True, lower, upper)
    slopes = np.ones(data.shape, np.float32 if data.dtype.itemsize < 8 else data.dtype)
    slopes[negative] = drawn
    return ember.tensor(slopes, dtype=input.dtype)


@nn_function
def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``x`` where ``x > 0``, else ``alpha * (exp(x) - 1)``."""
    require_tensor(input, "elu", 1, "input")
    _real_only("elu", input)
    return _finish(input, _elu(_operand(input, inplace), alpha, 1.0, 1.0), inplace)


def _elu(input: Tensor, alpha: float, scale: float, input_scale: float) -> Tensor:
    return Elu.apply(input, alpha, scale, input_scale)


@nn_function
def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""
    require_tensor(input, "celu", 1, "input")
    _real_only("celu", input)
    if alpha == 0:
        raise RuntimeError("celu: ZeroDivisionError: alpha must not be 0 (the input is divided by it)")
    return _finish(input, Celu.apply(_operand(input, inplace), alpha, 1.0, 1.0 / alpha), inplace)


@nn_function
def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """``scale * elu(x, alpha)`` with the self-normalising constants."""
    require_tensor(input, "selu", 1, "input")
    _real_only("selu", input)
    return _finish(input, _elu(_operand(input, inplace), _SELU_ALPHA, _SELU_SCALE, 1.0), inplace)


@nn_function
def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """``x * Phi(x)`` (``Phi`` the normal CDF), or its tanh approximation with ``approximate='tanh'``.

    >>> ember.nn.functional.gelu(ember.tensor([0., 1.]))
    tensor([0.0000, 0.8413])
    """
    require_tensor(input, "gelu", 1, "input")
    refuse_integers("GeluKernelImpl", input)
    if approximate in ("none", "tanh"):
        return Gelu.apply(input, approximate)
    raise RuntimeError(f"approximate argument must be either none or tanh, got '{approximate}'")


@nn_function
def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * sigmoid(x)``."""
    require_tensor(input, "silu", 1, "input")
    refuse_integers("silu_cpu", input)
    if input.dtype is ember.bfloat16:  # as torch: in single precision, rounded once
        wide = input.float()
        return _finish(input, named_node((wide * ember.sigmoid(wide)).to(input.dtype), "SiluBackward0", input,
                                                 listed=(input,)), inplace)
    return _finish(input, named_node(input * ember.sigmoid(input), "SiluBackward0", input, listed=(input,)), inplace)


@nn_function
def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * tanh(softplus(x))``."""
    require_tensor(input, "mish", 1, "input")
    refuse_integers("mish_cpu", input)
    _real_only("mish", input)
    mish = named_node(input * ember.tanh(softplus(input)), "MishBackward0", input, listed=(input,))
    return _finish(input, mish, inplace)


@nn_function
def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """``log(1 + exp(beta * x)) / beta``, and ``x`` itself where ``beta * x > threshold``.

    >>> ember.nn.functional.softplus(ember.tensor([0.]))
    tensor([0.6931])
    """
    require_tensor(input, "softplus", 1, "input")
    refuse_integers("softplus_cpu", input)
    _real_only("softplus", input)
    return Softplus.apply(input, beta, threshold)


@nn_function
def softsign(input: Tensor) -> Tensor:
    """``x / (1 + |x|)``."""
    return input / (1 + input.abs())


@nn_function
def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, else 0."""
    require_tensor(input, "softshrink", 1, "input")
    refuse_integers("softshrink_check", input)
    _real_only("softshrink", input)
    # (65504, half's largest value, is the least of the floating dtypes': finfo is asked only past it)
    if lambd < 0 or lambd > 65504.0 and lambd > ember.finfo(input.dtype).max:
        raise RuntimeError(f"softshrink: lambda must be in range [0, {ember.finfo(input.dtype).max:g}] for input "
                           f"dtype {input.dtype}, but found {lambd}")
    return Softshrink.apply(input, lambd)


@nn_function
def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``x`` where ``|x| > lambd``, else 0."""
    require_tensor(input, "hardshrink", 1, "input")
    refuse_integers("hardshrink_cpu", input)
    _real_only("hardshrink", input)
    return Hardshrink.apply(input, lambd)


@nn_function
def tanhshrink(input: Tensor) -> Tensor:
    """``x - tanh(x)``."""
    return input - ember.tanh(input)


@nn_function
def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * relu6(x + 3) / 6``; its gradient is 0 at -3 and 1 at 3, as torch's.

    >>> ember.nn.functional.hardswish(ember.tensor([-3., 1., 3.]))
    tensor([-0.0000,  0.6667,  3.0000])
    """
    require_tensor(input, "hardswish", 1, "input")
    refuse_integers("hardswish_cpu", input)
    _real_only("hardswish", input)
    return _finish(input, Hardswish.apply(_operand(input, inplace)), inplace)


@nn_function
def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """``relu6(x + 3) / 6``; the gradient is 0 at -3 and 3."""
    require_tensor(input, "hardsigmoid", 1, "input")
    refuse_integers("hardsigmoid_cpu", input)
    _real_only("hardsigmoid", input)
    return _finish(input, Hardsigmoid.apply(_operand(input, inplace)), inplace)


@nn_function
def logsigmoid(input: Tensor) -> Tensor:
    """``log(sigmoid(x))``, computed without overflow for large ``|x|``."""
    require_tensor(input, "log_sigmoid", 1, "input")
    refuse_integers("log_sigmoid_cpu", input)
    _real_only("logsigmoid", input)
    return LogSigmoid.apply(input)


@nn_function
def glu(input: Tensor, dim: int = -1) -> Tensor:
    """The first half of ``input`` along ``dim`` times the sigmoid of the second half."""
    refuse_integers("glu_cpu", input)
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    _real_only("glu", input)
    size = input.shape[dim]
    if size % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {dim % input.dim()} is size {size}")
    first, second = input.chunk(2, dim)
    return named_node(first * ember.sigmoid(second), "GluBackward0", input, listed=(input,))


@nn_function
def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """``softmax(-x)`` along ``dim``.

    >>> ember.nn.functional.softmin(ember.tensor([0., 0.]), dim=0)
    tensor([0.5000, 0.5000])
    """
    from ember.nn.functional import softmax
    return softmax(-input, dim, _stacklevel, dtype)


# torch's in-place spellings: each is its function with inplace=True
@nn_function
def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """``elu`` written into ``input``."""
    return elu(input, alpha, True)


@nn_function
def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """``celu`` written into ``input``."""
    return celu(input, alpha, True)


@nn_function
def selu_(input: Tensor) -> Tensor:
    """``selu`` written into ``input``."""
    return selu(input, True)


@nn_function
def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    """``leaky_relu`` written into ``input``."""
    return leaky_relu(input, negative_slope, True)


@nn_function
def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """``hardtanh`` written into ``input``."""
    return hardtanh(input, min_val, max_val, True)


@nn_function
def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False) -> Tensor:
    """``rrelu`` written into ``input``."""
    return rrelu(input, lower, upper, training, True)


@nn_function
def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    """``threshold`` written into ``input``.

    >>> x = ember.tensor([0., 2.])
    >>> ember.nn.functional.threshold_(x, 1.0, -1.0) is x
    True
    """
    return _threshold(input, threshold, value, True)


@nn_function
def relu_(input: Tensor) -> Tensor:
    """``relu`` written into ``input``."""
    return input.relu_()
