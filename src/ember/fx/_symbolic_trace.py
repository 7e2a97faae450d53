"""Symbolic tracing: run a Module's ``forward`` (or a function) on Proxies and keep what they record.

While a trace runs, ``nn.Module.__call__`` and ``nn.Module.__getattr__`` are
patched (so submodule calls and parameter reads are seen), as are the free
functions marked with :func:`wrap` and those of ``autowrap_modules``
(``math``) in the traced function's globals; everything is restored when the
trace ends, even if it fails.
"""
from __future__ import annotations

import builtins
import functools
import inspect
import math
import types
from typing import Any, Callable, NamedTuple

import ember
from ember.fx._side_effects import register_side_effect
from ember.fx.graph import Graph
from ember.fx.node import Argument, map_aggregate
from ember.fx.proxy import Proxy, TracerBase

__all__ = ["PH", "Tracer", "symbolic_trace", "wrap", "is_fx_tracing"]

_is_fx_tracing = False


def is_fx_tracing() -> bool:
    """Whether a symbolic trace is running."""
    return _is_fx_tracing


class PHBase:
    """The marker for a concrete argument that stays a placeholder: ``concrete_args={"x": PH}``."""

    def __repr__(self) -> str:
        return "PH"


PH = PHBase()


def _module_getattr() -> Callable:
    return ember.nn.Module.__getattr__


def _module_call() -> Callable:
    return ember.nn.Module.__call__


@register_side_effect
def _assert_is_none(value: Any, msg: str) -> None:
    """The check a trace records for a concrete argument given as None."""
    assert value is None, msg


# ---------------------------------------------------------------------------------------- patching

class _Patch(NamedTuple):
    namespace: dict
    name: str
    new: Any
    original: Any  # _ABSENT when the name was not there before


_ABSENT = object()


class _Patcher:
    """Replaces entries of namespaces (module globals, class dicts) and puts them all back on exit."""

    def __init__(self) -> None:
        self.patches: list[_Patch] = []
        self.visited: set[int] = set()

    def patch(self, namespace: dict, name: str, new: Any) -> None:
        original = namespace.get(name, _ABSENT)
        self.patches.append(_Patch(namespace, name, new, original))
        namespace[name] = new

    def patch_method(self, cls: type, name: str, new: Callable) -> None:
        original = cls.__dict__.get(name, _ABSENT)
        self.patches.append(_Patch(cls, name, new, original))  # a class's dict is read-only: setattr below
        setattr(cls, name, new)

    def visit_once(self, thing: Any) -> bool:
        """True the first time ``thing`` is seen: each namespace is searched for functions to wrap once."""
        key = id(thing)
        if key in self.visited:
            return False
        self.visited.add(key)
        return True

    def __enter__(self) -> _Patcher:
        return self

    def __exit__(self, *exc: Any) -> bool:
        for target, name, _new, original in reversed(self.patches):
            if isinstance(target, type):
                if original is _ABSENT:
                    delattr(target, name)
                else:
                    setattr(target, name, original)
            elif original is _ABSENT:
                target.pop(name, None)
            else:
                target[name] = original
        self.patches.clear()
        self.visited.clear()
        return False


def _find_proxy(*objects: Any) -> Proxy | None:
    found: list = []
    map_aggregate(objects, lambda x: found.append(x) if isinstance(x, Proxy) else None)
    return found[0] if found else None


def _wrapped_function(original: Callable) -> Callable:
    """``original``, recorded as one ``call_function`` node when a Proxy is among its arguments."""

    @functools.wraps(original)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        proxy = _find_proxy(args, kwargs)
        if proxy is None:
            return original(*args, **kwargs)
        result = proxy.tracer.create_proxy("call_function", original, args, kwargs)
        result.node.meta["is_wrapped"] = True
        return result

    return wrapped


# (id of the globals, name) -> the globals, for each function passed to wrap()
_wrapped_fns_to_patch: dict[tuple[int, str], dict] = {}


def wrap(fn_or_name: str | Callable) -> str | Callable:
    """Make a module-level function a leaf of symbolic tracing: called with a Proxy, it is recorded, not traced.

    Call it at the top level of the module that defines (or imports) the function:

    >>> import ember.fx
    >>> def count_rows(x):
    ...     return len(x)
    >>> _ = ember.fx.wrap("count_rows")
    """
    if callable(fn_or_name):
        name = fn_or_name.__code__.co_name if hasattr(fn_or_name, "__code__") else fn_or_name.__name__
    elif isinstance(fn_or_name, str):
        name = fn_or_name
    else:
        raise TypeError(f"wrap: expected a function or the name of one, got {type(fn_or_name).__name__}")
    caller = inspect.currentframe().f_back
    if caller.f_code.co_name != "<module>" and caller.f_locals is not caller.f_globals:
        raise NotImplementedError("wrap must be called at the top level of a module")
    _wrapped_fns_to_patch[(id(caller.f_globals), name)] = caller.f_globals
    return fn_or_name


def _patch_wrapped_functions(patcher: _Patcher) -> None:
    for (_, name), frame_globals in _wrapped_fns_to_patch.items():
        if name in frame_globals:
            original = frame_globals[name]
        elif hasattr(builtins, name):
            original = getattr(builtins, name)
        else:  # the function was deleted since wrap() named it: there is nothing left to patch
            continue
        patcher.patch(frame_globals, name, _wrapped_function(original))


def _autowrap_check(patcher: _Patcher, namespace: dict, function_ids: set[int]) -> None:
    """Wrap, in ``namespace``, the functions that are among ``function_ids`` (those of ``math``, by default)."""
    if not patcher.visit_once(namespace):
        return
    for name, value in list(namespace.items()):
        if not name.startswith("_") and callable(value) and id(value) in function_ids:
            patcher.patch(namespace, name, _wrapped_function(value))


# ---------------------------------------------------------------------------------------- the tracer

class Tracer(TracerBase):
    """Turns a Module or function into a :class:`Graph`; subclass it to change what is traced through.

    ``autowrap_modules``: modules whose public functions are recorded as calls
    rather than run (``math``, so ``math.sqrt(x.size(-1))`` is kept in the graph).
    ``autowrap_functions``: single functions treated the same way.
    """

    def __init__(self, autowrap_modules: tuple[types.ModuleType, ...] = (math,),
                 autowrap_functions: tuple[Callable, ...] = (), param_shapes_constant: bool = False) -> None:
        self._autowrap_function_ids: set[int] = {
            id(value) for module in autowrap_modules for name, value in module.__dict__.items()
            if not name.startswith("_") and callable(value)
        }
        self._autowrap_function_ids.update(id(f) for f in autowrap_functions)
        self._autowrap_search: list[types.ModuleType] = list(autowrap_modules)
        self.param_shapes_constant = param_shapes_constant
        self.submodule_paths: dict | None = None
        self.root_module_name = ""
        self.module_stack: dict[str, tuple[str, type]] = {}
        self.num_calls: dict[str, int] = {}

    # -------------------------------------------------------------- rules a subclass may change

    def is_leaf_module(self, m: ember.nn.Module, module_qualified_name: str) -> bool:
        """Whether a call of ``m`` is one ``call_module`` node: ember.nn's own modules are, except Sequential."""
        return m.__module__.startswith("ember.nn") and not isinstance(m, ember.nn.Sequential)

    def path_of_module(self, mod: ember.nn.Module) -> str:
        """The dotted name of ``mod`` inside the root module."""
        if self.submodule_paths:
            path = self.submodule_paths.get(mod)
            if path is None:
                raise NameError("module is not installed as a submodule")
            return path
        for name, m in self.root.named_modules():
            if m is mod:
                return name
        raise NameError("module is not installed as a submodule")

    def call_module(self, m: ember.nn.Module, forward: Callable, args: tuple, kwargs: dict) -> Any:
        """A call of submodule ``m``: one ``call_module`` node for a leaf, otherwise its ``forward`` traced through."""
        path = self.path_of_module(m)
        calls = self.num_calls.get(path, 0)
        key = f"{path}@{calls}" if calls else path
        self.module_stack[key] = (path, type(m))
        self.num_calls[path] = calls + 1
        try:
            if not self.is_leaf_module(m, path):
                return forward(*args, **kwargs)
            return self.create_proxy("call_module", path, args, kwargs)
        finally:
            self.module_stack.pop(key, None)

    def getattr(self, attr: str, attr_val: Any, parameter_proxy_cache: dict[str, Proxy]) -> Any:
        """A module attribute read during tracing: a parameter of the root becomes a ``get_attr`` Proxy."""
        if isinstance(attr_val, ember.nn.Parameter):
            proxy = self._proxy_for(attr_val, self.root.named_parameters(), parameter_proxy_cache)
            if proxy is not None:
                return proxy
        if self.proxy_buffer_attributes and isinstance(attr_val, ember.Tensor):
            proxy = self._proxy_for(attr_val, self.root.named_buffers(), parameter_proxy_cache)
            if proxy is not None:
                return proxy
        return attr_val

    def _proxy_for(self, value: Any, named: Any, cache: dict[str, Proxy]) -> Proxy | None:
        for name, candidate in named:
            if candidate is value:
                if name not in cache:
                    cache[name] = self.create_proxy("get_attr", name, (), {})
                return cache[name]
        return None

    def create_arg(self, a: Any) -> Argument:
        """As :meth:`TracerBase.create_arg`; also parameters, buffers and submodules of the root become
        ``get_attr`` nodes, and other tensors are stored on the root as ``_tensor_constant0``, ..."""
        if isinstance(a, ember.nn.Parameter):
            for name, p in self.root.named_parameters():
                if a is p:
                    return self.create_node("get_attr", name, (), {})
            raise NameError("parameter is not a member of this module")
        if isinstance(a, ember.Tensor):
            for name, b in self.root.named_buffers():
                if a is b:
                    return self.create_node("get_attr", name, (), {})
        elif isinstance(a, ember.nn.Module):
            for name, m in self.root.named_modules():
                if a is m:
                    return self.create_node("get_attr", name, (), {})
        if isinstance(a, tuple) and hasattr(a, "_fields"):
            return self.create_node("call_function", type(a), tuple(self.create_arg(e) for e in a), {})
        if isinstance(a, ember.Tensor):
            qualname = self.tensor_attrs.get(a)
            if qualname is None:
                qualname = self._fresh_qualname("_tensor_constant")
                self.tensor_attrs[a] = qualname
                setattr(self.root, qualname, a)
            return self.create_node("get_attr", qualname, (), {})
        return super().create_arg(a)

    def _fresh_qualname(self, prefix: str) -> str:
        i = 0
        while hasattr(self.root, f"{prefix}{i}"):
            i += 1
        return f"{prefix}{i}"

    # -------------------------------------------------------------- tracing

    def trace(self, root: ember.nn.Module | Callable, concrete_args: dict[str, Any] | None = None) -> Graph:
        """Trace ``root`` (a Module's ``forward``, or a function) and return the graph it records."""
        global _is_fx_tracing
        was_tracing, _is_fx_tracing = _is_fx_tracing, True
        try:
            return self._trace(root, concrete_args)
        finally:
            _is_fx_tracing = was_tracing

    def _trace(self, root: Any, concrete_args: dict[str, Any] | None) -> Graph:
        if isinstance(root, ember.nn.Module):
            self.root = root
            fn = getattr(type(root), self.traced_func_name)
            self.root_module_name = root._get_name()
            self.submodule_paths = {mod: name for name, mod in root.named_modules()}
        else:
            self.root = ember.nn.Module()
            fn = root
        if not isinstance(fn, types.FunctionType):
            raise TypeError(f"symbolic_trace: expected a Python function to trace, got {type(fn).__name__}")
        self.graph = Graph(tracer_cls=type(self))
        self.tensor_attrs: dict = {}
        self._collect_tensor_attrs(self.root, [])
        fn_globals = fn.__globals__  # read before patching replaces entries in it
        traced_fn, args = self.create_args_for_root(fn, isinstance(root, ember.nn.Module), concrete_args)
        parameter_proxy_cache: dict[str, Proxy] = {}
        original_getattr, original_call = _module_getattr(), _module_call()

        def module_getattr_wrapper(mod: ember.nn.Module, attr: str) -> Any:
            return self.getattr(attr, original_getattr(mod, attr), parameter_proxy_cache)

        def module_call_wrapper(mod: ember.nn.Module, *args: Any, **kwargs: Any) -> Any:
            def forward(*args: Any, **kwargs: Any) -> Any:
                return original_call(mod, *args, **kwargs)

            _autowrap_check(patcher, getattr(getattr(mod, "forward", mod), "__globals__", {}),
                            self._autowrap_function_ids)
            return self.call_module(mod, forward, args, kwargs)

        with _Patcher() as patcher:
            patcher.patch_method(ember.nn.Module, "__getattr__", module_getattr_wrapper)
            patcher.patch_method(ember.nn.Module, "__call__", module_call_wrapper)
            _patch_wrapped_functions(patcher)
            _autowrap_check(patcher, fn_globals, self._autowrap_function_ids)
            for module in self._autowrap_search:
                _autowrap_check(patcher, module.__dict__, self._autowrap_function_ids)
            result = traced_fn(*args)
            self.create_node("output", "output", (self.create_arg(result),), {},
                             type_expr=_annotations(fn).get("return"))
        self.submodule_paths = None
        return self.graph

    def _collect_tensor_attrs(self, m: ember.nn.Module, prefix: list[str]) -> None:
        """Tensors kept as plain attributes of the modules: uses of them become ``get_attr`` nodes."""
        for k, v in m.__dict__.items():
            if isinstance(v, ember.Tensor):
                self.tensor_attrs[v] = ".".join(prefix + [k])
        for k, child in m.named_children():
            self._collect_tensor_attrs(child, prefix + [k])

    def create_args_for_root(self, root_fn: Callable, is_module: bool,
                             concrete_args: dict[str, Any] | tuple | None = None) -> tuple[Callable, list[Any]]:
        """One placeholder per parameter of ``root_fn`` (after ``self``), or the concrete value given for it;
        returns the function to call with them all positionally, and them."""
        fn = inspect.unwrap(root_fn)
        code = fn.__code__
        if code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS):
            raise NotImplementedError(f"symbolic_trace: {fn.__qualname__} takes *args or **kwargs, which ember.fx "
                                      f"cannot make placeholders for; give the function named parameters")
        names = list(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount])
        args: list[Any] = []
        if is_module:
            if not names:
                raise RuntimeError("``self`` argument cannot be part of *args expansion!")
            names = names[1:]
            args.append(self.root)
        if isinstance(concrete_args, tuple):
            if len(concrete_args) != len(names):
                raise RuntimeError(f"Tracing expected {len(names)} arguments but got {len(concrete_args)} "
                                   f"concrete arguments")
            concrete_args = dict(zip(names, concrete_args))
        signature = inspect.signature(fn)
        args.extend(self._proxy_placeholder(name, concrete_args, signature, fn) for name in names)
        return _positionally(root_fn, code.co_argcount, names[len(names) - code.co_kwonlyargcount:]), args

    def _proxy_placeholder(self, name: str, concrete_args: dict | None, signature: inspect.Signature,
                           fn: Callable) -> Any:
        param = signature.parameters[name]
        default = () if param.default is inspect.Parameter.empty else (param.default,)
        if concrete_args is not None and name in concrete_args:
            return self._concrete_placeholder(name, concrete_args[name], default)
        return self.create_proxy("placeholder", name, default, {}, type_expr=_annotations(fn).get(name))

    def _concrete_placeholder(self, name: str, value: Any, default: tuple) -> Any:
        """The traced program sees ``value``; the graph keeps a ``<name>_1`` input and checks it equals ``value``."""
        out = self.create_proxy("placeholder", f"{name}_1", default, {})
        if isinstance(value, PHBase):
            return out
        message = f"{name} has been specialized to have value {value} but got another value"
        if type(value) is bool or isinstance(value, (int, float, complex, str)):
            ember._assert(out == value, message)
        elif value is None:
            self.create_proxy("call_function", _assert_is_none, (out, message), {})
        return value


def _positionally(fn: Callable, positional: int, keyword_only: list[str]) -> Callable:
    """``fn`` taking its keyword-only parameters positionally too, after the others (as placeholders come)."""
    if not keyword_only:
        return fn

    def call(*args: Any) -> Any:
        return fn(*args[:positional], **dict(zip(keyword_only, args[positional:])))

    return call


def _annotations(fn: Callable) -> dict[str, Any]:
    """``fn``'s annotations as objects (modules using ``from __future__ import annotations`` store strings).

    ``Any`` says nothing about a value, so it is left out, and so are annotations that do not resolve.
    """
    try:
        annotations = inspect.get_annotations(fn, eval_str=True)
    except Exception:  # a name only imported under TYPE_CHECKING, say
        return {}
    return {name: t for name, t in annotations.items() if t is not Any}


def symbolic_trace(root: ember.nn.Module | Callable, concrete_args: dict[str, Any] | None = None) -> Any:
    """Trace ``root`` and return a :class:`~ember.fx.GraphModule` that runs what was recorded.

    ``concrete_args`` fixes some arguments to values (removing control flow on
    them); the graph checks that later calls pass the same values.

    >>> import ember.fx
    >>> def f(x, y):
    ...     return ember.relu(x) + y
    >>> print(ember.fx.symbolic_trace(f).code.strip())
    def forward(self, x, y):
        relu = ember.relu(x);  x = None
        add = relu + y;  relu = y = None
        return add
    """
    from ember.fx.graph_module import GraphModule

    tracer = Tracer()
    graph = tracer.trace(root, concrete_args)
    name = type(root).__name__ if isinstance(root, ember.nn.Module) else root.__name__
    return GraphModule(tracer.root, graph, name)


register_side_effect(ember._assert)
