"""The ``__torch_function__`` protocol: how tensor-like types take part in ember's functions.

Every public function is defined with a decorator from this module, which is
also how the function gets listed in :func:`get_overridable_functions`:

>>> import ember
>>> from ember.overrides import overridable
>>> @overridable("mylib")
... def double(input):
...     return input * 2
>>> class Logged:
...     @classmethod
...     def __torch_function__(cls, func, types, args=(), kwargs=None):
...         return f"{resolve_name(func)} called"
>>> double(Logged())
'mylib.double called'

Plain tensors skip the protocol in a few tens of nanoseconds: a call
dispatches only if an argument's type defines ``__torch_function__`` (a
``Tensor`` subclass, or a tensor-like) or a :class:`TorchFunctionMode` is on.
"""
from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, Iterable

__all__ = [
    "BaseTorchFunctionMode", "TorchFunctionMode", "get_ignored_functions", "get_overridable_functions",
    "get_testing_overrides", "handle_torch_function", "has_torch_function", "is_tensor_like",
    "is_tensor_method_or_property", "overridable", "resolve_name", "wrap_torch_function",
]


class _ProtocolState:
    """What the fast path consults: the active modes and the disabling switches."""

    __slots__ = ("modes", "subclasses_enabled", "all_enabled")

    def __init__(self):
        self.modes: list = []
        self.subclasses_enabled = True
        self.all_enabled = True


_state = _ProtocolState()
_modes = _state.modes  # the same list, read by the hot path without an attribute lookup

# Types whose instances never take part in dispatch. Exactly ``Tensor`` is
# added when it is defined; other types are classified once, on first sight.
_never_dispatch: set = {int, float, bool, complex, str, type(None), slice, type(Ellipsis), bytes}
_dispatching_types: set = set()

_overridable: dict = {}  # namespace -> list of public functions
_ignored: set = set()
_names: dict = {}  # public function -> "ember.add"


def _disabled_torch_function_impl(cls, func, types, args=(), kwargs=None):
    """For types (like ``nn.Parameter``) whose instances behave as plain tensors."""
    with DisableTorchFunctionSubclass():
        return func(*args, **(kwargs or {}))


def _takes_part(t: type) -> bool:
    """Classify a type once: does it define a protocol handler that is not the disabled one?"""
    handler = getattr(t, "__torch_function__", None)
    if handler is None or getattr(handler, "__func__", handler) is _disabled_torch_function_impl:
        _never_dispatch.add(t)
        return False
    _dispatching_types.add(t)
    return True


def _collect(value, found: list) -> None:
    """Append the tensor-likes in ``value`` (searching lists and tuples) to ``found``."""
    t = type(value)
    if t in _never_dispatch:
        return
    if t is tuple or t is list:
        for item in value:
            _collect(item, found)
    elif t in _dispatching_types or _takes_part(t):
        found.append(value)


def _overloaded_args(args: Iterable, kwargs: dict | None = None) -> list:
    """The arguments to consult, in protocol order: subclasses before their bases, else left to right."""
    found: list = []
    for a in args:
        _collect(a, found)
    if kwargs:
        for a in kwargs.values():
            _collect(a, found)
    ordered: list = []
    seen_types: set = set()
    for arg in found:
        t = type(arg)
        if t in seen_types:
            continue
        seen_types.add(t)
        position = len(ordered)
        for i, earlier in enumerate(ordered):
            if issubclass(t, type(earlier)):
                position = i
                break
        ordered.insert(position, arg)
    return ordered


def _dispatch(public: Callable, impl: Callable, args: tuple, kwargs: dict):
    """The slow path: run modes, then handlers, then fall back to the implementation."""
    if not _state.all_enabled:
        return impl(*args, **kwargs)
    if _modes:
        mode = _modes.pop()
        try:
            types = tuple({type(a): None for a in _overloaded_args(args, kwargs)})
            result = mode.__torch_function__(public, types, args, kwargs)
        finally:
            _modes.append(mode)
        if result is not NotImplemented:
            return result
    if not _state.subclasses_enabled:
        return impl(*args, **kwargs)
    overloaded = _overloaded_args(args, kwargs)
    if not overloaded:
        return impl(*args, **kwargs)
    return _call_handlers(public, overloaded, args, kwargs)


def _call_handlers(public: Callable, overloaded: list, args: tuple, kwargs: dict):
    types = tuple(type(a) for a in overloaded)
    for arg in overloaded:
        result = type(arg).__torch_function__(public, types, args, kwargs)
        if result is not NotImplemented:
            return result
    raise TypeError(
        f"no implementation found for '{resolve_name(public)}' on types that implement "
        f"__torch_function__: {list(types)}"
    )


def overridable(namespace: str, name: str | None = None, operator: bool = False) -> Callable[[Callable], Callable]:
    """Make a function public in ``namespace`` and dispatching through ``__torch_function__``.

    The returned function is what users call and what handlers receive as ``func``.
    With ``operator=True`` (binary operators such as ``Tensor.__add__``), an operand
    of a type the op cannot take gives NotImplemented, so Python tries the other side.
    """

    def decorate(impl: Callable) -> Callable:
        def public(*args, **kwargs):
            if not _modes:
                for a in args:
                    if type(a) not in _never_dispatch:
                        break
                else:
                    if not kwargs:
                        return impl(*args)
                    for a in kwargs.values():
                        if type(a) not in _never_dispatch:
                            break
                    else:
                        return impl(*args, **kwargs)
            return _dispatch(public, impl, args, kwargs)

        def public_operator(*args):
            try:
                if not _modes:
                    for a in args:
                        if type(a) not in _never_dispatch:
                            break
                    else:
                        return impl(*args)
                return _dispatch(public_operator, impl, args, {})
            except _OperandTypeError:
                return NotImplemented

        function = public_operator if operator else public
        functools.update_wrapper(function, impl)
        function.__module__ = namespace
        if name is not None:
            function.__name__ = function.__qualname__ = name
        _overridable.setdefault(namespace, []).append(function)
        _names[function] = f"{namespace}.{function.__qualname__}"
        return function

    return decorate


_BINARY_OPERATORS = {"add", "sub", "mul", "truediv", "pow", "matmul", "eq", "ne", "lt", "le", "gt", "ge",
                     "radd", "rsub", "rmul", "rtruediv", "rpow", "rmatmul"}


def method(function: Callable, name: str | None = None, swap: bool = False) -> Callable:
    """A Tensor method that runs ``function``'s implementation and dispatches as ``Tensor.<name>``.

    ``swap=True`` makes a reflected operator: ``other.__rsub__(self)`` computes ``sub(self, other)``.
    """
    impl = function.__wrapped__
    if swap:
        forward = impl

        def impl(self, other):  # noqa: F811 - the reflected form of the implementation
            return forward(other, self)

    is_operator = bool(name) and name.strip("_") in _BINARY_OPERATORS
    return overridable("ember.Tensor", name or function.__name__, operator=is_operator)(impl)


class _OperandTypeError(TypeError):
    """Raised by operand conversion for a type an operator does not understand."""


def not_overridable(function: Callable) -> Callable:
    """Mark a public function (a factory, say) that has no tensor argument to dispatch on."""
    _ignored.add(function)
    return function


# ----------------------------------------------------------------------------------------------
# The public helpers of torch.overrides


def has_torch_function(relevant_args: Iterable) -> bool:
    """Whether any of ``relevant_args`` (or an active mode) asks for the protocol."""
    if not _state.all_enabled:
        return False
    if _modes:
        return True
    return _state.subclasses_enabled and bool(_overloaded_args(relevant_args))


def handle_torch_function(public_api: Callable, relevant_args: Iterable, *args, **kwargs) -> Any:
    """Dispatch ``public_api(*args, **kwargs)`` to the protocol; for functions users write themselves."""
    if _modes:
        mode = _modes.pop()
        try:
            types = tuple({type(a): None for a in _overloaded_args(relevant_args)})
            result = mode.__torch_function__(public_api, types, args, kwargs)
        finally:
            _modes.append(mode)
        if result is not NotImplemented:
            return result
    overloaded = _overloaded_args(relevant_args)
    if not overloaded:
        return public_api(*args, **kwargs)
    return _call_handlers(public_api, overloaded, args, kwargs)


def wrap_torch_function(dispatcher: Callable) -> Callable:
    """Decorate a user function so that the arguments ``dispatcher`` returns are checked for the protocol."""

    def decorate(func):
        @functools.wraps(func)
        def wrapped(*args, **kwargs):
            relevant = dispatcher(*args, **kwargs)
            if has_torch_function(relevant):
                return handle_torch_function(wrapped, relevant, *args, **kwargs)
            return func(*args, **kwargs)

        return wrapped

    return decorate


def is_tensor_like(inp: Any) -> bool:
    """True for tensors and for any object whose type defines ``__torch_function__``."""
    from ember._tensor import Tensor

    return type(inp) is Tensor or hasattr(type(inp), "__torch_function__")


def resolve_name(f: Callable) -> str | None:
    """The dotted public name of an overridable function, e.g. ``'ember.add'``."""
    name = _names.get(f)
    if name is None and isinstance(f, property):
        return _names.get(f.fget)
    return name


def get_overridable_functions() -> dict:
    """Map each namespace to the functions in it that dispatch through the protocol."""
    return {namespace: list(funcs) for namespace, funcs in _overridable.items()}


def get_ignored_functions() -> set:
    """Public functions that take no tensor argument and so never dispatch."""
    return set(_ignored)


def is_tensor_method_or_property(func: Callable) -> bool:
    return func in _overridable.get("ember.Tensor", ()) or _names.get(func, "").startswith("ember.Tensor.")


def get_testing_overrides() -> dict:
    """A dummy of the same signature, returning -1, for every overridable function."""
    dummies = {}
    for funcs in _overridable.values():
        for func in funcs:
            dummies[func] = _dummy_like(func)
    return dummies


def _dummy_like(func: Callable) -> Callable:
    def dummy(*args, **kwargs):
        return -1

    try:
        dummy.__signature__ = inspect.signature(func)
    except (TypeError, ValueError):
        pass
    dummy.__name__ = func.__name__
    return dummy


# ----------------------------------------------------------------------------------------------
# Modes and the disabling context managers


class TorchFunctionMode:
    """Intercept every overridable call made while the mode is active.

    Override ``__torch_function__(self, func, types, args=(), kwargs=None)``;
    inside it the mode is switched off, so calling ``func`` reaches the next mode
    or the implementation.

    >>> class Count(TorchFunctionMode):
    ...     calls = 0
    ...     def __torch_function__(self, func, types, args=(), kwargs=None):
    ...         Count.calls += 1
    ...         return func(*args, **(kwargs or {}))
    >>> with Count():
    ...     _ = ember.ones(2) + 1
    >>> Count.calls
    1
    """

    def __torch_function__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError(f"{type(self).__name__} must implement __torch_function__")

    def __enter__(self):
        _modes.append(self)
        return self

    def __exit__(self, *exc):
        if not _modes or _modes[-1] is not self:
            raise RuntimeError(f"{type(self).__name__}: modes must be exited in the reverse order they were entered")
        _modes.pop()
        return False

    @classmethod
    def push(cls, *args, **kwargs):
        return cls(*args, **kwargs).__enter__()


class BaseTorchFunctionMode(TorchFunctionMode):
    """A mode that calls through unchanged: subclass it and override only what you need."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


class DisableTorchFunctionSubclass:
    """Inside this block, subclasses and tensor-likes are treated as plain tensors (modes still run)."""

    def __enter__(self):
        self._prev = _state.subclasses_enabled
        _state.subclasses_enabled = False

    def __exit__(self, *exc):
        _state.subclasses_enabled = self._prev
        return False


class DisableTorchFunction:
    """Inside this block the protocol is off entirely: no modes, no handlers."""

    def __enter__(self):
        self._prev = (_state.all_enabled, _state.subclasses_enabled)
        _state.all_enabled = False
        _state.subclasses_enabled = False

    def __exit__(self, *exc):
        _state.all_enabled, _state.subclasses_enabled = self._prev
        return False
