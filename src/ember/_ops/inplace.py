"""In-place operations: compute out of place, write into the tensor's memory, bump its version.

With autograd recording, the tensor takes the new result's place in the graph;
for a view, its base does too (through a ``CopySlices`` node), so gradients
stay right however the memory was reached.

>>> import ember
>>> x = ember.tensor([1., 2.], requires_grad=True)
>>> y = x * 1
>>> y.mul_(3)[0] = 0.
>>> y.sum().backward(); x.grad
tensor([0., 3.])
"""
from __future__ import annotations

import math
import warnings
from typing import Callable

import numpy as np

from ember import _dtype
from ember._ops import _aliasing
from ember._axpy import FROM as AXPY_FROM, axpy_single
from ember._ops._quiet import IGNORE_ALL, IGNORE_OVER, quietly, quietly_on_objection, written_despite
from ember._ops._support import (
    broadcast_view, check_broadcast, element_of, ember_function, require_tensor, result_dtype, wrap,
)
from ember._ops.copy import complex_as, copy_in_layout, warn_of_discarded_imaginary_parts
from ember._ops.unary import bounds_in_range, clamp, clamped_floats, number_array, zeros_like_gradient
from ember._ops.indexing import _index_node, _is_basic, basic_part, checked_key, explained_rest, takes_all
from ember._ops.views import ViewScatter, check_replayable, replay
from ember._tensor import IN_CUSTOM_FUNCTION, OF_MULTIPLE_OUTPUTS, Tensor, refuse_inference_update, version_counter
from ember.autograd._forward_state import state as _forward
from ember.autograd.function import Function
from ember.autograd.grad_mode import state as _grad

_CATEGORY = {"b": 0, "u": 1, "i": 1, "f": 2, "V": 2, "c": 3}  # "V": ml_dtypes' bfloat16, the one such dtype


def apply_inplace(self: Tensor, function: Callable, *args, op: str = "inplace", **kwargs) -> Tensor:
    """Run ``function(self, *args)`` and store the result in ``self`` (its memory and its place in the graph)."""
    refuse_inference_update(self)
    if op in _INDEX_WRITES:
        _refuse_shared_index_inputs(op, self, args)
    enabled = _grad.enabled
    recording = enabled and (self._requires_grad or _any_requires_grad(args))
    if recording or enabled and self._base is not None:
        _check_recordable(self, recording)
    result = function(self, *args, **kwargs)
    if recording:
        _protect_saved_input(result, self, args)
    write(self, result._data, op, recording)
    if recording:
        _take_place(self, result)
    if _forward.key is not None:  # a dual level is open: the tangent changes in place too
        from ember.autograd.forward_ad import after_inplace

        after_inplace(self, result)
    return self


# the index ops whose inputs (indices, source) torch refuses to share any of the memory they write
_INDEX_WRITES = frozenset({"index_copy_", "index_add_", "index_reduce_", "scatter_", "scatter_add_",
                           "scatter_reduce_", "put_"})


def _refuse_shared_index_inputs(op: str, self: Tensor, inputs: tuple) -> None:
    for tensor in inputs:
        if isinstance(tensor, Tensor):
            if _aliasing.may_share(self, tensor):
                _aliasing.refuse_shared_memory(op, self._data, tensor._data, full_too=True)
        elif type(tensor) is np.ndarray:  # an index of a key, as NumPy indexes with it
            _aliasing.refuse_shared_memory(op, self._data, tensor, full_too=True)


_SINGLE, _DOUBLE = np.dtype(np.float32), np.dtype(np.float64)
_true_divide, _asarray, _ndarray = np.true_divide, np.asarray, np.ndarray
_np_add, _np_subtract, _np_multiply = np.add, np.subtract, np.multiply


def _writable_unrecorded(self: Tensor) -> "np.ndarray | None":
    """``self``'s array when an in-place change of it records nothing and needs no view check, else None.

    Then the op's own NumPy formula may write straight into that memory (``np.add(x, y, out=x)``): the
    same values as computing out of place and copying back, without the copy. (NumPy refuses to write
    into a read-only array before computing anything: the callers then take the general path, whose
    error names the op.)
    """
    if _forward.key is not None:  # in a dual level the general path also changes the tangent
        return None
    return None if _grad.enabled and (self._requires_grad or self._base is not None) else self._data


def _operand_unrecorded(data: np.ndarray, other, alpha) -> "np.ndarray | int | float | None":
    """``alpha * other`` as the forward computes it against ``data`` (a float array), if it records nothing
    and keeps ``data``'s dtype and shape; else None, for the general path."""
    kind = type(other)
    if kind is Tensor:
        y = other._data
        if y.dtype is not data.dtype or y.shape != data.shape or _grad.enabled and other._requires_grad:
            return None
    elif kind is float:
        y = np.asarray(other, data.dtype)  # as promoted_arrays gives it: a 0-d array of the tensor's dtype
    elif kind is int and -2 ** 63 <= other < 2 ** 64:
        y = other
    else:
        return None  # (an int beyond 64 bits too: the general path refuses it as torch does)
    if alpha == 1 and type(alpha) is int:
        return y
    return _scaled(y, alpha, data.dtype)


def _signed_single(alpha: int | float, ufunc: np.ufunc) -> float:
    """``alpha`` rounded to single as the forward rounds it, negated for a subtraction."""
    factor = float(np.float32(alpha))
    return factor if ufunc is _np_add else -factor


def _in_single_range(alpha) -> bool:
    """Whether ``alpha`` is a Python number that single precision holds (as _scaled checks it)."""
    return (type(alpha) is int or type(alpha) is float) and -3e38 < alpha < 3e38


def _scaled(y, alpha, dtype: np.dtype) -> "np.ndarray | None":
    """``y * alpha`` as the forward computes it, for a float32 or float64 ``dtype``; None for an alpha beyond
    single's range (or nan): the general path then checks it as torch does.

    In float32, Add rounds ``x + alpha * y`` once, as torch's fused multiply-add (see fused_single): the product
    is made in double with alpha rounded to single, which is exact, and the ufunc that adds it to ``self``'s
    float32 array then computes in double, rounding once on the way back. Otherwise ``alpha`` is a 0-d array of
    ``dtype``, which NumPy takes in half the time of a Python number, with the same result.
    """
    if _in_single_range(alpha):
        if dtype is _SINGLE:  # (a number operand as the forward takes it: rounded to single first)
            wide = y.astype(_DOUBLE) if type(y) is _ndarray else _asarray(y, _SINGLE).astype(_DOUBLE)
            try:
                wide *= _single_alpha_in_double(alpha)
            except (FloatingPointError, RuntimeWarning) as objection:  # (see written_despite)
                written_despite(objection)
            return wide
        return quietly_on_objection(IGNORE_ALL, _np_multiply, y, number_array(alpha, dtype))
    return None


def _divided_into(data: np.ndarray, y) -> None:
    """``data / y`` written into ``data``, quietly: torch makes inf and nan of a division by 0 without a word.

    NumPy's warnings from ember's modules are ignored already (see ``_quiet``); a user's ``np.seterr`` or
    warnings filter may still turn them into errors, but only once the loop has written every element (NumPy
    reads its floating-point flags after the loop), so the result is complete and the objection is dropped.
    That spares the two calls of setting NumPy's state quietly, a sixth of a small division.
    """
    try:
        _true_divide(data, y, data)
    except (FloatingPointError, RuntimeWarning):
        pass


def _into_single_rounded_once(data: np.ndarray, wide_operand: np.ndarray, ufunc: np.ufunc) -> None:
    """``ufunc(data, wide_operand)`` written into the float32 ``data``, computed in double and rounded once (as
    fused_single). Both operands are made double first: NumPy's ufuncs on mixed dtypes cost four times as much.
    A read-only ``data`` raises ValueError before anything is written."""
    total = data.astype(_DOUBLE)
    try:
        ufunc(total, wide_operand, total)
    except (FloatingPointError, RuntimeWarning) as objection:
        written_despite(objection)
    data[...] = total


_SINGLE_ALPHAS: dict = {}  # alpha -> its value rounded to single, as a 0-d float64 array


def _single_alpha_in_double(alpha: int | float) -> np.ndarray:
    array = _SINGLE_ALPHAS.get(alpha)
    if array is None:
        array = number_array(float(np.float32(alpha)), _DOUBLE)
        if alpha:  # (as number_array keeps no zero: 0.0 and -0.0 are one key)
            if len(_SINGLE_ALPHAS) >= 256:
                _SINGLE_ALPHAS.clear()
            _SINGLE_ALPHAS[alpha] = array
    return array


def _bumped(self: Tensor) -> Tensor:
    counter = self._vc
    if counter is None:
        counter = version_counter(self)
    counter[0] += 1
    return self


def arithmetic_(self: Tensor, other, ufunc: np.ufunc, function: Callable, op: str, alpha=1) -> Tensor:
    """``self += alpha * other`` and the like: ``ufunc`` is the forward's own NumPy operation.

    With nothing to record it writes into ``self``'s memory (``np.add(x, y, out=x)``); otherwise, or for
    operands the forward promotes or broadcasts, the general path computes out of place and writes back.
    (This path is every optimizer's step: ``_writable_unrecorded`` and ``_bumped`` are spelled out here.)
    """
    if self._inference:
        refuse_inference_update(self)
    if not (_grad.enabled and (self._requires_grad or self._base is not None) or _forward.key is not None):
        data = self._data
        dtype = data.dtype
        if dtype is not _SINGLE and dtype is not _DOUBLE:
            y = None
        elif type(other) is Tensor:
            y = other._data  # _operand_unrecorded's usual case (an optimizer's step), spelled out
            if y.dtype is not dtype or y.shape != data.shape or _grad.enabled and other._requires_grad:
                y = None
            elif type(alpha) is not int or alpha != 1:
                if dtype is _SINGLE and data.size >= AXPY_FROM and (ufunc is _np_add or ufunc is _np_subtract) \
                        and _in_single_range(alpha) and axpy_single(_signed_single(alpha, ufunc), y, data):
                    counter = self._vc  # (p.add_(g, alpha=-lr), a hand-written step: rounded once in one pass)
                    (counter if counter is not None else version_counter(self))[0] += 1
                    return self
                y = _scaled(y, alpha, dtype)
        else:
            y = _operand_unrecorded(data, other, alpha)
        if y is not None:
            try:
                if ufunc is _true_divide:
                    _divided_into(data, y)  # as Div's forward: x / 0 is inf, quietly
                elif type(y) is _ndarray and y.dtype is not dtype:  # alpha * other for a float32 self (see _scaled)
                    _into_single_rounded_once(data, y, ufunc)
                else:
                    ufunc(data, y, data)
            except ValueError:  # read-only memory (an expanded tensor): the general path says so
                pass
            except (FloatingPointError, RuntimeWarning) as objection:  # (a user's strict settings: inf - inf)
                written_despite(objection)
                counter = self._vc
                (counter if counter is not None else version_counter(self))[0] += 1
                return self
            else:
                counter = self._vc
                (counter if counter is not None else version_counter(self))[0] += 1
                return self
    if alpha == 1 and type(alpha) is int:
        return apply_inplace(self, function, other, op=op)
    return apply_inplace(self, function, other, alpha=alpha, op=op)


def _uncastable(op: str, result: np.dtype, target: np.dtype) -> RuntimeError:
    return RuntimeError(
        f"{op}: result type {_dtype.scalar_type_name(result)} can't be cast to the desired output type "
        f"{_dtype.scalar_type_name(target)}; convert the tensor first (e.g. x = x.float())"
    )


def apply_promoting_inplace(self: Tensor, function: Callable, *operands, op: str, **kwargs) -> Tensor:
    """``apply_inplace`` for an op whose operands, all in ``operands``, are promoted together: where the op has no
    kernel for their promoted dtype and ``self`` could not hold it anyway, the second is the error, as torch
    checks the result type first (``bools.bitwise_and_(floats)`` cannot be cast, not "no bitwise floats")."""
    try:
        return apply_inplace(self, function, *operands, op=op, **kwargs)
    except NotImplementedError:
        present = [v for v in operands if v is not None]
        if all(isinstance(v, (Tensor, bool, int, float, complex)) for v in present):
            result = result_dtype(self, *present).np
            if _CATEGORY[result.kind] > _CATEGORY[self._data.dtype.kind]:
                raise _uncastable(op, result, self._data.dtype) from None
        raise


def _any_requires_grad(args: tuple) -> bool:
    for a in args:  # a loop: in Python 3.11 a generator expression costs a function call
        if isinstance(a, Tensor) and a._requires_grad:
            return True
    return False


def check_fits(op: str, target: tuple, shape: tuple) -> None:
    """Raise a RuntimeError naming ``op`` unless values of ``shape`` broadcast to ``target`` without growing it.

    >>> from ember._ops.inplace import check_fits
    >>> check_fits("copy_", (3,), (2, 3))
    Traceback (most recent call last):
    RuntimeError: copy_: output with shape [3] doesn't match the broadcast shape [2, 3] ...
    """
    check_broadcast(op, target, shape)
    broadcast = np.broadcast_shapes(shape, target)
    if broadcast != target:
        raise RuntimeError(
            f"{op}: output with shape {list(target)} doesn't match the broadcast shape {list(broadcast)}; "
            "an in-place op cannot grow its tensor (write into a larger tensor, or use the out-of-place op)"
        )


def write(self: Tensor, data: np.ndarray, op: str, recording: bool = False) -> None:
    """Copy ``data`` into ``self``'s memory, with torch's casting and shape rules, and bump the version."""
    refuse_inference_update(self)
    target = self._data
    data_dtype, target_dtype = data.dtype, target.dtype
    if data_dtype is not target_dtype and _CATEGORY[data_dtype.kind] > _CATEGORY[target_dtype.kind]:
        raise _uncastable(op, data_dtype, target_dtype)
    if data.shape != target.shape:
        check_fits(op, target.shape, data.shape)
    try:
        target[...] = data  # casts as torch does once the category check above has passed
    except ValueError:
        if target.flags.writeable:
            raise
        _write_through_alias(target, data, op, recording)
    counter = self._vc
    if counter is None:
        counter = version_counter(self)
    counter[0] += 1


# The writes torch lets into an expanded tensor, whose elements share memory: each writes one value wherever it
# writes, so the order of the elements does not matter (the last three, torch says, are deprecated there)
_WRITES_AT_POSITIONS = frozenset({"fill_", "zero_", "__setitem__", "index_put_", "masked_fill_", "index_fill_"})
_DEPRECATED_ON_EXPANDED = frozenset({"index_put_", "masked_fill_", "index_fill_"})


def _write_through_alias(target: np.ndarray, data: np.ndarray, op: str, recording: bool) -> None:
    """Write ``data`` into ``target``, which NumPy marks read-only: a view of an expanded tensor that shows each
    element once takes it all; the expanded tensor itself takes the writes at positions, each element that
    changes written (so one that another element shares keeps the change), unless autograd records the change
    (its gradient would have to see every element the memory is shared by); anything else is refused."""
    alias = _aliasing.writable_alias(target)
    if alias is None:
        raise _overlapping_write(op)
    if not _aliasing.overlaps(target):
        alias[...] = data
        return
    if recording or op not in _WRITES_AT_POSITIONS:
        raise _overlapping_write(op)
    if op in _DEPRECATED_ON_EXPANDED:
        warn_of_write_into_expanded(op)
    data = np.asarray(data, target.dtype) if data.dtype != target.dtype else data
    changed = data != target
    if data.dtype.kind == "f":  # 0.0 and -0.0 compare equal: a change of sign is a change too
        changed |= np.signbit(data) != np.signbit(target)
    alias[changed] = np.broadcast_to(data, target.shape)[changed]


def warn_of_write_into_expanded(op: str) -> None:
    warnings.warn(
        f"Use of {op} on expanded tensors is deprecated: its elements share memory, so a write into one is seen "
        "in the others. clone() the tensor before performing this operation (this also applies to advanced "
        "indexing, e.g. tensor[indices] = values).",
        UserWarning,
        stacklevel=4,
    )


def _overlapping_write(op: str) -> RuntimeError:
    return RuntimeError(  # an expanded tensor: its elements share memory
        f"{op}: unsupported operation: more than one element of the written-to tensor refers to a single "
        "memory location. Please clone() the tensor before performing the operation."
    )


def _check_recordable(self: Tensor, recording: bool = True) -> None:
    if self._grad_fn is None and self._requires_grad:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
    base = self._base
    if base is not None and base._requires_grad and not self._requires_grad:
        raise RuntimeError(NO_GRAD_VIEW_MODIFIED)
    origin = self._view_origin  # (inherited by views of the view: torch refuses those too)
    if base is not None and self._grad_fn is not None and (
            origin is IN_CUSTOM_FUNCTION or origin is None and _made_by_custom_function(self._grad_fn)):
        # Recording the change on the base would replay the view and bypass the custom backward.
        raise RuntimeError(
            f"Output {self._output_nr} of {self._grad_fn._forward_cls.__name__} is a view and is being modified "
            "inplace. This view was created inside a custom Function (or is an input it returned as it is): "
            "recording the change would replay the view and bypass that Function's backward, so the gradients "
            "would be wrong. clone() the Function's output before changing it in place."
        )
    if base is not None and base._grad_fn is None and base._requires_grad:
        raise RuntimeError(
            "a view of a leaf Variable that requires grad is being used in an in-place operation."
        )
    if origin is OF_MULTIPLE_OUTPUTS and self._grad_fn is not None:
        # as torch: the change could be recorded on the base, but not on the other views of the same node
        raise RuntimeError(
            f"Output {self._output_nr} of {self._grad_fn._forward_cls.__name__} is a view and is being modified "
            "inplace. This view is the output of a function that returns multiple views, and such views cannot be "
            "modified in place. Use an out-of-place operation instead, or clone() the view first."
        )
    if origin is OF_MULTIPLE_OUTPUTS and recording and base is not None:
        # as torch: of a base that requires no grad, such a view counts as made in no_grad mode
        raise RuntimeError(
            "A view was created in no_grad mode and is being modified inplace with grad mode enabled. This view is "
            "the output of a function that returns multiple views, and such views cannot be modified in place when "
            "the change is recorded. Use an out-of-place operation instead, or clone() the view first."
        )


NO_GRAD_VIEW_MODIFIED = (
    "A view was created in no_grad mode and is being modified inplace with grad mode enabled: whether autograd "
    "should record the change is ambiguous, so it is refused. Make the view and the in-place change both inside "
    "the no_grad block (not recorded) or both outside it (recorded)."
)


def _made_by_custom_function(node) -> bool:
    """Whether ``node`` belongs to a user's Function (ember's own view ops record views correctly)."""
    return getattr(node, "_forward_cls", None) is not None and not node._builtin


def _protect_saved_input(result: Tensor, self: Tensor, args: tuple) -> None:
    """Where the op's new nodes saved ``self`` for backward, save a copy instead: ``self`` is about to be overwritten.

    The new nodes are those between ``result`` and the graphs of ``self`` and the other arguments
    (an in-place op may be several Functions, e.g. ``t * t`` then ``exp``).
    """
    known = {id(a._grad_fn) for a in (self, *args) if isinstance(a, Tensor) and a._grad_fn is not None}
    stack = [result._grad_fn] if result._grad_fn is not None and id(result._grad_fn) not in known else []
    seen: set = set()
    snapshot = None
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        saved = node._saved
        if isinstance(saved, tuple) and any(_saves(r, self) for r in saved):
            snapshot = _snapshot(self) if snapshot is None else snapshot
            node._saved = tuple((snapshot, snapshot._vc, 0, -1) if _saves(r, self) else r for r in saved)
        for edge in node._next:
            if edge and edge[0]._is_node and id(edge[0]) not in known:
                stack.append(edge[0])


def _saves(record, tensor: Tensor) -> bool:
    """Whether a saved-tensor record (see ``ember.autograd.function._keep_saved``) holds ``tensor`` as an input."""
    return type(record) is tuple and record[3] < 0 and record[0] is tensor


def _snapshot(self: Tensor) -> Tensor:
    """``self`` as it is now, in memory of its own, with its place in the graph."""
    snapshot = self._alias()
    snapshot._data = np.array(self._data, copy=True)
    snapshot._vc = [0]
    snapshot._base = None
    snapshot._view_replay = ()
    return snapshot


def _take_place(self: Tensor, result: Tensor) -> None:
    node = self._grad_fn = result._grad_fn
    self._output_nr = result._output_nr
    self._requires_grad = result._requires_grad
    if node is not None and type(node._saved) is tuple:
        _save_self_for_result(node, self, result)
    if self._base is not None:
        rebase_view(self)
    if self._retains_grad:
        self._move_retain_grad()


def _save_self_for_result(node, self: Tensor, result: Tensor) -> None:
    """Where ``node`` saved its output ``result`` (relu_, exp_ ...), it now saves ``self``, which holds it.

    So a later in-place change of ``self`` is caught at backward, as for any saved tensor.
    """
    counter = version_counter(self)
    node._saved = tuple(
        (self._data, counter, counter[0], r[3]) if type(r) is tuple and r[3] >= 0 and r[0] is result._data else r
        for r in node._saved
    )


def rebase_view(view: Tensor) -> None:
    """After an in-place change recorded on ``view``, record it on the base too (a CopySlices node).

    The base's graph gets the change, and the view becomes a fresh view of the new base.
    """
    steps = view._view_replay
    check_replayable(view)
    counter = version_counter(view)
    version = counter[0]
    ViewScatter.apply(view._base, view._alias(), steps)
    counter[0] = version  # ViewScatter marks the base dirty, but it only records the change: no second bump
    if view._base._retains_grad:
        view._base._move_retain_grad()
    fresh = replay(view._base, steps)
    view._grad_fn = fresh._grad_fn
    view._output_nr = fresh._output_nr
    view._requires_grad = True
    view._view_version = view._vc[0]


class Fill(Function):
    """Overwrite with values that carry no gradient: ``fill_`` with a number; the subclasses only rename the node."""

    backward_name = "FillBackward2"

    @staticmethod
    def forward(ctx, x, values):
        data = x._data
        filled = np.empty(data.shape, data.dtype)
        if type(values) is np.ndarray:
            quietly(IGNORE_OVER, np.copyto, filled, values, "unsafe")  # a draw too large for half: inf, as in torch
        else:  # a number, which element_of has checked to fit (a half is made from a single, as in torch)
            filled[...] = _dtype.in_single(values) if data.dtype is _dtype.HALF and type(values) is float else values
        return wrap(filled)

    @staticmethod
    def backward(ctx, grad):
        return zeros_like_gradient(grad) if ctx.needs_input_grad[0] else None, None  # as torch: zeros, not None


class Zero(Fill):
    backward_name = "ZeroBackward0"


class FillNumber(Fill):
    backward_name = "FillBackward3"  # torch's name for x[...] = 2.: it turns the number into a tensor


class Uniform(Fill):
    backward_name = "UniformBackward0"


class Normal(Fill):
    backward_name = "NormalBackward0"


class CopyFrom(Function):
    """``x.copy_(src)``: the gradient goes to ``src``, none to what ``x`` held."""

    backward_name = "CopyBackwards"

    @staticmethod
    def forward(ctx, x, src):
        data, source = x._data, src._data
        ctx.src_dtype = _dtype.from_numpy_dtype(source.dtype)
        if source.shape != data.shape:
            source = broadcast_view(source, data.shape)
        if source.dtype.kind == "c":
            source = complex_as(source, data.dtype)
        return wrap(source.astype(data.dtype, copy=False))  # the caller writes it into x: no copy needed here

    @staticmethod
    def backward(ctx, grad):
        needs = ctx.needs_input_grad
        if needs[1] and grad._data.dtype.kind == "c" and ctx.src_dtype._kind != 3:
            grad = grad.real  # a real source's gradient is the real part
        return (zeros_like_gradient(grad) if needs[0] else None), (grad.to(ctx.src_dtype) if needs[1] else None)


class FillFrom(CopyFrom):
    backward_name = "FillBackward3"  # fill_ with a 0-d tensor


class IndexPut(Function):
    """A copy of ``x`` with ``value`` written (or, with ``accumulate``, added) at ``key``: what ``x[key] = value``
    and ``index_put`` record. Added, an index that repeats adds each of its values."""

    backward_name = "IndexPutBackward0"

    @staticmethod
    def forward(ctx, x, key, value, accumulate=False):
        ctx.save_for_backward(key)  # as torch saves its indices: freed by a backward without retain_graph
        ctx.accumulate = accumulate
        ctx.value_shape = value._data.shape if isinstance(value, Tensor) else None
        out = copy_in_layout(x._data, x._data.dtype)  # as torch's index_put, a clone that keeps the strides
        data = value._data if isinstance(value, Tensor) else value
        if type(data) is np.ndarray and data.dtype.kind == "c" and out.dtype.kind != "c":
            # true where either part is nonzero, for bool; else the real part (a masked fill's 0-d value is checked
            # to have no imaginary part, and a write at a basic key has warned)
            data = data != 0 if out.dtype.kind == "b" else data.real
        try:
            if accumulate:
                np.add.at(out, key, np.broadcast_to(data, out[key].shape))
            else:
                out[key] = data
        except (ValueError, TypeError):  # NumPy's TypeError: a mask's values given in more than one dim
            raise RuntimeError(
                f"shape mismatch: value tensor of shape {list(np.shape(data))} cannot be broadcast to "
                f"indexing result of shape {list(out[key].shape)}"
            ) from None
        return wrap(out)

    @staticmethod
    def backward(ctx, grad):
        from ember._ops.reduction import summed_to
        from ember._ops.indexing import Index

        needs = ctx.needs_input_grad
        (key,) = ctx.saved_tensors
        grad_x = None
        if needs[0]:  # what was overwritten has no gradient; what was added to passes its gradient on
            grad_x = grad if ctx.accumulate else IndexPut.apply(grad, key, 0.0)
        grad_value = Index.apply(grad, key) if needs[2] else None
        if grad_value is not None and grad_value._data.shape != ctx.value_shape:
            grad_value = summed_to(grad_value, ctx.value_shape)  # the value was broadcast to the indexed region
        return grad_x, None, grad_value, None


def index_put_(self: Tensor, indices, values, accumulate: bool = False, op: str = "index_put_") -> Tensor:
    """Write ``values`` at ``self[indices]`` (one index tensor per dim, None for all of it); with ``accumulate``,
    add them, each repeated index adding its own value."""
    _check_index_put_types(indices, values, op)
    if _grad.enabled and (self._requires_grad or values._requires_grad):
        _check_recordable(self)  # as torch: a leaf's refusal comes before the indices' checks
    _refuse_shared_index_inputs(op, self, (*indices, values))
    key = _index_put_key(self, indices, values, op)
    return apply_inplace(self, IndexPut.apply, key, values, bool(accumulate), op=op)


@ember_function
def index_put(input, indices, values, accumulate: bool = False) -> Tensor:
    """A copy of ``input`` with ``values`` put (or added) at ``indices``, as ``Tensor.index_put_`` does in place.

    >>> ember.index_put(ember.zeros(3), (ember.tensor([0, 0, 2]),), ember.tensor(1.), accumulate=True)
    tensor([2., 0., 1.])
    """
    input = require_tensor(input, "index_put")
    _check_index_put_types(indices, values, "index_put")
    return IndexPut.apply(input, _index_put_key(input, indices, values, "index_put"), values, bool(accumulate))


def _check_index_put_types(indices, values, op: str) -> None:
    """The arguments' types, which torch checks before anything else."""
    if not isinstance(values, Tensor):
        raise TypeError(f"{op}(): argument 'values' (position 2) must be Tensor, not {type(values).__name__}")
    if not isinstance(indices, (tuple, list)):
        raise TypeError(f"{op}(): argument 'indices' (position 1) must be tuple of Tensors, not {type(indices).__name__}")
    for i, index in enumerate(indices):
        if index is not None and not isinstance(index, Tensor):
            raise TypeError(f"{op}(): expected Tensor as element {i} in argument 1, but got {type(index).__name__}")


def _index_put_key(self: Tensor, indices, values, op: str) -> tuple:
    """The key for ``indices`` (of the types ``_check_index_put_types`` checked), checked as torch checks them, and
    ``values`` with them."""
    key = checked_key(self, tuple(slice(None) if index is None else index for index in indices))
    try:
        self._data[key]  # NumPy checks the indices (bounds, shapes) before anything is written
    except IndexError:
        _check_values_fit(self, key, values)
        key = explained_rest(self, key)
    _check_index_put_dtype(self, key, values)
    return key


def fill_(self: Tensor, value) -> Tensor:
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with {value._data.ndim} dimensions.")
        if _aliasing.overlaps(self._data):  # as torch: a tensor's value is not written into shared memory
            raise _overlapping_write("fill_")
        return apply_inplace(self, FillFrom.apply, value, op="fill_")
    value = element_of("fill_", value, self._data.dtype)
    data = _writable_unrecorded(self)
    if data is not None and data.dtype is not _dtype.HALF and _assigned(data, value):  # Fill's own assignment
        return _bumped(self)
    return apply_inplace(self, Fill.apply, value, op="fill_")


def _assigned(data: np.ndarray, value) -> bool:
    """``data[...] = value``, unless ``data`` is read-only (the general path's error then names the op)."""
    try:
        if type(value) is np.ndarray:
            data[...] = value
        else:
            data.fill(value)  # a number: the same cast as the assignment, at three quarters of its cost
    except ValueError:
        if data.flags.writeable:
            raise
        return False
    return True


def zero_(self: Tensor) -> Tensor:
    if not (_grad.enabled and (self._requires_grad or self._base is not None) or _forward.key is not None):
        try:  # _writable_unrecorded, _assigned and _bumped spelled out: every optimizer's zero_grad(set_to_none=False)
            self._data.fill(0)
        except ValueError:  # read-only memory: the general path says so
            pass
        else:
            counter = self._vc
            (counter if counter is not None else version_counter(self))[0] += 1
            return self
    return apply_inplace(self, Zero.apply, 0, op="zero_")


def clamp_(self: Tensor, low, high, op: str = "clamp_") -> Tensor:
    """``self.clamp_(low, high)``: with nothing to record and number bounds, Clamp's own computation writes into
    ``self``'s memory; any other case takes the general path."""
    data = _writable_unrecorded(self)
    if data is not None and bounds_in_range(low, high, data.dtype):
        try:  # (read-only memory is refused before anything is written: the general path then says so)
            clamped_floats(data, low, high, data)
            return _bumped(self)
        except ValueError:
            pass
    return apply_promoting_inplace(self, clamp.__wrapped__, low, high, op=op)


_NUMBER_DTYPES = {bool: np.bool_, int: np.int64, float: np.float64, complex: np.complex128}


def copy_(self: Tensor, src: Tensor, non_blocking: bool = False) -> Tensor:
    if not isinstance(src, Tensor):
        src = _copy_source(src)
    counter = self._vc  # (_aliasing.may_share, inline: copy_ is a hot path)
    if counter is not None and counter is src._vc:
        _aliasing.refuse_shared_memory("copy_", self._data, src._data)
    return _copy(self, src)


def _copy_source(src) -> Tensor:
    if type(src) in _NUMBER_DTYPES:  # as torch: a number is copied as the 0-d tensor it makes (int64, double ...)
        return wrap(np.asarray(src, _NUMBER_DTYPES[type(src)]))  # (an int beyond int64: an OverflowError)
    return require_tensor(src, "copy_", 1, "other")


def _copy(self: Tensor, src: Tensor) -> Tensor:
    """``copy_`` once the memory the two share is checked (``x[key] = value`` checks it otherwise)."""
    data = _writable_unrecorded(self)
    if data is not None and src._data.dtype is data.dtype and src._data.shape == data.shape and \
            not (_grad.enabled and src._requires_grad) and _assigned(data, src._data):
        return _bumped(self)  # CopyFrom's values, written as the general path writes them
    if src._data.shape != self._data.shape:
        if _grad.enabled and (self._requires_grad or src._requires_grad):
            _check_recordable(self)  # as torch: a leaf's refusal comes before the shape's
        check_fits("copy_", self._data.shape, src._data.shape)  # before CopyFrom, whose NumPy error names no op
    return apply_inplace(self, CopyFrom.apply, src, op="copy_")


def _stored_number(value, dtype: np.dtype):
    """A number that ``x[key] = value`` stores: checked as ``fill_`` checks it, but half precision takes
    any float, rounding one beyond its range to inf, as torch does.
    """
    if type(value) is int and not -2 ** 63 <= value < 2 ** 63:
        # as torch, which stores a number by making a tensor of it: an int is read as an int64, whatever the dtype
        raise ValueError(f"__setitem__: Overflow when unpacking long long: {value} does not fit in 64 bits; "
                         f"store it as a float, e.g. x[key] = float({value})")
    if dtype == np.float16:
        return quietly(IGNORE_OVER, np.float16, _dtype.in_single(value))
    return element_of("__setitem__", value, dtype)


def setitem(self: Tensor, key, value) -> None:
    """``self[key] = value``: writes in place; with autograd, records CopySlices (basic keys) or IndexPut."""

    if key is False:
        return  # as torch: x[False] selects nothing, so nothing is written and the version stays
    if key is True:
        key = None  # as torch: a lone True is a new dim of size 1, written as a view (no index_put, no dtype check)
    key = checked_key(self, key)
    if type(value) not in (int, float, bool) and not isinstance(value, Tensor):
        value = _number_to_store(value, self._data.dtype)
    if type(value) in (int, float, bool):
        value = _stored_number(value, self._data.dtype)
    recording = _grad.enabled and (self._requires_grad or isinstance(value, Tensor) and value._requires_grad)
    if _is_basic(key):
        _set_basic(self, key, value, recording)
        return
    # as torch: the ints, slices and None of the key make a view (recorded as CopySlices on self when written),
    # which the index tensors then index
    target, rest = basic_part(self, key)
    if not target._data.flags.writeable and _aliasing.overlaps(target._data):
        warn_of_write_into_expanded("index_put_")
    _refuse_shared_index_inputs("__setitem__", target, rest + (value,))
    if isinstance(value, Tensor):
        value = _without_leading_ones(value)
        _check_index_put_dtype(target, rest, value)
    try:
        _put(target, rest, value, recording)
    except IndexError:  # NumPy's words: torch's instead (or, for an empty region, no error)
        if isinstance(value, Tensor):
            _check_values_fit(target, rest, value)
        _put(target, explained_rest(self, key), value, recording)


def _put(target: Tensor, key: tuple, value, recording: bool) -> None:
    if isinstance(value, Tensor) or recording:
        apply_inplace(target, IndexPut.apply, key, value, op="__setitem__")
    else:
        _write_unrecorded(target, key, value)


def _number_to_store(value, dtype: np.dtype):
    """What ``x[key] = value`` takes besides tensors: numbers, as torch (a NumPy float of another width, a
    list or an array is refused: make a tensor of it)."""
    if isinstance(value, complex):
        return element_of("__setitem__", value, dtype)  # (a complex tensor takes it; a real one, only its real part)
    if isinstance(value, (int, float)):
        return float(value) if isinstance(value, float) else int(value)
    if isinstance(value, np.integer):
        return int(value)
    kind = type(value)
    name = f"numpy.{kind.__name__}" if kind.__module__ == "numpy" else kind.__name__
    raise TypeError(
        f"can't assign a {name} to a tensor of dtype {_dtype.from_numpy_dtype(dtype)}; assign a number or a tensor "
        "(e.g. ember.tensor(value))"
    )


def _check_values_fit(target: Tensor, key: tuple, values: Tensor) -> None:
    """As torch, which checks the values' dtype and shape before the indices' bounds: NumPy has refused
    ``target[key]``; if only for its bounds, check the values against the region that in-bounds indices give."""
    _check_index_put_dtype(target, key, values)
    zeroed = tuple(np.zeros_like(k) if type(k) is np.ndarray and k.dtype.kind != "b" else k for k in key)
    try:
        region = np.broadcast_to(np.zeros((), target._data.dtype), target._data.shape)[zeroed].shape
    except IndexError:  # more than bounds: explained_rest words it
        return
    shape = values._data.shape
    while len(shape) > len(region) and shape[0] == 1:  # leading ones are dropped, as in _without_leading_ones
        shape = shape[1:]
    try:
        fits = np.broadcast_shapes(shape, region) == region
    except ValueError:
        fits = False
    if not fits:
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(values._data.shape)} cannot be broadcast "
                           f"to indexing result of shape {list(region)}")


def _check_index_put_dtype(target: Tensor, key: tuple, value: Tensor) -> None:
    """As torch, writing at index tensors takes a value of the tensor's dtype, but for a 0-d value at one bool
    mask (a masked fill)."""
    if value._data.dtype == target._data.dtype:
        return
    if not value._data.ndim and sum(1 for k in key if type(k) is np.ndarray) == 1 and \
            any(type(k) is np.ndarray and k.dtype.kind == "b" for k in key):
        if value._data.dtype.kind == "c":
            element_of("__setitem__", value.item(), target._data.dtype)  # as a number: no imaginary part dropped
        return
    raise RuntimeError(
        f"Index put requires the source and destination dtypes match, got "
        f"{_dtype.scalar_type_name(target._data.dtype)} for the destination and "
        f"{_dtype.scalar_type_name(value._data.dtype)} for the source; convert the value first "
        "(value.to(x.dtype))"
    )


def _without_leading_ones(value: Tensor) -> Tensor:
    """As torch, a value's leading dims of size 1 are dropped (a view) before it is broadcast to the region:
    ``x[0] = ones(1, n)`` fits a region of ``n``."""
    shape = value._data.shape
    lead = 0
    while lead < len(shape) and shape[lead] == 1:
        lead += 1
    return value.view(shape[lead:]) if lead else value


def _set_basic(self: Tensor, key, value, recording: bool) -> None:
    if isinstance(value, Tensor) and _aliasing.may_share(self, value):
        # as torch: a value of the region's shape (leading ones dropped) is copied, and must not share part of
        # its memory; one broadcast to it is not checked
        fitted = _without_leading_ones(value)._data
        region = self._data[_view_key(key)]
        if fitted.shape == region.shape:
            _aliasing.refuse_shared_memory("__setitem__", region, fitted)
    if recording:
        # as torch: write through a view, so self's graph records the change as CopySlices;
        # a key that selects all of self (x[:], x[...]) makes no view: self itself is written
        region = self if takes_all(self._data.shape, key) else \
            _index_node(key, self._data.shape).apply(self, _view_key(key))
        if isinstance(value, Tensor):
            if region is self and not value._data.ndim:
                apply_inplace(self, FillFrom.apply, value, op="__setitem__")  # as torch: fill_ with a 0-d tensor
            else:
                if value._data.shape != region._data.shape:  # as torch: the value must fit before anything else
                    value = _without_leading_ones(value)
                    check_fits("copy_", region._data.shape, value._data.shape)
                _copy(region, value)
        else:
            apply_inplace(region, FillNumber.apply, value, op="__setitem__")
        return
    if isinstance(value, Tensor):
        if value._data.dtype.kind == "c" and self._data.dtype.kind not in "cb":
            warn_of_discarded_imaginary_parts()  # as the copy_ that records the write warns
        if not self._data.flags.writeable and _aliasing.overlaps(self._data[_view_key(key)]):
            raise _overlapping_write("__setitem__")  # as torch: a region whose elements share memory is refused
        # NumPy would broadcast the value's leading ones away too, but not into a single element: x[0, 0] = t[1]
        apply_inplace(self, IndexPut.apply, key, _without_leading_ones(value), op="__setitem__")
        return
    _write_unrecorded(self, key, value)


def _write_unrecorded(self: Tensor, key, value) -> None:
    if _grad.enabled and self._base is not None:
        _check_recordable(self, recording=False)  # a view made under no_grad, of a base that requires grad, is refused
    try:
        self._data[key] = value
    except ValueError:
        if self._data.flags.writeable:
            raise
        _write_at_key_through_alias(self._data, key, value)
    self._bump()
    if _forward.key is not None:
        from ember.autograd.forward_ad import zero_tangent_at

        zero_tangent_at(self, key)


def _write_at_key_through_alias(data: np.ndarray, key, value) -> None:
    """``data[key] = value`` into memory NumPy marks read-only (see ``_write_through_alias``): a basic key whose
    region shows each element once, or index tensors (deprecated on an expanded tensor, as torch says)."""
    alias = _aliasing.writable_alias(data)
    if alias is None:
        raise _overlapping_write("__setitem__")
    if _is_basic(key):
        region = data[_view_key(key)]
        if _aliasing.overlaps(region):
            raise _overlapping_write("__setitem__")
    alias[key] = value


def _view_key(key):
    """A basic key that yields a view even when it picks one element (NumPy returns a scalar for x[0] of 1-d)."""
    items = key if isinstance(key, tuple) else (key,)
    if all(isinstance(k, int) for k in items):
        return items + (Ellipsis,)
    return key


def uniform_(self: Tensor, a: float = 0.0, b: float = 1.0, *, generator=None) -> Tensor:
    from ember import _random, _streams

    _check_sampled_dtype(self, "check_uniform_bounds")
    _check_uniform_bounds(a, b, self._data.dtype)
    values = _drawn(_streams.uniform, _random.chosen(generator), a, b, self._data)
    return apply_inplace(self, Uniform.apply, values, op="uniform_")


def normal_(self: Tensor, mean: float = 0.0, std: float = 1.0, *, generator=None) -> Tensor:
    from ember import _random, _streams

    _check_sampled_dtype(self, "normal_kernel_cpu")
    if not std >= 0.0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    if self._data.dtype.kind == "c":
        std = std / math.sqrt(2)  # as torch: each part gets half the variance, the complex value all of it
    values = _drawn(_streams.normal, _random.chosen(generator), mean, std, self._data)
    return apply_inplace(self, Normal.apply, values, op="normal_")


def _drawn(draw, generator, first: float, second: float, data: np.ndarray) -> np.ndarray:
    from ember import _streams

    """Samples shaped as ``data``, drawn in its precision (single for the narrower floats); for a complex
    tensor, its real and imaginary parts one after the other, as torch's."""
    double, narrow = _streams.precision(data.dtype)
    if data.dtype.kind != "c":
        return draw(generator, data.shape, double, first, second, narrow)
    pairs = draw(generator, (*data.shape, 2), double, first, second)
    return pairs[..., 0] + 1j * pairs[..., 1]


def _check_sampled_dtype(self: Tensor, kernel: str) -> None:
    """As torch: random floats go only into floating tensors."""
    if _dtype.kind(self._data.dtype) not in "fc":
        raise NotImplementedError(
            f'"{kernel}" not implemented for \'{_dtype.scalar_type_name(self._data.dtype)}\': random floats need a '
            "floating tensor; use random_ or randint for integers"
        )


def _check_uniform_bounds(low: float, high: float, dtype: np.dtype) -> None:
    """As torch: both ends finite and within the dtype's range, and ``low <= high``."""
    largest = float(_dtype.float_info(dtype).max)
    for name, bound in (("from", low), ("to", high)):
        if not -largest <= bound <= largest:  # inf and nan too
            raise RuntimeError(f"{name} is out of bounds for {_dtype.scalar_type_name(dtype)}: uniform_ takes "
                               f"finite bounds within the dtype's range (got {bound})")
    if low > high:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={low} > to={high}")
