"""Shape ops: moving dims, joining, splitting, repeating, flipping and rolling, and in-place reshaping.

Views where torch gives views (``split``, ``chunk``, ``tensor_split``, ``unflatten``, ``movedim``),
copies where it copies (``repeat``, ``flip``, ``roll``, ``hstack`` ...). The joining ops are written
in ``cat`` and the ``atleast_*d`` views, so they need no backward of their own.

>>> import ember
>>> x = ember.arange(6.).view(2, 3)
>>> a, b = x.split([1, 2], dim=1)
>>> b[0, 0] = 10.
>>> x
tensor([[ 0., 10.,  2.],
        [ 3.,  4.,  5.]])
>>> ember.hstack([x, x]).shape, x.repeat(2, 1).shape
(ember.Size([2, 6]), ember.Size([4, 3]))
"""
from __future__ import annotations

import math
import warnings
from collections.abc import Sequence

import numpy as np

from ember import _dtype
from ember._ops._support import (
    check_broadcast, ember_function, normalize_dims, require_tensor, user_stacklevel, view_of, whole_number, wrap,
)
from ember._ops.complex import conj
from ember._ops.copy import contiguous, zeros_in_layout
from ember._ops.indexing import Index, Slice, _index
from ember._ops.inplace import _check_recordable
from ember._ops.joining import _tensor_list, cat
from ember._ops import views
from ember._ops.views import (
    Alias, MatrixTranspose, Permute, Squeeze, Transpose, Unsqueeze, View, _shape_arg, expand, reshape, unsqueeze, view,
)
from ember._size import Size
from ember._tensor import OF_MULTIPLE_OUTPUTS, Tensor, version_counter
from ember.autograd.saved_attributes import input_sizes
from ember.autograd.function import Function
from ember.autograd.grad_mode import state as _grad

_ALL = slice(None)


def _dims(value) -> tuple:
    """An int or a sequence of ints, as a tuple."""
    return (value,) if isinstance(value, (int, np.integer)) else tuple(value)


# ----------------------------------------------------------------- moving dims


@ember_function
def unflatten(input, dim: int, sizes: Sequence[int]) -> Tensor:
    """Dim ``dim`` split into ``sizes`` (one of them may be -1), a view.

    >>> ember.ones(2, 6).unflatten(1, (3, -1)).shape
    ember.Size([2, 3, 2])
    """
    x = require_tensor(input, "unflatten")
    shape = x._data.shape
    (axis,) = normalize_dims(dim, len(shape), "unflatten")
    sizes = tuple(int(s) for s in sizes)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty; give at least one size, e.g. (2, -1)")
    if sizes.count(-1) > 1:
        raise RuntimeError(f"unflatten: only one dimension can be inferred, got sizes {list(sizes)}")
    size = shape[axis] if shape else 1
    known = math.prod(s for s in sizes if s != -1)
    if -1 in sizes and known and size % known == 0:
        sizes = tuple(size // known if s == -1 else s for s in sizes)
    if -1 in sizes or math.prod(sizes) != size:
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim {axis} "
                           f"({size}) in the input tensor")
    return View.apply(x, shape[:axis] + sizes + shape[axis + 1:])


@ember_function
def adjoint(input) -> Tensor:
    """The conjugate transpose: the last two dims swapped, a view (conjugated too for complex: a copy).

    >>> ember.ones(2, 3).adjoint().shape
    ember.Size([3, 2])
    """
    x = require_tensor(input, "adjoint")
    ndim = x._data.ndim
    if ndim == 0:
        warnings.warn("adjoint() is deprecated on 0-D tensors. Consider using x.conj().", UserWarning,
                      stacklevel=user_stacklevel())
        return x
    if ndim == 1:
        raise RuntimeError("tensor.adjoint() is only supported on matrices or batches of matrices. Got 1-D tensor.")
    return _conjugate_transpose(x, ndim - 2, ndim - 1)


def _conjugate_transpose(x: Tensor, dim0: int, dim1: int) -> Tensor:
    """``x`` with two dims swapped, and conjugated if complex. ember conjugates at once (it keeps no conjugate
    bit, as torch does), so a complex tensor's conjugate transpose is a copy, not a view."""
    swapped = Transpose.apply(x, dim0, dim1)
    return swapped if x._data.dtype.kind != "c" else conj(swapped)


@ember_function
def movedim(input, source: int | Sequence[int], destination: int | Sequence[int]) -> Tensor:
    """The dims in ``source`` moved to the positions ``destination``; the others keep their order (a view).

    >>> ember.ones(2, 3, 4).movedim(0, -1).shape
    ember.Size([3, 4, 2])
    """
    x = require_tensor(input, "movedim")
    ndim = x._data.ndim
    source, destination = _dims(source), _dims(destination)
    if len(source) != len(destination):
        raise RuntimeError(
            f"movedim: Invalid source or destination dims: source ({list(source)} dims) should contain the same "
            f"number of dims as destination ({list(destination)} dims)"
        )
    src = normalize_dims(source, ndim, "movedim")
    if not ndim:  # as torch: nothing to move, an alias
        return Alias.apply(x)
    dst = normalize_dims(destination, ndim, "movedim")
    for name, dims, given in (("source", src, source), ("destination", dst, destination)):
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({list(given)})")
    order = [None] * ndim
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter([d for d in range(ndim) if d not in src])
    return Permute.apply(x, tuple(next(rest) if o is None else o for o in order))


@ember_function
def moveaxis(input, source: int | Sequence[int], destination: int | Sequence[int]) -> Tensor:
    """``movedim`` under NumPy's name.

    >>> ember.ones(2, 3, 4).moveaxis(2, 0).shape
    ember.Size([4, 2, 3])
    """
    return movedim(input, source, destination)


@ember_function
def ravel(input) -> Tensor:
    """The elements in one dim, row-major: a view of ``input`` if it is contiguous, else of a contiguous copy.

    >>> ember.ones(2, 3).t().ravel().shape
    ember.Size([6])
    """
    return view(contiguous(require_tensor(input, "ravel")), -1)


# ----------------------------------------------------------------- at least n dims, joining


def _atleast(op: str, tensors: tuple, grow):
    """One tensor gives one result; several, or a list of them, a tuple."""
    if len(tensors) == 1 and isinstance(tensors[0], Tensor):
        return grow(tensors[0])
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    return tuple(grow(t) for t in _tensor_list(op, tensors))


def _at_least_1d(x: Tensor) -> Tensor:
    return reshape(x, 1) if x._data.ndim == 0 else x


def _at_least_2d(x: Tensor) -> Tensor:
    ndim = x._data.ndim
    return reshape(x, 1, 1) if ndim == 0 else unsqueeze(x, 0) if ndim == 1 else x


def _at_least_3d(x: Tensor) -> Tensor:
    ndim = x._data.ndim
    if ndim == 0:
        return reshape(x, 1, 1, 1)
    if ndim == 1:
        return unsqueeze(unsqueeze(x, 0), -1)
    return unsqueeze(x, -1) if ndim == 2 else x


@ember_function
def atleast_1d(*tensors):
    """Each tensor with at least one dim (a 0-d one becomes shape [1]).

    >>> ember.atleast_1d(ember.tensor(2.))
    tensor([2.])
    """
    return _atleast("atleast_1d", tensors, _at_least_1d)


@ember_function
def atleast_2d(*tensors):
    """Each tensor with at least two dims (new dims lead).

    >>> ember.atleast_2d(ember.ones(3)).shape
    ember.Size([1, 3])
    """
    return _atleast("atleast_2d", tensors, _at_least_2d)


@ember_function
def atleast_3d(*tensors):
    """Each tensor with at least three dims: [n] becomes [1, n, 1], [m, n] becomes [m, n, 1].

    >>> ember.atleast_3d(ember.ones(3)).shape
    ember.Size([1, 3, 1])
    """
    return _atleast("atleast_3d", tensors, _at_least_3d)


def _stack_inputs(op: str, tensors, grow) -> list:
    tensors = _tensor_list(op, tensors)
    if not tensors:
        raise RuntimeError(f"{op} expects a non-empty TensorList")
    return [grow(t) for t in tensors]


@ember_function
def hstack(tensors: Sequence[Tensor], *, out: Tensor | None = None) -> Tensor:
    """The tensors joined column-wise: along dim 1, or dim 0 for vectors.

    >>> ember.hstack([ember.ones(2, 1), ember.zeros(2, 2)]).shape
    ember.Size([2, 3])
    """
    joined = _stack_inputs("hstack", tensors, _at_least_1d)
    return cat(joined, 0 if joined[0]._data.ndim == 1 else 1, out=out)


@ember_function
def vstack(tensors: Sequence[Tensor], *, out: Tensor | None = None) -> Tensor:
    """The tensors joined row-wise (along dim 0), vectors as rows.

    >>> ember.vstack([ember.ones(3), ember.zeros(3)]).shape
    ember.Size([2, 3])
    """
    return cat(_stack_inputs("vstack", tensors, _at_least_2d), 0, out=out)


@ember_function
def row_stack(tensors: Sequence[Tensor], *, out: Tensor | None = None) -> Tensor:
    """Another name of ``vstack``.

    >>> ember.row_stack([ember.ones(2), ember.zeros(2)])
    tensor([[1., 1.],
            [0., 0.]])
    """
    return cat(_stack_inputs("row_stack", tensors, _at_least_2d), 0, out=out)


@ember_function
def dstack(tensors: Sequence[Tensor], *, out: Tensor | None = None) -> Tensor:
    """The tensors joined depth-wise (along dim 2), after ``atleast_3d``.

    >>> ember.dstack([ember.ones(3), ember.zeros(3)]).shape
    ember.Size([1, 3, 2])
    """
    return cat(_stack_inputs("dstack", tensors, _at_least_3d), 2, out=out)


def _as_column(x: Tensor) -> Tensor:
    return reshape(x, x._data.size, 1) if x._data.ndim <= 1 else x


@ember_function
def column_stack(tensors: Sequence[Tensor], *, out: Tensor | None = None) -> Tensor:
    """The tensors joined along dim 1, vectors (and 0-d tensors) as columns.

    >>> ember.column_stack([ember.ones(3), ember.zeros(3, 2)]).shape
    ember.Size([3, 3])
    """
    return cat(_stack_inputs("column_stack", tensors, _as_column), 1, out=out)


# ----------------------------------------------------------------- broadcasting


@ember_function
def broadcast_shapes(*shapes) -> Size:
    """The shape that tensors of these shapes broadcast to (each an int or a sequence of ints).

    >>> ember.broadcast_shapes((2, 1), (3,))
    ember.Size([2, 3])
    """
    result: list = []
    for i, shape in enumerate(shapes):
        shape = _dims(shape)
        if any(s < 0 for s in shape):
            raise ValueError(f"broadcast_shapes: Attempting to broadcast a dimension with negative length! "
                             f"(argument {i} is {shape})")
        result = [1] * (len(shape) - len(result)) + result
        for back, size in enumerate(reversed(shape), 1):
            have = result[-back]
            if size != have and size != 1 and have != 1:
                raise RuntimeError(
                    f"broadcast_shapes: Attempting to broadcast a dimension of length {size} at {-back}! Mismatching "
                    f"argument at index {i} had {shape}; but expected shape should be broadcastable to {result}"
                )
            result[-back] = have if size == 1 else size
    return Size(result)


@ember_function
def broadcast_tensors(*tensors) -> tuple:
    """The tensors expanded to their common shape (views; a tensor of that shape comes back as it is).

    >>> a, b = ember.broadcast_tensors(ember.ones(2, 1), ember.zeros(3))
    >>> a.shape, b.shape
    (ember.Size([2, 3]), ember.Size([2, 3]))
    """
    shapes = [t._data.shape for t in _tensor_list("broadcast_tensors", tensors)]
    check_broadcast("broadcast_tensors", *shapes)
    shape = np.broadcast_shapes(*shapes) if shapes else ()
    return tuple(t if t._data.shape == shape else expand(t, shape) for t in tensors)


@ember_function
def meshgrid(*tensors, indexing: str | None = None) -> tuple:
    """Coordinate grids: the i-th result holds the i-th (0-d or 1-d) tensor along its own dim, expanded (views).

    ``indexing='ij'`` gives the grid the inputs' order of dims; ``'xy'`` swaps the first two (Cartesian).

    >>> a, b = ember.meshgrid(ember.tensor([1, 2]), ember.tensor([3, 4, 5]), indexing="ij")
    >>> a.shape, b[0]
    (ember.Size([2, 3]), tensor([3, 4, 5]))
    """
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument.",
                      UserWarning, stacklevel=user_stacklevel())
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')
    return _grids(_tensor_list("meshgrid", tensors), indexing == "xy")


def _grids(tensors: tuple, cartesian: bool) -> tuple:
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for t in tensors:
        if t._data.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got a tensor of "
                               f"shape {list(t._data.shape)}")
        if t._data.dtype != tensors[0]._data.dtype:
            raise RuntimeError(f"meshgrid expects all tensors to have the same dtype (got {tensors[0].dtype} and "
                               f"{t.dtype})")
    axes = list(range(len(tensors)))
    if cartesian and len(tensors) > 1:
        axes[0], axes[1] = 1, 0
    shape = [0] * len(tensors)
    for t, axis in zip(tensors, axes):
        shape[axis] = t._data.size
    grids = []
    for t, axis in zip(tensors, axes):
        lined = [1] * len(tensors)
        lined[axis] = -1
        grids.append(expand(reshape(t, lined), shape))
    return tuple(grids)


# ----------------------------------------------------------------- splitting


class Split(Function):
    """Consecutive pieces of ``axis`` of the given sizes, each a view; the gradient joins theirs back."""

    backward_name = "SplitBackward0"

    @staticmethod
    def forward(ctx, x, axis, sizes):
        ctx.axis = axis
        data, lead = x._data, (_ALL,) * axis
        pieces, start = [], 0
        for size in sizes:
            key = lead + (slice(start, start + size),)
            piece = view_of(x, data[key], (_index, (key,)))
            piece._view_origin = OF_MULTIPLE_OUTPUTS  # as unbind's: an in-place change could not be recorded for the others
            pieces.append(piece)
            start += size
        return tuple(pieces)

    @staticmethod
    def backward(ctx, *grads):
        return cat(grads, ctx.axis), None, None


class SplitWithSizes(Split):
    backward_name = "SplitWithSizesBackward0"


def _split_axis(op: str, x: Tensor, dim: int) -> int:
    if not x._data.ndim:
        raise RuntimeError(f"{op} expects at least a 1-dimensional tensor")
    (axis,) = normalize_dims(dim, x._data.ndim, op)
    return axis


def _equal_pieces(size: int, split_size: int) -> list:
    """Pieces of ``split_size`` and a smaller last one; one empty piece for an empty dim."""
    count = max(-(-size // split_size), 1) if split_size else 1
    return [min(split_size, size - i * split_size) for i in range(count)]


@ember_function
def split(tensor, split_size_or_sections: int | Sequence[int], dim: int = 0) -> tuple:
    """Pieces of ``dim``: each of ``split_size`` (the last may be smaller), or of the listed sizes (views).

    >>> [p.shape[0] for p in ember.ones(5).split(2)]
    [2, 2, 1]
    """
    x = require_tensor(tensor, "split")
    axis = _split_axis("split", x, dim)
    size = x._data.shape[axis]
    if isinstance(split_size_or_sections, Tensor) and not split_size_or_sections._data.ndim:
        split_size_or_sections = split_size_or_sections.item()  # as torch: a 0-d tensor is a size
    if isinstance(split_size_or_sections, (bool, np.bool_)) or not isinstance(split_size_or_sections, (
            int, np.integer, Sequence)):
        raise TypeError(f"split(): argument 'split_size' must be int or a sequence of ints, not "
                        f"{type(split_size_or_sections).__name__}")
    if isinstance(split_size_or_sections, (int, np.integer)):
        split_size = int(split_size_or_sections)
        if split_size < 0:
            raise RuntimeError(f"split expects split_size be non-negative, but got split_size={split_size}")
        if split_size == 0 and size:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {size}")
        return Split.apply(x, axis, _equal_pieces(size, split_size))
    sizes = [whole_number(s, "split_with_sizes", "split_sizes") for s in split_size_or_sections]
    if any(s < 0 for s in sizes):
        raise RuntimeError(f"split_with_sizes expects split_sizes have only non-negative entries, but got "
                           f"split_sizes={sizes}")
    if sum(sizes) != size:
        raise RuntimeError(
            f"split_with_sizes expects split_sizes to sum exactly to {size} (input tensor's size at dimension "
            f"{axis}), but got split_sizes={sizes}"
        )
    return SplitWithSizes.apply(x, axis, sizes)


def split_method(self, split_size, dim: int = 0) -> tuple:
    """``Tensor.split``: torch names its size parameter ``split_size`` where the function has a longer name."""
    return split.__wrapped__(self, split_size, dim)


@ember_function
def chunk(input, chunks: int, dim: int = 0) -> tuple:
    """At most ``chunks`` pieces of equal size along ``dim`` (the last may be smaller), views.

    >>> [p.shape[0] for p in ember.ones(5).chunk(3)]
    [2, 2, 1]
    """
    x = require_tensor(input, "chunk")
    chunks = whole_number(chunks, "chunk", "chunks")
    axis = _split_axis("chunk", x, dim)
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    size = x._data.shape[axis]
    if size == 0:  # as torch: as many empty pieces as asked for
        return SplitWithSizes.apply(x, axis, [0] * chunks)
    return Split.apply(x, axis, _equal_pieces(size, -(-size // chunks)))


def _split_spec(op: str, positional, sections, indices, tensor_indices_or_sections):
    """What to split by, given by position or under one of torch's keywords (one per form of the call)."""
    given = [v for v in (positional, sections, indices, tensor_indices_or_sections) if v is not None]
    if len(given) != 1:
        raise TypeError(f"{op}() takes the sections (an int), the indices (a sequence) or a tensor of either, once: "
                        f"by position or as sections=, indices= or tensor_indices_or_sections=")
    if isinstance(given[0], str):  # (a sequence, though not of ints: refused here, in the caller's name)
        raise TypeError(f"{op}(): argument 'indices_or_sections' must be int, a sequence of ints or a tensor, not str")
    return given[0]


def _split_points(x: Tensor, indices_or_sections, size: int) -> list:
    """The bounds ``[(start, stop), ...]`` of tensor_split's pieces."""
    if isinstance(indices_or_sections, Tensor):
        indices_or_sections = _split_tensor(indices_or_sections)
    if isinstance(indices_or_sections, (bool, np.bool_)) or not isinstance(indices_or_sections, (
            int, np.integer, Sequence)):
        raise TypeError(f"tensor_split(): argument 'indices_or_sections' must be int, a sequence of ints or a "
                        f"tensor, not {type(indices_or_sections).__name__}")
    if isinstance(indices_or_sections, (int, np.integer)):
        sections = int(indices_or_sections)
        if sections <= 0:
            raise RuntimeError(f"tensor_split: number of sections must be larger than 0, got {sections}")
        small, extra = divmod(size, sections)
        stops = np.cumsum([small + 1] * extra + [small] * (sections - extra)).tolist()
        return list(zip([0] + stops[:-1], stops))
    stops = [whole_number(i, "tensor_split", "indices") for i in indices_or_sections]
    return list(zip([0] + stops, stops + [None]))


def _split_tensor(t: Tensor):
    """tensor_split's indices given as a tensor: a 0-d one is a number of sections, a 1-d one the indices."""
    data = t._data
    if data.dtype != np.int64:
        raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to have dtype of long, but got "
                           f"{t.dtype}")
    if data.ndim > 1:
        raise RuntimeError("tensor_split expected tensor_indices_or_sections to be a zero-dimensional or "
                           f"one-dimensional tensor, but got a tensor with {data.ndim} dims")
    return int(data) if data.ndim == 0 else data.tolist()


@ember_function
def tensor_split(input, indices_or_sections=None, dim: int = 0, *, sections: int | None = None,
                 indices: Sequence[int] | None = None, tensor_indices_or_sections: Tensor | None = None) -> tuple:
    """Views of ``dim`` cut into ``n`` nearly equal sections, or cut before each of the given indices.

    >>> [p.shape[0] for p in ember.ones(5).tensor_split(3)], [p.shape[0] for p in ember.ones(5).tensor_split([1, 4])]
    ([2, 2, 1], [1, 3, 1])
    """
    x = require_tensor(input, "tensor_split")
    indices_or_sections = _split_spec("tensor_split", indices_or_sections, sections, indices,
                                      tensor_indices_or_sections)
    if not x._data.ndim:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims")
    (axis,) = normalize_dims(dim, x._data.ndim, "tensor_split")
    lead = (_ALL,) * axis
    return tuple(Slice.apply(x, lead + (slice(start, stop),))
                 for start, stop in _split_points(x, indices_or_sections, x._data.shape[axis]))


def _split_along(op: str, input, indices_or_sections, dim: int, least: int) -> tuple:
    """hsplit, vsplit and dsplit: tensor_split along ``dim``, where a number of sections must divide it."""
    x = require_tensor(input, op)
    ndim = x._data.ndim
    if ndim < least:
        raise RuntimeError(f"torch.{op} requires a tensor with at least {least} dimension, but got a tensor with "
                           f"{ndim} dimensions!")
    if isinstance(indices_or_sections, (int, np.integer)):
        size = x._data.shape[dim]
        if indices_or_sections == 0 or size % indices_or_sections:
            raise RuntimeError(f"torch.{op} attempted to split along dimension {dim}, but the size of the dimension "
                               f"{size} is not divisible by the split_size {indices_or_sections}!")
    return tensor_split(x, indices_or_sections, dim)


@ember_function
def hsplit(input, indices_or_sections=None, *, sections: int | None = None,
           indices: Sequence[int] | None = None) -> tuple:
    """``tensor_split`` along dim 1 (dim 0 for a vector); a number of sections must divide it.

    >>> [p.shape for p in ember.ones(2, 4).hsplit(2)]
    [ember.Size([2, 2]), ember.Size([2, 2])]
    """
    x = require_tensor(input, "hsplit")
    by = _split_spec("hsplit", indices_or_sections, sections, indices, None)
    return _split_along("hsplit", x, by, 1 if x._data.ndim > 1 else 0, 1)


@ember_function
def vsplit(input, indices_or_sections=None, *, sections: int | None = None,
           indices: Sequence[int] | None = None) -> tuple:
    """``tensor_split`` along dim 0 of a tensor of at least 2 dims.

    >>> [p.shape for p in ember.ones(3, 2).vsplit([1])]
    [ember.Size([1, 2]), ember.Size([2, 2])]
    """
    return _split_along("vsplit", input, _split_spec("vsplit", indices_or_sections, sections, indices, None), 0, 2)


@ember_function
def dsplit(input, indices_or_sections=None, *, sections: int | None = None,
           indices: Sequence[int] | None = None) -> tuple:
    """``tensor_split`` along dim 2 of a tensor of at least 3 dims.

    >>> [p.shape for p in ember.ones(1, 2, 4).dsplit(2)]
    [ember.Size([1, 2, 2]), ember.Size([1, 2, 2])]
    """
    return _split_along("dsplit", input, _split_spec("dsplit", indices_or_sections, sections, indices, None), 2, 3)


# ----------------------------------------------------------------- repeating


class Repeat(Function):
    """``x`` tiled ``repeats`` times along each dim (leading dims are new); the gradient sums the copies."""

    backward_name = "RepeatBackward0"
    torch_saved_values = {"repeats": "repeats", "self_sym_sizes": input_sizes(0)}
    backward_on_arrays = True  # reshape and sum are methods of both

    @staticmethod
    def forward(ctx, x, repeats):
        data = x._data
        padded = (1,) * (len(repeats) - data.ndim) + data.shape
        ctx.shape, ctx.repeats, ctx.padded = data.shape, repeats, padded
        return wrap(np.ascontiguousarray(np.tile(data.reshape(padded), repeats)) if repeats else data.copy())

    @staticmethod
    def backward(ctx, grad):
        interleaved = tuple(n for pair in zip(ctx.repeats, ctx.padded) for n in pair)
        copies = tuple(range(0, 2 * len(ctx.repeats), 2))
        return grad.reshape(interleaved).sum(copies).reshape(ctx.shape), None


def repeat(input, *sizes, repeats=None) -> Tensor:
    """``Tensor.repeat``: ``input`` tiled ``sizes[i]`` times along dim ``i`` (a copy; leading sizes add dims).

    >>> ember.tensor([1, 2]).repeat(2, 2)
    tensor([[1, 2, 1, 2],
            [1, 2, 1, 2]])
    """
    x = require_tensor(input, "repeat")
    sizes = _shape_arg("repeat", sizes, repeats, "repeats")
    shape = x._data.shape
    if len(sizes) < len(shape):
        raise RuntimeError("repeat: Number of dimensions of repeat dims can not be smaller than number of dimensions "
                           f"of tensor (got {len(sizes)} repeats for a tensor of {len(shape)} dims); give one per dim")
    target = [r * s for r, s in zip(sizes, (1,) * (len(sizes) - len(shape)) + shape)]
    for size in target:
        if size < 0:
            raise RuntimeError(f"repeat: Trying to create tensor with negative dimension {size}: {target}")
    return Repeat.apply(x, sizes)


@ember_function
def tile(input, dims: Sequence[int]) -> Tensor:
    """``input`` repeated ``dims[i]`` times along dim ``i``; missing leading counts are 1.

    >>> ember.tensor([1, 2]).tile((2,))
    tensor([1, 2, 1, 2])
    """
    x = require_tensor(input, "tile")
    dims = _dims(dims)
    return repeat(x, (1,) * (x._data.ndim - len(dims)) + dims)


def tile_method(self, *counts, dims=None) -> Tensor:
    """``Tensor.tile``: the counts one by one or as a sequence."""
    return tile.__wrapped__(self, _shape_arg("tile", counts, dims, "dims") if counts != ((),) else ())


class IndexSelect(Index):
    """Whole slices of one dim picked by an index array (the rows of repeat_interleave with tensor repeats)."""

    backward_name = "IndexSelectBackward0"


@ember_function
def repeat_interleave(input=None, repeats=None, dim: int | None = None, *, output_size: int | None = None) -> Tensor:
    """Each element (or slice of ``dim``) repeated ``repeats`` times in place; ``dim=None`` flattens first.

    With only a tensor of counts, the indices repeated: ``repeat_interleave(tensor([1, 2]))`` is [0, 1, 1].

    >>> ember.tensor([1, 2]).repeat_interleave(2)
    tensor([1, 1, 2, 2])
    >>> ember.repeat_interleave(ember.tensor([1, 2]))
    tensor([0, 1, 1])
    """
    if input is None or repeats is None:  # the counts alone, by position or as repeats=
        counts = _repeat_counts(require_tensor(repeats if input is None else input, "repeat_interleave"), None)
        _check_output_size(output_size, counts)
        return wrap(np.repeat(np.arange(counts.size, dtype=counts.dtype), counts))  # int32 counts: int32 indices
    x = require_tensor(input, "repeat_interleave")
    if dim is None:
        x, axis = reshape(x, -1), 0
    elif not x._data.ndim:
        raise IndexError(f"repeat_interleave: Dimension specified as {dim} but tensor has no dimensions; "
                         "pass dim=None to repeat its one element")
    else:
        (axis,) = normalize_dims(dim, x._data.ndim, "repeat_interleave")
    if isinstance(repeats, Tensor):
        return _repeat_by_tensor(x, repeats, axis, output_size)
    if repeats < 0:
        raise RuntimeError(f"repeat_interleave: Repeats must be non-negative, got {repeats}")
    shape = x._data.shape
    total = shape[axis] * repeats
    if output_size is not None and output_size != total:
        raise RuntimeError(f"repeat_interleave: Invalid output_size, expected {total} but got {output_size}")
    spread = expand(unsqueeze(x, axis + 1), shape[:axis + 1] + (repeats,) + shape[axis + 1:])
    return view(contiguous(spread), shape[:axis] + (total,) + shape[axis + 1:])


def _repeat_counts(repeats: Tensor, size: int | None) -> np.ndarray:
    """The counts of a tensor of repeats, checked; broadcast to ``size`` (None: the counts alone)."""
    counts = repeats._data
    if counts.dtype != np.int64 and counts.dtype != np.int32:
        name = _dtype.scalar_type_name(counts.dtype)
        raise NotImplementedError(f"\"repeat_interleave_cpu\" not implemented for '{name}'; pass repeats as int64, "
                                  "e.g. repeats.long()")
    if counts.ndim > 1 or size is None and counts.ndim != 1:
        raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
    counts = counts.reshape(-1)
    if size is not None and counts.size == 1:
        counts = np.broadcast_to(counts, (size,))
    if size is not None and counts.size != size:
        raise RuntimeError(f"repeat_interleave: repeats must have the same size as input along dim, but got "
                           f"repeats.size(0) = {counts.size} and input.size(dim) = {size}")
    if (counts < 0).any():
        raise RuntimeError("repeat_interleave: repeats can not be negative")
    return counts


def _check_output_size(output_size: int | None, counts: np.ndarray) -> None:
    if output_size is not None and output_size != counts.sum():
        raise RuntimeError(f"repeat_interleave: allocated size does not match required size (output_size "
                           f"{output_size}, repeats sum to {counts.sum()})")


def _repeat_by_tensor(x: Tensor, repeats: Tensor, axis: int, output_size: int | None) -> Tensor:
    counts = _repeat_counts(repeats, x._data.shape[axis])
    _check_output_size(output_size, counts)
    rows = np.repeat(np.arange(counts.size), counts)
    return IndexSelect.apply(x, (_ALL,) * axis + (rows,))


# ----------------------------------------------------------------- flipping, rolling, rotating


class Flip(Function):
    backward_name = "FlipBackward0"
    torch_saved_values = {"dims": "axes"}

    @staticmethod
    def forward(ctx, x, axes):
        ctx.axes = axes
        data = x._data
        if data.flags.c_contiguous:
            return wrap(np.flip(data, axes).copy())
        # as torch: the result is laid out as the input is (a channels-last input gives a channels-last result)
        result = zeros_in_layout(data, data.dtype)
        result[...] = np.flip(data, axes)
        return wrap(result)

    @staticmethod
    def backward(ctx, grad):
        return Flip.apply(grad, ctx.axes), None


def _distinct_dims(op: str, dims, ndim: int) -> tuple:
    axes = normalize_dims(_dims(dims), ndim, op)
    for axis in axes:
        if axes.count(axis) > 1:
            raise RuntimeError(f"{op}: dim {axis} appears multiple times in the list of dims")
    return axes


@ember_function
def flip(input, dims: int | Sequence[int]) -> Tensor:
    """A copy with the order of the elements reversed along each of ``dims``.

    >>> ember.tensor([[1, 2], [3, 4]]).flip(0)
    tensor([[3, 4],
            [1, 2]])
    """
    x = require_tensor(input, "flip")
    if not isinstance(dims, (tuple, list)):
        raise TypeError(f"flip(): argument 'dims' (position 2) must be tuple of ints, not {type(dims).__name__}")
    axes = _distinct_dims("flip", dims, x._data.ndim)
    return Flip.apply(x, axes if x._data.ndim else ())  # a 0-d tensor has one element: flipped, it is a copy


def flip_method(self, *axes, dims=None) -> Tensor:
    """``Tensor.flip``: the dims one by one or as a sequence."""
    if dims is None:
        dims = axes[0] if len(axes) == 1 and isinstance(axes[0], (tuple, list)) else axes
    return flip.__wrapped__(self, dims)


@ember_function
def fliplr(input) -> Tensor:
    """``flip(input, (1,))`` of a tensor of at least 2 dims: left and right swapped.

    >>> ember.tensor([[1, 2], [3, 4]]).fliplr()
    tensor([[2, 1],
            [4, 3]])
    """
    x = require_tensor(input, "fliplr")
    if x._data.ndim < 2:
        raise RuntimeError(f"fliplr: Input must be >= 2-d (got {x._data.ndim}-d).")
    return Flip.apply(x, (1,))


@ember_function
def flipud(input) -> Tensor:
    """``flip(input, (0,))`` of a tensor of at least 1 dim: up and down swapped.

    >>> ember.tensor([1, 2, 3]).flipud()
    tensor([3, 2, 1])
    """
    x = require_tensor(input, "flipud")
    if x._data.ndim < 1:
        raise RuntimeError("flipud: Input must be >= 1-d (got a 0-d tensor).")
    return Flip.apply(x, (0,))


class Roll(Function):
    backward_name = "RollBackward0"

    @staticmethod
    def forward(ctx, x, shifts, axes):
        ctx.shifts, ctx.axes = shifts, axes
        return wrap(np.asarray(np.roll(x._data, shifts, axes), order="C"))  # NumPy keeps x's layout, torch does not

    @staticmethod
    def backward(ctx, grad):
        back = tuple(-s for s in ctx.shifts) if ctx.axes is not None else -ctx.shifts
        return Roll.apply(grad, back, ctx.axes), None, None


@ember_function
def roll(input, shifts: int | Sequence[int], dims: int | Sequence[int] | None = None) -> Tensor:
    """The elements shifted ``shifts`` places along ``dims``, those pushed off the end coming back at the start;
    without ``dims``, along the flattened tensor.

    >>> ember.tensor([1, 2, 3]).roll(1)
    tensor([3, 1, 2])
    """
    x = require_tensor(input, "roll")
    shifts = tuple(int(s) for s in _dims(shifts))
    if not shifts:
        raise RuntimeError("roll: `shifts` required")
    if dims is None:
        if len(shifts) != 1:
            raise RuntimeError(f"roll: shifts and dimensions must align. shifts: {len(shifts)}, dims:0")
        return Roll.apply(x, shifts[0], None)
    dims = _dims(dims)
    if len(dims) != len(shifts):
        raise RuntimeError(f"roll: shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
    if not x._data.ndim:
        raise IndexError(f"roll: Dimension specified as {dims[0]} but tensor has no dimensions")
    return Roll.apply(x, shifts, normalize_dims(dims, x._data.ndim, "roll"))


class Rot90(Function):
    backward_name = "Rot90Backward0"
    torch_saved_values = {"dims": "axes", "k": "k"}

    @staticmethod
    def forward(ctx, x, k, axes):
        ctx.k, ctx.axes = k, axes
        return wrap(np.rot90(x._data, k, axes).copy())

    @staticmethod
    def backward(ctx, grad):
        return Rot90.apply(grad, -ctx.k, ctx.axes), None, None


@ember_function
def rot90(input, k: int = 1, dims: Sequence[int] = (0, 1)) -> Tensor:
    """A copy rotated by ``k`` quarter turns in the plane of ``dims``, from the first dim towards the second.

    >>> ember.tensor([[1, 2], [3, 4]]).rot90()
    tensor([[2, 4],
            [1, 3]])
    """
    x = require_tensor(input, "rot90")
    dims = _dims(dims)
    if len(dims) != 2:
        raise RuntimeError(f"rot90: expected total rotation dims == 2, but got dims = {len(dims)}")
    if x._data.ndim < 2:
        raise RuntimeError(f"rot90: expected total dims >= 2, but got total dims = {x._data.ndim}")
    axes = normalize_dims(dims, x._data.ndim, "rot90")
    if axes[0] == axes[1]:
        raise RuntimeError(f"rot90: expected rotation dims to be different, but got dim0 = {axes[0]} and "
                           f"dim1 = {axes[1]}")
    return Rot90.apply(x, k % 4, axes)


# ----------------------------------------------------------------- in-place changes of shape


class UnsqueezeInPlace(Unsqueeze):
    backward_name = "UnsqueezeBackward1"  # torch's names for the in-place forms


class SqueezeAllInPlace(Squeeze):
    backward_name = "SqueezeBackward3"


class SqueezeInPlace(Squeeze):
    backward_name = "SqueezeBackward4"


class SqueezeDimsInPlace(Squeeze):
    backward_name = "SqueezeBackward5"


class TransposeInPlace(Transpose):
    backward_name = "TransposeBackward1"


class MatrixTransposeInPlace(MatrixTranspose):
    backward_name = "TBackward1"


def _restrided(self: Tensor, node: type, *args) -> Tensor:
    """``self`` given the shape and strides of the view ``node`` makes of it, and that view's place in the graph.

    The memory is unchanged, but as in torch the version moves: saved copies of ``self`` no longer match it.
    """
    enabled = _grad.enabled
    if enabled and (self._requires_grad or self._base is not None):  # the refusals of any in-place change
        _check_recordable(self, self._requires_grad)
    result = node.apply(self, *args)
    self._data = result._data
    if result._grad_fn is not None:
        self._grad_fn, self._output_nr = result._grad_fn, result._output_nr
    counter = version_counter(self)
    counter[0] += 1
    if self._base is not None:
        self._view_replay = result._view_replay
        self._view_version = counter[0]
    return self


def unsqueeze_(self, dim: int) -> Tensor:
    """In place: a dim of size 1 inserted at ``dim``.

    >>> ember.ones(2).unsqueeze_(0).shape
    ember.Size([1, 2])
    """
    (axis,) = normalize_dims(dim, require_tensor(self, "unsqueeze_")._data.ndim + 1, "unsqueeze_")
    return _restrided(self, UnsqueezeInPlace, axis)


def squeeze_(self, dim=None) -> Tensor:
    """In place: dims of size 1 removed (all, or those of ``dim``).

    >>> ember.ones(1, 2, 1).squeeze_(0).shape
    ember.Size([2, 1])
    """
    shape = require_tensor(self, "squeeze_")._data.shape
    axes = views.squeezed_axes("squeeze_", shape, dim)
    node = SqueezeAllInPlace if dim is None else SqueezeInPlace if isinstance(dim, int) else SqueezeDimsInPlace
    return _restrided(self, node, axes)


def t_(self) -> Tensor:
    """In place: the transpose of a tensor of at most 2 dims.

    >>> ember.ones(2, 3).t_().shape
    ember.Size([3, 2])
    """
    ndim = require_tensor(self, "t_")._data.ndim
    if ndim > 2:
        raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is {ndim}D")
    return _restrided(self, MatrixTransposeInPlace)


def transpose_(self, dim0: int, dim1: int) -> Tensor:
    """In place: two dims swapped.

    >>> ember.ones(2, 3, 4).transpose_(0, 2).shape
    ember.Size([4, 3, 2])
    """
    axes = normalize_dims((dim0, dim1), require_tensor(self, "transpose_")._data.ndim, "transpose_")
    return _restrided(self, TransposeInPlace, *axes)


def mT(self) -> Tensor:
    """``x.mT``: each matrix transposed (the last two dims swapped); a 0-d tensor is itself, as in torch (which warns).

    >>> ember.ones(5, 2, 3).mT.shape
    ember.Size([5, 3, 2])
    """
    if _matrices_or_0_d(self, "mT", "This function is the identity in these cases.") == 0:
        return self
    return views.transpose(self, -2, -1)


def T(self) -> Tensor:
    """``x.T``: the dims reversed. As torch, it warns that this is deprecated for other than 2-D tensors.

    >>> ember.ones(2, 3).T.shape
    ember.Size([3, 2])
    """
    _warn_of_reversing(self._data.ndim)
    return views.permute(self, tuple(range(self._data.ndim - 1, -1, -1)))


def _warn_of_reversing(ndim: int) -> None:
    """torch's deprecation warnings for ``x.T`` of other than a matrix."""
    if ndim == 0:
        _warn_identity_on_0_d("T", "This function is the identity in these cases.")
    elif ndim != 2:
        warnings.warn("The use of `x.T` on tensors of dimension other than 2 to reverse their shape is deprecated and "
                      "it will throw an error in a future release. Consider `x.mT` to transpose batches of matrices "
                      "or `x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a tensor.",
                      UserWarning, stacklevel=user_stacklevel())


def _warn_identity_on_0_d(name: str, advice: str) -> None:
    warnings.warn(f"Tensor.{name} is deprecated on 0-D tensors. {advice}", UserWarning, stacklevel=user_stacklevel())


def _matrices_or_0_d(self: Tensor, name: str, advice: str) -> int:
    """``self``'s number of dims, for ``x.mT`` or ``x.mH``: a 1-D tensor is refused, a 0-d one warned of."""
    ndim = self._data.ndim
    if ndim == 0:
        _warn_identity_on_0_d(name, advice)
    elif ndim < 2:
        raise RuntimeError(f"tensor.{name} is only supported on matrices or batches of matrices. Got {ndim}-D tensor.")
    return ndim


def mH(self) -> Tensor:
    """``x.mH``: the conjugate transpose of each matrix (see ``adjoint``).

    >>> ember.ones(5, 2, 3).mH.shape
    ember.Size([5, 3, 2])
    """
    ndim = _matrices_or_0_d(self, "mH", "Consider using x.conj().")
    return self if ndim == 0 else _conjugate_transpose(self, ndim - 2, ndim - 1)


def H(self) -> Tensor:
    """``x.H``: the (conjugate) transpose of a matrix.

    >>> ember.ones(2, 3).H.shape
    ember.Size([3, 2])
    """
    ndim = self._data.ndim
    if ndim == 0:
        _warn_identity_on_0_d("H", "Consider using x.conj().")
        return self
    if ndim != 2:
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {ndim}-D tensor.")
    return _conjugate_transpose(self, 0, 1)


def swapaxes_(self, axis0: int, axis1: int) -> Tensor:
    """``transpose_`` under NumPy's parameter names."""
    return transpose_(self, axis0, axis1)

