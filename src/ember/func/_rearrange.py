"""``rearrange``: einops' reordering of a tensor's axes by a pattern, as ``torch.func.rearrange``.

One pattern covers transpose, reshape, squeeze, unsqueeze and stack. The tensor is split into the axes the
left side names, those are permuted into the right side's order, then merged into its groups: three
public ops, so autograd, double backward and ``__torch_function__`` dispatch come with them, and the result
is a view of the input whenever ``reshape`` can make one.
"""
from __future__ import annotations

import math
from typing import Sequence

import ember
from ember._tensor import Tensor
from ember.func._einops_pattern import ELLIPSIS, Pattern, parse_pattern


class DimensionBindError(Exception):
    """An axis length does not fit the tensor's dim it is part of (torch raises an error of the same name)."""


def rearrange(tensor: Tensor | Sequence[Tensor], pattern: str, **axes_lengths: int) -> Tensor:
    """``tensor`` with its axes reordered, split and merged as ``pattern`` says, e.g. ``"b (h w) -> w b h"``.

    A sequence of tensors is stacked along a new first dim. ``axes_lengths`` gives the lengths of axes the
    left side splits a dim into (all but one per group); ``...`` stands for the dims no name covers, ``()`` or
    ``1`` for a unit axis.

    >>> from ember.func import rearrange
    >>> images = ember.zeros(8, 30, 40, 3)  # 8 images, height, width, channels
    >>> rearrange(images, "b h w c -> b c h w").shape
    ember.Size([8, 3, 30, 40])
    >>> rearrange(images, "b (h h2) (w w2) c -> b h w (c h2 w2)", h2=2, w2=2).shape
    ember.Size([8, 15, 20, 12])
    >>> rearrange(images, "b ... c -> (b c) ...").shape
    ember.Size([24, 30, 40])
    >>> rearrange([ember.tensor([1, 2]), ember.tensor([3, 4])], "n a -> a n")
    tensor([[1, 3],
            [2, 4]])
    """
    if not isinstance(tensor, Tensor):
        tensor = ember.stack(tensor)
    parsed = parse_pattern(pattern)
    _check_lengths(parsed, axes_lengths)
    _check_ndim(parsed, tensor.ndim)
    if parsed.left.dims == parsed.right.dims and all(dim == ELLIPSIS for dim in parsed.left.dims):
        return tensor  # "... -> ..." and "->" change nothing: torch returns the input itself, not a view
    return _moved(tensor, parsed, _axis_sizes(parsed, tuple(tensor.shape), axes_lengths))


def _check_lengths(pattern: Pattern, axes_lengths: dict) -> None:
    for name, length in axes_lengths.items():
        if type(length) is not int:  # bool, NumPy and tensor scalars are refused, as torch does
            raise TypeError(f"rearrange axis lengths must be integers, got {name}={length!r} of type "
                            f"{type(length).__name__} for pattern '{pattern.text}': pass a Python int")
    pattern.check_rearrangeable()
    unknown = [name for name in axes_lengths if name == ELLIPSIS or name not in pattern.left.names]
    if unknown:
        raise ValueError(f"Identifiers not found in rearrange expression: {', '.join(unknown)} given as lengths, "
                         f"but the left side of pattern '{pattern.text}' names no such axis")


def _check_ndim(pattern: Pattern, ndim: int) -> None:
    left = pattern.left
    named = len(left.dims) - left.has_ellipsis
    if left.has_ellipsis and named > ndim:
        raise ValueError(f"Number of dimensions in pattern ({named}) must be less than or equal to the number of "
                         f"dimensions in the tensor ({ndim}): pattern '{pattern.text}'")
    if not left.has_ellipsis and named != ndim:
        raise ValueError(f"Number of dimensions in pattern ({named}) must be equal to the number of dimensions in "
                         f"the tensor ({ndim}): pattern '{pattern.text}'; add '...' to stand for dims it does not "
                         "name")


def _axis_sizes(pattern: Pattern, shape: tuple, axes_lengths: dict) -> dict:
    """The length of every axis the left side names, and under ``ELLIPSIS`` the sizes of the dims ``...`` covers."""
    sizes = {}
    position = 0
    for dim in pattern.left.dims:
        if dim == ELLIPSIS:
            covered = len(shape) - (len(pattern.left.dims) - 1)
            sizes[ELLIPSIS] = shape[position:position + covered]
            position += covered
        else:
            sizes.update(_bound(dim, shape[position], position, axes_lengths, pattern))
            position += 1
    return sizes


def _bound(names: tuple, size: int, position: int, axes_lengths: dict, pattern: Pattern) -> dict:
    """The lengths of the axes ``names`` a dim of ``size`` is made of: given ones, and at most one inferred."""
    where = f"dim {position} of size {size}, written '({' '.join(names)})' in pattern '{pattern.text}'"
    if not names and size != 1:
        raise DimensionBindError(f"{where} is a unit axis, but has size {size}: name the axis to move it")
    given = {name: axes_lengths[name] for name in names if name in axes_lengths}
    if any(length < 0 for length in given.values()):
        raise DimensionBindError(f"{where}: axis lengths must not be negative, got {given}")
    unknown = [name for name in names if name not in given]
    if len(unknown) > 1:
        raise DimensionBindError(f"cannot infer the sizes of two dimensions at once, {' and '.join(unknown)} of "
                                 f"{where}: give all but one of their lengths as keywords")
    product = math.prod(given.values())
    if not unknown:
        if product != size:
            raise DimensionBindError(f"Dimension sizes do not match ({size} != {product}) for {where}, given "
                                     f"{given}: give lengths whose product is {size}")
        return given
    if product == 0:
        raise ZeroDivisionError(f"cannot infer {unknown[0]} of {where}: the lengths given, {given}, multiply to 0")
    if size % product:
        raise DimensionBindError(f"inferred dimension does not evenly fit into larger dimension: {where}, given "
                                 f"{given} whose product {product} does not divide {size}")
    return {**given, unknown[0]: size // product}


def _moved(tensor: Tensor, pattern: Pattern, sizes: dict) -> Tensor:
    left = [axis for dim in pattern.left.dims for axis in _axes(dim, sizes)]
    position = {key: i for i, (key, _) in enumerate(left) if key is not None}
    units = [i for i, (key, _) in enumerate(left) if key is None]
    right = [_axes(dim, sizes) for dim in pattern.right.dims]
    # the left's unit axes go last, to be dropped by a sum after the merge (see below)
    order = [position[key] for axes in right for key, _ in axes if key is not None] + units
    shape = [size for dim, axes in zip(pattern.right.dims, right) for size in _sizes(dim, axes)]
    moved = tensor.reshape([length for _, length in left])
    if order != sorted(order):
        moved = moved.permute(order)
    moved = moved.reshape(shape + [1] * len(units))
    if units:
        # torch drops unit axes by summing over them: a new tensor rather than a view, bool and integer
        # dtypes promoted to int64; dropped the same way, so results and aliasing match
        moved = moved.sum(list(range(len(shape), len(shape) + len(units))))
    return moved


def _sizes(dim, axes: list) -> list:
    """The sizes of the output dims ``dim`` makes: one per axis for a bare ``...``, else the group's product."""
    if dim == ELLIPSIS:
        return [length for _, length in axes]
    return [math.prod(length for _, length in axes)]


def _axes(dim, sizes: dict) -> list:
    """The axes ``dim`` is made of, in order, as (key, length): a unit axis is keyed None, the ellipsis's
    dims ``(ELLIPSIS, i)``."""
    if dim == ():
        return [(None, 1)]
    axes = []
    for name in (dim,) if dim == ELLIPSIS else dim:
        if name == ELLIPSIS:
            axes.extend(((ELLIPSIS, i), length) for i, length in enumerate(sizes[ELLIPSIS]))
        else:
            axes.append((name, sizes[name]))
    return axes
