"""Variants of split and narrow that torch also names: ``split_with_sizes``, the ``unsafe_`` splits and
``narrow_copy``.

``split_with_sizes`` is ``split`` with a list of sizes, checked as torch checks it. torch's ``unsafe_``
forms give pieces that autograd does not track as views; ember's are ``split``'s and ``chunk``'s own pieces
(views of the input, sharing its memory as torch's do). ``narrow_copy`` is ``narrow`` into fresh memory.

>>> import ember
>>> [p.tolist() for p in ember.arange(5).split_with_sizes([2, 3])]
[[0, 1], [2, 3, 4]]
>>> ember.arange(5).narrow_copy(0, 1, 2)
tensor([1, 2])
"""
from __future__ import annotations

from typing import Sequence

from ember._ops._support import ember_function, require_tensor
from ember._ops.shaping import chunk, split
from ember._ops.scatter import RegionRead, _Region
from ember._ops.views import narrowed
from ember._ops.out import into_out_of_its_dtype
from ember._tensor import Tensor


@ember_function
def split_with_sizes(input: Tensor, split_sizes: Sequence[int], dim: int = 0) -> tuple[Tensor, ...]:
    """Pieces of ``dim`` of the listed sizes, which must add up to its size (views)."""
    x = require_tensor(input, "split_with_sizes")
    return split(x, list(split_sizes), dim)  # (split checks the sizes)


@ember_function
def unsafe_split(tensor: Tensor, split_size: int, dim: int = 0) -> tuple[Tensor, ...]:
    """``split`` into pieces of ``split_size`` (a list of sizes is ``unsafe_split_with_sizes``'s), under the name
    torch gives its untracked form."""
    if isinstance(split_size, bool) or not isinstance(split_size, int):
        raise TypeError(f"unsafe_split(): argument 'split_size' (position 1) must be int, not "
                        f"{type(split_size).__name__}; for a list of sizes use unsafe_split_with_sizes")
    return split(tensor, split_size, dim)


@ember_function
def unsafe_chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
    """``chunk``, under the name torch gives its untracked form."""
    return chunk(input, chunks, dim)


@ember_function
def unsafe_split_with_sizes(input: Tensor, split_sizes: Sequence[int], dim: int = 0) -> tuple[Tensor, ...]:
    """``split_with_sizes``, under the name torch gives its untracked form."""
    return split_with_sizes(input, split_sizes, dim)


class NarrowCopy(RegionRead):
    backward_name = "NarrowCopyBackward0"


@ember_function
def narrow_copy(input: Tensor, dim: int, start: int, length: int, *, out: Tensor | None = None) -> Tensor:
    """``narrow``'s slice in memory of its own (a copy, not a view)."""
    x = require_tensor(input, "narrow_copy")
    if x.dim() and isinstance(dim, int) and dim >= x.dim():  # (torch refuses a dim past the end as a RuntimeError)
        raise RuntimeError(f"narrow_copy: Expected dim < {x.dim()}, the input's number of dims, but got dim {dim}")
    result = NarrowCopy.apply(x, _Region("narrow_copy", narrowed("narrow_copy", x, dim, start, length)))
    return result if out is None else into_out_of_its_dtype("narrow_copy", result, out, input)


def new_empty_strided(self: Tensor, size, stride, dtype=None, device=None, requires_grad: bool = False,
                      layout=None, pin_memory: bool = False) -> Tensor:
    """An uninitialised tensor of ``size`` and ``stride``, of ``self``'s dtype unless ``dtype`` is given."""
    import ember

    return ember.empty_strided(size, stride, dtype=self.dtype if dtype is None else dtype, device=device,
                               requires_grad=requires_grad, layout=layout, pin_memory=pin_memory)
