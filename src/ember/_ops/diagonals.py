"""Triangles, diagonals and strided views: ``tril``/``triu`` and their indices, ``diag``, ``diagonal``,
``diag_embed``, ``diagflat``, ``as_strided`` and ``Tensor.unfold``.

``diagonal``, ``as_strided`` and ``unfold`` are views: writes through them reach their base.

>>> import ember
>>> x = ember.zeros(3, 3)
>>> x.diagonal().fill_(1.)
tensor([1., 1., 1.])
>>> bool((x == ember.eye(3)).all())
True
"""
from __future__ import annotations

import numpy as np

from ember import _dtype
from ember._ops._support import ember_function, normalize_dims, require_tensor, view_of, wrap
from ember._ops.inplace import apply_inplace
from ember._ops.copy import _channels_order, _check_format, contiguous_format, preserve_format, suggested_format
from ember._ops.out import into_out_of_its_dtype
from ember._ops.products import Diagonal, _diagonal_array  # the diagonal view, shared with linalg.diagonal
from ember._ops.shaping import _restrided
from ember._ops.views import _shape_arg, reshape
from ember._tensor import Tensor, version_counter
from ember.autograd.function import Function

# ----------------------------------------------------------------- triangles


class Tril(Function):
    """The lower triangle of the last two dims; the gradient is the same triangle of the output's."""

    backward_name = "TrilBackward0"
    torch_saved_values = {"diagonal": "k"}
    part = staticmethod(np.tril)

    @staticmethod
    def forward(ctx, x, k):
        ctx.k = k
        return wrap(np.asarray(ctx._forward_cls.part(x._data, k), order="C"))  # NumPy keeps x's layout, torch does not

    @staticmethod
    def backward(ctx, grad):
        return ctx._forward_cls.apply(grad, ctx.k), None


class Triu(Tril):
    backward_name = "TriuBackward0"
    torch_saved_values = {"diagonal": "k"}
    part = staticmethod(np.triu)


def _triangle(op: str, node: type, input, diagonal: int, out) -> Tensor:
    x = require_tensor(input, op)
    if x._data.ndim < 2:
        raise RuntimeError(f"{op}: input tensor must have at least 2 dimensions (got {x._data.ndim})")
    result = node.apply(x, int(diagonal))
    return result if out is None else into_out_of_its_dtype(op, result, out, x)


@ember_function
def tril(input, diagonal: int = 0, *, out: Tensor | None = None) -> Tensor:
    """A copy with the elements above the ``diagonal``-th diagonal of the last two dims set to zero.

    >>> ember.ones(2, 3).tril()
    tensor([[1., 0., 0.],
            [1., 1., 0.]])
    """
    return _triangle("tril", Tril, input, diagonal, out)


@ember_function
def triu(input, diagonal: int = 0, *, out: Tensor | None = None) -> Tensor:
    """A copy with the elements below the ``diagonal``-th diagonal of the last two dims set to zero.

    >>> ember.ones(2, 3).triu(1)
    tensor([[0., 1., 1.],
            [0., 0., 1.]])
    """
    return _triangle("triu", Triu, input, diagonal, out)


def _triangle_indices(op: str, indices, row: int, col: int, offset: int, dtype) -> Tensor:
    for name, n in (("row", row), ("col", col)):
        if n < 0:
            raise RuntimeError(f"{op}: {name} must be non-negative, got{n}")
    target = _dtype.int64 if dtype is None else dtype
    if target not in (_dtype.int64, _dtype.int32):
        raise NotImplementedError(f"\"{op}\" not implemented for '{target}'; pass dtype=ember.int64 or ember.int32")
    rows, cols = indices(row, offset, col)
    return wrap(np.stack([rows, cols]).astype(target.np).reshape(2, -1))


@ember_function
def tril_indices(row: int, col: int, offset: int = 0, *, dtype=None, device=None, layout=None) -> Tensor:
    """The [2, N] row and column indices of the lower triangle of a ``row`` x ``col`` matrix, row by row.

    >>> ember.tril_indices(2, 2)
    tensor([[0, 1, 1],
            [0, 0, 1]])
    """
    return _triangle_indices("tril_indices", np.tril_indices, row, col, offset, dtype)


@ember_function
def triu_indices(row: int, col: int, offset: int = 0, *, dtype=None, device=None, layout=None) -> Tensor:
    """The [2, N] row and column indices of the upper triangle of a ``row`` x ``col`` matrix, row by row.

    >>> ember.triu_indices(2, 2)
    tensor([[0, 0, 1],
            [0, 1, 1]])
    """
    return _triangle_indices("triu_indices", np.triu_indices, row, col, offset, dtype)


# ----------------------------------------------------------------- diagonals


class DiagonalCopy(Function):
    """A copy of a diagonal (``diag`` of a matrix); the gradient puts it back on a diagonal of zeros."""

    backward_name = "DiagonalBackward0_copy"

    @staticmethod
    def forward(ctx, x, offset, dim1, dim2):
        ctx.shape, ctx.dims = x._data.shape, (offset, dim1, dim2)
        return wrap(np.diagonal(x._data, offset, dim1, dim2).copy())

    @staticmethod
    def backward(ctx, grad):
        return DiagEmbed.apply(grad, ctx.shape, *ctx.dims), None, None, None


class DiagEmbed(Function):
    """Zeros of ``shape`` with ``x`` on a diagonal: ``diag_embed``, and the gradient of taking a diagonal."""

    backward_name = "DiagEmbedBackward0"

    @staticmethod
    def forward(ctx, x, shape, offset, dim1, dim2):
        ctx.dims = (offset, dim1, dim2)
        out = np.zeros(shape, x._data.dtype)
        _diagonal_array(out, offset, dim1, dim2)[...] = x._data
        return wrap(out)

    @staticmethod
    def backward(ctx, grad):
        return DiagonalCopy.apply(grad, *ctx.dims), None, None, None, None


def _distinct(op: str, dim1: int, dim2: int, ndim: int) -> tuple:
    d1, d2 = normalize_dims((dim1, dim2), ndim, op)
    if d1 == d2:
        raise RuntimeError(f"{op}: diagonal dimensions cannot be identical {dim1}, {dim2}")
    return d1, d2


@ember_function
def diagonal(input, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """The ``offset``-th diagonal of the plane ``dim1``, ``dim2``, as a new last dim (a view).

    >>> ember.arange(6.).view(2, 3).diagonal(1)
    tensor([1., 5.])
    """
    x = require_tensor(input, "diagonal")
    return Diagonal.apply(x, offset, *_distinct("diagonal", dim1, dim2, x._data.ndim))


def _embedded_shape(shape: tuple, offset: int, d1: int, d2: int) -> tuple:
    n = (shape[-1] if shape else 1) + abs(offset)
    result = list(shape[:-1])
    for position in sorted((d1, d2)):
        result.insert(position, n)
    return tuple(result)


@ember_function
def diag_embed(input, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """A tensor whose ``offset``-th diagonals (in the plane ``dim1``, ``dim2``) hold the last dim of ``input``,
    zeros elsewhere.

    >>> ember.diag_embed(ember.tensor([1, 2]))
    tensor([[1, 0],
            [0, 2]])
    """
    x = require_tensor(input, "diag_embed")
    d1, d2 = _distinct("diag_embed", dim1, dim2, x._data.ndim + 1)
    return DiagEmbed.apply(x, _embedded_shape(x._data.shape, offset, d1, d2), offset, d1, d2)


@ember_function
def diag(input, diagonal: int = 0, *, out: Tensor | None = None) -> Tensor:
    """A vector's square matrix with it on the ``diagonal``-th diagonal; or a matrix's diagonal, copied.

    >>> ember.diag(ember.tensor([1, 2]), 1)
    tensor([[0, 1, 0],
            [0, 0, 2],
            [0, 0, 0]])
    """
    x = require_tensor(input, "diag")
    ndim = x._data.ndim
    if ndim == 1:
        result = DiagEmbed.apply(x, _embedded_shape(x._data.shape, diagonal, 0, 1), diagonal, 0, 1)
    elif ndim == 2:
        result = DiagonalCopy.apply(x, diagonal, 0, 1)
    else:
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {ndim}D")
    return result if out is None else into_out_of_its_dtype("diag", result, out, x)


@ember_function
def diagflat(input, offset: int = 0) -> Tensor:
    """The flattened ``input`` on the ``offset``-th diagonal of a square matrix.

    >>> ember.diagflat(ember.tensor([[1, 2]]))
    tensor([[1, 0],
            [0, 2]])
    """
    x = reshape(require_tensor(input, "diagflat"), -1)
    return DiagEmbed.apply(x, _embedded_shape(x._data.shape, offset, 0, 1), offset, 0, 1)


# ----------------------------------------------------------------- strided views


def _memory_owner(data: np.ndarray) -> np.ndarray:
    """The array that owns ``data``'s memory: the storage that storage offsets and as_strided count in."""
    owner = data
    while isinstance(owner.base, np.ndarray):
        owner = owner.base
    return owner


def _strided(data: np.ndarray, shape: tuple, strides: tuple, offset: int) -> np.ndarray:
    """A view of the memory that owns ``data``: ``shape``, element ``strides``, ``offset`` elements from its start.

    Made on the owner, so that the view's storage offset counts from the owner's start, as its base's does.
    """
    owner = _memory_owner(data)
    itemsize = data.itemsize
    strides = tuple(s * itemsize for s in strides)
    try:
        view = np.ndarray(shape, data.dtype, buffer=owner, offset=offset * itemsize, strides=strides)
    except (TypeError, ValueError, BufferError):  # an owner whose memory is not one block: through NumPy's tricks
        start = owner.reshape(-1)[offset:] if owner.flags.forc else data
        view = np.lib.stride_tricks.as_strided(start, shape, strides, writeable=owner.flags.writeable)
    if not data.flags.writeable:
        view.flags.writeable = False
    return view


def _element_offset(data: np.ndarray) -> int:
    owner = _memory_owner(data)
    return (data.__array_interface__["data"][0] - owner.__array_interface__["data"][0]) // data.itemsize


def _storage_indices(shape: tuple, strides: tuple, offset: int) -> np.ndarray:
    """For each element of a strided view, its position in the storage."""
    index = np.full(shape, offset, np.int64)
    for axis, (n, stride) in enumerate(zip(shape, strides)):
        index += (np.arange(n) * stride).reshape((n,) + (1,) * (len(shape) - axis - 1))
    return index


class AsStrided(Function):
    backward_name = "AsStridedBackward0"

    @staticmethod
    def forward(ctx, x, size, stride, offset):
        data = x._data
        if ctx.needs_input_grad[0]:  # where each element of the input and of the view sits in the memory
            ctx.positions = (_storage_indices(data.shape, _element_strides(data), _element_offset(data)),
                             _storage_indices(size, stride, offset), _memory_owner(data).size)
        return view_of(x, _strided(data, size, stride, offset), (as_strided, (size, stride, offset)))

    @staticmethod
    def backward(ctx, grad):
        inputs, outputs, length = ctx.positions
        return StorageGather.apply(grad, outputs, inputs, length), None, None, None


def _element_strides(data: np.ndarray) -> tuple:
    return tuple(s // data.itemsize for s in data.strides)


class StorageGather(Function):
    """Values laid at storage positions ``source`` (summed where they meet), read back at positions ``target``:
    the gradient of as_strided, and (with the positions swapped) its own gradient."""

    backward_name = "AsStridedBackwardBackward0"

    @staticmethod
    def forward(ctx, values, source, target, length):
        ctx.positions = (source, target, length)
        storage = np.zeros(length, values._data.dtype)
        np.add.at(storage, source.reshape(-1), values._data.reshape(-1))
        return wrap(storage[target])

    @staticmethod
    def backward(ctx, grad):
        source, target, length = ctx.positions
        return StorageGather.apply(grad, target, source, length), None, None, None


@ember_function
def as_strided(input, size, stride, storage_offset: int | None = None) -> Tensor:
    """A view of ``input``'s memory with the given ``size``, element ``stride`` and ``storage_offset``
    (by default ``input``'s own), counted from the start of the memory.

    >>> ember.arange(6.).as_strided((2, 2), (1, 2))
    tensor([[0., 2.],
            [1., 3.]])
    """
    x = require_tensor(input, "as_strided")
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    offset = _element_offset(x._data) if storage_offset is None else int(storage_offset)
    _check_strided(size, stride, offset, x._data)
    return AsStrided.apply(x, size, stride, offset)


def _check_strided(size: tuple, stride: tuple, offset: int, data: np.ndarray) -> None:
    if len(size) != len(stride):
        raise RuntimeError(f"as_strided: mismatch in length of strides and shape ({len(stride)} strides for "
                           f"{len(size)} sizes)")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got strides: {list(stride)}")
    if any(n < 0 for n in size):
        raise RuntimeError(f"as_strided: Storage size calculation overflowed with sizes={list(size)} and "
                           f"strides={list(stride)} (a size is negative)")
    if offset < 0:
        raise RuntimeError(f"as_strided: Tensor: invalid storage offset {offset}")
    needed = 0 if 0 in size else offset + 1 + sum((n - 1) * s for n, s in zip(size, stride))
    available = _memory_owner(data).size
    if needed > available:
        item = data.itemsize
        raise RuntimeError(
            f"as_strided: setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, and "
            f"itemsize {item} requiring a storage size of {needed * item} are out of bounds for storage of size "
            f"{available * item}"
        )


class Unfold(Function):
    """Windows of ``size`` every ``step`` along ``axis``, as a new last dim (a view)."""

    backward_name = "UnfoldBackward0"

    @staticmethod
    def forward(ctx, x, axis, size, step):
        data = x._data
        ctx.shape, ctx.window = data.shape, (axis, size, step)
        step_back = (_unfolded, (axis, size, step))
        if not data.ndim:  # as torch: a 0-d tensor is one window of its one element
            return view_of(x, _strided(data, (size,), (0,), _element_offset(data)), step_back)
        shape, strides = list(data.shape), list(_element_strides(data))
        shape[axis] = (shape[axis] - size) // step + 1
        shape.append(size)
        strides.append(strides[axis])
        strides[axis] *= step
        array = _strided(data, tuple(shape), tuple(strides), _element_offset(data))
        return view_of(x, array, step_back)

    @staticmethod
    def backward(ctx, grad):
        return WindowSum.apply(grad, ctx.shape, *ctx.window), None, None, None


class WindowSum(Function):
    """Each window of ``grad`` added back where it came from: the gradient of unfold."""

    backward_name = "UnfoldBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, shape, axis, size, step):
        ctx.window = (axis, size, step)
        windows = grad._data
        if not shape:
            return wrap(windows.sum(dtype=windows.dtype).reshape(()))
        out = np.zeros(shape, windows.dtype)
        count, lead = windows.shape[axis], (slice(None),) * axis
        for j in range(size):  # the j-th element of every window at once
            out[lead + (slice(j, j + step * (count - 1) + 1, step),)] += windows[..., j]
        return wrap(out)

    @staticmethod
    def backward(ctx, grad):
        return Unfold.apply(grad, *ctx.window).contiguous(), None, None, None, None


def _unfolded(input: Tensor, axis: int, size: int, step: int) -> Tensor:
    return Unfold.apply(input, axis, size, step)


def unfold(self, dimension: int, size: int, step: int) -> Tensor:
    """``Tensor.unfold``: the windows of ``size`` elements, every ``step``, along ``dimension``, as a new last dim.

    >>> ember.arange(5.).unfold(0, 2, 2)
    tensor([[0., 1.],
            [2., 3.]])
    """
    x = require_tensor(self, "unfold")
    (axis,) = normalize_dims(dimension, x._data.ndim, "unfold")
    length = x._data.shape[axis] if x._data.ndim else 1
    if size < 0:
        raise RuntimeError(f"unfold: size is {size} but must be >= 0")
    if size > length:
        raise RuntimeError(f"unfold: maximum size for tensor at dimension {axis} is {length} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"unfold: step is {step} but must be > 0")
    return Unfold.apply(x, axis, size, step)



def tril_(self, diagonal: int = 0) -> Tensor:
    """In place: ``tril``.

    >>> ember.ones(2, 2).tril_()
    tensor([[1., 0.],
            [1., 1.]])
    """
    return apply_inplace(self, tril.__wrapped__, diagonal, op="tril_")


def triu_(self, diagonal: int = 0) -> Tensor:
    """In place: ``triu``.

    >>> ember.ones(2, 2).triu_()
    tensor([[1., 1.],
            [0., 1.]])
    """
    return apply_inplace(self, triu.__wrapped__, diagonal, op="triu_")


class AsStridedInPlace(AsStrided):
    backward_name = "AsStridedBackward1"  # torch's name for the in-place form


def as_strided_(self, size, stride, storage_offset: int | None = None) -> Tensor:
    """In place: ``self`` given the ``size``, ``stride`` and ``storage_offset`` of ``as_strided``.

    >>> ember.arange(4.).as_strided_((2,), (2,))
    tensor([0., 2.])
    """
    x = require_tensor(self, "as_strided_")
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    offset = _element_offset(x._data) if storage_offset is None else int(storage_offset)
    _check_strided(size, stride, offset, x._data)
    return _restrided(x, AsStridedInPlace, size, stride, offset)


def _row_major(shape: tuple) -> tuple:
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def resize_(self, *sizes, memory_format=None) -> Tensor:
    """In place: ``self`` with the shape ``sizes``, row-major, over the same memory; memory that is too small is
    replaced by a larger block (which begins with the old contents), as in torch.

    >>> ember.arange(6.).resize_(2, 2)
    tensor([[0., 1.],
            [2., 3.]])
    """
    x = require_tensor(self, "resize_")
    shape = _shape_arg("resize_", sizes, None, "size") if sizes != ((),) else ()
    if x._requires_grad:
        raise RuntimeError("resize_: cannot resize variables that require grad; resize a detached tensor or .data")
    for n in shape:
        if n < 0:
            raise RuntimeError(f"resize_: Trying to create tensor with negative dimension {n}: {list(shape)}")
    data = x._data
    if shape != data.shape or memory_format is not None:  # (the same shape keeps its strides, unless a format is asked)
        strides = _row_major(shape) if memory_format is None else _format_strides(shape, memory_format, "resize_")
        owner, offset = _memory_owner(data), _element_offset(data)
        count = int(np.prod(shape))
        if offset + count > owner.size:
            grown = np.zeros(offset + count, data.dtype)
            grown[:owner.size] = owner.ravel(order="K")  # in the order of the memory
            owner = grown
            x._base, x._view_replay = None, ()  # its own memory now (in torch, its base's memory grows with it)
        x._data = _strided(owner, shape, strides, offset)
        if shape != data.shape:
            version_counter(x)[0] += 1  # as torch: only a change of shape counts as a change
    return x


def _format_strides(shape: tuple, fmt, op: str) -> tuple:
    """The dense strides of ``shape`` laid out in memory format ``fmt`` (torch restrides a resized tensor so)."""
    fmt = _check_format(op, fmt)
    if fmt is preserve_format:
        raise RuntimeError(f"{op}: unsupported memory format preserve_format; a resized tensor takes "
                           "contiguous_format, channels_last or channels_last_3d")
    if fmt is contiguous_format:
        return _row_major(shape)
    strides, step = [0] * len(shape), 1
    for dim in reversed(_channels_order(len(shape), fmt, op)):
        strides[dim] = step
        step *= max(shape[dim], 1)
    return tuple(strides)


def resize_as_(self, the_template: Tensor, *, memory_format=None) -> Tensor:
    """In place: ``resize_`` to the shape of ``the_template``.

    >>> ember.arange(4.).resize_as_(ember.ones(2, 2)).shape
    ember.Size([2, 2])
    """
    template = require_tensor(the_template, "resize_as_", 1, "the_template")._data
    if memory_format is preserve_format:  # the layout the template's strides suggest
        memory_format = suggested_format(template)
    return resize_(self, template.shape, memory_format=memory_format)
