"""``ember.fx``: symbolic tracing of Modules and functions into graphs you can inspect, rewrite and run.

As ``torch.fx``: :func:`symbolic_trace` runs a module on :class:`Proxy` values,
which record each ember function, Tensor method, operator and submodule call
into a :class:`Graph`; a :class:`GraphModule` runs that graph as generated
Python code; :class:`Interpreter` and :class:`Transformer` walk it node by node.

>>> import ember.fx
>>> class Block(ember.nn.Module):
...     def __init__(self):
...         super().__init__()
...         self.linear = ember.nn.Linear(4, 4)
...     def forward(self, x):
...         return x + ember.relu(self.linear(x))
>>> gm = ember.fx.symbolic_trace(Block())
>>> [(n.op, n.name) for n in gm.graph.nodes]
[('placeholder', 'x'), ('call_module', 'linear'), ('call_function', 'relu'), ('call_function', 'add'), ('output', 'output')]
"""
from ember.fx import passes  # noqa: F401
from ember.fx._symbolic_trace import PH, Tracer, symbolic_trace, wrap
from ember.fx.graph import Graph
from ember.fx.graph_module import GraphModule
from ember.fx.interpreter import Interpreter, Transformer
from ember.fx.node import Node, map_arg
from ember.fx.proxy import Proxy, TraceError

__all__ = ["Graph", "GraphModule", "Interpreter", "Node", "PH", "Proxy", "TraceError", "Tracer", "Transformer",
           "map_arg", "symbolic_trace", "wrap"]
