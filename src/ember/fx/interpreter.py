"""Running a graph node by node: ``Interpreter`` evaluates it, ``Transformer`` rewrites it into a new module.

Subclass either and override the method of an opcode (``call_function``,
``call_module`` ...) to change what happens at those nodes.

>>> import ember.fx
>>> class NegateRelu(ember.fx.Interpreter):
...     def call_function(self, target, args, kwargs):
...         result = super().call_function(target, args, kwargs)
...         return -result if target is ember.relu else result
>>> gm = ember.fx.symbolic_trace(lambda x: ember.relu(x) + 1)
>>> NegateRelu(gm).run(ember.tensor([2., -3.]))
tensor([-1.,  1.])
"""
from __future__ import annotations

import inspect
from typing import Any, Iterator

from ember.fx._symbolic_trace import Tracer
from ember.fx.graph import Graph
from ember.fx.graph_module import GraphModule
from ember.fx.node import Argument, Node, Target, map_aggregate, map_arg
from ember.fx.proxy import Proxy
from ember.nn import Module

__all__ = ["Interpreter", "Transformer"]


class Interpreter:
    """Evaluates the graph of ``module`` on given inputs, one :meth:`run_node` per node.

    Values are dropped after their last use unless ``garbage_collect_values`` is False.
    """

    def __init__(self, module: Module, garbage_collect_values: bool = True, graph: Graph | None = None) -> None:
        self.module = module
        self.submodules = dict(module.named_modules())
        self.graph = module.graph if graph is None else graph
        self.env: dict[Node, Any] = {}
        self.name = "Interpreter"
        self.garbage_collect_values = garbage_collect_values
        self.extra_traceback = True
        self.user_to_last_uses: dict[Node, list[Node]] = {}
        if garbage_collect_values:
            seen: set = set()
            for node in reversed(self.graph.nodes):
                for value in node.all_input_nodes:
                    if value not in seen:
                        seen.add(value)
                        self.user_to_last_uses.setdefault(node, []).append(value)

    def run(self, *args: Any, initial_env: dict[Node, Any] | None = None, enable_io_processing: bool = True) -> Any:
        """Evaluate the graph on ``args`` (one per placeholder) and return what its output node returns."""
        self.env = dict(initial_env) if initial_env is not None else {}
        if enable_io_processing:
            args = self.graph.process_inputs(*args)
        self.args_iter: Iterator[Any] = iter(args)
        for node in self.graph.nodes:
            if node in self.env:  # given in initial_env: no need to compute it
                continue
            try:
                self.env[node] = self.run_node(node)
            except Exception as error:
                if self.extra_traceback:
                    _name_the_node(error, node)
                raise
            for value in self.user_to_last_uses.get(node, []):
                del self.env[value]
            if node.op == "output":
                output = self.env[node]
                return self.graph.process_outputs(output) if enable_io_processing else output
        return None

    def run_node(self, n: Node) -> Any:
        """Evaluate one node: fetch its arguments, then call the method named after its opcode."""
        args, kwargs = self.fetch_args_kwargs_from_env(n)
        return getattr(self, n.op)(n.target, args, kwargs)

    # -------------------------------------------------------------- one method per opcode

    def placeholder(self, target: Target, args: tuple, kwargs: dict) -> Any:
        """The next input given to :meth:`run` (or the parameter's default, or the rest for ``*args``)."""
        if target.startswith("*"):
            return list(self.args_iter)
        try:
            return next(self.args_iter)
        except StopIteration:
            if args:
                return args[0]
            raise RuntimeError(f"Expected positional argument for parameter {target}, but one was not passed in!")

    def get_attr(self, target: Target, args: tuple, kwargs: dict) -> Any:
        return self.fetch_attr(target)

    def call_function(self, target: Target, args: tuple, kwargs: dict) -> Any:
        return target(*args, **kwargs)

    def call_method(self, target: Target, args: tuple, kwargs: dict) -> Any:
        self_obj, *rest = args
        return getattr(self_obj, target)(*rest, **kwargs)

    def call_module(self, target: Target, args: tuple, kwargs: dict) -> Any:
        return self.fetch_attr(target)(*args, **kwargs)

    def output(self, target: Target, args: tuple, kwargs: dict) -> Any:
        return args[0]

    # -------------------------------------------------------------- helpers for subclasses

    def fetch_attr(self, target: str) -> Any:
        """The object at the dotted path ``target`` of the module."""
        obj: Any = self.module
        walked: list[str] = []
        for atom in target.split("."):
            if not hasattr(obj, atom):
                raise RuntimeError(f"Node referenced nonexistent target {'.'.join(walked + [atom])}")
            obj = getattr(obj, atom)
            walked.append(atom)
        return obj

    def fetch_args_kwargs_from_env(self, n: Node) -> tuple[tuple, dict]:
        """``n``'s arguments with each node replaced by its computed value."""
        return self.map_nodes_to_values(n.args, n), self.map_nodes_to_values(n.kwargs, n)

    def map_nodes_to_values(self, args: Argument, n: Node) -> Argument:
        def value_of(node: Node) -> Any:
            if node not in self.env:
                raise RuntimeError(f"Node {n} referenced nonexistent value {node}! Run Graph.lint() to diagnose "
                                   f"such issues")
            return self.env[node]

        return map_arg(args, value_of)


def _name_the_node(error: Exception, node: Node) -> None:
    """Append to the message of ``error`` which node was running (and where the traced program made it)."""
    where = f"\n\nWhile executing {node.format_node()}"
    if node.stack_trace:
        where += f"\nOriginal traceback:\n{node.stack_trace}"
    if error.args and isinstance(error.args[0], str):
        error.args = (error.args[0] + where, *error.args[1:])
    else:
        error.add_note(where.strip())


class _TransformerTracer(Tracer):
    """Records into the new graph of a Transformer; every module it meets is kept as a call."""

    def __init__(self, graph: Graph) -> None:
        super().__init__()
        self.graph = graph
        self.tensor_attrs: dict = {}

    def is_leaf_module(self, m: Module, module_qualified_name: str) -> bool:
        return True


class Transformer(Interpreter):
    """Runs the graph on Proxies, recording into a new graph: :meth:`transform` returns the new GraphModule.

    Override ``call_function`` (or another opcode method) and return something
    else, built with ember functions on the Proxies in ``args``, to rewrite those nodes.

    >>> import ember.fx
    >>> class ReluToGelu(ember.fx.Transformer):
    ...     def call_function(self, target, args, kwargs):
    ...         if target is ember.relu:
    ...             return ember.nn.functional.gelu(*args, **kwargs)
    ...         return super().call_function(target, args, kwargs)
    >>> gm = ReluToGelu(ember.fx.symbolic_trace(lambda x: ember.relu(x))).transform()
    >>> [n.name for n in gm.graph.nodes]
    ['x', 'gelu', 'output']
    """

    def __init__(self, module: GraphModule) -> None:
        super().__init__(module)
        self.new_graph = Graph()
        self.tracer = _TransformerTracer(self.new_graph)
        self.tracer.root = module

    def placeholder(self, target: Target, args: tuple, kwargs: dict) -> Proxy:
        default = args[0] if args else inspect.Signature.empty
        return Proxy(self.new_graph.placeholder(target, default_value=default), self.tracer)

    def get_attr(self, target: Target, args: tuple, kwargs: dict) -> Proxy:
        return self.tracer.create_proxy("get_attr", target, args, kwargs)

    def call_module(self, target: Target, args: tuple, kwargs: dict) -> Any:
        submodule = self.fetch_attr(target)
        return self.tracer.call_module(submodule, submodule.forward, args, kwargs)

    def call_function(self, target: Target, args: tuple, kwargs: dict) -> Any:
        return self.tracer.create_proxy("call_function", target, args, kwargs)

    def transform(self) -> GraphModule:
        """Run the rewrite and return a GraphModule of the new graph, on the original module's parts."""
        result = super().run(enable_io_processing=False)
        if result is not None:
            def strip_proxy(a: Any) -> Any:
                return a.node if isinstance(a, Proxy) else a

            self.new_graph.output(map_aggregate(result, strip_proxy))
        return GraphModule(self.module, self.new_graph)
