"""``Graph``: the operations of a traced program, in order, as a doubly linked list of :class:`Node`.

>>> import operator
>>> g = Graph()
>>> x = g.placeholder("x")
>>> y = g.call_function(ember.relu, (x,))
>>> _ = g.output(g.call_function(operator.add, (y, 1)))
>>> print(g)
graph():
    %x : [num_users=1] = placeholder[target=x]
    %relu : [num_users=1] = call_function[target=ember.relu](args = (%x,), kwargs = {})
    %add : [num_users=1] = call_function[target=operator.add](args = (%relu, 1), kwargs = {})
    return add
"""
from __future__ import annotations

import copy
import inspect
import warnings
from typing import Any, Callable, Iterator

from ember.fx._codegen import PythonCode, python_code
from ember.fx._names import Namespace, target_to_str
from ember.fx._table import plain_table
from ember.fx.node import Argument, Node, Target, _pretty_print_target, map_arg

__all__ = ["Graph", "PythonCode"]


class _NodeList:
    """A live view of a graph's nodes; erasing the node being visited during iteration is allowed."""

    def __init__(self, graph: Graph, direction: str = "_next") -> None:
        self.graph = graph
        self.direction = direction

    def __len__(self) -> int:
        return self.graph._len

    def __iter__(self) -> Iterator[Node]:
        root = self.graph._root
        cur = getattr(root, self.direction)
        while cur is not root:
            if not cur._erased:
                yield cur
            cur = getattr(cur, self.direction)

    def __reversed__(self) -> Iterator[Node]:
        return iter(_NodeList(self.graph, "_prev" if self.direction == "_next" else "_next"))


class _InsertPoint:
    """Makes new nodes go to another place in the graph for the length of a ``with`` block."""

    def __init__(self, graph: Graph, insert: Callable[[Node], None]) -> None:
        self.graph = graph
        self.saved, graph._insert = graph._insert, insert

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: Any) -> bool:
        self.graph._insert = self.saved
        return False


class Graph:
    """The intermediate representation of ``ember.fx``: placeholders, operations and one output.

    Build one by tracing (:func:`ember.fx.symbolic_trace`) or by hand with
    :meth:`placeholder`, :meth:`call_function` and the other ``create_node`` shortcuts.
    """

    def __init__(self, owning_module: Any = None, tracer_cls: type | None = None,
                 tracer_extras: dict | None = None) -> None:
        self._root = Node(self, "", "root", "", (), {})
        self._insert: Callable[[Node], None] = self._root.prepend
        self._len = 0
        self._graph_namespace = Namespace()
        self._owning_module = owning_module
        self._tracer_cls = tracer_cls
        self._tracer_extras = tracer_extras
        self._co_fields: dict = {}

    @property
    def owning_module(self) -> Any:
        """The GraphModule this graph belongs to (None when it has none, or more than one)."""
        return self._owning_module

    @owning_module.setter
    def owning_module(self, mod: Any) -> None:
        self._owning_module = mod

    @property
    def nodes(self) -> _NodeList:
        """The nodes in program order; supports ``len``, iteration and ``reversed``."""
        return _NodeList(self)

    def find_nodes(self, *, op: str, target: Target | None = None) -> list[Node]:
        """The nodes with this ``op`` (and ``target``, if given), in order."""
        return [n for n in self.nodes if n.op == op and (target is None or n.target == target)]

    # ------------------------------------------------------------------ making nodes

    def create_node(self, op: str, target: Target, args: tuple | None = None, kwargs: dict | None = None,
                    name: str | None = None, type_expr: Any = None) -> Node:
        """Make a node and put it at the insert point (the end, unless ``inserting_before/after`` moved it)."""
        args = () if not args else args
        kwargs = {} if not kwargs else kwargs
        if not isinstance(args, tuple):
            raise TypeError(f"Graph.create_node: args must be a tuple, got {type(args).__name__}")
        if not isinstance(kwargs, dict):
            raise TypeError(f"Graph.create_node: kwargs must be a dict, got {type(kwargs).__name__}")
        candidate = name if name is not None else target_to_str(target)
        unique = self._graph_namespace.create_name(candidate, None)
        n = Node(self, unique, op, target, args, kwargs, type_expr)
        self._graph_namespace.associate_name_with_obj(unique, n)
        self._insert(n)
        self._len += 1
        return n

    def placeholder(self, name: str, type_expr: Any = None,
                    default_value: Any = inspect.Signature.empty) -> Node:
        """An input of the function; ``default_value`` becomes the parameter's default."""
        args = () if default_value is inspect.Signature.empty else (default_value,)
        return self.create_node("placeholder", name, args, type_expr=type_expr)

    def get_attr(self, qualified_name: str, type_expr: Any = None) -> Node:
        """Read ``root.<qualified_name>`` (a parameter, buffer or other attribute of the owning module)."""
        self._warn_if_missing(qualified_name, "get_attr", want_module=False)
        return self.create_node("get_attr", qualified_name, type_expr=type_expr)

    def call_module(self, module_name: str, args: tuple | None = None, kwargs: dict | None = None,
                    type_expr: Any = None) -> Node:
        """Call the submodule at ``module_name`` (a dotted path from the owning module)."""
        self._warn_if_missing(module_name, "call_module", want_module=True)
        return self.create_node("call_module", module_name, args, kwargs, type_expr=type_expr)

    def call_method(self, method_name: str, args: tuple | None = None, kwargs: dict | None = None,
                    type_expr: Any = None) -> Node:
        """Call ``args[0].<method_name>(*args[1:], **kwargs)``."""
        return self.create_node("call_method", method_name, args, kwargs, type_expr=type_expr)

    def call_function(self, the_function: Callable, args: tuple | None = None, kwargs: dict | None = None,
                      type_expr: Any = None) -> Node:
        """Call ``the_function(*args, **kwargs)``."""
        return self.create_node("call_function", the_function, args, kwargs, type_expr=type_expr)

    def output(self, result: Argument, type_expr: Any = None) -> Node:
        """The value the function returns."""
        return self.create_node("output", "output", (result,), type_expr=type_expr)

    def node_copy(self, node: Node, arg_transform: Callable[[Node], Argument] = lambda x: x) -> Node:
        """A copy of ``node`` (from any graph) in this one, its node arguments mapped by ``arg_transform``."""
        args = map_arg(node.args, arg_transform)
        kwargs = map_arg(node.kwargs, arg_transform)
        result = self.create_node(node.op, node.target, args, kwargs, node.name, node.type)
        result.meta = copy.copy(node.meta)
        return result

    def graph_copy(self, g: Graph, val_map: dict, return_output_node: bool = False) -> Any:
        """Copy the nodes of ``g`` into this graph, recording old -> new in ``val_map``; return g's output value."""
        for node in g.nodes:
            if node in val_map:
                continue
            if node.op == "output":
                value = map_arg(node.args[0], lambda n: val_map[n])
                return (value, node) if return_output_node else value
            val_map[node] = self.node_copy(node, lambda n: val_map[n])
        return None

    def __deepcopy__(self, memo: dict | None = None) -> Graph:
        """A copy with new nodes (same names, targets and meta), owned by no module."""
        memo = {} if memo is None else memo
        g = Graph(tracer_cls=self._tracer_cls)
        copied = g.graph_copy(self, val_map=memo, return_output_node=True)
        if copied is not None:
            value, output = copied
            g.output(value, type_expr=output.type).meta = copy.copy(output.meta)
        return g

    def _warn_if_missing(self, qualified_name: str, op: str, want_module: bool) -> None:
        owner = self.owning_module
        if owner is None:
            return
        obj: Any = owner
        for atom in qualified_name.split("."):
            if not hasattr(obj, atom):
                warnings.warn(f"Graph.{op}: the owning module has no attribute {qualified_name!r}; "
                              f"{op} nodes must refer to an existing attribute, or the module fails to run it")
                return
            obj = getattr(obj, atom)
        from ember.nn import Module

        if want_module and not isinstance(obj, Module):
            warnings.warn(f"Graph.{op}: {qualified_name!r} of the owning module is not an nn.Module")

    # ------------------------------------------------------------------ where new nodes go

    def inserting_before(self, n: Node | None = None) -> _InsertPoint:
        """In a ``with`` block, new nodes go before ``n`` (at the start of the graph when ``n`` is None)."""
        if n is None:
            return self.inserting_after(self._root)
        self._check_owned(n, "inserting_before")
        return _InsertPoint(self, n.prepend)

    def inserting_after(self, n: Node | None = None) -> _InsertPoint:
        """In a ``with`` block, new nodes go after ``n`` (at the end of the graph when ``n`` is None).

        As in torch.fx, each new node goes right after ``n``, so several land in reverse order.
        """
        if n is None:
            return self.inserting_before(self._root)
        self._check_owned(n, "inserting_after")
        return _InsertPoint(self, n.append)

    def _check_owned(self, n: Node, op: str) -> None:
        if n.graph is not self:
            raise ValueError(f"Graph.{op}: node {n.name} belongs to another graph")

    # ------------------------------------------------------------------ removing nodes

    def erase_node(self, to_erase: Node) -> None:
        """Remove a node nothing uses any more."""
        if to_erase.users:
            raise RuntimeError(f"Tried to erase Node {to_erase} but it still had {len(to_erase.users)} users in the "
                               f"graph: {to_erase.users}!")
        if to_erase.graph is not self:
            raise RuntimeError(f"Attempting to remove {to_erase} from wrong graph!")
        if to_erase._erased:
            warnings.warn(f"erase_node({to_erase}) on an already erased node")
            return
        to_erase._remove_from_list()
        to_erase._erased = True
        self._len -= 1
        to_erase._update_args_kwargs((), {})  # it no longer counts among its inputs' users

    def eliminate_dead_code(self, is_impure_node: Callable[[Node], bool] | None = None) -> bool:
        """Erase the nodes whose values nothing uses (and that have no side effects); True if any went.

        >>> g = Graph()
        >>> x = g.placeholder("x")
        >>> _ = g.call_function(ember.relu, (x,))
        >>> _ = g.output(x)
        >>> g.eliminate_dead_code(), len(g.nodes)
        (True, 2)
        """
        self.lint()
        impure = is_impure_node or (lambda node: node.is_impure())
        changed = False
        for node in reversed(self.nodes):
            if not node.users and not impure(node):
                self.erase_node(node)
                changed = True
        return changed

    # ------------------------------------------------------------------ checking

    def lint(self) -> None:
        """Check that the graph is well formed: nodes owned by it, named once, in topological order,
        and (with an owning module) that ``get_attr``/``call_module`` targets exist. Raises RuntimeError."""
        seen: set = set()
        names: set = set()
        for node in self.nodes:
            if node.graph is not self:
                raise RuntimeError(f"Node '{node}' does not belong to this Graph!")
            for arg in node._input_nodes:
                self._check_input(arg, node, seen)
            if node.name in names:
                raise RuntimeError(f"Node redefined name {node.name}!")
            names.add(node.name)
            seen.add(node)
        if self.owning_module is not None:
            for node in self.nodes:
                if node.op in ("get_attr", "call_module"):
                    self._check_target(node)

    def _check_input(self, arg: Node, user: Node, seen: set) -> None:
        if arg.graph is not self:
            raise RuntimeError(f"Argument '{arg}' of Node '{user}' does not belong to this Graph, but was used as an "
                               f"argument! If you are copying nodes from another graph, make sure to use "
                               f"``arg_transform`` on node_copy() to remap values\n{self}")
        if arg not in seen:
            raise RuntimeError(f"Argument '{arg}' of Node '{user}' was used before it has been defined! Please check "
                               f"that Nodes in the graph are topologically ordered\n{self}")

    def _check_target(self, node: Node) -> None:
        from ember.nn import Module

        obj: Any = self.owning_module
        walked: list[str] = []
        for atom in node.target.split("."):
            if not hasattr(obj, atom):
                raise RuntimeError(f"Node {node} target {node.target} references nonexistent attribute {atom} of "
                                   f"{'.'.join(walked) or 'root'}")
            obj = getattr(obj, atom)
            walked.append(atom)
        if node.op == "call_module" and not isinstance(obj, Module):
            raise RuntimeError(f"Node {node} target {node.target} {atom} of {'.'.join(walked[:-1]) or 'root'} does "
                               f"not reference an nn.Module")

    # ------------------------------------------------------------------ printing and code

    def python_code(self, root_module: str) -> PythonCode:
        """The source of the ``forward`` this graph computes, with ``root_module`` as the name of ``self``."""
        return python_code(list(self.nodes), root_module)

    def __str__(self) -> str:
        placeholder_names: list[str] = []
        return_typename = [""]
        lines = [node.format_node(placeholder_names, return_typename) for node in self.nodes]
        text = f"graph({', '.join(placeholder_names)}){return_typename[0]}:"
        return text + "".join(f"\n    {line}" for line in lines if line)

    def print_tabular(self) -> None:
        """Print the nodes as a table: opcode, name, target, args, kwargs.

        torch.fx draws this table with the ``tabulate`` package and fails without
        it; ember draws it itself, in tabulate's default layout, and shows each
        function target by its dotted name (``ember.relu``) rather than its repr.
        """
        rows = [[n.op, n.name, _pretty_print_target(n.target), str(n.args), str(n.kwargs)] for n in self.nodes]
        print(plain_table(rows, ["opcode", "name", "target", "args", "kwargs"]))

    def _target_to_str(self, target: Target) -> str:
        return target_to_str(target)

    def process_inputs(self, *args: Any) -> Any:
        return args

    def process_outputs(self, out: Any) -> Any:
        return out
