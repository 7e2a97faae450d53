"""Handles that remove a registered hook.

>>> hooks = {}
>>> handle = RemovableHandle.add(hooks, print)
>>> len(hooks)
1
>>> handle.remove(); len(hooks)
0
"""
from __future__ import annotations

import itertools
from typing import Callable

_ids = itertools.count()


class RemovableHandle:
    """Returned by ``register_*hook``; ``remove()`` unregisters the hook (also usable as a context manager)."""

    def __init__(self, hooks: dict, key: int):
        self._hooks = hooks
        self.id = key

    @classmethod
    def add(cls, hooks: dict, fn: Callable) -> "RemovableHandle":
        key = next(_ids)
        hooks[key] = fn
        return cls(hooks, key)

    def remove(self) -> None:
        self._hooks.pop(self.id, None)

    def __enter__(self) -> "RemovableHandle":
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


class _LinkedRemovableHandle(RemovableHandle):
    """A handle whose hook id is also a key of other dicts (its flags, an index of all hooks); ``remove()``
    clears it from them too, so that no stale entry makes a module look hooked.

    >>> hooks, flags = {}, {}
    >>> handle = _LinkedRemovableHandle.add(hooks, print, flags)
    >>> flags[handle.id] = True
    >>> handle.remove(); hooks, flags
    ({}, {})
    """

    def __init__(self, hooks: dict, key: int, linked: tuple = ()):
        super().__init__(hooks, key)
        self._linked = linked

    @classmethod
    def add(cls, hooks: dict, fn: Callable, *linked: dict) -> "_LinkedRemovableHandle":
        handle = super().add(hooks, fn)
        handle._linked = linked
        return handle

    def remove(self) -> None:
        super().remove()
        for other in self._linked:
            other.pop(self.id, None)
