"""Indexing: ``x[key]`` with PyTorch's rules, the gradient of indexing, and the checks of a key.

Basic keys (ints, slices, None, ``...``) give views; index tensors, lists and
masks give copies. A key mixing both is applied as torch applies it: the basic
items first (a view), then the tensors.

>>> import ember
>>> x = ember.arange(6.).view(2, 3)
>>> x[1, ::2], x[:, ember.tensor([2, 0])]
(tensor([3., 5.]), tensor([[2., 0.],
        [5., 3.]]))
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from ember import _dtype
from ember._ops._jvp import linear_jvp
from ember._ops._quiet import IGNORE_INVALID, quietly
from ember._ops._support import row_major, sharing_view_of, user_stacklevel, wrap
from ember._tensor import Tensor
from ember.autograd.function import Function

_ALL = slice(None)


class Index(Function):
    """``x[key]``: a view for basic indexing, a copy for advanced (tensor) indexing."""

    backward_name = "IndexBackward0"
    backward_on_arrays = True  # on arrays, the gradient is IndexAdd's computation, done at once
    jvp = linear_jvp(0)

    @staticmethod
    def forward(ctx, x, key):
        data = x._data
        if ctx.needs_input_grad[0]:  # what backward reads: when nothing is recorded, no shape tuple is made
            ctx.shape = data.shape
            ctx.key = key
        replay = _VIEW_APPLY.get(type(ctx))  # the nodes named after torch's views, given basic keys only
        if replay is None:
            if not _is_basic(key):
                if ctx.needs_input_grad[0]:
                    # torch saves the indices, so a second backward without retain_graph raises, as it does there
                    ctx.save_for_backward(key)
                return wrap(_advanced(data, key))
            replay = ctx._forward_cls.apply
        array = data[key]
        if type(array) is not np.ndarray:  # one element: NumPy gives a scalar copy, torch a 0-d view
            array = data[(key if isinstance(key, tuple) else (key,)) + (Ellipsis,)]
        # replayed by the same class, so that a view remade after an in-place change keeps its node's name
        return sharing_view_of(x, array, (replay, (key,)))

    @staticmethod
    def backward(ctx, grad):
        saved = ctx.saved_tensors  # the advanced key, or nothing for a view
        key = saved[0] if saved else ctx.key
        if type(grad) is np.ndarray:
            return _added_at(grad, ctx.shape, key), None
        return IndexAdd.apply(grad, ctx.shape, key), None


def _advanced(data: np.ndarray, key) -> np.ndarray:
    """``data[key]`` for a key with index arrays, row-major as torch's result is (code such as
    ``x[:, idx].view(-1)`` relies on it); NumPy lays out ``x[:, idx]`` with the index's dims outermost in memory.

    One integer index after whole dims (``x[:, idx]``) is taken along its dim: row-major at once, a third quicker
    than indexing and copying.
    """
    if type(key) is tuple and key:
        index = key[-1]
        if type(index) is np.ndarray and index.dtype.kind == "i" and index.ndim == 1 and len(key) <= data.ndim:
            for k in key[:-1]:
                if type(k) is not slice or k != _ALL:
                    break
            else:
                return data.take(index, len(key) - 1)
    return row_major(data[key])


class Select(Index):
    backward_name = "SelectBackward0"
    torch_saved_values = {"dim": lambda node: _selected_dim(node.key, len(node.shape)),
                          "index": lambda node: node.key[-1] if type(node.key) is tuple else node.key,
                          "self_sym_sizes": "shape"}


def _selected_dim(key, ndim: int) -> int:
    """The dim that a select's key (``i``, ``(:, :, i)`` or ``(..., i)``) takes its index along."""
    key = key if type(key) is tuple else (key,)
    return ndim - 1 if key[0] is Ellipsis else len(key) - 1


class Slice(Index):
    backward_name = "SliceBackward0"


class IndexUnsqueeze(Index):
    backward_name = "UnsqueezeBackward0"


class IndexAlias(Index):
    backward_name = "AliasBackward0"


# Bound once: Python 3.11 makes a new bound method at every ``Select.apply`` it reads
_APPLY_OF = {node: node.apply for node in (Select, Slice, IndexUnsqueeze, IndexAlias)}
_select, _slice = _APPLY_OF[Select], _APPLY_OF[Slice]
_VIEW_APPLY = {node._backward_cls: apply for node, apply in _APPLY_OF.items()}  # by the type of a call's ctx


def _index_node(key, shape: tuple) -> type:
    """The Index class whose node is named as torch names ``x[key]``: after the last step that does something.

    torch indexes one item at a time; inside a tuple, Ellipsis and slices that keep a whole dim (``x[1, :]``,
    ``x[1, 0::1]``) do nothing. ``key`` is a basic key (``_is_basic``): the callers have checked.
    """
    if type(key) is slice:
        return Slice
    return _plain_basic_node(key if type(key) is tuple else (key,), shape)


def _plain_basic_node(items: tuple, shape: tuple) -> "type | None":
    """The Index class of ``x[items]`` (see ``_index_node``) if ``items`` holds only ints within ``shape``, None,
    one ``...`` and slices of positive steps, which NumPy takes as they are; else None, for the general path.

    One pass: each item's dim is known as it is reached (after ``...``, counted from the end).
    """
    node, dim, ndim, ellipsis = IndexAlias, 0, len(shape), False
    for k in items:
        kind = type(k)
        if kind is slice:
            step = k.step
            if step is not None and not step > 0 or dim >= ndim:
                return None
            # (not ``k != _ALL``: comparing slices builds two tuples, and ``:`` is rarely _ALL itself)
            if not (k.start in (None, 0) and step in (None, 1) and (k.stop is None or k.stop >= shape[dim])):
                node = Slice
            dim += 1
        elif kind is int:
            if dim >= ndim or not -shape[dim] <= k < shape[dim]:
                return None
            node = Select
            dim += 1
        elif k is None:
            node = IndexUnsqueeze
        elif k is Ellipsis and not ellipsis:
            ellipsis = True
            # the dims that the items after it take, counted from the end: of the items that take a dim, those
            # before it took ``dim`` (a second ``...``, counted here too, is refused below in any case)
            after = ndim - (len(items) - items.count(None) - 1 - dim)
            if after < dim:  # more items than dims
                return None
            dim = after
        else:
            return None
    return node


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
        return wrap(_added_at(grad._data, shape, key))

    @staticmethod
    def backward(ctx, grad):
        return Index.apply(grad, ctx.key), None, None


def _added_at(grad: np.ndarray, shape: tuple, key) -> np.ndarray:
    """Zeros of ``shape`` with ``grad`` added at ``key`` (each repeated place of an advanced key adds each value)."""
    out = np.zeros(shape, grad.dtype)
    if _is_basic(key):
        out[key] += grad
    else:
        np.add.at(out, key, grad)
    return out


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
    if isinstance(k, (tuple, range)):  # as torch, any sequence inside a key indexes as a list would
        return _list_index(list(k))
    if isinstance(k, np.ndarray):
        return _numpy_index(k)
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
    kind = _dtype.kind(index.dtype)
    if kind == "c":  # torch reads each number as an int, which a complex is not
        raise TypeError("'complex' object cannot be interpreted as an integer")
    return _truncated(index) if kind == "f" else index


def _numpy_index(k: np.ndarray) -> "np.ndarray | int":
    """A NumPy array as an index. torch reads it as it reads a list, not as a tensor: bool (and, deprecated,
    uint8) is a mask, and any other number type indexes as int64 (floats truncated, complex by the real part)."""
    kind = k.dtype.kind
    if kind == "b" or k.dtype == np.uint8 or kind not in "iufc":  # (what is not a number: refused, in words)
        return _array_index(k)
    if kind == "c":
        k = k.real
    return _array_index(_truncated(k) if kind in "fc" else k.astype(np.int64, copy=False))


def _truncated(index: np.ndarray) -> np.ndarray:
    """Float indices as int64, truncated; refused if one does not fit."""
    if not quietly(IGNORE_INVALID, np.less, np.abs(index), 2.0 ** 63).all():  # nan fails this too
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


def getitem(input: Tensor, key) -> Tensor:
    """``input[key]`` with PyTorch's indexing rules (NumPy's, for the cases ember supports)."""
    if type(key) is int:  # x[i], the commonest key: nothing to convert, and always a Select
        try:
            return _select(input, key)
        except IndexError:  # NumPy's words (out of bounds, or a 0-d tensor): torch's instead
            _check_bounds(input, key)
            raise
    if type(key) is tuple:  # x[:, 1:3], x[0, 1], x[..., 0]: nothing to convert
        node = _plain_basic_node(key, input._data.shape)
        if node is not None:
            return _APPLY_OF[node](input, key)
    elif type(key) is slice:  # x[1:3]; as torch, a lone slice is a Slice even when it keeps all
        step = key.step
        if (step is None or step > 0) and input._data.ndim:  # (what _plain_basic_node asks of a lone slice)
            return _slice(input, key)
    key = checked_key(input, key)
    if _is_basic(key):
        return _index_node(key, input._data.shape).apply(input, key)
    source, advanced = basic_part(input, key)
    try:
        return Index.apply(source, advanced)
    except IndexError:  # NumPy's words: torch's instead (or, for an empty result, no error)
        return Index.apply(source, explained_rest(input, key))
