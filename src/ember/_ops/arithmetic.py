"""Elementwise arithmetic with broadcasting: add, sub, mul, div, pow, neg, and comparisons.

Gradients of broadcast inputs come back with the broadcast shape; the engine
sums them down to each input's shape.

>>> import ember
>>> x = ember.tensor([1., 2.], requires_grad=True)
>>> y = (x * 3 + 1) / 2 - x ** 2
>>> y.sum().backward(); x.grad
tensor([-0.5000, -2.5000])
"""
from __future__ import annotations

import warnings

import math

import numpy as np

from ember import _dtype
from ember._axpy import FROM as AXPY_FROM, axpy_single
from ember._ops._jvp import broadcasting_jvp, linear_jvp, product_jvp
from ember._ops._quiet import IGNORE_ALL, IGNORE_DIVIDE_INVALID, quietly
from ember._ops.complex import conjugated
from ember._ops._select import FROM as SELECT_BY_BITS_FROM, select
from ember._ops._support import (
    BF16, HALF, check_broadcast, check_operand, constant, element_of, ember_function, float_result, half_in_single,
    in_single, promoted_arrays, refuse_complex, require_tensor, undispatched, user_stacklevel, wrap,
)
from ember._ops.out import into_elementwise_out_of_its_dtype, into_out, into_out_of_its_dtype
from ember._ops.unary import reciprocal
from ember._tensor import Tensor
from ember.autograd.function import Function

_ndarray = np.ndarray
_where = select  # np.where, by bit masks on large float arrays (see _select)
_np_where = undispatched(np.where)  # (where's own arrays only: NumPy's dispatcher has nothing to do)
_BOOL = np.dtype(np.bool_)
_SINGLE, _DOUBLE = np.dtype(np.float32), np.dtype(np.float64)
_asarray = np.asarray
_true_divide = np.true_divide


def _no_bool_subtraction(a, b) -> None:
    """torch refuses ``-`` on bools (a bool tensor or a Python bool), and says what was probably meant."""
    a_bool, b_bool = _is_bool(a), _is_bool(b)
    if a_bool and b_bool:
        raise RuntimeError(
            "Subtraction, the `-` operator, with two bool tensors is not supported. "
            "Use the `^` or `logical_xor()` operator instead."
        )
    if a_bool or b_bool:
        raise RuntimeError(
            "Subtraction, the `-` operator, with a bool tensor is not supported. "
            "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead."
        )


def _is_bool(v) -> bool:
    return v._data.dtype.kind == "b" if isinstance(v, Tensor) else type(v) is bool


def _half(x, y) -> bool:
    """Whether promoted operands give a half-precision (half or bfloat16) result."""
    dtype = (x if type(x) is np.ndarray else y).dtype
    return dtype is HALF or dtype is BF16


def _by_wide_scalar_in_single(result, x, b, operation: str):
    """A half ``result`` of ``x * b`` or ``x / b`` as torch computes it when ``b`` is a 0-d tensor of a wider
    float or of an integer: in single, with b's value not rounded to half first (as for a Python number).
    Otherwise ``result``."""
    if isinstance(b, Tensor) and _is_wide_scalar(b._data) and x.ndim:
        return half_in_single(x, operation, in_single(b._data.item()))
    return result


def _is_wide_scalar(data: np.ndarray) -> bool:
    """Whether ``data`` is 0-d and holds values a half would round: a float wider than half, or an integer."""
    return not data.ndim and (data.dtype.kind in "iu" or (data.dtype.kind == "f" and data.dtype.itemsize > 2))


def _scaled_in_single(x, y, alpha, sign: int) -> np.ndarray:
    """``x + sign * alpha * y`` for a half or bfloat16 result, as torch computes it: alpha and y rounded to that
    dtype first, then the arithmetic in single precision, rounded once."""
    low = (x if type(x) is np.ndarray else y).dtype
    single = [np.asarray(v, low).astype(np.float32) for v in (x, y, alpha)]
    first, other, factor = single
    return (first + other * factor if sign > 0 else first - other * factor).astype(low)


def fused_single(x, a, b) -> np.ndarray:
    """``x + a * b`` in float32, rounded once as torch's fused multiply-add rounds it: the product of two singles
    is exact in double, and the sum's one rounding there is absorbed by the final one (rounded separately, a
    sum that cancels would keep the product's rounding error, hundreds of units in its last place). With a
    number for one factor, on many elements, OpenBLAS's saxpy does it in one pass (see ``_axpy``)."""
    by_saxpy = _fused_by_saxpy(x, a, b)
    if by_saxpy is not None:
        return by_saxpy
    return (np.asarray(x, np.float32).astype(np.float64) + np.asarray(a, np.float32).astype(np.float64) * b).astype(
        np.float32)


def _fused_by_saxpy(x, a, b) -> np.ndarray | None:
    """``x + a * b`` by saxpy, in a fresh array, where ``x`` and one factor are float32 arrays of one shape and the
    other factor is a number that single precision holds exactly; else None."""
    if type(x) is not np.ndarray or x.dtype is not _SINGLE or x.size < AXPY_FROM:
        return None
    array, number = (a, b) if np.ndim(b) == 0 else (b, a)
    if np.ndim(number) or type(array) is not np.ndarray or array.dtype is not _SINGLE or array.shape != x.shape:
        return None
    value = float(number)
    if float(np.float32(value)) != value:  # (nan too: the double way then)
        return None
    result = np.array(x)  # a fresh C-contiguous copy, which saxpy adds the multiple into
    return result if axpy_single(value, np.ascontiguousarray(array), result) else None


def _scaled(x, y, alpha, sign: int) -> np.ndarray:
    """``x + sign * alpha * y``: for a float32 result rounded once, as torch's ``add(alpha=)`` (fused) rounds."""
    if _SINGLE in (getattr(x, "dtype", None), getattr(y, "dtype", None)):
        return fused_single(x, y, np.float64(np.float32(alpha)) * sign)
    return x + y * alpha if sign > 0 else x - y * alpha


def _kind(operand) -> str:
    """The NumPy kind ('b', 'i', 'u', 'f') of a promoted operand, or 'n' for a Python number."""
    return _dtype.kind(operand.dtype) if isinstance(operand, np.ndarray) else "n"


def _checked_alpha(op: str, x, y, alpha):
    """``alpha`` as torch applies it: integer results take only integer alphas, bool ones any (as a bool).

    torch refuses rather than silently make floats, and takes a bool alpha only for a bool result.
    """
    if isinstance(alpha, np.generic):
        alpha = alpha.item()  # np.float16(2.5) is a float alpha, np.int8(-1) an int one
    dtype = (x if isinstance(x, np.ndarray) else np.asarray(y)).dtype
    kind = dtype.kind
    if kind in "biu" and isinstance(alpha, float):
        raise RuntimeError(
            f"{op}: for integral input tensors, argument alpha must not be a floating point number (got {alpha}); "
            "convert the tensors to floating point first"
        )
    if isinstance(alpha, complex) and kind != "c":
        raise RuntimeError(f"{op}: For non-complex input tensors, argument alpha must not be a complex number "
                           f"(got {alpha}); make an operand complex first, e.g. x.to(ember.complex64)")
    if kind == "b":
        return bool(alpha)  # True + True * 2 stays a bool, as in torch
    if isinstance(alpha, bool):
        raise RuntimeError(f"{op}: Boolean alpha only supported for Boolean results (got alpha={alpha}).")
    return element_of(op, alpha, dtype)  # as torch: an alpha that does not fit the result's dtype is an error


class Add(Function):
    backward_name = "AddBackward0"
    torch_saved_values = {"alpha": "alpha"}
    graph_inputs = (0, 1)  # a number operand is listed, as torch lists the tensor it makes of it
    backward_on_arrays = True
    jvp = linear_jvp(0, 1)

    @staticmethod
    def forward(ctx, a, b, alpha=1):
        x, y = promoted_arrays(a, b, "add")
        if alpha != 1 or type(alpha) is bool:
            alpha = _checked_alpha("add", x, y, alpha)
            if _half(x, y):
                ctx.alpha = in_single(alpha)  # its gradient is a product with a number: in single, as torch
                return wrap(_scaled_in_single(x, y, alpha, 1))
        ctx.alpha = alpha
        return wrap(x + y if alpha == 1 else _scaled(x, y, alpha, 1))

    @staticmethod
    def backward(ctx, grad):
        needs = ctx.needs_input_grad
        other = None
        if needs[1]:
            other = grad if ctx.alpha == 1 else grad * conjugated(ctx.alpha)
        first = grad if needs[0] else None
        return (first, other) if len(needs) == 2 else (first, other, None)  # alpha is an input only when given


class Sub(Function):
    backward_name = "SubBackward0"
    torch_saved_values = {"alpha": "alpha"}
    graph_inputs = (0, 1)  # a number operand is listed, as torch lists the tensor it makes of it
    backward_on_arrays = True
    jvp = linear_jvp(0, 1)

    @staticmethod
    def forward(ctx, a, b, alpha=1):
        if not (type(a) is Tensor and type(b) is Tensor and a._data.dtype.kind == "f" == b._data.dtype.kind):
            _no_bool_subtraction(a, b)  # (two float tensors, the usual call, hold no bool)
        x, y = promoted_arrays(a, b, "sub")
        if alpha != 1 or type(alpha) is bool:
            alpha = _checked_alpha("sub", x, y, alpha)
            if _half(x, y):
                ctx.alpha = in_single(alpha)  # its gradient is a product with a number: in single, as torch
                return wrap(_scaled_in_single(x, y, alpha, -1))
        ctx.alpha = alpha
        return wrap(x - y if alpha == 1 else _scaled(x, y, alpha, -1))

    @staticmethod
    def backward(ctx, grad):
        needs = ctx.needs_input_grad
        first, other = (grad if needs[0] else None), (-grad * conjugated(ctx.alpha) if needs[1] else None)
        return (first, other) if len(needs) == 2 else (first, other, None)  # alpha is an input only when given


class Rsub(Sub):
    """``rsub(tensor, number)`` and ``number - tensor``: Sub with the operands swapped, under torch's name for it."""

    backward_name = "RsubBackward1"
    torch_saved_values = {"alpha": "alpha"}
    graph_inputs = None  # torch's rsub takes its number as a number


class RsubTensor(Sub):
    """``rsub(tensor, other_tensor)``: ``other - alpha * tensor``."""

    backward_name = "RsubBackward0"
    torch_saved_values = {"alpha": "alpha"}
    graph_inputs = (1, 0)  # torch lists rsub's own operands in its order: input, then other


class Mul(Function):
    backward_name = "MulBackward0"
    torch_saved_tensors = {"other": 0, "self": 1}
    graph_inputs = (0, 1)  # a number operand is listed, as torch lists the tensor it makes of it
    backward_on_arrays = True
    jvp = product_jvp(0, 1)

    @staticmethod
    def forward(ctx, a, b):
        needs = ctx.needs_input_grad
        if needs[0] or needs[1]:  # (nothing to keep for a call that is not recorded; forward AD marks the inputs
            # with a tangent as needing a gradient, so a jvp still finds what backward reads)
            # each factor, the other's gradient; the second first, the order in which torch packs them
            ctx.save_for_backward(b if needs[0] else None, a if needs[1] else None)
        x, y = promoted_arrays(a, b, "mul")
        product = x * y
        if product.dtype is HALF:
            product = _by_wide_scalar_in_single(product, x, b, "mul")
        return wrap(product)

    @staticmethod
    def backward(ctx, grad):
        b, a = ctx.saved_tensors
        needs = ctx.needs_input_grad
        return (grad * conjugated(b) if needs[0] else None), (grad * conjugated(a) if needs[1] else None)


class MulScalar(Function):
    """``tensor * number``: the number is a constant, so only the tensor has a gradient. torch saves the number (as a
    tensor), so a second backward through its node raises; here the number stays on ctx, where NumPy takes it
    fastest, and the node saves nothing, which is enough for ``saved_tensors`` to raise as torch's does."""

    backward_name = "MulBackward0"
    backward_on_arrays = True
    graph_inputs = (0, 1)
    jvp = linear_jvp(0)

    @staticmethod
    def forward(ctx, a, k):
        x, y = promoted_arrays(a, k, "mul")
        if (x.dtype is HALF or x.dtype is BF16) and type(k) is not bool:  # as torch: in single precision, rounded once to half
            factor = in_single(k)  # and so is the gradient, grad * k (NumPy promotes half by a single to single)
            product = half_in_single(x, "mul", factor)
        else:
            factor = y  # the factor as the product took it: for a float tensor, a 0-d array, which NumPy multiplies fastest
            product = x * y
        ctx.k = factor
        if ctx.needs_input_grad[0]:
            ctx.save_for_backward()  # (saving the 0-d array through the records costs a small product's backward 10%)
        return wrap(product)

    @staticmethod
    def backward(ctx, grad):
        ctx.saved_tensors  # raises after a backward through this node without retain_graph
        k = ctx.k
        if type(grad) is _ndarray:
            return grad * conjugated(k), None
        number = k.item() if isinstance(k, (_ndarray, np.generic)) else k  # a tensor takes the factor as a number
        return grad * (float(number) if type(number) is not complex else number.conjugate()), None


_NUMBERS = (int, float, bool)


class Div(Function):
    backward_name = "DivBackward0"
    torch_saved_tensors = {"other": 0, "self": 1}
    graph_inputs = (0, 1)  # a number operand is listed, as torch lists the tensor it makes of it
    backward_on_arrays = True

    @staticmethod
    def jvp(ctx, a_tangent, b_tangent):
        a, b = ctx.primals
        total = None if a_tangent is None else a_tangent / b
        if b_tangent is not None:
            term = -(ctx.result * b_tangent) / b
            total = term if total is None else total + term
        return total

    @staticmethod
    def forward(ctx, a, b):
        x, y = promoted_arrays(a, b, "div")
        if type(x) is np.ndarray and (x.dtype is _SINGLE or x.dtype is _DOUBLE):
            needs = ctx.needs_input_grad  # the usual call: as below, at once (and nothing kept if not recorded)
            if needs[0] or needs[1]:
                ctx.save_for_backward(b, a if needs[1] else None)  # (the divisor first, as torch packs them)
            try:  # NumPy's warnings of a division by 0 from here are ignored (_quiet's filter) ...
                return wrap(_true_divide(x, y))
            except (FloatingPointError, RuntimeWarning):  # ... unless a user's settings make them errors
                return wrap(quietly(IGNORE_DIVIDE_INVALID, _true_divide, x, y))
        if type(b) in (int, float) and type(x) is np.ndarray and (x.dtype is HALF or x.dtype is BF16):
            divisor = in_single(b)  # as torch: a half divided by a number in single precision, rounded once
            ctx.save_for_backward(divisor, None)  # the gradient, grad / b, then is too
            return wrap(half_in_single(x, "div", divisor))
        # either may be a plain number: saved_tensors returns it unchanged; a is needed only for b's gradient
        ctx.save_for_backward(b, a if ctx.needs_input_grad[1] else None)
        if _kind(x) not in "fc" and _kind(y) not in "fc":
            # integers divide as the default float dtype, converted as they are (int8 / 128 must not wrap 128)
            floating = _dtype.defaults.floating.np
            x, y = [v._data.astype(floating) if isinstance(v, Tensor) else np.asarray(v, floating) for v in (a, b)]
        quotient = quietly(IGNORE_DIVIDE_INVALID, np.true_divide, x, y)
        if quotient.dtype is HALF:
            quotient = quietly(IGNORE_DIVIDE_INVALID, _by_wide_scalar_in_single, quotient, x, b, "div")
        return wrap(float_result(quotient))

    @staticmethod
    def backward(ctx, grad):
        b, a = ctx.saved_tensors
        return quietly(IGNORE_DIVIDE_INVALID, _div_gradients, grad, a, b, ctx.needs_input_grad)  # b may be 0


def _div_gradients(grad, a, b, needs: tuple) -> tuple:
    """Div's gradients. For b, torch's (a / b) / b: a / a then is exactly 0 (a / (b * b) is off in the last bits)."""
    return (grad / conjugated(b) if needs[0] else None), (-grad * conjugated((a / b) / b) if needs[1] else None)


class Pow(Function):
    backward_name = "PowBackward0"  # tensor ** number; the subclasses below only rename the node as torch does
    torch_saved_tensors = {"self": 0}
    torch_saved_values = {"exponent": 1}
    backward_on_arrays = True  # the usual case, a float tensor to a number's power, runs on the arrays
    jvp = broadcasting_jvp()

    @staticmethod
    def forward(ctx, a, b):
        if type(a) is Tensor and (type(b) is float or type(b) is int and -2 ** 63 <= b < 2 ** 64):  # (64 bits)
            data = a._data
            if data.dtype is _SINGLE or data.dtype is _DOUBLE:  # the usual call: no promotion, nothing to refuse
                if ctx.needs_input_grad[0]:  # (nothing to keep for a call that is not recorded: see Mul)
                    ctx.save_for_backward(a, b)
                return wrap(quietly(IGNORE_ALL, _float_power, data, b))
        if isinstance(b, np.generic):
            b = b.item()  # a NumPy exponent is checked as the Python number it holds
        ctx.save_for_backward(a, b)  # either may be a plain number: saved_tensors returns it unchanged
        x, y = promoted_arrays(a, b, "pow")
        if type(b) is float or type(b) is int:
            if type(x) is np.ndarray and x.dtype is HALF:
                element_of("pow", b, HALF)  # as torch: a half's exponent must be a half (a base may overflow)
        if np.result_type(x, y).kind in "biu":
            return wrap(_exact_power(x, y, b))
        if (type(b) is int or type(b) is float) and (b == 3 or b == -2) and type(x) is np.ndarray and x.dtype is BF16:
            # torch's formulas for these two, in bfloat16's own arithmetic (each product rounded), where its
            # float16 and other bfloat16 powers are single precision's, rounded once, as NumPy's below
            return wrap(quietly(IGNORE_ALL, _float_power, x, b))
        if (type(b) is float or type(b) is int) and (b == 0.5 or b == -0.5) and type(x) is np.ndarray and \
                x.dtype is BF16:  # as torch: a square root (of -inf, nan, not pow's inf; of -0, -0), in single
            return wrap(quietly(IGNORE_ALL, _float_power, x.astype(_SINGLE), b).astype(BF16))
        if type(x) is np.ndarray and x.dtype.kind == "c" and type(b) is float and b == 0.5:
            return wrap(quietly(IGNORE_ALL, np.sqrt, x))  # torch's complex square root, to the bit
        result = quietly(IGNORE_ALL, np.power, x, y)
        if result.dtype.kind == "c" and isinstance(b, Tensor):
            result = quietly(IGNORE_ALL, _complex_powers_of_zero, x, y, result)
        return wrap(result)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        needs = ctx.needs_input_grad
        if type(grad) is np.ndarray:
            if (type(b) is int or type(b) is float) and (grad.dtype is _SINGLE or grad.dtype is _DOUBLE) and \
                    a.dtype is grad.dtype:  # x ** k: k x ** (k - 1) (0 for k = 0, also where the formula is 0 * inf)
                return (quietly(IGNORE_ALL, _power_rule, grad, a, b) if b != 0 else np.zeros_like(grad)), None
            grad, a, b = (wrap(v) if type(v) is np.ndarray else v for v in (grad, a, b))  # the formula for tensors
        grad_a = grad_b = None
        if needs[0]:
            if isinstance(b, Tensor):
                grad_a = where_zero_exponent(b, grad * conjugated(b * a ** (b - 1)))
            else:  # d/dx x**k; for k = 0 it is 0 everywhere, also at x = 0 where the formula gives 0 * inf
                grad_a = grad * conjugated(b * a ** (b - 1)) if b != 0 else zeros_like_value(grad)
        if needs[1]:
            if isinstance(a, Tensor) and a.dtype != grad.dtype:  # float16 ** float32: log(a) in float32, as torch
                a = a.to(grad.dtype)  # (and a real base of a complex power: its complex log)
            elif not isinstance(a, Tensor) and grad._data.dtype.kind == "c":
                a = complex(a)
            grad_b = grad * conjugated(exponent_slope(a, b))
        return grad_a, grad_b


def _float_power(data: np.ndarray, exponent: int | float) -> np.ndarray:
    """A float32 or float64 array to a number's power, the exponent taken as the general path takes it (a float as
    a 0-d array of the dtype).

    torch computes four exponents by formula rather than by ``pow``, and so does ember, to the same bits: a square
    is ``x * x`` (np.square, the bits of np.power's at half its cost), a cube ``x * x * x``, the power -2
    ``1 / (x * x)`` and -0.5 ``1 / sqrt(x)`` (np.power's results differ from these in the last bit at a quarter
    of the elements or more).
    """
    if exponent == 2:
        return np.square(data)
    if exponent == 3:
        return data * data * data
    if exponent == -2:
        return 1 / (data * data)
    if exponent == -0.5:
        return 1 / np.sqrt(data)
    return np.power(data, exponent if type(exponent) is int else _asarray(exponent, data.dtype))


def _power_rule(grad: np.ndarray, a: np.ndarray, k: float) -> np.ndarray:
    """``grad * k * a ** (k - 1)``, the gradient of ``a ** k`` for a number ``k``, on arrays."""
    result = _float_power(a, k - 1)  # torch's pow of k - 1: -0.5 is 1 / sqrt (so -inf at -0), as its forward
    result *= k
    result *= grad
    return result


def _complex_powers_of_zero(x, y, result: np.ndarray) -> np.ndarray:
    """A complex power by a tensor exponent where the base is 0 as torch gives it, exp(y log 0): nan for 0 ** 0,
    where NumPy gives 1."""
    zero = np.asarray(x == 0)
    if not zero.any():
        return result
    return np.where(zero, np.exp(y * np.log(np.asarray(x, result.dtype))), result).astype(result.dtype, copy=False)


def _exact_power(x, y, exponent) -> np.ndarray:
    """An integer or bool power, as torch computes it (``exponent`` as given, ``x`` and ``y`` promoted).

    A number exponent must not be negative. Tensor exponents may be: ``n ** -k`` is 1 for n = 1,
    +-1 for n = -1 and 0 otherwise (integer division of 1 by n**k). Bools have no power but the trivial ones.
    """
    dtype = np.result_type(x, y)
    if not isinstance(exponent, Tensor):
        if exponent < 0:
            raise RuntimeError("pow: Integers to negative integer powers are not allowed.")
        element_of("pow", exponent, dtype)  # as torch: the exponent must fit the result's dtype
        if dtype.kind == "b":  # torch answers these two without computing: x ** True is x, x ** False is ones
            return np.array(x, copy=True) if exponent else np.ones_like(x)
    elif dtype.kind == "b":
        raise NotImplementedError('"pow" not implemented for \'Bool\'')
    base, power = np.asarray(x, dtype), np.asarray(y, dtype)
    negative = power < 0
    if not negative.any():
        return np.asarray(np.power(base, power))
    result = np.power(base, np.where(negative, 0, power))
    inverse = np.where(base == 1, 1, np.where(base == -1, np.where(power % 2 == 0, 1, -1), 0))
    return np.asarray(np.where(negative, inverse, result).astype(dtype, copy=False))


class PowTensor(Pow):
    backward_name = "PowBackward1"  # tensor ** tensor


class PowScalarBase(Pow):
    backward_name = "PowBackward2"  # number ** tensor


def where_zero_exponent(exponent: Tensor, grad):
    """d/dx x**0 is 0 everywhere, also at x = 0 where the formula gives 0 * inf."""
    return where(exponent == 0, zeros_like_value(grad), grad)


def exponent_slope(a, b):
    """a ** b log(a), the derivative of a ** b in its exponent b, with 0 where a == 0 and b >= 0 (a real b):
    the limit torch uses where the formula is 0 * -inf (and for complex zeros, nan). As torch, nowhere else: a
    zero base to a negative power gives inf * -inf = -inf, a negative real base nan (its log) even where
    a ** b is finite."""
    from ember._ops.unary import log

    if not isinstance(a, Tensor):
        if a != 0:
            return a ** b * (complex(np.log(a)) if isinstance(a, complex) else float(quietly(IGNORE_ALL, np.log, float(a))))
        a = wrap(np.zeros((), np.result_type(type(a), np.float32 if type(a) is int else type(a))))
    slope = a ** b * log(a)
    zero = a == 0
    if isinstance(b, Tensor):
        zero = zero & wrap(_whole_or_positive(b._data))
    elif not _whole_or_positive(np.asarray(b)):
        return slope
    return where(zero, zeros_like_value(slope), slope)


def _whole_or_positive(b: np.ndarray) -> np.ndarray:
    """Where ``b`` >= 0; a complex b only where it is real (torch's limit of 0 ** b log 0 is 0 there alone)."""
    if b.dtype.kind == "c":
        return (b.real >= 0) & (b.imag == 0)
    return b >= 0


def zeros_like_value(t: Tensor) -> Tensor:
    return wrap(np.zeros_like(t._data))


class Neg(Function):
    backward_name = "NegBackward0"
    backward_on_arrays = True
    jvp = linear_jvp(0)

    @staticmethod
    def forward(ctx, a):
        dtype = a._data.dtype
        if dtype is not _SINGLE and dtype is not _DOUBLE and dtype.kind == "b":  # (a float needs no look)
            raise RuntimeError(
                "Negation, the `-` operator, on a bool tensor is not supported. "
                "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead."
            )
        return wrap(np.negative(a._data))

    @staticmethod
    def backward(ctx, grad):
        return -grad


class Where(Function):
    backward_name = "WhereBackward0"
    torch_saved_tensors = {"condition": 0}
    graph_inputs = (1, 2)  # the two values; the condition has no gradient, and torch does not list it
    backward_on_arrays = True  # (see _selected)
    jvp = linear_jvp(1, 2)

    @staticmethod
    def forward(ctx, condition, a, b):
        needs = ctx.needs_input_grad
        if needs[1] or needs[2]:  # (nothing to keep for a call that is not recorded: see Mul)
            ctx.save_for_backward(condition)
        shape = condition._data.shape
        if type(a) is Tensor and type(b) is Tensor:  # the usual call: two tensors of one dtype, the mask's shape
            x, y = a._data, b._data
            if x.dtype is y.dtype and x.shape == shape == y.shape and x.size < SELECT_BY_BITS_FROM:
                return wrap(_np_where(condition._data, x, y))  # nothing to promote or broadcast (see below)
        x, y = promoted_arrays(a, b, "where")
        if type(a) is Tensor and type(b) is Tensor:  # the usual call: no number to check, both operands arrays
            if shape != x.shape or shape != y.shape:
                check_broadcast("where", shape, x.shape, y.shape)
            # (on few elements select's checks cost more than they save: NumPy's where at once)
            choose = _np_where if x.size < SELECT_BY_BITS_FROM else _where
            return wrap(choose(condition._data, x, y))
        dtype = (x if isinstance(x, np.ndarray) else y).dtype
        if dtype is not HALF:  # as torch: a number must fit the result's dtype (a half takes any, beyond it inf)
            for value in (a, b):
                if not isinstance(value, Tensor):
                    element_of("where", value, dtype)
        x_shape = x.shape if type(x) is _ndarray else np.shape(x)  # a number is promoted as it is: ()
        y_shape = y.shape if type(y) is _ndarray else np.shape(y)
        if shape != x_shape or shape != y_shape:
            check_broadcast("where", shape, x_shape, y_shape)
        return wrap(_where(condition._data, x, y))

    @staticmethod
    def backward(ctx, grad):
        (condition,) = ctx.saved_tensors
        needs = ctx.needs_input_grad
        return (None,
                _selected(condition, grad, True) if needs[1] else None,
                _selected(condition, grad, False) if needs[2] else None)


def _selected(condition, grad, where_true: bool):
    """``grad`` where ``condition`` holds (``where_true``) or does not, else 0: of tensors, or of arrays."""
    if type(grad) is _ndarray:
        zero = constant(0, grad.dtype)
        choose = _np_where if grad.size < SELECT_BY_BITS_FROM else _where  # (as Where's forward)
        return choose(condition, grad, zero) if where_true else choose(condition, zero, grad)
    zero = grad.new_zeros(())  # (a number's worth: batched under vmap, grad has no array to copy the shape of)
    return where(condition, grad, zero) if where_true else where(condition, zero, grad)


@ember_function
def add(input, other, *, alpha=1, out=None) -> Tensor:
    """``input + alpha * other``, broadcasting.

    >>> ember.add(ember.tensor([1, 2]), 3)
    tensor([4, 5])
    """
    # alpha=1 is not passed on, so apply takes its two-input path (a bool alpha is checked by the Function)
    result = Add.apply(input, other) if alpha == 1 and type(alpha) is int else Add.apply(input, other, alpha)
    return result if out is None else into_out("add", result, out, input, other)


@ember_function
def sub(input, other, *, alpha=1, out=None) -> Tensor:
    """``input - alpha * other``, broadcasting."""
    result = Sub.apply(input, other) if alpha == 1 and type(alpha) is int else Sub.apply(input, other, alpha)
    return result if out is None else into_out("sub", result, out, input, other)


def reciprocal_times(input: Tensor, other) -> Tensor:
    """``other / input`` for a number ``other``, computed as torch does: ``reciprocal(input) * other``.

    >>> 2 / ember.tensor([4., 0.])
    tensor([0.5000,    inf])
    """
    other = check_operand(other, "div", 1, "input")
    return mul.__wrapped__(reciprocal.__wrapped__(input), other)


@ember_function
def rsub(input, other, *, alpha=1) -> Tensor:
    """``other - alpha * input`` (what ``number - tensor`` computes).

    >>> ember.rsub(ember.tensor([1., 2.]), 10)
    tensor([9., 8.])
    """
    other = check_operand(other, "rsub", 2)
    function = RsubTensor if isinstance(other, Tensor) else Rsub
    return function.apply(other, require_tensor(input, "rsub"), alpha)


@ember_function
def mul(input, other, *, out=None) -> Tensor:
    """Elementwise product, broadcasting.

    >>> ember.mul(ember.tensor([1., 2.]), ember.tensor([[3.], [4.]]))
    tensor([[3., 6.],
            [4., 8.]])
    """
    if type(other) in _NUMBERS and isinstance(input, Tensor):
        result = MulScalar.apply(input, other)
    elif type(input) in _NUMBERS and isinstance(other, Tensor):
        result = MulScalar.apply(other, input)
    else:
        result = Mul.apply(input, other)
    return result if out is None else into_out("mul", result, out, input, other)


@ember_function
def div(input, other, *, rounding_mode=None, out=None) -> Tensor:
    """True division (always floating), or rounded with ``rounding_mode`` 'trunc' or 'floor'.

    >>> ember.div(ember.tensor([-7, 7]), 2, rounding_mode="floor")
    tensor([-4,  3])
    """
    if rounding_mode is None:
        result = Div.apply(input, other)
    elif rounding_mode in ("trunc", "floor"):
        result = RoundedDiv.apply(input, other, rounding_mode)
    else:
        raise RuntimeError(
            f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{rounding_mode}'"
        )
    return result if out is None else into_out("div", result, out, input, other)


class RoundedDiv(Function):
    """Division rounded toward zero ('trunc') or down ('floor'): piecewise constant, so its gradient is zero."""

    backward_name = "DivBackward2"
    graph_inputs = (0, 1)

    @staticmethod
    def forward(ctx, a, b, rounding_mode):
        return wrap(rounded_quotient(a, b, rounding_mode, "div"))

    @staticmethod
    def backward(ctx, grad):
        needs = ctx.needs_input_grad
        zero = grad * 0
        return (zero if needs[0] else None), (zero if needs[1] else None), None


def rounded_quotient(a, b, rounding_mode: str, op: str) -> np.ndarray:
    """``a / b`` rounded toward zero ('trunc') or down ('floor'), in the promoted dtype, for ``op``'s messages."""
    x, y = promoted_arrays(a, b, op)
    refuse_complex(f"{op} (rounding_mode='{rounding_mode}')", np.result_type(x, y))
    if np.result_type(x, y) == np.bool_:
        raise NotImplementedError(f'"{op}" with rounding_mode=\'{rounding_mode}\' not implemented for \'Bool\'; '
                                  "convert the tensors first, e.g. x.to(ember.int64)")
    if _kind(x) in "biu" and _kind(y) in "biu":
        return np.asarray(_integer_division(x, y, rounding_mode, op))
    if _half(x, y) and _is_scalar_divisor(b):
        return _rounded_quotient_in_single(x, _divisor_in_single(b), rounding_mode)
    if rounding_mode == "floor":  # Python's // on floats: exact, as torch's
        return np.asarray(_floor_quotient(x, y))
    return np.asarray(np.trunc(quietly(IGNORE_DIVIDE_INVALID, np.true_divide, x, y)))


def _is_scalar_divisor(b) -> bool:
    """Whether torch divides by ``b`` as a scalar: a Python number or a 0-d tensor (not a bool, not complex)."""
    if isinstance(b, Tensor):
        return not b._data.ndim and b._data.dtype.kind in "iuf"
    return type(b) is int or type(b) is float


def _divisor_in_single(b) -> np.float32:
    return in_single(b._data.item() if isinstance(b, Tensor) else b)


def _rounded_quotient_in_single(x: np.ndarray, divisor: np.float32, rounding_mode: str) -> np.ndarray:
    """A half or bfloat16 ``x`` divided by a scalar and rounded, as torch computes it: in single precision, with
    the divisor's own value (not rounded to x's dtype: 1 // 0.1 is 9, where 0.1 rounded to half gives 10), and
    the integral quotient rounded once to x's dtype."""
    single = x.astype(_SINGLE)
    if rounding_mode == "floor":
        quotient = _floor_quotient(single, divisor)
    else:
        quotient = np.trunc(quietly(IGNORE_DIVIDE_INVALID, np.true_divide, single, divisor))
    return quietly(IGNORE_ALL, np.asarray(quotient).astype, x.dtype)


_EXACT_FLOOR = 2.0 ** 20  # (see _single_floor_quotient)
_FLOOR_FROM = 1024
_EXACT_DOUBLE_FLOOR = 2.0 ** 49  # (see _double_floor_quotient)


def _floor_quotient(x, y) -> np.ndarray:
    """Python's // on floats, exact; single precision arrays by ``_single_floor_quotient``, as NumPy's takes some
    15 ns an element for them (small ones, where the call costs more than the elements, by NumPy's)."""
    dtype = np.result_type(x, y)
    if max(np.size(x), np.size(y)) >= _FLOOR_FROM:
        if dtype is _SINGLE:
            quotient = _single_floor_quotient(np.asarray(x, _SINGLE), np.asarray(y, _SINGLE))
            if quotient is not None:
                return quotient
        elif dtype is _DOUBLE:
            return _double_floor_quotient(np.asarray(x, _DOUBLE), np.asarray(y, _DOUBLE))
    return quietly(IGNORE_DIVIDE_INVALID, np.floor_divide, x, y)


def _double_floor_quotient(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``x // y`` of float64 arrays: the floor of their rounded quotient where that quotient is not an integer,
    NumPy's floor_divide for the elements where it is.

    Rounding is monotonic, so a quotient strictly between two integers n and n + 1 rounds into [n, n + 1]: if the
    rounded quotient is not an integer its floor is n, the exact floor. Only an integer rounded quotient is in
    doubt (an exact one, or one rounded up onto an integer, or an underflowed -0, or an infinity), as are those of
    2**49 or more, where the algorithm torch and NumPy share may round its result.
    """
    quotient = quietly(IGNORE_DIVIDE_INVALID, np.true_divide, x, y)
    result = np.floor(quotient)
    in_doubt = result == quotient
    in_doubt |= np.abs(quotient) >= _EXACT_DOUBLE_FLOOR
    if in_doubt.any():
        x, y = np.broadcast_arrays(x, y)
        result[in_doubt] = quietly(IGNORE_DIVIDE_INVALID, np.floor_divide, x[in_doubt], y[in_doubt])
    return result


def _single_floor_quotient(x: np.ndarray, y: np.ndarray) -> np.ndarray | None:
    """``x // y`` of float32 arrays, as the floor of their quotient in double precision; None where that could
    differ from Python's // done in single precision (as torch and NumPy do it).

    For float32 operands with ``|x / y| < 2**28`` the double quotient floors to the exact floor (its rounding error,
    under 2**-25, is smaller than the distance of a non-integer quotient to an integer, at least 2**-24), and keeps
    the sign of a zero quotient. The single precision algorithm (``(x - fmod(x, y)) / y``, moved by one where the
    signs differ, rounded to the nearest integer) gives the exact floor too as long as ``|x / y| < 2**20``: its
    error stays under 1/4. Larger quotients, infinities, nans and zero divisors go to NumPy.
    """
    quotient = np.divide(x, y, dtype=np.float64)
    np.floor(quotient, out=quotient)
    if not (-_EXACT_FLOOR < quotient.min() and quotient.max() < _EXACT_FLOOR):
        return None
    return quotient.astype(_SINGLE)


def refuse_integer_zero(op: str, divisor, dividend=None) -> None:
    """Integers have no inf or nan for a quotient or remainder by zero: torch raises, and so does ember (unless
    the result is empty: nothing is divided then)."""
    if dividend is not None and 0 in np.broadcast_shapes(np.shape(dividend), np.shape(divisor)):
        return
    if np.any(np.asarray(divisor) == 0):
        raise RuntimeError(
            f"ZeroDivisionError: {op}: integer division by zero; convert to floating point for inf/nan results"
        )


def _integer_division(x, y, rounding_mode: str, op: str):
    """Exact integer quotients (going through floats would round large values)."""
    refuse_integer_zero(f"{op} (rounding_mode='{rounding_mode}')", y, x)
    quotient = np.floor_divide(x, y)
    if rounding_mode == "trunc":  # floor rounds negative inexact quotients down: one step back toward zero
        quotient = quotient + ((quotient < 0) & (quotient * y != x))
    return quotient


@ember_function
def true_divide(input, other, *, out=None) -> Tensor:
    """``div`` without ``rounding_mode``, which torch's true_divide does not take."""
    result = Div.apply(input, other)
    return result if out is None else into_out("true_divide", result, out, input, other)


@ember_function
def pow(input, exponent, *, out=None) -> Tensor:
    """``input ** exponent``, broadcasting."""
    if isinstance(exponent, Tensor):
        result = (PowTensor if isinstance(input, Tensor) else PowScalarBase).apply(input, exponent)
    else:
        result = Pow.apply(input, exponent)
    return result if out is None else into_out("pow", result, out, input, exponent)


@ember_function
def neg(input, *, out=None) -> Tensor:
    result = Neg.apply(input if type(input) is Tensor else require_tensor(input, "neg"))
    return result if out is None else into_elementwise_out_of_its_dtype("neg", result, out, input)


@ember_function
def negative(input, *, out=None) -> Tensor:
    """Another name of ``neg``."""
    result = Neg.apply(input if type(input) is Tensor else require_tensor(input, "negative"))
    return result if out is None else into_elementwise_out_of_its_dtype("negative", result, out, input)


_ONLY_CONDITION = object()


def _bool_condition(condition: Tensor) -> Tensor:
    """A condition that is not bool: uint8 still selects (deprecated, as in torch), any other dtype is an error."""
    dtype = condition._data.dtype
    if dtype != np.uint8:
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor with dtype "
                           f"{_dtype.scalar_type_name(dtype)}; make it one, e.g. condition != 0")
    warnings.warn("where received a uint8 condition tensor. This behavior is deprecated: use a boolean condition "
                  "instead (condition.bool())", UserWarning, stacklevel=user_stacklevel())
    return wrap(condition._data.astype(bool))


@ember_function
def where(condition, input=_ONLY_CONDITION, other=_ONLY_CONDITION, *, out=None) -> Tensor:
    """``input`` where ``condition`` holds, else ``other``; differentiable in both.

    ``where(condition)`` alone is ``nonzero(condition, as_tuple=True)``, as in torch.

    >>> ember.where(ember.tensor([True, False]), 1.0, -1.0)
    tensor([ 1., -1.])
    >>> ember.where(ember.tensor([0, 3, 5]))
    (tensor([1, 2]),)
    """
    if type(input) is Tensor and type(other) is Tensor and type(condition) is Tensor and out is None and \
            condition._data.dtype is _BOOL:  # the usual call, where(mask, x, w): none of the checks below apply
        return Where.apply(condition, input, other)
    if input is _ONLY_CONDITION or other is _ONLY_CONDITION:
        return _indices_where(condition, input, other)
    if out is not None:  # (torch's overload with out= takes no numbers)
        require_tensor(input, "where", 2, "input")
        require_tensor(other, "where", 3, "other")
        return into_out_of_its_dtype("where", where.__wrapped__(condition, input, other), out, condition, input, other)
    if not isinstance(condition, Tensor):
        raise TypeError(f"where(): argument 'condition' (position 1) must be Tensor, not {type(condition).__name__}; "
                        "make it a bool tensor, e.g. ember.tensor(mask)")
    if condition._data.dtype is not _BOOL and condition._data.dtype != _BOOL:  # (identity: the usual answer)
        condition = _bool_condition(condition)
    if type(input) is Tensor and type(other) is Tensor:  # the usual call: nothing to check here
        return Where.apply(condition, input, other)
    input, other = check_operand(input, "where", 2, "input"), check_operand(other, "where", 3)
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):  # two numbers: the first becomes a 0-d tensor
        input = wrap(np.asarray(input, dtype=_dtype.scalar_dtype(input).np))
    return Where.apply(condition, input, other)


def _indices_where(condition, input, other) -> tuple:
    if input is not _ONLY_CONDITION or other is not _ONLY_CONDITION:
        raise TypeError("where() takes a condition alone, or a condition, input and other; got two arguments")
    if not isinstance(condition, Tensor):
        raise TypeError(f"where(): argument 'condition' (position 1) must be Tensor, not {type(condition).__name__}")
    return tuple(wrap(index) for index in np.nonzero(np.atleast_1d(condition._data)))


def _compare(ufunc, name: str):
    """A comparison: not differentiable, so a plain function that returns a bool tensor. Complex numbers are
    equal or not, but have no order: the ordering comparisons refuse them, as torch's."""
    ordering = ufunc is not np.equal and ufunc is not np.not_equal

    def compare(input, other, *, out=None) -> Tensor:
        x, y = promoted_arrays(require_tensor(input, name), check_operand(other, name, 2), name)
        if ordering and type(x) is _ndarray and x.dtype.kind == "c":  # (promoted: a complex operand makes both so)
            refuse_complex(name, x)
        result = wrap(ufunc(x, y))
        return result if out is None else into_out(name, result, out, input, other, differentiable=False)

    compare.__name__ = compare.__qualname__ = name
    compare.__doc__ = f"Elementwise ``{name}`` comparison, broadcasting; returns a bool tensor."
    return ember_function(compare)


eq = _compare(np.equal, "eq")
ne = _compare(np.not_equal, "ne")
lt = _compare(np.less, "lt")
le = _compare(np.less_equal, "le")
gt = _compare(np.greater, "gt")
ge = _compare(np.greater_equal, "ge")
# torch's other names: functions of their own, as torch's (a handler sees torch.greater, not torch.gt)
greater = _compare(np.greater, "greater")
greater_equal = _compare(np.greater_equal, "greater_equal")
less = _compare(np.less, "less")
less_equal = _compare(np.less_equal, "less_equal")
not_equal = _compare(np.not_equal, "not_equal")


@ember_function
def equal(input, other) -> bool:
    """True if both tensors have the same shape and elements (of any dtypes: 1 equals 1.0).

    >>> ember.equal(ember.tensor([1, 2]), ember.tensor([1., 2.]))
    True
    """
    require_tensor(input, "equal")
    require_tensor(other, "equal", 2, "other")
    return input._data.shape == other._data.shape and bool(np.array_equal(input._data, other._data))
