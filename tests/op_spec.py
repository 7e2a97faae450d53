"""The vocabulary of the op table: input markers, samples, rows (``OpSpec``) and the row builders.

The rows themselves are in ``op_table.py`` (the first ops) and ``op_rows/<family>.py``
(one file per family of ops); ``op_table.OPS`` is all of them.

A row's ``fn(lib, *args, **kwargs)`` is called once with ``lib=ember`` and once
with ``lib=torch`` on the same inputs, so one lambda describes the op for both.
Sample arguments are built per library from markers:

* ``A(3, 4)`` an input of that shape (``A()`` is 0-d), of each of the row's dtypes,
  filled from the row's domain (for a complex dtype, both parts are drawn from it); ``T(3, 4)`` the same shape but transposed in memory; ``S(3, 4)`` a
  strided slice (every second column). These are the inputs that get gradients.
* ``C(array)`` a constant tensor (a mask, an index tensor, a condition): no gradient.
* ``D("float64")`` the library's dtype of that name.
* anything else (numbers, dims, slices) is passed as it is, also inside tuples.

Where ember deliberately
differs from torch (a grad_fn name), the row says so in ``grad_fn`` and ``note``.
"""
from __future__ import annotations

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
    complex_samples: tuple = ()  # sample indices also run on complex64/complex128 inputs (values, gradients)
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
COMPLEX_UNARY = (0, 1, 3)  # contiguous, 0-d, transposed: the samples of UNARY that complex rows run on complex
COMPLEX_BINARY = (0, 3, 5, 6)  # same shapes, broadcast both ways, non-contiguous, with a Python number
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
    """A row for ``lib.<name>(x)``, also in half precision (``complex_samples=COMPLEX_UNARY`` for complex too)."""
    return OpSpec(name, getattr_op(name), UNARY, domain=domain, dtypes=HALF + INTS,
                  errors=(not_a_tensor(getattr_op(name)),), **options)


def compare(name: str, complex_samples: tuple = ()) -> OpSpec:
    samples = BINARY[:6] + (s(A(3, 4), 1), s(A(3, 4), 0.5), s(A(3, 4), True))
    return OpSpec(
        name, getattr_op(name), samples, integer_valued=True, domain=(-2.0, 2.0), dtypes=FLOATS + INTS,
        differentiable=False, errors=binary_errors(name), complex_samples=complex_samples,
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

