"""``ember.ops``: the operators users define with ``ember.library``, reached as ``ember.ops.<namespace>.<name>``.

A plain dict maps each namespace to its operators; ``ember.library`` fills it.

>>> ember.ops.no_such_namespace.no_such_op
Traceback (most recent call last):
  ...
AttributeError: '_OpNamespace' 'no_such_namespace' object has no attribute 'no_such_op'
"""
from __future__ import annotations

from typing import Any

from ember._aten_names import packet as builtin_packet

namespaces: dict[str, dict[str, Any]] = {}  # namespace -> operator name -> its OpOverloadPacket


class _OpNamespace:
    """``ember.ops.mylib``: the operators of one namespace, as attributes."""

    def __init__(self, name: str):
        self.name = name

    def __getattr__(self, op_name: str):
        if op_name.startswith("__"):  # (copy, pickle and doctest probe dunder names)
            raise AttributeError(op_name)
        packet = namespaces.get(self.name, {}).get(op_name)
        if packet is None and self.name == "aten":  # ember's built-in ops, by name (see ember._aten_names)
            packet = builtin_packet(op_name)
        if packet is None:
            raise AttributeError(f"'_OpNamespace' '{self.name}' object has no attribute '{op_name}'")
        return packet

    def __repr__(self) -> str:
        return f"<ember.ops namespace '{self.name}'>"


class _Ops:
    """``ember.ops``: any attribute is a namespace (empty until an operator is defined in it), as in torch."""

    def __getattr__(self, name: str) -> _OpNamespace:
        if name.startswith("__"):
            raise AttributeError(name)
        return _OpNamespace(name)

    def __repr__(self) -> str:
        return "ember.ops"


ops = _Ops()
