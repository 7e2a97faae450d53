"""Unique Python identifiers for nodes and for the globals generated code refers to."""
from __future__ import annotations

import builtins
import keyword
import re
from typing import Any, Callable

# Each reserved name maps to the object allowed to keep it (a builtin may be referred to by its own name).
_illegal_names: dict[str, object] = {k: object() for k in keyword.kwlist}
_illegal_names.update(builtins.__dict__)
_illegal_names.update({"ember": object(), "inf": object(), "nan": object(), "NoneType": object()})

_illegal_chars = re.compile("[^0-9a-zA-Z_]+")
_name_and_suffix = re.compile(r"^([a-zA-Z_][0-9a-zA-Z_]*?)(?:_(\d+))?$")
_lower_then_upper = re.compile(r"(?<=[a-z])([A-Z])")


def snake_case(s: str) -> str:
    """``pascalCase`` -> ``pascal_case``; ``ALL_CAPS`` -> ``all_caps``."""
    return _lower_then_upper.sub(r"_\1", s).lower()


def target_to_str(target: Callable | str) -> str:
    """The name a node of ``target`` is called by default: ``relu`` for ``ember.relu``, ``add`` for ``__add__``."""
    if callable(target):
        op = target.__name__
    else:
        op = target
        if op.startswith("__") and op.endswith("__"):
            op = op[2:-2]
    return snake_case(op)


class Namespace:
    """Gives each object one name, and no two objects the same name, never shadowing a builtin or keyword.

    >>> ns = Namespace()
    >>> ns.create_name("getattr", None), ns.create_name("x", None), ns.create_name("x", None)
    ('getattr_1', 'x', 'x_1')
    """

    def __init__(self) -> None:
        self._obj_to_name: dict[Any, str] = {}
        self._used_names: set[str] = set()
        self._base_count: dict[str, int] = {}

    def create_name(self, candidate: str, obj: Any) -> str:
        if obj is not None and obj in self._obj_to_name:
            return self._obj_to_name[obj]
        match = _name_and_suffix.match(candidate)
        if match is None:
            candidate = _illegal_chars.sub("_", candidate) or "_unnamed"
            if candidate[0].isdigit():
                candidate = f"_{candidate}"
            match = _name_and_suffix.match(candidate)
        base, num = match.group(1, 2)
        if num is None or candidate in self._used_names:
            num = self._base_count.get(base, 0)
            if _illegal_names.get(candidate, obj) is not obj:
                num += 1
                candidate = f"{base}_{num}"
        else:
            num = int(num)
        while candidate in self._used_names:
            num += 1
            candidate = f"{base}_{num}"
        self._used_names.add(candidate)
        self._base_count[base] = num
        if obj is not None:
            self._obj_to_name[obj] = candidate
        return candidate

    def associate_name_with_obj(self, name: str, obj: Any) -> None:
        if self._obj_to_name.setdefault(obj, name) is not name:
            raise RuntimeError(f"Namespace: {obj!r} already has the name {self._obj_to_name[obj]!r}")

    def rename_object(self, obj: Any, name: str) -> None:
        self._obj_to_name[obj] = name
        self._used_names.add(name)
