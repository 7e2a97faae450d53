"""``torch.multiprocessing``: Python's ``multiprocessing``, plus ``spawn`` to start one function on N ranks.

Everything of the standard library's module is here under the same names (``Process``, ``Queue``,
``get_context``, ...). Ember tensors are pickled with their data when they cross processes: there is no
shared-memory storage, so the sharing strategies only record a choice, as torch's names do.

>>> import ember.multiprocessing as mp
>>> mp.get_sharing_strategy() in mp.get_all_sharing_strategies()
True
"""
from __future__ import annotations

import multiprocessing
import sys
from multiprocessing import *  # noqa: F401,F403  (the module re-exported, as torch's is)

from ember.multiprocessing.spawn import (
    ProcessContext, ProcessExitedException, ProcessRaisedException, spawn, start_processes,
)

__all__ = [
    "ProcessContext", "ProcessExitedException", "ProcessRaisedException",
    "get_all_sharing_strategies", "get_sharing_strategy", "set_sharing_strategy", "spawn", "start_processes",
]
__all__ += multiprocessing.__all__

if sys.platform in ("darwin", "win32"):
    _all_sharing_strategies = {"file_system"}
else:
    _all_sharing_strategies = {"file_descriptor", "file_system"}
_sharing_strategy = "file_system" if sys.platform in ("darwin", "win32") else "file_descriptor"


def set_sharing_strategy(new_strategy: str) -> None:
    """Choose how tensors would be shared between processes: one of ``get_all_sharing_strategies()``."""
    global _sharing_strategy
    if new_strategy not in _all_sharing_strategies:
        raise AssertionError(
            f"set_sharing_strategy: invalid sharing strategy {new_strategy!r}, "
            f"expected one of {sorted(_all_sharing_strategies)}"
        )
    _sharing_strategy = new_strategy


def get_sharing_strategy() -> str:
    """The strategy last set (``"file_descriptor"`` on Linux by default, as torch's)."""
    return _sharing_strategy


def get_all_sharing_strategies() -> set[str]:
    """The strategies this platform knows."""
    return set(_all_sharing_strategies)
