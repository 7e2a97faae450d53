"""``GraphModule``: an ``nn.Module`` whose ``forward`` is Python source generated from a :class:`Graph`.

>>> import ember.fx
>>> gm = ember.fx.symbolic_trace(ember.nn.Sequential(ember.nn.Linear(2, 2), ember.nn.ReLU()))
>>> print(gm.code.strip())
def forward(self, input):
    input_1 = input
    _0 = getattr(self, "0")(input_1);  input_1 = None
    _1 = getattr(self, "1")(_0);  _0 = None
    return _1
"""
from __future__ import annotations

import copy
import itertools
import linecache
from pathlib import Path
from typing import Any, Callable

import ember
from ember.fx.graph import Graph, PythonCode
from ember.nn import Module

__all__ = ["GraphModule"]

_source_ids = itertools.count()


def _compile_forward(src: str, globals_: dict[str, Any]) -> Callable:
    """Run the generated source and return the ``forward`` it defines.

    The source is registered with linecache under a made-up file name, so
    tracebacks and ``inspect.getsource`` show the generated lines.
    """
    filename = f"<eval_with_key>.{next(_source_ids)}"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    namespace = dict(globals_)
    exec(compile(src, filename, "exec"), namespace)
    return namespace["forward"]


def _copy_attr(from_module: Module, to_module: Module, target: str) -> None:
    """Give ``to_module`` the object at the dotted path ``target`` of ``from_module``, making empty parents."""
    *prefix, field = target.split(".")
    for item in prefix:
        source_child = getattr(from_module, item)
        child = getattr(to_module, item, None)
        if source_child is child:  # a parent is installed already, and with it everything below it
            return
        if child is None:
            child = Module()
            setattr(to_module, item, child)
        from_module, to_module = source_child, child
    _install(getattr(from_module, field), to_module, field)


def _assign_attr(value: Any, to_module: Module, target: str) -> None:
    """Put ``value`` at the dotted path ``target`` of ``to_module``, making empty parents."""
    *prefix, field = target.split(".")
    for item in prefix:
        child = getattr(to_module, item, None)
        if child is None:
            child = Module()
            setattr(to_module, item, child)
        to_module = child
    _install(value, to_module, field)


def _install(value: Any, module: Module, field: str) -> None:
    # a tensor that is not a parameter is state of the module: keep it as a buffer, so state_dict has it
    if isinstance(value, ember.Tensor) and not isinstance(value, ember.nn.Parameter):
        module.register_buffer(field, value)
    else:
        setattr(module, field, value)


def _importable(obj: Any, name: str) -> bool:
    """Whether generated source must import ``obj`` as ``name`` (``math_sqrt``; not ``ember`` nor builtins)."""
    module = getattr(obj, "__module__", None)
    return module not in (None, "builtins") and hasattr(obj, "__name__") and name not in ("ember", "device")


class GraphModule(Module):
    """A Module built from a root module (or a dict of its parts) and a graph that uses them.

    Only the submodules, parameters and buffers the graph refers to (``call_module``
    and ``get_attr`` targets) are copied from ``root``, under the same dotted
    names, so ``state_dict`` keys match the root's. Edit ``graph`` and call
    :meth:`recompile` to regenerate ``code`` and ``forward``.
    """

    def __new__(cls, *args: Any, **kwargs: Any) -> GraphModule:
        # each instance gets a class of its own, because recompile() sets forward on the class
        base = next(t for t in cls.__mro__ if t.__qualname__.split(".")[-1] != "GraphModuleImpl")

        class GraphModuleImpl(base):  # type: ignore[misc, valid-type]
            pass

        return super().__new__(GraphModuleImpl)

    def __init__(self, root: Module | dict[str, Any], graph: Graph, class_name: str = "GraphModule") -> None:
        super().__init__()
        self.__class__.__name__ = class_name
        if isinstance(root, Module):
            self.training = root.training
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    _copy_attr(root, self, node.target)
        elif isinstance(root, dict):
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    if node.target not in root:
                        raise RuntimeError(f"Node {node} referenced target {node.target} but that target was not "
                                           f"provided in ``root``!")
                    _assign_attr(root[node.target], self, node.target)
        else:
            raise RuntimeError(f"Unsupported type {root} passed for root!")
        self._tracer_cls = graph._tracer_cls
        self.meta: dict[str, Any] = {}
        self.graph = graph

    @property
    def graph(self) -> Graph:
        """The graph this module runs; assigning one recompiles ``forward``."""
        return self._graph

    @graph.setter
    def graph(self, g: Graph) -> None:
        if not isinstance(g, Graph):
            raise TypeError(f"GraphModule.graph must be an ember.fx.Graph, got {type(g).__name__}")
        self._graph = g
        g.owning_module = self
        self.recompile()

    @property
    def code(self) -> str:
        """The Python source of ``forward``, generated from the graph."""
        return self._code

    def recompile(self) -> PythonCode:
        """Regenerate ``code`` and ``forward`` from ``graph``; call it after editing the graph."""
        python_code = self._graph.python_code(root_module="self")
        self._code = python_code.src
        type(self).forward = _compile_forward(self._code, python_code.globals)
        return python_code

    def print_readable(self, print_output: bool = True) -> str:
        """The code as a class definition (``class Name(ember.nn.Module): def forward ...``), with that of
        any GraphModule children; printed unless ``print_output`` is False."""
        text = self._readable(self._get_name())
        if print_output:
            print(text)
        return text

    def _readable(self, name: str) -> str:
        lines = self._code.lstrip("\n").rstrip(" ").split("\n")
        def_line = next(i for i, line in enumerate(lines) if line.startswith("def "))
        lines.insert(def_line + 1, "    # No stacktrace found for following nodes")
        text = f"class {name}(ember.nn.Module):\n" + "\n".join(("    " + line) if line else line for line in lines)
        for child_name, child in self.named_children():
            if isinstance(child, GraphModule):
                text += "\n" + "\n".join("    " + line for line in child._readable(child_name).split("\n"))
        return text

    def to_folder(self, folder: str | Path, module_name: str = "FxModule") -> None:
        """Write this module as source to ``folder``: ``module.py`` defines ``module_name``, whose state is
        in ``state_dict.pt``. Import it with ``from folder import FxModule``.

        The submodules the code calls must be ember.nn modules whose ``repr`` rebuilds them.
        """
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        ember.save(self.state_dict(), folder / "state_dict.pt")
        python_code = self._graph.python_code(root_module="self")
        imports = "".join(f"from {obj.__module__} import {obj.__name__} as {name}\n"
                          for name, obj in python_code.globals.items() if _importable(obj, name))
        submodules = "".join(f"        self.{name} = {child!r}\n" for name, child in self.named_children())
        forward = python_code.src[python_code.src.index("def "):].rstrip()
        src = (f"import os\nfrom math import inf, nan  # noqa: F401\n\nimport ember\nfrom ember.nn import *  # noqa: F403\n{imports}\n\n"
               f"class {module_name}(ember.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
               f"{submodules}        state = os.path.join(os.path.dirname(__file__), 'state_dict.pt')\n"
               f"        self.load_state_dict(ember.load(state), strict=False)\n\n"
               + "\n".join("    " + line if line.strip() else "" for line in forward.split("\n")) + "\n")
        (folder / "module.py").write_text(src)
        (folder / "__init__.py").write_text(f"from .module import {module_name}\n")

    def __deepcopy__(self, memo: dict) -> GraphModule:
        fake = Module()
        fake.__dict__ = copy.deepcopy(self.__dict__, memo)
        result = GraphModule(fake, fake.__dict__["_graph"], self._get_name())
        result.meta = fake.__dict__.get("meta", {})
        return result

    def __copy__(self) -> GraphModule:
        result = GraphModule(self, self.graph, self._get_name())
        result.meta = dict(getattr(self, "meta", {}))
        return result

    def __str__(self) -> str:
        return "\n".join([super().__str__(), self._code,
                          "# To see more debug info, please use `graph_module.print_readable()`"])
