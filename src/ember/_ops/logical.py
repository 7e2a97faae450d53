"""Comparison and logic: closeness, classification of floats (isnan ...), membership, logical and bitwise ops.

None of these is differentiable: each is a plain function that returns a new tensor
(bool, or the promoted integer dtype for the bitwise ops).

>>> import ember
>>> x = ember.tensor([1., float("nan"), float("inf")])
>>> ember.isfinite(x), ember.isclose(x, x, equal_nan=True)
(tensor([ True, False, False]), tensor([True, True, True]))
"""
from __future__ import annotations

import numpy as np

from ember import _dtype
from ember._dtype import kind
from ember._ops._quiet import IGNORE_ALL, quietly
from ember._ops._support import (
    check_broadcast, check_operand, ember_function, promoted_arrays, refuse_complex, require_tensor, result_dtype,
    wrap,
)
from ember.autograd.function import Function
from ember._ops.binary import _refuse, _tensors, _two_operands
from ember._ops.out import into_exact_out, into_out
from ember._tensor import Tensor


def _result(op: str, array: np.ndarray, out, *inputs) -> Tensor:
    """``array`` as a tensor, or written into ``out`` (which, as the inputs, may require grad: no gradient flows)."""
    result = wrap(np.asarray(array))
    return result if out is None else into_out(op, result, out, *inputs, differentiable=False)


# ----------------------------------------------------------------- classifying floats


def _classify(op: str, test, input: Tensor, out=None) -> Tensor:
    """``test`` on a float or complex tensor's data; integers and bools are all finite, not nan, not inf."""
    data = require_tensor(input, op)._data
    result = test(data) if kind(data.dtype) in "fc" else np.full(data.shape, test is np.isfinite)
    return _result(op, result, out, input)


@ember_function
def isnan(input: Tensor) -> Tensor:
    """Where ``input`` is nan.

    >>> ember.isnan(ember.tensor([1., 0.]) / 0)
    tensor([False,  True])
    """
    return _classify("isnan", np.isnan, input)


@ember_function
def isinf(input: Tensor) -> Tensor:
    """Where ``input`` is inf or -inf.

    >>> ember.isinf(ember.tensor([0., -1.]) / 0)
    tensor([False,  True])
    """
    return _classify("isinf", np.isinf, input)


@ember_function
def isposinf(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """Where ``input`` is inf.

    >>> ember.isposinf(ember.tensor([1., -1.]) / 0)
    tensor([ True, False])
    """
    refuse_complex("isposinf", require_tensor(input, "isposinf")._data, "isposinf does not support complex inputs",
                   RuntimeError)
    return _classify("isposinf", np.isposinf, input, out)


@ember_function
def isneginf(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """Where ``input`` is -inf.

    >>> ember.isneginf(ember.tensor([1., -1.]) / 0)
    tensor([False,  True])
    """
    refuse_complex("isneginf", require_tensor(input, "isneginf")._data, "isneginf does not support complex inputs",
                   RuntimeError)
    return _classify("isneginf", np.isneginf, input, out)


@ember_function
def isfinite(input: Tensor) -> Tensor:
    """Where ``input`` is neither nan nor infinite.

    >>> ember.isfinite(ember.tensor([1., 1., 0.]) / ember.tensor([1., 0., 0.]))
    tensor([ True, False, False])
    """
    return _classify("isfinite", np.isfinite, input)


@ember_function
def signbit(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """Where the sign bit is set: negative values, and -0.0 and negative nans too.

    >>> ember.signbit(ember.tensor([-1., -0., 0., 2.]))
    tensor([ True,  True, False, False])
    """
    data = refuse_complex("signbit", require_tensor(input, "signbit")._data,
                          "signbit is not implemented for complex tensors")
    result = wrap(np.signbit(data) if data.dtype.kind != "b" else np.zeros(data.shape, bool))
    return result if out is None else into_exact_out("signbit", result, out, input)  # as torch: a bool out only


@ember_function
def isreal(input: Tensor) -> Tensor:
    """Where ``input``'s imaginary part is 0: everywhere for a real tensor.

    >>> ember.isreal(ember.tensor([1 + 0j, 2 + 1j]))
    tensor([ True, False])
    """
    data = require_tensor(input, "isreal")._data
    if data.dtype.kind == "c":
        return wrap(np.asarray(data.imag == 0))
    return wrap(np.ones_like(data, np.bool_))  # (in the input's layout, as torch's)


# ----------------------------------------------------------------- closeness and membership


def _closeness(input, other, rtol: float, atol: float, equal_nan: bool, op: str) -> np.ndarray:
    """``|input - other| <= atol + rtol * |other|`` (equal infinities too), in the operands' common dtype."""
    _tensors(op, (input, "input"), (other, "other"))
    x, y = input._data, other._data
    if x.dtype != y.dtype:
        raise RuntimeError(f"{op}: {input.dtype} did not match {other.dtype}; convert one, e.g. other.to(input.dtype)")
    for name, value in (("rtol", rtol), ("atol", atol)):
        if value < 0:
            raise RuntimeError(f"{op}: {name} must be greater than or equal to zero, but got {value}")
    if x.shape != y.shape:
        check_broadcast(op, x.shape, y.shape)
    close = x == y
    if equal_nan and _dtype.kind(x.dtype) in "fc":
        close = close | (np.isnan(x) & np.isnan(y))
    if rtol == 0 and atol == 0:
        return close
    if _dtype.kind(x.dtype) not in "fc":  # integers and bools are compared as doubles, whose differences cannot wrap
        x, y = x.astype(np.float64), y.astype(np.float64)
    error = quietly(IGNORE_ALL, _tolerance_met, x, y, rtol, atol)
    return close | error


def _tolerance_met(x: np.ndarray, y: np.ndarray, rtol: float, atol: float) -> np.ndarray:
    dtype = x.dtype.type
    real = dtype if x.dtype.kind != "c" else np.finfo(x.dtype).dtype.type  # (tolerances are real numbers)
    allowed = real(atol) + np.abs(dtype(rtol) * y)
    actual = np.abs(x - y)
    return np.isfinite(actual) & (actual <= allowed)


@ember_function
def isclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
            equal_nan: bool = False) -> Tensor:
    """Where ``|input - other| <= atol + rtol * |other|``; nan is close to nan only with ``equal_nan``.

    >>> ember.isclose(ember.tensor([1., 2.]), ember.tensor([1.000001, 2.1]))
    tensor([ True, False])
    """
    return wrap(_closeness(input, other, rtol, atol, equal_nan, "isclose"))


@ember_function
def allclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> bool:
    """Whether every element of ``input`` is close to ``other``'s (see ``isclose``).

    >>> ember.allclose(ember.tensor([1., 2.]), ember.tensor([1.000001, 2.]))
    True
    """
    return bool(np.all(_closeness(input, other, rtol, atol, equal_nan, "allclose")))


@ember_function
def isin(elements: Tensor | float, test_elements: Tensor | float, *, assume_unique: bool = False,
         invert: bool = False, out: Tensor | None = None) -> Tensor:
    """Where ``elements`` occur in ``test_elements`` (or, with ``invert``, do not); shaped as ``elements``.

    >>> ember.isin(ember.tensor([1, 2, 3]), ember.tensor([3, 1]))
    tensor([ True, False,  True])
    """
    elements, test_elements = _two_operands("isin", elements, test_elements)
    if _is_bool(elements) or _is_bool(test_elements):
        raise RuntimeError("isin: Unsupported input type encountered for isin(): Bool; convert to an integer dtype, "
                           "or use logical ops for bools")
    for value in (elements, test_elements):
        if isinstance(value, Tensor):
            refuse_complex("isin", value._data, "isin: Unsupported input type encountered for isin(): "
                           f"{_dtype.scalar_type_name(value._data.dtype)}", RuntimeError)
    dtype = result_dtype(elements, test_elements).np  # the shapes need not broadcast: no promoted_arrays here
    values, tests = [v._data.astype(dtype, copy=False) if isinstance(v, Tensor) else np.asarray(v).astype(dtype)
                     for v in (elements, test_elements)]
    if dtype is _dtype.BF16:  # NumPy's bfloat16 sort, which isin uses, mixes NaNs among the numbers
        values, tests = values.astype(np.float32), tests.astype(np.float32)  # (each held exactly)
    result = wrap(np.asarray(np.isin(values, tests, assume_unique=assume_unique, invert=invert)))
    return result if out is None else into_exact_out("isin", result, out, elements, test_elements)


def _is_bool(value) -> bool:
    return isinstance(value, bool) or isinstance(value, Tensor) and value._data.dtype == np.bool_


# ----------------------------------------------------------------- comparisons in place


class ComparedInPlace(Function):
    """The value of ``x.eq_(other)`` and its kin: 0 and 1 in x's dtype, recorded as torch records it, with zero
    gradients (a comparison is flat wherever it has a slope), so that x stays in the graph.

    A subclass per comparison and kind of ``other`` (a number: ...Backward0, a tensor: ...Backward1, made by
    ``_in_place_comparison``) gives the node torch's name; ``ctx._forward_cls`` is the subclass applied.
    """

    backward_on_arrays = True

    @staticmethod
    def forward(ctx, x, other):
        kind = ctx._forward_cls
        a, b = promoted_arrays(x, other, kind.op)
        if a.dtype.kind == "c" and kind.ufunc is not np.equal and kind.ufunc is not np.not_equal:
            refuse_complex(kind.op, a)  # complex numbers have no order (as lt's: a complex operand makes both so)
        return wrap(np.asarray(kind.ufunc(a, b)).astype(x._data.dtype))

    @staticmethod
    def backward(ctx, grad):
        zero = grad * 0
        return zero, (zero if ctx.needs_input_grad[1] else None)


def _in_place_comparison(number_node: str, tensor_node: str, op: str, ufunc) -> tuple:
    """The two Functions of one comparison in place: with a number (its node ``number_node``) and with a tensor."""
    with_number = type(op, (ComparedInPlace,), {"backward_name": number_node, "op": op, "ufunc": ufunc})
    return with_number, type(op, (with_number,), {"backward_name": tensor_node})


EQ_IN_PLACE = _in_place_comparison("EqBackward0", "EqBackward1", "eq_", np.equal)
NE_IN_PLACE = _in_place_comparison("NeBackward0", "NeBackward1", "ne_", np.not_equal)
LT_IN_PLACE = _in_place_comparison("LtBackward0", "LtBackward1", "lt_", np.less)
LE_IN_PLACE = _in_place_comparison("LeBackward0", "LeBackward1", "le_", np.less_equal)
GT_IN_PLACE = _in_place_comparison("GtBackward0", "GtBackward1", "gt_", np.greater)
GE_IN_PLACE = _in_place_comparison("GeBackward0", "GeBackward1", "ge_", np.greater_equal)


def compared_in_place(functions: tuple):
    """``function(x, other)`` for ``apply_inplace``: of a comparison's two Functions, the one for ``other``'s kind."""
    with_number, with_tensor = functions

    def compared(x: Tensor, other) -> Tensor:
        other = check_operand(other, with_number.op, 2)
        return (with_tensor if isinstance(other, Tensor) else with_number).apply(x, other)

    return compared


# ----------------------------------------------------------------- logic


def _logical(op: str, ufunc, input, other, out) -> Tensor:
    _tensors(op, (input, "input"), (other, "other"))
    x, y = input._data, other._data
    if x.shape != y.shape:
        check_broadcast(op, x.shape, y.shape)
    return _result(op, ufunc(x.astype(bool, copy=False), y.astype(bool, copy=False)), out, input, other)


@ember_function
def logical_and(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
    """Where both are nonzero.

    >>> ember.logical_and(ember.tensor([0., 1., 2.]), ember.tensor([1, 0, 3]))
    tensor([False, False,  True])
    """
    return _logical("logical_and", np.logical_and, input, other, out)


@ember_function
def logical_or(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
    """Where either is nonzero.

    >>> ember.logical_or(ember.tensor([0., 1., 0.]), ember.tensor([0, 0, 3]))
    tensor([False,  True,  True])
    """
    return _logical("logical_or", np.logical_or, input, other, out)


@ember_function
def logical_xor(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
    """Where exactly one is nonzero.

    >>> ember.logical_xor(ember.tensor([0., 1., 2.]), ember.tensor([1, 0, 3]))
    tensor([ True,  True, False])
    """
    return _logical("logical_xor", np.logical_xor, input, other, out)


@ember_function
def logical_not(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """Where ``input`` is zero.

    >>> ember.logical_not(ember.tensor([0., 2.]))
    tensor([ True, False])
    """
    return _result("logical_not", _is_zero(require_tensor(input, "logical_not")._data), out, input)


_COMPARED_TO_ZERO = (np.dtype(np.float32), np.dtype(np.float64))


def _is_zero(x: np.ndarray) -> np.ndarray:
    """NumPy's logical_not; for float32 and float64 ``x == 0`` (the same, nans being true, and some 8 times faster)."""
    return np.equal(x, 0) if x.dtype in _COMPARED_TO_ZERO else np.logical_not(x)


# ----------------------------------------------------------------- bitwise


def _bitwise(op: str, ufunc, input, other, out) -> Tensor:
    input, other = _two_operands(op, input, other)
    x, y = promoted_arrays(input, other, op)
    _refuse(op, np.result_type(x, y), "fc")
    return _result(op, ufunc(x, y), out, input, other)


@ember_function
def bitwise_and(input: Tensor | int, other: Tensor | int, *, out: Tensor | None = None) -> Tensor:
    """The bits set in both (for bools: logical and).

    >>> ember.bitwise_and(ember.tensor([12, 10]), 6)
    tensor([4, 2])
    """
    return _bitwise("bitwise_and", np.bitwise_and, input, other, out)


@ember_function
def bitwise_or(input: Tensor | int, other: Tensor | int, *, out: Tensor | None = None) -> Tensor:
    """The bits set in either (for bools: logical or).

    >>> ember.bitwise_or(ember.tensor([12, 10]), 6)
    tensor([14, 14])
    """
    return _bitwise("bitwise_or", np.bitwise_or, input, other, out)


@ember_function
def bitwise_xor(input: Tensor | int, other: Tensor | int, *, out: Tensor | None = None) -> Tensor:
    """The bits set in exactly one (for bools: logical xor).

    >>> ember.bitwise_xor(ember.tensor([12, 10]), 6)
    tensor([10, 12])
    """
    return _bitwise("bitwise_xor", np.bitwise_xor, input, other, out)


@ember_function
def bitwise_not(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """Every bit flipped (for bools: logical not).

    >>> ember.bitwise_not(ember.tensor([0, -1]))
    tensor([-1,  0])
    """
    data = require_tensor(input, "bitwise_not")._data
    _refuse("bitwise_not", data.dtype, "fc")
    result = wrap(np.invert(data))
    return result if out is None else into_exact_out("bitwise_not", result, out, input)  # as torch: no cast


def invert(input: Tensor) -> Tensor:
    """``~input``: as ``bitwise_not``, but a float is a TypeError, as torch's operator."""
    if _dtype.kind(input._data.dtype) in "fc":
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors; "
                        "for a mask of zeros use ember.logical_not(x)")
    return bitwise_not.__wrapped__(input)

