"""The op test table: one ``OpSpec`` row per op, run by the generic tests in ``test_ops.py``.

A row's ``fn(lib, *args, **kwargs)`` is called once with ``lib=ember`` and once
with ``lib=torch`` on the same inputs, so one lambda describes the op for both.
Sample arguments are built per library from markers:

* ``A(3, 4)`` an input of that shape (``A()`` is 0-d), of each of the row's dtypes,
  filled from the row's domain; ``T(3, 4)`` the same shape but transposed in memory; ``S(3, 4)`` a
  strided slice (every second column). These are the inputs that get gradients.
* ``C(array)`` a constant tensor (a mask, an index tensor, a condition): no gradient.
* ``D("float64")`` the library's dtype of that name.
* anything else (numbers, dims, slices) is passed as it is, also inside tuples.

To add an op: write its row here. The tests pick it up. Where ember deliberately
differs from torch (a grad_fn name), the row says so in ``grad_fn`` and ``note``.
"""
from __future__ import annotations

import operator
from dataclasses import dataclass, field, replace
from typing import Any, Callable

import numpy as np

FLOATS = ("float32", "float64")
HALF = FLOATS + ("float16",)
INTS = ("int64", "int32")


@dataclass(frozen=True)
class A:
    """A differentiable input: contiguous (``layout='c'``), transposed ('t') or a strided slice ('s')."""

    shape: tuple
    layout: str = "c"

    def __init__(self, *shape: int, layout: str = "c"):
        object.__setattr__(self, "shape", shape)
        object.__setattr__(self, "layout", layout)

    def __repr__(self) -> str:
        return f"{ {'c': 'A', 't': 'T', 's': 'S'}[self.layout]}{self.shape}"


def T(*shape: int) -> A:
    return A(*shape, layout="t")


def S(*shape: int) -> A:
    return A(*shape, layout="s")


@dataclass(frozen=True)
class C:
    """A constant tensor made from ``value`` in each library (masks, conditions, index tensors)."""

    value: Any

    def __repr__(self) -> str:
        return f"C({np.asarray(self.value).tolist()})"


@dataclass(frozen=True)
class D:
    """A dtype, by name: ``ember.float64`` or ``torch.float64``."""

    name: str


@dataclass(frozen=True)
class Sample:
    args: tuple
    kwargs: dict = field(default_factory=dict)

    def __repr__(self) -> str:
        inner = ", ".join([repr(a) for a in self.args] + [f"{k}={v!r}" for k, v in self.kwargs.items()])
        return f"({inner})"


def s(*args, **kwargs) -> Sample:
    return Sample(args, kwargs)


@dataclass(frozen=True)
class Err:
    """``call(lib)`` must raise ``error`` in ember (and some error in torch); ember's message must name the op."""

    call: Callable
    error: type
    mentions: str | None = None  # what the message must contain; the row's op name if None


@dataclass(frozen=True)
class OpSpec:
    name: str
    fn: Callable  # fn(lib, *args, **kwargs), with lib the ember or the torch module
    samples: tuple
    domain: tuple = (-2.0, 2.0)
    away_from: tuple = ()  # points (kinks, poles, jumps) random values keep away from (0.1; 1 for integers)
    integer_valued: bool = False  # round float inputs, so that comparisons see equal values
    dtypes: tuple = FLOATS
    differentiable: bool = True
    float64_output: bool = True  # False where float64 inputs give a lower precision (gradcheck then cannot work)
    grad_fn: dict = field(default_factory=dict)  # sample index -> ember's grad_fn name where it deliberately differs
    view_differs: tuple = ()  # sample indices where ember's result is a view and torch's is not (see note)
    inplace: Callable | None = None  # inplace(x, *rest, **kwargs): the in-place form of fn(lib, x, *rest, **kwargs)
    errors: tuple = ()
    note: str = ""  # why ember differs from torch, where it does

    def with_samples(self, *samples: Sample) -> "OpSpec":
        return replace(self, samples=samples)


# ----------------------------------------------------------------- sample sets

UNARY = (s(A(3, 4)), s(A()), s(A(0, 3)), s(T(3, 4)), s(S(2, 3)))
BINARY = (
    s(A(3, 4), A(3, 4)),
    s(A(), A()),
    s(A(0, 3), A(3)),  # empty, broadcast
    s(A(3, 1), A(1, 4)),  # broadcast both ways
    s(A(2, 3), A()),  # 0-d with a tensor
    s(T(3, 4), S(3, 4)),  # non-contiguous
    s(A(3, 4), 2.5),  # Python scalar
    s(A(2, 3), 3),
)
MASK_3x4 = C(np.array([[True, False, True, True], [False, False, True, False], [True, True, False, True]]))


def shape_mismatch(op: Callable) -> Err:
    return Err(lambda m: op(m, m.ones(2, 3), m.ones(4)), RuntimeError)


def wrong_type(op: Callable) -> Err:
    return Err(lambda m: op(m, m.ones(2, 3), "a"), TypeError)


def not_a_tensor(op: Callable) -> Err:
    return Err(lambda m: op(m, [1.0, 2.0]), TypeError)


def binary_errors(name: str) -> tuple:
    op = getattr_op(name)
    return (shape_mismatch(op), wrong_type(op))


def getattr_op(name: str) -> Callable:
    return lambda m, *args, **kwargs: getattr(m, name)(*args, **kwargs)


def unary(name: str, domain=(-2.0, 2.0), **options) -> OpSpec:
    """A row for ``lib.<name>(x)``, also in half precision."""
    return OpSpec(name, getattr_op(name), UNARY, domain=domain, dtypes=HALF + INTS,
                  errors=(not_a_tensor(getattr_op(name)),), **options)


def compare(name: str) -> OpSpec:
    samples = BINARY[:6] + (s(A(3, 4), 1), s(A(3, 4), 0.5), s(A(3, 4), True))
    return OpSpec(
        name, getattr_op(name), samples, integer_valued=True, domain=(-2.0, 2.0), dtypes=FLOATS + INTS,
        differentiable=False, errors=binary_errors(name),
    )


def cast(name: str, method: Callable, differentiable: bool = True, float64_output: bool = True) -> OpSpec:
    return OpSpec(name, method, UNARY, domain=(-3.0, 3.0), dtypes=("float32", "float64", "int64"),
                  differentiable=differentiable, float64_output=float64_output)


def in_place(method: str, **fixed) -> Callable:
    """``x.<method>(*rest, **kwargs)``, e.g. ``in_place("div_", rounding_mode="floor")``."""
    return lambda x, *rest, **kwargs: getattr(x, method)(*rest, **kwargs, **fixed)


def creation(name: str, samples: tuple, errors: tuple = ()) -> OpSpec:
    return OpSpec(name, getattr_op(name), samples, dtypes=("float32",), differentiable=False, errors=errors)


POW_SAMPLES = BINARY[:6] + tuple(s(A(3, 4), e) for e in (2, 3, 0.5, -1, 0, 1.5, -2.5))

# ----------------------------------------------------------------- the table

OPS = (
    # ---- arithmetic
    OpSpec("add", getattr_op("add"), BINARY + (s(A(3, 4), A(4), alpha=2),), dtypes=HALF + INTS,
           inplace=in_place("add_"), errors=binary_errors("add")),
    OpSpec("sub", getattr_op("sub"), BINARY + (s(A(3, 4), A(4), alpha=-1.5),), dtypes=HALF + INTS,
           inplace=in_place("sub_"), errors=binary_errors("sub")),
    OpSpec("mul", getattr_op("mul"), BINARY, dtypes=HALF + INTS, inplace=in_place("mul_"), errors=binary_errors("mul")),
    OpSpec("div", getattr_op("div"), BINARY, away_from=(0.0,), domain=(-2.0, 2.0), dtypes=FLOATS + INTS,
           inplace=in_place("div_"), errors=binary_errors("div")),
    OpSpec("div_trunc", lambda m, a, b: m.div(a, b, rounding_mode="trunc"), BINARY, away_from=(0.0,),
           domain=(-3.0, 3.0), dtypes=FLOATS + INTS, inplace=in_place("div_", rounding_mode="trunc"),
           errors=binary_errors("div")),
    OpSpec("div_floor", lambda m, a, b: m.div(a, b, rounding_mode="floor"), BINARY, away_from=(0.0,),
           domain=(-3.0, 3.0), dtypes=FLOATS + INTS, inplace=in_place("div_", rounding_mode="floor"),
           errors=binary_errors("div")),
    OpSpec("pow", getattr_op("pow"), POW_SAMPLES, domain=(0.5, 2.0), inplace=in_place("pow_"),
           errors=binary_errors("pow")),
    OpSpec("pow_int", getattr_op("pow"), (s(A(3, 4), 2), s(A(), 3), s(A(3, 4), A(3, 4))), domain=(0.0, 3.0),
           dtypes=INTS, differentiable=False),
    OpSpec("neg", getattr_op("neg"), UNARY, dtypes=FLOATS + INTS, inplace=in_place("neg_"),
           errors=(not_a_tensor(getattr_op("neg")),)),
    OpSpec("rsub_scalar", lambda m, x: 2 - x, UNARY, dtypes=FLOATS + INTS),
    OpSpec("rdiv_scalar", lambda m, x: 2 / x, UNARY, away_from=(0.0,), dtypes=FLOATS + INTS),
    OpSpec("rdiv_scalar_inexact", lambda m, x: 3.7 / x, UNARY, away_from=(0.0,), dtypes=FLOATS + INTS),
    OpSpec("rpow_scalar", lambda m, x: 2 ** x, UNARY),
    OpSpec("radd_scalar", lambda m, x: 1.5 + x, UNARY, dtypes=FLOATS + INTS),
    OpSpec("rmul_scalar", lambda m, x: 3 * x, UNARY, dtypes=FLOATS + INTS),
    # ---- operators, and their in-place forms (x += y ...)
    OpSpec("add_operator", lambda m, a, b: a + b, BINARY, dtypes=FLOATS + INTS, inplace=operator.iadd),
    OpSpec("sub_operator", lambda m, a, b: a - b, BINARY, dtypes=FLOATS + INTS, inplace=operator.isub),
    OpSpec("mul_operator", lambda m, a, b: a * b, BINARY, dtypes=FLOATS + INTS, inplace=operator.imul),
    OpSpec("div_operator", lambda m, a, b: a / b, BINARY, away_from=(0.0,), dtypes=FLOATS + INTS,
           inplace=operator.itruediv),
    OpSpec("pow_operator", lambda m, a, b: a ** b, POW_SAMPLES, domain=(0.5, 2.0), inplace=operator.ipow),
    OpSpec("neg_operator", lambda m, x: -x, UNARY, dtypes=FLOATS + INTS),
    OpSpec("matmul_operator", lambda m, a, b: a @ b, (s(A(2, 3), A(3, 4)), s(A(3), A(3)), s(A(2, 2, 3), A(3)))),
    # ---- elementwise functions
    unary("exp", inplace=in_place("exp_")),
    unary("log", domain=(0.1, 3.0), inplace=in_place("log_")),
    unary("sqrt", domain=(0.1, 3.0), inplace=in_place("sqrt_")),
    unary("reciprocal", away_from=(0.0,), inplace=in_place("reciprocal_")),
    unary("sigmoid", inplace=in_place("sigmoid_")),
    unary("tanh", inplace=in_place("tanh_")),
    unary("relu", away_from=(0.0,), inplace=in_place("relu_")),
    unary("abs", away_from=(0.0,), inplace=in_place("abs_")),
    unary("absolute", away_from=(0.0,), inplace=in_place("absolute_")),
    unary("negative", inplace=in_place("negative_")),
    OpSpec("clamp", getattr_op("clamp"),
           (s(A(3, 4), -0.5, 0.5), s(A(), min=0.0), s(A(0, 3), max=1.0), s(T(3, 4), max=0.25), s(S(2, 3), -1, 1)),
           away_from=(-0.5, 0.5, 0.0, 0.25, 1.0, -1.0), inplace=in_place("clamp_"), dtypes=HALF + INTS,
           errors=(Err(lambda m: m.clamp(m.ones(2)), RuntimeError),)),
    OpSpec("clip", getattr_op("clip"), (s(A(3, 4), -0.5, 0.5), s(T(3, 4), max=0.25)), away_from=(-0.5, 0.5, 0.25),
           inplace=in_place("clip_"), dtypes=HALF + INTS),
    OpSpec("clamp_min", getattr_op("clamp_min"), (s(A(3, 4), -0.5), s(A(), 0), s(A(0, 3), 1.0), s(S(2, 3), 0.25)),
           away_from=(-0.5, 0.0, 0.25, 1.0), inplace=in_place("clamp_min_"), dtypes=HALF + INTS),
    OpSpec("clamp_max", getattr_op("clamp_max"), (s(A(3, 4), -0.5), s(A(), 0), s(T(3, 4), 0.25)),
           away_from=(-0.5, 0.0, 0.25), inplace=in_place("clamp_max_"), dtypes=HALF + INTS),
    OpSpec("clamp_min_tensor", getattr_op("clamp_min"), (s(A(3, 4), A(4)), s(A(), A()), s(T(3, 4), S(3, 4))),
           domain=(-1.5, 1.5), inplace=in_place("clamp_min_"), dtypes=HALF + INTS),
    OpSpec("clamp_max_tensor", getattr_op("clamp_max"), (s(A(3, 4), A(3, 1)), s(A(0, 3), A(3))),
           domain=(-1.5, 1.5), inplace=in_place("clamp_max_"), dtypes=HALF + INTS),
    OpSpec("clamp_tensors", lambda m, x, low, high: m.clamp(x, low, high),
           (s(A(3, 4), A(3, 4), A(4)), s(A(3, 4), A(), None), s(A(3, 1), None, A(1, 4)), s(A(), A(), A()),
            s(T(3, 4), S(3, 4), A(3, 1)), s(A(0, 3), A(3), A(3))),
           domain=(-1.5, 1.5), dtypes=HALF + INTS, inplace=in_place("clamp_"),
           errors=(Err(lambda m: m.clamp(m.ones(2, 3), m.zeros(4)), RuntimeError),
                   Err(lambda m: m.clamp(m.ones(2, 3), m.zeros(3), 1.0), TypeError))),
    unary("floor", away_from=(-2.0, -1.0, 0.0, 1.0, 2.0), inplace=in_place("floor_")),
    unary("ceil", away_from=(-2.0, -1.0, 0.0, 1.0, 2.0), inplace=in_place("ceil_")),
    unary("round", away_from=(-1.5, -0.5, 0.5, 1.5), inplace=in_place("round_")),
    OpSpec("round_decimals", lambda m, x, d: m.round(x, decimals=d), (s(A(3, 4), 1), s(A(), 2), s(T(3, 4), -1)),
           domain=(-30.0, 30.0)),
    unary("trunc", away_from=(-2.0, -1.0, 0.0, 1.0, 2.0), inplace=in_place("trunc_")),
    unary("sign", away_from=(0.0,), inplace=in_place("sign_")),
    # ---- reductions
    OpSpec("sum", getattr_op("sum"),
           (s(A(3, 4)), s(A(3, 4), 1), s(A(3, 4), -1, keepdim=True), s(A(2, 3, 4), (0, 2)),
            s(A(2, 3, 4), (-1, 0), True),
            s(A()), s(A(), 0), s(A(0, 3)), s(A(0, 3), 0), s(T(3, 4), 0), s(S(3, 4), dim=1),
            s(A(3, 4), 1, dtype=D("float64")), s(A(3, 4), None, True), s(A(2, 3), dim=[0, 1])),
           dtypes=HALF + INTS + ("bool",), errors=(Err(lambda m: m.sum(m.ones(2, 3), 2), IndexError),
                                         not_a_tensor(getattr_op("sum")))),
    OpSpec("mean", getattr_op("mean"),
           (s(A(3, 4)), s(A(3, 4), 1), s(A(3, 4), -1, keepdim=True), s(A(2, 3, 4), (0, 2)),
            s(A(2, 3, 4), (-1, 0), True),
            s(A()), s(A(), 0), s(A(0, 3), 1), s(T(3, 4), 0), s(S(3, 4), dim=1), s(A(3, 4), dtype=D("float64")),
            s(A(3, 4), None, True)),
           errors=(Err(lambda m: m.mean(m.ones(2, 3), -3), IndexError),
                   Err(lambda m: m.mean(m.ones(2, 3, dtype=m.int64)), RuntimeError))),
    OpSpec("all", getattr_op("all"), (s(A(3, 4)), s(A(3, 4), 1), s(A(3, 4), -1, True), s(A()), s(A(0, 3)),
                                     s(A(0, 3), 1), s(T(3, 4), 0)),
           integer_valued=True, domain=(0.0, 1.4), dtypes=("bool", "uint8", "float32", "int64"), differentiable=False,
           errors=(not_a_tensor(getattr_op("all")), Err(lambda m: m.ones(2).all(1), IndexError))),
    OpSpec("any", getattr_op("any"), (s(A(3, 4)), s(A(3, 4), 1), s(A(3, 4), -1, True), s(A()), s(A(0, 3)),
                                     s(A(0, 3), 1), s(T(3, 4), 0)),
           integer_valued=True, domain=(0.0, 0.7), dtypes=("bool", "uint8", "float32", "int64"), differentiable=False,
           errors=(not_a_tensor(getattr_op("any")),)),
    # ---- matrix products
    OpSpec("mm", getattr_op("mm"), (s(A(2, 3), A(3, 4)), s(T(2, 3), S(3, 4)), s(A(0, 3), A(3, 2)), s(A(2, 0), A(0, 3))),
           dtypes=FLOATS + ("int64",),
           errors=(Err(lambda m: m.mm(m.ones(2, 3), m.ones(4, 2)), RuntimeError),
                   Err(lambda m: m.mm(m.ones(2, 3, 4), m.ones(4, 2)), RuntimeError))),
    OpSpec("matmul", getattr_op("matmul"),
           (s(A(3), A(3)), s(A(3), A(3, 2)), s(A(2, 3), A(3)), s(A(2, 3), A(3, 4)), s(A(2, 2, 3), A(3, 4)),
            s(A(1, 2, 3), A(4, 3, 2)), s(A(2, 1, 2, 3), A(3, 3, 2)), s(A(2, 2, 3), A(3)), s(A(3), A(2, 3, 2)),
            s(T(2, 3), S(3, 4)), s(A(0, 3), A(3, 2)), s(A(0), A(0))),
           errors=(Err(lambda m: m.matmul(m.ones(2, 3), m.ones(2, 3)), RuntimeError),
                   Err(lambda m: m.matmul(m.ones(2, 3), m.ones(())), RuntimeError),
                   Err(lambda m: m.matmul(m.ones(2, 3), 2.0), TypeError))),
    OpSpec("addmm", getattr_op("addmm"),
           (s(A(4), A(2, 3), A(3, 4)), s(A(2, 4), T(2, 3), S(3, 4)), s(A(1, 4), A(2, 3), A(3, 4)),
            s(A(), A(2, 3), A(3, 4)), s(A(4), A(0, 3), A(3, 4)), s(A(4), A(2, 3), A(3, 4), beta=0.5, alpha=2.0), s(A(2, 1), A(2, 0), A(0, 4))),
           dtypes=FLOATS,
           errors=(Err(lambda m: m.addmm(m.ones(4), m.ones(2, 3), m.ones(4, 2)), RuntimeError),
                   Err(lambda m: m.addmm(m.ones(5), m.ones(2, 3), m.ones(3, 4)), RuntimeError),
                   Err(lambda m: m.addmm(m.ones(4), m.ones(3), m.ones(3, 4)), RuntimeError),
                   Err(lambda m: m.addmm(m.ones(4, dtype=m.float64), m.ones(2, 3), m.ones(3, 4)), RuntimeError))),
    OpSpec("dot", getattr_op("dot"), (s(A(3), A(3)), s(A(0), A(0)), s(S(3), A(3))), dtypes=FLOATS + ("int64",),
           errors=(Err(lambda m: m.dot(m.ones(3), m.ones(4)), RuntimeError),
                   Err(lambda m: m.dot(m.ones(3, 1), m.ones(3)), RuntimeError))),
    # ---- views
    OpSpec("t", lambda m, x: x.t(), (s(A(3, 4)), s(A(3)), s(A()), s(T(3, 4)), s(A(0, 2))),
           errors=(Err(lambda m: m.ones(2, 3, 4).t(), RuntimeError),)),
    OpSpec("transpose", getattr_op("transpose"),
           (s(A(2, 3, 4), 0, 2), s(A(2, 3), -1, 0), s(A(), 0, -1), s(T(3, 4), 0, 1), s(A(0, 3), 0, 1)),
           errors=(Err(lambda m: m.transpose(m.ones(2, 3), 0, 2), IndexError),)),
    OpSpec("permute", lambda m, x, *dims: x.permute(*dims),
           (s(A(2, 3, 4), 2, 0, 1), s(A(2, 3, 4), (-1, 0, 1)), s(A(), ()), s(T(3, 4), 1, 0), s(A(0, 3), 1, 0)),
           errors=(Err(lambda m: m.ones(2, 3).permute(0, 0), RuntimeError),
                   Err(lambda m: m.ones(2, 3).permute(), TypeError),
                   Err(lambda m: m.ones(2, 3).permute(0), RuntimeError),
                   Err(lambda m: m.ones(2, 3).permute(0, 1, 2), RuntimeError, "number of dimensions"))),
    OpSpec("view", lambda m, x, *shape: x.view(*shape),
           (s(A(3, 4), 4, 3), s(A(3, 4), -1), s(A(), 1), s(A(1), ()), s(A(0, 3), 3, 0), s(A(3, 4), (2, -1, 2))),
           errors=(Err(lambda m: m.ones(2, 3).view(7), RuntimeError),
                   Err(lambda m: m.ones(3, 4).t().view(12), RuntimeError),
                   Err(lambda m: m.ones(2, 3).view(-1, -1), RuntimeError),
                   Err(lambda m: m.ones(16).view(-2, -8), RuntimeError, "invalid shape dimension -2 at index 0"),
                   Err(lambda m: m.ones(16).view(2, np.int64(-3)), RuntimeError, "invalid shape dimension -3 at index 1"))),
    OpSpec("reshape", lambda m, x, *shape: x.reshape(*shape),
           (s(A(3, 4), 4, 3), s(A(3, 4), -1), s(A(), 1), s(A(1), ()), s(A(0, 3), 3, 0), s(T(3, 4), 12),
            s(S(3, 4), (2, 6))),
           errors=(Err(lambda m: m.ones(2, 3).reshape(7), RuntimeError),)),
    OpSpec("squeeze", lambda m, x, *dim: x.squeeze(*dim),
           (s(A(3, 1, 4)), s(A(3, 1, 4), 1), s(A(3, 1, 4), 0), s(A(1, 3, 1), (0, 2)), s(A(1)), s(A()), s(A(0, 1), -1),
            s(T(1, 4))),
           errors=(Err(lambda m: m.ones(2, 3).squeeze(2), IndexError),)),
    OpSpec("unsqueeze", getattr_op("unsqueeze"),
           (s(A(3, 4), 0), s(A(3, 4), -1), s(A(3, 4), 1), s(A(), 0), s(A(0, 3), 2), s(T(3, 4), -2)),
           errors=(Err(lambda m: m.ones(2, 3).unsqueeze(4), IndexError),)),
    OpSpec("expand", lambda m, x, *sizes: x.expand(*sizes),
           (s(A(3, 1), 3, 4), s(A(1), (2, 3, 1)), s(A(), 2, 3), s(A(3, 1), -1, 4), s(A(1, 3), 0, 3),
            s(T(1, 3), 2, 2, 3)),
           errors=(Err(lambda m: m.ones(2, 3).expand(3, 3), RuntimeError),
                   Err(lambda m: m.ones(2, 3).expand(3), RuntimeError),
                   Err(lambda m: m.ones(2, 3).expand(-1, -1, 3), RuntimeError, "leading, non-existing dimension"),
                   Err(lambda m: m.ones(2, 1).expand(2, -3), RuntimeError))),
    OpSpec("flatten", getattr_op("flatten"),
           (s(A(2, 3, 4)), s(A(2, 3, 4), 1), s(A(2, 3, 4), 0, 1), s(A(2, 3, 4), -2), s(A()), s(T(3, 4)), s(A(0, 3)),
            s(A(2, 3), 1, 1)),
           errors=(Err(lambda m: m.ones(2, 3, 4).flatten(2, 1), RuntimeError),
                   Err(lambda m: m.ones(2, 3, 4).flatten(0, 5), IndexError))),
    OpSpec("expand_as", lambda m, x, other: x.expand_as(other),
           (s(A(3, 1), C(np.zeros((3, 4)))), s(A(), C(np.zeros((2,)))), s(A(1), C(np.zeros((0,))))),
           errors=(Err(lambda m: m.ones(2, 3).expand_as(m.ones(4)), RuntimeError, "expand"),)),
    OpSpec("narrow", getattr_op("narrow"),
           (s(A(4, 5), 1, 1, 3), s(A(4, 5), 0, -2, 2), s(A(4, 5), 0, 0, 0), s(T(4, 5), 1, 2, 2)),
           errors=(Err(lambda m: m.ones(2, 3).narrow(0, 1, 5), (IndexError, RuntimeError)),)),
    OpSpec("select", getattr_op("select"), (s(A(3, 4), 0, 1), s(A(3, 4), 1, -1), s(T(3, 4), 1, 2), s(A(3, 0), 0, 2)),
           errors=(Err(lambda m: m.ones(2, 3).select(1, 3), IndexError),)),
    OpSpec("unbind", lambda m, x, dim, i: x.unbind(dim)[i],
           (s(A(3, 4), 0, 1), s(A(3, 4), -1, 3), s(T(3, 4), 1, 0), s(S(2, 3), 0, 1), s(A(2, 0), 0, 1), s(A(3), 0, 2)),
           errors=(Err(lambda m: m.tensor(1.0).unbind(), IndexError, "no dimensions"),
                   Err(lambda m: m.ones(2, 3).unbind(2), IndexError, "unbind"))),
    OpSpec("cat", lambda m, *tensors, dim=0: m.cat(tensors, dim),
           (s(A(2, 3), A(4, 3)), s(A(2, 3), A(2, 1), A(2, 2), dim=1), s(A(2, 3), A(2, 3), dim=-2), s(A(3), A(2)),
            s(T(3, 4), S(3, 4)), s(A(0, 3), A(2, 3)), s(A(0), A(2, 3)), s(A(2, 3), A(0), A(1, 3)), s(A(2, 2, 3), dim=2)),
           dtypes=HALF + INTS,
           errors=(Err(lambda m: m.cat([m.ones(2, 3), m.ones(3, 4)], 1), RuntimeError, "dimension 1"),
                   Err(lambda m: m.cat([m.ones(2, 3), m.ones(3)]), RuntimeError, "same number of dimensions"),
                   Err(lambda m: m.cat([m.tensor(1.0), m.tensor(2.0)]), RuntimeError, "zero-dimensional"),
                   Err(lambda m: m.cat([m.ones(2), m.ones(2)], 1), IndexError, "cat"),
                   Err(lambda m: m.cat([]), ValueError, "non-empty"),
                   Err(lambda m: m.cat(m.ones(2)), TypeError, "tuple of Tensors"),
                   Err(lambda m: m.cat([m.ones(2), 1.0]), TypeError, "element 1"))),
    OpSpec("stack", lambda m, *tensors, dim=0: m.stack(tensors, dim),
           (s(A(2, 3), A(2, 3)), s(A(2, 3), A(2, 3), A(2, 3), dim=2), s(A(2, 3), A(2, 3), dim=-1), s(A(), A()),
            s(T(3, 4), S(3, 4), dim=1), s(A(0, 3), A(0, 3), dim=1), s(A(3),)),
           dtypes=HALF + INTS,
           errors=(Err(lambda m: m.stack([m.ones(2, 3), m.ones(3, 3)]), RuntimeError, "equal size"),
                   Err(lambda m: m.stack([m.ones(2), m.ones(2)], 3), IndexError, "stack"),
                   Err(lambda m: m.stack([]), RuntimeError, "non-empty"),
                   Err(lambda m: m.stack((m.ones(2), [1.0])), TypeError, "element 1"))),
    OpSpec("getitem", lambda m, x, key: x[key],
           (s(A(3, 4), 1), s(A(3, 4), -1), s(A(3, 4), slice(1, 3)), s(A(3, 4), (slice(None), 2)), s(A(3, 4), (None, 1)),
            s(A(2, 3, 4), (Ellipsis, 1)), s(A(3, 4), (slice(None, None, 2), slice(1, None, 2))),
            s(A(3, 4), MASK_3x4), s(A(3, 4), C(np.array([0, 2, 2]))), s(A(3, 4), [0, 2, -1]),
            s(A(3, 4), (slice(None), [1, 0, 1])), s(A(3, 4), C(np.array([True, False, True]))),
            s(A(), None), s(A(), Ellipsis), s(A(), ()), s(T(3, 4), (1, slice(None, 2))), s(A(0, 3), slice(0, 0)),
            s(A(3, 4), (C(np.array([[0], [2]])), C(np.array([1, 3])))), s(A(3, 4), C(np.array([-1, 0]))),
            s(A(3, 4), (Ellipsis, None)), s(A(2, 3, 4), (1, Ellipsis, None)), s(A(3, 4), C(np.array(1))),
            s(A(3, 4), (slice(-2, None), -2)), s(A(3, 4), (1, 2)), s(A(3, 4), (-1, -4)), s(A(3), 0),
            s(S(3, 4), (slice(None), C(np.array([True, False, True, True]))))),
           errors=(Err(lambda m: m.ones(2, 3)[2], IndexError, "index 2"),
                   Err(lambda m: m.ones(2, 3)[0, 0, 0], IndexError, "too many indices"),
                   Err(lambda m: m.ones(2, 3)[m.ones(2)], IndexError, "tensors used as indices"))),
    OpSpec("index_put", lambda m, x, index, values, accumulate=False: m.index_put(x, (index,), values, accumulate),
           (s(A(3, 4), C(np.array([0, 2])), A(2, 4)), s(A(3, 4), C(np.array([2, 0, 2])), A(4), accumulate=True),
            s(A(4), C(np.array([True, False, True, True])), A()), s(T(3, 4), C(np.array([1])), S(1, 4)),
            s(A(0, 3), C(np.zeros(0, np.int64)), A(3), accumulate=True)),
           inplace=lambda x, index, values, accumulate=False: x.index_put_((index,), values, accumulate),
           dtypes=HALF + INTS,
           errors=(Err(lambda m: m.zeros(3).index_put_(m.tensor([0]), m.tensor(1.0)), TypeError, "tuple of Tensors"),
                   Err(lambda m: m.zeros(3).index_put_((m.tensor([0]),), 1.0), TypeError, "must be Tensor"),
                   Err(lambda m: m.zeros(3).index_put_((m.tensor([0]),), m.tensor(1)), RuntimeError, "dtypes match"),
                   Err(lambda m: m.zeros(3).index_put_((m.tensor([5]),), m.tensor(1.0), True), IndexError, "index 5"),
                   Err(lambda m: m.zeros(3, 4).index_put_((m.tensor([0]), m.tensor([1, 2, 3])), m.tensor([1.0, 2.0])),
                       RuntimeError, "shape mismatch"))),
    OpSpec("where", lambda m, cond, a, b: m.where(cond, a, b),
           (s(MASK_3x4, A(3, 4), A(3, 4)), s(C(np.array([[True], [False], [True]])), A(4), A(3, 1)),
            s(MASK_3x4, A(3, 4), 0.0), s(C(np.array(True)), A(), A()), s(C(np.zeros((0, 3), bool)), A(0, 3), A(3)),
            s(MASK_3x4, T(3, 4), S(3, 4))),
           errors=(Err(lambda m: m.where(m.ones(2) > 0, m.ones(3), m.ones(2)), RuntimeError),
                   Err(lambda m: m.where(m.ones(2), m.ones(2), m.ones(2)), RuntimeError),
                   Err(lambda m: m.where(m.ones(2) > 0, m.ones(2), "a"), TypeError))),
    OpSpec("where_numbers", lambda m, cond, a, b: m.where(cond, a, b),
           (s(MASK_3x4, 1.0, 0.0), s(MASK_3x4, 1, 0), s(MASK_3x4, True, 2.5), s(C(np.array(False)), 1, 2)),
           differentiable=False),
    # ---- comparisons
    compare("eq"), compare("ne"), compare("lt"), compare("le"), compare("gt"), compare("ge"),
    # ---- copies and casts
    OpSpec("clone", lambda m, x: x.clone(), UNARY, dtypes=FLOATS + INTS, errors=(not_a_tensor(getattr_op("clone")),)),
    OpSpec("contiguous", lambda m, x: x.contiguous(), UNARY, dtypes=FLOATS + INTS),
    cast("to_float64", lambda m, x: x.to(m.float64)),
    cast("to_positional_dtype", lambda m, x, *a, **k: x.to(*a, **k), float64_output=False).with_samples(
        s(A(3, 4), D("float16")), s(A(), D("float32")), s(T(3, 4), D("int32")), s(A(0, 3), D("float64")),
        s(A(3, 4), "cpu"), s(A(3, 4), "cpu", D("float32")), s(A(2), C(np.zeros(1, np.int16))),
        s(A(2, 2), device="cpu", dtype=D("float16")), s(A(3), D("float64"), copy=True)),
    cast("type_as", lambda m, x, other: x.type_as(other), float64_output=False).with_samples(
        s(A(3, 4), C(np.zeros(1, np.float32))), s(A(), C(np.zeros((), np.int64))), s(T(2, 3), C(np.zeros(2)))),
    cast("half", lambda m, x: x.half(), float64_output=False),
    cast("short", lambda m, x: x.short(), differentiable=False),
    cast("char", lambda m, x: x.char(), differentiable=False),
    cast("byte", lambda m, x: x.abs().byte(), differentiable=False),
    cast("to_float32_kw", lambda m, x: x.to(dtype=m.float32), float64_output=False),
    cast("float", lambda m, x: x.float(), float64_output=False),
    cast("double", lambda m, x: x.double()),
    cast("long", lambda m, x: x.long(), differentiable=False),
    cast("int", lambda m, x: x.int(), differentiable=False),
    cast("bool", lambda m, x: x.bool(), differentiable=False),
    # ---- creation (rows without tensor inputs run once: their dtypes entry is only a placeholder)
    creation("tensor", (s([1, 2]), s([1.0, 2]), s([True, False]), s([True, 2]), s([[1, 2], [3, 4]], dtype=D("float64")),
                        s(3.5), s([]), s([1.7, -2.7], dtype=D("int32")), s(np.array([1, 2], np.int16)),
                        s([[True, 1.5]]), s([[]]), s(np.float64(2.5)), s([np.int32(1), 2])),
             errors=(Err(lambda m: m.tensor([[1, 2], [3]]), ValueError),)),
    creation("zeros", (s(2, 3), s((2, 3)), s([2, 3]), s(()), s(0, 3), s(2, dtype=D("int64"))),
             errors=(Err(lambda m: m.zeros(-1, 2), RuntimeError), Err(lambda m: m.zeros(2.5), TypeError))),
    creation("ones", (s(2, 3), s(()), s(3, dtype=D("bool")))),
    creation("full", (s((2, 3), 1.5), s((2,), 7), s((2,), True), s((), 2.0, dtype=D("float64")), s([0, 2], 1),
                      s((2,), 1.5, dtype=D("int64")), s((2,), -1, dtype=D("float16")))),
    creation("arange", (s(5), s(1, 4), s(0, 1, 0.25), s(5, dtype=D("float64")), s(-3, 3, 2), s(1.5), s(3, 0, -1),
                        s(0, 1, 0.1), s(0, 0), s(0, 5, dtype=D("float16")), s(1, 7, 2, dtype=D("float64")),
                        s(10, 0, -3), s(0.0, 1.0, 0.3)),
             errors=(Err(lambda m: m.arange(0, 1, 0), RuntimeError), Err(lambda m: m.arange(0, 3, -1), RuntimeError))),
    creation("linspace", (s(0, 1, 5), s(-1, 1, 1), s(0, 1, 0), s(2, 2, 3), s(0, 1, 4, dtype=D("float64")),
                          s(0, 10, 5, dtype=D("int64")), s(-3, 7, 4, dtype=D("int32")), s(1, 0, 3))),
    creation("eye", (s(3), s(2, 3), s(0), s(3, dtype=D("int64")))),
    OpSpec("zeros_like", getattr_op("zeros_like"), (s(A(2, 3)), s(A()), s(T(2, 3), dtype=D("int64"))),
           dtypes=FLOATS + INTS, differentiable=False),
    OpSpec("ones_like", getattr_op("ones_like"), (s(A(2, 3)), s(A(0, 2), dtype=D("bool"))), dtypes=FLOATS + INTS,
           differentiable=False),
    OpSpec("full_like", getattr_op("full_like"), (s(A(2, 3), 2.5), s(A(), 7), s(S(2, 3), 1, dtype=D("float16"))),
           dtypes=FLOATS + INTS, differentiable=False),
)
