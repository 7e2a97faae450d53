"""The special functions: erf and its inverse, the gamma family, the incomplete gamma and zeta functions,
modified Bessel functions, the normal distribution, xlogy and entr, as ops with torch's gradients; and
the ones torch gives no gradient (orthogonal polynomials, modified_bessel_k0 ...), as plain functions.

Their values come from the NumPy code in ``_special_math.py``, computed in float64 (integers and bools
give the default float dtype); float32 data of erf, erfc, erfcx, erfinv, lgamma, digamma, ndtr, ndtri and
log_ndtr takes the float32 kernels there (``_single_by_its_own``). Each backward is written in ember ops, so it
differentiates again: lgamma's gradient uses digamma, digamma's polygamma(1, x), polygamma(n, x)'s
polygamma(n + 1, x), i0's i1.

>>> import ember
>>> x = ember.tensor([0.5, 2.0], dtype=ember.float64, requires_grad=True)
>>> ember.autograd.gradgradcheck(ember.lgamma, (x,))
True
"""
from __future__ import annotations

import math

import numpy as np

from ember import _dtype
from ember._dtype import scalar_type_name
from ember._ops import _special_math as F
from ember._ops._quiet import IGNORE_ALL, quietly
from ember._ops._support import check_broadcast, check_operand, ember_function, float_result, refuse_complex, \
    require_tensor, result_dtype, whole_number, wrap
from ember._ops.arithmetic import where
from ember._ops.pointwise import _RealPointwise, _out, _precise, in_layout_of, quiet
from ember._ops.unary import exp, log, sign
from ember._tensor import Tensor
from ember.autograd._node_names import named_node
from ember.autograd.function import Function


def _single_by_its_own(single, fn):
    """``single`` for float32 data (a kernel of its own in single precision, within torch's units in the last
    place), ``fn`` in double rounded once for the other dtypes."""
    precise = _precise(fn).__func__

    def compute(data: np.ndarray) -> np.ndarray:
        return in_layout_of(data, single(data)) if data.dtype == np.float32 else precise(data)

    return staticmethod(compute)


class Erf(_RealPointwise):
    backward_name, op, compute = "ErfBackward0", "erf", _single_by_its_own(F.erf_single, F.erf)
    torch_saved_tensors = {"self": 0}
    derivative = staticmethod(lambda x: exp(-(x * x)) * (2 / math.sqrt(math.pi)))


class Erfc(_RealPointwise):
    backward_name, op, compute = "ErfcBackward0", "erfc", _single_by_its_own(F.erfc_single, F.erfc)
    torch_saved_tensors = {"self": 0}
    derivative = staticmethod(lambda x: exp(-(x * x)) * (-2 / math.sqrt(math.pi)))


def _ndtr_as_composed(data: np.ndarray) -> np.ndarray:
    """ndtr as 0.5 erfc(x * -1/sqrt(2)) with the product rounded to the data's dtype, as the composition of ops
    that torch runs for half and bfloat16, which multiply in single precision."""
    scaled = (data.astype(np.float32) * np.float32(-1 / math.sqrt(2))).astype(data.dtype)
    return _precise(F.erfc).__func__(scaled) * data.dtype.type(0.5)


def _ndtr(data: np.ndarray) -> np.ndarray:
    """float32 and float64 by kernels that keep the left tail's digits (0.5 erfc(x * -1/sqrt(2)) in float64
    magnifies the rounding of the product by x^2: 1e-13 relative at x = -35)."""
    if data.dtype == np.float32:
        return F.ndtr_single(data)
    return F.ndtr(data) if data.dtype == np.float64 else _ndtr_as_composed(data)


class Ndtr(_RealPointwise):
    """The standard normal distribution function, as one op: float32 computes its argument -x / sqrt(2) in
    double, which rounded to single would lose the left tail's digits."""

    backward_name, op, compute = "SpecialNdtrBackward0", "ndtr", staticmethod(_ndtr)
    derivative = staticmethod(lambda x: exp(x * x * -0.5) * (1 / math.sqrt(2 * math.pi)))


def _single_or_double(op: str, compute):
    """``compute`` for single and double precision only: as torch, which has no half or bfloat16 kernel for
    ``op``, a 16-bit float raises NotImplementedError naming it."""
    fn = compute.__func__

    def checked(data: np.ndarray, *more: np.ndarray) -> np.ndarray:
        refuse_low_precision(op, data.dtype)
        return fn(data, *more)

    return staticmethod(checked)


def refuse_low_precision(op: str, dtype: np.dtype) -> None:
    if dtype in _dtype.LOW:
        raise NotImplementedError(f'"{op}_cpu" not implemented for \'{_dtype.scalar_type_name(dtype)}\'; convert '
                                  "it first, e.g. x.float()")


class Erfcx(_RealPointwise):
    backward_name, op = "SpecialErfcxBackward0", "erfcx"
    compute = _single_or_double("erfcx", _single_by_its_own(F.erfcx_single, F.erfcx))
    derivative = staticmethod(lambda x: 2 * x * Erfcx.apply(x) - 2 / math.sqrt(math.pi))


class Erfinv(_RealPointwise):
    backward_name, op, compute, saves = "ErfinvBackward0", "erfinv", _single_by_its_own(F.erfinv_single, F.erfinv), \
        "output"
    derivative = staticmethod(lambda out: exp(out * out) * (math.sqrt(math.pi) / 2))


class Lgamma(_RealPointwise):
    backward_name, op, compute = "LgammaBackward0", "lgamma", _single_by_its_own(F.lgamma_single, F.lgamma)
    torch_saved_tensors = {"self": 0}
    derivative = staticmethod(lambda x: digamma(x))


class Digamma(_RealPointwise):
    backward_name, op, compute = "DigammaBackward0", "digamma", _single_by_its_own(F.digamma_single, F.digamma)
    torch_saved_tensors = {"self": 0}
    derivative = staticmethod(lambda x: polygamma(1, x))


class Polygamma(Function):
    backward_name = "PolygammaBackward0"
    torch_saved_tensors = {"self": 0}
    torch_saved_values = {"n": "n"}

    @staticmethod
    def forward(ctx, n, x):
        data = float_result(refuse_complex("polygamma", require_tensor(x, "polygamma", 2)._data))
        ctx.save_for_backward(x)
        ctx.n = n
        if n == 1 and (data.dtype == np.float32 or data.dtype in _dtype.LOW):  # as torch's single kernel: in single
            return wrap(in_layout_of(data, F.trigamma(data, np.float32).reshape(data.shape).astype(data.dtype)))
        compute = _precise(lambda v: F.polygamma(n, v)).__func__
        return wrap(np.asarray(quietly(IGNORE_ALL, compute, data)))

    @staticmethod
    @quiet
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return None, grad * polygamma(ctx.n + 1, x)


class I0(_RealPointwise):
    backward_name, op, compute = "I0Backward0", "i0", _precise(F.i0)
    torch_saved_tensors = {"self": 0}
    derivative = staticmethod(lambda x: I1.apply(x))


class I0e(_RealPointwise):
    backward_name, op, compute = "SpecialI0EBackward0", "i0e", _precise(F.i0e)
    derivative = staticmethod(lambda x: I1e.apply(x) - sign(x) * I0e.apply(x))


class I1(_RealPointwise):
    backward_name, op, compute = "SpecialI1Backward0", "i1", _precise(F.i1)

    # I1'(x) = I0(x) - I1(x) / x, and 1/2 at 0
    derivative = staticmethod(lambda x: _at_zero_else(x, 0.5, lambda x: I0.apply(x) - I1.apply(x) / x))


class I1e(_RealPointwise):
    backward_name, op, compute = "SpecialI1EBackward0", "i1e", _precise(F.i1e)
    derivative = staticmethod(
        lambda x: _at_zero_else(x, 0.5, lambda x: I0e.apply(x) - I1e.apply(x) * (sign(x) + 1 / x))
    )


def _at_zero_else(x, at_zero: float, formula):
    """``formula(x)``, and ``at_zero`` (its limit) where |x| <= eps of x's dtype, or x is NaN: as torch, which
    takes the formula only where |x| > eps. The formula sees 1 there instead, so that its own derivative, which
    where() multiplies by 0 at those places, is not 0 * inf = nan: the second derivative there is then that of
    the constant, 0, as torch's."""
    at_origin = ~(x.abs() > float(_dtype.float_info(x._data.dtype).eps))
    return where(at_origin, at_zero, formula(where(at_origin, 1.0, x)))


class Ndtri(_RealPointwise):
    backward_name, op, saves = "SpecialNdtriBackward0", "ndtri", "output"
    torch_saved_tensors = {"result": 0}
    compute = _single_or_double("ndtri", _single_by_its_own(F.ndtri_single, F.ndtri))
    derivative = staticmethod(lambda out: math.sqrt(2 * math.pi) * exp(out * out / 2))


_LOG_NDTR = _single_by_its_own(F.log_ndtr_single, F.log_ndtr).__func__


class LogNdtr(Function):
    backward_name = "SpecialLogNdtrBackward0"
    torch_saved_tensors = {"result": 1, "self": 0}

    @staticmethod
    def forward(ctx, x):
        data = float_result(refuse_complex("log_ndtr", require_tensor(x, "log_ndtr")._data))
        refuse_low_precision("log_ndtr", data.dtype)
        out = wrap(np.asarray(quietly(IGNORE_ALL, _LOG_NDTR, data)))
        ctx.save_for_backward(x, out)
        return out

    @staticmethod
    @quiet
    def backward(ctx, grad):
        x, out = ctx.saved_tensors
        return grad / math.sqrt(2 * math.pi) * exp(-(out + x * x / 2))


# ----------------------------------------------------------------- xlogy and xlog1py: tensor or number on each side


class _Binary(Function):
    """A function of two operands, a tensor or a number on either side, broadcast and promoted as torch (always
    floating); ``compute`` maps the two arrays, both of the result's dtype. Both operands are saved."""

    op = ""
    compute = None

    @classmethod
    def forward(cls, ctx, a, b):
        a, b = check_operand(a, cls.op, 1, "input"), check_operand(b, cls.op, 2)
        x, y = refuse_complex(cls.op, _data(a)), refuse_complex(cls.op, _data(b))
        check_broadcast(cls.op, x.shape, y.shape)
        dtype = result_dtype(a, b).np
        if _dtype.kind(dtype) != "f":
            dtype = _dtype.defaults.floating.np
        ctx.save_for_backward(a, b)
        x, y = np.broadcast_arrays(x.astype(dtype), y.astype(dtype))
        return wrap(np.asarray(quietly(IGNORE_ALL, cls.compute, x, y)))


def _xlogy_of(log, single_log_in_double: bool = False):
    """``x * log(y)`` (0 where x is 0, unless y is nan), in the input's precision; for half and bfloat16, as
    torch, the log is rounded to the input's dtype before the product (which is then rounded again). With
    ``single_log_in_double``, a float32 log is the double one rounded (torch's log is; NumPy's single log is a
    unit in the last place off at 10% of the elements)."""

    def compute(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        low, single = x.dtype, np.dtype(np.float32)
        if low == _dtype.HALF or low == _dtype.BF16:
            x, y = x.astype(single), y.astype(single)
            return _xlogy(x, y, log(y).astype(low).astype(single)).astype(low)
        if low == single and single_log_in_double:
            return _xlogy(x, y, log(y.astype(np.float64)).astype(single))
        return _xlogy(x, y, log(y))

    return staticmethod(compute)


def _xlogy(x: np.ndarray, y: np.ndarray, logs: np.ndarray) -> np.ndarray:
    product = x * logs
    return np.where((x == 0) & ~np.isnan(y), np.zeros((), product.dtype), product)


def _entr(v: np.ndarray) -> np.ndarray:
    """-v log(v): as torch, the log rounded to v's dtype first (as xlogy's)."""
    zero, positive = np.zeros((), v.dtype), np.where(v > 0, v, np.ones((), v.dtype))
    product = _xlogy_of(np.log, single_log_in_double=True).__func__(positive, positive)
    return np.where(v > 0, -product, np.where(v == 0, zero, np.where(v < 0, -np.inf, v))).astype(v.dtype, copy=False)


class Entr(_RealPointwise):
    backward_name, op, compute = "SpecialEntrBackward0", "entr", staticmethod(_entr)
    torch_saved_tensors = {"self": 0}
    derivative = staticmethod(lambda x: -(1 + log(x)))


class Xlogy(_Binary):
    """``x * log(y)``, 0 where x is 0 (unless y is nan)."""

    backward_name = "XlogyBackward0"
    torch_saved_tensors = {"other": 1, "self": 0}
    op = "xlogy"
    compute = _xlogy_of(np.log, single_log_in_double=True)
    pole = 0.0  # at y <= pole log(y) is -inf or nan: there a zero x has a zero gradient, as in torch

    @classmethod
    @quiet
    def backward(cls, ctx, grad):
        a, b = ctx.saved_tensors
        needs = ctx.needs_input_grad
        first = second = None
        if needs[0]:
            constant = wrap((_data(a) == 0) & (_data(b) <= cls.pole))
            first = where(constant, 0.0, cls.times_log(grad, b))
        if needs[1]:
            second = grad * a / (b + 1 if cls.pole else b)
        return first, second

    @staticmethod
    def times_log(grad, b):
        return xlogy(grad, b)


def _data(value) -> np.ndarray:
    return value._data if isinstance(value, Tensor) else np.asarray(value)


class XlogyScalarSelf(Xlogy):
    backward_name = "XlogyBackward1"


class XlogyScalarOther(Xlogy):
    backward_name = "XlogyBackward2"


class Xlog1py(Xlogy):
    backward_name = "SpecialXlog1PyBackward0"
    torch_saved_tensors = {"other": 1, "self": 0}
    op = "xlog1py"
    compute = _xlogy_of(np.log1p)
    pole = -1.0

    @staticmethod
    def times_log(grad, b):
        return binary("xlog1py", grad, b, Xlog1py, Xlog1pyScalarSelf, Xlog1pyScalarOther)


class Xlog1pyScalarSelf(Xlog1py):
    backward_name = "SpecialXlog1PyBackward1"


class Xlog1pyScalarOther(Xlog1py):
    backward_name = "SpecialXlog1PyBackward2"


class Zeta(_Binary):
    """The Hurwitz zeta function zeta(x, q); its derivative in x is not implemented (as in torch)."""

    backward_name = "SpecialZetaBackward0"
    op = "zeta"
    compute = _single_or_double("zeta", _precise(F.hurwitz_zeta))

    @staticmethod
    @quiet
    def backward(ctx, grad):
        x, q = ctx.saved_tensors
        if ctx.needs_input_grad[0]:
            raise NotImplementedError("the derivative for 'zeta' is not implemented (with respect to its first "
                                      "argument); detach it, or pass it as a number")
        return None, grad * -x * zeta(x + 1, q) if ctx.needs_input_grad[1] else None


class ZetaScalarSelf(Zeta):
    backward_name = "SpecialZetaBackward1"
    torch_saved_tensors = {"other": 1}
    torch_saved_values = {"self": 0}


class ZetaScalarOther(Zeta):
    backward_name = "SpecialZetaBackward2"


class Igamma(_Binary):
    """The regularized lower incomplete gamma function P(a, x); its derivative in a is not implemented (as torch)."""

    backward_name = "IgammaBackward0"
    torch_saved_tensors = {"other": 1, "self": 0}
    op = "igamma"
    compute = _precise(F.gammainc)
    sign = 1

    @classmethod
    @quiet
    def backward(cls, ctx, grad):
        a, x = ctx.saved_tensors
        if ctx.needs_input_grad[0]:
            raise NotImplementedError(f"the derivative for '{cls.op}: input' is not implemented; detach the first "
                                      "argument (a)")
        return None, grad * (cls.sign * exp((a - 1) * log(x) - x - lgamma(a)))  # x^(a-1) exp(-x) / gamma(a)


class Igammac(Igamma):
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""

    backward_name = "IgammacBackward0"
    torch_saved_tensors = {"other": 1, "self": 0}
    op = "igammac"
    compute = _precise(F.gammaincc)
    sign = -1


def incomplete_gamma(op: str, function: type, input, other, out) -> Tensor:
    a, x = require_tensor(input, op), require_tensor(other, op, 2, "other")
    check_broadcast(op, a._data.shape, x._data.shape)
    dtype = result_dtype(a, x).np
    if _dtype.kind(dtype) != "f":
        raise NotImplementedError(f"\"{op}\" not implemented for '{scalar_type_name(dtype)}'; convert the tensors "
                                  "to floating point first, e.g. a.double()")
    return _out(op, function.apply(a, x), out, a, x)


@ember_function
def igamma(input, other, *, out=None) -> Tensor:
    """The regularized lower incomplete gamma function P(input, other), for input, other >= 0.

    >>> ember.igamma(ember.tensor([1.0, 2.0]), ember.tensor([1.0, 1.0]))
    tensor([0.6321, 0.2642])
    """
    return incomplete_gamma("igamma", Igamma, input, other, out)


@ember_function
def igammac(input, other, *, out=None) -> Tensor:
    """The regularized upper incomplete gamma function Q(input, other) = 1 - P(input, other).

    >>> ember.igammac(ember.tensor([1.0, 2.0]), ember.tensor([1.0, 1.0]))
    tensor([0.3679, 0.7358])
    """
    return incomplete_gamma("igammac", Igammac, input, other, out)


def zeta(input, other) -> Tensor:
    """The Hurwitz zeta function, sum over k >= 0 of (other + k) ** -input; input or other may be a number."""
    return binary("zeta", input, other, Zeta, ZetaScalarSelf, ZetaScalarOther)


def binary(op: str, input, other, both: type, number_self: type, number_other: type) -> Tensor:
    input_is_tensor, other_is_tensor = isinstance(input, Tensor), isinstance(other, Tensor)
    if not input_is_tensor and not other_is_tensor:
        raise TypeError(f"{op}(): expected a Tensor for input or other, got {type(input).__name__} and "
                        f"{type(other).__name__}; make one of them a tensor, e.g. ember.tensor({input!r})")
    if input_is_tensor and other_is_tensor:
        return both.apply(input, other)
    return (number_other if input_is_tensor else number_self).apply(input, other)


# ----------------------------------------------------------------- public functions


@ember_function
def erf(input, *, out=None) -> Tensor:
    """The error function.

    >>> ember.erf(ember.tensor([0.0, 1.0]))
    tensor([0.0000, 0.8427])
    """
    return _out("erf", Erf.apply(input), out, input)


@ember_function
def erfc(input, *, out=None) -> Tensor:
    """1 - erf(input), precise in the right tail.

    >>> ember.erfc(ember.tensor([10.0], dtype=ember.float64))
    tensor([2.0885e-45], dtype=ember.float64)
    """
    return _out("erfc", Erfc.apply(input), out, input)


@ember_function
def erfinv(input, *, out=None) -> Tensor:
    """The inverse of erf on [-1, 1]: +-inf at +-1, nan outside.

    >>> ember.erfinv(ember.tensor([0.0, 0.5]))
    tensor([0.0000, 0.4769])
    """
    return _out("erfinv", Erfinv.apply(input), out, input)


@ember_function
def lgamma(input, *, out=None) -> Tensor:
    """log |gamma(input)|: inf at 0 and the negative integers.

    >>> ember.lgamma(ember.tensor([0.5, 4.0]))
    tensor([0.5724, 1.7918])
    """
    return _out("lgamma", Lgamma.apply(input), out, input)


@ember_function
def digamma(input, *, out=None) -> Tensor:
    """The logarithmic derivative of gamma: -inf at 0, nan at the negative integers.

    >>> ember.digamma(ember.tensor([1.0, 0.5]))
    tensor([-0.5772, -1.9635])
    """
    return _out("digamma", Digamma.apply(input), out, input)


@ember_function
def polygamma(n: int, input, *, out=None) -> Tensor:
    """The n-th derivative of digamma (n = 0 is digamma itself).

    >>> ember.polygamma(1, ember.tensor([1.0]))
    tensor([1.6449])
    """
    return polygamma_as("polygamma", n, input, out)


def polygamma_as(op: str, n, input, out=None) -> Tensor:
    """``polygamma``, whose argument errors name ``op``: torch's special_polygamma and polygamma_ name themselves.
    ``n`` is an int or a 0-d integer tensor."""
    order = whole_number(n, op, "n", 1, zero_dim_only=True)
    if order < 0:
        raise RuntimeError(f"polygamma(n, x) does not support negative n (got n={order}); n counts derivatives from 0")
    return _out("polygamma", Polygamma.apply(order, input), out, input)


@ember_function
def i0(input, *, out=None) -> Tensor:
    """The modified Bessel function of the first kind, order 0.

    >>> ember.i0(ember.tensor([0.0, 1.0]))
    tensor([1.0000, 1.2661])
    """
    return _out("i0", I0.apply(input), out, input)


@ember_function
def mvlgamma(input, p: int, *, out=None) -> Tensor:
    """The log of the multivariate gamma function of dimension ``p``: the sum of lgamma(x - j / 2) for j < p,
    plus p (p - 1) / 4 log(pi). Composed of lgamma, so differentiable to any order.

    >>> ember.mvlgamma(ember.tensor([2.5]), 2)
    tensor([0.8570])
    """
    x = require_tensor(input, "mvlgamma")
    if p < 1:
        raise RuntimeError(f"mvlgamma: p has to be greater than or equal to 1 (got p={p})")
    x = x.contiguous()  # row-major, as torch's result (a sum over a new last dim) of any layout
    total = lgamma(x + 0.0)  # x - 0 / 2 as torch adds it: -0 becomes +0, where digamma (the gradient) is -inf
    for j in range(1, p):
        total = total + lgamma(x - j / 2)
    total = named_node(total + p * (p - 1) / 4 * math.log(math.pi), "MvlgammaBackward0", x)
    return _out("mvlgamma", total, out, input)


@ember_function
def xlogy(input, other, *, out=None) -> Tensor:
    """input * log(other), and 0 where input is 0 (unless other is nan); either may be a number.

    >>> ember.xlogy(ember.tensor([0.0, 2.0]), ember.tensor([0.0, 3.0]))
    tensor([0.0000, 2.1972])
    """
    result = binary("xlogy", input, other, Xlogy, XlogyScalarSelf, XlogyScalarOther)
    return _out("xlogy", result, out, input, other)


def without_gradient(op: str, function, input, out, name: str = "input") -> Tensor:
    """``function`` of ``input``'s values as a tensor that does not require grad (torch has no derivative for
    these, such as modified_bessel_i0); ``name`` is torch's name for the argument."""
    data = float_result(refuse_complex(op, require_tensor(input, op, 1, name)._data))
    refuse_low_precision(op, data.dtype)
    return _out(op, wrap(np.asarray(quietly(IGNORE_ALL, _precise(function).__func__, data))), out, input)


def orthogonal_polynomial(op: str, kind: str, input, n, out, shifted: bool = False) -> Tensor:
    """The polynomial of ``kind`` and degree ``n`` at ``input`` (of 2 input - 1 if ``shifted``); either may be a
    number. Not differentiable, as in torch."""
    if not isinstance(input, Tensor) and not isinstance(n, Tensor):
        raise TypeError(f"{op}(): expected a Tensor for x or n, got {type(input).__name__} and "
                        f"{type(n).__name__}; make one of them a tensor")
    x, n = check_operand(input, op, 1, "x"), check_operand(n, op, 2, "n")
    x_data, n_data = _data(x), _data(n)
    check_broadcast(op, x_data.shape, n_data.shape)
    dtype = result_dtype(x, n).np
    if _dtype.kind(dtype) != "f":
        dtype = _dtype.defaults.floating.np
    if dtype == _dtype.HALF:
        raise NotImplementedError(f"\"{op}\" not implemented for 'Half'; convert the tensor first, e.g. x.float()")
    points = np.asarray(x_data, np.float64)  # in double: near a root, single precision loses most of its digits
    if shifted:
        points = 2 * points - 1
    values = quietly(IGNORE_ALL, F.orthogonal_polynomial, kind, points, n_data)
    return _out(op, wrap(np.asarray(values, dtype)), out, *[v for v in (input, n) if isinstance(v, Tensor)])
