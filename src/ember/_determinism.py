"""Deterministic algorithms: every ember op is deterministic already, so the switch is kept and reported.

ember's ops are NumPy calls on one thread of Python: the same inputs give the same bits on every run
(BLAS may sum in another order with another number of threads, as torch's CPU ops do). Nothing needs
to be switched off, and nothing raises for lack of a deterministic version.

>>> import ember
>>> ember.use_deterministic_algorithms(True)
>>> ember.are_deterministic_algorithms_enabled()
True
>>> ember.use_deterministic_algorithms(False)
"""
from __future__ import annotations

__all__ = [
    "are_deterministic_algorithms_enabled", "get_deterministic_debug_mode",
    "is_deterministic_algorithms_warn_only_enabled", "set_deterministic_debug_mode", "use_deterministic_algorithms",
]

_state = {"enabled": False, "warn_only": False}
_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Ask for deterministic algorithms (ember's are all deterministic); ``warn_only`` is kept, as torch's."""
    if type(mode) is not bool:
        raise TypeError(
            f"use_deterministic_algorithms(): argument 'mode' (position 1) must be bool, not {type(mode).__name__}"
        )
    if type(warn_only) is not bool:
        raise TypeError(
            f"use_deterministic_algorithms(): argument 'warn_only' must be bool, not {type(warn_only).__name__}"
        )
    _state["enabled"], _state["warn_only"] = mode, warn_only


def are_deterministic_algorithms_enabled() -> bool:
    return _state["enabled"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    return _state["warn_only"]


def set_deterministic_debug_mode(debug_mode: str | int) -> None:
    """``"default"`` (0), ``"warn"`` (1) or ``"error"`` (2): the same switch as :func:`use_deterministic_algorithms`."""
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError(
                f"invalid value of debug_mode, expected one of `default`, `warn`, `error`, but got {debug_mode}"
            )
        debug_mode = _DEBUG_MODES[debug_mode]
    if type(debug_mode) is not int:
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode).__name__}")
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}")
    use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode() -> int:
    return 0 if not _state["enabled"] else 1 if _state["warn_only"] else 2
