"""``ember.compiler``: the questions programs ask of torch's compiler, answered for ember, which has none.

>>> import ember
>>> ember.compiler.is_compiling()
False
"""
from __future__ import annotations

from typing import Callable

__all__ = ["disable", "is_compiling", "is_dynamo_compiling", "reset"]


def is_compiling() -> bool:
    """False: nothing in ember is ever being compiled."""
    return False


is_dynamo_compiling = is_compiling


def disable(fn: Callable | None = None, recursive: bool = True, *, reason: str | None = None) -> Callable:
    """Mark ``fn`` as not to be compiled: it is returned unchanged (as a decorator, with or without arguments)."""
    return fn if fn is not None else (lambda f: f)


def reset() -> None:
    """Nothing to forget: ember keeps no compiled code."""
