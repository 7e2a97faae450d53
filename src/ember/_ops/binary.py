"""Binary pointwise arithmetic beyond + - * / **: remainders, rounded quotients, atan2, hypot, lerp, addcmul ...

Each op promotes its operands as torch does (ints, bools, half, numbers on either side,
0-d tensors), refuses the dtypes torch refuses, and has torch's gradients, written in
ember ops so that they can be differentiated again.

>>> import ember
>>> x = ember.tensor([-7., 7.], requires_grad=True)
>>> ember.remainder(x, 3), ember.fmod(x, 3)
(tensor([2., 1.], grad_fn=<RemainderBackward0>), tensor([-1.,  1.], grad_fn=<FmodBackward0>))
"""
from __future__ import annotations

import numpy as np

from ember import _dtype, return_types
from ember._type_info import numpy_finfo
from ember._ops._jvp import broadcasting_jvp
from ember._ops._select import select
from ember._ops._quiet import IGNORE_ALL, IGNORE_DIVIDE_INVALID, quietly
from ember._ops._support import (
    HALF, check_broadcast, check_operand, element_of, ember_function, int_too_big, promoted_arrays, require_tensor,
    result_dtype, wrap,
)
from ember._ops.complex import conjugated
from ember._ops.arithmetic import div, fused_single, mul, pow, refuse_integer_zero, rounded_quotient, sub, where
from ember._ops.tied_gradients import tied_to_inputs
from ember._ops.unary import reciprocal, zeros_like_gradient
from ember._ops.inplace import apply_inplace
from ember._ops.out import into_out, into_out_of_its_dtype
from ember._tensor import Tensor
from ember.autograd.function import Function

_SINGLE = np.dtype(np.float32)


def _refuse(op: str, dtype: np.dtype, kinds: str) -> None:
    """torch's NotImplementedError for a dtype the op has no kernel for (its kind among ``kinds``)."""
    if _dtype.kind(dtype) in kinds:  # bfloat16's NumPy kind is 'V', not the 'f' it is
        name = _dtype.scalar_type_name(dtype)
        fix = "x.to(ember.int64)" if _dtype.kind(dtype) == "f" else "x.to(ember.float32)"
        raise NotImplementedError(f'"{op}" not implemented for \'{name}\'; convert the tensors first, e.g. {fix}')


def _in_float(ufunc, dtype: np.dtype, *operands) -> np.ndarray:
    """``ufunc(*operands)`` as ``dtype`` (a float): half computed in single and rounded once, as torch; quietly."""
    work = _SINGLE if dtype is HALF or dtype is _dtype.BF16 else dtype
    result = quietly(IGNORE_ALL, ufunc, *[np.asarray(v, work) for v in operands])
    return np.asarray(result).astype(dtype, copy=False)


def _float_operands(op: str, a, b) -> tuple:
    """(dtype, x, y) for an always-floating result: integers and bools give the default float, and their
    values are converted to it as they are (not first to their common integer dtype, where -1 could wrap)."""
    x, y = promoted_arrays(a, b, op)
    dtype = np.result_type(x, y)
    if dtype.kind in "fc" or dtype is _dtype.BF16:
        return dtype, x, y
    return _dtype.defaults.floating.np, *[v._data if isinstance(v, Tensor) else v for v in (a, b)]


def _tensors(op: str, *named) -> None:
    """Each ``(value, name)`` must be a tensor: torch's ops of tensors take no numbers there."""
    for position, (value, name) in enumerate(named, 1):
        require_tensor(value, op, position, name)


def written(op: str, result: Tensor, out: Tensor | None, *inputs) -> Tensor:
    """``result``, or, given ``out=``, ``out`` with the result written into it."""
    return result if out is None else into_out(op, result, out, *inputs)


def _of_two_tensors(op: str, function, input, other, out, name: str = "other") -> Tensor:
    """``function`` applied to two tensors (torch's op takes no numbers), written into ``out`` if given."""
    _tensors(op, (input, "input"), (other, name))
    if input._data.shape != other._data.shape:  # here, so that the message names the op as called (arctan2)
        check_broadcast(op, input._data.shape, other._data.shape)
    return written(op, function.apply(input, other), out, input, other)


class NoDerivative(Function):
    """An op torch records but cannot differentiate: backward through it is an error, as in torch.

    Each forward names its op in ``ctx.aten``, for the message; each subclass is named "NotImplemented", as torch's.
    """

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError(
            f"derivative for aten::{ctx.aten} is not implemented; "
            "detach() its inputs, or write the op from differentiable ones"
        )


# ----------------------------------------------------------------- remainders and rounded quotients


def _modulo(op: str, ufunc, a, b) -> np.ndarray:
    x, y = promoted_arrays(a, b, op)
    dtype = np.result_type(x, y)
    _refuse(op, dtype, "bc")
    if dtype.kind in "iu":
        refuse_integer_zero(op, y, x)
        return np.asarray(ufunc(x, y))
    return _in_float(ufunc, dtype, x, y)


_EXACT_QUOTIENT = 2.0 ** 28  # (see _single_fmod)
_SIGN_BIT = np.int32(-2 ** 31)
_FMOD_FROM = 1024


def _fmod(x, y) -> np.ndarray:
    """C's fmod (the remainder of the truncated quotient, with the sign of ``x``), exact as NumPy's; single
    precision arrays by ``_single_fmod``, as NumPy's takes some 15 ns an element for them (small ones, where the
    call costs more than the elements, by NumPy's)."""
    y = np.asarray(y)
    if type(x) is np.ndarray and x.dtype == y.dtype and max(x.size, y.size) >= _FMOD_FROM:
        if x.dtype == _SINGLE:
            return _single_fmod(x, y)
        if x.dtype == _DOUBLE:
            mod = _double_fmod(x, y)
            if mod is not None:
                return mod
    return np.fmod(x, y)


_DOUBLE = np.dtype(np.float64)
_EXACT_DOUBLE_QUOTIENT = 2.0 ** 49
_SPLIT_DIVISORS = (2.0 ** -900, 2.0 ** 900)  # (where Dekker's product neither overflows nor underflows)
_VELTKAMP = 2.0 ** 27 + 1


def _double_fmod(x: np.ndarray, y: np.ndarray) -> np.ndarray | None:
    """fmod of float64 arrays, exact, in a few dozen cheap passes; None for the cases that need NumPy's
    (quotients of 2**49 or more, infinities, nans, zero, huge or tiny divisors).

    Rounding is monotonic, so the truncated rounded quotient q is the exact truncated quotient or one more in
    magnitude (where the quotient rounded onto an integer). ``x - q * y`` is exact with Dekker's product (``x``
    and ``q * y`` are within a factor of 2, and the remainder is a multiple of ``y``'s unit in the last place
    smaller than ``y``); where it has the wrong sign, q was one too many, and adding ``y`` with ``x``'s sign is
    exact too. A zero remainder takes the sign of ``x``.
    """
    quotient = quietly(IGNORE_ALL, np.true_divide, x, y)
    np.trunc(quotient, out=quotient)
    size = np.abs(y)
    if not (-_EXACT_DOUBLE_QUOTIENT < quotient.min() and quotient.max() < _EXACT_DOUBLE_QUOTIENT) or \
            not (_SPLIT_DIVISORS[0] < size.min() and size.max() < _SPLIT_DIVISORS[1]):
        return None
    product, error = _exact_product(quotient, y)
    mod = np.subtract(x, product, out=product)
    mod -= error
    one_too_many = (mod < 0) != (x < 0)
    one_too_many &= mod != 0
    if one_too_many.any():
        np.add(mod, np.copysign(size, x), out=mod, where=one_too_many)
    zero = mod == 0
    if zero.any():
        np.copysign(mod, x, out=mod, where=zero)
    return mod


def _exact_product(a: np.ndarray, b: np.ndarray) -> tuple:
    """(p, e) with p = a * b rounded and p + e = a * b exactly (Dekker's, splitting each into halves of 26 bits)."""
    product = a * b
    a_high, a_low = _split(a)
    b_high, b_low = _split(b)
    error = a_high * b_high
    error -= product
    error += a_high * b_low
    error += a_low * b_high
    error += a_low * b_low
    return product, error


def _split(a: np.ndarray) -> tuple:
    """(high, low): ``a`` as the sum of two doubles of at most 26 significant bits (Veltkamp's split)."""
    scaled = a * _VELTKAMP
    high = scaled - (scaled - a)
    return high, a - high


def _single_fmod(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """fmod of float32 arrays through double precision, in a few passes, exact.

    For two float32 numbers with ``|x / y| < 2**28`` the quotient in double is truncated to the right integer q
    (its rounding error, under 2**-25, is smaller than the distance of a non-integer quotient to an integer, at
    least 2**-24), ``q * y`` has at most 28 + 24 bits, so it is exact, and ``x - q * y`` is exact as the remainder
    it equals fits in 24 bits. Only the sign of a zero remainder is lost, and taken back from ``x``. Infinities,
    nans, zero divisors and larger quotients go to NumPy's fmod.
    """
    quotient = np.divide(x, y, dtype=np.float64)
    np.trunc(quotient, out=quotient)
    if not (-_EXACT_QUOTIENT < quotient.min() and quotient.max() < _EXACT_QUOTIENT) or np.isinf(y).any():
        return np.fmod(x, y)
    np.multiply(quotient, y, out=quotient)
    np.subtract(x, quotient, out=quotient)
    remainder = quotient.astype(_SINGLE)
    bits = remainder.view(np.int32)
    bits |= np.bitwise_and(x.view(np.int32), _SIGN_BIT)  # a nonzero remainder has x's sign already
    return remainder


def _remainder(x, y) -> np.ndarray:
    """Python's %, as torch computes it for floats: fmod, moved by one divisor where the signs differ (so that a
    zero remainder keeps the dividend's sign, where NumPy's takes the divisor's)."""
    if type(x) is np.ndarray and x.dtype == _SINGLE and np.asarray(y).dtype == _SINGLE and \
            max(x.size, np.size(y)) >= _FMOD_FROM:
        remainder = _single_remainder(x, np.asarray(y))
        if remainder is not None:
            return remainder
    mod = np.asarray(_fmod(x, y))
    if _dtype.kind(mod.dtype) != "f":
        return np.remainder(x, y)
    y = np.asarray(y)
    if y.ndim == 0 and y > 0:  # (the usual case: a positive number) the test below, in one pass
        moved = mod < 0
    else:
        moved = (mod != 0) & ((y < 0) != (mod < 0))
    return select(moved, np.add(mod, y, dtype=mod.dtype), mod)


def _single_remainder(x: np.ndarray, y: np.ndarray) -> np.ndarray | None:
    """Python's % of float32 arrays through double precision, in a few passes, as torch's; None for the cases
    that need ``_remainder``'s general path (quotients of 2**28 or more, infinities, nans, zero divisors).

    As in ``_single_fmod``, for ``|x / y| < 2**28`` the double quotient floors to the right integer q and
    ``x - q * y`` is exact in double: rounded once to single it is torch's ``fmod(x, y) + y`` (where the signs
    differ) or ``fmod(x, y)``. A zero remainder takes the dividend's sign, as torch's.
    """
    quotient = np.divide(x, y, dtype=np.float64)
    np.floor(quotient, out=quotient)
    if not (-_EXACT_QUOTIENT < quotient.min() and quotient.max() < _EXACT_QUOTIENT) or np.isinf(y).any():
        return None
    np.multiply(quotient, y, out=quotient)
    np.subtract(x, quotient, out=quotient)
    remainder = quotient.astype(_SINGLE)
    zero = remainder == 0
    if zero.any():
        np.copysign(remainder, x, out=remainder, where=zero)
    return remainder


class Remainder(Function):
    """``remainder(tensor, number)``: the remainder with the sign of the divisor, as Python's ``%``.

    Its subclasses differ only in their names, NumPy function and the rounding of the quotient
    that the divisor's gradient takes (``ctx._forward_cls`` is the Function that was applied).
    """

    backward_name = "RemainderBackward0"
    jvp = broadcasting_jvp()
    backward_on_arrays = True  # (for a number divisor: the gradient is grad itself)
    op, ufunc, rounding = "remainder", staticmethod(_remainder), "floor"

    @staticmethod
    def forward(ctx, a, b):
        if isinstance(b, Tensor) and ctx.needs_input_grad[1]:
            ctx.save_for_backward(a, b)
        kind = ctx._forward_cls
        return wrap(_modulo(kind.op, kind.ufunc, a, b))

    @staticmethod
    def backward(ctx, grad):
        needs = ctx.needs_input_grad
        other = None
        if needs[1]:  # a - b * q, with q = a / b rounded, constant between its jumps
            a, b = ctx.saved_tensors
            other = -grad * div(a, b, rounding_mode=ctx._forward_cls.rounding)
        return (grad if needs[0] else None), other


class RemainderTensor(Remainder):
    backward_name = "RemainderBackward1"
    torch_saved_tensors = {"other": 1, "self": 0}
    backward_on_arrays = False


class Fmod(Remainder):
    """``fmod(tensor, number)``: C's remainder, with the sign of the dividend."""

    backward_name = "FmodBackward0"
    op, ufunc, rounding = "fmod", staticmethod(_fmod), "trunc"


class FmodTensor(Fmod):
    backward_name = "FmodBackward1"
    torch_saved_tensors = {"other": 1, "self": 0}
    backward_on_arrays = False


class RemainderOfNumber(NoDerivative):
    """``number % tensor``: torch records it but has no derivative for it."""

    backward_name = "NotImplemented"

    @staticmethod
    def forward(ctx, a, b):
        ctx.aten = "remainder"
        return wrap(_modulo("remainder", _remainder, a, b))


class FloorDivide(NoDerivative):
    backward_name = "NotImplemented"

    @staticmethod
    def forward(ctx, a, b):
        ctx.aten = "floor_divide"
        return wrap(rounded_quotient(a, b, "floor", "floor_divide"))


def _two_operands(op: str, input, other) -> tuple:
    """``(input, other)`` checked: tensors or numbers, at least one a tensor."""
    input, other = check_operand(input, op, 1, "input"), check_operand(other, op, 2)
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise TypeError(f"{op}(): expected a Tensor among its operands, got {type(input).__name__} and "
                        f"{type(other).__name__}; make one of them a tensor, e.g. ember.tensor({input!r})")
    return input, other


@ember_function
def remainder(input: Tensor | float, other: Tensor | float, *, out: Tensor | None = None) -> Tensor:
    """The remainder of ``input / other`` with the sign of ``other``, as Python's ``%``.

    >>> ember.remainder(ember.tensor([-3, 3]), 2)
    tensor([1, 1])
    """
    input, other = _two_operands("remainder", input, other)
    if not isinstance(input, Tensor):
        function = RemainderOfNumber
    else:
        function = RemainderTensor if isinstance(other, Tensor) else Remainder
    return written("remainder", function.apply(input, other), out, input, other)


@ember_function
def fmod(input: Tensor, other: Tensor | float, *, out: Tensor | None = None) -> Tensor:
    """The remainder of ``input / other`` with the sign of ``input``, as C's ``fmod``.

    >>> ember.fmod(ember.tensor([-3, 3]), 2)
    tensor([-1,  1])
    """
    require_tensor(input, "fmod")
    other = check_operand(other, "fmod", 2)
    function = FmodTensor if isinstance(other, Tensor) else Fmod
    return written("fmod", function.apply(input, other), out, input, other)


@ember_function
def floor_divide(input: Tensor | float, other: Tensor | float, *, out: Tensor | None = None) -> Tensor:
    """``input / other`` rounded down, as Python's ``//`` (``div(..., rounding_mode='floor')``).

    >>> ember.floor_divide(ember.tensor([-7, 7]), 2)
    tensor([-4,  3])
    """
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        # as torch (whose Python bindings have a two-number overload): the first becomes a 0-d tensor
        input = wrap(np.asarray(check_operand(input, "floor_divide", 1, "input"),
                                dtype=_dtype.scalar_dtype(input).np))
    input, other = _two_operands("floor_divide", input, other)
    return written("floor_divide", FloorDivide.apply(input, other), out, input, other)


# ----------------------------------------------------------------- powers and angles


@ember_function
def float_power(input: Tensor | float, exponent: Tensor | float, *, out: Tensor | None = None) -> Tensor:
    """``input ** exponent`` in double precision, whatever the operands' dtypes.

    >>> ember.float_power(ember.tensor([2, 3]), 2)
    tensor([4., 9.], dtype=ember.float64)
    """
    input, exponent = _two_operands("float_power", input, exponent)
    if isinstance(input, Tensor) and isinstance(exponent, Tensor):
        check_broadcast("float_power", input._data.shape, exponent._data.shape)
    result = pow(_as_double(input), _as_double(exponent))
    if isinstance(out, Tensor) and out._data.dtype != result._data.dtype:  # as torch: no cast into out
        name = _dtype.scalar_type_name
        raise RuntimeError(f"the output given to float_power has dtype {name(out._data.dtype)} but the operation's "
                           f"result requires dtype {name(result._data.dtype)}; give an out of that dtype")
    return written("float_power", result, out, input, exponent)


def _as_double(value):
    """A tensor or a number in double precision: float64, or complex128 for a complex one (as torch)."""
    if isinstance(value, Tensor):
        return value.to(_dtype.complex128 if value._data.dtype.kind == "c" else _dtype.float64)
    return value if isinstance(value, complex) else float(value)


class FloatOfTwo(Function):
    """The forward of an always-floating op of two tensors, ``ufunc`` of a subclass (``ctx._forward_cls``), which
    saves the first operand only if ``first_saved`` says its gradients need it."""

    @staticmethod
    def forward(ctx, a, b):
        kind = ctx._forward_cls
        dtype, x, y = _float_operands(kind.op, a, b)
        if dtype.kind == "c":
            _refuse(kind.op, dtype, "c")
        needs = ctx.needs_input_grad
        if any(needs):
            ctx.save_for_backward(a if kind.first_saved(needs) else None, b)
        return wrap(_in_float(kind.ufunc, dtype, x, y))

    @staticmethod
    def first_saved(needs: tuple) -> bool:
        return True


class Atan2(FloatOfTwo):
    backward_name = "Atan2Backward0"
    torch_saved_tensors = {"other": 1, "self": 0}
    jvp = broadcasting_jvp()
    op, ufunc = "atan2", np.arctan2

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        needs = ctx.needs_input_grad
        squares = a * a + b * b
        scale = where(squares == 0, 0.0, reciprocal(squares))  # as torch: 0 at the origin, where atan2 has no slope
        return (grad * b * scale if needs[0] else None), (grad * -a * scale if needs[1] else None)


@ember_function
def atan2(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The angle of the point ``(other, input)``: ``atan(input / other)`` in the right quadrant.

    >>> ember.atan2(ember.tensor([1., -1.]), ember.tensor([-1., -1.]))
    tensor([ 2.3562, -2.3562])
    """
    return _of_two_tensors("atan2", Atan2, input, other, out)


@ember_function
def arctan2(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
    """Another name of ``atan2``.

    >>> ember.arctan2(ember.tensor([0.]), ember.tensor([-1.]))
    tensor([3.1416])
    """
    return _of_two_tensors("arctan2", Atan2, input, other, out)


class Hypot(Function):
    backward_name = "HypotBackward0"
    torch_saved_tensors = {"other": 1, "result": 2, "self": 0}
    jvp = broadcasting_jvp()
    backward_on_arrays = True

    @staticmethod
    def forward(ctx, a, b):
        x, y = promoted_arrays(a, b, "hypot")
        dtype = np.result_type(x, y)
        _refuse("hypot", dtype, "biuc")
        result = wrap(_in_float(np.hypot, dtype, x, y))
        needs = ctx.needs_input_grad
        if any(needs):  # each gradient is its own operand over the result
            ctx.save_for_backward(a if needs[0] else None, b if needs[1] else None, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        a, b, result = ctx.saved_tensors
        needs = ctx.needs_input_grad
        return quietly(IGNORE_ALL, _hypot_gradients, grad, a, b, result, needs)  # nan at (0, 0), as torch


def _hypot_gradients(grad, a, b, result, needs: tuple) -> tuple:
    return (grad * a / result if needs[0] else None), (grad * b / result if needs[1] else None)


@ember_function
def hypot(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
    """``sqrt(input ** 2 + other ** 2)``, without overflow in the squares.

    >>> ember.hypot(ember.tensor([3., 3e20]), ember.tensor([4., 4e20]))
    tensor([5.0000e+00, 5.0000e+20])
    """
    return _of_two_tensors("hypot", Hypot, input, other, out)


class Logaddexp(Function):
    """``log(e^a + e^b)``; ``Logaddexp2`` differs only in its names, NumPy function and base."""

    backward_name = "LogaddexpBackward0"
    torch_saved_tensors = {"other": 1, "self": 0}
    jvp = broadcasting_jvp()
    op, ufunc, refused = "logaddexp", np.logaddexp, "biu"

    @staticmethod
    def forward(ctx, a, b):
        kind = ctx._forward_cls
        x, y = promoted_arrays(a, b, kind.op)
        dtype = np.result_type(x, y)
        _refuse(kind.op, dtype, kind.refused)
        if any(ctx.needs_input_grad):
            ctx.save_for_backward(a, b)
        if dtype.kind == "c":
            return wrap(_in_float(_complex_logaddexp, dtype, x, y))
        single = dtype in (_SINGLE, HALF, _dtype.BF16) and \
            max(np.size(x), np.size(y)) >= 512  # (smaller: NumPy's one call costs less than the seven passes)
        return wrap(_in_float(kind.single if single else kind.ufunc, dtype, x, y))

    @staticmethod
    def backward(ctx, grad):
        """d/da log(e^a + e^b) = 1 / (1 + e^(b - a)) (and 2^ for base 2)."""
        a, b = ctx.saved_tensors
        needs, growth = ctx.needs_input_grad, ctx._forward_cls.growth
        return (grad / conjugated(1 + growth(b - a)) if needs[0] else None), \
            (grad / conjugated(1 + growth(a - b)) if needs[1] else None)

    @staticmethod
    def growth(difference: Tensor) -> Tensor:
        return difference.exp()

    @staticmethod
    def single(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return _logaddexp_single(x, y)


def _logaddexp_single(x: np.ndarray, y: np.ndarray, exponential=np.exp, log_scale=None) -> np.ndarray:
    """log(e^x + e^y) of float32 arrays as torch computes it: the larger plus log1p(exp(-|x - y|)), with equal
    infinities giving themselves. NumPy's own logaddexp branches element by element, 12 times slower.

    With ``exponential=np.exp2`` and ``log_scale=1 / ln 2`` it is log2(2^x + 2^y) (``Logaddexp2`` calls it so in
    double, where NumPy's float32 logaddexp2 is off by up to 1.4 units in the last place and 8 times slower)."""
    result = np.asarray(np.subtract(x, y))  # (a 0-d array for 0-d operands, which out= can write)
    np.abs(result, out=result)
    np.negative(result, out=result)
    exponential(result, out=result)
    np.log1p(result, out=result)
    if log_scale is not None:  # (base 2: log2(1 + t) is log1p(t) / ln 2)
        np.multiply(result, log_scale, out=result)
    np.add(result, np.maximum(x, y), out=result)
    undefined = np.isnan(result)
    if undefined.any():  # inf - inf: where both are the same infinity, it is the result
        infinite = undefined & (x == y)
        result[infinite] = np.broadcast_to(x, result.shape)[infinite]
    return result


def _complex_logaddexp(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """log(e^x + e^y) of complex arrays, from the operand of the larger real part (so that nothing overflows)."""
    larger = np.where(x.real >= y.real, x, y)
    smaller = np.where(x.real >= y.real, y, x)
    return larger + np.log1p(np.exp(smaller - larger))


class Logaddexp2(Logaddexp):
    backward_name = "Logaddexp2Backward0"
    torch_saved_tensors = {"other": 1, "self": 0}
    op, ufunc, refused = "logaddexp2", np.logaddexp2, "biuc"

    @staticmethod
    def growth(difference: Tensor) -> Tensor:
        return pow(2, difference)

    @staticmethod
    def single(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        # in double, rounded once: log1p(t) / ln 2 in single would be a rounding worse than torch's
        return _logaddexp_single(np.asarray(x, np.float64), np.asarray(y, np.float64), np.exp2,
                                 1 / np.log(2)).astype(_SINGLE)


@ember_function
def logaddexp(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
    """``log(exp(input) + exp(other))``, without overflow.

    >>> ember.logaddexp(ember.tensor([1000.]), ember.tensor([1000.]))
    tensor([1000.6932])
    """
    return _of_two_tensors("logaddexp", Logaddexp, input, other, out)


@ember_function
def logaddexp2(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
    """``log2(2 ** input + 2 ** other)``, without overflow.

    >>> ember.logaddexp2(ember.tensor([3.]), ember.tensor([3.]))
    tensor([4.])
    """
    return _of_two_tensors("logaddexp2", Logaddexp2, input, other, out)


# ----------------------------------------------------------------- signs and steps


class Copysign(Function):
    """``|a|`` with the sign of ``b``. Its gradient, +-grad, is piecewise constant: the sign ratio is saved."""

    backward_name = "CopysignBackward0"
    jvp = broadcasting_jvp()
    backward_on_arrays = True
    graph_inputs = (0, 1)

    @staticmethod
    def forward(ctx, a, b):
        dtype, x, y = _float_operands("copysign", a, b)
        if dtype.kind == "c":
            _refuse("copysign", dtype, "c")
        result = _in_float(np.copysign, dtype, x, y)
        if ctx.needs_input_grad[0]:  # as torch: result / a, and 0 where a is 0
            ratio = quietly(IGNORE_ALL, np.divide, result, a._data)
            ctx.save_for_backward(wrap(np.where(a._data == 0, 0, ratio).astype(result.dtype, copy=False)))
        return wrap(result)

    @staticmethod
    def backward(ctx, grad):
        needs = ctx.needs_input_grad
        first = None
        if needs[0]:
            ratio = ctx.saved_tensors[0]
            if type(grad) is not np.ndarray:  # as torch's, the ratio (result / a) depends on a and b, with slope 0
                ratio = tied_to_inputs(ratio, ctx, 0, 1)
            first = grad * ratio
        return first, (zeros_like_gradient(grad) if needs[1] else None)  # torch's gradient of the sign's source


class CopysignNumber(Copysign):
    backward_name = "CopysignBackward1"
    graph_inputs = None


@ember_function
def copysign(input: Tensor, other: Tensor | float, *, out: Tensor | None = None) -> Tensor:
    """The magnitude of ``input`` with the sign of ``other`` (also of -0.0); always floating.

    >>> ember.copysign(ember.tensor([1, -2]), -0.0)
    tensor([-1., -2.])
    """
    require_tensor(input, "copysign")
    other = check_operand(other, "copysign", 2)
    function = Copysign if isinstance(other, Tensor) else CopysignNumber
    return written("copysign", function.apply(input, other), out, input, other)


class Heaviside(NoDerivative):
    backward_name = "NotImplemented"

    @staticmethod
    def forward(ctx, a, b):
        ctx.aten = "heaviside"
        x, y = a._data, b._data
        if x.dtype.kind == "c" or y.dtype.kind == "c":
            raise RuntimeError("heaviside is not yet implemented for complex tensors; it compares with 0, which "
                               "orders real numbers only: apply it to the real or imag part")
        if x.dtype != y.dtype:
            raise RuntimeError(
                f"heaviside is not yet implemented for tensors with different dtypes ({x.dtype} and {y.dtype}); "
                "convert values to input's dtype, e.g. values.to(input.dtype)"
            )
        if x.shape != y.shape:
            check_broadcast("heaviside", x.shape, y.shape)
        return wrap(np.where(x == 0, y, x > 0).astype(x.dtype, copy=False))  # nan is not > 0: 0, as torch


@ember_function
def heaviside(input: Tensor, values: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The step function: 0 where ``input < 0``, 1 where ``input > 0``, ``values`` where ``input == 0``.

    >>> ember.heaviside(ember.tensor([-1., 0., 2.]), ember.tensor(0.5))
    tensor([0.0000, 0.5000, 1.0000])
    """
    if isinstance(out, Tensor) and isinstance(input, Tensor) and isinstance(values, Tensor) and \
            out._data.dtype != np.result_type(input._data, values._data):
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes (out is "
                           f"{out.dtype}); pass an out of the inputs' dtype")
    return _of_two_tensors("heaviside", Heaviside, input, values, out, "values")


class NanToNum(Function):
    backward_name = "NanToNumBackward0"
    backward_on_arrays = True

    @staticmethod
    def forward(ctx, x, nan, posinf, neginf):
        data = x._data
        if _dtype.kind(data.dtype) not in "fc":
            return wrap(data.copy(order="K"))  # (in the input's layout, as torch's: also below)
        if ctx.needs_input_grad[0] and data.dtype.kind == "c":
            raise RuntimeError("nan_to_num does not support automatic differentiation for outputs with complex dtype; "
                               "detach() the input, or apply it to the real and imaginary parts")
        if ctx.needs_input_grad[0]:
            ctx.save_for_backward(wrap(np.isfinite(data)))
        if data.dtype.kind == "c":  # each part on its own, as torch
            parts = [_replaced(part, nan, posinf, neginf) for part in (data.real, data.imag)]
            return wrap(np.asarray(parts[0] + 1j * parts[1], data.dtype))
        return wrap(_replaced(data, nan, posinf, neginf))

    @staticmethod
    def backward(ctx, grad):
        (finite,) = ctx.saved_tensors
        return grad * finite, None, None, None


def _replaced(data: np.ndarray, nan: float, posinf: float | None, neginf: float | None) -> np.ndarray:
    """A real array with its nans and infinities replaced (see nan_to_num)."""
    if np.isfinite(data).all():  # the usual call: nothing to replace, a copy at once (np.where takes 5 ns an element)
        return data.copy(order="K")
    info = numpy_finfo(_dtype.from_numpy_dtype(data.dtype))  # (bfloat16's limits are ml_dtypes')
    replaced = np.where(np.isnan(data), _bounded(nan, data.dtype), data)
    replaced = np.where(data == np.inf, _bounded(info.max if posinf is None else posinf, data.dtype), replaced)
    return np.where(data == -np.inf, _bounded(info.min if neginf is None else neginf, data.dtype), replaced)


def _bounded(value: float, dtype: np.dtype) -> np.ndarray:
    """``value`` as ``dtype``: beyond its range, inf (as torch converts the replacement)."""
    return quietly(IGNORE_ALL, np.asarray, float(value), dtype)


@ember_function
def nan_to_num(input: Tensor, nan: float = 0.0, posinf: float | None = None, neginf: float | None = None, *,
               out: Tensor | None = None) -> Tensor:
    """``input`` with nan, inf and -inf replaced (by default: 0, the dtype's largest and its lowest value).

    >>> ember.nan_to_num(ember.tensor([0., 1., 1.]) / ember.tensor([0., 0., 1.]), posinf=9.)
    tensor([0., 9., 1.])
    """
    require_tensor(input, "nan_to_num")
    result = NanToNum.apply(input, nan, posinf, neginf)
    return result if out is None else into_out_of_its_dtype("nan_to_num", result, out, input)


@ember_function
def nan_to_num_(input: Tensor, nan: float = 0.0, posinf: float | None = None, neginf: float | None = None) -> Tensor:
    """``nan_to_num`` written into ``input``.

    >>> x = ember.tensor([0., 1.]) / ember.tensor([0., 1.])
    >>> ember.nan_to_num_(x, nan=-1.) is x, x
    (True, tensor([-1.,  1.]))
    """
    require_tensor(input, "nan_to_num_")
    return apply_inplace(input, nan_to_num.__wrapped__, nan, posinf, neginf, op="nan_to_num_")


_STEP_BITS = {_SINGLE: np.dtype(np.int32), np.dtype(np.float64): np.dtype(np.int64)}
_STEP_FROM = 256


def _next_after(x, y) -> np.ndarray:
    """C's nextafter: NumPy's, but for large float32 and float64 arrays a step of their bits, as NumPy's takes
    some 6 ns an element."""
    dtype = np.result_type(x, y)
    if dtype not in _STEP_BITS or np.size(x) < _STEP_FROM or np.asarray(x).dtype != np.asarray(y).dtype:
        return np.nextafter(x, y)
    x, y = np.broadcast_arrays(x, y)
    return _stepped_bits(x, y, _STEP_BITS[dtype])


def _stepped_bits(x: np.ndarray, y: np.ndarray, bits: np.dtype) -> np.ndarray:
    """nextafter of two float arrays of one shape: the bits of a nonzero ``x`` plus one to move away from zero
    (toward ``y`` on ``x``'s side of zero), minus one to move toward it; infinities step to the largest finite
    values as they should. Zeros (which step to the smallest subnormal of ``y``'s sign), nans and equal operands
    (giving ``y``) are NumPy's."""
    away = np.greater(y, x) == (x > 0)
    result = x.view(bits) - bits.type(1)
    twice = away.astype(bits)
    twice += twice
    result += twice
    result = result.view(x.dtype)
    difference = np.abs(quietly(IGNORE_ALL, np.subtract, x, y))
    special = ~(difference > 0)  # equal, or a nan (distinct floats never subtract to 0)
    special |= x == 0
    if special.any():
        result[special] = quietly(IGNORE_ALL, np.nextafter, x[special], y[special])  # (signalling nans warn)
    return result


class Nextafter(Function):
    backward_name = "NextafterBackward0"
    backward_on_arrays = True

    @staticmethod
    def forward(ctx, a, b):
        x, y = promoted_arrays(a, b, "nextafter")
        _refuse("nextafter", np.result_type(x, y), "biuc")
        return wrap(np.asarray(_next_after(x, y)))

    @staticmethod
    def backward(ctx, grad):
        needs = ctx.needs_input_grad  # a step of one ulp: as torch, the gradient of x alone, and zeros for other
        return (grad if needs[0] else None), (grad * 0 if needs[1] else None)


@ember_function
def nextafter(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The next floating-point value after ``input`` toward ``other``.

    >>> ember.nextafter(ember.tensor([1.], dtype=ember.float64), ember.tensor([2.], dtype=ember.float64)) - 1
    tensor([2.2204e-16], dtype=ember.float64)
    """
    return _of_two_tensors("nextafter", Nextafter, input, other, out)


# ----------------------------------------------------------------- interpolation and fused products


def _same_dtype(op: str, first: Tensor, other: Tensor, name: str) -> None:
    """torch's ops of several float tensors that take no mixed dtypes (lerp) say which operand differs."""
    if other._data.dtype != first._data.dtype:
        raise RuntimeError(
            f"{op}: expected dtype {_dtype.from_numpy_dtype(first._data.dtype)} for `{name}` but got dtype "
            f"{_dtype.from_numpy_dtype(other._data.dtype)}; convert it first, e.g. {name}.to(input.dtype)"
        )


def _lerped(x: np.ndarray, y: np.ndarray, w) -> np.ndarray:
    """``x + w * (y - x)``, as torch computes it: from the nearer end, so that w = 1 gives ``y`` exactly."""
    work = _SINGLE if x.dtype is HALF or x.dtype is _dtype.BF16 else x.dtype
    x, y, w = x.astype(work, copy=False), y.astype(work, copy=False), np.asarray(w, work)
    difference = y - x
    if not w.ndim:  # one weight: one end for every element, and the other end's formula not computed at all
        near_start = abs(w) < 0.5
        if work is not _SINGLE:
            return x + w * difference if near_start else y - difference * (1 - w)
        return fused_single(x, w, difference) if near_start else fused_single(y, difference, -(1 - w))
    if work is _SINGLE:  # each end's multiply-add rounded once, as torch's fused ones
        return np.where(np.abs(w) < 0.5, fused_single(x, w, difference), fused_single(y, difference, -(1 - w)))
    return np.where(np.abs(w) < 0.5, x + w * difference, y - difference * (1 - w))


def _lerp_operands(start: Tensor, end: Tensor, weight) -> tuple:
    """lerp's arrays, checked: ``end`` and a weight tensor must have ``start``'s dtype, a float one, except that a
    0-d weight, as in torch, takes part in type promotion (``lerp(ints, ints, tensor(0.5))`` is a float32 lerp)."""
    x, y = start._data, end._data
    _same_dtype("lerp", start, end, "end")
    w = weight
    if isinstance(weight, Tensor):
        w = weight._data
        if not w.ndim and w.dtype != x.dtype:
            dtype = result_dtype(start, end, weight).np
            x, y, w = x.astype(dtype), y.astype(dtype), w.astype(dtype)
        _same_dtype("lerp", wrap(x), weight if w.ndim else wrap(w), "weight")
    _refuse("lerp", x.dtype, "biu")
    if not isinstance(weight, Tensor):  # as torch: a number in the computing dtype (single for halves), or an error
        w = element_of("lerp", weight, _SINGLE if x.dtype is HALF or x.dtype is _dtype.BF16 else x.dtype)
    shapes = [np.shape(v) for v in (x, y, w)]
    check_broadcast("lerp", *shapes)
    check_broadcast("lerp", np.broadcast_shapes(*shapes[:2]), shapes[2])
    return x, y, w


class Lerp(Function):
    backward_name = "LerpBackward0"  # a number weight
    torch_saved_values = {"weight": "weight"}
    jvp = broadcasting_jvp()
    backward_on_arrays = True

    @staticmethod
    def forward(ctx, start, end, weight):
        x, y, w = _lerp_operands(start, end, weight)
        if isinstance(weight, Tensor):
            ctx.save_for_backward(*((start, end) if ctx.needs_input_grad[2] else (None, None)), weight)
        else:
            ctx.weight = w
        return wrap(np.asarray(_lerped(x, y, w)).astype(x.dtype, copy=False))

    @staticmethod
    def backward(ctx, grad):
        needs = ctx.needs_input_grad
        if len(ctx.saved_tensors):
            start, end, weight = ctx.saved_tensors
        else:
            start = end = None
            weight = ctx.weight
        return (grad * conjugated(1 - weight) if needs[0] else None), \
            (grad * conjugated(weight) if needs[1] else None), \
            (grad * conjugated(end - start) if needs[2] else None)


class LerpTensor(Lerp):
    backward_name = "LerpBackward1"


@ember_function
def lerp(input: Tensor, end: Tensor, weight: Tensor | float, *, out: Tensor | None = None) -> Tensor:
    """``input + weight * (end - input)``: a straight line from ``input`` (weight 0) to ``end`` (weight 1).

    >>> ember.lerp(ember.tensor([0., 10.]), ember.tensor([10., 20.]), 0.25)
    tensor([ 2.5000, 12.5000])
    """
    _tensors("lerp", (input, "input"), (end, "end"))
    weight = check_operand(weight, "lerp", 3, "weight")
    function = LerpTensor if isinstance(weight, Tensor) else Lerp
    return written("lerp", function.apply(input, end, weight), out, input, end, weight)


def _three(op: str, input, tensor1, tensor2, value) -> tuple:
    """The three tensors' arrays in their promoted dtype (bools refused), and ``value`` as that dtype takes it."""
    _tensors(op, (input, "input"), (tensor1, "tensor1"), (tensor2, "tensor2"))
    dtype = result_dtype(input, tensor1, tensor2).np
    _refuse(op, dtype, "b")
    shapes = [t._data.shape for t in (input, tensor1, tensor2)]
    check_broadcast(op, *shapes)
    check_broadcast(op, np.broadcast_shapes(*shapes[1:]), shapes[0])
    work = _SINGLE if dtype is HALF or dtype is _dtype.BF16 else dtype
    arrays = [t._data.astype(work, copy=False) for t in (input, tensor1, tensor2)]
    if isinstance(value, np.generic):
        value = value.item()
    if type(value) is int and not -2 ** 63 <= value < 2 ** 64:
        raise int_too_big(op, value)
    if dtype.kind in "iu":  # as torch: 2.5 scales integers by 2, and -2 scales unsigned ones modulo 2**bits
        value = int(value) % (1 << 8 * dtype.itemsize) if dtype.kind == "u" else int(value)
    return arrays, dtype, value


class Addcmul(Function):
    backward_name = "AddcmulBackward0"
    torch_saved_tensors = {"tensor1": 0, "tensor2": 1}
    torch_saved_values = {"value": "value"}
    jvp = broadcasting_jvp()
    backward_on_arrays = True

    @staticmethod
    def forward(ctx, input, tensor1, tensor2, value):
        (x, t1, t2), dtype, ctx.value = _three("addcmul", input, tensor1, tensor2, value)
        needs = ctx.needs_input_grad
        ctx.save_for_backward(tensor1 if needs[2] else None, tensor2 if needs[1] else None)
        if x.dtype is _SINGLE and t1.dtype is _SINGLE and t2.dtype is _SINGLE:
            return wrap(np.asarray(fused_single(x, _SINGLE.type(ctx.value) * t1, t2)).astype(dtype, copy=False))
        return wrap(np.asarray(x + ctx.value * t1 * t2).astype(dtype, copy=False))

    @staticmethod
    def backward(ctx, grad):
        t1, t2 = ctx.saved_tensors
        needs = ctx.needs_input_grad
        value = ctx.value
        return (grad if needs[0] else None), (grad * conjugated(t2 * value) if needs[1] else None), \
            (grad * conjugated(t1 * value) if needs[2] else None), None


class Addcdiv(Function):
    backward_name = "AddcdivBackward0"
    torch_saved_tensors = {"tensor1": 0, "tensor2": 1}
    torch_saved_values = {"value": "value"}
    jvp = broadcasting_jvp()
    backward_on_arrays = True

    @staticmethod
    def forward(ctx, input, tensor1, tensor2, value):
        _tensors("addcdiv", (input, "input"), (tensor1, "tensor1"), (tensor2, "tensor2"))  # before reading dtypes
        if tensor1._data.dtype.kind in "biu" and tensor2._data.dtype.kind in "biu":
            raise RuntimeError(
                "Integer division with addcdiv is no longer supported: convert tensor1 or tensor2 to floating "
                "point, e.g. addcdiv(input, tensor1.float(), tensor2)"
            )
        (x, t1, t2), dtype, ctx.value = _three("addcdiv", input, tensor1, tensor2, value)
        needs = ctx.needs_input_grad
        ctx.save_for_backward(tensor1 if needs[2] else None, tensor2 if needs[1] or needs[2] else None)
        return wrap(np.asarray(quietly(IGNORE_DIVIDE_INVALID, _addcdiv, x, t1, t2, ctx.value)).astype(dtype))

    @staticmethod
    def backward(ctx, grad):
        t1, t2 = ctx.saved_tensors
        return quietly(IGNORE_ALL, _addcdiv_gradients, grad, t1, t2, ctx.value, ctx.needs_input_grad)


def _addcdiv(x, t1, t2, value):
    return x + value * t1 / t2


def _addcdiv_gradients(grad, t1, t2, value, needs: tuple) -> tuple:
    return (grad if needs[0] else None), (grad * conjugated(value / t2) if needs[1] else None), \
        (-grad * conjugated(value * t1 / (t2 * t2)) if needs[2] else None), None


@ember_function
def addcmul(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: float = 1,
            out: Tensor | None = None) -> Tensor:
    """``input + value * tensor1 * tensor2``, broadcasting.

    >>> ember.addcmul(ember.tensor([1., 1.]), ember.tensor([2., 3.]), ember.tensor([4., 5.]), value=0.5)
    tensor([5.0000, 8.5000])
    """
    return written("addcmul", Addcmul.apply(input, tensor1, tensor2, value), out, input, tensor1, tensor2)


@ember_function
def addcdiv(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: float = 1,
            out: Tensor | None = None) -> Tensor:
    """``input + value * tensor1 / tensor2``, broadcasting (tensor1 and tensor2 not both integers).

    >>> ember.addcdiv(ember.tensor([1., 1.]), ember.tensor([2., 3.]), ember.tensor([4., 5.]), value=2)
    tensor([2.0000, 2.2000])
    """
    return written("addcdiv", Addcdiv.apply(input, tensor1, tensor2, value), out, input, tensor1, tensor2)


# ----------------------------------------------------------------- powers of two, divisors and multiples


def _times_power_of_two(x, y):
    return x * np.exp2(y)


class Ldexp(Function):
    """``a * 2 ** b``. The exponent's gradient is read from the result (``out * ln 2``), as torch's, so only the
    exponent is saved for the input's gradient and the result for the exponent's."""

    backward_name = "LdexpBackward0"
    torch_saved_tensors = {"other": 0, "result": 1}
    jvp = broadcasting_jvp()

    @staticmethod
    def forward(ctx, a, b):
        dtype, x, y = _float_operands("ldexp", a, b)
        out = wrap(_in_float(_times_power_of_two, dtype, x, y))
        needs = ctx.needs_input_grad
        ctx.save_for_backward(b if needs[0] else None, out if needs[1] else None)
        return out

    @staticmethod
    def backward(ctx, grad):
        b, out = ctx.saved_tensors
        needs = ctx.needs_input_grad
        scale = pow(2.0, b) if needs[0] else None  # (torch: 2 ** b in integers for an integer b, 0 where b < 0)
        return (grad * conjugated(scale) if needs[0] else None), (grad * conjugated(out * _LN2) if needs[1] else None)


_LN2 = float(np.log(2.0))


@ember_function
def ldexp(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
    """``input * 2 ** other``; always floating.

    >>> ember.ldexp(ember.tensor([1., 3.]), ember.tensor([3, -1]))
    tensor([8.0000, 1.5000])
    """
    return _of_two_tensors("ldexp", Ldexp, input, other, out)


@ember_function
def ldexp_(input: Tensor, other: Tensor) -> Tensor:
    """``ldexp`` written into ``input`` (a float tensor).

    >>> x = ember.tensor([1., 3.])
    >>> ember.ldexp_(x, ember.tensor([1, 2])) is x, x
    (True, tensor([ 2., 12.]))
    """
    require_tensor(input, "ldexp_")
    return apply_inplace(input, ldexp.__wrapped__, other, op="ldexp_")


class Frexp(Function):
    """(mantissa, exponent) with input = mantissa * 2 ** exponent; only the mantissa has a gradient."""

    backward_name = "FrexpBackward0"
    backward_on_arrays = True

    @staticmethod
    def forward(ctx, x):
        data = x._data
        if _dtype.kind(data.dtype) != "f":
            raise RuntimeError(f"frexp: only supports floating-point dtypes, got {x.dtype}; convert first, "
                               "e.g. x.to(ember.float32)")
        mantissa, exponent = np.frexp(data)
        if ctx.needs_input_grad[0]:  # as torch: grad / 2 ** exponent, the power taken in single precision
            ctx.save_for_backward(wrap(quietly(IGNORE_ALL, np.exp2, exponent.astype(_SINGLE))))
        exponent = wrap(np.asarray(exponent, np.int32))
        ctx.mark_non_differentiable(exponent)
        return wrap(np.asarray(mantissa)), exponent

    @staticmethod
    def backward(ctx, grad, _):
        (power,) = ctx.saved_tensors
        return quietly(IGNORE_ALL, _divided, grad, power)


def _divided(grad, power):
    return grad / power


@ember_function
def frexp(input: Tensor, *, out: tuple | None = None) -> tuple:
    """The mantissa (in [0.5, 1) in magnitude) and the integer exponent of each float: ``input = m * 2 ** e``.

    >>> ember.frexp(ember.tensor([8., -0.75]))
    ember.return_types.frexp(
    mantissa=tensor([ 0.5000, -0.7500]),
    exponent=tensor([4, 0], dtype=ember.int32))
    """
    mantissa, exponent = Frexp.apply(require_tensor(input, "frexp"))
    if out is None:
        return return_types.frexp(mantissa, exponent)
    mantissa, exponent = (_into_out_of_dtype(result, given, name, input)
                          for result, given, name in zip((mantissa, exponent), out, ("mantissa", "exponent")))
    return return_types.frexp_out(mantissa, exponent)


def _into_out_of_dtype(result: Tensor, out, name: str, input: Tensor) -> Tensor:
    """frexp's ``out=``: as torch, each tensor must have its result's dtype (no casting)."""
    if isinstance(out, Tensor) and out.dtype != result.dtype:
        raise RuntimeError(f"frexp expects {name} to have dtype {result.dtype} but got {out.dtype}; "
                           "pass an out tensor of that dtype")
    return into_out("frexp", result, out, input)


def _integer_pair(op: str, input, other) -> tuple:
    _tensors(op, (input, "input"), (other, "other"))
    x, y = promoted_arrays(input, other, op)
    _refuse(op, np.result_type(x, y), "bfc")
    return x, y


def _gcd(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Euclid's algorithm on |x| and |y| in their dtype, as torch's: the most negative integer is its own absolute
    value there (it wraps), which makes some divisors of it negative, as in torch; NumPy's gcd would not."""
    dtype = np.result_type(x, y)
    a, b = np.broadcast_arrays(np.abs(np.asarray(x, dtype)), np.abs(np.asarray(y, dtype)))
    while np.any(a != 0):
        nonzero = a != 0
        a, b = np.where(nonzero, np.fmod(b, np.where(nonzero, a, 1)), 0).astype(dtype), np.where(nonzero, a, b)
    return b


def _lcm(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """|x / gcd * y|, as torch computes it (C's arithmetic): 8- and 16-bit integers in a wider int, so that the
    multiple loses its sign before it wraps to the dtype; wider ones wrap first."""
    dtype = np.result_type(x, y)
    work = np.int64 if dtype.itemsize < 4 else dtype
    x, y = np.asarray(x, work), np.asarray(y, work)
    divisor = np.gcd(x, y)
    zero = divisor == 0
    return np.where(zero, 0, np.abs(x // np.where(zero, 1, divisor) * y)).astype(dtype)


@ember_function
def gcd(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The greatest common divisor of integers (``gcd(0, 0)`` is 0).

    >>> ember.gcd(ember.tensor([12, -18, 0]), ember.tensor([8, 12, 5]))
    tensor([4, 6, 5])
    """
    return written("gcd", wrap(np.asarray(_gcd(*_integer_pair("gcd", input, other)))), out, input, other)


@ember_function
def lcm(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The least common multiple of integers (0 if either is 0).

    >>> ember.lcm(ember.tensor([4, -4, 0]), ember.tensor([6, 6, 5]))
    tensor([12, 12,  0])
    """
    return written("lcm", wrap(np.asarray(_lcm(*_integer_pair("lcm", input, other)))), out, input, other)


# ----------------------------------------------------------------- shifts


def _shifted(op: str, a, b, left: bool) -> Tensor:
    """Shifts of integers, as torch: by a negative amount or by the width or more, 0 (or the sign, to the right)."""
    x, y = promoted_arrays(a, b, op)
    dtype = np.result_type(x, y)
    _refuse(op, dtype, "bfc")
    x, y = np.asarray(x, dtype), np.asarray(y, dtype)
    bits = dtype.itemsize * 8
    outside = (y < 0) | (y >= bits)
    amount = np.where(outside, 0, y)
    if left:
        return wrap(np.where(outside, 0, np.left_shift(x, amount)).astype(dtype, copy=False))
    overflow = np.right_shift(x, bits - 1) if dtype.kind == "i" else np.zeros_like(x)
    return wrap(np.where(outside, overflow, np.right_shift(x, amount)).astype(dtype, copy=False))


@ember_function
def bitwise_left_shift(input: Tensor | int, other: Tensor | int, *, out: Tensor | None = None) -> Tensor:
    """``input << other`` for integers (bits shifted out are lost).

    >>> ember.bitwise_left_shift(ember.tensor([1, 3]), 2)
    tensor([ 4, 12])
    """
    input, other = _two_operands("bitwise_left_shift", input, other)
    return written("bitwise_left_shift", _shifted("bitwise_left_shift", input, other, left=True), out, input, other)


@ember_function
def bitwise_right_shift(input: Tensor | int, other: Tensor | int, *, out: Tensor | None = None) -> Tensor:
    """``input >> other`` for integers: arithmetic (the sign is kept).

    >>> ember.bitwise_right_shift(ember.tensor([-8, 8]), 2)
    tensor([-2,  2])
    """
    input, other = _two_operands("bitwise_right_shift", input, other)
    return written("bitwise_right_shift", _shifted("bitwise_right_shift", input, other, left=False), out, input, other)


# ----------------------------------------------------------------- torch's other names for arithmetic


@ember_function
def subtract(input: Tensor, other: Tensor | float, *, alpha: float = 1, out: Tensor | None = None) -> Tensor:
    """Another name of ``sub``.

    >>> ember.subtract(ember.tensor([5, 6]), 1, alpha=2)
    tensor([3, 4])
    """
    return sub.__wrapped__(input, other, alpha=alpha, out=out)


@ember_function
def multiply(input: Tensor, other: Tensor | float, *, out: Tensor | None = None) -> Tensor:
    """Another name of ``mul``.

    >>> ember.multiply(ember.tensor([2, 3]), 2)
    tensor([4, 6])
    """
    return mul.__wrapped__(input, other, out=out)


@ember_function
def divide(input: Tensor, other: Tensor | float, *, rounding_mode: str | None = None,
           out: Tensor | None = None) -> Tensor:
    """Another name of ``div``.

    >>> ember.divide(ember.tensor([7, -7]), 2, rounding_mode="trunc")
    tensor([ 3, -3])
    """
    return div.__wrapped__(input, other, rounding_mode=rounding_mode, out=out)

