"""``Proxy``: the stand-in for a value while a program is traced; each use of it becomes a node.

A Proxy takes part in ember's ``__torch_function__`` protocol, so ember
functions (``ember.relu(p)``) and Tensor methods reached through the protocol
are recorded as ``call_function``/``call_method`` nodes. Python's operators
(``p + 1``, ``p[0]``, ``p @ w``) are recorded as calls of the functions of
:mod:`operator`, attribute reads (``p.shape``) as ``getattr`` calls, and method
calls (``p.size(0)``) as ``call_method`` nodes.

>>> from ember.fx import Graph, Proxy
>>> g = Graph()
>>> x = Proxy(g.placeholder("x"))
>>> y = ember.relu(x) + x.size(0)
>>> [n.name for n in g.nodes]
['x', 'relu', 'size', 'add']
"""
from __future__ import annotations

import dis
import inspect
import operator
from typing import Any, Callable, Iterator

import ember
from ember.fx.graph import Graph
from ember.fx.node import Argument, Node, Target, map_aggregate

__all__ = ["Attribute", "GraphAppendingTracer", "Proxy", "TraceError", "TracerBase"]


class TraceError(ValueError):
    """Raised when a traced program uses a Proxy in a way that cannot be recorded (as control flow, say)."""


# Values recorded in a node as they are.
_BASE_TYPES = (str, int, float, bool, complex, ember.dtype, ember.device, ember.memory_format, ember.layout)


class TracerBase:
    """What a Proxy needs from a tracer: a graph to add nodes to, and rules for arguments and control flow."""

    graph: Graph
    record_stack_traces = False
    trace_asserts = False
    proxy_buffer_attributes = False
    traced_func_name = "forward"

    def create_node(self, kind: str, target: Target, args: tuple, kwargs: dict, name: str | None = None,
                    type_expr: Any = None) -> Node:
        """Add a node to the graph; override to attach metadata to every node."""
        node = self.graph.create_node(kind, target, args, kwargs, name, type_expr)
        module_stack = getattr(self, "module_stack", None)
        if module_stack and kind not in ("placeholder", "output"):
            node.meta["nn_module_stack"] = dict(module_stack)
        return node

    def proxy(self, node: Node) -> Proxy:
        return Proxy(node, self)

    def create_proxy(self, kind: str, target: Target, args: tuple, kwargs: dict, name: str | None = None,
                     type_expr: Any = None, proxy_factory_fn: Callable[[Node], Proxy] | None = None) -> Proxy:
        """Record ``target`` applied to ``args``/``kwargs`` (lowered by :meth:`create_arg`) and return its Proxy."""
        args_ = self.create_arg(args)
        kwargs_ = self.create_arg(kwargs)
        node = self.create_node(kind, target, args_, kwargs_, name, type_expr)
        return self.proxy(node) if proxy_factory_fn is None else proxy_factory_fn(node)

    def create_arg(self, a: Any) -> Argument:
        """Lower a value seen during tracing into something a node can hold: Proxies become their nodes."""
        if isinstance(a, Proxy):
            return a.node
        if hasattr(a, "__fx_create_arg__"):
            return a.__fx_create_arg__(self)
        if isinstance(a, tuple):
            items = [self.create_arg(elem) for elem in a]
            return type(a)(*items) if hasattr(a, "_fields") else tuple(items)
        if isinstance(a, list):
            return [self.create_arg(elem) for elem in a]
        if isinstance(a, dict):
            return {self._dict_key(k): self.create_arg(v) for k, v in a.items()}
        if isinstance(a, slice):
            return slice(self.create_arg(a.start), self.create_arg(a.stop), self.create_arg(a.step))
        if isinstance(a, range):
            return range(self.create_arg(a.start), self.create_arg(a.stop), self.create_arg(a.step))
        if isinstance(a, _BASE_TYPES) or a is None or a is ...:
            return a
        raise NotImplementedError(f"argument of type: {type(a)}")

    def _dict_key(self, key: Any) -> Any:
        if isinstance(key, str):
            return key
        lowered = self.create_arg(key)
        found: list = []
        map_aggregate(lowered, lambda x: found.append(x) if isinstance(x, Node) else None)
        if found:
            raise RuntimeError(f"Keys for dictionaries used as an argument cannot contain a Node. Got key: {key}")
        return lowered

    def to_bool(self, obj: Proxy) -> bool:
        """Called for ``bool(proxy)`` (``if proxy:``); the value is unknown while tracing, so it is an error."""
        raise TraceError("symbolically traced variables cannot be used as inputs to control flow")

    def iter(self, obj: Proxy) -> Iterator:
        """Called when a Proxy is iterated (``for v in proxy``, ``f(*proxy)``): the length is unknown."""
        raise TraceError("Proxy object cannot be iterated. This can be attempted when the Proxy is used in a loop "
                         "or as a *args or **kwargs function argument. See docs/fx.md for the kinds of control flow "
                         "that can be traced, and the Proxy docstring for ways around Proxy iteration errors")

    def keys(self, obj: Proxy) -> Any:
        """Called for ``**proxy``: records ``proxy.keys()``."""
        return Attribute(obj, "keys")()


class GraphAppendingTracer(TracerBase):
    """The tracer of a Proxy made around a bare node: it appends to that node's graph."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.scope = None
        self.module_stack: dict = {}


class Proxy:
    """A node's value during tracing; ember functions, methods and operators applied to it are recorded.

    A Proxy cannot be iterated, measured with ``len`` or used as a condition,
    because its value is not known while tracing. Move such code into a
    function marked with :func:`ember.fx.wrap`, or make the control flow
    depend on values known in advance (``for i in range(self.n): p[i]``).
    """

    def __init__(self, node: Node, tracer: TracerBase | None = None) -> None:
        self.tracer = GraphAppendingTracer(node.graph) if tracer is None else tracer
        self.node = node

    def __repr__(self) -> str:
        return f"Proxy({self.node.name})"

    def __getattr__(self, k: str) -> Attribute:
        if k.startswith("__") and k.endswith("__"):  # protocols probed by Python and NumPy are not recorded
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{k}'")
        return Attribute(self, k)  # recorded lazily: most attributes are methods about to be called

    def __getstate__(self) -> dict:
        return self.__dict__

    def __setstate__(self, d: dict) -> None:
        self.__dict__ = d

    def __call__(self, *args: Any, **kwargs: Any) -> Proxy:
        return self.tracer.create_proxy("call_method", "__call__", (self,) + args, kwargs)

    def __iter__(self) -> Iterator[Proxy]:
        count = _unpacked_count(inspect.currentframe().f_back)
        if count is not None:  # a, b = proxy: the count is in the bytecode
            return (self[i] for i in range(count))
        return self.tracer.iter(self)

    def __bool__(self) -> bool:
        return self.tracer.to_bool(self)

    def __len__(self) -> int:
        raise RuntimeError("'len' is not supported in symbolic tracing by default. If you want this call to be "
                           "recorded, please call ember.fx.wrap('len') at module scope")

    def keys(self) -> Any:
        return self.tracer.keys(self)

    def __abs__(self) -> Proxy:
        return self.tracer.create_proxy("call_function", operator.abs, (self,), {})

    @classmethod
    def __torch_function__(cls, func: Callable, types: tuple, args: tuple = (), kwargs: dict | None = None) -> Proxy:
        tracer = _the_tracer(func, args, kwargs or {})
        kwargs = kwargs or {}
        if ember.overrides.is_tensor_method_or_property(func):
            return tracer.create_proxy("call_method", func.__name__, args, kwargs)
        return tracer.create_proxy("call_function", func, args, kwargs, name=tracer.graph._target_to_str(func))


def _the_tracer(func: Callable, args: tuple, kwargs: dict) -> TracerBase:
    """The one tracer recording the Proxies among the arguments (two would mix graphs)."""
    tracers: dict = {}

    def note(a: Any) -> Any:
        if isinstance(a, Proxy):
            tracers[a.tracer] = None
        return a

    map_aggregate(args, note)
    map_aggregate(kwargs, note)
    if len(tracers) > 1:
        raise RuntimeError(f"Found multiple different tracers {list(tracers)} while trying to trace operations {func}")
    return next(iter(tracers))


def _unpacked_count(frame: Any) -> int | None:
    """If ``frame`` is unpacking a value into a fixed number of names, that number."""
    if frame is None:
        return None
    for inst in dis.get_instructions(frame.f_code):
        if inst.offset == frame.f_lasti:
            return inst.argval if inst.opname == "UNPACK_SEQUENCE" else None
    return None


class Attribute(Proxy):
    """``proxy.name``: a method call if it is called next, otherwise a ``getattr`` node (made on first use)."""

    def __init__(self, root: Proxy, attr: str) -> None:
        self.root = root
        self.attr = attr
        self.tracer = root.tracer
        self._node: Node | None = None

    @property
    def node(self) -> Node:
        if self._node is None:
            self._node = self.tracer.create_proxy("call_function", getattr, (self.root, self.attr), {}).node
        return self._node

    def __call__(self, *args: Any, **kwargs: Any) -> Proxy:
        return self.tracer.create_proxy("call_method", self.attr, (self.root,) + args, kwargs)


# operator.<name> for each operator a Proxy records, and those Python may also call reflected (x + proxy).
_MAGIC_METHODS = ("add sub mul floordiv truediv mod pow lshift rshift and_ or_ xor getitem matmul "
                  "eq ne lt gt le ge pos neg invert").split()
_REFLECTABLE = "add sub mul floordiv truediv mod pow lshift rshift and_ or_ xor matmul".split()


def _define_operator(name: str) -> None:
    target = getattr(operator, name)

    def record(*args: Any) -> Proxy:
        return args[0].tracer.create_proxy("call_function", target, args, {})

    record.__name__ = f"__{name.strip('_')}__"
    setattr(Proxy, record.__name__, record)


def _define_reflected(name: str) -> None:
    target = getattr(operator, name)

    def record(self: Proxy, lhs: Any) -> Proxy:
        return self.tracer.create_proxy("call_function", target, (lhs, self), {})

    record.__name__ = f"__r{name.strip('_')}__"
    setattr(Proxy, record.__name__, record)


for _name in _MAGIC_METHODS:
    _define_operator(_name)
for _name in _REFLECTABLE:
    _define_reflected(_name)
