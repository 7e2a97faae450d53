"""Spatial ops on channels-last inputs, run in ``[N, *spatial, C]`` order so that their results come out channels
last, as torch's do.

A channels-last tensor permuted to ``[N, *spatial, C]`` is row-major, and so are the results of the ops that
work along one dim at a time (index_select, cat, reductions) on it: permuted back, they are channels last
without a copy. An op runs on that view with its dims moved by ``trailing_dim``.

>>> import ember
>>> x = ember.ones(2, 3, 4, 5).contiguous(memory_format=ember.channels_last)
>>> y = channels_second(channels_trailing(x).flip(trailing_dim(2, 4)))
>>> y.is_contiguous(memory_format=ember.channels_last)
True
"""
from __future__ import annotations

import numpy as np

from ember._ops.copy import _is_plainly_row_major, contiguous_format, copy_in_layout, suggested_format
from ember._tensor import Tensor


def is_channels_last(input: Tensor) -> bool:
    """Whether torch would lay out a spatial op's result for ``input`` channels last (``suggest_memory_format``)."""
    data = input._data
    return data.ndim in (4, 5) and not _is_plainly_row_major(data) and suggested_format(data) is not contiguous_format


def channels_trailing(x: Tensor) -> Tensor:
    """``[N, C, *spatial]`` viewed as ``[N, *spatial, C]``."""
    return x.permute(0, *range(2, x.dim()), 1)


def channels_second(x: Tensor) -> Tensor:
    """``[N, *spatial, C]`` viewed as ``[N, C, *spatial]``, row-major made so first (a channels-last result)."""
    if not x._data.flags.c_contiguous:  # (a step that left its result permuted)
        x = x.contiguous()
    return x.permute(0, x.dim() - 1, *range(1, x.dim() - 1))


def trailing_dim(dim: int, ndim: int) -> int:
    """Where dim ``dim`` of ``[N, C, *spatial]`` (``ndim`` dims) sits in ``[N, *spatial, C]``."""
    if dim == 1:
        return ndim - 1
    return dim - 1 if dim > 1 else dim


def laid_out_for(result: np.ndarray, input: np.ndarray) -> np.ndarray:
    """A kernel's ``result`` for ``input``, copied channels last if ``input`` is laid out so (as torch's kernels
    write theirs); else as it is. For kernels that compute plane by plane, whose results are row-major."""
    if result.ndim not in (4, 5) or _is_plainly_row_major(input):
        return result
    layout = suggested_format(input)
    return result if layout is contiguous_format else copy_in_layout(result, result.dtype, layout)


def in_layout_of(result: Tensor, input: Tensor) -> Tensor:
    """``result`` (computed row-major) made channels last if ``input`` is, as torch's result is."""
    return result.contiguous(memory_format=suggested_format(input._data)) if is_channels_last(input) else result
