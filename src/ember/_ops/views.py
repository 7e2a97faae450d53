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

import math
import warnings

import numpy as np

from ember import _dtype
from ember._ops._support import (
    broadcast_view, ember_function, normalize_dims, require_tensor, user_stacklevel, wrap,
)
from ember._ops.joining import stack
from ember._ops.reduction import summed_to
from ember._tensor import Tensor, version_counter
from ember.autograd.function import Function


_ALL = slice(None)


def view_of(x: Tensor, array: np.ndarray, step: tuple) -> Tensor:
    """Wrap ``array`` (a NumPy view of ``x``'s memory) as a view of ``x``, replayable by ``step``."""
    t = wrap(array)
    if not _shares_memory(array, x._data):
        return t  # NumPy had to copy (reshape of a non-contiguous tensor): not a view
    t._base = x._base if x._base is not None else x
    t._vc = version_counter(x)
    t._view_replay = x._view_replay + (step,)
    t._view_version = t._vc[0]
    if x._of_multiple:
        t._of_multiple = True
    return t


def _shares_memory(array: np.ndarray, data: np.ndarray) -> bool:
    """Whether ``array``, made from ``data`` by a NumPy view operation, is a view of it (not a copy)."""
    owner = array.base  # NumPy points a view at the array that owns the memory
    return owner is data or owner is not None and owner is data.base or not array.size or \
        np.may_share_memory(array, data)


def replay(base: Tensor, steps: tuple) -> Tensor:
    """Recreate a view of ``base`` from its recorded steps."""
    for function, args in steps:
        base = function(base, *args)
    return base


def _shape_arg(op: str, size: tuple) -> tuple:
    """Sizes given as ``f(2, 3)`` or ``f((2, 3))``, as a tuple of ints."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    for s in size:
        if type(s) is not int:
            return _converted_sizes(op, size)
    return size


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
        if known == 0 or numel % known:
            raise RuntimeError(f"{op}: shape '{list(shape)}' is invalid for input of size {numel}")
        shape = tuple(numel // known if s == -1 else s for s in shape)
    if math.prod(shape) != numel:
        raise RuntimeError(f"{op}: shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


class View(Function):
    backward_name = "ViewBackward0"
    backward_on_arrays = True  # reshape is a method of both

    @staticmethod
    def forward(ctx, x, shape):
        data = x._data
        ctx.shape = data.shape
        array = data.reshape(shape)
        if not _shares_memory(array, data):
            raise RuntimeError(
                f"view: view size is not compatible with input tensor's size and stride (at least one dimension spans "
                f"across two contiguous subspaces): input {list(x._data.shape)} to {list(shape)}. "
                "Use .reshape(...) instead."
            )
        return view_of(x, array, (view, (shape,)))

    @staticmethod
    def backward(ctx, grad):
        return grad.reshape(ctx.shape), None


class ReshapeAlias(View):
    backward_name = "ReshapeAliasBackward0"  # torch's name for reshape as a view of a non-contiguous tensor


class ReshapeCopy(View):
    """``reshape`` where the memory layout does not allow a view: a row-major copy."""

    backward_name = "UnsafeViewBackward0"  # torch's name: it copies, then views the copy

    @staticmethod
    def forward(ctx, x, shape):
        ctx.shape = x._data.shape
        return wrap(np.reshape(x._data, shape))


class Transpose(Function):
    backward_name = "TransposeBackward0"
    backward_on_arrays = True  # swapaxes is a method of both

    @staticmethod
    def forward(ctx, x, dim0, dim1):
        ctx.dims = (dim0, dim1)  # non-negative; equal for a 0-d or 1-d t()
        swapped = x._data.swapaxes(dim0, dim1) if x._data.ndim else x._data.view()
        return view_of(x, swapped, (transpose, (dim0, dim1)))

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
        return view_of(x, x._data.T, (t, ()))

    @staticmethod
    def backward(ctx, grad):
        return grad.mT if grad.ndim == 2 else grad


class Permute(Function):
    backward_name = "PermuteBackward0"
    backward_on_arrays = True  # permuted() reorders either

    @staticmethod
    def forward(ctx, x, dims):
        ctx.dims = dims
        return view_of(x, x._data.transpose(dims), (permute, (dims,)))

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


class Expand(Function):
    backward_name = "ExpandBackward0"
    backward_on_arrays = True  # summed_to() sums either

    @staticmethod
    def forward(ctx, x, shape):
        ctx.shape = x._data.shape
        expanded = broadcast_view(x._data, shape)
        if expanded.size == 0:  # no elements, so no overlap: keep it writable as torch does
            expanded = np.lib.stride_tricks.as_strided(x._data, shape, expanded.strides, writeable=True)
        return view_of(x, expanded, (expand, (shape,)))

    @staticmethod
    def backward(ctx, grad):
        return summed_to(grad, ctx.shape), None


class Squeeze(Function):
    backward_name = "SqueezeBackward1"  # one dim given; the subclasses only rename the node as torch does
    backward_on_arrays = True  # reshape is a method of both

    @staticmethod
    def forward(ctx, x, axes):
        ctx.shape = x._data.shape
        return view_of(x, x._data.squeeze(axes), (_squeeze_axes, (axes,)))

    @staticmethod
    def backward(ctx, grad):
        return grad.reshape(ctx.shape), None


class SqueezeAll(Squeeze):
    backward_name = "SqueezeBackward0"  # no dim given


class SqueezeDims(Squeeze):
    backward_name = "SqueezeBackward2"  # a tuple of dims


class Unsqueeze(Function):
    backward_name = "UnsqueezeBackward0"
    backward_on_arrays = True  # squeeze is a method of both

    @staticmethod
    def forward(ctx, x, dim):
        ctx.dim = dim
        return view_of(x, x._data[(_ALL,) * dim + (None,)], (unsqueeze, (dim,)))

    @staticmethod
    def backward(ctx, grad):
        return grad.squeeze(ctx.dim), None


class Alias(Function):
    backward_name = "AliasBackward0"
    backward_on_arrays = True

    @staticmethod
    def forward(ctx, x):
        return view_of(x, x._data.view(), (alias, ()))

    @staticmethod
    def backward(ctx, grad):
        return grad


class Unbind(Function):
    """Every slice of ``axis``, each a view; the gradient stacks theirs back (zeros for those that got none)."""

    backward_name = "UnbindBackward0"

    @staticmethod
    def forward(ctx, x, axis):
        ctx.axis = axis
        lead = (_ALL,) * axis
        # the Ellipsis keeps a 0-d slice a view (NumPy would give a scalar copy of a single element)
        views = tuple(view_of(x, x._data[lead + (i, ...)], (select, (axis, i))) for i in range(x._data.shape[axis]))
        for view in views:
            view._of_multiple = True
        return views

    @staticmethod
    def backward(ctx, *grads):
        return stack(grads, ctx.axis), None


class Index(Function):
    """``x[key]``: a view for basic indexing, a copy for advanced (tensor) indexing."""

    backward_name = "IndexBackward0"

    @staticmethod
    def forward(ctx, x, key):
        ctx.shape = x._data.shape
        ctx.key = key
        array = x._data[key]
        if _is_basic(key):
            if type(array) is not np.ndarray:  # one element: NumPy gives a scalar copy, torch a 0-d view
                array = x._data[(key if isinstance(key, tuple) else (key,)) + (Ellipsis,)]
            return view_of(x, array, (_index, (key,)))
        return wrap(array)

    @staticmethod
    def backward(ctx, grad):
        return IndexAdd.apply(grad, ctx.shape, ctx.key), None


class Select(Index):
    backward_name = "SelectBackward0"


class Slice(Index):
    backward_name = "SliceBackward0"


class IndexUnsqueeze(Index):
    backward_name = "UnsqueezeBackward0"


class IndexAlias(Index):
    backward_name = "AliasBackward0"


def _index_node(key, shape: tuple) -> type:
    """The Index class whose node is named as torch names ``x[key]``: after the last step that does something.

    torch indexes one item at a time; inside a tuple, Ellipsis and slices that keep a whole dim (``x[1, :]``,
    ``x[1, 0::1]``) do nothing. ``key`` is a basic key (``_is_basic``): the callers have checked.
    """
    if type(key) is slice:
        return Slice
    items = key if isinstance(key, tuple) else (key,)
    for position in range(len(items) - 1, -1, -1):
        k = items[position]
        if k is None:
            return IndexUnsqueeze
        if type(k) is int:
            return Select
        if type(k) is slice and k != _ALL and not _whole_dim(k, items, position, shape):
            return Slice
    return IndexAlias


def _dim_of(items: tuple, position: int, ndim: int) -> int:
    """The dim of the tensor that the item at ``position`` of a basic key indexes."""
    after_ellipsis = False
    for k in items[:position]:
        if k is Ellipsis:
            after_ellipsis = True
    if after_ellipsis:  # counted from the end
        return ndim - sum(1 for k in items[position:] if k is not None)
    return sum(1 for k in items[:position] if k is not None)


def _whole_dim(k: slice, items: tuple, position: int, shape: tuple) -> bool:
    """Whether the slice ``k`` at ``position`` of a basic key keeps its dim whole as torch sees it: by its written
    start (0 or none, so ``x[-n:]`` counts as a slice), step 1 and any stop from the end of the dim on."""
    if k.start not in (None, 0) or k.step not in (None, 1):
        return False
    return k.stop is None or k.stop >= shape[_dim_of(items, position, len(shape))]  # the size only when needed


def takes_all(shape: tuple, key) -> bool:
    """Whether a basic key is only ``...`` and slices that keep whole dims: torch's slicing gives the tensor itself."""
    items = key if isinstance(key, tuple) else (key,)
    for position, k in enumerate(items):
        if k is Ellipsis or type(k) is slice and k == _ALL:
            continue
        if type(k) is not slice or not _whole_dim(k, items, position, shape):
            return False
    return True


class IndexAdd(Function):
    """The gradient of indexing: zeros of the input's shape with ``grad`` added at ``key``."""

    backward_name = "IndexPutBackward0"

    @staticmethod
    def forward(ctx, grad, shape, key):
        ctx.key = key
        out = np.zeros(shape, grad._data.dtype)
        if _is_basic(key):
            out[key] += grad._data
        else:
            np.add.at(out, key, grad._data)
        return wrap(out)

    @staticmethod
    def backward(ctx, grad):
        return Index.apply(grad, ctx.key), None, None


class ViewScatter(Function):
    """Write ``value`` into the region of ``base`` that a view covers: an in-place change seen from the base."""

    backward_name = "CopySlices"

    @staticmethod
    def forward(ctx, base, value, steps):
        ctx.steps = steps
        region = replay(base.detach(), steps)._data
        region[...] = value._data
        ctx.mark_dirty(base)
        return base

    @staticmethod
    def backward(ctx, grad):
        grad_value = replay(grad, ctx.steps)
        outside = ViewFill.apply(grad, ctx.steps)
        return outside, grad_value, None


class ViewFill(Function):
    """A copy of ``x`` with zeros in the region of a view (the base's gradient after a view was overwritten)."""

    backward_name = "ViewFillBackward0"

    @staticmethod
    def forward(ctx, x, steps):
        ctx.steps = steps
        out = wrap(np.array(x._data, copy=True))
        replay(out, steps)._data[...] = 0
        return out

    @staticmethod
    def backward(ctx, grad):
        return ViewFill.apply(grad, ctx.steps), None


_BASIC_ITEMS = (int, slice, type(None), type(Ellipsis))


def _is_basic(key) -> bool:
    if not isinstance(key, tuple):
        return isinstance(key, _BASIC_ITEMS)
    for k in key:  # a loop: in Python 3.11 a generator expression costs a function call
        if not isinstance(k, _BASIC_ITEMS):
            return False
    return True


def _index_key(key):
    """Turn tensors in an indexing key into NumPy arrays; reject what cannot index."""
    if type(key) is list and _list_is_a_tuple(key):
        warnings.warn(
            "Using a non-tuple sequence for multidimensional indexing is deprecated; use x[tuple(seq)] instead of "
            "x[seq]. A future version will index with x[ember.tensor(seq)] instead, which will give an error or "
            "a different result.",
            UserWarning, stacklevel=user_stacklevel(),
        )
        key = tuple(key)
    if isinstance(key, tuple):
        return tuple(_index_item(k) for k in key)
    return _index_item(key)


def _list_is_a_tuple(key: list) -> bool:
    """torch's legacy rule: a short list holding a sequence, slice, tensor, None or ... indexes as a tuple would."""
    if len(key) >= 32:
        return False
    for k in key:
        if isinstance(k, (list, tuple, slice, Tensor)) or k is None or k is Ellipsis:
            return True
    return False


def _index_item(k):
    kind = type(k)
    if kind is int or k is None or k is Ellipsis:  # the usual items first, by exact type
        return k
    if kind is slice:
        return _checked_slice(k)
    if isinstance(k, Tensor):
        return _array_index(k._data)
    if isinstance(k, list):
        return _list_index(k)
    if isinstance(k, np.ndarray):
        return _array_index(k)
    if kind is bool:
        return np.asarray(k)  # as torch: a new dim of size 1 (True) or 0 (False), indexed as a tensor would be
    if isinstance(k, (np.integer,)):
        return int(k)
    if isinstance(k, str):
        raise TypeError(f"invalid index {k!r}: a tensor is indexed by position, not by name")
    if not isinstance(k, (int, slice, type(None), type(Ellipsis))):
        raise IndexError(
            "only integers, slices (`:`), ellipsis (`...`), None and long or byte tensors are valid indices "
            f"(got {kind.__module__ + '.' if kind.__module__ == 'numpy' else ''}{kind.__name__})"
        )
    return _checked_slice(k) if type(k) is slice else k


def _array_index(data: np.ndarray) -> "np.ndarray | int":
    """An index tensor's (or NumPy array's) data as NumPy indexes with it; a 0-d integer one selects, as an int.

    As torch: int64 and int32 index, bool is a mask, uint8 a deprecated mask; other dtypes are refused.
    """
    kind, size = data.dtype.kind, data.dtype.itemsize  # (kind and itemsize: comparing dtypes costs more)
    if kind == "i" and size >= 4:
        return data if data.ndim else int(data)
    if kind == "b":
        return data
    if kind == "u" and size == 1:
        warnings.warn(
            "indexing with a uint8 tensor is deprecated: it indexes as a mask, as a bool tensor would; "
            "use a bool tensor instead (index.bool())",
            UserWarning, stacklevel=user_stacklevel(),
        )
        return data.astype(np.bool_)
    raise IndexError(
        f"tensors used as indices must be long, int, byte or bool tensors, got {_dtype.from_numpy_dtype(data.dtype)}; "
        "convert the index first, e.g. index.long()"
    )


def _checked_slice(k: slice) -> slice:
    if k.step is not None and k.step <= 0:
        # NumPy would reverse (a copy): tensors have no negative strides, so torch refuses
        raise ValueError("slice step cannot be zero" if k.step == 0 else
                         "step must be greater than zero; to reverse a dim, index it with a reversed index tensor, "
                         "e.g. x[ember.arange(n - 1, -1, -1)]")
    return k


def _list_index(k: list) -> np.ndarray:
    """A list as an index: as torch, numbers that are not all bools index as int64, floats truncated."""
    index = np.asarray(k)
    if index.dtype.kind != "f":
        return index
    with np.errstate(invalid="ignore"):
        if not (np.abs(index) < 2.0 ** 63).all():  # nan fails this too
            raise RuntimeError("value cannot be converted to type int64 without overflow")
    return index.astype(np.int64)


def checked_key(x: Tensor, key):
    """``key`` as NumPy indexes with it (see ``_index_key``), its ints checked against ``x``'s shape."""
    key = _index_key(key)
    return _check_bounds(x, key)


def _check_bounds(x: Tensor, key):
    """Check the ints of ``key`` against ``x``'s shape; returns ``key`` (with one ``...`` at most)."""
    items = key if isinstance(key, tuple) else (key,)
    dim = 0
    ellipsis = False
    for position, k in enumerate(items):
        if k is None:
            continue
        if k is Ellipsis:
            if ellipsis:
                return _check_bounds(x, _without_later_ellipses(items, position))
            ellipsis = True
            taken = sum(_dims_taken(i) for i in items if i is not None and i is not Ellipsis)
            if taken > x._data.ndim:
                raise IndexError(f"too many indices for tensor of dimension {x._data.ndim}")
            dim += x._data.ndim - taken
            continue
        if type(k) is int:  # _index_item made NumPy ints ints, and bools arrays
            if x._data.ndim <= dim:
                raise IndexError(f"too many indices for tensor of dimension {x._data.ndim}" if x._data.ndim else
                                 "invalid index of a 0-dim tensor; use tensor.item() to convert it to a number")
            size = x._data.shape[dim]
            if not -size <= k < size:
                raise IndexError(f"index {k} is out of bounds for dimension {dim} with size {size}")
        elif type(k) is np.ndarray:
            dim += _dims_taken(k)
            continue
        dim += 1
    if dim > x._data.ndim:  # slices beyond the last dim (ints were checked above)
        raise IndexError(f"too many indices for tensor of dimension {x._data.ndim}")
    return key


def _dims_taken(k) -> int:
    """How many dims of the indexed tensor an item of a key takes (a bool mask, as many as it has)."""
    return k.ndim if type(k) is np.ndarray and k.dtype.kind == "b" else 1


def _without_later_ellipses(items: tuple, second: int) -> tuple:
    """torch's reading of a key with several ``...``: the first takes the dims, a later one none, so nothing but
    None may follow it (NumPy refuses every key with two)."""
    for k in items[second:]:
        if k is not None and k is not Ellipsis:
            raise IndexError("an index can only have a single ellipsis ('...'), unless only None follows the others")
    return items[:second] + tuple(k for k in items[second:] if k is None)


def basic_part(x: Tensor, key: tuple) -> tuple:
    """Split an advanced ``key`` as torch applies it: ``(view, rest)``, ``x[key]`` being ``view[rest]``.

    torch first applies the ints, slices, None and bools of a key (a view of ``x``, or ``x`` itself when they
    take every dim whole), then indexes that with the tensors. It matters where NumPy would differ: an int
    among index tensors is an index tensor for NumPy, so ``x[:, idx, :, 0]`` would move idx's dims to the front.
    ``rest`` is not checked here: NumPy checks it as it indexes, and ``explained_rest`` words what it refuses.
    """
    if type(key) is np.ndarray and key.ndim:  # x[index], the usual advanced key: nothing to split
        return x, (key,)
    view_key, rest = _split(key)
    if takes_all(x._data.shape, view_key):
        return x, rest
    return _index_node(view_key, x._data.shape).apply(x, view_key), rest


def _split(key) -> tuple:
    """``(view_key, rest)`` of ``basic_part``: the basic items, and what indexes the view they make."""
    view_key, rest = [], []
    for k in key if isinstance(key, tuple) else (key,):
        if type(k) is not np.ndarray:
            view_key.append(k)
            if type(k) is not int:  # an int's dim is gone from the view
                rest.append(k if k is Ellipsis else _ALL)
        elif k.ndim == 0:  # a bool: a new dim, which an index of size 1 (True) or 0 (False) then indexes
            view_key.append(None)
            rest.append(np.zeros(1 if k else 0, np.int64))
        else:
            view_key.extend((_ALL,) * (k.ndim if k.dtype.kind == "b" else 1))
            rest.append(k)
    return tuple(view_key), tuple(rest)


def explained_rest(x: Tensor, key) -> tuple:
    """After NumPy refused ``basic_part(x, key)``'s rest: torch's error for it, in torch's words; or, when the
    result is empty (torch then reads no index, so none is out of bounds), the rest with its indices zeroed."""
    view_key, rest = _split(key)
    return _check_advanced(x._data.shape, list(view_key), rest)


def _check_advanced(shape: tuple, view_key: list, rest: tuple) -> tuple:
    """The errors of indexing with tensors, in torch's words (NumPy's name axes and array shapes); returns ``rest``,
    with any index tensor zeroed when the result is empty."""
    consumed = sum(1 for k in view_key if k is not None and k is not Ellipsis)
    if consumed > len(shape):
        raise IndexError(f"too many indices for tensor of dimension {len(shape)}")
    view_shape = list(shape)  # the dims the rest indexes: the view's, without the ints' and with the bools' new ones
    dim = 0
    for k in view_key:
        if k is Ellipsis:
            dim += len(shape) - consumed
        elif k is None:
            view_shape.insert(dim, 1)
            dim += 1
        elif type(k) is int:
            del view_shape[dim]
        else:
            view_shape[dim] = len(range(*k.indices(view_shape[dim])))
            dim += 1
    dim, shapes, indices = 0, [], []
    for k in rest:
        if k is Ellipsis:
            dim += len(view_shape) - sum(1 if type(i) is not np.ndarray or i.dtype.kind != "b" else i.ndim
                                         for i in rest if i is not Ellipsis)
        elif type(k) is not np.ndarray:
            dim += 1
        elif k.dtype.kind == "b":
            _check_mask(k, view_shape, dim)
            shapes.append([int(k.sum())])
            dim += k.ndim
        else:
            indices.append((k, view_shape[dim], dim))
            shapes.append(list(k.shape))
            dim += 1
    try:
        result_shape = np.broadcast_shapes(*shapes)
    except ValueError:
        raise IndexError("shape mismatch: indexing tensors could not be broadcast together with shapes "
                         + ", ".join(str(s) for s in shapes)) from None
    indexed = {dim for _, _, dim in indices}
    others = math.prod(size for dim, size in enumerate(view_shape) if dim not in indexed)
    if math.prod(result_shape) and others:
        for index, size, dim in indices:
            _check_index_bounds(index, size, dim)
        return rest
    # as torch: an empty result reads no index, so none is out of bounds (NumPy checks them all: give it zeros)
    return tuple(np.zeros_like(k) if type(k) is np.ndarray and k.dtype.kind != "b" else k for k in rest)


def _check_mask(mask: np.ndarray, shape: list, dim: int) -> None:
    for i, size in enumerate(mask.shape):
        if size != shape[dim + i]:
            raise IndexError(
                f"The shape of the mask {list(mask.shape)} at index {i} does not match the shape of the indexed "
                f"tensor {shape} at index {dim + i}"
            )


def _check_index_bounds(index: np.ndarray, size: int, dim: int) -> None:
    if index.size and not (-size <= index.min() and index.max() < size):
        bad = index[(index < -size) | (index >= size)].flat[0]
        raise IndexError(f"index {bad} is out of bounds for dimension {dim} with size {size}")


def _index(input, key) -> Tensor:
    return Index.apply(input, key)


def _squeeze_axes(input, axes) -> Tensor:
    return Squeeze.apply(input, axes)


@ember_function
def view(input, *shape) -> Tensor:
    """The same memory with another shape (one dim may be -1); fails where a copy would be needed."""
    x = require_tensor(input, "view")
    target = _infer_shape("view", _shape_arg("view", shape), x._data.size, x._data.shape)
    return View.apply(x, target)


@ember_function
def reshape(input, *shape) -> Tensor:
    """Another shape: a view when the memory allows, else a copy."""
    x = require_tensor(input, "reshape")
    target = _infer_shape("reshape", _shape_arg("reshape", shape), x._data.size, x._data.shape)
    try:
        return (View if x._data.flags.c_contiguous else ReshapeAlias).apply(x, target)
    except RuntimeError:  # the memory layout allows no view
        return ReshapeCopy.apply(x, target)


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


swapaxes = swapdims = transpose


@ember_function
def t(input) -> Tensor:
    """Transpose a tensor of at most 2 dims."""
    x = require_tensor(input, "t")
    if x._data.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {x._data.ndim}D")
    return MatrixTranspose.apply(x)


@ember_function
def permute(input, *dims) -> Tensor:
    """Reorder the dimensions (a view)."""
    x = require_tensor(input, "permute")
    if not dims:
        raise TypeError("permute(): missing the dims (e.g. x.permute(1, 0)); pass () for a 0-d tensor")
    dims = _shape_arg("permute", dims)
    if len(dims) != x._data.ndim:
        raise RuntimeError(
            f"permute(): number of dimensions in the tensor input does not match the length of the desired ordering "
            f"of dimensions i.e. input.dim() = {x._data.ndim} is not equal to len(dims) = {len(dims)}; pass a "
            f"reordering such as {list(range(x._data.ndim))[::-1]}"
        )
    order = normalize_dims(dims, x._data.ndim, "permute")
    if sorted(order) != list(range(x._data.ndim)):
        raise RuntimeError(
            f"permute: expected one dim per dimension of the input ({x._data.ndim}), got {len(order)}: "
            f"{list(order)}; pass a reordering such as {list(range(x._data.ndim))[::-1]}"
            if len(order) != x._data.ndim else f"permute(): duplicate dims are not allowed: {list(dims)}"
        )
    return Permute.apply(x, order)


@ember_function
def expand(input, *sizes) -> Tensor:
    """Broadcast to ``sizes`` without copying (-1 keeps a dim)."""
    x = require_tensor(input, "expand")
    target = _expanded_shape(x._data.shape, _shape_arg("expand", sizes))
    return Expand.apply(x, target)


def _expanded_shape(shape: tuple, sizes: tuple) -> tuple:
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
    dims = normalize_dims(dim, x._data.ndim, "squeeze")
    axes = tuple(d for d in dims if x._data.ndim and x._data.shape[d] == 1)
    node = SqueezeAll if dim is None else Squeeze if isinstance(dim, int) else SqueezeDims
    return node.apply(x, axes)


@ember_function
def unsqueeze(input, dim: int) -> Tensor:
    """Insert a dim of size 1 at ``dim``."""
    x = require_tensor(input, "unsqueeze")
    (axis,) = normalize_dims(dim, x._data.ndim + 1, "unsqueeze")
    return Unsqueeze.apply(x, axis)


@ember_function
def narrow(input, dim: int, start: int, length: int) -> Tensor:
    """``length`` entries of ``dim`` from ``start`` (a view)."""
    x = require_tensor(input, "narrow")
    (axis,) = normalize_dims(dim, x._data.ndim, "narrow")
    size = x._data.shape[axis]
    if not -size <= start <= size:
        raise IndexError(f"narrow(): start out of range (expected to be in range of [{-size}, {size}], but got {start})")
    start = start + size if start < 0 else start
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if start + length > size:
        raise RuntimeError(f"narrow(): start ({start}) + length ({length}) exceeds dimension size ({size}).")
    key = (slice(None),) * axis + (slice(start, start + length),)
    return Slice.apply(x, key)


@ember_function
def select(input, dim: int, index: int) -> Tensor:
    """The slice at ``index`` of ``dim``, which is removed (a view)."""
    x = require_tensor(input, "select")
    (axis,) = normalize_dims(dim, x._data.ndim, "select")
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


def getitem(input: Tensor, key) -> Tensor:
    """``input[key]`` with PyTorch's indexing rules (NumPy's, for the cases ember supports)."""
    if type(key) is int:  # x[i], the commonest key: nothing to convert, and always a Select
        shape = input._data.shape
        if not shape or not -shape[0] <= key < shape[0]:
            _check_bounds(input, key)  # raises, in torch's words
        return Select.apply(input, key)
    key = checked_key(input, key)
    if _is_basic(key):
        return _index_node(key, input._data.shape).apply(input, key)
    source, advanced = basic_part(input, key)
    try:
        return Index.apply(source, advanced)
    except IndexError:  # NumPy's words: torch's instead (or, for an empty result, no error)
        return Index.apply(source, explained_rest(input, key))
