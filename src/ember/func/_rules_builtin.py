"""Batching rules of ember's own gradient ops: the Functions that backward formulas call.

torch writes some gradients as ops of their own (``tanh_backward``, ``threshold_backward``,
``index_put`` for indexing's ...), with batching rules like any op, so that a backward runs
under ``vmap``. ember's counterparts are Functions called directly, not public ops, so their
rules are found here by class (``BUILTIN_RULES``) when one is applied to batched tensors:
``autograd.grad`` inside ``vmap`` then runs the formulas that use them on a whole batch.
"""
from __future__ import annotations

import numpy as np

from ember._ops.extrema import AddAlong, TakeAlong
from ember._ops.indexing import Index, IndexAdd
from ember._ops.loss import MseLossBackward
from ember._ops.reduction import _target_size, expandable
from ember._ops.unary import SigmoidBackward, TanhBackward, ThresholdBackward
from ember._tensor import Tensor
from ember.func._batched import levels_in, logical_shape, physical
from ember.func._function import BUILTIN_RULES
from ember.func._rules import RULES, decline, rewrap


def _levels(args: tuple) -> tuple:
    return tuple(sorted(levels_in(args, set())))


def elementwise(cls, args: tuple, kwargs: dict):
    """A Function elementwise in its tensor operands (which broadcast): run once on the aligned physical values."""
    levels = _levels(args)
    if not levels:
        return NotImplemented
    ndim = max(len(logical_shape(a)) for a in args if isinstance(a, Tensor))
    return rewrap(cls.apply(*[physical(a, levels, ndim) for a in args]), levels)


def mse_loss_backward(cls, args: tuple, kwargs: dict):
    """``MseLossBackward(grad, input, target, reduction)``: elementwise, but 'mean' divides by the number of
    elements of ``input - target``, which is the sample's only while input and target are not batched."""
    grad, input, target, reduction = args
    if reduction == "mean" and _levels((input, target)):
        decline("MseLossBackward", "its input or target is batched, so the count of elements it divides "
                                   "by would be the batch's; compute the loss's gradient outside vmap")
    return elementwise(cls, args, kwargs)


def index_add(cls, args: tuple, kwargs: dict):
    """``IndexAdd(grad, shape, key)``, indexing's gradient: the batch dims lead both the zeros and the key."""
    grad, shape, key = args
    levels = _levels((grad,))
    if not levels:
        return NotImplemented
    value = physical(grad, levels, expand=True)
    batch = tuple(value.shape[:len(levels)])
    return rewrap(cls.apply(value, batch + tuple(shape), _batched_key(key, len(levels))), levels)


def index(cls, args: tuple, kwargs: dict):
    """``Index(x, key)`` (in the gradient of indexing's gradient): the key takes every sample's batch dims."""
    x, key = args
    levels = _levels((x,))
    if not levels:
        return NotImplemented
    return rewrap(cls.apply(physical(x, levels, expand=True), _batched_key(key, len(levels))), levels)


def _batched_key(key, n_batch_dims: int) -> tuple:
    """``key`` for the physical value: whole slices over the batch dims first."""
    items = key if isinstance(key, tuple) else (key,)
    if not _advanced_items_adjacent(items):
        decline("Index", "the indexing key has index tensors separated by slices, whose result dims NumPy "
                         "places first, ahead of the batch dims")
    return (slice(None),) * n_batch_dims + items


def add_along(cls, args: tuple, kwargs: dict):
    """``AddAlong(values, indices, axis, shape)``, a selection's gradient (max's along a dim): the same indices
    for every sample, the axis moved past the batch dims."""
    values, indices, axis, shape = args
    along = _along_batch(values, indices)
    if along is None:
        return NotImplemented
    value, every_sample, batch, levels = along
    return rewrap(cls.apply(value, every_sample, axis % len(shape) + len(batch), batch + tuple(shape)), levels)


def take_along(cls, args: tuple, kwargs: dict):
    """``TakeAlong(x, indices, axis)`` (in the gradient of a selection's gradient): as ``add_along``."""
    x, indices, axis = args
    along = _along_batch(x, indices)
    if along is None:
        return NotImplemented
    value, every_sample, batch, levels = along
    return rewrap(cls.apply(value, every_sample, axis % indices.ndim + len(batch)), levels)


def _along_batch(x, indices: np.ndarray):
    """``x``'s physical value, the indices repeated for every sample, the batch's sizes and levels; None if
    ``x`` is not batched."""
    levels = _levels((x,))
    if not levels:
        return None
    value = physical(x, levels, expand=True)
    batch = tuple(value.shape[:len(levels)])
    return value, np.broadcast_to(indices, batch + indices.shape), batch, levels


def sum_to_size(func, args: tuple, kwargs: dict, levels: tuple):
    """``x.sum_to_size(size)`` per sample: the batch dims kept, the sample's dims summed down to ``size``."""
    x = args[0]
    shape = _target_size(args[1:], kwargs.get("size"))
    logical = tuple(logical_shape(x))
    if not expandable(shape, logical):
        raise RuntimeError(f"sum_to_size: size {list(shape)} is not expandable to size {list(logical)}")
    value = physical(x, levels)
    batch = tuple(value.shape[:len(levels)])
    padded = batch + (1,) * (len(logical) - len(shape)) + shape
    return rewrap(value.sum_to_size(padded).reshape(batch + shape), levels)


def _advanced_items_adjacent(items: tuple) -> bool:
    """Whether the key's advanced items (index arrays, and ints among them) are side by side: NumPy then puts
    their result dims where they stand, behind the leading slices the batch dims get."""
    if not any(isinstance(k, np.ndarray) for k in items):
        return True
    positions = [p for p, k in enumerate(items) if isinstance(k, (np.ndarray, int, np.integer))]
    return positions == list(range(positions[0], positions[-1] + 1))


BUILTIN_RULES.update({TanhBackward: elementwise, SigmoidBackward: elementwise, ThresholdBackward: elementwise,
                      MseLossBackward: mse_loss_backward, IndexAdd: index_add, Index: index,
                      AddAlong: add_along, TakeAlong: take_along})
RULES["sum_to_size"] = sum_to_size
