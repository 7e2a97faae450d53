"""The globals a weights-only load may call beyond the built-in ones, chosen by the user.

A global is named as a pickle names it, ``module.qualname``; ``add_safe_globals``
also takes ``(obj, "module.name")`` for an object saved under another name.
"""
from __future__ import annotations

import contextlib
from typing import Any, Iterable

_user: dict[str, Any] = {}


def _default_name(obj) -> str | None:
    module, name = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    return None if module is None or name is None else f"{module}.{name}"


def _entry(item) -> tuple[str, Any]:
    if isinstance(item, tuple):
        if len(item) != 2 or not isinstance(item[1], str):
            raise TypeError(
                f"add_safe_globals: a tuple must be (object, 'module.name'), got {item!r}"
            )
        return item[1], item[0]
    name = _default_name(item)
    if name is None:
        raise TypeError(
            f"add_safe_globals: {item!r} has no __module__ and __qualname__ to be found by in a pickle; "
            "pass (obj, 'module.name') instead"
        )
    return name, item


def add_safe_globals(safe_globals: Iterable) -> None:
    """Let ``ember.load(..., weights_only=True)`` call these classes and functions when a file names them.

    Each item is an object or ``(object, "module.name")``.

    >>> import ember, collections
    >>> ember.serialization.add_safe_globals([collections.namedtuple])
    >>> collections.namedtuple in ember.serialization.get_safe_globals()
    True
    >>> ember.serialization.clear_safe_globals()
    """
    if isinstance(safe_globals, (str, bytes)) or not isinstance(safe_globals, Iterable):
        raise TypeError(f"add_safe_globals: expected a list of globals, got {type(safe_globals).__name__}")
    _user.update(_entry(item) for item in safe_globals)


def get_safe_globals() -> list:
    """The globals added with ``add_safe_globals`` (objects, or ``(object, name)`` where named otherwise)."""
    return [obj if _default_name(obj) == name else (obj, name) for name, obj in _user.items()]


def clear_safe_globals() -> None:
    """Forget every global added with ``add_safe_globals``."""
    _user.clear()


@contextlib.contextmanager
def safe_globals(safe_globals: Iterable):
    """Allow these globals within a ``with`` block only, restoring the list as it was afterwards.

    >>> import ember, collections
    >>> with ember.serialization.safe_globals([collections.namedtuple]):
    ...     len(ember.serialization.get_safe_globals())
    1
    >>> ember.serialization.get_safe_globals()
    []
    """
    before = dict(_user)
    add_safe_globals(safe_globals)
    try:
        yield
    finally:
        _user.clear()
        _user.update(before)


def user_global(name: str):
    """The object added under ``name``, or None."""
    return _user.get(name)


def is_user_global(obj) -> bool:
    """Whether ``obj`` itself was added with ``add_safe_globals`` (under any name)."""
    return any(added is obj for added in _user.values())
