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
import warnings
from typing import Callable

_ids = itertools.count()


def unserializable_hook(f: Callable) -> Callable:
    """Mark ``f`` as a hook that is knowingly not saved with its tensor: saving the tensor then does not warn.

    The mark is torch's attribute, ``__torch_unserializable__``, so a hook marked for torch is marked here too.

    >>> @unserializable_hook
    ... def log_gradient(grad):
    ...     print(grad)
    >>> log_gradient.__torch_unserializable__
    True
    """
    f.__torch_unserializable__ = True
    return f


def warn_if_has_hooks(tensor) -> None:
    """Warn of each hook registered on ``tensor`` (``register_hook``) that saving it would drop, unless the hook
    is marked with :func:`unserializable_hook`."""
    for hook in (tensor._hooks or {}).values():
        if not hasattr(hook, "__torch_unserializable__"):
            warnings.warn(f"backward hook {hook!r} on tensor will not be serialized. If this is expected, you can "
                          "decorate the function with @ember.utils.hooks.unserializable_hook to suppress this warning",
                          stacklevel=3)


class RemovableHandle:
    """Returned by ``register_*hook``; ``remove()`` unregisters the hook (also usable as a context manager).

    As in torch, code that keeps its own hooks may make one: ``RemovableHandle(hooks)`` takes a fresh ``id``, under
    which the caller stores its hook in ``hooks``. Its id is also removed from each of ``extra_dict`` (a dict or a
    list of them), where the hook's flags live, so that no stale entry is left behind.

    >>> hooks, flags = {}, {}
    >>> handle = RemovableHandle(hooks, extra_dict=flags)
    >>> hooks[handle.id] = print; flags[handle.id] = True
    >>> handle.remove(); hooks, flags
    ({}, {})
    """

    def __init__(self, hooks_dict: dict, *, extra_dict: dict | list[dict] | None = None) -> None:
        # Held strongly, not by weak reference as in torch: the modules keep their hooks in plain dicts, which
        # cannot be weakly referenced; a handle then keeps only a dict alive, never its module.
        self._hooks = hooks_dict
        self.id = next(_ids)
        self._linked = (extra_dict,) if isinstance(extra_dict, dict) else tuple(extra_dict or ())

    @classmethod
    def add(cls, hooks: dict, fn: Callable, *linked: dict) -> "RemovableHandle":
        """Register ``fn`` in ``hooks`` under a new handle's id; ``linked`` dicts get that id's flags."""
        handle = cls(hooks, extra_dict=list(linked))
        hooks[handle.id] = fn
        return handle

    def hooks_dict_ref(self) -> dict:
        """The dict the hook is registered in (torch's ``hooks_dict_ref`` is a weak reference: call it the same)."""
        return self._hooks

    @property
    def extra_dict_ref(self) -> tuple:
        """One callable per ``extra_dict``, returning it (as torch's weak references do)."""
        return tuple((lambda d=d: d) for d in self._linked)

    def remove(self) -> None:
        self._hooks.pop(self.id, None)
        for other in self._linked:
            other.pop(self.id, None)

    def __enter__(self) -> "RemovableHandle":
        return self

    def __exit__(self, *exc) -> None:
        self.remove()
