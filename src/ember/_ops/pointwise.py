"""Unary math: trigonometric and hyperbolic functions, the exp/log family, logit, sinc, frac, sgn.

Each op is a ``Function`` whose backward is written in ember ops (torch's formula), so it can be
differentiated again. Integer and bool inputs give the default float dtype; half is computed in single
precision and rounded once, as torch does. The special functions (erf, lgamma ...) are in
``special_functions.py``.

>>> import ember
>>> x = ember.tensor([0.5, 2.0], dtype=ember.float64, requires_grad=True)
>>> ember.autograd.gradgradcheck(ember.asinh, (x,))
True
"""
from __future__ import annotations

import functools
import math

import numpy as np

from ember import _dtype

from ember._dtype import BF16, HALF, scalar_type_name
from ember._ops._jvp import elementwise_jvp
from ember._ops._quiet import IGNORE_ALL, quietly
from ember._ops._support import (
    ember_function, float_result, floating_quietly, refuse_complex, require_tensor, wrap,
)
from ember._ops.arithmetic import pow, where
from ember._ops.complex import ComplexSgn, conjugated
from ember._ops.out import into_elementwise_out_of_its_dtype, into_out
from ember._ops.unary import Sign, of_floats_quietly
from ember._tensor import Tensor
from ember.autograd.function import Function

_SINGLE, _DOUBLE, _COMPLEX_DOUBLE = np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.complex128)
_LN2, _LN10 = math.log(2), math.log(10)


def _native(fn):
    """``fn`` in the input's precision; half in single, rounded once at the end, as torch computes it."""

    def compute(data: np.ndarray, *more: np.ndarray) -> np.ndarray:
        low = data.dtype
        if low is HALF or low is BF16:
            return np.asarray(fn(data.astype(_SINGLE), *[m.astype(_SINGLE) for m in more])).astype(low)
        return fn(data, *more)

    return staticmethod(compute)


def _precise(fn):
    """``fn`` computed in double, rounded once to the input's dtype: NumPy's single-precision sin, log10 ...
    are often a unit in the last place off, where torch's are correctly rounded; and the special functions
    are written for float64 only.

    >>> _precise(np.log10).__func__(np.array([100.0], np.float32))
    array([2.], dtype=float32)
    """

    def compute(data: np.ndarray, *more: np.ndarray) -> np.ndarray:
        wide = _COMPLEX_DOUBLE if data.dtype.kind == "c" else _DOUBLE
        flat = [d.astype(wide).reshape(-1) for d in (data, *more)]  # 1-d: the special functions assign into masks
        result = np.asarray(fn(*flat)).reshape(data.shape).astype(data.dtype, copy=False)
        return in_layout_of(data, result)

    return staticmethod(compute)


def in_layout_of(data: np.ndarray, result: np.ndarray) -> np.ndarray:
    """``result``, of ``data``'s shape, laid out in memory as a NumPy ufunc lays out its output for ``data``:
    torch's pointwise results keep a permuted or channels-last input's order. A result that is not row-major is
    taken to be laid out so already."""
    if data.ndim < 2 or data.flags.c_contiguous or not result.flags.c_contiguous:
        return result
    laid = np.empty_like(data, result.dtype)
    laid[...] = result
    return laid


def _single_as_is(fn):
    """``fn`` on single and double as they are (NumPy's vectorised kernels, within a unit in the last place of
    torch's), on half in double, rounded once: for the everyday functions where speed on large inputs matters."""
    precise = _precise(fn).__func__

    def compute(data: np.ndarray) -> np.ndarray:
        return fn(data) if data.dtype is not HALF else precise(data)

    return staticmethod(compute)


def quiet(backward):
    """``backward`` with NumPy's floating-point warnings off: a gradient of 0 times an infinite derivative is nan,
    quietly, as in torch (arrays, and ember's products, would warn)."""

    @functools.wraps(backward)
    def run(*args):
        return quietly(IGNORE_ALL, backward, *args)

    return run


class _Pointwise(Function):
    """A function of one tensor, always floating: ``compute`` maps its data (integers and bools are made the
    default float dtype first). The gradient is ``grad * derivative(saved)``, where ``saved`` is what the class
    ``saves``: the "input", the "output", or "nothing" (a constant slope). ``derivative`` is written in ember ops,
    so that it differentiates again. A complex input's gradient takes the derivative's conjugate (ember's
    convention, as torch's), so that one formula serves both."""

    op = ""
    compute = None
    on_floats = None  # what ``compute`` does for float32 and float64, if that is one NumPy function (spared a call)
    saves = "input"
    derivative = None
    jvp = elementwise_jvp()

    @classmethod
    def forward(cls, ctx, x):
        on_floats = cls.on_floats  # (inf and nan quietly, as in torch)
        result = of_floats_quietly(IGNORE_ALL, on_floats if on_floats is not None else cls.compute, x)
        out = wrap(result if result is not None else floating_quietly(IGNORE_ALL, cls.compute, cls.op, x))
        if ctx.needs_input_grad[0]:  # (nothing to keep for a call not recorded: see arithmetic.Mul)
            saves = cls.saves
            ctx.save_for_backward(x if saves == "input" else out if saves == "output" else None)
        return out

    @classmethod
    @quiet
    def backward(cls, ctx, grad):
        (saved,) = ctx.saved_tensors
        return grad * conjugated(cls.derivative(saved))


class _RealPointwise(_Pointwise):
    """A ``_Pointwise`` op that torch refuses for complex tensors (the special functions, deg2rad): it raises
    ``complex_error`` (with ``complex_message``, or the default "not implemented for" one) before NumPy could
    answer with a complex result or drop the imaginary part."""

    complex_error, complex_message = NotImplementedError, None

    @classmethod
    def forward(cls, ctx, x):
        if isinstance(x, Tensor):
            refuse_complex(cls.op, x._data, cls.complex_message, cls.complex_error)
        return super().forward(ctx, x)


def _out(op: str, result: Tensor, out, *inputs) -> Tensor:
    return result if out is None else into_out(op, result, out, *inputs)


def _out_of_its_dtype(op: str, result: Tensor, out, *inputs) -> Tensor:
    """``_out`` for the ops that keep their input's dtype (sgn, frac, round): torch takes no other ``out``."""
    return result if out is None else into_elementwise_out_of_its_dtype(op, result, out, *inputs)


# ----------------------------------------------------------------- trigonometric and hyperbolic


class Sin(_Pointwise):
    backward_name, op, compute, on_floats = "SinBackward0", "sin", _single_as_is(np.sin), np.sin
    torch_saved_tensors = {"self": 0}
    backward_on_arrays = True  # cos of an array is Cos's own computation
    derivative = staticmethod(lambda x: Cos.compute(x) if type(x) is np.ndarray else cos(x))


class Cos(_Pointwise):
    backward_name, op, compute, on_floats = "CosBackward0", "cos", _single_as_is(np.cos), np.cos
    torch_saved_tensors = {"self": 0}
    backward_on_arrays = True
    derivative = staticmethod(lambda x: -(Sin.compute(x) if type(x) is np.ndarray else sin(x)))


class Tan(_Pointwise):
    backward_name, op, compute, saves = "TanBackward0", "tan", _precise(np.tan), "output"
    torch_saved_tensors = {"result": 0}
    backward_on_arrays = True

    derivative = staticmethod(lambda out: out * out + 1)


class Asin(_Pointwise):
    backward_name, op, compute = "AsinBackward0", "asin", _precise(np.arcsin)
    torch_saved_tensors = {"self": 0}
    derivative = staticmethod(lambda x: rsqrt(1 - x * x))


class Acos(_Pointwise):
    backward_name, op, compute = "AcosBackward0", "acos", _precise(np.arccos)
    torch_saved_tensors = {"self": 0}
    derivative = staticmethod(lambda x: -rsqrt(1 - x * x))


class Atan(_Pointwise):
    backward_name, op, compute = "AtanBackward0", "atan", _precise(np.arctan)
    torch_saved_tensors = {"self": 0}
    backward_on_arrays = True

    derivative = staticmethod(lambda x: 1 / (x * x + 1))


class Sinh(_Pointwise):
    backward_name, op, compute = "SinhBackward0", "sinh", _precise(np.sinh)
    torch_saved_tensors = {"self": 0}
    derivative = staticmethod(lambda x: cosh(x))


class Cosh(_Pointwise):
    backward_name, op, compute = "CoshBackward0", "cosh", _precise(np.cosh)
    torch_saved_tensors = {"self": 0}
    derivative = staticmethod(lambda x: sinh(x))


class Asinh(_Pointwise):
    backward_name, op, compute = "AsinhBackward0", "asinh", _precise(np.arcsinh)
    torch_saved_tensors = {"self": 0}
    derivative = staticmethod(lambda x: rsqrt(x * x + 1))


class Acosh(_Pointwise):
    backward_name, op, compute = "AcoshBackward0", "acosh", _precise(np.arccosh)
    torch_saved_tensors = {"self": 0}
    # 1 / sqrt(x - 1) sqrt(x + 1): for complex x, the branch of acosh's own (1 / sqrt(x * x - 1) flips sign at some)
    derivative = staticmethod(lambda x: rsqrt(x - 1) * rsqrt(x + 1) if x._data.dtype.kind == "c" else rsqrt(x * x - 1))


class Atanh(_Pointwise):
    backward_name, op, compute = "AtanhBackward0", "atanh", _precise(np.arctanh)
    torch_saved_tensors = {"self": 0}
    derivative = staticmethod(lambda x: 1 / (1 - x * x))


class Deg2Rad(_RealPointwise):
    backward_name, op, saves = "Deg2RadBackward0", "deg2rad", "nothing"
    complex_error, complex_message = RuntimeError, "deg2rad is not supported for complex tensors"
    compute = _native(lambda v: v * (math.pi / 180))
    backward_on_arrays = True
    derivative = staticmethod(lambda _: math.pi / 180)


class Rad2Deg(_RealPointwise):
    backward_name, op, saves = "Rad2DegBackward0", "rad2deg", "nothing"
    complex_error, complex_message = RuntimeError, "rad2deg is not supported for complex tensors"
    compute = _native(lambda v: v * (180 / math.pi))
    backward_on_arrays = True
    derivative = staticmethod(lambda _: 180 / math.pi)


def _sinc(v: np.ndarray) -> np.ndarray:
    product = v * math.pi  # in v's precision, as torch's (so sinc(2) in single is 2.8e-08, not 0)
    return np.where(v == 0, np.ones((), v.dtype), np.sin(product) / product)


# The Taylor coefficients of d/dt (sin t / t) = sum over k >= 1 of (-1)^k 2k t^(2k-1) / (2k+1)!, highest first:
# ten terms reach double precision for |t| <= 1 (the next is 4e-19 there).
_SINC_SLOPE_SERIES = tuple((-1) ** k * 2 * k / math.factorial(2 * k + 1) for k in range(10, 0, -1))


def _sinc_slope_near_zero(product: Tensor) -> Tensor:
    """d/dt (sin t / t) at t = ``product``, by its Taylor series in t^2: where the closed form's two terms cancel."""
    square = product * product
    total = _SINC_SLOPE_SERIES[0]
    for coefficient in _SINC_SLOPE_SERIES[1:]:
        total = total * square + coefficient
    return total * product


def _sinc_slope(x: Tensor) -> Tensor:
    """sinc's derivative, pi d/dt (sin t / t) at t = pi x: the series for |t| <= 1, where (t cos t - sin t) / t^2
    loses digits to cancellation (all of them near 0); the closed form beyond. Each branch sees only its own
    points, so that neither's derivative is an inf or nan at the other's (0 times nan is nan in backward)."""
    product = x * math.pi
    near_zero = product.abs() <= 1
    inner = where(near_zero, product, 0.0)
    outer = where(near_zero, 1.0, product)
    closed_form = (outer * cos(outer) - sin(outer)) / (outer * outer)
    return math.pi * where(near_zero, _sinc_slope_near_zero(inner), closed_form)


class Sinc(_Pointwise):
    backward_name, op, compute = "SincBackward0", "sinc", _native(_sinc)
    torch_saved_tensors = {"self": 0}
    derivative = staticmethod(_sinc_slope)


# ----------------------------------------------------------------- exp and log family


class Exp2(_Pointwise):
    backward_name, op, compute, saves = "Exp2Backward0", "exp2", _precise(np.exp2), "output"
    torch_saved_tensors = {"result": 0}
    backward_on_arrays = True

    derivative = staticmethod(lambda out: out * _LN2)


class Expm1(_Pointwise):
    backward_name, op, compute, saves = "Expm1Backward0", "expm1", _precise(np.expm1), "output"
    torch_saved_tensors = {"result": 0}
    backward_on_arrays = True

    derivative = staticmethod(lambda out: out + 1)


class Log2(_Pointwise):
    backward_name, op, compute = "Log2Backward0", "log2", _precise(np.log2)
    torch_saved_tensors = {"self": 0}
    derivative = staticmethod(lambda x: 1 / (x * _LN2))


class Log10(_Pointwise):
    backward_name, op, compute = "Log10Backward0", "log10", _precise(np.log10)
    torch_saved_tensors = {"self": 0}
    derivative = staticmethod(lambda x: 1 / (x * _LN10))


def _log1p(v: np.ndarray) -> np.ndarray:
    """log(1 + v). For complex v with |1 + v| near 1, log|1 + v| is log1p(2 Re v + |v|^2) / 2 (the phase from
    atan2), where NumPy's log(1 + v) loses the real part to cancellation (1e-20 + 1e-20j gave 0)."""
    if v.dtype.kind != "c":
        return np.log1p(v)
    result = np.log1p(v)
    modulus = np.abs(1 + v)
    cancelling = (modulus > 0.5) & (modulus < 2)  # (elsewhere log|1 + v| is well conditioned, as NumPy takes it)
    x, y = v.real[cancelling], v.imag[cancelling]
    with np.errstate(all="ignore"):
        result[cancelling] = 0.5 * np.log1p(_two_x_plus_squares(x, y)) + 1j * np.arctan2(y, 1 + x)
    return result


def _two_x_plus_squares(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """|1 + x + iy|^2 - 1 = 2x + x^2 + y^2, to about a unit in the last place even where 2x and the squares
    cancel (on the circle |1 + v| = 1): the squares exact as double-double sums (Dekker's splitting), added
    from the smallest parts up."""
    x_square, x_error = _exact_square(x)
    y_square, y_error = _exact_square(y)
    head, tail = _two_sum(2 * x, x_square)
    head, more = _two_sum(head, y_square)
    return head + (tail + more + x_error + y_error)


def _exact_square(a: np.ndarray) -> tuple:
    """(a * a rounded, its rounding error): a split into halves of 26 bits, whose products are exact."""
    scaled = 134217729.0 * a  # 2^27 + 1
    high = scaled - (scaled - a)
    low = a - high
    square = a * a
    return square, ((high * high - square) + 2 * high * low) + low * low


def _two_sum(a: np.ndarray, b: np.ndarray) -> tuple:
    """(a + b rounded, its rounding error), exactly (Knuth)."""
    total = a + b
    b_part = total - a
    return total, (a - (total - b_part)) + (b - b_part)


class Log1p(_Pointwise):
    backward_name, op, compute = "Log1PBackward0", "log1p", _precise(_log1p)
    torch_saved_tensors = {"self": 0}
    derivative = staticmethod(lambda x: 1 / (x + 1))


class Rsqrt(_Pointwise):
    backward_name, op, compute, saves = "RsqrtBackward0", "rsqrt", _native(lambda v: 1 / np.sqrt(v)), "output"
    torch_saved_tensors = {"result": 0}
    backward_on_arrays = True

    derivative = staticmethod(lambda out: out * out * out * -0.5)


class Logit(Function):
    backward_name = "LogitBackward0"
    torch_saved_tensors = {"self": 0}
    torch_saved_values = {"eps": "eps"}
    jvp = elementwise_jvp()

    @staticmethod
    def forward(ctx, x, eps):
        data = float_result(refuse_complex("logit", require_tensor(x, "logit")._data))
        ctx.save_for_backward(x)
        ctx.eps = eps
        return wrap(np.asarray(quietly(IGNORE_ALL, _logit, data, eps)))

    @staticmethod
    @quiet
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        slope = grad / (x * (1 - x))
        data, eps = x._data, ctx.eps
        if eps is None:  # outside [0, 1] the logit is nan, and so is its gradient
            return where(wrap((data < 0) | (data > 1)), math.nan, slope), None
        return where(wrap((data < eps) | (data > 1 - eps)), 0.0, slope), None  # clamped there: a zero gradient


def _logit(v: np.ndarray, eps: float | None) -> np.ndarray:
    """log(v / (1 - v)), the clamp and the ratio in v's own precision (half too, as torch), the log rounded once."""
    dtype = v.dtype
    if eps is not None:  # as torch, below eps gives eps even where eps > 1 - eps (np.clip would give 1 - eps)
        low = np.asarray(eps, dtype)
        high = np.ones((), dtype) - low
        v = np.where(v < low, low, np.where(v > high, high, v))
    ratio = v / (np.ones((), dtype) - v)
    return np.log(ratio.astype(_DOUBLE)).astype(dtype)


class Frac(Function):
    backward_name = "FracBackward0"
    backward_on_arrays = True
    jvp = elementwise_jvp()

    @staticmethod
    def forward(ctx, x):
        data = refuse_complex("frac", require_tensor(x, "frac")._data)
        if _dtype.kind(data.dtype) != "f":  # torch refuses integers and bools rather than give zeros
            raise NotImplementedError(
                f"\"frac\" not implemented for '{scalar_type_name(data.dtype)}'; convert the tensor to floating "
                "point first, e.g. x.float()"
            )
        return wrap(np.asarray(quietly(IGNORE_ALL, _frac, data)))  # inf - inf: nan, quietly

    @staticmethod
    def backward(ctx, grad):
        return grad


def _frac(data: np.ndarray) -> np.ndarray:
    return data - np.trunc(data)


class Sgn(Sign):
    """sign for real tensors, under torch's name for the complex-aware op."""

    backward_name = "SgnBackward0"


# ----------------------------------------------------------------- public functions


@ember_function
def sin(input, *, out=None) -> Tensor:
    """Sine, elementwise.

    >>> ember.sin(ember.tensor([0.0, 1.0]))
    tensor([0.0000, 0.8415])
    """
    result = Sin.apply(input)  # (not through _out: a call saved on every sine)
    return result if out is None else into_out("sin", result, out, input)


@ember_function
def cos(input, *, out=None) -> Tensor:
    """Cosine, elementwise.

    >>> ember.cos(ember.tensor([0.0, 1.0]))
    tensor([1.0000, 0.5403])
    """
    result = Cos.apply(input)  # (not through _out: a call saved on every cosine)
    return result if out is None else into_out("cos", result, out, input)


@ember_function
def tan(input, *, out=None) -> Tensor:
    """Tangent, elementwise.

    >>> ember.tan(ember.tensor([0.0, 1.0]))
    tensor([0.0000, 1.5574])
    """
    return _out("tan", Tan.apply(input), out, input)


@ember_function
def asin(input, *, out=None) -> Tensor:
    """Arcsine; nan outside [-1, 1].

    >>> ember.asin(ember.tensor([0.0, 1.0]))
    tensor([0.0000, 1.5708])
    """
    return _out("asin", Asin.apply(input), out, input)


@ember_function
def acos(input, *, out=None) -> Tensor:
    """Arccosine; nan outside [-1, 1].

    >>> ember.acos(ember.tensor([0.0, 1.0]))
    tensor([1.5708, 0.0000])
    """
    return _out("acos", Acos.apply(input), out, input)


@ember_function
def atan(input, *, out=None) -> Tensor:
    """Arctangent.

    >>> ember.atan(ember.tensor([0.0, 1.0]))
    tensor([0.0000, 0.7854])
    """
    return _out("atan", Atan.apply(input), out, input)


@ember_function
def sinh(input, *, out=None) -> Tensor:
    """Hyperbolic sine.

    >>> ember.sinh(ember.tensor([0.0, 1.0]))
    tensor([0.0000, 1.1752])
    """
    return _out("sinh", Sinh.apply(input), out, input)


@ember_function
def cosh(input, *, out=None) -> Tensor:
    """Hyperbolic cosine.

    >>> ember.cosh(ember.tensor([0.0, 1.0]))
    tensor([1.0000, 1.5431])
    """
    return _out("cosh", Cosh.apply(input), out, input)


@ember_function
def asinh(input, *, out=None) -> Tensor:
    """Inverse hyperbolic sine.

    >>> ember.asinh(ember.tensor([0.0, 1.0]))
    tensor([0.0000, 0.8814])
    """
    return _out("asinh", Asinh.apply(input), out, input)


@ember_function
def acosh(input, *, out=None) -> Tensor:
    """Inverse hyperbolic cosine; nan below 1.

    >>> ember.acosh(ember.tensor([1.0, 2.0]))
    tensor([0.0000, 1.3170])
    """
    return _out("acosh", Acosh.apply(input), out, input)


@ember_function
def atanh(input, *, out=None) -> Tensor:
    """Inverse hyperbolic tangent; +-inf at +-1, nan beyond.

    >>> ember.atanh(ember.tensor([0.0, 0.5]))
    tensor([0.0000, 0.5493])
    """
    return _out("atanh", Atanh.apply(input), out, input)


@ember_function
def arcsin(input, *, out=None) -> Tensor:
    """Another name of ``asin``.

    >>> ember.arcsin(ember.tensor([1.0]))
    tensor([1.5708])
    """
    return _out("arcsin", Asin.apply(require_tensor(input, "arcsin")), out, input)


@ember_function
def arccos(input, *, out=None) -> Tensor:
    """Another name of ``acos``.

    >>> ember.arccos(ember.tensor([1.0]))
    tensor([0.])
    """
    return _out("arccos", Acos.apply(require_tensor(input, "arccos")), out, input)


@ember_function
def arctan(input, *, out=None) -> Tensor:
    """Another name of ``atan``.

    >>> ember.arctan(ember.tensor([1.0]))
    tensor([0.7854])
    """
    return _out("arctan", Atan.apply(require_tensor(input, "arctan")), out, input)


@ember_function
def arcsinh(input, *, out=None) -> Tensor:
    """Another name of ``asinh``.

    >>> ember.arcsinh(ember.tensor([1.0]))
    tensor([0.8814])
    """
    return _out("arcsinh", Asinh.apply(require_tensor(input, "arcsinh")), out, input)


@ember_function
def arccosh(input, *, out=None) -> Tensor:
    """Another name of ``acosh``.

    >>> ember.arccosh(ember.tensor([2.0]))
    tensor([1.3170])
    """
    return _out("arccosh", Acosh.apply(require_tensor(input, "arccosh")), out, input)


@ember_function
def arctanh(input, *, out=None) -> Tensor:
    """Another name of ``atanh``.

    >>> ember.arctanh(ember.tensor([0.5]))
    tensor([0.5493])
    """
    return _out("arctanh", Atanh.apply(require_tensor(input, "arctanh")), out, input)


@ember_function
def deg2rad(input, *, out=None) -> Tensor:
    """Degrees to radians.

    >>> ember.deg2rad(ember.tensor([180.0]))
    tensor([3.1416])
    """
    return _out("deg2rad", Deg2Rad.apply(input), out, input)


@ember_function
def rad2deg(input, *, out=None) -> Tensor:
    """Radians to degrees.

    >>> ember.rad2deg(ember.tensor([3.14159265]))
    tensor([180.])
    """
    return _out("rad2deg", Rad2Deg.apply(input), out, input)


@ember_function
def sinc(input, *, out=None) -> Tensor:
    """The normalized sinc, sin(pi x) / (pi x), 1 at 0.

    >>> ember.sinc(ember.tensor([0.0, 0.5]))
    tensor([1.0000, 0.6366])
    """
    return _out("sinc", Sinc.apply(input), out, input)


@ember_function
def exp2(input, *, out=None) -> Tensor:
    """2 to the power of input.

    >>> ember.exp2(ember.tensor([3, -1]))
    tensor([8.0000, 0.5000])
    """
    return _out("exp2", Exp2.apply(input), out, input)


@ember_function
def expm1(input, *, out=None) -> Tensor:
    """exp(input) - 1, precise near 0.

    >>> ember.expm1(ember.tensor([1e-10], dtype=ember.float64))
    tensor([1.0000e-10], dtype=ember.float64)
    """
    return _out("expm1", Expm1.apply(input), out, input)


@ember_function
def log2(input, *, out=None) -> Tensor:
    """Base-2 logarithm.

    >>> ember.log2(ember.tensor([8.0, 0.5]))
    tensor([ 3., -1.])
    """
    return _out("log2", Log2.apply(input), out, input)


@ember_function
def log10(input, *, out=None) -> Tensor:
    """Base-10 logarithm.

    >>> ember.log10(ember.tensor([100.0]))
    tensor([2.])
    """
    return _out("log10", Log10.apply(input), out, input)


@ember_function
def log1p(input, *, out=None) -> Tensor:
    """log(1 + input), precise near 0.

    >>> ember.log1p(ember.tensor([0.0, 1.0]))
    tensor([0.0000, 0.6931])
    """
    return _out("log1p", Log1p.apply(input), out, input)


@ember_function
def rsqrt(input, *, out=None) -> Tensor:
    """1 / sqrt(input): inf at 0, nan below.

    >>> ember.rsqrt(ember.tensor([4.0]))
    tensor([0.5000])
    """
    return _out("rsqrt", Rsqrt.apply(input), out, input)


@ember_function
def square(input, *, out=None) -> Tensor:
    """input ** 2 (recorded as the power it is, as in torch); integers stay integers.

    >>> ember.square(ember.tensor([-3, 2]))
    tensor([9, 4])
    """
    return pow(require_tensor(input, "square"), 2, out=out)


@ember_function
def sgn(input, *, out=None) -> Tensor:
    """The sign of each element (for real tensors the same as ``sign``).

    >>> ember.sgn(ember.tensor([-2.0, 0.0, 3.0]))
    tensor([-1.,  0.,  1.])
    """
    if require_tensor(input, "sgn")._data.dtype.kind == "c":
        return _out_of_its_dtype("sgn", ComplexSgn.apply(input), out, input)
    return _out_of_its_dtype("sgn", Sgn.apply(input), out, input)


@ember_function
def frac(input, *, out=None) -> Tensor:
    """The fractional part, input - trunc(input), with input's sign; floating tensors only.

    >>> ember.frac(ember.tensor([1.5, -2.25]))
    tensor([ 0.5000, -0.2500])
    """
    return _out_of_its_dtype("frac", Frac.apply(input), out, input)


@ember_function
def logit(input, eps: float | None = None, *, out=None) -> Tensor:
    """log(p / (1 - p)); with ``eps``, p is first clamped to [eps, 1 - eps].

    >>> ember.logit(ember.tensor([0.5, 0.0]), eps=1e-6)
    tensor([  0.0000, -13.8155])
    """
    return _out("logit", Logit.apply(input, eps), out, input)


