"""``cond`` and ``while_loop``: torch's structured control flow, run eagerly.

ember has no graph capture, so each is what its definition says: ``cond`` calls the branch that ``pred``
picks, and ``while_loop`` calls ``body_fn`` while ``cond_fn`` holds. The checks torch makes on the carried
values (a single-element predicate, a body that keeps the values' number, shapes and dtypes) are made here,
so a program written for torch fails here where it would fail there.

>>> import ember
>>> x = ember.tensor([1., 2.])
>>> ember.cond(x.sum() > 0, lambda a: a * 2, lambda a: a * 3, (x,))
tensor([2., 4.])
>>> ember.while_loop(lambda i, s: i < 3, lambda i, s: (i + 1, s * 2), (ember.tensor(0), x))
(tensor(3), tensor([ 8., 16.]))
"""
from __future__ import annotations

import math
from typing import Callable, Sequence

from ember._tensor import Tensor


def _truth(op: str, value, what: str) -> bool:
    if isinstance(value, Tensor):
        if value.numel() != 1:
            raise RuntimeError(f"Expected {what} to be bool or single-element tensor, but got {value}.")
        return bool(value)
    if not isinstance(value, bool):
        raise RuntimeError(f"{op}: expected {what} to be a bool or a single-element tensor, got "
                           f"{type(value).__name__}")
    return value


def cond(pred, true_fn: Callable, false_fn: Callable, operands: Sequence = ()):
    """``true_fn(*operands)`` if ``pred`` holds, else ``false_fn(*operands)``.

    ``pred`` is a bool or a single-element tensor; ``operands`` a tuple or list.
    """
    if not isinstance(operands, (tuple, list)):
        raise RuntimeError(f"cond: expected operands to be a tuple or list of tensors, got "
                           f"{type(operands).__name__}; wrap one tensor as (x,)")
    chosen = true_fn if _truth("cond", pred, "pred") else false_fn
    return chosen(*operands)


def while_loop(cond_fn: Callable, body_fn: Callable, carried_inputs: Sequence) -> tuple:
    """Run ``carried = body_fn(*carried)`` while ``cond_fn(*carried)`` holds; return the final ``carried``.

    ``body_fn`` must return as many values as it takes, each of the same shape and dtype (ints stay ints).
    """
    if not isinstance(carried_inputs, (tuple, list)):
        raise RuntimeError(f"while_loop: expected carried_inputs to be a tuple or list, got "
                           f"{type(carried_inputs).__name__}")
    carried = tuple(carried_inputs)
    while _truth("while_loop", cond_fn(*carried), "cond_fn to return a boolean"):
        result = body_fn(*carried)
        result = tuple(result) if isinstance(result, (tuple, list)) else (result,)
        _check_same_kind(carried, result)
        carried = result
    return carried


def _check_same_kind(before: tuple, after: tuple) -> None:
    if len(before) != len(after):
        raise RuntimeError(f"while_loop: body_fn must return as many values as it takes: it took {len(before)} "
                           f"and returned {len(after)}")
    for i, (old, new) in enumerate(zip(before, after)):
        if isinstance(old, Tensor):
            if not isinstance(new, Tensor) or old.shape != new.shape or old.dtype != new.dtype:
                described = (f"shape {list(new.shape)} and dtype {new.dtype}" if isinstance(new, Tensor)
                             else type(new).__name__)
                raise RuntimeError(
                    f"while_loop: body_fn's output {i} must keep its input's shape {list(old.shape)} and dtype "
                    f"{old.dtype}, got {described}")
        elif type(old) is not type(new):
            raise RuntimeError(f"while_loop: body_fn's output {i} must be a {type(old).__name__} as its input is, "
                               f"got {type(new).__name__}")


# ----------------------------------------------------------------- symbolic-size helpers, on plain numbers


def sym_int(a) -> int:
    """``int(a)``: under torch's tracing a symbolic size, in ember's eager world a number."""
    return int(a)


def sym_float(a) -> float:
    """``float(a)``."""
    return float(a)


def sym_not(a) -> bool:
    """``not a``."""
    return not a


def sym_max(a, b):
    """The larger of two numbers."""
    return max(a, b)


def sym_min(a, b):
    """The smaller of two numbers."""
    return min(a, b)


def sym_sqrt(a) -> float:
    """The square root of a number, as a float."""
    return math.sqrt(a)


def sym_ite(b, t, f):
    """``t if b else f``."""
    return t if b else f


def sym_sum(args):
    """The sum of the numbers in ``args``."""
    return sum(args)
