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
docs/extending.md shows the three ways to use it: a tensor-like type, a
``Tensor`` subclass and a mode.
"""
from __future__ import annotations

import contextlib
import functools
import importlib
import inspect
import warnings
from typing import Any, Callable, Iterable

__all__ = [
    "BaseTorchFunctionMode", "DisableTorchFunction", "DisableTorchFunctionSubclass", "TorchFunctionMode",
    "get_default_nowrap_functions", "get_ignored_functions", "get_overridable_functions", "get_testing_overrides",
    "handle_torch_function", "has_torch_function", "has_torch_function_unary", "has_torch_function_variadic",
    "is_tensor_like", "is_tensor_method_or_property", "overridable",
    "resolve_name", "wrap_torch_function", "redispatch_function", "enable_reentrant_dispatch",
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
_dispatching_by_hand: list = []  # in get_testing_overrides only, as torch's nn.init.uniform_


def _disabled_torch_function_impl(cls, func, types, args=(), kwargs=None):
    """For types (like ``nn.Parameter``) whose instances behave as plain tensors."""
    with DisableTorchFunctionSubclass():
        return func(*args, **(kwargs or {}))


_MISSING = object()


def _takes_part(t: type) -> bool:
    """Classify a type once: does it define a protocol handler that is not the disabled one?

    Any ``__torch_function__`` attribute counts, as in torch: one set to None fails when called.
    """
    handler = getattr(t, "__torch_function__", _MISSING)
    if handler is _MISSING or getattr(handler, "__func__", handler) is _disabled_torch_function_impl:
        if t is not list and t is not tuple:  # never marked: the tensor-likes inside them are still searched
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
    """The arguments to consult, one per type, in protocol order: subclasses before their bases, else left to right."""
    found: list = []
    for a in args:
        _collect(a, found)
    if kwargs:
        for a in kwargs.values():
            _collect(a, found)
    return _in_protocol_order(found)


def _with_plain_tensors(values: Iterable) -> list:
    """As :func:`_overloaded_args` for the given values only (not inside lists), plain tensors included.

    That is how torch's functions written in Python (``handle_torch_function``) see
    their arguments: ``types`` lists ``Tensor`` too, and its default handler takes its turn.
    """
    from ember._tensor import Tensor

    found = [v for v in values if type(v) is Tensor or type(v) in _dispatching_types
             or (type(v) not in _never_dispatch and _takes_part(type(v)))]
    return _in_protocol_order(found)


def _in_protocol_order(found: list) -> list:
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


def _all_plain(values: Iterable) -> bool:
    """Whether nothing in ``values`` (or in the lists and tuples among them) takes part in dispatch."""
    for v in values:
        t = type(v)
        if t in _never_dispatch:
            continue
        if t is tuple or t is list:
            if not _all_plain(v):
                return False
        elif t in _dispatching_types or _takes_part(t):
            return False
    return True


def _dispatch(public: Callable, impl: Callable, args: tuple, kwargs: dict, written_in_python: bool = False):
    """The slow path: the innermost mode, then the handlers, then the implementation.

    Handlers get ``kwargs=None`` when the call had no keywords, as from torch's
    built-in functions. ``written_in_python`` marks what torch writes in Python
    (``Tensor.__rsub__``, ``Tensor.__pow__``, ...): there plain tensors count
    among ``types`` and ``kwargs`` is always a dict.
    """
    if not _modes and _all_plain(args):  # plain tensors inside a list or a shape tuple: ember.cat([a, b]), t.view((2, 3))
        if not kwargs:
            return impl(*args)
        if _all_plain(kwargs.values()):
            return _keyword_impls.get(public, impl)(*args, **kwargs)
    if kwargs:  # handlers still see the keywords as written, NumPy's names included, as in torch
        impl = _keyword_impls.get(public, impl)
    if not _state.all_enabled:
        return impl(*args, **kwargs)
    overloaded = _overloaded_args(args, kwargs) if _state.subclasses_enabled else []
    if not _modes and not overloaded:
        return impl(*args, **kwargs)  # only Parameter-like arguments, or subclasses switched off
    if written_in_python:
        overloaded = _with_plain_tensors(args + tuple(kwargs.values())) if _state.subclasses_enabled else []
    elif _names.get(public) in _HANDED_A_DICT:
        kwargs = kwargs or {}
    else:
        kwargs = kwargs or None
    if _modes:
        result = _call_innermost_mode(public, overloaded, args, kwargs)
        if result is _SKIPPED_HOP:
            return impl(*args, **(kwargs or {}))
        if result is not NotImplemented:
            return result
    return _call_handlers(public, overloaded, args, kwargs)


def _call_innermost_mode(public: Callable, overloaded: list, args: tuple, kwargs: dict | None):
    """Run the innermost mode's handler with that mode switched off, so ``func`` reaches the next one.

    Returns ``_SKIPPED_HOP``, taking it off the stack, when :func:`redispatch_function`
    asked that this call skip the protocol: the caller then runs the implementation.
    """
    mode = _modes.pop()
    if mode is _SKIPPED_HOP:
        return mode
    try:
        handler = mode.__torch_function__
        if getattr(handler, "__self__", None) is type(mode):
            name = type(mode).__name__
            raise RuntimeError(
                f"{name}: a mode's __torch_function__ cannot be a classmethod, as the mode is an object "
                f"entered with `with {name}():`; please make it a plain method (remove @classmethod)"
            )
        return handler(public, tuple(type(a) for a in overloaded), args, kwargs)
    finally:
        _modes.append(mode)


def _call_handlers(public: Callable, overloaded: list, args: tuple, kwargs: dict | None):
    """Try each type's handler in protocol order; the first result that is not NotImplemented wins."""
    types = tuple(type(a) for a in overloaded)
    for arg in overloaded:
        # through the instance, as torch does: a classmethod gets the class, a (deprecated) plain method the instance
        result = arg.__torch_function__(public, types, args, kwargs)
        if result is not NotImplemented:
            return result
    mode = f" nor in mode {_modes[-1]!r}" if _modes else ""
    error = TypeError(
        f"no implementation found for '{_public_name(public)}' on types that implement "
        f"__torch_function__: {list(types)}{mode}"
    )
    error.unhandled_function = public  # lets an operator answer NotImplemented for its own call only
    raise error


class _OperandTypeError(TypeError):
    """Raised by operand conversion for a type an operator does not understand.

    Operators turn it into NotImplemented; functions let it through, and then
    the traceback should read ``TypeError: add(): argument ...`` as in torch.
    """


_OperandTypeError.__name__ = _OperandTypeError.__qualname__ = "TypeError"
_OperandTypeError.__module__ = "builtins"


def _public_name(func: Callable) -> str:
    name = resolve_name(func)
    if name is None:
        name = f"{getattr(func, '__module__', None)}.{getattr(func, '__name__', func)}"
    return name


def _register(public: Callable, namespace: str, name: str) -> None:
    _overridable.setdefault(namespace, []).append(public)
    _names[public] = f"{namespace}.{name}"


def overridable(namespace: str, name: str | None = None) -> Callable[[Callable], Callable]:
    """Make a function public in ``namespace`` and dispatching through ``__torch_function__``.

    The returned function is what users call and what handlers receive as ``func``.
    """

    def decorate(impl: Callable) -> Callable:
        public_name = name or impl.__qualname__
        aliases = _NUMPY_NAMES.get(f"{namespace}.{public_name}")
        keyed = impl if aliases is None else _taking_numpy_names(impl, aliases, public_name)
        public = _public_shape(impl)(impl, keyed)
        functools.update_wrapper(public, impl)
        public.__module__ = namespace
        if name is not None:
            public.__name__ = public.__qualname__ = name
        _register(public, namespace, public_name)
        if aliases is not None:
            _keyword_impls[public] = keyed
            _numpy_names_of[public] = aliases, public_name
        return public

    return decorate


_numpy_names_of: dict = {}  # a public function -> (the NumPy names it takes, its name)


def with_ember_names(func: Callable, kwargs: dict) -> dict:
    """``func``'s keyword arguments under ember's parameter names (``axis=`` as ``dim=``), for code that reads
    them by name, such as vmap's batching rules."""
    names = _numpy_names_of.get(func) if kwargs else None
    return kwargs if names is None else _renamed(kwargs, *names)


# NumPy's names for parameters, which torch's argument parser also takes, for the functions and
# methods it binds from C++ (not for those it writes in Python: torch.norm, Tensor.norm, F.relu ...).
# Each maps a name the user may write to the parameter of ember's implementation it stands for.
_INPUT = {"x": "input", "a": "input", "x1": "input"}  # methods have no such parameter: self is positional
_OTHER = {"x2": "other"}
_DIM = {"axis": "dim"}
_KEEPDIM = {"keepdims": "keepdim"}
_LINALG_X = {"input": "x", "a": "x", "x1": "x"}  # vector_norm names its input x, as torch does

# The binary pointwise, comparison and logic ops that take x2= for other (x1=, x=, a= for input), as functions
# and as methods, and those of them with an in-place method (which takes x2= too).
_BINARY_WITH_X2 = (
    "remainder fmod floor_divide atan2 arctan2 hypot logaddexp logaddexp2 copysign nextafter isclose allclose "
    "logical_and logical_or logical_xor divide multiply subtract true_divide greater greater_equal less less_equal "
    "not_equal bitwise_and bitwise_or bitwise_xor bitwise_left_shift bitwise_right_shift ldexp gcd lcm"
).split()
_NOT_IN_PLACE = ("logaddexp", "logaddexp2", "isclose", "allclose")
_BINARY_IN_PLACE_WITH_X2 = [name + "_" for name in _BINARY_WITH_X2 if name not in _NOT_IN_PLACE] + [
    "eq_", "ne_", "lt_", "le_", "gt_", "ge_"]

# Checked one by one against torch 2.13 (tests/test_aliases_and_matmul.py). torch.dot names its
# second parameter "tensor" and mm "mat2", so neither takes x2; swapaxes has axis0/axis1, no dim.
_NUMPY_NAMES_BY_FUNCTION = (
    ({**_INPUT, **_DIM, **_KEEPDIM}, "ember.sum ember.mean ember.all ember.any ember.amax ember.amin"),
    ({**_INPUT, **_DIM}, "ember.squeeze ember.unsqueeze ember.narrow ember.select ember.unbind"),
    ({**_INPUT, **_OTHER}, "ember.add ember.sub ember.rsub ember.mul ember.div ember.eq ember.ne ember.lt ember.le "
                           "ember.gt ember.ge ember.equal ember.where ember.matmul ember.linalg.matmul"),
    (_INPUT, "ember.exp ember.log ember.sqrt ember.reciprocal ember.sigmoid ember.tanh ember.relu ember.abs "
             "ember.absolute ember.clamp ember.clamp_min ember.clamp_max ember.floor ember.ceil ember.trunc "
             "ember.round ember.sign ember.neg ember.negative ember.pow ember.clone ember.reshape ember.flatten "
             "ember.transpose ember.t ember.permute ember.broadcast_to ember.index_put ember.addmm "
             "ember.mm ember.dot ember.zeros_like ember.ones_like ember.empty_like ember.full_like ember.rand_like "
             "ember.randn_like ember.numel ember.is_floating_point ember.nn.functional.linear"),
    (_DIM, "ember.cat ember.concat ember.concatenate ember.stack ember.linalg.vecdot"),
    ({**_LINALG_X, **_DIM, **_KEEPDIM}, "ember.linalg.vector_norm"),
    ({**_INPUT, **_DIM, **_KEEPDIM}, "ember.linalg.matrix_norm ember.linalg.norm"),  # torch's parser: input, not A
    ({**_DIM, **_KEEPDIM}, "ember.Tensor.sum ember.Tensor.mean ember.Tensor.all ember.Tensor.any ember.Tensor.amax "
                           "ember.Tensor.amin"),
    ({"from": "from_"}, "ember.Tensor.uniform_"),  # "from" is a Python keyword: no parameter can have that name
    (_DIM, "ember.Tensor.squeeze ember.Tensor.unsqueeze ember.Tensor.narrow ember.Tensor.select "
           "ember.Tensor.unbind ember.Tensor.size ember.Tensor.stride"),
    (_OTHER, "ember.Tensor.add ember.Tensor.sub ember.Tensor.mul ember.Tensor.div ember.Tensor.true_divide "
             "ember.Tensor.eq ember.Tensor.ne ember.Tensor.lt ember.Tensor.le ember.Tensor.gt ember.Tensor.ge "
             "ember.Tensor.equal ember.Tensor.where ember.Tensor.matmul ember.Tensor.expand_as "
             "ember.Tensor.view_as ember.Tensor.reshape_as ember.Tensor.type_as ember.Tensor.add_ "
             "ember.Tensor.sub_ ember.Tensor.mul_ ember.Tensor.div_ ember.Tensor.copy_"),
    # reductions and scans
    ({**_INPUT, **_DIM, **_KEEPDIM, **_OTHER}, "ember.max ember.min"),
    ({**_INPUT, **_DIM, **_KEEPDIM}, "ember.argmax ember.argmin ember.aminmax ember.prod ember.nansum "
                                     "ember.nanmean ember.count_nonzero ember.var ember.std ember.var_mean "
                                     "ember.std_mean ember.logsumexp"),
    ({**_INPUT, **_DIM}, "ember.sort ember.argsort"),
    (_DIM, "ember.Tensor.sort ember.Tensor.argsort"),
    ({**_INPUT, **_DIM}, "ember.softmax ember.log_softmax ember.cumsum ember.cumprod ember.cummax ember.cummin "
                         "ember.logcumsumexp"),
    ({**_INPUT, **_OTHER}, "ember.maximum ember.minimum ember.fmax ember.fmin"),
    ({**_DIM, **_KEEPDIM, **_OTHER}, "ember.Tensor.max ember.Tensor.min"),
    ({**_DIM, **_KEEPDIM}, "ember.Tensor.argmax ember.Tensor.argmin ember.Tensor.aminmax ember.Tensor.prod "
                           "ember.Tensor.nansum ember.Tensor.nanmean ember.Tensor.count_nonzero ember.Tensor.var "
                           "ember.Tensor.std ember.Tensor.logsumexp"),
    (_DIM, "ember.Tensor.softmax ember.Tensor.log_softmax ember.Tensor.cumsum ember.Tensor.cumprod "
           "ember.Tensor.cummax ember.Tensor.cummin ember.Tensor.logcumsumexp ember.Tensor.cumsum_ "
           "ember.Tensor.cumprod_"),
    (_OTHER, "ember.Tensor.maximum ember.Tensor.minimum ember.Tensor.fmax ember.Tensor.fmin"),
    (_INPUT, "ember.sin ember.cos ember.tan ember.asin ember.acos ember.atan ember.sinh ember.cosh ember.asinh "
             "ember.acosh ember.atanh ember.arcsin ember.arccos ember.arctan ember.arcsinh ember.arccosh "
             "ember.arctanh ember.deg2rad ember.rad2deg ember.sinc ember.exp2 ember.expm1 ember.log2 "
             "ember.log10 ember.log1p ember.rsqrt ember.square ember.sgn ember.frac ember.logit ember.erf "
             "ember.erfc ember.erfinv ember.lgamma ember.digamma ember.i0 ember.polygamma ember.mvlgamma "
             "ember.special.expit "
             "ember.special.logit ember.special.erf ember.special.erfc ember.special.erfcx ember.special.erfinv "
             "ember.special.gammaln ember.special.digamma ember.special.polygamma ember.special.entr "
             "ember.special.sinc ember.special.i0 ember.special.i0e ember.special.i1 ember.special.i1e "
             "ember.special.ndtr ember.special.ndtri ember.special.log_ndtr ember.special.round "
             "ember.special.expm1 ember.special.exp2 ember.special.log1p ember.special.multigammaln "
             "ember.special.modified_bessel_i0 ember.special.modified_bessel_i1 ember.special.modified_bessel_k0 "
             "ember.special.modified_bessel_k1 ember.special.bessel_j0 ember.special.bessel_j1 ember.special.bessel_y0 "
             "ember.special.bessel_y1"),
    ({**_INPUT, **_OTHER}, "ember.xlogy ember.special.xlogy ember.special.xlog1py ember.special.zeta ember.igamma "
                           "ember.igammac ember.special.gammainc ember.special.gammaincc"),
    # the binary pointwise, comparison and logic ops (_ops/binary.py, _ops/logical.py)
    ({**_INPUT, **_OTHER}, " ".join("ember." + name for name in _BINARY_WITH_X2)),
    (_INPUT, "ember.isnan ember.isinf ember.isposinf ember.isneginf ember.isfinite ember.isreal ember.logical_not "
             "ember.signbit ember.frexp ember.nan_to_num ember.bitwise_not ember.float_power ember.lerp "
             "ember.heaviside ember.addcmul ember.addcdiv"),
    (_OTHER, " ".join(f"ember.Tensor.{name}" for name in _BINARY_WITH_X2 + _BINARY_IN_PLACE_WITH_X2)),
)
_NUMPY_NAMES = {public: names for names, publics in _NUMPY_NAMES_BY_FUNCTION for public in publics.split()}
_keyword_impls: dict = {}  # public function -> its implementation for calls with keywords, if it takes NumPy's names


def _taking_numpy_names(impl: Callable, aliases: dict, op: str) -> Callable:
    """``impl`` for calls with keywords: NumPy's names among them (``axis=``) become ember's (``dim=``).

    Only calls with keywords come here, so calls without pay nothing; those with pay a loop over their keywords.
    """

    def keyed(*args, **kwargs):
        for key in kwargs:
            if key in aliases:
                return impl(*args, **_renamed(kwargs, aliases, op))
        return impl(*args, **kwargs)

    return keyed


def _renamed(kwargs: dict, aliases: dict, op: str) -> dict:
    """``kwargs`` under ember's names; a parameter given under two names is a TypeError, as in torch."""
    claimed: dict = {}  # parameter -> the NumPy name it came under
    for key in kwargs:
        name = aliases.get(key)
        if name is not None:
            if name in kwargs or name in claimed:
                alias = claimed.get(name, key)
                raise TypeError(
                    f"{op}() got an unexpected keyword argument '{alias}': it is another name for '{name}', "
                    f"which this call gives too; pass only one of them"
                )
            claimed[name] = key
    return {aliases.get(key, key): value for key, value in kwargs.items()}


_Param = inspect.Parameter


def _with_any_arguments(impl: Callable, keyed: Callable) -> Callable:
    """The public function: it checks whatever it is given, and hands it on as given.

    The check costs one type lookup per argument; plain tensors and numbers never dispatch.
    (``_call`` finds ``keyed`` itself, on the rarer calls with keywords.)
    """

    def public(*args, **kwargs):
        return _call(public, impl, args, kwargs)

    return public


def _call(public: Callable, impl: Callable, args: tuple, kwargs: dict):
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
                return _keyword_impls.get(public, impl)(*args, **kwargs)
    return _dispatch(public, impl, args, kwargs)


class _Absent:
    """Marks a leading argument not given positionally (it came as a keyword, or not at all)."""


_ABSENT = _Absent()


def _with_one_operand(impl: Callable, keyed: Callable) -> Callable:
    """For ``f(input, ...)``: the common calls ``f(t)`` and ``f(t, x)`` are checked without packing arguments.

    ``keyed`` is ``impl`` for calls with keywords (see :func:`_taking_numpy_names`).
    """

    def public(first=_ABSENT, second=_ABSENT, /, *rest, **kwargs):
        if (type(first) in _never_dispatch or type(first) in _SEQUENCES and _plain(first)) and not _modes:
            if not kwargs:
                if second is _ABSENT:
                    return impl(first)
                if type(second) in _never_dispatch:  # t.sum(0), y.backward(g): one more argument, still unpacked
                    if not rest:
                        return impl(first, second)
                    for value in rest:  # x.reshape(2, 8): _plain's loop, without a call
                        if type(value) not in _never_dispatch:
                            break
                    else:
                        return impl(first, second, *rest)
            elif _plain(kwargs.values()):
                if second is _ABSENT:
                    return keyed(first, **kwargs)
                if type(second) in _never_dispatch and (not rest or _plain(rest)):
                    return keyed(first, second, *rest, **kwargs)
        return _call(public, impl, _given(first, second, rest), kwargs)

    return public


def _with_two_operands(impl: Callable, keyed: Callable) -> Callable:
    """For ``f(input, other, ...)``: the common call ``f(a, b)`` is checked without packing its arguments."""

    def public(first=_ABSENT, second=_ABSENT, /, *rest, **kwargs):
        if type(first) in _never_dispatch and not (_modes or rest):
            if type(second) not in _never_dispatch:
                if type(second) is not tuple:
                    return _call(public, impl, _given(first, second, rest), kwargs)
                for item in second:  # x[:, 1:3]: a key of plain items (_plain, inlined)
                    if type(item) not in _never_dispatch:
                        return _call(public, impl, _given(first, second, rest), kwargs)
            if not kwargs:
                return impl(first, second)
            for value in kwargs.values():  # x.add_(g, alpha=0.1): keywords of plain values too (_plain, inlined)
                if type(value) not in _never_dispatch:
                    break
            else:
                return keyed(first, second, **kwargs)
        return _call(public, impl, _given(first, second, rest), kwargs)

    return public


_SEQUENCES = frozenset({list, tuple})  # of tensors: ember.cat([a, b]), x.view((2, 8)) ...


def _plain(values) -> bool:
    """Whether none of ``values`` has a type that takes part in dispatch (a loop: cheaper than any())."""
    for v in values:
        if type(v) not in _never_dispatch:
            return False
    return True


def _given(first, second, rest: tuple) -> tuple:
    """The positional arguments actually passed (``_ABSENT`` marks those that were not)."""
    if second is not _ABSENT:
        return (first, second) + rest
    return rest if first is _ABSENT else (first,) + rest


def _public_shape(impl: Callable) -> Callable:
    """The public function for ``impl``, by how many required positional parameters it has."""
    try:
        params = inspect.signature(impl, follow_wrapped=False).parameters.values()
    except (TypeError, ValueError):
        return _with_any_arguments
    required = sum(p.kind in (_Param.POSITIONAL_ONLY, _Param.POSITIONAL_OR_KEYWORD) and p.default is _Param.empty
                   for p in params)
    return {1: _with_one_operand, 2: _with_two_operands}.get(required, _with_any_arguments)


def tensor_method(impl: Callable, name: str | None = None) -> Callable:
    """A method defined in the Tensor class, made to dispatch as ``ember.Tensor.<name>``."""
    return overridable("ember.Tensor", name or impl.__name__)(impl)


def method(function: Callable, name: str | None = None, swap: bool = False) -> Callable:
    """A Tensor method that runs ``function``'s implementation and dispatches as ``Tensor.<name>``.

    ``swap=True`` makes a reflected operator: ``other.__rsub__(self)`` computes ``sub(self, other)``.
    ``function`` is a public function, or a bare implementation that has no public function of its own.
    """
    impl = getattr(function, "__wrapped__", function)
    if swap:
        forward = impl

        def impl(self, other):  # noqa: F811 - the reflected form of the implementation
            return forward(other, self)

    name = name or function.__name__
    if name.startswith("__") and _required_positional(impl) == 2:
        return _operator(impl, name)
    return tensor_method(impl, name)  # unary operators (-t, abs(t)) have no other operand to defer to


def _required_positional(impl: Callable) -> int:
    params = inspect.signature(impl, follow_wrapped=False).parameters.values()
    return sum(p.kind is _Param.POSITIONAL_OR_KEYWORD and p.default is _Param.empty for p in params)


# What torch hands a handler for an operator. Its operators written in C++ hand the named
# method (``t + x`` and ``x + t`` hand ``Tensor.add``); those written in Python hand
# themselves, count plain tensors among ``types`` and pass ``kwargs={}``.
_OPERATOR_HANDS = {
    "__add__": "add", "__radd__": "add", "__sub__": "sub", "__mul__": "mul", "__rmul__": "mul",
    "__truediv__": "div", "__div__": "div", "__matmul__": "matmul", "__mod__": "remainder",
    "__rand__": "bitwise_and", "__ror__": "bitwise_or", "__rxor__": "bitwise_xor",
    "__eq__": "eq", "__ne__": "ne", "__lt__": "lt", "__le__": "le", "__gt__": "gt", "__ge__": "ge",
    "__iadd__": "add_", "__isub__": "sub_", "__imul__": "mul_", "__itruediv__": "div_",
    "__ifloordiv__": "floor_divide_", "__imod__": "remainder_",
}
# torch hands ``Tensor.__eq__`` itself when a mode is active or ``self`` is a dispatching subclass,
# and ``Tensor.eq`` only when the tensor-like is the other operand
_HANDED_ITSELF_FROM_SUBCLASSES = {"__eq__"}
# Methods torch writes in Python without keyword parameters: their handlers get ``kwargs={}``, not None
_HANDED_A_DICT = {
    f"ember.Tensor.{name}" for name in ("__format__", "__reversed__", "__len__", "__contains__", "register_hook",
                                        "share_memory_", "is_shared", "dim_order", "unflatten")
}
_OPERATORS_WRITTEN_IN_PYTHON = {
    "__rsub__", "__rtruediv__", "__rdiv__", "__floordiv__", "__rfloordiv__", "__rmod__",
    "__pow__", "__rpow__", "__ipow__", "__rmatmul__", "__rlshift__", "__rrshift__",
}


def _operator(impl: Callable, name: str) -> Callable:
    """A binary operator: it returns NotImplemented for operands it cannot take, so Python tries the other side.

    Handlers receive as ``func`` what torch's do: ``Tensor.add`` for ``+``, the operator itself for ``**``.
    """
    method_name = _OPERATOR_HANDS.get(name)
    in_python = name in _OPERATORS_WRITTEN_IN_PYTHON
    handed: list = []  # the method, found on first dispatch (it is defined after the operator)

    def operator(self, other):
        try:
            if not _modes and type(self) in _never_dispatch and type(other) in _never_dispatch:
                return impl(self, other)
            if method_name is None or name in _HANDED_ITSELF_FROM_SUBCLASSES and (_modes or _dispatches(type(self))):
                func = operator
            else:
                func = handed[0] if handed else _named_method(method_name, handed)
            return _dispatch(func, impl, (self, other), {}, in_python)
        except _OperandTypeError:
            return NotImplemented
        except TypeError as error:
            if getattr(error, "unhandled_function", None) in (operator, *handed):
                return NotImplemented  # every handler declined: Python may still try the other operand
            raise

    functools.update_wrapper(operator, impl)
    operator.__name__ = operator.__qualname__ = name
    operator.__module__ = "ember.Tensor"
    _register(operator, "ember.Tensor", name)
    return operator


def _named_method(name: str, cache: list) -> Callable:
    from ember._tensor import Tensor

    cache.append(getattr(Tensor, name))
    return cache[0]


def tensor_property(prop: property, name: str) -> property:
    """A Tensor property whose getter (and setter, deleter) dispatch; handlers see ``Tensor.<name>.__get__`` (or
    ``__set__``, ``__delete__``)."""
    getter, setter, deleter = prop.fget, prop.fset, prop.fdel

    def get(self):
        if not _modes and type(self) in _never_dispatch:
            return getter(self)
        return _dispatch(on_get, getter, (self,), {})

    def set_(self, value):
        if not _modes and type(self) in _never_dispatch:
            return setter(self, value)
        return _dispatch(on_set, setter, (self, value), {})

    def delete(self):
        if not _modes and type(self) in _never_dispatch:
            return deleter(self)
        return _dispatch(on_delete, deleter, (self,), {})

    dispatching = property(get, set_ if setter is not None else None, delete if deleter is not None else None,
                           prop.__doc__)
    on_get = dispatching.__get__  # a new object on each access, but equal to (and hashing like) the others
    _register(on_get, "ember.Tensor", f"{name}.__get__")
    if setter is not None:
        on_set = dispatching.__set__
        _register(on_set, "ember.Tensor", f"{name}.__set__")
    if deleter is not None:
        on_delete = dispatching.__delete__
        _register(on_delete, "ember.Tensor", f"{name}.__delete__")
    return dispatching


def dispatches_by_hand(namespace: str) -> Callable[[Callable], Callable]:
    """Name a function that calls :func:`handle_torch_function` itself (torch's ``nn.init.uniform_``, say).

    As in torch, handlers and :func:`resolve_name` know it by its public name and
    :func:`get_testing_overrides` has a dummy for it, yet it is not among
    :func:`get_overridable_functions`.
    """

    def name(function: Callable) -> Callable:
        _names[function] = f"{namespace}.{function.__qualname__}"
        _dispatching_by_hand.append(function)
        return function

    return name


def not_overridable(function: Callable) -> Callable:
    """Mark a public function that has no tensor argument to dispatch on (``from_numpy``, say)."""
    _ignored.add(function)
    return function


def factory(namespace: str) -> Callable[[Callable], Callable]:
    """A public function that makes tensors from no tensor (``ember.ones``): modes see it, subclasses cannot override it.

    As in torch: a factory is among ``get_ignored_functions()``, as nothing among its
    arguments could carry a handler, yet an active mode receives the call.
    """

    def decorate(impl: Callable) -> Callable:
        def public(*args, **kwargs):
            if not _modes or not _state.all_enabled:
                return impl(*args, **kwargs)
            result = _call_innermost_mode(public, [], args, kwargs or None)
            if result is _SKIPPED_HOP:
                return impl(*args, **kwargs)
            if result is NotImplemented:  # no argument can take the call over: as torch, an error, not the impl
                return _call_handlers(public, [], args, kwargs or None)
            return result

        functools.update_wrapper(public, impl)
        public.__module__ = namespace
        _ignored.add(public)
        _names[public] = f"{namespace}.{public.__qualname__}"
        return public

    return decorate


# ----------------------------------------------------------------------------------------------
# The public helpers of torch.overrides


def has_torch_function(relevant_args: Iterable) -> bool:
    """Whether any of ``relevant_args`` (or an active mode) asks for the protocol.

    As in torch, only the arguments themselves are looked at, not what lists
    or tuples among them hold.

    >>> has_torch_function((ember.ones(2), 3))
    False
    """
    if not _state.all_enabled:
        return False
    if _modes:
        if _modes[-1] is _SKIPPED_HOP:  # redispatch_function: this check is the hop to skip
            _modes.pop()
            return False
        return True
    return _state.subclasses_enabled and any(_dispatches(type(a)) for a in relevant_args)


def _dispatches(t: type) -> bool:
    return t not in _never_dispatch and (t in _dispatching_types or _takes_part(t))


def has_torch_function_unary(arg: Any) -> bool:
    """``has_torch_function((arg,))``, for the common one-tensor case."""
    return has_torch_function((arg,))


def has_torch_function_variadic(*args: Any) -> bool:
    """``has_torch_function(args)``, without building the tuple at the call site."""
    return has_torch_function(args)


def handle_torch_function(public_api: Callable, relevant_args: Iterable, *args, **kwargs) -> Any:
    """Dispatch ``public_api(*args, **kwargs)`` to the modes and handlers; for functions users write themselves.

    Call it only when :func:`has_torch_function` said yes: with nothing to
    dispatch to, it raises the same TypeError as when every handler declines.
    As in torch, plain tensors among ``relevant_args`` count too (their default
    handler calls ``public_api`` itself), and handlers get ``kwargs`` as a dict.
    """
    overloaded = _with_plain_tensors(relevant_args) if _state.subclasses_enabled else []
    if _modes and _state.all_enabled:
        result = _call_innermost_mode(public_api, overloaded, args, kwargs)
        if result is _SKIPPED_HOP:
            return public_api(*args, **kwargs)
        if result is not NotImplemented:
            return result
    return _call_handlers(public_api, overloaded, args, kwargs)


class _SkippedHop:
    """Stands innermost on the mode stack while :func:`redispatch_function` runs its function.

    A mode on the stack sends every call through the slow path, so the first call
    that consults the protocol (or ``has_torch_function``) finds it, takes it off
    and runs as if nothing overrides it; the calls after that dispatch as usual.
    """

    def __repr__(self):
        return "<skipped __torch_function__ hop>"


_SKIPPED_HOP = _SkippedHop()


def redispatch_function(func: Callable, types: Iterable, args: tuple, kwargs: dict | None = None) -> Any:
    """Call ``func(*args, **kwargs)`` skipping one level of ``__torch_function__`` dispatch.

    From a handler, this runs the function's implementation instead of coming back
    to the same handler, while the calls that implementation makes still dispatch.
    A Tensor subclass's handler so gets a plain ``Tensor`` back; ``types`` is
    accepted for the handler's signature and not consulted.

    >>> class Logged(ember.Tensor):
    ...     @classmethod
    ...     def __torch_function__(cls, func, types, args=(), kwargs=None):
    ...         print("called", func.__name__)
    ...         return redispatch_function(func, types, args, kwargs)
    >>> x = ember.ones(2).as_subclass(Logged)
    >>> type(ember.add(x, 1)).__name__
    called add
    'Tensor'
    """
    depth = len(_modes)
    _modes.append(_SKIPPED_HOP)
    try:
        result = func(*args, **(kwargs or {}))
    except BaseException:
        _drop_unused_skip(depth)
        raise
    if _drop_unused_skip(depth):
        raise RuntimeError(
            f"redispatch_function: {getattr(func, '__name__', func)!r} made no call that consults "
            f"__torch_function__ (neither an ember function nor has_torch_function), so there was no "
            f"dispatch to skip; call the function directly instead")
    return result


def _drop_unused_skip(depth: int) -> bool:
    """Take the skip that :func:`redispatch_function` put at ``depth`` of the mode stack off it, if no call
    used it; whether it was there."""
    if len(_modes) > depth and _modes[depth] is _SKIPPED_HOP:
        del _modes[depth]
        return True
    return False


@contextlib.contextmanager
def enable_reentrant_dispatch():
    """For ``__torch_dispatch__`` handlers in torch; ember has no ``__torch_dispatch__``, so, as torch does
    outside one, entering it raises RuntimeError."""
    raise RuntimeError("Accessing torch dispatch state outside of '__torch_dispatch__' is not allowed.")
    yield  # (never reached: makes this a generator, as contextmanager needs)


def wrap_torch_function(dispatcher: Callable) -> Callable:
    """Decorate a user function so that the arguments ``dispatcher`` returns are checked for the protocol.

    >>> def _dispatcher(x):
    ...     return (x,)
    >>> @wrap_torch_function(_dispatcher)
    ... def halve(x):
    ...     return x / 2
    >>> halve(ember.ones(1))
    tensor([0.5000])
    """

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
    """True for tensors, and for anything (an instance or a class) with a ``__torch_function__``."""
    from ember._tensor import Tensor

    return type(inp) is Tensor or hasattr(inp, "__torch_function__")


def resolve_name(f: Callable) -> str | None:
    """The dotted public name of an overridable function, e.g. ``'ember.add'``; None for other callables.

    >>> resolve_name(ember.Tensor.shape.__get__)
    'ember.Tensor.shape.__get__'
    """
    try:
        return _names.get(f)
    except TypeError:  # an unhashable callable is not one of ours
        return None


def get_overridable_functions() -> dict:
    """Map each namespace (the module, or ``ember.Tensor``) to the functions in it that dispatch."""
    return {_namespace_object(namespace): list(funcs) for namespace, funcs in _overridable.items()}


def _namespace_object(namespace: str):
    """``'ember.nn.functional'`` -> the module; ``'ember.Tensor'`` -> the class; else the name itself."""
    try:
        return importlib.import_module(namespace)
    except ImportError:
        parent, _, attr = namespace.rpartition(".")
        try:
            return getattr(importlib.import_module(parent), attr)
        except (ImportError, AttributeError, ValueError):
            return namespace


def get_ignored_functions() -> set:
    """Public functions that take no tensor argument (factories and the like) and so never dispatch."""
    return set(_ignored)


def get_default_nowrap_functions() -> set:
    """Functions whose results the default ``Tensor.__torch_function__`` returns unwrapped (``Tensor.grad.__get__``)."""
    from ember._tensor import _NO_WRAP

    return set(_NO_WRAP)


def is_tensor_method_or_property(func: Callable) -> bool:
    """Whether ``func`` is a Tensor method, operator or property accessor (``Tensor.add``, ``Tensor.shape.__get__``)."""
    name = resolve_name(func)
    return name is not None and name.startswith("ember.Tensor.")


def get_testing_overrides() -> dict:
    """A dummy of the same signature, returning -1, for every overridable function."""
    dummies = {}
    for funcs in (*_overridable.values(), _dispatching_by_hand):
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
    inside it the mode is switched off, so calling ``func`` reaches the next
    (outer) mode, then the handlers of the arguments, then the implementation.
    Nested modes run innermost first.

    >>> class Count(TorchFunctionMode):
    ...     calls = 0
    ...     def __torch_function__(self, func, types, args=(), kwargs=None):
    ...         Count.calls += 1
    ...         return func(*args, **(kwargs or {}))
    >>> with Count():
    ...     _ = ember.ones(2) + 1
    >>> Count.calls  # ember.ones and Tensor.add (what + hands): modes see factories too, as in torch
    2
    """

    def __torch_function__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError(f"{type(self).__name__} must implement __torch_function__")

    def __enter__(self):
        _modes.append(self)
        return self

    def __exit__(self, *exc):
        # as torch: leaving a mode pops the innermost one, whichever it is, so the stack never keeps a mode
        # whose block has ended, and leaving more modes than were entered raises
        _pop_mode()
        return False

    @classmethod
    def push(cls, *args, **kwargs):
        """Deprecated, as in torch: makes a mode without entering it (enter it with ``with``)."""
        warnings.warn("`Mode.push()` is no longer necessary and can be replaced with just `with Mode()`",
                      UserWarning, stacklevel=2)
        return cls(*args, **kwargs)


def _get_current_function_mode() -> TorchFunctionMode | None:
    """The innermost active mode (the one the next call reaches first), or None."""
    modes = _get_current_function_mode_stack()
    return modes[-1] if modes else None


def _get_current_function_mode_stack() -> list:
    """The active modes, outermost first.

    >>> with BaseTorchFunctionMode() as mode:
    ...     _get_current_function_mode_stack() == [mode]
    True
    """
    return [mode for mode in _modes if mode is not _SKIPPED_HOP]


def _is_torch_function_mode_enabled() -> bool:
    """Whether a call would reach a mode: one is active and ``DisableTorchFunction`` is not in force."""
    return bool(_modes) and _state.all_enabled


def _push_mode(mode: TorchFunctionMode) -> None:
    """Activate ``mode`` innermost, as ``with mode:`` does, without a block to leave it."""
    _modes.append(mode)


def _pop_mode() -> TorchFunctionMode:
    """Deactivate the innermost mode and return it."""
    if not _modes:
        raise RuntimeError("trying to pop from empty mode stack")
    return _modes.pop()


@contextlib.contextmanager
def _pop_mode_temporarily():
    """Within the block the innermost mode (which the block receives) is off; it is back afterwards."""
    mode = _pop_mode()
    try:
        yield mode
    finally:
        _push_mode(mode)


class BaseTorchFunctionMode(TorchFunctionMode):
    """A mode that calls through unchanged: subclass it and override only what you need."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


class DisableTorchFunctionSubclass:
    """Inside this block, subclasses and tensor-likes are treated as plain tensors (modes still run)."""

    def __init__(self):
        self._saved: list = []  # one entry per active ``with``, so one instance can be nested

    def __enter__(self):
        self._saved.append(_state.subclasses_enabled)
        _state.subclasses_enabled = False

    def __exit__(self, *exc):
        _state.subclasses_enabled = self._saved.pop()
        return False


class DisableTorchFunction:
    """Inside this block the protocol is off entirely: no modes, no handlers."""

    def __init__(self):
        self._saved: list = []

    def __enter__(self):
        self._saved.append((_state.all_enabled, _state.subclasses_enabled))
        _state.all_enabled = False
        _state.subclasses_enabled = False

    def __exit__(self, *exc):
        _state.all_enabled, _state.subclasses_enabled = self._saved.pop()
        return False
