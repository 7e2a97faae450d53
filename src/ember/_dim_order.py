"""``Tensor.dim_order`` and ``Tensor.is_contiguous(memory_format=...)``: the order of the dims in memory, read
off the strides as torch reads it.

>>> import ember
>>> ember.ones(2, 3, 4).permute(2, 0, 1).dim_order()
(1, 2, 0)
"""
from __future__ import annotations

from ember._ops.copy import channels_last, channels_last_3d, contiguous_format, memory_format
from ember._tensor import Tensor, torch_strides
from ember.overrides import overridable

tensor_method = overridable("ember.Tensor")

# The order in which each memory format lays the dims out, innermost first.
_INNERMOST_FIRST = {channels_last: (1, 3, 2, 0), channels_last_3d: (1, 4, 3, 2, 0)}
_AMBIGUOUS = "The tensor does not have unique dim order, or cannot map to exact one of the given memory formats."


def is_contiguous_as(shape: tuple, strides: tuple, layout: memory_format) -> bool:
    """Whether ``strides`` are those of a dense tensor of ``shape`` laid out in ``layout``; as torch, a dim of
    size 1 may have any stride, and channels_last (channels_last_3d) applies to 4-d (5-d) tensors only.

    >>> is_contiguous_as((2, 3, 4, 5), (60, 1, 15, 3), channels_last)
    True
    """
    if layout is contiguous_format:
        order = tuple(reversed(range(len(shape))))
    elif len(shape) == len(_INNERMOST_FIRST.get(layout, ())):
        order = _INNERMOST_FIRST[layout]
    else:
        return False
    expected = 1
    for dim in order:
        if shape[dim] != 1:
            if strides[dim] != expected:
                return False
            expected *= shape[dim]
    return True


def is_contiguous_in(x: Tensor, layout: memory_format) -> bool:
    """``x.is_contiguous(memory_format=layout)``: whether ``x`` is dense in ``layout`` (``preserve_format`` asks as
    ``contiguous_format`` does, as in torch)."""
    if not isinstance(layout, memory_format):
        raise TypeError(f"is_contiguous(): argument 'memory_format' must be ember.memory_format, not "
                        f"{type(layout).__name__}")
    if layout.dims_outer_to_inner is None:
        return x._data.flags.c_contiguous
    return is_contiguous_as(tuple(x._data.shape), torch_strides(x._data), layout)


@tensor_method
def dim_order(self: Tensor, *, ambiguity_check: bool | list = False) -> tuple:
    """The dims from the outermost in memory to the innermost (``(0, 1, 2)`` for a contiguous tensor).

    A dim of size 1, or two dims of equal stride, could stand in either order: ``ambiguity_check=True``
    makes that an error, and a list of memory formats lets the tensor through if it is dense in exactly
    one of them.

    >>> ember.ones(2, 3, 4, 5).to(memory_format=ember.channels_last).dim_order()
    (0, 2, 3, 1)
    """
    formats = _check_ambiguity_argument(ambiguity_check)
    shape, strides = tuple(self._data.shape), torch_strides(self._data)
    check = ambiguity_check if isinstance(ambiguity_check, bool) else True
    if check and _several_orders(shape, strides) and \
            sum(is_contiguous_as(shape, strides, f) for f in formats) != 1:
        raise RuntimeError(_AMBIGUOUS)
    order = _outermost_first(shape, strides)
    if ambiguity_check and any(_compare(shape, strides, a, b) != 1 for a, b in zip(order, order[1:])):
        raise RuntimeError("The tensor does not have unique dim order.")
    return order


def _check_ambiguity_argument(ambiguity_check) -> list:
    """The memory formats ``ambiguity_check`` lists (none for a bool); anything else is a TypeError."""
    if isinstance(ambiguity_check, bool):
        return []
    if isinstance(ambiguity_check, list) and all(isinstance(f, memory_format) for f in ambiguity_check):
        return ambiguity_check
    raise TypeError("The ambiguity_check argument must be a bool or a list of memory formats.")


def _several_orders(shape: tuple, strides: tuple) -> bool:
    return 1 in shape or any(a == b for a, b in zip(strides, strides[1:]))


def _outermost_first(shape: tuple, strides: tuple) -> tuple:
    """Dims sorted by stride, outermost first, as torch sorts them: a dense layout is read off directly, and
    otherwise an insertion sort from the last dim back that leaves dims it cannot tell apart in place."""
    ndim = len(shape)
    if ndim < 2:
        return tuple(range(ndim))
    dense, last = is_contiguous_as(shape, strides, contiguous_format), is_contiguous_as(shape, strides, channels_last)
    if dense != last:
        return tuple(range(ndim)) if dense else (0, *range(2, ndim), 1)
    order = list(reversed(range(ndim)))  # innermost first while sorting
    for i in range(1, ndim):
        moving = i
        for j in reversed(range(i)):
            comparison = _compare(shape, strides, order[j], order[moving])
            if comparison == 1:
                order[j], order[moving] = order[moving], order[j]
                moving = j
            elif comparison == -1:
                break
    return tuple(reversed(order))


def _compare(shape: tuple, strides: tuple, a: int, b: int) -> int:
    """1 if dim ``a`` lies outside dim ``b`` in memory, -1 if inside, 0 if they cannot be told apart."""
    stride_a, stride_b = strides[a], strides[b]
    if stride_a == 0 or stride_b == 0:
        return 0
    if stride_a == stride_b:
        return 0 if _at_least(shape[b], shape[a]) else 1
    if _at_least(stride_b, stride_a):
        return -1
    return 1 if _at_least(stride_a, stride_b) else 0


def _at_least(a: int, b: int) -> bool:
    return b == 0 or (a != 0 and (a >= b or a % b == 0))
