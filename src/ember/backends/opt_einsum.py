"""``ember.backends.opt_einsum``: the switches for how ``einsum`` orders the contractions of three or more operands.

ember plans that order itself, with NumPy's path search (``np.einsum_path``), so no opt_einsum package is
needed and ``is_available()`` is True. The flags steer that search: ``enabled=False`` contracts left to right,
as torch does without opt_einsum; ``strategy`` is ``"greedy"``, ``"optimal"``, or ``"auto"`` (optimal for up to
four operands, greedy beyond).

>>> import ember
>>> ember.backends.opt_einsum.is_available(), ember.backends.opt_einsum.enabled, ember.backends.opt_einsum.strategy
(True, True, 'auto')
>>> with ember.backends.opt_einsum.flags(strategy="optimal"):
...     ember.backends.opt_einsum.strategy
'optimal'
>>> ember.backends.opt_einsum.strategy
'auto'
"""
from __future__ import annotations

import sys
import types
from contextlib import contextmanager
from typing import Any, Iterator

__all__ = ["is_available", "get_opt_einsum", "set_flags", "flags", "enabled", "strategy"]

_STRATEGIES = ("auto", "greedy", "optimal")
_flags = {"enabled": True, "strategy": "auto"}


def is_available() -> bool:
    """True: ember's einsum plans its contraction order without the opt_einsum package."""
    return True


def get_opt_einsum() -> Any:
    """The opt_einsum package if it is installed, else None (ember's einsum does not use it)."""
    try:
        import opt_einsum
    except ImportError:
        return None
    return opt_einsum


def _set_enabled(value: bool) -> None:
    _flags["enabled"] = value


def _set_strategy(value: str) -> None:
    if not _flags["enabled"]:
        raise ValueError(
            f"opt_einsum is not enabled, so setting a `strategy` to {value} will not be meaningful. einsum will "
            "contract from left to right. Set `enabled` to True as well, or leave `strategy` unset."
        )
    if value not in _STRATEGIES:
        raise ValueError(f"`strategy` must be one of the following: [auto, greedy, optimal] but is {value}")
    _flags["strategy"] = value


def set_flags(_enabled: bool | None = None, _strategy: str | None = None) -> tuple:
    """Set the flags given (None leaves one as it is); returns the flags as they were."""
    previous = (_flags["enabled"], _flags["strategy"])
    if _enabled is not None:
        _set_enabled(_enabled)
    if _strategy is not None:
        _set_strategy(_strategy)
    return previous


@contextmanager
def flags(enabled: bool | None = None, strategy: str | None = None) -> Iterator[None]:
    """The flags set within the block, restored after it."""
    previous = set_flags(enabled, strategy)
    try:
        yield
    finally:
        _flags["enabled"], _flags["strategy"] = previous


def _flag(name: str, setter) -> property:
    """A module attribute read from the flags and set through ``setter``, which checks the value."""
    return property(lambda module: _flags[name], lambda module, value: setter(value))


class _FlagsModule(types.ModuleType):
    """This module, whose ``enabled`` and ``strategy`` are checked when assigned, as torch's are."""

    enabled = _flag("enabled", _set_enabled)
    strategy = _flag("strategy", _set_strategy)


sys.modules[__name__].__class__ = _FlagsModule
