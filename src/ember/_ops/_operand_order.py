"""The layout of a binary pointwise op's result when its operands are laid out differently.

torch orders the result's dims by the first operand's strides; a later operand decides only where the first
is broadcast (a zero stride) or ties. So a channels-last tensor plus a row-major one is channels last, and a
row-major one plus a channels-last one row-major. NumPy keeps C order wherever two operands disagree, which
would make the first result row-major. Re-laying out the second operand in torch's order leaves NumPy no
disagreement, so its result then comes out in torch's layout, with the same values.

>>> import numpy as np
>>> x = np.zeros((2, 3, 4, 5)).transpose(0, 3, 1, 2).copy().transpose(0, 2, 3, 1)  # channels last
>>> (x + in_order_of_first(x, np.ones((2, 3, 4, 5)))).strides == x.strides
True
"""
from __future__ import annotations

import numpy as np


def in_order_of_first(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``y``, or a copy of it laid out so that ``x op y`` follows torch's order of the dims.

    Called only when ``x`` is not row-major: a row-major first operand decides as NumPy does.
    """
    shape = np.broadcast_shapes(x.shape, y.shape)
    offset = len(shape) - y.ndim
    order = _iteration_order(shape, (_broadcast_strides(x, shape), _broadcast_strides(y, shape)))
    y_order = [d - offset for d in order if d >= offset]  # y's own dims, innermost first
    if _follows(y, shape[offset:], y_order):
        return y
    outer_to_inner = y_order[::-1]
    result = np.empty([y.shape[d] for d in outer_to_inner], y.dtype).transpose(np.argsort(outer_to_inner))
    result[...] = y
    return result


def _broadcast_strides(array: np.ndarray, shape: tuple) -> tuple:
    """``array``'s strides in the broadcast ``shape``: 0 for the dims it is broadcast along (as torch reads them)."""
    offset = len(shape) - array.ndim
    strides = [0] * offset
    for size, stride, target in zip(array.shape, array.strides, shape[offset:]):
        strides.append(0 if size == 1 and target != 1 else stride)
    return tuple(strides)


def _iteration_order(shape: tuple, operand_strides: tuple) -> list:
    """The dims innermost first, as torch's TensorIterator sorts them before it allocates a result.

    An insertion sort from the last dim: the first operand with two different non-zero strides decides a pair;
    of equal strides, the larger dim goes outside, else the next operand is asked; no answer keeps the order.
    """
    def goes_outside(outer: int, inner: int) -> int:  # 1: swap them, -1: keep them, 0: no operand decides
        for strides in operand_strides:
            a, b = strides[outer], strides[inner]
            if a == 0 or b == 0:
                continue
            if a != b:
                return 1 if a > b else -1
            if shape[outer] > shape[inner]:
                return 1
        return 0

    order = list(range(len(shape) - 1, -1, -1))
    for i in range(1, len(order)):
        moving = i
        for j in range(i - 1, -1, -1):
            verdict = goes_outside(order[j], order[moving])
            if verdict > 0:
                order[j], order[moving] = order[moving], order[j]
                moving = j
            elif verdict < 0:
                break
    return order


def _follows(y: np.ndarray, shape: tuple, order: list) -> bool:
    """Whether ``y``'s strides (along the dims it is not broadcast in) grow along ``order``."""
    strides = _broadcast_strides(y, shape)
    last = 0
    for d in order:
        stride = abs(strides[d])
        if stride:
            if stride < last:
                return False
            last = stride
    return True
