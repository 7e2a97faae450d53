"""The Python source of a graph: what ``GraphModule.code`` shows and what its ``forward`` runs.

The layout is torch.fx's: one statement per node, operators written as
operators, ``getattr(self.body, "0")`` for path parts that are not identifiers,
and ``;  a = b = None`` after the last use of values, so memory is freed early.
Functions of ember are written by their public name (``ember.relu``) and reach
the generated code through the global ``ember``; other functions get a global
name of their own (``math_sqrt``).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Callable

import ember
from ember.fx._names import Namespace, _illegal_names
from ember.fx.node import Argument, Node, _get_qualified_name, _type_repr

# Names every generated module can use without defining them.
_CUSTOM_BUILTINS: dict[str, Any] = {"inf": math.inf, "nan": math.nan, "NoneType": type(None), "ember": ember,
                                    "device": ember.device}
_illegal_names.update(_CUSTOM_BUILTINS)

# operator.<name> -> the expression it stands for
_MAGIC = {
    "add": "{} + {}", "sub": "{} - {}", "mul": "{} * {}", "floordiv": "{} // {}", "truediv": "{} / {}",
    "div": "{} / {}", "mod": "{} % {}", "pow": "{} ** {}", "lshift": "{} << {}", "rshift": "{} >> {}",
    "and_": "{} & {}", "or_": "{} | {}", "xor": "{} ^ {}", "getitem": "{}[{}]", "matmul": "{} @ {}",
    "eq": "{} == {}", "ne": "{} != {}", "lt": "{} < {}", "gt": "{} > {}", "le": "{} <= {}", "ge": "{} >= {}",
    "pos": "+{}", "neg": "-{}", "invert": "~{}",
}

_from_ember = re.compile(r"^ember(\.[^.]+)*$").fullmatch


def _is_from_ember(obj: Any) -> bool:
    module = getattr(obj, "__module__", None)
    return module is not None and _from_ember(module) is not None


def _format_target(base: str, target: str) -> str:
    """``self.layer.0`` as Python: ``getattr(self.layer, "0")``."""
    expression = base
    for part in target.split("."):
        expression = f"{expression}.{part}" if part.isidentifier() else f'getattr({expression}, "{part}")'
    return expression


@dataclass
class PythonCode:
    """Generated source and the globals it must run with."""

    src: str
    globals: dict[str, Any] = field(default_factory=dict)


class _Emitter:
    """Writes the statements of one graph; names nodes and globals as it goes, as torch.fx does."""

    def __init__(self, root_module: str) -> None:
        self.root_module = root_module
        self.namespace = Namespace()
        self.globals: dict[str, Any] = {}
        self.wrapped: dict[str, None] = {}
        self.free_vars: list[str] = []
        self.body: list[str] = []
        self.return_annotation = ""
        for name, obj in _CUSTOM_BUILTINS.items():
            self.add_global(name, obj)

    def add_global(self, name_hint: str, obj: Any) -> str:
        if _is_from_ember(obj) and obj is not ember.device:
            return _get_qualified_name(obj)
        name = self.namespace.create_name(name_hint, obj)
        self.globals[name] = obj
        return name

    def name_of(self, n: Node) -> str:
        return self.namespace.create_name(n.name, n)

    def type_repr(self, t: Any) -> str:
        return self.add_global(_type_repr(t), t)

    def repr_of(self, arg: Argument) -> str:
        if isinstance(arg, Node):
            return self.name_of(arg)
        if isinstance(arg, tuple) and hasattr(arg, "_fields"):
            return f"{self.add_global(_get_qualified_name(type(arg)), type(arg))}{tuple(arg)!r}"
        if isinstance(arg, tuple):
            inner = ", ".join(self.repr_of(a) for a in arg)
            return f"({inner},)" if len(arg) == 1 else f"({inner})"
        if isinstance(arg, list):
            return "[" + ", ".join(self.repr_of(a) for a in arg) + "]"
        if isinstance(arg, dict):
            return "{" + ", ".join(f"{k!r}: {self.repr_of(v)}" for k, v in arg.items()) + "}"
        if isinstance(arg, slice):
            return f"slice({self.repr_of(arg.start)}, {self.repr_of(arg.stop)}, {self.repr_of(arg.step)})"
        if isinstance(arg, ember.Tensor):
            return f"ember.Tensor(size={list(arg.size())}, dtype={str(arg.dtype).split('.')[-1]})"
        return repr(arg)

    def call_args(self, args: tuple, kwargs: dict) -> str:
        parts = [self.repr_of(a) for a in args]
        parts.extend(f"{k} = {self.repr_of(v)}" for k, v in kwargs.items())
        return ", ".join(parts)

    def statement(self, node: Node) -> str | None:
        """The statement computing ``node`` (None for a placeholder, which becomes a parameter)."""
        annotation = "" if node.type is None else f" : {self.type_repr(node.type)}"
        if node.op == "placeholder":
            default = f" = {self.repr_of(node.args[0])}" if node.args else ""
            self.free_vars.append(f"{node.target}{annotation}{default}")
            raw_name = node.target.replace("*", "")
            return None if raw_name == self.name_of(node) else f"{self.name_of(node)} = {raw_name}"
        if node.op == "call_method":
            receiver = _format_target(self.repr_of(node.args[0]), node.target)
            return f"{self.name_of(node)}{annotation} = {receiver}({self.call_args(node.args[1:], node.kwargs)})"
        if node.op == "call_function":
            return self.function_call(node, annotation)
        if node.op == "call_module":
            module = _format_target(self.root_module, node.target)
            return f"{self.name_of(node)}{annotation} = {module}({self.call_args(node.args, node.kwargs)})"
        if node.op == "get_attr":
            return f"{self.name_of(node)}{annotation} = {_format_target(self.root_module, node.target)}"
        if node.op == "output":
            if node.type is not None:
                self.return_annotation = f" -> {self.type_repr(node.type)}"
            return f"return {self.repr_of(node.args[0])}"
        raise NotImplementedError(f"python code: node {node.name} has op {node.op!r}, which has no Python form")

    def function_call(self, node: Node, annotation: str) -> str:
        target = node.target
        if getattr(target, "__module__", "") == "_operator" and target.__name__ in _MAGIC:
            expression = _MAGIC[target.__name__].format(*(self.repr_of(a) for a in node.args))
            return f"{self.name_of(node)}{annotation} = {expression}"
        global_name = self.add_global(_get_qualified_name(target), target)
        args = node.args
        if global_name == "getattr" and len(args) == 2 and isinstance(args[1], str) and args[1].isidentifier():
            return f"{self.name_of(node)}{annotation} = {_format_target(self.repr_of(args[0]), args[1])}"
        if node.meta.get("is_wrapped", False):
            self.wrapped.setdefault(global_name)
        return f"{self.name_of(node)}{annotation} = {global_name}({self.call_args(args, node.kwargs)})"


def _last_uses(nodes: list[Node]) -> dict[Node, list[Node]]:
    """For each node, the values whose last use it is (so the code can drop them right after it)."""
    seen: set = set()
    last_uses: dict[Node, list[Node]] = {}
    for user in reversed(nodes):
        for value in user._input_nodes:
            if value not in seen:
                seen.add(value)
                last_uses.setdefault(user, []).append(value)
    return last_uses


def python_code(nodes: list[Node], root_module: str, func_name: str = "forward") -> PythonCode:
    """The source of ``def forward(self, ...)`` computing ``nodes``, and the globals it needs."""
    emit = _Emitter(root_module)
    last_uses = _last_uses(nodes)
    lines: list[str] = []
    for node in nodes:
        statement = emit.statement(node)
        if statement is None:
            continue
        if node.op not in ("placeholder", "output"):
            to_free = list(last_uses.get(node, []))
            if not node.users:  # kept for its side effects: free its result at once
                to_free.append(node)
            if to_free:
                statement += ";  " + " = ".join([emit.name_of(n) for n in to_free] + ["None"])
        lines.append(statement)
    if not lines:
        lines.append("pass")
    wrap_statements = ""
    if emit.wrapped:
        from ember.fx._symbolic_trace import wrap

        wrap_name = emit.add_global("wrap", wrap)
        wrap_statements = "\n".join(f'{wrap_name}("{name}")' for name in emit.wrapped)
    free_vars = emit.free_vars if emit.free_vars[:1] == ["self"] else ["self", *emit.free_vars]
    params = ", ".join(free_vars)
    body = "\n".join("    " + line for line in lines)
    src = f"\n{wrap_statements}\n\ndef {func_name}({params}){emit.return_annotation}:\n{body}\n    "
    return PythonCode(src, emit.globals)
