"""``Node``: one operation of a :class:`~ember.fx.Graph`, and the helpers that walk its arguments.

A node's ``args`` and ``kwargs`` hold constants, other nodes, and lists, tuples,
dicts and slices of those. The graph keeps the def-use chains up to date: setting
``node.args`` updates ``users`` of every node it reads.

>>> import operator
>>> from ember.fx import Graph
>>> g = Graph()
>>> x = g.placeholder("x")
>>> y = g.call_function(operator.add, (x, 1))
>>> list(x.users), y.all_input_nodes
([add], [x])
"""
from __future__ import annotations

import builtins
import types
from typing import Any, Callable, Optional, Union

__all__ = ["Node", "map_arg", "map_aggregate", "Argument", "Target"]

Target = Union[Callable[..., Any], str]
Argument = Optional[Union[tuple, list, dict, slice, range, "Node", str, int, float, bool, complex, types.EllipsisType]]

_OPCODES = frozenset({"placeholder", "get_attr", "call_function", "call_method", "call_module", "output", "root"})


def map_aggregate(a: Argument, fn: Callable[[Argument], Argument]) -> Argument:
    """Apply ``fn`` to each leaf of ``a``, rebuilding the tuples (named ones too), lists, dicts and slices around it."""
    if isinstance(a, tuple):
        mapped = [map_aggregate(elem, fn) for elem in a]
        return type(a)(*mapped) if hasattr(a, "_fields") else tuple(mapped)
    if isinstance(a, list):
        return [map_aggregate(elem, fn) for elem in a]
    if isinstance(a, dict):
        return {key: map_aggregate(value, fn) for key, value in a.items()}
    if isinstance(a, slice):
        return slice(map_aggregate(a.start, fn), map_aggregate(a.stop, fn), map_aggregate(a.step, fn))
    return fn(a)


def map_arg(a: Argument, fn: Callable[[Node], Argument]) -> Argument:
    """Apply ``fn`` to each :class:`Node` inside ``a``; other leaves are kept.

    >>> map_arg((1, [2]), lambda n: n)
    (1, [2])
    """
    if not callable(fn):
        raise TypeError(f"map_arg(a, fn): fn must be callable, got {type(fn).__name__}")
    return map_aggregate(a, lambda x: fn(x) if isinstance(x, Node) else x)


def _get_qualified_name(func: Callable) -> str:
    """The dotted name generated code uses to reach ``func``: ``ember.relu``, ``math.sqrt``, ``getattr``."""
    from ember.overrides import resolve_name

    name = resolve_name(func)
    if name is not None and not name.endswith(("__get__", "__set__", "__delete__")):
        return name
    if getattr(builtins, func.__name__, None) is func:
        return func.__name__
    return f"{getattr(func, '__module__', None) or 'builtins'}.{func.__name__}"


def _pretty_print_target(target: Target) -> str:
    """How graphs print a target: strings as they are, ``builtins.getattr``, ``operator.add``, ``ember.relu``."""
    if isinstance(target, str):
        return target
    module = getattr(target, "__module__", None)
    if module == "builtins":
        return f"builtins.{target.__name__}"
    if module == "_operator":
        return f"operator.{target.__name__}"
    return _get_qualified_name(target)


def _format_arg(arg: Argument) -> str:
    """An argument as ``str(graph)`` prints it: nodes as ``%name``, dicts as ``{key: value}``."""
    if isinstance(arg, list):
        return "[" + ", ".join(_format_arg(a) for a in arg) + "]"
    if isinstance(arg, tuple):
        items = ", ".join(_format_arg(a) for a in arg)
        return f"({items},)" if len(arg) == 1 else f"({items})"
    if isinstance(arg, dict):
        return "{" + ", ".join(f"{k}: {_format_arg(v)}" for k, v in arg.items()) + "}"
    if isinstance(arg, Node):
        return f"%{arg}"
    return str(arg)


def _type_repr(t: Any) -> str:
    if isinstance(t, type):
        return t.__qualname__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"
    return repr(t)


class Node:
    """One operation in a graph: what it does (``op``, ``target``) and on what (``args``, ``kwargs``).

    ``op`` is one of ``placeholder`` (an input of the function), ``get_attr`` (a
    parameter, buffer or submodule of the root module), ``call_function``,
    ``call_method`` (``target`` is the method name, ``args[0]`` the object),
    ``call_module`` (``target`` is the submodule's dotted path) and ``output``.
    """

    def __init__(self, graph: Any, name: str, op: str, target: Target, args: tuple, kwargs: dict,
                 return_type: Any = None) -> None:
        if op not in _OPCODES:
            raise ValueError(f"Node: op must be one of {sorted(_OPCODES - {'root'})}, got {op!r}")
        if op == "call_function" and not callable(target):
            raise ValueError(f"Node [{op}]: target {target!r} has type {type(target).__name__}, not a callable")
        if op in ("placeholder", "get_attr", "call_method", "call_module", "output") and not isinstance(target, str):
            raise ValueError(f"Node [{op}]: target {target!r} has type {type(target).__name__}, not a str")
        self.graph = graph
        self.name = name
        self.op = op
        self.target = target
        self._input_nodes: dict[Node, None] = {}
        self.users: dict[Node, None] = {}
        self.type = return_type
        self._prev = self
        self._next = self
        self._erased = False
        self.meta: dict[str, Any] = {}
        self._args: tuple = ()
        self._kwargs: dict = {}
        self._update_args_kwargs(args, kwargs)

    # ------------------------------------------------------------------ the linked list of the graph

    @property
    def next(self) -> Node:
        """The node after this one (the graph's sentinel after the last)."""
        return self._next

    @property
    def prev(self) -> Node:
        """The node before this one (the graph's sentinel before the first)."""
        return self._prev

    def prepend(self, x: Node) -> None:
        """Move ``x`` to just before this node."""
        if self is x:
            raise ValueError("Node.prepend: cannot put a node before itself")
        if self.graph is not x.graph:
            raise ValueError("Node.prepend: the two nodes belong to different graphs")
        x._remove_from_list()
        p = self._prev
        p._next, x._prev = x, p
        x._next, self._prev = self, x

    def append(self, x: Node) -> None:
        """Move ``x`` to just after this node."""
        self._next.prepend(x)

    def _remove_from_list(self) -> None:
        # the node keeps its own links, so an iteration that erases the current node can step on from it
        p, n = self._prev, self._next
        p._next, n._prev = n, p

    # ------------------------------------------------------------------ arguments and uses

    @property
    def args(self) -> tuple:
        """The positional arguments; assigning them updates the ``users`` of the nodes involved."""
        return self._args

    @args.setter
    def args(self, a: tuple) -> None:
        self._update_args_kwargs(a, self._kwargs)

    @property
    def kwargs(self) -> dict:
        """The keyword arguments; assigning them updates the ``users`` of the nodes involved."""
        return self._kwargs

    @kwargs.setter
    def kwargs(self, k: dict) -> None:
        self._update_args_kwargs(self._args, k)

    @property
    def all_input_nodes(self) -> list[Node]:
        """The distinct nodes this one reads, in the order they first appear in ``args`` then ``kwargs``."""
        return list(self._input_nodes)

    def update_arg(self, idx: int, arg: Argument) -> None:
        """Set ``args[idx]`` to ``arg``."""
        args = list(self.args)
        args[idx] = arg
        self.args = tuple(args)

    def update_kwarg(self, key: str, arg: Argument) -> None:
        """Set ``kwargs[key]`` to ``arg``."""
        self.kwargs = {**self.kwargs, key: arg}

    def _update_args_kwargs(self, new_args: tuple, new_kwargs: dict) -> None:
        for old_input in self._input_nodes:
            old_input.users.pop(self)
        self._input_nodes = {}
        self._args = map_arg(tuple(new_args), self._register_input)
        self._kwargs = map_arg(dict(new_kwargs), self._register_input)
        for new_input in self._input_nodes:
            new_input.users.setdefault(self)

    def _register_input(self, n: Node) -> Node:
        if getattr(n, "_erased", False):
            raise RuntimeError(f"Node {self.name}: argument {n.name} has been erased from its graph; "
                               "it cannot be used as an input")
        self._input_nodes.setdefault(n)
        return n

    def replace_all_uses_with(self, replace_with: Node, delete_user_cb: Callable[[Node], bool] = lambda user: True,
                              *, propagate_meta: bool = False) -> list[Node]:
        """Make every user of this node read ``replace_with`` instead; return the users changed.

        ``delete_user_cb(user)`` returning False keeps that user as it is.
        """
        if propagate_meta:
            if replace_with.meta:
                raise RuntimeError("Node.replace_all_uses_with(propagate_meta=True): the replacement already has "
                                   "meta, which would be overwritten; pass a node with empty meta")
            replace_with.meta.update(self.meta)
        changed = [user for user in list(self.users) if delete_user_cb(user)]
        for user in changed:
            user._replace_input(self, replace_with)
        return changed

    def replace_input_with(self, old_input: Node, new_input: Node) -> None:
        """Read ``new_input`` wherever this node read ``old_input``."""
        self._replace_input(old_input, new_input)

    def _replace_input(self, old: Node, new: Node) -> None:
        swap = lambda n: new if n is old else n  # noqa: E731 (a one-line mapping)
        self._update_args_kwargs(map_arg(self._args, swap), map_arg(self._kwargs, swap))

    # ------------------------------------------------------------------ properties used by passes

    def is_impure(self) -> bool:
        """Whether dead-code elimination must keep this node though nothing uses its value."""
        if self.op in ("placeholder", "output"):
            return True
        if self.op == "call_module":
            owner = self.graph.owning_module
            return owner is not None and getattr(owner.get_submodule(self.target), "_is_impure", False)
        if self.op == "call_function":
            from ember.fx._side_effects import has_side_effects

            return has_side_effects(self.target)
        return False

    @property
    def stack_trace(self) -> str | None:
        """Where the traced program made this call, if it was recorded."""
        return self.meta.get("stack_trace")

    # ------------------------------------------------------------------ printing

    def __repr__(self) -> str:
        return self.name

    def format_node(self, placeholder_names: list[str] | None = None,
                    maybe_return_typename: list[str] | None = None) -> str | None:
        """This node as one line of ``str(graph)``; None for placeholders when ``placeholder_names`` collects them."""
        if self.op == "placeholder":
            arg_str = self.target + (f": {_type_repr(self.type)}" if self.type else "")
            if placeholder_names:  # as in torch.fx: an empty list collects nothing, so str(graph) lists inputs
                placeholder_names.append(arg_str)
                return None
            typename = f"{_type_repr(self.type)} " if self.type else ""
            default = f"(default={self.args[0]})" if self.args else ""
            return f"%{self.name} : {typename}[num_users={len(self.users)}] = {self.op}[target={self.target}]{default}"
        typename = f"{_type_repr(self.type)} " if self.type is not None else ""
        if self.op == "get_attr":
            return f"%{self.name} : {typename}[num_users={len(self.users)}] = {self.op}[target={self.target}]"
        if self.op == "output":
            if self.type and maybe_return_typename:
                maybe_return_typename[0] = f" -> {_type_repr(self.type)}"
            return f"return {self.args[0]}"
        return (f"%{self.name} : {typename}[num_users={len(self.users)}] = "
                f"{self.op}[target={_pretty_print_target(self.target)}]("
                f"args = {_format_arg(self.args)}, kwargs = {_format_arg(self.kwargs)})")
