"""The low-level API: ``Library(ns, kind)`` with ``define`` and ``impl``, and the module's ``define``/``impl``."""
from __future__ import annotations

import weakref
from typing import Callable, Sequence

from ember.library import _operator
from ember.library._custom_op import _device_types, register_fake, resolve
from ember.library._dispatch_rules import fallthrough_kernel
from ember.library._operator import ANY_DEVICE, AUTOGRAD_KEY, IMPLICIT_KEY, OpOverload
from ember.library._schema import parse_schema

_KINDS = ("DEF", "IMPL", "FRAGMENT")
_defining_namespaces: set[str] = set()  # namespaces a live DEF library owns
_kept_alive: list = []  # the libraries module-level define/impl make: they live as long as the program
_pending: dict[str, list] = {}  # "ns::name.overload" -> (key, fn) of kernels registered before the op's definition

# Dispatch keys -> ember's kernel keys. A Meta kernel is the op's fake implementation.
_DISPATCH_KEYS = {"": ANY_DEVICE, "CPU": "cpu", "CompositeExplicitAutograd": ANY_DEVICE,
                  "CompositeImplicitAutograd": IMPLICIT_KEY, "Autograd": AUTOGRAD_KEY, "AutogradCPU": AUTOGRAD_KEY,
                  "CUDA": "cuda", "AutogradCUDA": "cuda", "Meta": "meta"}


class Library:
    """Operators of namespace ``ns``: ``kind`` is ``"DEF"`` (defines the namespace, once), ``"FRAGMENT"`` (defines
    more of it) or ``"IMPL"`` (only registers kernels). What a library registered goes when it is deleted.

    >>> lib = ember.library.Library("doc_lib", "DEF")
    >>> lib.define("scale(Tensor x, float k=2.0, *, bool negate=False) -> Tensor")
    'scale'
    >>> lib.impl("scale", lambda x, k=2.0, *, negate=False: x * (-k if negate else k), "CPU")
    >>> ember.ops.doc_lib.scale(ember.ones(2), negate=True)
    tensor([-2., -2.])
    """

    def __init__(self, ns: str, kind: str, dispatch_key: str = ""):
        if kind not in _KINDS:
            raise ValueError(f"Unsupported kind: {kind}")
        if kind == "DEF" and ns in _defining_namespaces:
            raise RuntimeError(
                f"Only a single Library(ns, 'DEF') can define the namespace {ns}; one is alive already. Use "
                f"Library('{ns}', 'FRAGMENT') to define more operators in it, or 'IMPL' to register kernels."
            )
        self.ns, self.kind, self.dispatch_key = ns, kind, dispatch_key
        self._defined: list[OpOverload] = []
        self._kernels: list[tuple] = []  # (overload, key, fn)
        if kind == "DEF":
            _defining_namespaces.add(ns)
        weakref.finalize(self, _forget, ns if kind == "DEF" else None, self._defined, self._kernels)

    def __repr__(self) -> str:
        return f"Library(kind={self.kind}, ns={self.ns}, dispatch_key={self.dispatch_key})>"

    def define(self, schema: str, alias_analysis: str = "", *, tags=()) -> str:
        """Define an operator of this namespace from its schema, ``"name(Tensor x, int n=2) -> Tensor"``;
        returns its name."""
        if self.kind == "IMPL":
            raise RuntimeError(f"define({schema.split('(')[0]!r}): a Library of kind IMPL registers kernels only; "
                               f"define operators in Library('{self.ns}', 'DEF') or 'FRAGMENT'")
        head = schema.split("(", 1)[0].strip()
        if "::" in head:
            raise RuntimeError(f"define: the schema names the op without its namespace (the Library's, {self.ns!r}): "
                               f"got {head!r}")
        parsed = parse_schema(schema, name=None)
        parsed = type(parsed)(f"{self.ns}::{parsed.name}", parsed.overload_name, parsed.arguments, parsed.returns)
        overload = _operator.add(parsed)
        self._defined.append(overload)
        for key, fn in _pending.pop(overload.name(), ()):
            _set_kernel(overload, key, fn)
        return parsed.name.split("::")[1] + (f".{parsed.overload_name}" if parsed.overload_name else "")

    def impl(self, op_name, fn: Callable, dispatch_key: str = "", *, with_keyset: bool = False,
             allow_override: bool = True) -> None:
        """Register ``fn`` as the kernel of ``op_name`` (a name of this namespace, or an OpOverload) for
        ``dispatch_key``: ``"CPU"``, ``"CompositeExplicitAutograd"``, ``"CompositeImplicitAutograd"`` (made of
        ember ops, which differentiate themselves), ``"Autograd"`` or ``"Meta"`` (the fake implementation)."""
        key = dispatch_key or self.dispatch_key
        if fn is fallthrough_kernel:
            return _fall_through(op_name if isinstance(op_name, OpOverload) else f"{self.ns}::{op_name}", key)
        if key not in _DISPATCH_KEYS:
            raise ValueError(f"Library.impl: unknown dispatch key {key!r}; use one of "
                             f"{', '.join(k for k in _DISPATCH_KEYS if k)}")
        qualname = op_name.name() if isinstance(op_name, OpOverload) else f"{self.ns}::{op_name}"
        try:
            overload = resolve(qualname)
        except AttributeError:  # defined later (as torch allows): kept until it is
            _pending.setdefault(qualname, []).append((_DISPATCH_KEYS[key], fn))
            return
        self._kernels.append((overload, _DISPATCH_KEYS[key], fn))
        _set_kernel(overload, _DISPATCH_KEYS[key], fn)

    def _destroy(self) -> None:
        _forget(self.ns if self.kind == "DEF" else None, self._defined, self._kernels)


def _set_kernel(overload: OpOverload, key, fn: Callable) -> None:
    if key == "meta":
        register_fake(overload, fn)
    else:
        overload._kernels[key] = fn


def _fall_through(op, key: str) -> None:
    """``fallthrough_kernel`` registered for ``key``: the op keeps nothing of its own there (an autocast key drops
    its ``register_autocast`` rule for that device; a kernel key, its kernel), so the call goes on to the next."""
    overload = resolve(op)
    if key.startswith("Autocast"):
        overload._autocast.pop(key.removeprefix("Autocast").lower(), None)
    elif key in _DISPATCH_KEYS:
        overload._kernels.pop(_DISPATCH_KEYS[key], None)


def _forget(namespace: str | None, defined: list, kernels: list) -> None:
    """Undo what a deleted library registered."""
    for overload, key, fn in kernels:
        if overload._kernels.get(key) is fn:
            del overload._kernels[key]
    for overload in defined:
        _operator.remove(overload)
    defined.clear()
    kernels.clear()
    if namespace is not None:
        _defining_namespaces.discard(namespace)


def define(qualname: str, schema: str, *, lib: Library | None = None, tags=()) -> None:
    """Define the operator ``"ns::name"`` with ``schema``, ``"(Tensor x) -> Tensor"``.

    >>> ember.library.define("doc_define::twice", "(Tensor x) -> Tensor")
    >>> @ember.library.impl("doc_define::twice", "cpu")
    ... def twice(x):
    ...     return x * 2
    >>> ember.ops.doc_define.twice(ember.ones(1))
    tensor([2.])
    """
    namespace, sep, name = qualname.partition("::")
    if not sep:
        raise ValueError(f"define(qualname, schema): expected qualname of the form 'namespace::name', got "
                         f"{qualname!r}")
    if lib is None:
        lib = Library(namespace, "FRAGMENT")
        _kept_alive.append(lib)
    lib.define(name + schema, tags=tags)


def impl(qualname: str, types: str | Sequence[str], func: Callable | None = None, *, lib: Library | None = None):
    """Register ``func`` as the kernel of ``"ns::name"`` for ``types``: device types (``"cpu"``) or dispatch keys
    (``"CompositeImplicitAutograd"``). Without ``func``, a decorator."""
    names = [types] if isinstance(types, str) else list(types)
    keys = [t if t in _DISPATCH_KEYS else _device_types(t)[0].upper() for t in names]

    def register(func: Callable) -> Callable:
        namespace, _, name = qualname.partition("::")
        library = lib
        if library is None:
            library = Library(namespace, "FRAGMENT")
            _kept_alive.append(library)
        for key in keys:
            library.impl(name, func, key)
        return func

    return register if func is None else register(func)
