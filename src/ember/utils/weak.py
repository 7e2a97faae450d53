"""Weak references and dictionaries keyed by object identity, for tensors (whose ``==`` compares elements).

>>> import ember
>>> from ember.utils.weak import WeakIdKeyDictionary
>>> a, b = ember.zeros(2), ember.zeros(2)
>>> seen = WeakIdKeyDictionary({a: "a", b: "b"})
>>> len(seen), seen[b]
(2, 'b')
>>> del a
>>> len(seen)
1
"""
from __future__ import annotations

import weakref
from collections.abc import Iterator, Mapping, MutableMapping
from typing import Any

__all__ = ["TensorWeakRef", "WeakIdRef", "WeakIdKeyDictionary", "WeakTensorKeyDictionary"]


class WeakIdRef(weakref.ref):
    """A weak reference hashed by its referent's ``id``; two are equal when they refer to the same live object
    (a dead one equals only itself).

    >>> import ember
    >>> t = ember.ones(1)
    >>> WeakIdRef(t) == WeakIdRef(t), hash(WeakIdRef(t)) == id(t)
    (True, True)
    """

    __slots__ = ["_id"]

    def __init__(self, key, callback=None) -> None:
        self._id = id(key)
        super().__init__(key, callback)

    def __hash__(self) -> int:
        return self._id

    def __eq__(self, other) -> bool:
        mine, theirs = self(), other() if isinstance(other, weakref.ref) else None
        if mine is not None and theirs is not None:
            return mine is theirs
        return self is other


class _WeakIdRefWithoutCallback(WeakIdRef):
    """For looking a key up: a reference made and dropped at once needs no callback."""

    __slots__ = []


class WeakIdKeyDictionary(MutableMapping):
    """A dictionary whose keys are held weakly and compared by identity; an entry goes when its key dies.

    ``ref_type`` makes the references to the keys (a subclass of :class:`WeakIdRef`).
    """

    def __init__(self, dict: Mapping | None = None, ref_type: type = WeakIdRef) -> None:  # noqa: A002 (torch's name)
        self.data: dict = {}
        self.ref_type = ref_type
        self._pending_removals: list = []
        self._iterating = 0
        self_ref = weakref.ref(self)

        def remove(dead_ref) -> None:
            mapping = self_ref()
            if mapping is not None:
                if mapping._iterating:  # the dict must not change size under an iteration
                    mapping._pending_removals.append(dead_ref)
                else:
                    mapping.data.pop(dead_ref, None)

        self._remove = remove
        if dict is not None:
            self.update(dict)

    def _commit_removals(self) -> None:
        while self._pending_removals:
            self.data.pop(self._pending_removals.pop(), None)

    def _lookup(self, key) -> WeakIdRef:
        return _WeakIdRefWithoutCallback(key)

    def __getitem__(self, key) -> Any:
        return self.data[self._lookup(key)]

    def __setitem__(self, key, value) -> None:
        self.data[self.ref_type(key, self._remove)] = value

    def __delitem__(self, key) -> None:
        self._commit_removals()
        del self.data[self._lookup(key)]

    def __contains__(self, key) -> bool:
        try:
            ref = self._lookup(key)
        except TypeError:  # (an object that cannot be weakly referenced is no key)
            return False
        return ref in self.data

    def __len__(self) -> int:
        return len(self.data) - len(self._pending_removals)

    def __iter__(self) -> Iterator:
        self._iterating += 1
        try:
            for ref in list(self.data):
                key = ref()
                if key is not None:
                    yield key
        finally:
            self._iterating -= 1
            if not self._iterating:
                self._commit_removals()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} at {id(self):#x}>"

    def keyrefs(self) -> list:
        """The weak references to the keys."""
        return list(self.data)

    def copy(self) -> "WeakIdKeyDictionary":
        return type(self)({key: value for key, value in self.items()}, ref_type=self.ref_type)

    __copy__ = copy

    def popitem(self) -> tuple:
        self._commit_removals()
        while True:
            ref, value = self.data.popitem()
            key = ref()
            if key is not None:
                return key, value

    def pop(self, key, *default) -> Any:
        self._commit_removals()
        return self.data.pop(self._lookup(key), *default)

    def setdefault(self, key, default=None) -> Any:
        return self.data.setdefault(self.ref_type(key, self._remove), default)

    def __eq__(self, other) -> bool:
        if not isinstance(other, Mapping):
            return NotImplemented
        return {id(k): v for k, v in self.items()} == {id(k): v for k, v in other.items()}

    def __or__(self, other):
        if not isinstance(other, Mapping):
            return NotImplemented
        merged = self.copy()
        merged.update(other)
        return merged

    def __ror__(self, other):
        if not isinstance(other, Mapping):
            return NotImplemented
        merged = type(self)(ref_type=self.ref_type)
        merged.update(other)
        merged.update(self)
        return merged

    def __ior__(self, other):
        self.update(other)
        return self


WeakTensorKeyDictionary = WeakIdKeyDictionary


class TensorWeakRef:
    """A weak reference to a tensor: ``ref()`` is the tensor, or None once it has died.

    >>> import ember
    >>> t = ember.ones(1)
    >>> ref = TensorWeakRef(t)
    >>> ref() is t
    True
    """

    __slots__ = ["ref"]

    def __init__(self, tensor) -> None:
        from ember._tensor import Tensor

        if not isinstance(tensor, Tensor):
            raise AssertionError(f"TensorWeakRef: expected a Tensor, got {type(tensor).__name__}")
        self.ref = weakref.ref(tensor)

    def __call__(self):
        return self.ref()
