"""Twin tests (ember against torch) for the binary pointwise, comparison and logic ops, beyond the op table:
special values, integer division by zero, in-place forms that keep their tensor's dtype, operators, keyword
forms, recorded graphs, dispatch, and type promotion over every pair of dtypes and numbers (hypothesis).
"""
import operator

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import ember
from twins import both, both_raise, grad_fn_name, leaf, normalise

NAN, INF = float("nan"), float("inf")


def run(expression: str, **extra):
    """``program(lib)`` evaluating ``expression`` over a few tensors of each kind (see the names below)."""

    def program(lib):
        names = {
            "lib": lib, "np": np, "nan": NAN, "inf": INF,
            "f": lib.tensor([5.0, -5.0, 5.0, -5.0, INF, -INF, NAN, 0.0, -0.0, 6.0]),
            "g": lib.tensor([INF, INF, -INF, 0.0, 2.0, 3.0, 1.0, -3.0, 2.0, -3.0]),
            "i": lib.tensor([7, -7, 7, -7, 0, 3]), "j": lib.tensor([2, 2, -2, -2, 5, -4]),
            "u": lib.tensor([0, 1, 200, 255], dtype=lib.uint8), "b": lib.tensor([True, False, True, False]),
            "c": lib.tensor([True, True, False, False]), "h": lib.tensor([0.5, -2.0, 0.0, 65504.0], dtype=lib.float16),
            "i8": lib.tensor([-128, -1, 0, 127], dtype=lib.int8), "i32": lib.tensor([1, -1, 8, -8], dtype=lib.int32),
            "d": lib.tensor([1.5, -2.5, 0.0, 4.0], dtype=lib.float64),
        }
        names.update({k: v(lib) for k, v in extra.items()})
        return eval(expression, names)

    return program


def outcome(program, lib):
    try:
        return program(lib)
    except Exception as error:  # compared by type with the other library's
        return type(error)


def same_outcome(expression: str):
    """The same values and dtypes as torch, or an error of the same type."""
    same_program_outcome(run(expression))


def same_program_outcome(program):
    expected = outcome(program, torch)
    if isinstance(expected, type):
        with pytest.raises(expected):
            program(ember)
    else:
        both(program, prepare=normalise)


# ----------------------------------------------------------------- special values

SPECIAL_VALUES = [
    # remainders: the sign of the divisor (remainder) or of the dividend (fmod); infinities and zeros
    "f % g", "lib.remainder(f, g)", "lib.fmod(f, g)", "f // g", "lib.floor_divide(f, g)", "lib.remainder(f, 0.0)",
    "lib.fmod(f, -0.0)", "lib.remainder(-3.5, g)", "f % -inf", "lib.fmod(f, inf)", "h % 0.3", "lib.fmod(h, h)",
    "i % j", "i // j", "lib.fmod(i, j)", "lib.remainder(i, -3)", "lib.fmod(i, -3)", "-7 % j", "7 // j",
    "i % 2.5", "lib.fmod(i, 2.5)", "i // 2.5", "u % 7", "u // 7", "lib.remainder(u, 300)", "i8 % 3", "i8 // -1",
    # atan2, hypot, logaddexp at infinities and nan; copysign of zeros
    "lib.atan2(f, g)", "lib.atan2(i, j)", "lib.atan2(b, c)", "lib.hypot(f, g)", "lib.hypot(h, h)",
    "lib.logaddexp(f, g)", "lib.logaddexp2(f, g)", "lib.logaddexp(h, h)", "lib.copysign(f, g)",
    "lib.copysign(g, -0.0)", "lib.copysign(i, j)", "lib.copysign(b, b)", "lib.copysign(u, -1)", "lib.copysign(h, -1.0)",
    "lib.nextafter(f, g)", "lib.nextafter(h, h + 1)", "lib.float_power(f, g)", "lib.float_power(i, -2)",
    "lib.float_power(b, 2)", "lib.float_power(2, i)", "lib.float_power(i, j)",
    # heaviside: nan is not > 0
    "lib.heaviside(f, g)", "lib.heaviside(i, j)", "lib.heaviside(b, c)",
    # nan_to_num: the dtype's extremes by default, replacements beyond its range become inf
    "lib.nan_to_num(f)", "lib.nan_to_num(h)", "lib.nan_to_num(f.double())", "lib.nan_to_num(f, nan=1e39)",
    "lib.nan_to_num(f, posinf=1e300, neginf=-1e300)", "lib.nan_to_num(f, 1.0, 2.0, 3.0)", "lib.nan_to_num(i)",
    "lib.nan_to_num(b)", "f.nan_to_num(neginf=0)",
    # lerp: exact at both ends, also in half; negative weights and weights above 1
    "lib.lerp(f[:4], g[:4], 1.0)", "lib.lerp(d, d * 3, 0.0)", "lib.lerp(d, d * 3, -1.5)", "lib.lerp(h, h * 2, 0.75)",
    "lib.lerp(d, d * 3, lib.tensor([0.0, 0.5, 1.0, 2.0], dtype=lib.float64))",
    # addcmul and addcdiv: value scales integers by its integer part; integer division refused
    "lib.addcmul(i, i, j, value=2.5)", "lib.addcmul(i, i, j, value=True)", "lib.addcmul(d, d, d, value=-1)",
    "lib.addcmul(i, d[:1], j)", "lib.addcdiv(d, d, d + 1, value=2)", "lib.addcdiv(d, i[:4], j[:4])",
    "lib.addcdiv(i, i, j)", "lib.addcmul(b, b, b)", "lib.addcmul(h, h, h, value=0.1)",
    # shifts beyond the width: 0, or the sign to the right
    "i << j", "i >> j", "i8 << 9", "i8 >> 9", "i8 >> -1", "u << 9", "u >> 8", "u << -1", "i32 << 31", "i32 >> 40",
    "1 << j", "-1 >> j", "b << 1", "b >> b", "f << 1", "i << 1.5",
    # bitwise ops: bools stay bool; numbers on either side; floats refused
    "b & c", "b | c", "b ^ c", "~b", "~i", "~u", "b & 1", "3 | b", "i & j", "u ^ 255", "i8 | -1", "i & True",
    "5 ^ j", "lib.bitwise_and(6, j)", "lib.bitwise_not(i8)", "f & f", "i & 1.5", "~f", "lib.bitwise_not(f)",
    # logic: any dtypes, bool results
    "lib.logical_and(f, i[:1])", "lib.logical_or(b, u)", "lib.logical_xor(f, g)", "lib.logical_not(f)",
    "lib.logical_not(u)",
    # classification
    "lib.isnan(f)", "lib.isinf(f)", "lib.isposinf(f)", "lib.isneginf(f)", "lib.isfinite(f)", "lib.isreal(f)",
    "lib.isnan(i)", "lib.isfinite(b)", "lib.isinf(h * 2)", "lib.isposinf(u)",
    # closeness: nan only with equal_nan, infinities of one sign, integers compared exactly without tolerance
    "lib.isclose(f, f)", "lib.isclose(f, f, equal_nan=True)", "lib.isclose(f, g)", "lib.isclose(f, -f)",
    "lib.isclose(i, i + 1, atol=1)", "lib.isclose(i, i + 1, rtol=0.2)", "lib.isclose(i, i, rtol=0, atol=0)",
    "lib.isclose(b, c)", "lib.isclose(d, d + 1e-9)", "lib.isclose(d, d + 1e-6, rtol=0)", "lib.isclose(h, h + 0.01)",
    "lib.isclose(u, u + 1, atol=1)", "lib.isclose(f, i)", "lib.isclose(f, f, rtol=-1)", "lib.isclose(f, f, atol=-1)",
    # membership: numbers on either side, mixed dtypes
    "lib.isin(i, j)", "lib.isin(i, 7)", "lib.isin(7, i)", "lib.isin(f, g)", "lib.isin(i, d)", "lib.isin(b, c[:1])",
    "lib.isin(i, j, invert=True)", "lib.isin(i, j, assume_unique=True)", "lib.isin(i.view(2, 3), j)",
    # the existing division and subtraction, audited: rounding modes, integers, bools, numbers on either side
    "lib.div(f, g, rounding_mode='trunc')", "lib.div(f, g, rounding_mode='floor')",
    "lib.div(i, 2.5, rounding_mode='floor')",
    "lib.div(i, -2.5, rounding_mode='trunc')", "lib.div(h, 3, rounding_mode='trunc')",
    "lib.div(h, 0.3, rounding_mode='floor')",
    "lib.div(u, 3, rounding_mode='floor')", "lib.div(i8, -1, rounding_mode='trunc')", "lib.div(b, b)", "lib.div(7, j)",
    "lib.div(i, 2, rounding_mode='round')", "lib.div(i, 2, rounding_mode=None)", "lib.true_divide(b, c)",
    "lib.true_divide(7, j)", "lib.sub(u, 300)", "lib.sub(i, 2.5)", "lib.sub(i8, 200)", "lib.rsub(i, 2.5)",
    "lib.rsub(i, 2, alpha=3)", "lib.rsub(f, g, alpha=0.5)", "lib.rsub(b, 1)", "lib.rsub(u, 300)", "lib.rsub(i, j)",
    "2.5 - i", "True - i", "lib.subtract(i, j, alpha=2.5)", "lib.multiply(i, 2.5)", "lib.multiply(b, b)",
    # half precision and mixed dtypes in the new ops
    "lib.remainder(h, 2.0)", "lib.fmod(h, 0.3)", "h // 0.3", "lib.float_power(h, 2)", "lib.floor_divide(b, b)",
    "lib.floor_divide(i, True)", "lib.floor_divide(-4.5, 2.0)", "lib.floor_divide(7, 2)", "lib.floor_divide(7, 0.5)",
    "lib.remainder(i8, 200)", "lib.fmod(u, -1)", "lib.atan2(h, h)", "lib.copysign(h, 2)",
    "lib.hypot(f, f.double())", "lib.logaddexp(h, f)", "lib.heaviside(f, g[0])", "lib.lerp(h, h, 0.3)",
    "lib.addcmul(h, h, h)", "lib.addcdiv(h, h, h + 1)", "lib.isin(f, 5.0)", "lib.isin(u, -1)", "lib.isclose(h, h)",
    "lib.allclose(f, g)", "lib.allclose(f, f, equal_nan=True)", "lib.isclose(f, g, rtol=1, atol=inf)",
    "lib.bitwise_and(u, 300)", "lib.bitwise_or(i8, 200)", "lib.bitwise_xor(u, -1)", "u << 300", "i8 >> 200",
    "lib.nan_to_num(f, nan=True)", "lib.nan_to_num(h, posinf=1e6)", "lib.nan_to_num(i, nan=2.5)",
    # frexp and signbit: zeros of both signs, infinities, nan, subnormals, half; named results
    "tuple(lib.frexp(f))", "tuple(lib.frexp(d / 1e308))", "tuple(lib.frexp(h))", "tuple(lib.frexp(h * 1e-4))",
    "lib.frexp(i)", "tuple(f.frexp())", "lib.frexp(d).mantissa", "lib.frexp(d)[1]", "lib.frexp(x=d).exponent",
    "tuple(lib.frexp(d, out=(lib.empty(4, dtype=lib.float64), lib.empty(4, dtype=lib.int32))))",
    "lib.frexp(d, out=(lib.empty(4), lib.empty(4, dtype=lib.int32)))[0]", "type(lib.frexp(d)).__name__",
    "lib.frexp(d, out=(lib.empty(4, dtype=lib.float64), lib.empty(4, dtype=lib.long)))[0]",
    "lib.signbit(f)", "lib.signbit(-f)", "lib.signbit(i)", "lib.signbit(u)", "lib.signbit(b)", "lib.signbit(h)",
    "lib.signbit(f, out=lib.empty(10, dtype=lib.bool))", "d.signbit()",
    # ldexp, gcd and lcm: overflow, zeros, signs, the most negative integer
    "lib.ldexp(f, g)", "lib.ldexp(d, lib.tensor([2000, -2000, 1, 0]))", "lib.ldexp(i, j)", "lib.ldexp(h, i8)",
    "lib.ldexp(b, c)", "lib.ldexp(f[:4], d)", "lib.gcd(i, j)", "lib.lcm(i, j)", "lib.gcd(i8, i8 * 0)",
    "lib.lcm(i8, lib.tensor([3, 3, 3, 3], dtype=lib.int8))", "lib.lcm(lib.tensor([2 ** 40]), lib.tensor([3 ** 20]))",
    "lib.gcd(u, i8)", "lib.gcd(b, c)", "lib.gcd(f, g)", "lib.lcm(i, 3)",
    "lib.gcd(i, j, out=lib.empty(6, dtype=lib.long))",
    # equal: any dtypes, shapes must agree, tensors only
    "lib.equal(i, 2)", "lib.equal(2, i)", "lib.equal(h, h.float())", "lib.equal(lib.tensor([]), lib.tensor([]))",
    "lib.equal(i, i.double())", "lib.equal(f, f)", "lib.equal(i, j)", "lib.equal(i, i[:1])", "lib.equal(b, b)",
]


@pytest.mark.parametrize("expression", SPECIAL_VALUES)
def test_special_values_match_torch(expression):
    with np.errstate(all="ignore"):
        same_outcome(expression)


@pytest.mark.parametrize("expression", [
    "a % b", "a // b", "lib.fmod(a, b)", "lib.div(a, b, rounding_mode='trunc')", "lib.remainder(a, 3.0)",
    "lib.remainder(-0.0, b)", "lib.copysign(a, b)", "lib.nextafter(a, -a)", "lib.atan2(a, b)", "lib.lerp(a, b, 0.5)",
    "a.half() % b.half()", "lib.nan_to_num(a / b)", "lib.heaviside(a, b)",
])
def test_signs_of_zeros_are_torchs(expression):
    """-0.0 where torch has -0.0 (a zero remainder keeps the dividend's sign, as torch's fmod-based %)."""

    def program(lib):
        a = lib.tensor([-6.0, 6.0, -6.0, 6.0, 0.0, -0.0, -0.5, 0.5, 0.0, -0.0])
        b = lib.tensor([3.0, -3.0, -3.0, 3.0, -3.0, 3.0, 3.0, -3.0, 0.0, -0.0])
        result = eval(expression, {"lib": lib, "a": a, "b": b})
        return np.signbit(result.numpy()), result

    with np.errstate(all="ignore"):
        both(program)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "int32", "int64"])
def test_gcd_and_lcm_of_every_small_pair_are_torchs(dtype):
    """Every pair of 8-bit values (scaled up for wider dtypes): wrapped multiples and the most negative integer."""

    def program(lib):
        values = np.arange(0, 256) if dtype == "uint8" else np.arange(-128, 128)
        a, b = (v.ravel().astype(dtype) for v in np.meshgrid(values, values))
        if dtype in ("int32", "int64"):
            a = a * (2 ** 20 if dtype == "int32" else 2 ** 40) + 7
            a[0] = np.iinfo(dtype).min
        x, y = lib.from_numpy(a), lib.from_numpy(b)
        return lib.gcd(x, y), lib.lcm(x, y)

    with np.errstate(all="ignore"):
        both(program)


# ----------------------------------------------------------------- integer division by zero

@pytest.mark.parametrize("expression", [
    "i // 0", "i % 0", "lib.fmod(i, 0)", "lib.remainder(i, j * 0)", "lib.floor_divide(i, 0)", "7 % (j * 0)",
    "7 // (j * 0)", "lib.div(i, 0, rounding_mode='floor')", "lib.div(i, 0, rounding_mode='trunc')", "u % 0",
    "i.clone().remainder_(0)", "i.clone().__ifloordiv__(0)",
])
def test_integer_division_by_zero_raises_as_torch(expression):
    both_raise(run(expression), RuntimeError, "ZeroDivisionError")


@pytest.mark.parametrize("expression", ["i / 0", "lib.true_divide(i, j * 0)", "f // 0", "lib.fmod(f, 0)"])
def test_float_division_by_zero_is_quiet_inf_and_nan(expression):
    with np.errstate(all="raise"):
        same_outcome(expression)


# ----------------------------------------------------------------- in-place forms and operators

INPLACE = [
    # the operators' in-place forms
    "x %= y", "x //= y", "x %= 2", "x //= -2", "n %= m", "n //= m", "n &= m", "n |= m", "n ^= m", "n <<= m",
    "n >>= m", "n &= 6", "n <<= 1", "p &= q", "p |= q", "p ^= q", "x &= y", "n %= 2.5",
    # in-place methods of integer-only ops
    "n.bitwise_and_(m)", "n.bitwise_or_(3)", "n.bitwise_xor_(m)", "n.bitwise_not_()", "p.bitwise_not_()",
    "n.bitwise_left_shift_(m)", "n.bitwise_right_shift_(2)", "x.bitwise_not_()", "n.gcd_(m)", "n.lcm_(m)",
    "x.gcd_(y)", "x.ldexp_(m)", "n.ldexp_(m)",
    # in-place forms that keep their tensor's dtype (the out-of-place op gives bools)
    "x.logical_and_(y)", "x.logical_or_(n)", "x.logical_xor_(y)", "x.logical_not_()", "n.logical_not_()",
    "n.logical_and_(p)", "x.eq_(y)", "x.ne_(1.5)", "x.lt_(y)", "x.le_(y)", "x.gt_(0)", "x.ge_(y)", "x.greater_(y)",
    "x.greater_equal_(y)", "x.less_(y)", "x.less_equal_(y)", "x.not_equal_(y)", "n.eq_(m)", "n.lt_(2.5)",
    # in-place forms of ops torch cannot differentiate, and of ops that need a dtype of their own
    "x.floor_divide_(y)", "n.floor_divide_(m)", "x.heaviside_(y)", "n.heaviside_(m)", "x.float_power_(2)",
    "w.float_power_(2)", "w.float_power_(x)", "n.atan2_(m)", "x.copysign_(-1)", "n.copysign_(m)",
    "x.nan_to_num_(nan=1.0)",
    "n.remainder_(2.5)", "x.divide_(y)", "n.divide_(m, rounding_mode='trunc')", "n.subtract_(m, alpha=2)",
    "x.multiply_(y)", "x.true_divide_(y)", "x.lerp_(y, 0.25)", "x.lerp_(y, y)", "x.addcmul_(y, y, value=2)",
    "x.addcdiv_(y, y, value=-1)", "x.fmod_(y)", "x.hypot_(y)", "x.arctan2_(y)", "x.nextafter_(y)",
    "x[0].logical_not_()", "x.t().eq_(y.t())",
]


@pytest.mark.parametrize("statement", INPLACE)
def test_inplace_forms_match_torch(statement):
    """The changed tensor (values and dtype) is torch's, it is the same object, and its version moved."""

    def program(lib):
        names = {
            "x": lib.tensor([[1.5, -2.0, 0.0], [3.0, -0.5, 2.0]]), "y": lib.tensor([[2.0, 2.0, 1.0], [-1.0, 1.5, 0.0]]),
            "w": lib.tensor([[1.5, 2.0, 0.5], [3.0, 0.5, 2.0]], dtype=lib.float64),
            "n": lib.tensor([[5, -6, 7], [-8, 9, 3]]), "m": lib.tensor([[2, 3, -2], [1, 4, 2]]),
            "p": lib.tensor([[True, False, True], [False, True, False]]), "q": lib.tensor([True, True, False]),
        }
        target = statement.split(".")[0].split()[0].split("[")[0]
        before = names[target]
        version = before._version
        exec(statement, {"lib": lib}, names)
        after = names[target]
        return after, after is before, after._version > version

    same_program_outcome(program)


@pytest.mark.parametrize("statement", [
    "x.eq_(y)", "x.eq_(1.0)", "x.ne_(y)", "x.lt_(0)", "x.le_(y)", "x.gt_(y)", "x.ge_(2)", "x.greater_(y)",
    "x.greater_equal_(0.5)", "x.less_(y)", "x.less_equal_(y)", "x.not_equal_(2)", "x[0].eq_(y[0])",
])
def test_comparisons_in_place_keep_the_tensor_in_the_graph_as_torch(statement):
    """torch records x.eq_(y) on a tensor in the graph (EqBackward1 for a tensor y, ...0 for a number): zero
    gradients flow to x's inputs and to y, where ember would otherwise cut x out of the graph."""

    def program(lib):
        leaf_x, y = leaf(lib, [1.5, -2.0, 0.5]), leaf(lib, [2.0, -2.0, 0.0])
        x = leaf_x * 1
        exec(statement, {}, {"x": x, "y": y})
        x.sum().backward()
        return x.detach(), grad_fn_name(x), leaf_x.grad, y.grad if y.grad is not None else "none"

    both(program, prepare=normalise)


@pytest.mark.parametrize("statement", [
    "l.logical_and_(y)", "l.logical_not_()", "x.logical_or_(y)", "x.logical_xor_(y)", "x.logical_not_()",
    "x[0].logical_not_()", "x.logical_and_(l)",
])
def test_logical_ops_in_place_are_not_recorded_as_torch(statement):
    """torch records no node for logical_and_ and its kin, and refuses none: a leaf that requires grad stays one,
    and a result keeps its node, through which the gradient then flows as if nothing had changed."""

    def program(lib):
        l, y = leaf(lib, [1.5, 0.0, -2.0]), lib.tensor([2.0, 1.0, 0.0], dtype=lib.float64)
        x = l * 3
        names = {"l": l, "x": x, "y": y}
        exec(statement, {}, names)
        x.sum().backward()
        return l.detach(), l.is_leaf, l.requires_grad, x.detach(), grad_fn_name(x), x._version, l.grad

    both(program, prepare=normalise)


def test_float_power_in_place_needs_a_double_as_torch():
    both_raise(lambda lib: lib.ones(2).float_power_(2), RuntimeError, "float_power_", "Double")


# ----------------------------------------------------------------- gradients torch does not have

@pytest.mark.parametrize("expression", [
    "lib.floor_divide(x, y)", "x // 2", "3 // x", "lib.remainder(2.5, x)", "3 % x", "lib.heaviside(x, y)",
])
def test_backward_through_ops_without_a_derivative_fails_as_torch(expression):
    """torch records these ops (the result requires grad) but cannot differentiate them: neither can ember."""

    def program(lib):
        x = leaf(lib, [1.5, -2.5, 3.0])
        y = leaf(lib, [2.0, 0.5, -1.0])
        out = eval(expression, {"lib": lib, "x": x, "y": y})
        assert out.requires_grad and grad_fn_name(out) == "NotImplemented"
        out.sum().backward()

    both_raise(program, RuntimeError, "derivative for aten::")


SPECIAL_GRADIENTS = [
    ("lib.atan2(x, y)", [0.0, 1.0, -1.0], [0.0, 0.0, -2.0]), ("lib.hypot(x, y)", [0.0, 3.0, INF], [0.0, 4.0, 1.0]),
    ("lib.copysign(x, y)", [0.5, -0.5, 2.0], [-1.0, 1.0, -0.0]), ("lib.copysign(x, -1.0)", [3.0, -0.5, 2.0], [1.0] * 3),
    ("lib.nan_to_num(x * y)", [NAN, INF, 1.0], [1.0, 1.0, -INF]), ("lib.logaddexp(x, y)", [-INF, 1.0, 0.0], [0.0] * 3),
    ("x % y", [5.0, -5.0, 5.5], [2.0, 2.0, -2.0]), ("lib.fmod(x, y)", [5.0, -5.0, 5.5], [2.0, 2.0, -2.0]),
    ("lib.lerp(x, y, 0.5)", [1.0, 2.0, 3.0], [3.0, 2.0, 1.0]),
    ("lib.float_power(x, y)", [1.0, 2.0, 4.0], [2.0, 0.0, -0.5]),
    ("lib.addcdiv(x, x, y)", [1.0, 2.0, 0.0], [0.5, 0.0, 2.0]),
    ("lib.nextafter(x, y)", [1.0, 0.0, -1.0], [2.0, -1.0, 0.0]),
    ("lib.frexp(x * y).mantissa", [0.0, 1e-310, 1e300], [1.0, 1.0, -1.0]),
    ("lib.frexp(x).mantissa * y", [INF, -0.0, 3.0], [1.0, 2.0, 0.5]),
]


@pytest.mark.parametrize("expression, xs, ys", SPECIAL_GRADIENTS)
def test_gradients_at_special_points_match_torch(expression, xs, ys):
    """Zeros, infinities and nans: the values, first and second derivatives are torch's (nan where torch's are)."""

    def program(lib):
        x, y = leaf(lib, xs), leaf(lib, ys)
        out = eval(expression, {"lib": lib, "x": x, "y": y})
        grads = lib.autograd.grad(out.sum(), (x, y), create_graph=True, allow_unused=True)
        grads = [lib.zeros_like(x) if g is None else g for g in grads]
        seconds = []
        for g in grads:  # a gradient that does not require grad is constant: its derivatives are zeros
            second = [None, None]
            if g.requires_grad:
                second = lib.autograd.grad(g.sum(), (x, y), retain_graph=True, allow_unused=True)
            seconds.append([lib.zeros_like(x) if s is None else s for s in second])
        return out.detach(), grads, seconds

    with np.errstate(all="ignore"):
        both(program)


def test_copysign_gradient_at_zero_is_torchs():
    """At x = 0 torch's gradient is 0 (its ratio result / x, masked); the second derivative there is nan in torch,
    an artefact of that ratio, and 0 in ember, which saves the ratio as a constant (the slope of +-x is constant)."""

    def program(lib):
        x = leaf(lib, [0.0, -0.0, 2.0])
        (grad,) = lib.autograd.grad(lib.copysign(x, lib.tensor([-1.0, 1.0, -0.0], dtype=lib.float64)).sum(), x)
        return grad

    both(program)


@pytest.mark.parametrize("expression", [
    "lib.lerp(a, a * 2, w)", "lib.atan2(a, b)", "lib.hypot(a, b)", "lib.logaddexp(a, b)", "lib.copysign(a, b)",
    "a % b", "lib.fmod(a, b)", "lib.addcmul(a, a, b, value=0.5)", "lib.addcdiv(b, a, b)", "lib.float_power(a, b)",
    "lib.nextafter(a, b)", "lib.lerp(w, w * 3, w)", "lib.ldexp(a, b)",
])
def test_mixed_precision_gradients_have_each_inputs_dtype(expression):
    """float32 with float64 (a 0-d lerp weight too): the result and each input's gradient as torch's."""

    def program(lib):
        a = lib.tensor([1.5, -2.0, 0.75], requires_grad=True)
        b = lib.tensor([0.5, 3.0, -1.25], dtype=lib.float64, requires_grad=True)
        w = lib.tensor(0.25, dtype=lib.float64, requires_grad=True)
        names = {"lib": lib, "a": a, "b": b, "w": w}
        out = eval(expression, names)
        leaves = [t for t in (a, b, w) if t.requires_grad]
        grads = lib.autograd.grad(out.sum(), leaves, allow_unused=True)
        return out, [lib.zeros(1) if g is None else g for g in grads]

    both(program)


def test_ldexp_slope_with_negative_integer_exponents_is_two_to_the_exponent():
    """A deliberate difference: torch's gradient of ldexp(x, n) is 0 where the integer n is negative (it computes
    2 ** n in integers); ember's is 2 ** n, the slope of x * 2 ** n, and torch's where n >= 0."""
    x = ember.tensor([1.5, -2.0, 3.0], dtype=ember.float64, requires_grad=True)
    ember.ldexp(x, ember.tensor([-1, 0, 2])).sum().backward()
    assert x.grad.tolist() == [0.5, 1.0, 4.0]
    assert ember.autograd.gradcheck(lambda t: ember.ldexp(t, ember.tensor([-1, 0, 2])), (x,))
    t = torch.tensor([1.5, -2.0, 3.0], dtype=torch.float64, requires_grad=True)
    torch.ldexp(t, torch.tensor([-1, 0, 2])).sum().backward()
    assert t.grad.tolist()[1:] == [1.0, 4.0]


@pytest.mark.parametrize("expression", [
    "lib.hypot(x, c)", "lib.hypot(c, x)", "lib.ldexp(x, c)", "lib.addcmul(x, x, c)", "lib.addcdiv(x, c, x)",
    "lib.lerp(x, c, 0.5)", "lib.lerp(x, x * 2, c)", "lib.copysign(x, c)", "x % c", "lib.fmod(x, c)",
    "lib.float_power(x, c)", "lib.atan2(x, c)", "lib.logaddexp(x, c)",
])
def test_a_constant_operand_may_change_after_the_forward_where_torch_allows(expression):
    """Only what the needed gradients use is saved: changing an operand that needs no gradient in place after the
    forward is fine where it is fine in torch, and an error where torch's formula needs it."""

    def program(lib):
        x = leaf(lib, [1.5, -2.0, 0.5])
        c = lib.tensor([2.0, 3.0, -1.0], dtype=lib.float64)
        out = eval(expression, {"lib": lib, "x": x, "c": c})
        c.add_(1)
        try:
            (grad,) = lib.autograd.grad(out.sum(), x)
        except RuntimeError:
            return "modified"
        return grad

    both(program)


# ----------------------------------------------------------------- recorded graphs and dispatch

@pytest.mark.parametrize("expression", [
    "x % 2", "x % p", "lib.fmod(x, 2)", "lib.fmod(x, p)", "lib.lerp(x, p, 0.5)", "lib.lerp(x, p, p)",
    "lib.copysign(x, 2)", "lib.copysign(x, p)", "lib.addcmul(x, p, p)", "lib.addcdiv(p, x, p, value=2)",
    "lib.atan2(x, p)", "lib.hypot(x, x)", "lib.logaddexp(p, x)", "lib.nan_to_num(x)", "lib.float_power(x, 2)",
    "lib.float_power(2, x)", "lib.float_power(x, p)", "lib.nextafter(x, p)", "lib.logaddexp2(x, x)",
])
def test_recorded_graph_has_torchs_nodes_and_edges(expression):
    def program(lib):
        x, p = lib.ones(2, 2, dtype=lib.float64, requires_grad=True), lib.ones(2, 2, dtype=lib.float64)
        fn = eval(expression, {"lib": lib, "x": x, "p": p}).grad_fn
        return fn.name(), [(None if f is None else f.name().replace("torch::autograd::", ""), nr)
                                  for f, nr in fn.next_functions]

    both(program)


OPERATORS = ["a % b", "a // b", "a & b", "a | b", "a ^ b", "a << b", "a >> b", "2 % a", "2 // a", "2 & a", "2 | a",
             "2 ^ a", "2 << a", "2 >> a", "~a", "a / b", "a.__div__(b)", "a.__rdiv__(2)"]


@pytest.mark.parametrize("expression", OPERATORS)
def test_operators_hand_handlers_what_torch_hands(expression):
    """A subclass's __torch_function__ sees the function torch's does for each operator."""

    def program(lib):
        seen = []

        class Sub(lib.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                seen.append(func.__name__)
                return super().__torch_function__(func, types, args, kwargs or {})

        a, b = lib.tensor([6, 7]).as_subclass(Sub), lib.tensor([2, 3])
        result = eval(expression, {"a": a, "b": b})
        return seen[0], type(result).__name__ == "Sub", result.as_subclass(lib.Tensor)

    both(program)


@pytest.mark.parametrize("expression", ["a % 'x'", "a // 'x'", "a & 'x'", "a | None", "a ^ [1]", "a << 'x'",
                                        "'x' >> a"])
def test_operators_with_operands_they_cannot_take_raise_type_errors(expression):
    both_raise(lambda lib: eval(expression, {"a": lib.tensor([6, 7])}), TypeError)


# ----------------------------------------------------------------- keyword forms and out=

KEYWORDS = [
    "lib.remainder(input=f, other=2.0)", "lib.fmod(input=i, other=3)", "lib.floor_divide(input=i, other=j)",
    "lib.float_power(input=i, exponent=2)", "lib.atan2(input=f, other=g)", "lib.arctan2(input=f, other=g)",
    "lib.lerp(input=d, end=d * 2, weight=0.5)", "lib.addcmul(d, tensor1=d, tensor2=d, value=3)",
    "lib.addcdiv(input=d, tensor1=d, tensor2=d + 1, value=0.5)", "lib.hypot(input=d, other=d)",
    "lib.logaddexp(input=d, other=d)", "lib.logaddexp2(input=d, other=d)", "lib.nan_to_num(input=f, nan=1.0)",
    "lib.nan_to_num_(f, posinf=2.0)", "lib.nan_to_num_(i)", "lib.nan_to_num_(input=f)",
    # NumPy's names, which torch takes too
    "lib.remainder(x1=f, x2=g)", "lib.atan2(x=f, other=g)", "f.remainder(x2=g)", "f.clone().fmod_(x2=g)",
    "lib.isnan(x=f)", "lib.logical_not(a=f)", "i.clone().bitwise_and_(x2=j)", "lib.lerp(x1=d, end=d, weight=0.5)",
    "lib.float_power(a=d, exponent=2)", "lib.greater(x1=f, x2=g)", "f.clone().greater_(x2=g)", "d.allclose(x2=d)",
    "lib.isin(x=f, test_elements=g)", "lib.heaviside(f, x2=g)", "d.lerp(x2=d, weight=0.5)", "lib.float_power(d, x2=d)",
    "lib.copysign(input=d, other=-1)", "lib.heaviside(input=f, values=g)", "lib.bitwise_left_shift(input=i, other=1)",
    "lib.bitwise_right_shift(input=i, other=1)", "lib.isclose(input=f, other=g, rtol=0.1, atol=0.1, equal_nan=True)",
    "lib.allclose(input=d, other=d, rtol=0.0, atol=0.0, equal_nan=False)", "lib.isnan(input=f)",
    "lib.isin(elements=i, test_elements=j, assume_unique=False, invert=True)", "lib.logical_and(input=b, other=c)",
    "lib.logical_not(input=b)", "lib.bitwise_and(input=i, other=j)", "lib.bitwise_not(input=i)",
    "lib.isposinf(input=f)", "lib.divide(input=i, other=j, rounding_mode='floor')",
    "lib.subtract(input=i, other=j, alpha=2)", "lib.multiply(input=i, other=j)", "lib.nextafter(input=d, other=d)",
    "d.lerp(end=d, weight=d)", "d.addcmul(tensor1=d, tensor2=d, value=2)", "f.isclose(other=g, equal_nan=True)",
    "d.allclose(other=d)", "f.nan_to_num(posinf=1.0)", "i.remainder(other=j)", "i.bitwise_xor(other=j)",
    "f.heaviside(values=g)", "lib.remainder(f, g, out=lib.empty(10))", "lib.atan2(i, j, out=lib.empty(6))",
    "lib.logical_and(i, j, out=lib.empty(6))", "lib.logical_or(i, j, out=lib.empty(6, dtype=lib.int64))",
    "lib.bitwise_and(i, j, out=lib.empty(6, dtype=lib.int64))", "lib.isposinf(f, out=lib.empty(10, dtype=lib.bool))",
    "lib.lerp(d, d, 0.5, out=lib.empty(4, dtype=lib.float64))", "lib.isclose(input=f, other=g, out=None)",
    "lib.nan_to_num(f, out=lib.empty(10))", "lib.bitwise_and(i, j, out=lib.empty(6))",
]


@pytest.mark.parametrize("expression", KEYWORDS)
def test_keyword_forms_match_torch(expression):
    with np.errstate(all="ignore"):
        same_outcome(expression)


# ----------------------------------------------------------------- type promotion

DTYPES = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64")


@st.composite
def operands(draw):
    """A tensor of any dtype (0-d or not), or a Python bool, int or float: (ember value, torch value)."""
    kind = draw(st.sampled_from(("tensor", "tensor", "tensor", "bool", "int", "float")))
    if kind == "bool":
        value = draw(st.booleans())
        return value, value
    if kind == "int":
        value = draw(st.sampled_from((3, -2, 300)))
        return value, value
    if kind == "float":
        value = draw(st.sampled_from((0.5, 2.0, -1.5)))
        return value, value
    dtype = draw(st.sampled_from(DTYPES))
    data = np.full(draw(st.sampled_from(((), (2,)))), draw(st.sampled_from((3, 1))), dtype=dtype)
    return ember.from_numpy(data.copy()), torch.from_numpy(data.copy())


PROMOTED = {
    "%": operator.mod, "//": operator.floordiv, "&": operator.and_, "|": operator.or_, "^": operator.xor,
    "<<": operator.lshift, ">>": operator.rshift,
    "remainder": lambda a, b: _lib(a, b).remainder(a, b), "fmod": lambda a, b: _lib(a, b).fmod(a, b),
    "floor_divide": lambda a, b: _lib(a, b).floor_divide(a, b),
    "float_power": lambda a, b: _lib(a, b).float_power(a, b),
    "atan2": lambda a, b: _lib(a, b).atan2(a, b), "hypot": lambda a, b: _lib(a, b).hypot(a, b),
    "logaddexp": lambda a, b: _lib(a, b).logaddexp(a, b), "copysign": lambda a, b: _lib(a, b).copysign(a, b),
    "nextafter": lambda a, b: _lib(a, b).nextafter(a, b), "ldexp": lambda a, b: _lib(a, b).ldexp(a, b),
    "gcd": lambda a, b: _lib(a, b).gcd(a, b), "heaviside": lambda a, b: _lib(a, b).heaviside(a, b),
    "bitwise_and": lambda a, b: _lib(a, b).bitwise_and(a, b),
    "bitwise_left_shift": lambda a, b: _lib(a, b).bitwise_left_shift(a, b),
    "logical_xor": lambda a, b: _lib(a, b).logical_xor(a, b), "isclose": lambda a, b: _lib(a, b).isclose(a, b),
    "isin": lambda a, b: _lib(a, b).isin(a, b),
    "divide_floor": lambda a, b: _lib(a, b).divide(a, b, rounding_mode="floor"),
    "lerp": lambda a, b: _lib(a, b).lerp(a, a, b), "addcmul": lambda a, b: _lib(a, b).addcmul(a, a, b, value=2),
}


def _lib(*values):
    return torch if any(isinstance(v, torch.Tensor) for v in values) else ember


def _result_or_error(op, a, b):
    try:
        return op(a, b)
    except (RuntimeError, NotImplementedError, TypeError) as error:
        return type(error)


@settings(max_examples=300, deadline=None)
@given(operands(), operands(), st.sampled_from(sorted(PROMOTED)))
def test_type_promotion_matches_torch(a, b, name):
    """Each op's dtype and values for any two operands (tensors of any dtype or numbers), or the same error."""
    (ea, ta), (eb, tb) = a, b
    if not isinstance(ta, torch.Tensor) and not isinstance(tb, torch.Tensor):
        return  # two numbers: Python's arithmetic, not the libraries'
    op = PROMOTED[name]
    with np.errstate(all="ignore"):
        expected, actual = _result_or_error(op, ta, tb), _result_or_error(op, ea, eb)
    if isinstance(expected, type):
        assert isinstance(actual, type) and issubclass(actual, expected), \
            f"{name}({ea!r}, {eb!r}): torch raises {expected.__name__}, ember gives {actual!r}"
        return
    assert not isinstance(actual, type), f"{name}({ea!r}, {eb!r}): ember raises {actual.__name__}, torch {expected!r}"
    assert str(actual.dtype).split(".")[-1] == str(expected.dtype).split(".")[-1], f"{name}({ea!r}, {eb!r})"
    np.testing.assert_allclose(actual.numpy().astype(np.float64), expected.numpy().astype(np.float64), rtol=1e-3,
                               equal_nan=True, err_msg=f"{name}({ea!r}, {eb!r})")


_INF, _NAN = float("inf"), float("nan")
_LOGADDEXP_POINTS = (  # specials, overflowing sums and underflowing terms, 640 pairs (the fast path is from 512)
    [_INF, -_INF, _INF, -_INF, _NAN, 1.0, 0.0, -0.0, 3e38, -3e38, 1e-45, 88.0, -100.0, 128.0, -150.0, 5.0] * 40,
    [_INF, -_INF, -_INF, 1.0, 1.0, _NAN, 0.0, 0.0, 3e38, -3e38, 1e-45, 89.0, -100.0, 129.0, -150.0, -_INF] * 40,
)


def _assert_special_points_are_torchs(op: str, dtype: str) -> None:
    ours, theirs = (getattr(lib, op)(*(lib.tensor(v, dtype=getattr(lib, dtype)) for v in _LOGADDEXP_POINTS))
                    for lib in (ember, torch))
    np.testing.assert_array_equal(ours.float().numpy(), theirs.float().numpy())


def _units_of_error(lib, op: str) -> np.ndarray:
    """``op``'s float32 error on broadcast operands, in units in the last place of max(|exact result|, 1) (a result
    near 0 cancels in any formula)."""
    rng = np.random.default_rng(0)
    x, y = (rng.standard_normal((600, 1)) * 5).astype(np.float32), (rng.standard_normal(200) * 5).astype(np.float32)
    exact = getattr(np, op)(x.astype(np.float64), y.astype(np.float64))
    result = getattr(lib, op)(lib.tensor(x), lib.tensor(y)).numpy()
    return np.abs(result - exact) / np.spacing(np.maximum(np.abs(exact), 1).astype(np.float32))


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_logaddexp_in_single_precision_is_torchs_formula(dtype):
    """The larger plus log1p(exp(-|a - b|)), equal infinities giving themselves: torch's values at the special
    points, and within a unit in the last place of the exact result elsewhere (broadcast operands too)."""
    _assert_special_points_are_torchs("logaddexp", dtype)
    assert _units_of_error(ember, "logaddexp").max() < 1.5


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_logaddexp2_in_single_precision_is_correctly_rounded(dtype):
    """The larger plus log1p(2^-|a - b|) / ln 2 in double, rounded once: torch's values at the special points, and
    within half a unit in the last place of the exact result elsewhere (torch's float32 and NumPy's are not)."""
    _assert_special_points_are_torchs("logaddexp2", dtype)
    ours, theirs = _units_of_error(ember, "logaddexp2").max(), _units_of_error(torch, "logaddexp2").max()
    assert ours <= 0.5 + 1e-6 and ours < theirs


@pytest.mark.parametrize("value", [1, 0.3, -2.7])
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_addcmul_rounds_once_as_torchs_fused_multiply_add(value, dtype):
    # input + (value * tensor1) * tensor2 with one rounding: where the sum cancels, rounding the product first
    # leaves hundreds of units in the last place of error (a fifth of random float32 elements differed)
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(4096).astype(np.float32) for _ in range(3)]
    arrays[0][:64] = -(arrays[1][:64] * arrays[2][:64])  # exact cancellation but for the product's rounding
    results = [lib.addcmul(*(lib.tensor(a).to(getattr(lib, dtype)) for a in arrays), value=value).float().numpy()
               for lib in (ember, torch)]
    np.testing.assert_array_equal(*results)


@pytest.mark.parametrize("weight", [0.3, 0.5, 0.7, -2.0, float("nan"), "tensor"])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_lerp_rounds_each_end_once_as_torchs(weight, dtype):
    rng = np.random.default_rng(2)
    start, end, weights = (rng.standard_normal(4099).astype(np.float32) for _ in range(3))
    results = []
    for lib in (ember, torch):
        cast = lambda a: lib.tensor(a).to(getattr(lib, dtype))  # noqa: E731
        results.append(lib.lerp(cast(start), cast(end), cast(weights) if weight == "tensor" else weight).float().numpy())
    np.testing.assert_array_equal(*results)


@pytest.mark.parametrize("alpha", [0.3, -2.7, 1e-3])
@pytest.mark.parametrize("op", ["add", "sub"])
@pytest.mark.parametrize("other", ["tensor", "number"])
def test_add_and_sub_with_alpha_round_once_in_float32_as_torchs(op, alpha, other):
    # torch computes input + alpha * other with one fused multiply-add: rounded twice, up to a third of the
    # elements came out one unit in the last place off (and far more where the sum cancels)
    rng = np.random.default_rng(1)
    x, y = (rng.standard_normal(4099).astype(np.float32) for _ in range(2))
    results = [getattr(lib, op)(lib.tensor(x), lib.tensor(y) if other == "tensor" else 1.7, alpha=alpha).numpy()
               for lib in (ember, torch)]
    np.testing.assert_array_equal(*results)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "complex64"])
@pytest.mark.parametrize("shape", ["0-d", "empty", "strided", "large"])
def test_logical_not_of_floats_is_torchs_for_nans_signed_zeros_and_subnormals(dtype, shape):
    values = np.array([0.0, -0.0, np.nan, -np.nan, np.inf, -np.inf, 1e-45, -1e-45, 5e-324, 1.0, -2.5], np.float64)
    arrays = {"0-d": values[2], "empty": values[:0].reshape(0, 3), "strided": np.tile(values, (4, 1)).T[::2],
              "large": np.tile(values, 1000)}
    results = [lib.logical_not(lib.tensor(arrays[shape]).to(getattr(lib, dtype))) for lib in (ember, torch)]
    assert results[0].dtype == ember.bool and results[0].shape == tuple(results[1].shape)
    np.testing.assert_array_equal(results[0].numpy(), results[1].numpy())


def test_where_takes_a_uint8_condition_with_a_deprecation_warning_and_refuses_other_dtypes():
    def program(lib):
        x = leaf(lib, [1.0, 2.0, 3.0])
        warned_always = lib.is_warn_always_enabled()
        lib.set_warn_always(True)  # torch gives this warning once per process: another test may have had it
        try:
            with pytest.warns(UserWarning, match="uint8 condition"):
                y = lib.where(lib.tensor([1, 0, 1], dtype=lib.uint8), x, 0.0)
        finally:
            lib.set_warn_always(warned_always)
        y.backward(lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64))
        return y, x.grad

    both(program)
    both_raise(lambda lib: lib.where(lib.tensor([1, 0]), 1.0, 0.0), RuntimeError, "boolean", "dtype Long")
