"""The ``*_copy`` ops: each view op's result in fresh, contiguous memory of its own, and ``as_strided_scatter``.

A ``*_copy`` op is its view op followed by a copy, so its gradient (to any order) is the view op's, and a write
into the result never reaches the input. Each takes ``out=`` as torch's does; the ones that return several
tensors (``split_copy``, ``split_with_sizes_copy``, ``unbind_copy``) write into a list of as many tensors.

>>> import ember
>>> x = ember.arange(6.).reshape(2, 3)
>>> y = ember.t_copy(x)
>>> y[0, 0] = 10.
>>> x[0, 0].item(), y.is_contiguous()
(0.0, True)
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ember import _dtype
from ember._ops._jvp import linear_jvp
from ember._ops._support import ember_function, normalize_dims, require_tensor, wrap
from ember._ops.copy import clone, contiguous_format
from ember._ops.diagonals import (
    StorageGather, _check_strided, _element_strides, _storage_indices, _strided, as_strided, diagonal,
    unfold,
)
from ember._ops.out import into_out
from ember._ops.shaping import split
from ember._ops.split_variants import split_with_sizes
from ember._ops.views import alias, expand, permute, reshape, select, squeeze, t, transpose, unbind, unsqueeze
from ember._tensor import Tensor
from ember.autograd.function import Function
from ember.autograd.grad_mode import no_grad


class CopyOfView(Function):
    """A view's values in fresh contiguous memory; each subclass names its node as torch names the ``*_copy``
    op's, after the view's own node (``TBackward0_copy`` for ``t_copy``)."""

    backward_on_arrays = True
    jvp = linear_jvp(0)

    @staticmethod
    def forward(ctx, view):
        return wrap(np.array(view._data, order="C"))

    @staticmethod
    def backward(ctx, grad):
        return grad


_COPY_NODES: dict = {}


def copied_view(view: Tensor, node_name: str | None = None) -> Tensor:
    """``view`` in memory of its own, recorded (if it is) as ``node_name``: by default its view node's name
    with ``_copy`` added."""
    if view.grad_fn is None:
        return clone(view, memory_format=contiguous_format)
    name = node_name or view.grad_fn.name() + "_copy"
    if name not in _COPY_NODES:
        _COPY_NODES[name] = type(name, (CopyOfView,), {"backward_name": name, "__module__": __name__})
    return _COPY_NODES[name].apply(view)


def _fresh(op: str, view: Tensor, out: Tensor | None, input: Tensor, node_name: str | None = None) -> Tensor:
    """``view`` copied into contiguous memory (see ``copied_view``), or written into ``out``."""
    result = copied_view(view, node_name)
    return result if out is None else into_out(op, result, out, input)


def _fresh_pieces(op: str, pieces: Sequence[Tensor], out: Sequence[Tensor] | None):
    """Each piece copied, or (with ``out``, a list of as many tensors) written into ``out`` (returning None)."""
    if out is None:
        return tuple(copied_view(p) for p in pieces)
    if len(out) != len(pieces):
        raise RuntimeError(f"{op}(): expected an out= argument of size {len(pieces)}, got size {len(out)}")
    with no_grad():  # as torch: each piece is copied into its tensor as copy_ would (cast, broadcast)
        for piece, target in zip(pieces, out):
            target.copy_(piece)
    return None


@ember_function
def alias_copy(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """A copy of ``input`` (``alias``'s result in memory of its own).

    >>> ember.alias_copy(ember.tensor([1, 2]))
    tensor([1, 2])
    """
    x = require_tensor(input, "alias_copy")
    return _fresh("alias_copy", alias(x), out, x)


@ember_function
def detach_copy(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """A copy of ``input`` outside the graph (``detach``'s result in memory of its own).

    >>> ember.detach_copy(ember.ones(2, requires_grad=True))
    tensor([1., 1.])
    """
    x = require_tensor(input, "detach_copy")
    return _fresh("detach_copy", x.detach(), out, x.detach())


@ember_function
def as_strided_copy(input: Tensor, size: Sequence[int], stride: Sequence[int], storage_offset: int | None = None,
                    *, out: Tensor | None = None) -> Tensor:
    """``as_strided``'s view, copied.

    >>> ember.as_strided_copy(ember.arange(6.), (2, 2), (1, 2))
    tensor([[0., 2.],
            [1., 3.]])
    """
    x = require_tensor(input, "as_strided_copy")
    return _fresh("as_strided_copy", as_strided(x, size, stride, storage_offset), out, x)


@ember_function
def diagonal_copy(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1, *,
                  out: Tensor | None = None) -> Tensor:
    """``diagonal``'s view, copied.

    >>> ember.diagonal_copy(ember.arange(4).reshape(2, 2))
    tensor([0, 3])
    """
    x = require_tensor(input, "diagonal_copy")
    return _fresh("diagonal_copy", diagonal(x, offset, dim1, dim2), out, x)


@ember_function
def expand_copy(input: Tensor, size: Sequence[int], *, implicit: bool = False, out: Tensor | None = None) -> Tensor:
    """``expand``'s view, copied (each repeated element is stored on its own).

    >>> ember.expand_copy(ember.tensor([1, 2]), (2, 2))
    tensor([[1, 2],
            [1, 2]])
    """
    x = require_tensor(input, "expand_copy")
    return _fresh("expand_copy", expand(x, size), out, x)


@ember_function
def permute_copy(input: Tensor, dims: Sequence[int], *, out: Tensor | None = None) -> Tensor:
    """``permute``'s view, copied.

    >>> ember.permute_copy(ember.zeros(2, 3, 4), (2, 0, 1)).stride()
    (6, 3, 1)
    """
    x = require_tensor(input, "permute_copy")
    return _fresh("permute_copy", permute(x, dims), out, x)


@ember_function
def select_copy(input: Tensor, dim: int, index: int, *, out: Tensor | None = None) -> Tensor:
    """``select``'s view, copied.

    >>> ember.select_copy(ember.arange(6).reshape(2, 3), 1, -1)
    tensor([2, 5])
    """
    x = require_tensor(input, "select_copy")
    return _fresh("select_copy", select(x, dim, index), out, x)


@ember_function
def slice_copy(input: Tensor, dim: int = 0, start: int | None = None, end: int | None = None, step: int = 1, *,
               out: Tensor | None = None) -> Tensor:
    """``input[start:end:step]`` along ``dim``, copied.

    >>> ember.slice_copy(ember.arange(6), 0, 1, None, 2)
    tensor([1, 3, 5])
    """
    x = require_tensor(input, "slice_copy")
    if step <= 0:
        raise RuntimeError(f"slice_copy(): slice step must be positive, got {step}")
    ndim = x.dim()  # (not the array's: under vmap, x is a batch of samples)
    (axis,) = normalize_dims(dim, max(ndim, 1), "slice_copy")
    if not ndim:
        raise RuntimeError("slice_copy(): slice() cannot be applied to a 0-dim tensor.")
    sliced = x[(slice(None),) * axis + (slice(start, end, step),)]
    return _fresh("slice_copy", sliced, out, x, "SliceBackward0_copy")  # (a whole slice indexes as an alias)


@ember_function
def split_copy(input: Tensor, split_size: int, dim: int = 0, *, out: Sequence[Tensor] | None = None):
    """``split``'s pieces of ``split_size``, each copied.

    >>> [p.tolist() for p in ember.split_copy(ember.arange(5), 2)]
    [[0, 1], [2, 3], [4]]
    """
    x = require_tensor(input, "split_copy")
    return _fresh_pieces("split_copy", split(x, split_size, dim), out)


@ember_function
def split_with_sizes_copy(input: Tensor, split_sizes: Sequence[int], dim: int = 0, *,
                          out: Sequence[Tensor] | None = None):
    """``split_with_sizes``'s pieces, each copied.

    >>> [p.tolist() for p in ember.split_with_sizes_copy(ember.arange(5), [1, 4])]
    [[0], [1, 2, 3, 4]]
    """
    x = require_tensor(input, "split_with_sizes_copy")
    return _fresh_pieces("split_with_sizes_copy", split_with_sizes(x, split_sizes, dim), out)


@ember_function
def unbind_copy(input: Tensor, dim: int = 0, *, out: Sequence[Tensor] | None = None):
    """``unbind``'s slices, each copied.

    >>> ember.unbind_copy(ember.tensor([[1, 2], [3, 4]]), 1)
    (tensor([1, 3]), tensor([2, 4]))
    """
    x = require_tensor(input, "unbind_copy")
    return _fresh_pieces("unbind_copy", unbind(x, dim), out)


@ember_function
def squeeze_copy(input: Tensor, dim: int | Sequence[int] | None = None, *, out: Tensor | None = None) -> Tensor:
    """``squeeze``'s view, copied.

    >>> ember.squeeze_copy(ember.zeros(1, 2, 1), (0, 2)).shape
    ember.Size([2])
    """
    x = require_tensor(input, "squeeze_copy")
    return _fresh("squeeze_copy", squeeze(x, dim), out, x)


@ember_function
def t_copy(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """``t``'s view, copied.

    >>> ember.t_copy(ember.tensor([[1, 2]]))
    tensor([[1],
            [2]])
    """
    x = require_tensor(input, "t_copy")
    return _fresh("t_copy", t(x), out, x)


@ember_function
def transpose_copy(input: Tensor, dim0: int, dim1: int, *, out: Tensor | None = None) -> Tensor:
    """``transpose``'s view, copied.

    >>> ember.transpose_copy(ember.zeros(2, 3), 0, 1).stride()
    (2, 1)
    """
    x = require_tensor(input, "transpose_copy")
    return _fresh("transpose_copy", transpose(x, dim0, dim1), out, x)


@ember_function
def unfold_copy(input: Tensor, dimension: int, size: int, step: int, *, out: Tensor | None = None) -> Tensor:
    """``Tensor.unfold``'s windows, copied.

    >>> ember.unfold_copy(ember.arange(4), 0, 2, 2)
    tensor([[0, 1],
            [2, 3]])
    """
    x = require_tensor(input, "unfold_copy")
    return _fresh("unfold_copy", unfold(x, dimension, size, step), out, x)


@ember_function
def unsqueeze_copy(input: Tensor, dim: int, *, out: Tensor | None = None) -> Tensor:
    """``unsqueeze``'s view, copied.

    >>> ember.unsqueeze_copy(ember.tensor([1, 2]), 1).shape
    ember.Size([2, 1])
    """
    x = require_tensor(input, "unsqueeze_copy")
    return _fresh("unsqueeze_copy", unsqueeze(x, dim), out, x)


@ember_function
def view_copy(input: Tensor, size, *, out: Tensor | None = None) -> Tensor:
    """``view``'s result, copied: with a shape, the elements in that shape; with a dtype, the same bytes read as
    that dtype (not differentiable).

    >>> ember.view_copy(ember.arange(4), (2, 2))
    tensor([[0, 1],
            [2, 3]])
    >>> ember.view_copy(ember.tensor([1.0]), ember.int32)
    tensor([1065353216], dtype=ember.int32)
    """
    x = require_tensor(input, "view_copy")
    if isinstance(size, _dtype.dtype):
        return _fresh("view_copy", _bytes_as(x, size), out, x.detach())
    # as torch: any layout (view would refuse some), and always a view's node
    return _fresh("view_copy", reshape(x, size), out, x, "ViewBackward0_copy")


def _bytes_as(x: Tensor, dtype: _dtype.dtype) -> Tensor:
    """``x``'s bytes read as ``dtype``: the last dim scales by the ratio of the element sizes, as in torch."""
    data, target = x._data, dtype.np
    if target.itemsize != data.itemsize:
        if not data.ndim:
            raise RuntimeError(f"view_copy(): self.dim() cannot be 0 to view {x.dtype} as {dtype} (different "
                               "element sizes)")
        if data.shape[-1] * data.itemsize % target.itemsize:
            raise RuntimeError(f"view_copy(): self.size(-1) must be divisible by {target.itemsize // data.itemsize} "
                               f"to view {x.dtype} as {dtype} (different element sizes), but got {data.shape[-1]}")
    return wrap(np.ascontiguousarray(data).view(target))


class AsStridedScatter(Function):
    """A copy of the input with ``src`` written where ``as_strided(size, stride, offset)`` of that copy is."""

    backward_name = "AsStridedScatterBackward0"

    @staticmethod
    def forward(ctx, x, src, size, stride, offset):
        result = np.empty_like(x._data)  # laid out as the input, as torch's clone keeps a dense layout
        result[...] = x._data
        _strided(result, size, stride, offset)[...] = src._data
        copy_at = _storage_indices(result.shape, _element_strides(result), 0)  # a fresh array: it owns its memory
        written_at = _storage_indices(size, stride, offset)
        covered = np.zeros(result.size, bool)
        covered[written_at] = True
        ctx.positions = (copy_at, written_at, result.size)
        ctx.kept = wrap((~covered[copy_at]).astype(result.dtype))
        return wrap(result)

    @staticmethod
    def backward(ctx, grad):
        copy_at, written_at, length = ctx.positions
        grad_src = StorageGather.apply(grad, copy_at, written_at, length) if ctx.needs_input_grad[1] else None
        return grad * ctx.kept, grad_src, None, None, None


@ember_function
def as_strided_scatter(input: Tensor, src: Tensor, size: Sequence[int], stride: Sequence[int],
                       storage_offset: int | None = None) -> Tensor:
    """A copy of ``input`` with ``src`` written into ``as_strided(size, stride, storage_offset)`` of that copy
    (whose storage offset is 0 unless given).

    >>> ember.as_strided_scatter(ember.zeros(4), ember.ones(2), (2,), (2,))
    tensor([1., 0., 1., 0.])
    """
    x = require_tensor(input, "as_strided_scatter")
    source = require_tensor(src, "as_strided_scatter", 2, "src")
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    offset = 0 if storage_offset is None else int(storage_offset)
    _check_strided(size, stride, offset, np.empty(x._data.size, x._data.dtype))
    if tuple(source._data.shape) != size:
        raise RuntimeError(f"as_strided_scatter(): expected src to have a size equal to the slice of self. src size = "
                           f"{list(source._data.shape)}, slice size = {list(size)}")
    return AsStridedScatter.apply(x, source, size, stride, offset)


@ember_function
def empty_permuted(size: Sequence[int], physical_layout: Sequence[int], *, dtype=None, layout=None, device=None,
                   requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """An uninitialised tensor of ``size`` whose dims lie in memory in the order ``physical_layout`` (outermost
    first).

    >>> ember.empty_permuted((2, 3, 4), (0, 2, 1)).stride()
    (12, 1, 3)
    """
    import ember

    shape, order = tuple(int(s) for s in size), tuple(int(d) for d in physical_layout)
    _check_layout(shape, order)
    stored = ember.empty([shape[d] for d in order], dtype=dtype, layout=layout, device=device)
    result = stored.permute(tuple(np.argsort(order))).detach()
    return result.requires_grad_(requires_grad)


def _check_layout(shape: tuple, order: tuple) -> None:
    if len(order) != len(shape):
        raise RuntimeError(f"empty_permuted(): Number of dimensions in size does not match the length of the "
                           f"physical_layout; i.e. len(size) = {len(shape)} is not equal to len(physical_layout) = "
                           f"{len(order)}")
    for i, d in enumerate(order):
        if not 0 <= d < len(shape):
            raise RuntimeError(f"empty_permuted(): Dimension out of range (expected to be between 0 and "
                               f"{len(shape) - 1}, but got {d} at index {i}); physical_layout lists the dims of size, "
                               "outermost first, each once and not negative")
    if len(set(order)) != len(order):
        raise RuntimeError(f"empty_permuted(): Duplicate dim not allowed in physical_layout {list(order)}")
