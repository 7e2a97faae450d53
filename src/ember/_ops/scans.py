"""Scans along a dim: cumsum, cumprod, cummax, cummin and logcumsumexp.

>>> import ember
>>> ember.cumsum(ember.tensor([1., 2., 3.]), dim=0)
tensor([1., 3., 6.])
>>> ember.cummax(ember.tensor([1., 3., 2.]), dim=0).indices
tensor([0, 1, 1])
"""
from __future__ import annotations

import numpy as np

from ember import _dtype, return_types
from ember._ops import _cascade
from ember._ops._quiet import IGNORE_ALL, quietly, quietly_on_objection
from ember._ops._support import ember_function, normalize_dims, refuse_complex, require_tensor, row_major, wrap
from ember._ops.arithmetic import where
from ember._ops.complex import conjugated
from ember._ops.copy import to
from ember._ops.extrema import AddAlong, _into_pair
from ember._ops.out import dtype_from_out, into_out, into_out_of_its_dtype
from ember._ops.reduction import _sum_dtype, real_part_for
from ember._ops.sorting import flat_positions
from ember._tensor import Tensor
from ember.autograd.function import Function

_SINGLE, _DOUBLE = np.dtype(np.float32), np.dtype(np.float64)


# The running values of float32 scans are carried in double, as torch carries them (see _cascade).
def _running_sum(data: np.ndarray, axis: int, out: np.ndarray | None = None) -> np.ndarray:
    return _cascade.scan(np.add, data, axis, out)


def _running_product(data: np.ndarray, axis: int) -> np.ndarray:
    return _cascade.scan(np.multiply, data, axis)


def _running_logsumexp(data: np.ndarray, axis: int) -> np.ndarray:
    return _cascade.scan(np.logaddexp, data, axis)


def _scan_axis(x: Tensor, dim, op: str) -> int:
    """``dim`` as an axis of ``x`` seen as at least 1-d (a 0-d tensor scans its one element)."""
    if type(dim) is int and 0 <= dim < x._data.ndim:  # the usual call
        return dim
    if not isinstance(dim, (int, np.integer)) or isinstance(dim, bool):
        raise TypeError(f"{op}(): argument 'dim' must be int, not {type(dim).__name__}")
    (axis,) = normalize_dims(int(dim), x._data.ndim, op)
    return axis


def _scanned(function, data: np.ndarray, axis: int, target: np.dtype) -> np.ndarray:
    """``function(data, axis)`` in ``target`` (half in single, rounded once), on a 0-d tensor as one element."""
    work = data.astype(target, copy=False)
    if work.dtype == _dtype.HALF:
        work = work.astype(_SINGLE)
    result = quietly(IGNORE_ALL, function, work.reshape(data.shape or (1,)), axis)
    return np.asarray(result).astype(target, copy=False).reshape(data.shape)


class Flip(Function):
    """``x`` reversed along ``axis``."""

    backward_name = "FlipBackward0"

    @staticmethod
    def forward(ctx, x, axis):
        ctx.axis = axis
        return wrap(np.flip(x._data, axis).copy())

    @staticmethod
    def backward(ctx, grad):
        return Flip.apply(grad, ctx.axis), None


def _reversed_scan(scan, value: Tensor, axis: int) -> Tensor:
    """``scan`` run from the end of ``axis`` towards its start."""
    if value._data.ndim == 0:
        return scan(value, axis)
    return Flip.apply(scan(Flip.apply(value, axis), axis), axis)


# ----------------------------------------------------------------- cumsum


class Cumsum(Function):
    """The running sum along ``axis``; ``dtype`` (to sum in) is left out when there is none, as ``apply`` then
    takes the faster path of two operands."""

    backward_name = "CumsumBackward0"
    torch_saved_values = {"dim": "axis"}
    backward_on_arrays = True  # on arrays, the reversed running sum is computed at once

    @staticmethod
    def forward(ctx, x, axis, dtype=None):
        data = x._data
        if dtype is None and data.dtype is _SINGLE and not ctx.needs_input_grad[0] and data.ndim and \
                data.shape[axis] <= _cascade.SHORT_SCAN:  # the usual small call, recorded nothing: no ctx to fill
            try:  # (quietly_on_objection's and _short_single_sum's steps, spelled out: each call is 5 % of the op)
                return wrap(_np_add_accumulate(data.astype(_DOUBLE), axis).astype(_SINGLE, order="C"))
            except (FloatingPointError, RuntimeWarning):  # (row-major, as torch's result, whatever data's layout)
                return wrap(quietly(IGNORE_ALL, _short_single_sum, data, axis))
        return wrap(row_major(Cumsum._running(ctx, data, axis, dtype)))  # torch's result is contiguous

    @staticmethod
    def _running(ctx, data: np.ndarray, axis: int, dtype) -> np.ndarray:
        """The running sum, computed on ``data`` as it lies (a strided column's blocks are summed as they are)."""
        ctx.axis, ctx.dtype = axis, data.dtype
        ctx.unused = _NO_GRADIENT if dtype is None else _NO_GRADIENTS  # for axis (and dtype, if given)
        if dtype is None and (data.dtype is _SINGLE or data.dtype is _DOUBLE) and data.ndim:
            if data.shape[axis] <= _cascade.SHORT_SCAN:  # the usual small tensor: NumPy's scan at once
                return quietly_on_objection(IGNORE_ALL, _cascade.short_scan, np.add, data, axis, None)
            return quietly(IGNORE_ALL, _running_sum, data, axis)
        if dtype is None and data.dtype is _dtype.BF16 and data.ndim:  # as torch: summed in single, rounded once
            return quietly(IGNORE_ALL, _running_sum, data.astype(np.float32), axis).astype(data.dtype)
        return _scanned(_running_sum, data, axis, _sum_dtype(data, dtype))

    @staticmethod
    def backward(ctx, grad):
        if type(grad) is np.ndarray and grad.dtype is ctx.dtype:
            return (_reversed_cumsum(grad, ctx.axis),) + ctx.unused
        if type(grad) is np.ndarray:
            grad = wrap(grad)  # a dtype to convert to: the formula for tensors
        if grad._data.dtype != ctx.dtype and _dtype.kind(ctx.dtype) == "f":  # as torch: summed back in the input's dtype
            grad = to(grad, _dtype.from_numpy_dtype(ctx.dtype))
        return (ReversedCumsum.apply(grad, ctx.axis),) + ctx.unused


_NO_GRADIENT, _NO_GRADIENTS = (None,), (None, None)
_AXES = {(ndim, dim): dim % ndim for ndim in range(1, 7) for dim in range(-ndim, ndim)}  # (ndim, dim) -> axis


def _short_single_sum(data: np.ndarray, axis: int) -> np.ndarray:
    """``_cascade.short_scan``'s running sum of a float32 ``data``, spelled out: carried in double, rounded once."""
    return _np_add_accumulate(data.astype(_DOUBLE), axis).astype(_SINGLE, order="C")


_np_add_accumulate = np.add.accumulate


class ReversedCumsum(Function):
    """The running sum from the end of ``axis`` towards its start: the gradient of cumsum, and cumsum its own.

    The scan runs on reversed views of the input and of the result, so neither is copied in reverse.
    """

    backward_name = "FlipBackward0"  # as torch's graph shows it: its reversed scan ends with a flip

    @staticmethod
    def forward(ctx, x, axis):
        ctx.axis = axis
        return wrap(_reversed_cumsum(x._data, axis))

    @staticmethod
    def backward(ctx, grad):
        return Cumsum.apply(grad, ctx.axis), None


def _reversed_cumsum(data: np.ndarray, axis: int) -> np.ndarray:
    """The running sum of ``data`` from the end of ``axis`` towards its start, in a new array."""
    if not data.ndim:
        return data.copy()
    backwards = (slice(None),) * axis + (slice(None, None, -1),)
    if data.dtype is _SINGLE and data.shape[axis] <= _cascade.SHORT_SCAN:
        # scanned into a new array, then copied back in order: on few elements, a sixth faster than NumPy's scan
        # told to carry in double into a reversed view of single (the same values)
        scanned = quietly_on_objection(IGNORE_ALL, _cascade.short_scan, np.add, data[backwards], axis, None)
        return np.ascontiguousarray(scanned[backwards])
    if data.dtype is _SINGLE or data.dtype is _DOUBLE:
        out = np.empty(data.shape, data.dtype)
        quietly(IGNORE_ALL, _running_sum, data[backwards], axis, out[backwards])
        return out
    return np.ascontiguousarray(_scanned(_running_sum, data[backwards], axis, data.dtype)[backwards])


@ember_function
def cumsum(input: Tensor, dim: int, *, dtype=None, out: Tensor | None = None) -> Tensor:
    """The running sum along ``dim``; integers and bools add up as int64 (unless ``dtype`` says otherwise).

    >>> ember.cumsum(ember.tensor([[1, 2], [3, 4]]), dim=1)
    tensor([[1, 3],
            [3, 7]])
    """
    if type(input) is Tensor and dtype is None and out is None and type(dim) is int:
        axis = _AXES.get((input._data.ndim, dim))
        if axis is not None:  # the usual call, x.cumsum(1) or (-1): none of the conversions below apply
            return Cumsum.apply(input, axis)
    x = require_tensor(input, "cumsum")
    if out is not None:  # as torch: out's dtype is the one summed in (the input cast first)
        dtype = dtype_from_out("cumsum", out, dtype)
    axis = _scan_axis(x, dim, "cumsum")
    _refuse_bool("cumsum", dtype, x)
    x = real_part_for(x, dtype)
    result = Cumsum.apply(x, axis) if dtype is None else Cumsum.apply(x, axis, dtype)
    return result if out is None else into_out("cumsum", result, out, x)


def _refuse_bool(op: str, dtype, x: Tensor) -> None:
    """torch has no running sum or product in bool: asked for one (by ``dtype``, a bool ``out`` or in place on
    bools), it refuses. (Without a dtype, bools add up as int64.) A 0-d or empty input is only copied, in torch
    without its kernel: that one is not refused."""
    if x._data.ndim == 0 or x._data.size == 0:
        return
    if dtype is not None and _dtype.to_dtype(dtype).np == np.bool_:
        raise NotImplementedError(f'"{op}" not implemented for \'Bool\'; leave dtype out (bools then add up as '
                                  "int64)")


def check_inplace_dtype(op: str, x: Tensor, dtype) -> None:
    """``x.cumsum_(dim, dtype=...)``: as torch, the dtype may only be ``x``'s own (the result is written into x)."""
    if dtype is not None and np.dtype(_dtype.to_dtype(dtype).np) != x._data.dtype:
        raise RuntimeError(
            f"{op}: Bad in-place call: input tensor dtype {_dtype.scalar_type_name(x._data.dtype)} and output tensor "
            f"dtype {_dtype.scalar_type_name(_dtype.to_dtype(dtype).np)} should match; leave dtype out, or use the "
            "out-of-place op"
        )


def inplace_dtype(x: Tensor, dtype):
    """The dtype of ``x.cumsum_(dim)``'s running sum: ``x``'s own for bools (which torch refuses), else as
    out of place (integers add up as int64 and are cast back)."""
    if dtype is None and x._data.dtype == np.bool_:
        return _dtype.bool_
    return dtype


# ----------------------------------------------------------------- cumprod


class Cumprod(Function):
    """The running product; its gradient is right with zeros in the input too, as torch's."""

    backward_name = "CumprodBackward0"
    torch_saved_tensors = {"result": 1, "self": 0}
    torch_saved_values = {"dim": "axis"}
    backward_on_arrays = True  # on float arrays, each slice is split at its first zero at once

    @staticmethod
    def forward(ctx, x, axis, dtype):
        data = row_major(x._data)  # torch's result is contiguous
        out = wrap(_scanned(_running_product, data, axis, _sum_dtype(data, dtype)))
        ctx.axis = axis
        ctx.save_for_backward(x, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        x, out = ctx.saved_tensors
        if type(grad) is np.ndarray:
            if _on_arrays(x, out, grad):
                return _cumprod_gradient_on_arrays(x, out, grad, ctx.axis), None, None
            x, out, grad = wrap(x), wrap(out), wrap(grad)  # half, complex, casts: the formula for tensors
        return _cumprod_gradient(x, out, grad, ctx.axis), None, None


def _on_arrays(x: np.ndarray, out: np.ndarray, grad: np.ndarray) -> bool:
    return (x.dtype is _SINGLE or x.dtype is _DOUBLE) and out.dtype is x.dtype and grad.dtype is x.dtype


def _zero_split(data: np.ndarray, axis: int) -> tuple:
    """(where no zero comes before or at an element, where the first zero of its slice is, where a zero came
    earlier in the slice) along ``axis``: the three parts of the gradient with zeros."""
    zeros_so_far = np.cumsum(data == 0, axis)
    first = zeros_so_far == 1
    first &= data == 0
    return zeros_so_far == 0, first, (zeros_so_far > 0) & ~first


def _cumprod_gradient_on_arrays(x: np.ndarray, out: np.ndarray, grad: np.ndarray, axis: int) -> np.ndarray:
    """``_cumprod_gradient``'s first-order values in one pass of NumPy per part.

    Before the first zero of a slice it is ``sum(grad * out)[i:] / x[i]``; at the first zero, the running
    product with that zero taken as 1, weighted by ``grad`` and summed from there on; after it, 0 (each product
    holds the first zero and the element as well).
    """
    if x.ndim == 0:
        return grad.copy()
    if not (x == 0).any():
        return _reversed_cumsum(grad * out, axis) / x
    before, first, _ = _zero_split(x, axis)
    # before the zero, the sum stops there, as torch's: the products from the zero on add 0 (or, where an inf
    # came before it, would add 0 * inf = nan)
    later_sums = _reversed_cumsum(np.where(before, grad * out, 0), axis)
    # at the first zero: the product before it times the sum, up to and with the second zero, of grad times the
    # products after it (torch's order: an inf before the zero times a sum of 0 is nan, not inf - inf)
    zero = x == 0
    up_to_second = (np.cumsum(zero, axis) - zero < 2) & ~before
    after_zero = _scanned(_running_product, np.where(before | first, 1, x), axis, x.dtype)
    before_zero = _scanned(_running_product, np.where(before, x, 1), axis, x.dtype)
    at_first = before_zero * _reversed_cumsum(np.where(up_to_second, grad * after_zero, 0), axis)
    return np.where(before, later_sums / np.where(before, x, 1), np.where(first, at_first, 0))


def _cumprod_gradient(x: Tensor, out: Tensor, grad: Tensor, axis: int) -> Tensor:
    """The sum over ``k >= i`` of ``grad[k]`` times the product of ``x[:k + 1]`` without ``x[i]``, in ember ops
    (differentiable again).

    Without zeros that is ``sum(grad * out)[i:] / x[i]``. Where a slice has zeros, that holds before its
    first zero; from the first zero on, it is the gradient of the scan with that zero taken as 1 (a scan with
    one zero fewer), times the zero itself after it: 0, but with the derivative a second backward needs.
    Complex products enter conjugated, as every holomorphic derivative does.
    """
    if x._data.ndim == 0:
        return grad * 1.0
    levels = []  # per zero taken out: (before the zero, the gradient there, the factor after it)
    while (x._data == 0).any():
        before, first, after = (wrap(part) for part in _zero_split(x._data, axis))
        head = ReversedCumsum.apply(grad * conjugated(out), axis) / conjugated(where(before, x, 1.0))
        first_zero = (x * first).sum(axis, keepdim=True)
        levels.append((before, head, where(after, conjugated(first_zero), 1.0)))
        x = where(first, 1.0, x)
        out = _cumprod(x, axis)
    gradient = ReversedCumsum.apply(grad * conjugated(out), axis) / conjugated(x)
    for before, head, factor in reversed(levels):
        gradient = where(before, head, gradient * factor)
    return gradient


def _cumprod(value: Tensor, axis: int) -> Tensor:
    return Cumprod.apply(value, axis, None)


@ember_function
def cumprod(input: Tensor, dim: int, *, dtype=None, out: Tensor | None = None) -> Tensor:
    """The running product along ``dim``; integers and bools multiply as int64.

    >>> ember.cumprod(ember.tensor([1., 2., 0., 4.]), dim=0)
    tensor([1., 2., 0., 0.])
    """
    x = require_tensor(input, "cumprod")
    if out is not None:  # as cumsum's
        dtype = dtype_from_out("cumprod", out, dtype)
    axis = _scan_axis(x, dim, "cumprod")
    _refuse_bool("cumprod", dtype, x)
    x = real_part_for(x, dtype)
    result = Cumprod.apply(x, axis, dtype)
    return result if out is None else into_out("cumprod", result, out, x)


# ----------------------------------------------------------------- cummax and cummin


class Cummax(Function):
    """The running largest (smallest) element and its index: the last of equal ones, nan once one is met.

    The gradient of each result goes to the element it came from, as torch's.
    """

    backward_name = "CummaxBackward0"

    @staticmethod
    def forward(ctx, x, axis, largest):
        data = x._data
        work = data.reshape(data.shape or (1,))
        values, indices = _running_extremum(work, axis, largest)
        ctx.indices, ctx.axis = indices, axis
        ctx.save_for_backward(x)  # for its shape, as torch saves it: changing x in place is then an error
        return wrap(values.reshape(data.shape)), wrap(indices.reshape(data.shape))

    @staticmethod
    def backward(ctx, grad, _):
        (x,) = ctx.saved_tensors
        grad = grad.reshape(ctx.indices.shape)
        return AddRuns.apply(grad, ctx.indices, ctx.axis, ctx.indices.shape).reshape(x.shape), None, None


class Cummin(Cummax):
    backward_name = "CumminBackward0"


class AddRuns(AddAlong):
    """``AddAlong`` for indices that never decrease along ``axis`` (a running extremum's): each run of equal
    indices is summed in one pass, at a fraction of ``np.add.at``'s cost."""

    @staticmethod
    def forward(ctx, values, indices, axis, shape):
        ctx.axis = axis
        ctx.save_for_backward(indices)  # read by AddAlong's backward
        return wrap(_sum_runs(values._data, indices, axis))


def _sum_runs(values: np.ndarray, indices: np.ndarray, axis: int) -> np.ndarray:
    """Zeros of ``values``' shape, with each run of equal ``indices`` along ``axis`` summed at that index."""
    moved_values, moved_indices = np.moveaxis(values, axis, -1), np.moveaxis(indices, axis, -1)
    size = moved_values.shape[-1]
    out = np.zeros(moved_values.size, values.dtype)
    if out.size:
        starts = np.ones(moved_indices.shape, bool)
        np.not_equal(moved_indices[..., 1:], moved_indices[..., :-1], out=starts[..., 1:])
        starts = np.flatnonzero(starts)
        targets = starts - starts % size + moved_indices.reshape(-1)[starts]
        out[targets] = np.add.reduceat(moved_values.reshape(-1), starts)
    return np.moveaxis(out.reshape(moved_values.shape), -1, axis)


def _running_extremum(work: np.ndarray, axis: int, largest: bool) -> tuple:
    if work.dtype in _KEYED and work.shape[axis] < 1 << 31:
        return _keyed_running_extremum(work, axis, largest)
    values = (np.maximum if largest else np.minimum).accumulate(work, axis)
    if not work.size:
        return values, np.zeros(work.shape, np.int64)
    previous = np.concatenate([np.take(work, [0], axis), np.delete(values, -1, axis)], axis)
    new = quietly(IGNORE_ALL, np.greater_equal if largest else np.less_equal, work, previous)
    floating = _dtype.kind(work.dtype) == "f"
    if floating:
        new |= np.isnan(work)
    positions = np.arange(work.shape[axis]).reshape([-1 if i == axis else 1 for i in range(work.ndim)])
    indices = np.maximum.accumulate(np.where(new, positions, 0), axis).astype(np.int64)
    if floating and not np.all(work):  # the accumulate keeps the first of -0 and 0, torch the last: its sign
        values = np.take_along_axis(work, indices, axis)
    return values, indices


# the dtypes whose values order as 32-bit integers do: their running extremum takes one accumulate of 64-bit keys
_KEYED = frozenset(np.dtype(t) for t in (np.float32, np.float16, np.int32, np.int16, np.int8, np.uint16, np.uint8)) | (
    frozenset([_dtype.BF16]) if _dtype.BF16 is not None else frozenset())
_NAN_KEY = np.int32(np.iinfo(np.int32).max)  # above every number's key, in both directions: NaN wins and stays


def _keyed_running_extremum(work: np.ndarray, axis: int, largest: bool) -> tuple:
    """The running extremum and its index by one ``np.maximum.accumulate`` (rather than one for the values and
    one for the indices): each element becomes a 64-bit key, its value's order key (negated for a minimum)
    above its position, so that the running largest key holds, among equal values, the last position, as
    torch picks. The values are then the elements at those positions (a -0 and a 0 have one key)."""
    floating = _dtype.kind(work.dtype) == "f"
    exact = work.astype(np.float32 if floating else np.int32, copy=False)
    keys = _float_order_keys(exact + np.float32(0)) if floating else exact  # + 0 makes -0 a 0
    combined = keys.astype(np.int64)
    if not largest:
        np.invert(combined, out=combined)
    if floating:
        nans = np.isnan(exact)
        if nans.any():
            combined[nans] = _NAN_KEY
    combined <<= 32
    combined |= np.arange(work.shape[axis], dtype=np.int64).reshape([-1 if d == axis else 1 for d in range(work.ndim)])
    np.maximum.accumulate(combined, axis, out=combined)
    combined &= 0xFFFFFFFF  # the positions alone
    return np.take(work.reshape(-1), flat_positions(work.shape, combined, axis)), combined


def _float_order_keys(values: np.ndarray) -> np.ndarray:
    """float32 values as int32 keys in the same order (-0 below 0)."""
    bits = values.view(np.int32)
    flips = bits >> 31
    flips &= np.int32(0x7FFFFFFF)
    flips ^= bits
    return flips


def _cumulative_extremum(input, dim, out, largest: bool):
    op = "cummax" if largest else "cummin"
    x = require_tensor(input, op)
    if x._data.size == 0 and x._data.ndim > 0 and isinstance(dim, (int, np.integer)) and not isinstance(dim, bool):
        axis = 0  # torch checks not even the dim of an empty input: along any, the result is as empty
    else:
        axis = _scan_axis(x, dim, op)  # as torch, a wrong dim is named before a complex input is refused
    refuse_complex(op, x._data)
    values, indices = (Cummax if largest else Cummin).apply(x, axis, largest)
    if out is not None:
        return getattr(return_types, op + "_out")(*_into_pair(op, (values, indices), out, x))
    return getattr(return_types, op)(values, indices)


@ember_function
def cummax(input: Tensor, dim: int, *, out=None):
    """``(values, indices)``: the largest element so far along ``dim``, and where it is.

    >>> ember.cummax(ember.tensor([1., 3., 2., 5.]), 0).values
    tensor([1., 3., 3., 5.])
    """
    return _cumulative_extremum(input, dim, out, True)


@ember_function
def cummin(input: Tensor, dim: int, *, out=None):
    """``(values, indices)``: the smallest element so far along ``dim``, and where it is.

    >>> ember.cummin(ember.tensor([3., 1., 2., 0.]), 0).indices
    tensor([0, 1, 1, 3])
    """
    return _cumulative_extremum(input, dim, out, False)


# ----------------------------------------------------------------- logcumsumexp


class Logcumsumexp(Function):
    """``log(cumsum(exp(x)))`` along ``axis``, without overflow."""

    backward_name = "LogcumsumexpBackward0"
    torch_saved_tensors = {"result": 1, "self": 0}
    torch_saved_values = {"dim": "axis"}

    @staticmethod
    def forward(ctx, x, axis):
        data = row_major(x._data)  # torch's result is contiguous
        if _dtype.kind(data.dtype) not in "fc":
            raise NotImplementedError(f'"logcumsumexp_out_cpu" not implemented for '
                                      f"'{_dtype.scalar_type_name(data.dtype)}'; convert first, e.g. x.float()")
        scan = _running_logsumexp if _dtype.kind(data.dtype) == "f" else _complex_logaddexp_scan
        out = wrap(_scanned(scan, data, axis, data.dtype))
        ctx.axis = axis
        ctx.save_for_backward(x, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        x, out = ctx.saved_tensors
        if not x.ndim:  # as torch: the running sum of one element is that element (exp(x - out): nan at inf, nan)
            return grad, None
        return _logcumsumexp_gradient(x, out, grad, ctx.axis), None

    @staticmethod
    def jvp(ctx, tangent, axis_tangent):
        # the backward, computed apart for each sign of its gradient, is not differentiable at a zero
        # gradient, so the tangent cannot come from it: the sum over k <= i of tangent[k] * exp(x[k] - out[i])
        x, axis = ctx.primals
        if x._data.dtype.kind == "c":  # complex tangents have no sign to split by: their sum, taken directly
            return Cumsum.apply(tangent * x.exp(), axis) * (-ctx.result).exp()
        lowest = float(_dtype.float_info(x._data.dtype).min)
        total = 0.0
        for sign, part in ((1.0, tangent > 0), (-1.0, tangent < 0)):
            log_part = where(part, where(part, tangent * sign, 1.0).log() + x, lowest)
            total = total + sign * (_logcumsumexp(log_part, axis) - ctx.result).exp()
        return total


def _complex_logaddexp_scan(work: np.ndarray, axis: int) -> np.ndarray:
    """The running ``log(exp(a) + exp(b))`` of complex numbers along ``axis`` (NumPy's logaddexp takes real numbers
    only), one step at a time as torch's kernel adds them, so that each imaginary part is on the same branch as
    torch's (a cumsum of exponentials would be faster, but its log would fold them into (-pi, pi])."""
    moved = np.moveaxis(work, axis, 0)
    out = np.empty_like(moved)
    total = out[0] = moved[0]
    for k in range(1, moved.shape[0]):
        total = out[k] = _logaddexp(total, moved[k])
    return np.moveaxis(out, 0, axis)


def _logaddexp(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``log(exp(a) + exp(b))`` of complex numbers, with the term of larger real part taken out (no overflow)."""
    larger = np.where(a.real >= b.real, a, b)
    smaller = np.where(a.real >= b.real, b, a)
    step = larger + np.log1p(np.exp(smaller - larger))
    return np.where(np.isneginf(larger.real), smaller, step)  # (nothing yet: -inf - -inf is nan)


def _logcumsumexp_gradient(x: Tensor, out: Tensor, grad: Tensor, axis: int) -> Tensor:
    """The sum over ``k >= i`` of ``grad[k] * exp(x[i] - out[k])``, summed in log space (no overflow).

    Positive and negative gradients are summed apart, each as the log of its magnitude; the lowest finite
    number stands for the log of nothing (-inf would make nan of the second derivative). Complex gradients
    have no sign to split by: their complex logs (the phase carrying the sign) are summed in log space at once,
    the exponentials conjugated.
    """
    if x._data.dtype.kind == "c":
        given = grad != 0
        log_grad = where(given, where(given, grad, 1.0).log(), float(_dtype.float_info(x._data.dtype).min))
        return (_reversed_scan(_logcumsumexp, log_grad - conjugated(out), axis) + conjugated(x)).exp()
    lowest = float(_dtype.float_info(x._data.dtype).min)
    total = 0.0
    for sign, part in ((1.0, grad > 0), (-1.0, grad < 0)):
        log_part = where(part, where(part, grad * sign, 1.0).log(), lowest)
        total = total + sign * (_reversed_scan(_logcumsumexp, log_part - out, axis) + x).exp()
    return total


def _logcumsumexp(value: Tensor, axis: int) -> Tensor:
    return Logcumsumexp.apply(value, axis)


@ember_function
def logcumsumexp(input: Tensor, dim: int, *, out: Tensor | None = None) -> Tensor:
    """``log(cumsum(exp(input)))`` along ``dim``, without overflow.

    >>> ember.logcumsumexp(ember.tensor([0., 1000., 1000.]), 0)
    tensor([   0.0000, 1000.0000, 1000.6932])
    """
    x = require_tensor(input, "logcumsumexp")
    result = Logcumsumexp.apply(x, _scan_axis(x, dim, "logcumsumexp"))
    return result if out is None else into_out_of_its_dtype("logcumsumexp", result, out, x)
