"""Views: results that share memory (and the version counter) with their input.

Each view remembers how to recreate itself from its base (``_view_replay``),
which is what lets an in-place change of a view be recorded on its base.

>>> import ember
>>> x = ember.arange(6.).view(2, 3)
>>> y = x.t()
>>> y[0, 1] = 100.
>>> x
tensor([[  0.,   1.,   2.],
        [100.,   4.,   5.]])
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from ember import _dtype
from ember._ops._aliasing import assign, overlaps
from ember._ops._support import (
    broadcast_view, ember_function, normalize_dims, require_tensor, shares_memory, sharing_view_of, view_of,
    whole_number, wrap,
)
from ember._ops.copy import Clone, contiguous_format
from ember._ops.indexing import Select, Slice
from ember._ops.joining import stack
from ember._ops.reduction import _check_no_repeats, summed_to
from ember._ops.view_dtype import view_as_dtype
from ember._tensor import OF_MULTIPLE_OUTPUTS, Tensor
from ember.autograd.saved_attributes import input_sizes
from ember.autograd.function import Function


_ALL = slice(None)
_ndarray = np.ndarray
_prod = math.prod  # (a module's global is read faster than an attribute, on the paths every view takes)


def replay(base: Tensor, steps: tuple) -> Tensor:
    """Recreate a view of ``base`` from its recorded steps."""
    for function, args in steps:
        base = function(base, *args)
    return base


def check_replayable(view: Tensor) -> None:
    """Refuse a view whose base changed its shape in place since the view was made (``x.t_()``): its recorded
    steps would now reach other elements of the memory, so recording a change through it would be wrong."""
    region = replay(view._base.detach(), view._view_replay)._data
    data = view._data
    if (region.shape, region.strides) != (data.shape, data.strides) or \
            region.__array_interface__["data"][0] != data.__array_interface__["data"][0]:
        raise RuntimeError(
            "a view is being used with autograd after its base changed shape in place (t_, transpose_, "
            "unsqueeze_, squeeze_, as_strided_, resize_): the view no longer matches what its base gives, so the "
            "change cannot be recorded. Make the view again from the base after changing its shape."
        )


def _ints(sizes: tuple) -> bool:
    """Whether ``sizes`` are ints (by exact type: bools and floats are not sizes)."""
    for s in sizes:
        if type(s) is not int:
            return False
    return True


def _shape_arg(op: str, sizes: tuple, named=None, name: str = "size") -> tuple:
    """Sizes given as ``f(2, 3)``, ``f((2, 3))`` or by keyword (``f(shape=(2, 3))``, torch's name), as ints.

    The loop first: ``f(2, 3)`` is the common call, and it costs no more than the loop.
    """
    for s in sizes:
        if type(s) is not int:
            break
    else:
        if sizes:
            return sizes
    return _sizes_otherwise(op, sizes, named, name)


def _sizes_otherwise(op: str, sizes: tuple, named, name: str) -> tuple:
    if named is not None:
        if sizes:
            raise TypeError(f"{op}() got multiple values for argument '{name}': pass the sizes by position or "
                            f"as {name}=, not both")
        sizes = (named,)
    elif not sizes:
        raise TypeError(f"{op}() missing 1 required positional argument: '{name}' (e.g. x.{op}(2, 3) or "
                        f"x.{op}({name}=(2, 3)))")
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = tuple(sizes[0])
    for s in sizes:
        if type(s) is not int:
            return _converted_sizes(op, sizes)
    return sizes


def _converted_sizes(op: str, size: tuple) -> tuple:
    """NumPy integers are sizes too; bools and anything else are not."""
    for s in size:
        if not isinstance(s, (int, np.integer)) or isinstance(s, bool):
            raise TypeError(f"{op}(): size must be a sequence of ints, but got an element of type {type(s).__name__}")
    return tuple([int(s) for s in size])


def _infer_shape(op: str, shape: tuple, numel: int, current: tuple) -> tuple:
    if -1 not in shape and math.prod(shape) == numel and (not shape or min(shape) >= 0):
        return shape  # the usual case: nothing to infer
    for i, s in enumerate(shape):
        if s < -1:
            raise RuntimeError(f"{op}: invalid shape dimension {s} at index {i} of shape {list(shape)}")
    if shape.count(-1) > 1:
        raise RuntimeError(f"{op}: only one dimension can be inferred")
    known = math.prod(s for s in shape if s != -1)
    if -1 in shape:
        if known == 0 and numel == 0:
            raise RuntimeError(f"{op}: cannot reshape tensor of 0 elements into shape {list(shape)} because the "
                               "unspecified dimension size -1 can be any value and is ambiguous; give that size")
        if known == 0 or numel % known:
            raise RuntimeError(f"{op}: shape '{list(shape)}' is invalid for input of size {numel}")
        shape = tuple(numel // known if s == -1 else s for s in shape)
    if math.prod(shape) != numel:
        raise RuntimeError(f"{op}: shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


class View(Function):
    backward_name = "ViewBackward0"
    torch_saved_values = {"self_sym_sizes": input_sizes(0)}
    backward_on_arrays = True  # reshape is a method of both

    @staticmethod
    def forward(ctx, x, shape):
        data = x._data
        if ctx.needs_input_grad[0]:  # (what backward reads: when nothing is recorded, no shape tuple is made)
            ctx.shape = data.shape
        result = view_of(x, data.reshape(shape), (view, (shape,)))
        if result._base is None:  # NumPy had to copy: the memory layout allows no view
            raise RuntimeError(
                f"view: view size is not compatible with input tensor's size and stride (at least one dimension spans "
                f"across two contiguous subspaces): input {list(data.shape)} to {list(shape)}. "
                "Use .reshape(...) instead."
            )
        return result

    @staticmethod
    def backward(ctx, grad):
        return grad.reshape(ctx.shape), None


class ReshapeAlias(View):
    backward_name = "ReshapeAliasBackward0"  # torch's name for reshape as a view of a non-contiguous tensor
    torch_saved_values = View.torch_saved_values


class ReshapeCopy(View):
    """``reshape`` where the memory layout does not allow a view: a row-major copy."""

    backward_name = "UnsafeViewBackward0"  # torch's name: it copies, then views the copy
    torch_saved_values = {"self_sym_sizes": input_sizes(0)}

    @staticmethod
    def forward(ctx, x, shape):
        ctx.shape = x._data.shape
        return wrap(np.reshape(x._data, shape))


class Transpose(Function):
    backward_name = "TransposeBackward0"
    torch_saved_values = {"dim0": lambda node: node.dims[0], "dim1": lambda node: node.dims[1]}
    backward_on_arrays = True  # swapaxes is a method of both

    @staticmethod
    def forward(ctx, x, dim0, dim1):
        ctx.dims = (dim0, dim1)  # non-negative; equal for a 0-d or 1-d t()
        swapped = x._data.swapaxes(dim0, dim1) if x._data.ndim else x._data.view()
        return sharing_view_of(x, swapped, (transpose, (dim0, dim1)))

    @staticmethod
    def backward(ctx, grad):
        dim0, dim1 = ctx.dims
        return (grad if dim0 == dim1 else grad.swapaxes(dim0, dim1)), None, None


class MatrixTranspose(Function):
    """``x.t()``: the transpose of a matrix; a vector or a 0-d tensor is its own."""

    backward_name = "TBackward0"
    backward_on_arrays = True

    @staticmethod
    def forward(ctx, x):
        return sharing_view_of(x, x._data.T, (t, ()))

    @staticmethod
    def backward(ctx, grad):
        return grad.mT if grad.ndim == 2 else grad


class Permute(Function):
    backward_name = "PermuteBackward0"
    torch_saved_values = {"dims": "dims"}
    backward_on_arrays = True  # permuted() reorders either

    @staticmethod
    def forward(ctx, x, dims):
        ctx.dims = dims
        return sharing_view_of(x, x._data.transpose(dims), (permute, (dims,)))

    @staticmethod
    def backward(ctx, grad):
        dims = ctx.dims
        inverse = [0] * len(dims)
        for position, dim in enumerate(dims):
            inverse[dim] = position
        return permuted(grad, tuple(inverse)), None


def permuted(grad, dims: tuple):
    """``grad`` with its dims reordered: ``Tensor.permute``, or NumPy's ``transpose`` of an array."""
    return grad.transpose(dims) if type(grad) is np.ndarray else grad.permute(dims)


def _expanded_layout(data: np.ndarray, shape: tuple) -> tuple:
    """(``shape``, the strides of contiguous ``data`` broadcast to it, whether that shows some element twice):
    what ``Expand.forward`` makes the view of ``data`` from (read-only where it shows an element twice, else
    writable, as torch's expand)."""
    lead = len(shape) - data.ndim
    strides = [0] * lead
    repeats = False
    for n in shape[:lead]:
        if n > 1:
            repeats = True
    for have, want, stride in zip(data.shape, shape[lead:], data.strides):
        if have == want:
            strides.append(stride)
        else:
            strides.append(0)
            if want > 1:
                repeats = True
    return shape, tuple(strides), repeats


class Expand(Function):
    backward_name = "ExpandBackward0"
    torch_saved_values = {"self_sym_sizes": input_sizes(0)}
    backward_on_arrays = True  # summed_to() sums either

    @staticmethod
    def forward(ctx, x, layout):
        # layout: (the shape, and for contiguous input the strides and whether an element shows twice, else None)
        data = x._data
        if ctx.needs_input_grad[0]:  # (what backward reads, as View's)
            ctx.shape = data.shape
        shape, strides, repeats = layout
        if strides is not None:  # the usual input: the view made at once, strides and all
            expanded = _ndarray(shape, data.dtype, data, 0, strides)
            if repeats:  # an element seen twice: read-only, as torch refuses to write through it
                expanded.setflags(False)  # (write=False, by position: a third cheaper than by keyword)
            return sharing_view_of(x, expanded, (expand, (shape,)))
        expanded = broadcast_view(data, shape)
        if expanded.size == 0 or not overlaps(expanded):  # no element seen twice: writable, as torch's
            expanded = np.lib.stride_tricks.as_strided(data, shape, expanded.strides, writeable=True)
        return sharing_view_of(x, expanded, (expand, (shape,)))

    @staticmethod
    def backward(ctx, grad):
        return summed_to(grad, ctx.shape), None


class Squeeze(Function):
    backward_name = "SqueezeBackward1"  # one dim given; the subclasses only rename the node as torch does
    backward_on_arrays = True  # reshape is a method of both

    @staticmethod
    def forward(ctx, x, axes):
        ctx.shape = x._data.shape
        return sharing_view_of(x, x._data.squeeze(axes), (_squeeze_axes, (axes,)))

    @staticmethod
    def backward(ctx, grad):
        return grad.reshape(ctx.shape), None


class SqueezeAll(Squeeze):
    backward_name = "SqueezeBackward0"  # no dim given
    torch_saved_values = {"self_sym_sizes": input_sizes(0)}


class SqueezeDims(Squeeze):
    backward_name = "SqueezeBackward2"  # a tuple of dims


class Unsqueeze(Function):
    backward_name = "UnsqueezeBackward0"
    torch_saved_values = {"dim": "dim"}
    backward_on_arrays = True  # squeeze is a method of both

    @staticmethod
    def forward(ctx, x, dim):
        ctx.dim = dim
        key = _NEW_DIM_AT[dim] if dim < 8 else (_ALL,) * dim + (None,)
        return sharing_view_of(x, x._data[key], (unsqueeze, (dim,)))

    @staticmethod
    def backward(ctx, grad):
        return grad.squeeze(ctx.dim), None


_NEW_DIM_AT = tuple((_ALL,) * dim + (None,) for dim in range(8))  # the NumPy key that inserts a dim at each place


class Alias(Function):
    backward_name = "AliasBackward0"
    backward_on_arrays = True

    @staticmethod
    def forward(ctx, x):
        return sharing_view_of(x, x._data.view(), (alias, ()))

    @staticmethod
    def backward(ctx, grad):
        return grad


class Unbind(Function):
    """Every slice of ``axis``, each a view; the gradient stacks theirs back (zeros for those that got none)."""

    backward_name = "UnbindBackward0"
    torch_saved_values = {"dim": "axis"}

    @staticmethod
    def forward(ctx, x, axis):
        ctx.axis = axis
        lead = (_ALL,) * axis
        # the Ellipsis keeps a 0-d slice a view (NumPy would give a scalar copy of a single element)
        views = tuple(sharing_view_of(x, x._data[lead + (i, ...)], (select, (axis, i)))
                      for i in range(x._data.shape[axis]))
        for view in views:
            view._view_origin = OF_MULTIPLE_OUTPUTS
        return views

    @staticmethod
    def backward(ctx, *grads):
        return stack(grads, ctx.axis), None


class ViewScatter(Function):
    """Write ``value`` into the region of ``base`` that a view covers: an in-place change seen from the base."""

    backward_name = "CopySlices"

    @staticmethod
    def forward(ctx, base, value, steps):
        # saved, so that a second backward without retain_graph raises, as torch's CopySlices always does
        ctx.save_for_backward(steps)
        assign(replay(base.detach(), steps)._data, value._data)  # (a view of an expanded tensor: see _aliasing)
        ctx.mark_dirty(base)
        return base

    @staticmethod
    def backward(ctx, grad):
        (steps,) = ctx.saved_tensors
        grad_value = replay(grad, steps)
        outside = ViewFill.apply(grad, steps)
        return outside, grad_value, None


class ViewFill(Function):
    """A copy of ``x`` with zeros in the region of a view (the base's gradient after a view was overwritten)."""

    backward_name = "ViewFillBackward0"

    @staticmethod
    def forward(ctx, x, steps):
        ctx.steps = steps
        out = wrap(np.array(x._data, copy=True))
        assign(replay(out, steps)._data, 0)
        return out

    @staticmethod
    def backward(ctx, grad):
        return ViewFill.apply(grad, ctx.steps), None


# Bound once, for the usual calls below: Python 3.11 makes a new bound method at every ``View.apply`` it reads
_apply_view, _apply_t, _apply_permute = View.apply, MatrixTranspose.apply, Permute.apply
_apply_expand, _apply_unsqueeze = Expand.apply, Unsqueeze.apply


def _squeeze_axes(input, axes) -> Tensor:
    return Squeeze.apply(input, axes)


_TARGETS: dict = {}  # (resolve, shape, sizes as given) -> the shape they ask for, once checked: few shapes recur


def _target_shape(op: str, shape: tuple, sizes: tuple, named, name: str, resolve) -> tuple:
    """``resolve(op, shape, sizes)``: the shape that ``sizes`` (as ``_shape_arg`` takes them, ``named`` the keyword
    ``name``) ask of a tensor of ``shape``, checked.

    Sizes given as ints by position that were checked once against ``shape`` are not checked again.
    """
    if named is None and sizes:
        for s in sizes:
            if type(s) is not int:  # (a float equals an int as a key, and must still be refused)
                break
        else:
            cache_key = (resolve, shape, sizes)
            target = _TARGETS.get(cache_key)
            if target is None:
                target = resolve(op, shape, sizes)
                if len(_TARGETS) > 256:
                    _TARGETS.clear()
                _TARGETS[cache_key] = target
            return target
    return resolve(op, shape, _shape_arg(op, sizes, named, name))


def _inferred(op: str, shape: tuple, sizes: tuple) -> tuple:
    return _infer_shape(op, sizes, math.prod(shape), shape)


@ember_function
def view(input, *sizes, size=None, dtype=None) -> Tensor:
    """The same memory with another shape (one dim may be -1); fails where a copy would be needed. With a dtype
    (``x.view(ember.int32)``), the same memory read as that dtype (``_ops/view_dtype.py``)."""
    x = input if type(input) is Tensor else require_tensor(input, "view")
    for s in sizes:  # the usual call, x.view(16): ints, none negative (nothing to infer), as many elements
        if type(s) is not int or s < 0:
            break
    else:
        if sizes and size is None and dtype is None and _prod(sizes) == x._data.size:
            return _apply_view(x, sizes)
    if dtype is not None:
        return view_as_dtype(x, dtype)
    try:
        target = _target_shape("view", x._data.shape, sizes, size, "size", _inferred)
    except TypeError:  # (a dtype by position: found here, off the path of shapes)
        if len(sizes) == 1 and isinstance(sizes[0], _dtype.dtype):
            return view_as_dtype(x, sizes[0])
        raise
    return View.apply(x, target)


@ember_function
def reshape(input, *sizes, shape=None) -> Tensor:
    """Another shape: a view when the memory allows, else a copy."""
    x = input if type(input) is Tensor else require_tensor(input, "reshape")
    data = x._data
    for s in sizes:  # the usual call, x.reshape(2, 8), as view's
        if type(s) is not int or s < 0:
            break
    else:
        if sizes and shape is None and _prod(sizes) == data.size:
            if data.flags.c_contiguous:  # (NumPy's reshape of it is always a view)
                return _apply_view(x, sizes)
    target = _target_shape("reshape", data.shape, sizes, shape, "shape", _inferred)
    try:
        return (View if data.flags.c_contiguous else ReshapeAlias).apply(x, target)
    except RuntimeError:  # the memory layout allows no view: a row-major copy, viewed, recorded as torch does
        return ReshapeCopy.apply(Clone.apply(x, contiguous_format), target)


@ember_function
def flatten(input, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """The dims from ``start_dim`` to ``end_dim`` merged into one (a view when the memory allows).

    >>> ember.ones(2, 3, 4).flatten(1).shape
    ember.Size([2, 12])
    """
    x = require_tensor(input, "flatten")
    shape = x._data.shape
    start, end = normalize_dims((start_dim, end_dim), len(shape), "flatten")
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if not shape:
        return reshape(x, 1)
    if start == end:
        return input
    return reshape(x, shape[:start] + (math.prod(shape[start:end + 1]),) + shape[end + 1:])


@ember_function
def transpose(input, dim0: int, dim1: int) -> Tensor:
    """Swap two dimensions (a view)."""
    x = require_tensor(input, "transpose")
    d0, d1 = normalize_dims((dim0, dim1), x._data.ndim, "transpose")
    return Transpose.apply(x, d0, d1)


swapdims = transpose


@ember_function
def swapaxes(input, axis0: int, axis1: int) -> Tensor:
    """``transpose`` under NumPy's parameter names, which are torch's for this one (not dim0, dim1)."""
    x = require_tensor(input, "swapaxes")
    d0, d1 = normalize_dims((axis0, axis1), x._data.ndim, "swapaxes")
    return Transpose.apply(x, d0, d1)


@ember_function
def t(input) -> Tensor:
    """Transpose a tensor of at most 2 dims."""
    x = input if type(input) is Tensor else require_tensor(input, "t")
    if x._data.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {x._data.ndim}D")
    return _apply_t(x)


@ember_function
def permute(input, *order, dims=None) -> Tensor:
    """Reorder the dimensions (a view)."""
    x = input if type(input) is Tensor else require_tensor(input, "permute")
    if len(order) == x._data.ndim and order in _ORDERINGS and dims is None:  # the usual call, x.permute(1, 0)
        for d in order:
            if type(d) is not int:  # (True == 1, and hashes alike: a bool must still be refused)
                break
        else:
            return _apply_permute(x, order)
    return Permute.apply(x, _target_shape("permute", x._data.shape, order, dims, "dims", _permutation))


# Every reordering of 1 to 6 dims, none negative: the orders that x.permute(...) takes as they are (not
# the empty one: x.permute() names no dims, which torch refuses)
_ORDERINGS = frozenset(order for ndim in range(1, 7) for order in itertools.permutations(range(ndim)))


def _permutation(op: str, shape: tuple, dims: tuple) -> tuple:
    """``dims`` as a reordering of the dims of a tensor of ``shape``, negative ones counted from the end."""
    ndim = len(shape)
    if sorted(dims) == list(range(ndim)):  # the usual call: a reordering of the dims, none negative
        return dims
    if len(dims) != ndim:
        raise RuntimeError(
            f"permute(): number of dimensions in the tensor input does not match the length of the desired ordering "
            f"of dimensions i.e. input.dim() = {ndim} is not equal to len(dims) = {len(dims)}; pass a "
            f"reordering such as {list(range(ndim))[::-1]}"
        )
    order = normalize_dims(dims, ndim, "permute")
    if sorted(order) != list(range(ndim)):
        raise RuntimeError(
            f"permute: expected one dim per dimension of the input ({ndim}), got {len(order)}: "
            f"{list(order)}; pass a reordering such as {list(range(ndim))[::-1]}"
            if len(order) != ndim else f"permute(): duplicate dims are not allowed: {list(dims)}"
        )
    return order


@ember_function
def expand(input, *sizes, size=None) -> Tensor:
    """Broadcast to ``sizes`` without copying (-1 keeps a dim)."""
    x = input if type(input) is Tensor else require_tensor(input, "expand")
    data = x._data
    if size is None:  # the usual call, m.expand(4, 4), of a contiguous tensor seen before: its layout found at once
        for s in sizes:  # (a float equals an int as a key, and must still be refused; a list is no key)
            if type(s) is not int:
                break
        else:
            layout = _EXPANSIONS.get((data.shape, data.strides, data.itemsize, sizes))
            if layout is not None:
                return _apply_expand(x, layout)
    shape = _target_shape("expand", data.shape, sizes, size, "size", _expanded_shape)
    if not (data.flags.c_contiguous and data.size):
        return Expand.apply(x, (shape, None, None))
    layout = _expanded_layout(data, shape)
    if size is None and _ints(sizes):  # a key that later calls of the same sizes look up
        if len(_EXPANSIONS) > 256:
            _EXPANSIONS.clear()
        _EXPANSIONS[(data.shape, data.strides, data.itemsize, sizes)] = layout
    return Expand.apply(x, layout)


# (shape, strides, item size, sizes as given) -> the layout of a contiguous tensor expanded (few recur). The
# strides and item size together tell a contiguous tensor from a strided one of the same shape and strides.
_EXPANSIONS: dict = {}


def _expanded_shape(op: str, shape: tuple, sizes: tuple) -> tuple:
    lead = len(sizes) - len(shape)
    if lead >= 0 and (not sizes or min(sizes) >= 0):
        for have, want in zip(shape, sizes[lead:]):
            if have != want and have != 1:
                break
        else:
            return sizes  # the usual call: every size given, and each one fits
    if len(sizes) < len(shape):
        raise RuntimeError(
            f"expand: the number of sizes provided ({len(sizes)}) must be greater or equal to the number of "
            f"dimensions in the tensor ({len(shape)})"
        )
    lead = len(sizes) - len(shape)
    for i, size in enumerate(sizes[:lead]):
        if size < 0:
            raise RuntimeError(
                f"The expanded size of the tensor ({size}) isn't allowed in a leading, non-existing dimension {i}; "
                "give new leading dims their size"
            )
    result = list(sizes[:lead])
    for i, (have, want) in enumerate(zip(shape, sizes[lead:])):
        if want < -1:
            raise RuntimeError(
                f"expand: the expanded size {want} at dimension {i + lead} is not allowed; give sizes of at least 0, "
                "or -1 to keep a dimension as it is"
            )
        if want == -1:
            want = have
        elif have != want and have != 1:
            raise RuntimeError(
                f"The expanded size of the tensor ({want}) must match the existing size ({have}) at non-singleton "
                f"dimension {i + lead}.  Target sizes: {list(sizes)}.  Tensor sizes: {list(shape)}"
            )
        result.append(want)
    return tuple(result)


@ember_function
def expand_as(input, other) -> Tensor:
    return expand(input, other._data.shape)


@ember_function
def broadcast_to(input, size) -> Tensor:
    return expand(input, tuple(size))


@ember_function
def squeeze(input, dim=None) -> Tensor:
    """Remove dims of size 1 (all of them, or those in ``dim``)."""
    x = require_tensor(input, "squeeze")
    axes = squeezed_axes("squeeze", x._data.shape, dim)
    node = SqueezeAll if dim is None else Squeeze if isinstance(dim, int) else SqueezeDims
    return node.apply(x, axes)


def squeezed_axes(op: str, shape: tuple, dim) -> tuple:
    """The dims of size 1 among ``dim`` (all dims if None), which may name each dim once."""
    dims = normalize_dims(dim, len(shape), op)
    if len(dims) > 1 and dim is not None:
        _check_no_repeats(dims, op)  # (NumPy's own refusal is a ValueError)
    return tuple(d for d in dims if shape and shape[d] == 1)


@ember_function
def unsqueeze(input, dim: int) -> Tensor:
    """Insert a dim of size 1 at ``dim``."""
    x = input if type(input) is Tensor else require_tensor(input, "unsqueeze")
    if type(dim) is int and 0 <= dim <= x._data.ndim:  # the usual call: a dim in range, not counted from the end
        return _apply_unsqueeze(x, dim)
    (axis,) = normalize_dims(dim, x._data.ndim + 1, "unsqueeze")
    return Unsqueeze.apply(x, axis)


@ember_function
def narrow(input, dim: int, start: int, length: int) -> Tensor:
    """``length`` entries of ``dim`` from ``start`` (a view)."""
    x = require_tensor(input, "narrow")
    if isinstance(start, Tensor) and (start._data.ndim or start._data.dtype.kind not in "iu"):
        raise RuntimeError("narrow(): start must be an 0-dim integral Tensor.")
    return Slice.apply(x, narrowed("narrow", x, dim, start, length))


def narrowed(op: str, x: Tensor, dim, start, length) -> tuple:
    """The key of ``x.narrow(dim, start, length)``, every argument checked as torch checks narrow's."""
    start, length = whole_number(start, op, "start"), whole_number(length, op, "length")
    if not x._data.ndim:
        raise RuntimeError(f"{op}() cannot be applied to a 0-dim tensor. Reshape it to 1-d first, e.g. x.reshape(1)")
    (axis,) = normalize_dims(whole_number(dim, op, "dim", zero_dim_only=True), x._data.ndim, op)
    size = x._data.shape[axis]
    if not -size <= start <= size:
        raise IndexError(f"{op}(): start out of range (expected to be in range of [{-size}, {size}], but got {start})")
    start = start + size if start < 0 else start
    if length < 0:
        raise RuntimeError(f"{op}(): length must be non-negative. Got length={length} with start={start} in a "
                           f"dimension of size {size}")
    if start + length > size:
        raise RuntimeError(f"{op}(): start ({start}) + length ({length}) exceeds dimension size ({size}).")
    return (slice(None),) * axis + (slice(start, start + length),)


@ember_function
def select(input, dim: int, index: int) -> Tensor:
    """The slice at ``index`` of ``dim``, which is removed (a view)."""
    x = require_tensor(input, "select")
    index = whole_number(index, "select", "index")
    if not x._data.ndim:
        raise IndexError("select() cannot be applied to a 0-dim tensor; its one element is x.item()")
    (axis,) = normalize_dims(whole_number(dim, "select", "dim", zero_dim_only=True), x._data.ndim, "select")
    size = x._data.shape[axis]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(x._data.shape)} at dimension {axis}")
    return Select.apply(x, (slice(None),) * axis + (index,))


@ember_function
def unbind(input, dim: int = 0) -> tuple:
    """The slices along ``dim``, which each lacks (views).

    >>> ember.tensor([[1, 2], [3, 4]]).unbind(1)
    (tensor([1, 3]), tensor([2, 4]))
    """
    x = require_tensor(input, "unbind")
    if not x._data.ndim:
        raise IndexError(f"unbind(): Dimension specified as {dim} but tensor has no dimensions")
    (axis,) = normalize_dims(dim, x._data.ndim, "unbind()")
    if not x._data.shape[axis]:
        return ()
    return Unbind.apply(x, axis)


@ember_function
def alias(input) -> Tensor:
    return Alias.apply(input)
