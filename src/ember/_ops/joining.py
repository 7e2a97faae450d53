"""Joining tensors: ``cat`` along an existing dim, ``stack`` along a new one.

Each is one Function over any number of tensors; the backward hands every
input its own part of the gradient (``narrow`` for cat, ``unbind`` for stack),
written in ember ops, so higher-order gradients work.

>>> import ember
>>> a, b = ember.ones(2, requires_grad=True), ember.zeros(1)
>>> ember.cat([a, b])
tensor([1., 1., 0.], grad_fn=<CatBackward0>)
>>> ember.stack([a, a], dim=1).shape
ember.Size([2, 2])
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ember import _dtype
from ember._ops._jvp import linear_jvp
from ember._ops._support import ember_function, normalize_dims, result_dtype, undispatched, whole_number, wrap
from ember._ops.copy import _is_in_format, contiguous_format, copy_in_layout, memory_format, suggested_format
from ember._ops.out import casts_into, into_out
from ember._tensor import Tensor
from ember.autograd.function import Function

_concatenate = undispatched(np.concatenate)


class Cat(Function):
    backward_name = "CatBackward0"
    torch_saved_values = {"dim": "axis"}
    backward_on_arrays = True  # (see _part)
    jvp = linear_jvp(start=1)

    @staticmethod
    def forward(ctx, dim: int, *tensors: Tensor) -> Tensor:
        # the checks are made here, in the usual call's one pass over the tensors (see _alike)
        alike = _alike(tensors, dim)
        if alike is not None:  # the usual call: one dtype, a layout that needs no look
            axis, arrays, sizes = alike
            ctx.axis, ctx.sizes = axis, sizes
            out = _concatenate(arrays, axis)
            return wrap(out if out.flags.c_contiguous else _joined(arrays, axis, out.dtype, contiguous_format))
        tensors = _tensor_list("cat", tensors)
        axis = ctx.axis = _check_cat_shapes(tensors, dim)
        sizes, arrays, every = [], [], []  # one loop: in Python 3.11 each comprehension is a call of its own
        for t in tensors:
            data = t._data
            every.append(data)
            if data.shape == (0,):  # (see _skipped)
                sizes.append(None)
            else:
                sizes.append(data.shape[axis])
                arrays.append(data)
        ctx.sizes = sizes
        dtype = _joined_dtype(tensors)
        if not arrays:
            return wrap(np.zeros((0,), dtype))
        # below 4 dims every input suggests the contiguous format: the layouts need no look
        fmt = contiguous_format if every[0].ndim < 4 else _joined_format(every)  # skipped ones too
        return wrap(_joined(arrays, axis, dtype, fmt))

    @staticmethod
    def backward(ctx, grad: Tensor) -> tuple:
        grads: list = [None]
        start = 0
        for size, needed in zip(ctx.sizes, ctx.needs_input_grad[1:]):
            if size is None:  # an input cat left out: its gradient is as empty as it is
                grads.append((np.zeros(0, grad.dtype) if type(grad) is np.ndarray else grad.new_zeros(0))
                             if needed else None)
                continue
            grads.append(_part(grad, ctx.axis, start, size) if needed else None)
            start += size
        return tuple(grads)


def _part(grad, axis: int, start: int, size: int):
    """``grad.narrow(axis, start, size)``, or the same slice of an array."""
    if type(grad) is np.ndarray:
        return grad[(slice(None),) * axis + (slice(start, start + size),)]
    return grad.narrow(axis, start, size)


class Stack(Function):
    backward_name = "StackBackward0"
    torch_saved_values = {"dim": "axis"}
    jvp = linear_jvp(start=1)

    @staticmethod
    def forward(ctx, dim: int, *tensors: Tensor) -> Tensor:
        # the checks are made here, in the usual call's one pass over the tensors (see _alike)
        alike = _alike(tensors, 0)
        arrays = None
        if alike is not None:
            _, arrays, sizes = alike
            if sizes.count(sizes[0]) != len(sizes):  # one shape for all: stack's rule
                arrays = None
        if arrays is not None and dim == 0:  # the usual call: NumPy builds the array of arrays
            ctx.axis = 0
            return wrap(np.array(arrays))
        axis = ctx.axis = _stack_axis(_tensor_list("stack", tensors), dim)
        if arrays is not None and axis < arrays[0].ndim:  # as below, without the general checks
            joined = _concatenate(arrays, axis)
            if joined.flags.c_contiguous:
                return wrap(joined.reshape(joined.shape[:axis] + (len(arrays),) + arrays[0].shape[axis:]))
        arrays = [t._data for t in tensors]
        dtype = _joined_dtype(tensors)
        if axis == arrays[0].ndim:  # as torch: the inputs with a new last dim joined, which comes out row-major
            return wrap(np.ascontiguousarray(np.stack(arrays, axis=axis, dtype=dtype)))
        # as torch: joined along ``axis``, then that dim split in two (a view), so the layout is cat's
        joined = _joined(arrays, axis, dtype, contiguous_format if arrays[0].ndim < 4 else _joined_format(arrays))
        return wrap(joined.reshape(joined.shape[:axis] + (len(arrays),) + arrays[0].shape[axis:]))

    @staticmethod
    def backward(ctx, grad: Tensor) -> tuple:
        return (None, *grad.unbind(ctx.axis))


def _alike(tensors: tuple, dim) -> tuple | None:
    """(the axis, the arrays, their sizes along it) for tensors that need none of the general path's care: plain
    tensors of one dtype and 1 to 3 dims (so their layout suggests the contiguous format), their sizes equal off
    the axis, ``dim`` (an int) in range; else None. Tensors of one shape (the usual call) take one short pass."""
    first = tensors[0]
    if type(first) is not Tensor:
        return None
    data = first._data
    shape, dtype = data.shape, data.dtype
    axis = _AXES.get((len(shape), dim))
    if axis is None:
        return None
    if len(tensors) == 2:  # the usual call, two of one shape and dtype, without a loop
        second = tensors[1]._data if type(tensors[1]) is Tensor else None
        if second is not None and second.shape == shape and second.dtype is dtype:
            return axis, [data, second], [shape[axis]] * 2
    arrays = [data]
    for t in tensors[1:]:
        if type(t) is not Tensor:
            return None
        data = t._data
        if data.shape != shape or data.dtype is not dtype:
            return _alike_off_the_axis(tensors, axis, shape, dtype)
        arrays.append(data)
    return axis, arrays, [shape[axis]] * len(arrays)  # (1-d empty ones too: cat of them all is as empty)


# (number of dims, dim) -> axis, for the dims in range of tensors of 1 to 3 dims: one look-up in _alike
_AXES = {(ndim, dim): dim % ndim for ndim in (1, 2, 3) for dim in range(-ndim, ndim)}


def _alike_off_the_axis(tensors: tuple, axis: int, shape: tuple, dtype: np.dtype) -> tuple | None:
    """``_alike`` for tensors whose sizes differ along the axis: none may be a 1-d empty one (cat leaves those
    out), all of the first one's ``dtype`` and of its ``shape`` off the axis."""
    n = len(shape)
    arrays, sizes = [], []
    for t in tensors:
        if type(t) is not Tensor:
            return None
        data = t._data
        other = data.shape
        if data.dtype is not dtype or other == (0,) or other != shape and (
                len(other) != n or other[:axis] != shape[:axis] or other[axis + 1:] != shape[axis + 1:]):
            return None
        arrays.append(data)
        sizes.append(other[axis])
    return axis, arrays, sizes


def _joined_dtype(tensors: tuple) -> np.dtype:
    """The dtype the tensors promote to: the usual case, one dtype for all, without the promotion rules."""
    dtype = tensors[0]._data.dtype
    for t in tensors:
        if t._data.dtype is not dtype:
            return result_dtype(*tensors).np
    return dtype


def _joined(arrays: list, axis: int, dtype: np.dtype, fmt: memory_format) -> np.ndarray:
    """np.concatenate laid out in ``fmt`` (torch's cat does not keep, as NumPy's does, a transposed input's order)."""
    out = _concatenate(arrays, axis, None, dtype=dtype)
    if fmt is contiguous_format and out.flags.c_contiguous:
        return out
    return out if _is_in_format(out, fmt) else copy_in_layout(out, dtype, fmt, "cat")


def _joined_format(arrays: list) -> memory_format:
    """As torch lays out cat's result: in the format every input suggests, if they agree; else contiguous."""
    fmt = suggested_format(arrays[0])
    for a in arrays[1:]:
        if suggested_format(a) is not fmt:
            return contiguous_format
    return fmt


def _skipped(t: Tensor) -> bool:
    """As torch, cat leaves out a 1-d tensor of no elements whatever the other shapes (an old convention)."""
    return t._data.shape == (0,)


def _tensor_list(op: str, tensors) -> tuple:
    """The tensors argument: a list or tuple of tensors, else a TypeError that says which element is wrong."""
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{op}(): argument 'tensors' (position 1) must be tuple of Tensors, not {type(tensors).__name__}")
    for t in tensors:
        if type(t) is not Tensor and not isinstance(t, Tensor):
            i = next(i for i, t in enumerate(tensors) if not isinstance(t, Tensor))
            raise TypeError(f"{op}(): expected Tensor as element {i} in argument 0, but got {type(tensors[i]).__name__}")
    return tuple(tensors)


def _check_cat_shapes(tensors: tuple, dim: int) -> int:
    """The axis to join along, after torch's checks (0-d tensors, number of dims, sizes off the axis)."""
    first = tensors[0]._data.shape
    n = len(first)
    if type(dim) is int and -n <= dim < n and first != (0,):  # the usual call: one pass, sizes off the axis agree
        axis = dim % n
        for t in tensors:
            shape = t._data.shape
            if shape != first and (len(shape) != n or shape[:axis] != first[:axis] or
                                   shape[axis + 1:] != first[axis + 1:]):
                break
        else:
            return axis
    for i, t in enumerate(tensors):
        if not t._data.ndim:
            raise RuntimeError(f"cat(): zero-dimensional tensor (at position {i}) cannot be concatenated")
    joined = [(i, t) for i, t in enumerate(tensors) if not _skipped(t)]
    reference = joined[0][1] if joined else tensors[0]
    (axis,) = normalize_dims(dim, reference._data.ndim, "cat()")
    first = reference._data.shape
    for i, t in joined[1:]:
        shape = t._data.shape
        if len(shape) != len(first):
            raise RuntimeError(f"cat(): Tensors must have same number of dimensions: got {len(first)} and {len(shape)}")
        for d, (expected, got) in enumerate(zip(first, shape)):
            if d != axis and expected != got:
                raise RuntimeError(
                    f"cat(): Sizes of tensors must match except in dimension {axis}. Expected size {expected} but got "
                    f"size {got} for tensor number {i} in the list."
                )
    return axis


@ember_function
def cat(tensors: Sequence[Tensor], dim: int = 0, *, out: Tensor | None = None) -> Tensor:
    """The tensors joined along ``dim``; all other sizes must match. Dtypes promote as in arithmetic.

    >>> ember.cat([ember.zeros(1, 2), ember.ones(2, 2)]).shape
    ember.Size([3, 2])
    """
    if out is None and type(tensors) is list and type(dim) is int:  # (_joined_by's checks, at once)
        if len(tensors) == 2:  # spelled out: Python 3.11 calls f(*args) on a slower path (a tenth of the op)
            return Cat.apply(dim, tensors[0], tensors[1])
        if tensors:
            return Cat.apply(dim, *tensors)
    return _joined_by(Cat, "cat", tensors, dim, out, ValueError)


@ember_function
def concat(tensors: Sequence[Tensor], dim: int = 0, *, out: Tensor | None = None) -> Tensor:
    """Another name of ``cat``."""
    return cat(tensors, dim, out=out)


@ember_function
def concatenate(tensors: Sequence[Tensor], dim: int = 0, *, out: Tensor | None = None) -> Tensor:
    """``cat`` with NumPy's name; ``axis=`` is taken for ``dim``, as by every function with a ``dim``."""
    return cat(tensors, dim, out=out)


@ember_function
def stack(tensors: Sequence[Tensor], dim: int = 0, *, out: Tensor | None = None) -> Tensor:
    """The tensors, all of one shape, joined along a new dim ``dim``.

    >>> ember.stack([ember.zeros(2), ember.ones(2)], dim=1)
    tensor([[0., 1.],
            [0., 1.]])
    """
    if out is None and type(tensors) is list and type(dim) is int:  # (_joined_by's checks, at once)
        if len(tensors) == 2:  # spelled out: Python 3.11 calls f(*args) on a slower path (a tenth of the op)
            return Stack.apply(dim, tensors[0], tensors[1])
        if tensors:
            return Stack.apply(dim, *tensors)
    return _joined_by(Stack, "stack", tensors, dim, out, RuntimeError)


def _joined_by(node: type, op: str, tensors, dim, out: Tensor | None, empty: type) -> Tensor:
    """``node.apply(dim, *tensors)``, whose forward checks the tensors (in one pass, for the usual call), after the
    checks of the sequence itself (a list or tuple, not empty, else ``empty``, the type of torch's error) and of
    ``dim``: as torch, an integer (a NumPy one, or a 0-d integer tensor too), not a bool, float or None."""
    if type(tensors) is not list and type(tensors) is not tuple or not tensors:
        tensors = _tensor_list(op, tensors)
        if not tensors:
            raise empty(f"{op}(): expected a non-empty list of Tensors")
    if type(dim) is not int:
        dim = whole_number(dim, op, "dim", 2, zero_dim_only=True)
    result = node.apply(dim, *tensors)
    if out is None:
        return result
    if isinstance(out, Tensor) and not casts_into(result._data.dtype, out._data.dtype):
        raise TypeError(f"{op}(): input types can't be cast to the desired output type "
                        f"{_dtype.scalar_type_name(out._data.dtype)}")  # torch's type, for cat and stack
    return into_out(op, result, out, *tensors)


def _stack_axis(tensors: tuple, dim) -> int:
    """The axis of stack's new dim, after torch's checks: tensors of one shape, ``dim`` in range."""
    first = tensors[0]._data.shape
    for t in tensors:
        if t._data.shape != first:
            i = next(i for i, t in enumerate(tensors) if t._data.shape != first)
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(first)} at entry 0 and "
                f"{list(tensors[i]._data.shape)} at entry {i}"
            )
    return dim if type(dim) is int and 0 <= dim <= len(first) else normalize_dims(dim, len(first) + 1, "stack()")[0]
