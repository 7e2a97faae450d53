"""Which functions dead-code elimination must keep though their results go unused."""
from __future__ import annotations

from typing import Callable

_side_effectful_functions: set = set()


def register_side_effect(fn: Callable) -> Callable:
    """Mark ``fn`` as having effects beyond its result (an assertion, say), so passes keep its calls."""
    _side_effectful_functions.add(fn)
    return fn


def has_side_effects(fn: Callable) -> bool:
    try:
        return fn in _side_effectful_functions
    except TypeError:  # an unhashable callable cannot have been registered
        return False
