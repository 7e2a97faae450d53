"""Op-table rows: binary pointwise arithmetic, comparison and logic.

In-place forms that the generic in-place tests cannot check (those of integer-only ops, which have no float64
gradients to compare, and those that keep their tensor's dtype, as logical_and_) are in test_binary.py.
"""
import operator
from dataclasses import replace

import numpy as np

from op_spec import (  # noqa: F401
    A, BINARY, C, COMPLEX_BINARY, COMPLEX_UNARY, D, Err, FLOATS, HALF, INTS, OpSpec, S, T, UNARY, binary_errors,
    compare, getattr_op, in_place, not_a_tensor, s, shape_mismatch, wrong_type,
)

BOOL_INTS = INTS + ("bool",)
TENSORS = BINARY[:6]  # the samples of two tensors: 0-d, empty, broadcast, non-contiguous
INT_SHIFTS = (s(A(3, 4), A(3, 4)), s(A(), A()), s(A(0, 3), A(3)), s(A(3, 1), A(1, 4)), s(T(3, 4), S(3, 4)),
              s(A(2, 3), 2), s(A(2, 3), A()))


def _int_by_zero(name: str) -> Err:
    return Err(lambda m: getattr_op(name)(m, m.tensor([3, 4]), m.tensor([1, 0])), RuntimeError, "ZeroDivisionError")


def _refuses(name: str, dtype: str, *rest, error=NotImplementedError) -> Err:
    """``name`` refuses tensors of ``dtype`` (for the first operand; ``rest`` are further arguments)."""
    op = getattr_op(name)
    return Err(lambda m: op(m, m.ones(2, dtype=getattr(m, dtype)), m.ones(2, dtype=getattr(m, dtype)), *rest), error)


def _number_needs_tensor(name: str) -> Err:
    """ops of two tensors (torch's atan2, hypot ...) take no number as their second operand."""
    return Err(lambda m: getattr_op(name)(m, m.ones(2), 2.0), TypeError)


def alias_errors(name: str, original: str) -> tuple:
    """Another name's errors: the messages name the op it stands for, as torch's do."""
    return tuple(replace(err, mentions=original) for err in binary_errors(name))


def modulo(name: str) -> OpSpec:
    return OpSpec(name, getattr_op(name), BINARY + (s(A(3, 4), -1.5),), away_from=(0.0,), domain=(-3.0, 3.0),
                  dtypes=HALF + INTS, inplace=in_place(name + "_"),
                  errors=binary_errors(name) + (_int_by_zero(name), _refuses(name, "bool")))


def two_tensors(name: str, dtypes=HALF + INTS, refuse_ints: bool = False, **options) -> OpSpec:
    errors = binary_errors(name) + (_number_needs_tensor(name),)
    if refuse_ints:
        errors += (_refuses(name, "int64"),)
    return OpSpec(name, getattr_op(name), TENSORS, dtypes=dtypes, errors=errors, **options)


def logical(name: str) -> OpSpec:
    return OpSpec(name, getattr_op(name), TENSORS + (s(A(3, 4), C(np.array([1, 0, 2, 0]))),), integer_valued=True,
                  dtypes=FLOATS + BOOL_INTS, differentiable=False,
                  errors=(shape_mismatch(getattr_op(name)), Err(lambda m: getattr(m, name)(m.ones(2), 1), TypeError)))


def bitwise(name: str, operator_form) -> tuple:
    samples = TENSORS + (s(A(3, 4), 3), s(A(3, 4), True))
    errors = binary_errors(name) + (_refuses(name, "float32"),)
    return (
        OpSpec(name, getattr_op(name), samples, domain=(-8.0, 8.0), dtypes=BOOL_INTS, differentiable=False,
               errors=errors),
        OpSpec(name + "_number_first", lambda m, x: getattr(m, name)(6, x), UNARY, domain=(-8.0, 8.0),
               dtypes=BOOL_INTS, differentiable=False),
        OpSpec(name + "_operator", lambda m, a, b: operator_form(a, b), samples, domain=(-8.0, 8.0),
               dtypes=BOOL_INTS, differentiable=False),
        OpSpec(name + "_reflected", lambda m, x: operator_form(5, x), UNARY, domain=(-8.0, 8.0), dtypes=BOOL_INTS,
               differentiable=False),
    )


def shift(name: str, operator_form) -> tuple:
    errors = binary_errors(name) + (_refuses(name, "float32"), _refuses(name, "bool"))
    return (
        OpSpec(name, getattr_op(name), INT_SHIFTS, domain=(-3.0, 40.0), dtypes=("int64", "int32", "uint8"),
               differentiable=False, errors=errors),
        OpSpec(name + "_operator", lambda m, a, b: operator_form(a, b), INT_SHIFTS, domain=(-3.0, 40.0),
               dtypes=INTS + ("uint8",), differentiable=False),
        OpSpec(name + "_reflected", lambda m, x: operator_form(-5, x), UNARY, domain=(-3.0, 70.0), dtypes=INTS,
               differentiable=False),
    )


def classify(name: str, complex_samples: tuple = ()) -> OpSpec:
    """isnan and its kin, also on values with a nan, an inf and a -inf put in."""
    special = C(np.array([np.nan, np.inf, -np.inf, 1.0], dtype=np.float32))
    samples = (s(A(3, 4), special, with_special=True), s(A(4), special, with_special=True))

    def fn(m, x, special=None, with_special=False):
        return getattr(m, name)(m.where(m.isfinite(special), x, special.to(x.dtype)) if with_special else x)

    return OpSpec(name, fn, UNARY + samples, dtypes=HALF + BOOL_INTS, differentiable=False,
                  errors=(not_a_tensor(getattr_op(name)),), complex_samples=complex_samples)


def _with_special(fn):
    """``fn`` of ``x`` with the special values of ``special`` put in where it has them (nan, inf, -inf)."""
    return lambda m, x, special: fn(m, m.where(m.isfinite(special), x, special))


_SPECIAL = C(np.array([np.nan, np.inf, -np.inf, 1.0, 0.5]))
LERP_SAMPLES = (
    s(A(3, 4), A(3, 4), 0.3), s(A(), A(), 0.8), s(A(0, 3), A(3), 0.5), s(A(3, 1), A(1, 4), -1.5),
    s(A(3, 4), A(3, 4), A(3, 4)), s(A(3, 1), A(1, 4), A(4)), s(T(3, 4), S(3, 4), A()), s(A(2, 3), A(2, 3), 1.0),
)
ADDC_SAMPLES = (
    s(A(3, 4), A(3, 4), A(3, 4)), s(A(), A(), A(), value=0.5), s(A(0, 3), A(3), A(0, 1)),
    s(A(3, 1), A(1, 4), A(4), value=-2), s(T(3, 4), S(3, 4), A(3, 4)), s(A(2, 3), A(), A(2, 3), value=3),
)
OPS = (
    # ---- remainders and rounded quotients
    modulo("remainder"),
    modulo("fmod"),
    OpSpec("remainder_number_first", lambda m, x: m.remainder(2.5, x), UNARY, away_from=(0.0,),
           dtypes=FLOATS + INTS, differentiable=False),
    OpSpec("mod_operator", lambda m, a, b: a % b, BINARY, away_from=(0.0,), domain=(-3.0, 3.0), dtypes=FLOATS + INTS,
           inplace=operator.imod),
    OpSpec("rmod_operator", lambda m, x: 3 % x, UNARY, away_from=(0.0,), domain=(-3.0, 3.0), dtypes=FLOATS + INTS,
           differentiable=False),
    OpSpec("floor_divide", getattr_op("floor_divide"), BINARY + (s(A(3, 4), -1.5),), away_from=(0.0,),
           domain=(-3.0, 3.0), dtypes=HALF + INTS, differentiable=False,
           errors=binary_errors("floor_divide") + (_int_by_zero("floor_divide"), _refuses("floor_divide", "bool"))),
    OpSpec("floordiv_operator", lambda m, a, b: a // b, BINARY, away_from=(0.0,), domain=(-3.0, 3.0),
           dtypes=FLOATS + INTS, differentiable=False),
    OpSpec("rfloordiv_operator", lambda m, x: 7 // x, UNARY, away_from=(0.0,), domain=(-3.0, 3.0),
           dtypes=FLOATS + INTS, differentiable=False),
    OpSpec("divide", getattr_op("divide"), BINARY, away_from=(0.0,), dtypes=FLOATS + INTS, inplace=in_place("divide_"),
           errors=alias_errors("divide", "div"), complex_samples=COMPLEX_BINARY),
    OpSpec("divide_floor", lambda m, a, b: m.divide(a, b, rounding_mode="floor"), BINARY, away_from=(0.0,),
           dtypes=FLOATS + INTS, inplace=in_place("divide_", rounding_mode="floor")),
    OpSpec("true_divide", getattr_op("true_divide"), BINARY, away_from=(0.0,), dtypes=FLOATS + INTS,
           inplace=in_place("true_divide_"), errors=alias_errors("true_divide", "div"),
           complex_samples=COMPLEX_BINARY),
    OpSpec("multiply", getattr_op("multiply"), BINARY, dtypes=HALF + INTS, inplace=in_place("multiply_"),
           errors=alias_errors("multiply", "mul")),
    OpSpec("subtract", getattr_op("subtract"), BINARY + (s(A(3, 4), A(4), alpha=2),), dtypes=FLOATS + INTS,
           inplace=in_place("subtract_"), errors=alias_errors("subtract", "sub")),
    OpSpec("rsub", getattr_op("rsub"), TENSORS + (s(A(3, 4), 2.5), s(A(3, 4), A(4), alpha=2)), dtypes=FLOATS + INTS,
           errors=(replace(shape_mismatch(getattr_op("rsub")), mentions="sub"),), complex_samples=(0, 3, 5, 6, 7)),
    # ---- powers, angles and logarithms of sums
    OpSpec("float_power", getattr_op("float_power"), BINARY + (s(A(3, 4), -2), s(A(3, 4), 0.5)), domain=(0.5, 2.0),
           dtypes=FLOATS + INTS, inplace=in_place("float_power_"), errors=binary_errors("float_power"),
           complex_samples=(0, 3, 5, 6, 9)),
    OpSpec("float_power_number_first", lambda m, x: m.float_power(2, x), UNARY, dtypes=FLOATS + INTS,
           complex_samples=COMPLEX_UNARY),
    two_tensors("atan2", inplace=in_place("atan2_")),
    two_tensors("arctan2", inplace=in_place("arctan2_")),
    two_tensors("hypot", dtypes=HALF, refuse_ints=True, inplace=in_place("hypot_")),
    two_tensors("logaddexp", dtypes=HALF, refuse_ints=True, complex_samples=(0, 3, 5)),
    two_tensors("logaddexp2", dtypes=HALF, refuse_ints=True),
    two_tensors("nextafter", dtypes=FLOATS, refuse_ints=True, inplace=in_place("nextafter_")),
    OpSpec("ldexp", getattr_op("ldexp"), TENSORS, dtypes=HALF + INTS, inplace=in_place("ldexp_"),
           errors=binary_errors("ldexp") + (_number_needs_tensor("ldexp"),)),
    OpSpec("ldexp_integer_exponent", getattr_op("ldexp"), (s(A(3, 4), C(np.array([3, -1, 0, 2]))),),
           dtypes=HALF + INTS, differentiable=False,
           note="not compared in gradients: torch's slope is 0 where an integer exponent is negative (it takes "
                "2 ** exponent in integers); ember's is 2 ** exponent (test_binary.py)"),
    OpSpec("frexp_mantissa", lambda m, x: m.frexp(x).mantissa, UNARY, domain=(-1e3, 1e3), dtypes=HALF,
           errors=(Err(lambda m: m.frexp(m.ones(2, dtype=m.int64)), RuntimeError, "frexp"),
                   Err(lambda m: m.frexp([1.0]), TypeError, "frexp"))),
    OpSpec("frexp_exponent", lambda m, x: m.frexp(x).exponent, UNARY, domain=(-100.0, 100.0), dtypes=HALF,
           differentiable=False),
    # ---- divisors and multiples of integers
    *[OpSpec(name, getattr_op(name), TENSORS, domain=(-20.0, 20.0), dtypes=("int64", "int32", "uint8", "int8"),
             differentiable=False,
             errors=binary_errors(name) + (_refuses(name, "float32"), _refuses(name, "bool"),
                                           _number_needs_tensor(name)))
      for name in ("gcd", "lcm")],
    # ---- signs, steps and replacements
    OpSpec("copysign", getattr_op("copysign"), BINARY + (s(A(3, 4), -0.0), s(A(3, 4), True)), away_from=(0.0,),
           dtypes=HALF + INTS, inplace=in_place("copysign_"),
           errors=binary_errors("copysign") + (Err(lambda m: m.copysign(2.0, m.ones(2)), TypeError),)),
    OpSpec("heaviside", getattr_op("heaviside"), TENSORS, integer_valued=True, dtypes=FLOATS + BOOL_INTS,
           differentiable=False,
           errors=(shape_mismatch(getattr_op("heaviside")),
                   Err(lambda m: m.heaviside(m.ones(2), m.ones(2, dtype=m.float64)), RuntimeError))),
    OpSpec("nan_to_num", getattr_op("nan_to_num"), UNARY + (s(A(3, 4), 1.0, 2.0, -3.0), s(A(3, 4), posinf=5.0)),
           dtypes=HALF + BOOL_INTS, inplace=in_place("nan_to_num_"), errors=(not_a_tensor(getattr_op("nan_to_num")),)),
    OpSpec("nan_to_num_special", _with_special(lambda m, x: m.nan_to_num(x, nan=0.5, neginf=-7.0)),
           (s(A(5), _SPECIAL), s(A(3, 5), _SPECIAL)), dtypes=FLOATS),
    # ---- interpolation and fused products
    OpSpec("lerp", getattr_op("lerp"), LERP_SAMPLES, dtypes=HALF, inplace=in_place("lerp_"),
           errors=(Err(lambda m: m.lerp(m.ones(2), m.ones(2, dtype=m.float64), 0.5), RuntimeError),
                   Err(lambda m: m.lerp(m.ones(2), m.ones(2), m.ones(2, dtype=m.float64)), RuntimeError),
                   Err(lambda m: m.lerp(m.ones(2, 3), m.ones(4), 0.5), RuntimeError),
                   Err(lambda m: m.lerp(m.ones(2, dtype=m.int64), m.ones(2, dtype=m.int64), 2), NotImplementedError),
                   Err(lambda m: m.lerp(m.ones(2), 2.0, 0.5), TypeError)), complex_samples=(0, 3, 4, 6)),
    OpSpec("addcmul", getattr_op("addcmul"), ADDC_SAMPLES, dtypes=HALF + INTS, inplace=in_place("addcmul_"),
           errors=(Err(lambda m: m.addcmul(m.ones(2, 3), m.ones(4), m.ones(1)), RuntimeError),
                   Err(lambda m: m.addcmul(m.ones(2), 2.0, m.ones(2)), TypeError),
                   Err(lambda m: m.addcmul(*[m.ones(2, dtype=m.bool)] * 3), NotImplementedError)),
           complex_samples=(0, 1, 3, 4)),
    OpSpec("addcdiv", getattr_op("addcdiv"), ADDC_SAMPLES, away_from=(0.0,), dtypes=HALF,
           inplace=in_place("addcdiv_"),
           errors=(Err(lambda m: m.addcdiv(m.ones(2), m.ones(2, dtype=m.int64), m.ones(2, dtype=m.int64)),
                       RuntimeError),
                   Err(lambda m: m.addcdiv(m.ones(2, 3), m.ones(4), m.ones(1)), RuntimeError)),
           complex_samples=(0, 1, 3, 4)),
    # ---- shifts and bitwise logic
    *shift("bitwise_left_shift", operator.lshift),
    *shift("bitwise_right_shift", operator.rshift),
    *bitwise("bitwise_and", operator.and_),
    *bitwise("bitwise_or", operator.or_),
    *bitwise("bitwise_xor", operator.xor),
    OpSpec("bitwise_not", getattr_op("bitwise_not"), UNARY, domain=(-8.0, 8.0), dtypes=BOOL_INTS,
           differentiable=False,
           errors=(not_a_tensor(getattr_op("bitwise_not")),
                   Err(lambda m: m.bitwise_not(m.ones(2)), NotImplementedError))),
    OpSpec("invert_operator", lambda m, x: ~x, UNARY, domain=(-8.0, 8.0), dtypes=BOOL_INTS, differentiable=False,
           errors=(Err(lambda m: ~m.ones(2), TypeError, "~"),)),
    # ---- logic
    logical("logical_and"),
    logical("logical_or"),
    logical("logical_xor"),
    OpSpec("logical_not", getattr_op("logical_not"), UNARY, integer_valued=True, dtypes=FLOATS + BOOL_INTS,
           differentiable=False, errors=(not_a_tensor(getattr_op("logical_not")),)),
    # ---- classifying, closeness and membership
    classify("isnan", COMPLEX_UNARY + (5, 6)),
    classify("isinf", COMPLEX_UNARY + (5, 6)),
    classify("isposinf"),
    classify("isneginf"),
    classify("isfinite", COMPLEX_UNARY + (5, 6)),
    classify("isreal", COMPLEX_UNARY + (5, 6)),
    classify("signbit"),
    OpSpec("isclose", lambda m, a, b, **kw: m.isclose(a, a + b * 1e-5, **kw),
           TENSORS + (s(A(3, 4), A(3, 4), rtol=0.0, atol=1e-5), s(A(3, 4), A(4), rtol=1e-3, atol=0.0)),
           dtypes=HALF, differentiable=False,
           errors=(Err(lambda m: m.isclose(m.ones(2), m.ones(2, dtype=m.int64)), RuntimeError),
                   Err(lambda m: m.isclose(m.ones(2), m.ones(2), rtol=-1.0), RuntimeError, "rtol"),
                   Err(lambda m: m.isclose(m.ones(2, 3), m.ones(4)), RuntimeError),
                   Err(lambda m: m.isclose(m.ones(2), 1.0), TypeError)), complex_samples=(0, 3, 5, 6, 7)),
    OpSpec("isclose_integers", lambda m, a, b, **kw: m.isclose(a, b, **kw),
           (s(A(3, 4), A(3, 4), atol=1), s(A(3, 4), A(4), rtol=0.5), s(A(), A())), integer_valued=True,
           dtypes=BOOL_INTS, differentiable=False),
    OpSpec("isin", getattr_op("isin"),
           (s(A(3, 4), A(5)), s(A(), A(3)), s(A(0, 3), A(2)), s(A(3, 4), 1), s(T(3, 4), S(2, 3)), s(1, A(3, 4)),
            s(A(3, 4), A(6), invert=True), s(A(3, 4), A(2, 2), assume_unique=False)),
           integer_valued=True, dtypes=FLOATS + INTS, differentiable=False,
           errors=(Err(lambda m: m.isin(m.ones(2), [1.0]), TypeError), Err(lambda m: m.isin(1, 2), TypeError))),
    # ---- torch's other names for the comparisons (their in-place forms keep the tensor's dtype: test_binary.py)
    *[compare(name) for name in ("greater", "greater_equal", "less", "less_equal", "not_equal")],
)
