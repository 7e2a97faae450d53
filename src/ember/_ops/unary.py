"""Elementwise functions of one tensor: exp, log, sqrt, reciprocal, sigmoid, tanh, relu, abs, clamp, rounding.

Each backward is a line of ember ops, so it can itself be differentiated.

>>> import ember
>>> x = ember.tensor([0.5, 2.0], dtype=ember.float64, requires_grad=True)
>>> ember.autograd.gradcheck(ember.tanh, (x,))
True
"""
from __future__ import annotations

import numpy as np

from ember import _dtype

from ember._dtype import scalar_type_name
from ember._ops._jvp import elementwise_jvp
from ember._ops.complex import complex_sign, conjugated
from ember._ops._quiet import IGNORE_ALL, IGNORE_DIVIDE_INVALID, IGNORE_INVALID, IGNORE_OVER, quietly
from ember._ops._select import FROM as SELECT_BY_BITS_FROM, select
from ember._ops._support import (
    BF16, HALF, ZEROS_BUFFER_FROM, as_operand, check_broadcast, check_operand, constant, element_of, ember_function,
    float_result, floating_data, floating_quietly, refuse_bool, refuse_complex, require_tensor, result_dtype, wrap,
    zeros_shaped,
)
from ember._tensor import Tensor
from ember._ops.out import into_elementwise_out_of_its_dtype, into_out
from ember.autograd.function import Function


_floating = floating_data
_SINGLE, _DOUBLE = np.dtype(np.float32), np.dtype(np.float64)
_ONE_SINGLE, _ONE_DOUBLE = constant(1, _SINGLE), constant(1, _DOUBLE)
_ZERO_SINGLE, _ZERO_DOUBLE = constant(0, _SINGLE), constant(0, _DOUBLE)


def of_floats_quietly(setting, fn, x) -> np.ndarray | None:
    """``fn`` of the array of ``x``, a float32 or float64 tensor, with the floating-point warnings that ``setting``
    names off; None for any other ``x``, which the op's general path then takes.

    The usual call in a few steps: on a small tensor, each check and call of the general path is a tenth of the op.
    ``fn`` runs at once (NumPy's warnings from ember's modules are ignored: see ``_quiet``), and again quietly
    only where a user's ``np.seterr`` or warnings filter turned them into errors: the two calls that set NumPy's
    state quietly cost a sixth of a small op. ``fn`` must not change its argument (it may run twice).
    """
    if type(x) is Tensor:
        data = x._data
        dtype = data.dtype
        if dtype is _SINGLE or dtype is _DOUBLE:
            try:  # (quietly_on_objection's steps, spelled out: the call costs 5 % of a small exp)
                return fn(data)
            except (FloatingPointError, RuntimeWarning):
                return quietly(setting, fn, data)
    return None


def _in_single_if_half(data: np.ndarray) -> np.ndarray:
    """Half precision is computed in single and rounded once at the end, as torch does (NumPy's half exp differs)."""
    return data.astype(np.float32) if data.dtype is HALF or data.dtype is BF16 else data


def _exp(data: np.ndarray) -> np.ndarray:
    if data.dtype is HALF or data.dtype is BF16:
        return np.exp(data.astype(np.float32)).astype(data.dtype)  # a half overflows only when rounded
    return np.exp(data)


def _sigmoid(data: np.ndarray) -> np.ndarray:
    if data.dtype is HALF or data.dtype is BF16:
        return _sigmoid(data.astype(np.float32)).astype(data.dtype)
    if data.dtype is _SINGLE or data.dtype is _DOUBLE:
        return _sigmoid_of_floats(data)
    one = constant(1, data.dtype)
    return one / (one + np.exp(-data))


def _sigmoid_of_floats(data: np.ndarray) -> np.ndarray:
    """sigmoid of a float32 or float64 array; its 1 made once (looking it up costs as much as an operation), the
    steps after the first in place on its result (a new array costs NumPy a fifth of a step on a small one), each
    ``out`` given by position (NumPy parses keywords at a cost of its own)."""
    one = _ONE_SINGLE if data.dtype is _SINGLE else _ONE_DOUBLE
    if not data.ndim:  # NumPy's arithmetic gives scalars for 0-d arrays: nothing to take steps in place on
        return one / (one + np.exp(-data))
    result = _negative(data)
    _exp_ufunc(result, result)
    _add(result, one, result)
    return _reciprocal(result, result)  # (1 / x, rounded as the division is)


_negative, _exp_ufunc, _add, _reciprocal = np.negative, np.exp, np.add, np.reciprocal


class Exp(Function):
    backward_name = "ExpBackward0"
    torch_saved_tensors = {"result": 0}
    backward_on_arrays = True
    jvp = elementwise_jvp()

    @staticmethod
    def forward(ctx, x):
        result = of_floats_quietly(IGNORE_OVER, np.exp, x)
        out = wrap(result if result is not None else floating_quietly(IGNORE_OVER, _exp, "exp", x))
        if ctx.needs_input_grad[0]:  # (nothing to keep for a call not recorded: see arithmetic.Mul)
            ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return grad * conjugated(out)


class Log(Function):
    backward_name = "LogBackward0"
    torch_saved_tensors = {"self": 0}
    backward_on_arrays = True
    jvp = elementwise_jvp()

    @staticmethod
    def forward(ctx, x):
        if ctx.needs_input_grad[0]:  # (nothing to keep for a call not recorded: see arithmetic.Mul)
            ctx.save_for_backward(x)
        result = of_floats_quietly(IGNORE_DIVIDE_INVALID, np.log, x)
        return wrap(result if result is not None else floating_quietly(IGNORE_DIVIDE_INVALID, np.log, "log", x))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return quietly(IGNORE_DIVIDE_INVALID, _over, grad, conjugated(x))  # at 0: inf, quietly (arrays warn, tensors do not)


def _over(a, b):
    return a / b


class Sqrt(Function):
    backward_name = "SqrtBackward0"
    torch_saved_tensors = {"result": 0}
    backward_on_arrays = True
    jvp = elementwise_jvp()

    @staticmethod
    def forward(ctx, x):
        result = of_floats_quietly(IGNORE_INVALID, np.sqrt, x)
        out = wrap(result if result is not None else floating_quietly(IGNORE_INVALID, np.sqrt, "sqrt", x))
        if ctx.needs_input_grad[0]:  # (nothing to keep for a call not recorded: see arithmetic.Mul)
            ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return quietly(IGNORE_DIVIDE_INVALID, _over, grad, 2 * conjugated(out))


class Reciprocal(Function):
    backward_name = "ReciprocalBackward0"
    torch_saved_tensors = {"result": 0}
    backward_on_arrays = True
    jvp = elementwise_jvp()

    @staticmethod
    def forward(ctx, x):
        out = wrap(floating_quietly(IGNORE_ALL, np.reciprocal, "reciprocal", x))  # 1 / 0 is inf, as in torch
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return grad * -conjugated(out * out)


class Sigmoid(Function):
    backward_name = "SigmoidBackward0"
    torch_saved_tensors = {"result": 0}
    backward_on_arrays = True
    jvp = elementwise_jvp()

    @staticmethod
    def forward(ctx, x):
        result = of_floats_quietly(IGNORE_OVER, _sigmoid_of_floats, x)
        out = wrap(result if result is not None else floating_quietly(IGNORE_OVER, _sigmoid, "sigmoid", x))
        if ctx.needs_input_grad[0]:  # (nothing to keep for a call not recorded: see arithmetic.Mul)
            ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return sigmoid_backward(grad, out)


def sigmoid_backward(grad, out):
    """sigmoid's gradient ``grad * (1 - out) * out``, on arrays or (recorded, as torch's node) on tensors."""
    if (out if type(out) is np.ndarray else out._data).dtype.kind == "c":
        return grad * conjugated((1 - out) * out)  # in ember ops, which conjugate again when differentiated
    if isinstance(grad, np.ndarray):
        return _sigmoid_gradient(grad, out)
    return SigmoidBackward.apply(grad, out)


def _sigmoid_gradient(grad: np.ndarray, out: np.ndarray) -> np.ndarray:
    # torch's order of operations, each rounded to the dtype (in half too: torch's kernel does not widen here)
    dtype = out.dtype
    one = _ONE_SINGLE if dtype is _SINGLE else _ONE_DOUBLE if dtype is _DOUBLE else constant(1, dtype)
    return grad * (one - out) * out


class SigmoidBackward(Function):
    """sigmoid's gradient as an op of its own, so that it can be differentiated again (torch's sigmoid_backward)."""

    backward_name = "SigmoidBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, out):
        ctx.save_for_backward(grad, out)
        return wrap(_sigmoid_gradient(grad._data, out._data))

    @staticmethod
    def backward(ctx, grad_grad):
        grad, out = ctx.saved_tensors
        needs = ctx.needs_input_grad
        return (sigmoid_backward(grad_grad, out) if needs[0] else None,
                grad_grad * grad * (1 - 2 * out) if needs[1] else None)


class Tanh(Function):
    backward_name = "TanhBackward0"
    torch_saved_tensors = {"result": 0}
    backward_on_arrays = True
    jvp = elementwise_jvp()

    @staticmethod
    def forward(ctx, x):
        out = wrap(np.tanh(_floating("tanh", x)))
        if ctx.needs_input_grad[0]:  # (nothing to keep for a call not recorded: see arithmetic.Mul)
            ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return tanh_backward(grad, out)


def tanh_backward(grad, out):
    """tanh's gradient ``grad * (1 - out * out)``, on arrays or (recorded, as torch's node) on tensors."""
    if (out if type(out) is np.ndarray else out._data).dtype.kind == "c":  # as sigmoid_backward's
        return grad * conjugated(1 - out * out)
    if isinstance(grad, np.ndarray):
        return _tanh_gradient(grad, out)
    return TanhBackward.apply(grad, out)


def _tanh_gradient(grad: np.ndarray, out: np.ndarray) -> np.ndarray:
    # half is computed in single and rounded once, as torch's kernel does (in single and double, torch's
    # 1 - out * out is one fused multiply-add, so its last bit may differ from this)
    work_grad, work_out = _in_single_if_half(grad), _in_single_if_half(out)
    one = constant(1, work_out.dtype)
    return (work_grad * (one - work_out * work_out)).astype(grad.dtype, copy=False)


class TanhBackward(Function):
    """tanh's gradient as an op of its own, so that it can be differentiated again (torch's tanh_backward)."""

    backward_name = "TanhBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, out):
        ctx.save_for_backward(grad, out)
        return wrap(_tanh_gradient(grad._data, out._data))

    @staticmethod
    def backward(ctx, grad_grad):
        grad, out = ctx.saved_tensors
        needs = ctx.needs_input_grad
        return (tanh_backward(grad_grad, out) if needs[0] else None,
                grad_grad * (-2 * out * grad) if needs[1] else None)


class Relu(Function):
    backward_name = "ReluBackward0"
    torch_saved_tensors = {"result": 0}
    backward_on_arrays = True
    jvp = elementwise_jvp()

    @staticmethod
    def forward(ctx, x):
        data = x._data if type(x) is Tensor else require_tensor(x, "relu")._data
        dtype = data.dtype
        if dtype is _SINGLE or dtype is _DOUBLE:  # the usual call: nothing to refuse, and its 0 at hand
            # (relu(-0.0) is +0.0 here, where torch's is -0.0: np.maximum(0, x), which keeps it, is 7 % slower)
            zero = (_ZERO_SINGLE if dtype is _SINGLE else _ZERO_DOUBLE) if data.size < ZEROS_BUFFER_FROM else \
                zeros_shaped(data)
            out = wrap(np.maximum(data, zero))
        else:
            out = wrap(_relu_of_others(data))
        if ctx.needs_input_grad[0]:  # (nothing to keep for a call not recorded: see arithmetic.Mul)
            ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return threshold_backward(grad, out)


def _relu_of_others(data: np.ndarray) -> np.ndarray:
    """relu of an array that is not float32 or float64: bools and complex numbers refused, as torch refuses them."""
    kind = data.dtype.kind
    if kind == "b":
        raise RuntimeError("Boolean inputs not supported for relu; convert the tensor first, e.g. x.to(ember.int64)")
    if kind == "c":
        refuse_complex("relu", data, _NO_COMPLEX_CLAMP)
    zero = constant(0, data.dtype)
    # -0.0 kept, as torch: NumPy's maximum gives its second operand where the two are equal, but its half one its first
    return np.maximum(data, zero) if data.dtype == np.float16 else np.maximum(zero, data)


def threshold_backward(grad, out):
    """``grad`` where ``out`` is positive, else 0: relu's gradient, on arrays or (recorded) on tensors.

    As torch's, the recorded form depends on ``out`` too (with a zero derivative), so a second
    derivative through relu is zero rather than an error.
    """
    if isinstance(grad, np.ndarray):
        return _where_positive(out, grad)
    return ThresholdBackward.apply(grad, out)


def _where_positive(out: np.ndarray, grad: np.ndarray) -> np.ndarray:
    # 0 where out <= 0 (at exactly 0 too); a nan output keeps its gradient, as torch's threshold_backward does
    dtype = grad.dtype
    zero = _ZERO_SINGLE if dtype is _SINGLE else _ZERO_DOUBLE if dtype is _DOUBLE else constant(0, dtype)
    dropped = np.less_equal(out, zero)
    if grad.size < SELECT_BY_BITS_FROM or dtype.kind != "f" or not grad.ndim or dropped.shape != grad.shape:
        return np.where(dropped, zero, grad)  # (on few elements the masks' calls cost more than where's choices)
    # a bit mask (all ones where kept): np.where's per-element choice runs about 7 times slower
    byte_mask = dropped.view(np.int8)
    byte_mask -= _ONE_INT8  # 1 - 1 where dropped, 0 - 1 (all ones) where kept: on one byte an element, not four
    mask = byte_mask.astype(_BITS_OF_WIDTH[dtype.itemsize])  # sign-extended: all ones across the float's width
    mask &= grad.view(mask.dtype)  # (a view of the same item size: any strides)
    return mask.view(dtype)


_ONE_INT8 = np.ones((), np.int8)  # (a 0-d array: NumPy converts it faster than the Python int 1)
_BITS_OF_WIDTH = {2: np.dtype(np.int16), 4: np.dtype(np.int32), 8: np.dtype(np.int64)}


class ThresholdBackward(Function):
    """relu's gradient as an op of its own, so that it can be differentiated again (torch's threshold_backward)."""

    backward_name = "ThresholdBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, out):
        ctx.save_for_backward(out)
        return wrap(_where_positive(out._data, grad._data))

    @staticmethod
    def backward(ctx, grad_grad):
        (out,) = ctx.saved_tensors
        needs = ctx.needs_input_grad
        return (threshold_backward(grad_grad, out) if needs[0] else None,
                zeros_like_gradient(grad_grad) if needs[1] else None)


class Abs(Function):
    backward_name = "AbsBackward0"
    torch_saved_tensors = {"self": 0}
    backward_on_arrays = True  # (the sign of an array is Sign's own)
    jvp = elementwise_jvp()

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return wrap(np.abs(refuse_bool("abs", require_tensor(x, "abs")._data)))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * _abs_slope(x)


class Clamp(Function):
    """clamp by numbers (either None), given as one argument ``bounds``: torch's node takes them as numbers,
    not as inputs, and apply's path for two arguments costs half of its path for three."""

    backward_name = "ClampBackward1"
    torch_saved_tensors = {"self": 0}
    torch_saved_values = {"min": lambda node: node.bounds[0], "max": lambda node: node.bounds[1]}
    backward_on_arrays = True  # (see _masked)
    jvp = elementwise_jvp()

    @staticmethod
    def forward(ctx, x, bounds: tuple):
        min, max = bounds
        data = x._data if type(x) is Tensor else require_tensor(x, "clamp")._data
        if bounds_in_range(min, max, data.dtype):  # the usual call: the general path's steps, none needed
            if ctx.needs_input_grad[0]:  # (nothing to keep for a call not recorded: see arithmetic.Mul)
                ctx.save_for_backward(x)
                ctx.bounds = (min, max)
            return wrap(clamped_floats(data, min, max))
        if min is None and max is None:
            raise RuntimeError(
                "clamp: At least one of 'min' or 'max' must not be None; give a bound, e.g. x.clamp(min=0)"
            )
        refuse_complex("clamp", data, _NO_COMPLEX_CLAMP)
        ctx.save_for_backward(x)
        target = data.dtype
        if _dtype.kind(target) != "f":  # an integer tensor with a float bound gives a float result
            target = result_dtype(x, *[b for b in (min, max) if b is not None]).np
            refuse_complex("clamp", target, _NO_COMPLEX_CLAMP)  # (and with a complex one, a complex result)
        # as torch: a bound that does not fit the result's dtype is an error (but -1 wraps for uint8)
        min, max = [as_operand(element_of("clamp", b, target), target) for b in (min, max)]
        ctx.bounds = (min, max)
        out = refuse_bool("clamp", data if data.dtype == target else data.astype(target))
        if min is not None:
            out = np.maximum(out, min)
        if max is not None:
            out = np.minimum(out, max)
        return wrap(out.astype(target, copy=False))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        data = x if type(x) is np.ndarray else x._data
        low, high = ctx.bounds
        # The mask is constant (its derivative is zero), so NumPy may compute it: bounds are inclusive, as in torch.
        inside = np.ones(data.shape, bool)
        if low is not None:
            inside &= data >= low
        if high is not None:
            inside &= data <= high
        return _masked(grad, inside), None


def _masked(grad, mask: np.ndarray):
    """``grad`` where ``mask`` holds, else 0 (as torch; ``grad * mask`` would give nan for an infinite ``grad``):
    of a tensor, or of an array."""
    if type(grad) is np.ndarray:
        return select(mask, grad, np.zeros((), grad.dtype))
    from ember._ops.arithmetic import where  # imported late: arithmetic imports this module

    return where(wrap(mask), grad, 0.0)


class ClampTensor(Function):
    """clamp with tensor bounds (broadcasting): each output element, and its gradient, comes from x, min or max."""

    backward_name = "ClampBackward0"
    torch_saved_tensors = {"max": 2, "min": 1, "self": 0}
    graph_inputs = (0, 1, 2)  # a missing bound too, as (None, 0)

    @staticmethod
    def forward(ctx, x, low, high):
        present = [b for b in (low, high) if b is not None]
        for operand in (x, *present):
            refuse_complex("clamp", operand._data, _NO_COMPLEX_CLAMP)
        check_broadcast("clamp", x._data.shape, *[b._data.shape for b in present])
        target = result_dtype(x, *present).np
        data = x._data.astype(target, copy=False)
        if len(present) == 2:  # torch clamps bools to one bool bound (min or max), but not between two
            refuse_bool("clamp", data)
        ctx.save_for_backward(x, low, high)
        ctx.target = target
        return wrap(np.asarray(_clamped(data, low, high, target)))

    @staticmethod
    def backward(ctx, grad):
        x, low, high = ctx.saved_tensors  # as torch: refused if one of them was changed in place since forward
        masks = _clamp_parts(x._data.astype(ctx.target, copy=False), low, high, ctx.target)[1]
        needs = ctx.needs_input_grad
        return tuple(_masked(grad, mask) if need else None for mask, need in zip(masks, needs))


def _clamped(data: np.ndarray, low, high, target: np.dtype) -> np.ndarray:
    """clamp's result alone (the forward needs no masks): NaN in x or a bound stays NaN, as in torch."""
    out = data if low is None else np.maximum(data, low._data.astype(target, copy=False))
    return out if high is None else np.minimum(out, high._data.astype(target, copy=False))


def _clamp_parts(data: np.ndarray, low, high, target: np.dtype) -> tuple:
    """clamp's result, and for each of x, min and max the mask of the elements whose gradient it gets, as torch's:
    x where min <= x <= max, min where x < min < max, max where x > max or min > max. So no part gets it where
    x < min == max, nor (but max, if min > max) where x or a bound is NaN."""
    floor = None if low is None else low._data.astype(target, copy=False)
    ceiling = None if high is None else high._data.astype(target, copy=False)
    out, inside, below, above = data, np.ones((), bool), np.zeros((), bool), np.zeros((), bool)
    if floor is not None:
        out = np.maximum(out, floor)
        inside = data >= floor
        below = data < floor if ceiling is None else (data < floor) & (floor < ceiling)
    if ceiling is not None:
        out = np.minimum(out, ceiling)
        inside = inside & (data <= ceiling)
        above = data > ceiling if floor is None else (data > ceiling) | (floor > ceiling)
    shape = np.shape(out)
    return out, [np.broadcast_to(m, shape) for m in (inside, below, above)]


_NO_COMPLEX_CLAMP = "clamp is not supported for complex types"  # (relu too, as torch's, which clamps)


class ClampMin(Clamp):
    backward_name = "ClampMinBackward0"
    torch_saved_tensors = {"self": 0}
    torch_saved_values = {"min": lambda node: node.bounds[0]}


class ClampMax(Clamp):
    backward_name = "ClampMaxBackward0"
    torch_saved_tensors = {"self": 0}
    torch_saved_values = {"max": lambda node: node.bounds[1]}


class ClampMinTensor(ClampTensor):
    backward_name = "ClampMinBackward1"
    torch_saved_tensors = {"min": 1, "self": 0}
    graph_inputs = (0, 1)


class ClampMaxTensor(ClampTensor):
    backward_name = "ClampMaxBackward1"
    torch_saved_tensors = {"max": 2, "self": 0}
    graph_inputs = (0, 2)


class _Rounding(Function):
    """floor, ceil, round, trunc, sign: piecewise constant, so their gradient is zero."""

    numpy_function = None
    backward_on_arrays = True
    jvp = elementwise_jvp()
    complex_refusal = "{} is not supported for complex inputs"  # torch's words, with the op's name

    @classmethod
    def forward(cls, ctx, x):
        name = cls.__name__.lower()
        data = refuse_bool(name, require_tensor(x, name)._data)
        if data.dtype.kind == "c":
            refuse_complex(name, data, cls.complex_refusal.format(name))
        return wrap(cls.numpy_function(data))

    @staticmethod
    def backward(ctx, grad):
        return zeros_like_gradient(grad)


def zeros_like_gradient(grad):
    """Zeros of ``grad``'s shape and dtype, on arrays or tensors: the gradient of a piecewise constant function.

    Not ``grad * 0``, which is -0 for a negative and nan for an infinite or nan ``grad``; torch's is 0 everywhere.
    """
    if isinstance(grad, np.ndarray):
        return np.zeros(grad.shape, grad.dtype)
    if type(grad) is not Tensor:  # a subclass (a batched tensor under vmap) answers for its own shape
        return grad.new_zeros(grad.shape)
    return wrap(np.zeros(grad._data.shape, grad._data.dtype))


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
    complex_refusal = "\"round\" not implemented for complex tensors"


class RoundDecimals(Function):
    backward_name = "RoundBackward1"
    jvp = elementwise_jvp()

    @staticmethod
    def forward(ctx, x, decimals):
        data = refuse_bool("round", require_tensor(x, "round")._data)
        refuse_complex("round", data)
        if _dtype.kind(data.dtype) != "f":  # as torch: integers round only to whole numbers (decimals=0)
            raise NotImplementedError(
                f'"round" with decimals={decimals} not implemented for \'{scalar_type_name(data.dtype)}\'; '
                "convert to floating point first, e.g. x.float()"
            )
        if data.dtype in _dtype.LOW:  # as torch: half and bfloat16 scale by 10 ** decimals in single precision
            return wrap(np.asarray(quietly(IGNORE_ALL, np.round, data.astype(np.float32), decimals)).astype(data.dtype))
        return wrap(np.asarray(quietly(IGNORE_ALL, np.round, data, decimals)))  # (10 ** decimals may overflow)

    @staticmethod
    def backward(ctx, grad):
        return zeros_like_gradient(grad), None


class Sign(_Rounding):
    backward_name = "SignBackward0"

    @classmethod
    def forward(cls, ctx, x):
        data = require_tensor(x, "sign")._data
        if data.dtype.kind == "c":
            raise NotImplementedError("Unlike NumPy, sign is not intended to support complex numbers; use sgn "
                                      "instead (z / |z|, and 0 at 0)")
        if data.dtype == np.bool_:
            return wrap(data.copy())  # a bool is its own sign
        return wrap(_signs(data))


def _abs_slope(x):
    """abs's derivative: the sign of a real ``x`` (an array or a tensor); z / |z| of a complex one."""
    if type(x) is np.ndarray:
        return _signs(x) if x.dtype.kind != "c" else complex_sign(x)
    return sign(x) if x._data.dtype.kind != "c" else x.sgn()


def _signs(data: np.ndarray) -> np.ndarray:
    """The sign of each element; of nan, 0, as in torch."""
    signs = np.sign(data)
    if _dtype.kind(signs.dtype) != "f":
        return signs
    if signs.dtype is _dtype.BF16:  # (NumPy's sign of a bfloat16 -0.0 is -0.0; torch's, as float32's, +0.0)
        signs += constant(0, signs.dtype)
    missing = np.isnan(signs)
    if not missing.any():  # the usual call: no nan, so no np.where (5 ns an element)
        return signs
    return np.where(missing, constant(0, signs.dtype), signs)


@ember_function
def exp(input, *, out=None) -> Tensor:
    result = Exp.apply(input)
    return result if out is None else into_out("exp", result, out, input)


@ember_function
def log(input, *, out=None) -> Tensor:
    """Natural logarithm; -inf at 0 and nan below, as in torch."""
    result = Log.apply(input)
    return result if out is None else into_out("log", result, out, input)


@ember_function
def sqrt(input, *, out=None) -> Tensor:
    result = Sqrt.apply(input)
    return result if out is None else into_out("sqrt", result, out, input)


@ember_function
def reciprocal(input, *, out=None) -> Tensor:
    """``1 / input``, always floating; inf where the input is 0.

    >>> ember.reciprocal(ember.tensor([2, 0]))
    tensor([0.5000,    inf])
    """
    result = Reciprocal.apply(input)
    return result if out is None else into_out("reciprocal", result, out, input)


@ember_function
def sigmoid(input, *, out=None) -> Tensor:
    """``1 / (1 + exp(-input))``."""
    result = Sigmoid.apply(input)
    return result if out is None else into_out("sigmoid", result, out, input)


@ember_function
def tanh(input, *, out=None) -> Tensor:
    result = Tanh.apply(input)
    return result if out is None else into_out("tanh", result, out, input)


@ember_function
def relu(input) -> Tensor:
    """``max(input, 0)``."""
    return Relu.apply(input)


@ember_function
def abs(input, *, out=None) -> Tensor:
    result = Abs.apply(input)
    return result if out is None else _magnitudes_into("abs", result, out, input)


@ember_function
def absolute(input, *, out=None) -> Tensor:
    """Another name of ``abs``."""
    result = Abs.apply(require_tensor(input, "absolute"))
    return result if out is None else _magnitudes_into("absolute", result, out, input)


def _magnitudes_into(op: str, result: Tensor, out, input) -> Tensor:
    """``out`` holding ``abs``'s result, with torch's rule: of the input's own dtype for a real input; for a
    complex one, any floating dtype the real magnitudes cast to, or the input's own complex dtype.

    >>> z = ember.tensor([3 + 4j]); ember.abs(z, out=ember.empty(1)), ember.abs(z, out=ember.empty(1, dtype=z.dtype))
    (tensor([5.]), tensor([5.+0.j]))
    """
    if not (isinstance(out, Tensor) and isinstance(input, Tensor) and input._data.dtype.kind == "c"):
        return into_elementwise_out_of_its_dtype(op, result, out, input)
    if out._data.dtype.kind == "c" and out._data.dtype != input._data.dtype:
        raise RuntimeError(f"{op}: Found dtype {scalar_type_name(out._data.dtype)} but expected "
                           f"{scalar_type_name(input._data.dtype)}; pass an out of dtype {input.dtype} or a real one")
    return into_out(op, result, out, input)


@ember_function
def clamp(input, min=None, max=None, *, out=None) -> Tensor:
    """Limit values to ``[min, max]``: numbers, or tensors that broadcast with ``input``; either may be None.

    >>> ember.clamp(ember.tensor([-2., 0.5, 3.]), min=0., max=1.)
    tensor([0.0000, 0.5000, 1.0000])
    """
    result = _clamp(input, min, max, Clamp, ClampTensor)
    return result if out is None else _clamped_into("clamp", result, out, input, min, max)


def _clamped_into(op: str, result: Tensor, out: Tensor, input, *bounds) -> Tensor:
    """``out`` holding ``result``: torch's clamp by numbers wants an ``out`` of the result's dtype, its clamp by
    tensors casts into a wider one (two overloads, two rules)."""
    by_tensors = any(isinstance(bound, Tensor) for bound in bounds)
    write = into_out if by_tensors else into_elementwise_out_of_its_dtype
    return write(op, result, out, input)


clip = clamp


@ember_function
def clamp_min(input, min, *, out=None) -> Tensor:
    """``clamp(input, min=min)``, recorded as torch records it (``ClampMinBackward0``)."""
    result = _clamp(input, min, None, ClampMin, ClampMinTensor)
    return result if out is None else _clamped_into("clamp_min", result, out, input, min)


@ember_function
def clamp_max(input, max, *, out=None) -> Tensor:
    """``clamp(input, max=max)``, recorded as torch records it (``ClampMaxBackward0``)."""
    result = _clamp(input, None, max, ClampMax, ClampMaxTensor)
    return result if out is None else _clamped_into("clamp_max", result, out, input, max)


_LARGEST = {np.dtype(np.float32): float(np.finfo(np.float32).max), np.dtype(np.float64): float(np.finfo(np.float64).max)}
_maximum, _minimum, _asarray = np.maximum, np.minimum, np.asarray
_clip = getattr(getattr(np, "_core", None), "umath", None) and getattr(np._core.umath, "clip", None)


def clamped_floats(data: np.ndarray, low, high, out: np.ndarray | None = None) -> np.ndarray:
    """A float32 or float64 ``data`` limited to ``[low, high]``, numbers that ``bounds_in_range`` accepted (either
    None), into ``out`` if given.

    NumPy's clip ufunc does it in one pass, and orders zeros as torch's clamp does (clamp(-0.0, min=0.0) is 0.0,
    where np.maximum keeps -0.0); np.clip is a Python function around it, which costs more than the pass.
    """
    dtype = data.dtype  # (each bound as a 0-d array of the dtype: NumPy takes it twice as fast as a number)
    if _clip is None:
        result = data if low is None else _maximum(data, _asarray(low, dtype), out=out)
        return result if high is None else _minimum(result, _asarray(high, dtype), out=out)
    low = number_array(-np.inf if low is None else low, dtype)  # (no bound: the infinity that clips nothing)
    high = number_array(np.inf if high is None else high, dtype)
    return _clip(data, low, high) if out is None else _clip(data, low, high, out)


_NUMBER_ARRAYS: tuple = ({}, {})  # float64's and float32's (by ``dtype is float32``): the numbers met, as arrays


def number_array(value: int | float, dtype: np.dtype) -> np.ndarray:
    """``value``, a Python number within float32's or float64's range, as a read-only 0-d array of that ``dtype``
    (which NumPy takes in half the time of a number, with the same result), made once per value.

    Programs pass the same few numbers (clamp's bounds, an optimizer's step size) on every step, and making the
    array costs half of a small tensor's pass.

    >>> number_array(0.5, np.dtype(np.float32)) is number_array(0.5, np.dtype(np.float32))
    True
    """
    array = _NUMBER_ARRAYS[dtype is _SINGLE].get(value)
    return array if array is not None else _number_array_kept(value, dtype)


def _number_array_kept(value: int | float, dtype: np.dtype) -> np.ndarray:
    """A new array for ``number_array``, kept for the next call; a zero is not (0.0 and -0.0 are one key, but
    differ in results: clamp(-0.0, min=0.0) is 0.0, clamp(0.0, max=-0.0) -0.0)."""
    array = _asarray(value, dtype)
    if not value:
        return array
    kept = _NUMBER_ARRAYS[dtype is _SINGLE]
    if len(kept) >= 256:  # a program that passes ever new numbers: start again
        kept.clear()
    array.flags.writeable = False
    kept[value] = array
    return array


def bounds_in_range(low, high, dtype: np.dtype) -> bool:
    """Whether clamp's bounds ``low`` and ``high``, not both None, are each None or a Python number that a float32
    or float64 array takes as it is: then nothing of the general path's promotion and checks applies."""
    largest = _LARGEST.get(dtype)
    if largest is None:
        return False
    if low is None:
        return high is not None and _plain_bound(high, largest)
    return _plain_bound(low, largest) and (high is None or _plain_bound(high, largest))


def _plain_bound(bound, largest: float) -> bool:
    """A float within ``largest``, or an int of 64 bits (any such int is within float32's range); an int beyond
    takes the general path, which refuses it as torch does."""
    return type(bound) is float and -largest <= bound <= largest or \
        type(bound) is int and -2 ** 63 <= bound < 2 ** 64


_PLAIN_BOUNDS = frozenset({float, int, type(None)})  # what check_operand passes as it is


def _clamp(input, min, max, by_numbers: type, by_tensors: type) -> Tensor:
    if type(min) in _PLAIN_BOUNDS and type(max) in _PLAIN_BOUNDS:  # the usual call, at once
        return by_numbers.apply(input, (min, max))
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        min, max = _zero_dim_bound_with_a_number(min, max)
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        for name, bound in (("min", min), ("max", max)):
            if bound is not None and not isinstance(bound, Tensor):
                raise TypeError(
                    f"clamp: min and max must both be tensors (or None) or both numbers, but {name} is a "
                    f"{type(bound).__name__}; wrap it, e.g. ember.tensor({bound!r})"
                )
        return by_tensors.apply(require_tensor(input, "clamp"), min, max)
    # NumPy scalars as Python numbers: np.int64(3) is an integer bound, not a float
    min = None if min is None else check_operand(min, "clamp", 2, "min")
    max = None if max is None else check_operand(max, "clamp", 3, "max")
    return by_numbers.apply(input, (min, max))


def _zero_dim_bound_with_a_number(min, max) -> tuple:
    """As torch: a 0-d tensor bound given with a number bound is read as a number, unless it requires grad."""
    if _is_number(max) and _reads_as_number(min):
        return min.item(), max
    if _is_number(min) and _reads_as_number(max):
        return min, max.item()
    return min, max


def _reads_as_number(bound) -> bool:
    return isinstance(bound, Tensor) and not bound._data.ndim and not bound.requires_grad


def _is_number(bound) -> bool:
    return bound is not None and not isinstance(bound, Tensor)


@ember_function
def floor(input, *, out=None) -> Tensor:
    result = Floor.apply(input)
    return result if out is None else into_elementwise_out_of_its_dtype("floor", result, out, input)


@ember_function
def ceil(input, *, out=None) -> Tensor:
    result = Ceil.apply(input)
    return result if out is None else into_elementwise_out_of_its_dtype("ceil", result, out, input)


@ember_function
def trunc(input, *, out=None) -> Tensor:
    result = Trunc.apply(input)
    return result if out is None else into_elementwise_out_of_its_dtype("trunc", result, out, input)


_WHOLE = object()  # round() without decimals: torch's other overload, which takes integers too


def decimal_places(decimals, op: str) -> int:
    """``decimals`` of round as an int: torch parses it before it looks at the input (None, 1.0, True refused)."""
    if not isinstance(decimals, (int, np.integer)) or isinstance(decimals, bool):
        raise TypeError(f"{op}(): argument 'decimals' must be int, not {type(decimals).__name__}; "
                        "e.g. decimals=2 (round() without decimals rounds to whole numbers)")
    return int(decimals)


@ember_function
def round(input, *, decimals: int = _WHOLE, out=None) -> Tensor:
    """Round half to even, to ``decimals`` places.

    As torch, ``decimals`` given (even 0) is the overload for floating point only, recorded as RoundBackward1.

    >>> ember.round(ember.tensor([0.5, 1.5, 1.2345]), decimals=2)
    tensor([0.5000, 1.5000, 1.2300])
    """
    if decimals is _WHOLE:
        result = Round.apply(input)
    else:
        result = RoundDecimals.apply(input, decimal_places(decimals, "round"))
    return result if out is None else into_elementwise_out_of_its_dtype("round", result, out, input)


@ember_function
def sign(input, *, out=None) -> Tensor:
    result = Sign.apply(input)
    return result if out is None else into_elementwise_out_of_its_dtype("sign", result, out, input)
