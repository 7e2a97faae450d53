"""``Module``: the base class of every layer and model.

A module holds three kinds of state, each in its own ordered dict so that
``parameters()``, ``state_dict()`` and ``to()`` can find them:

- ``_parameters``: ``Parameter``s (learned), registered by assigning them as attributes;
- ``_buffers``: tensors that are state but not learned (running statistics, masks ...);
- ``_modules``: child modules, registered by assigning them as attributes.

>>> import ember
>>> from ember import nn
>>> class Affine(nn.Module):
...     def __init__(self):
...         super().__init__()
...         self.scale = nn.Parameter(ember.ones(2))
...         self.register_buffer("shift", ember.zeros(2))
...     def forward(self, x):
...         return x * self.scale + self.shift
>>> m = Affine()
>>> [name for name, _ in m.named_parameters()], list(m.state_dict())
(['scale'], ['scale', 'shift'])
>>> m(ember.tensor([1., 2.]))
tensor([1., 2.], grad_fn=<AddBackward0>)
"""
from __future__ import annotations

import functools
import mmap
import warnings
import weakref
from collections import OrderedDict, namedtuple
from typing import Any, Callable, Iterator, Mapping, TypeVar

import numpy as np

from ember._tensor import Tensor
from ember.autograd.grad_mode import no_grad
from ember.__future__ import get_swap_module_params_on_conversion
from ember.nn.modules._backward_hooks import BackwardHook
from ember.nn.modules._conversion import convert_parameter, load_by_swapping
from ember.nn.parameter import Parameter
from ember.utils.hooks import RemovableHandle

__all__ = [
    "register_module_forward_pre_hook", "register_module_forward_hook", "register_module_full_backward_pre_hook",
    "register_module_backward_hook", "register_module_full_backward_hook", "register_module_buffer_registration_hook",
    "register_module_module_registration_hook", "register_module_parameter_registration_hook", "Module",
]

# Hooks common to all modules (debugging, profiling): they run before each module's own.
_global_buffer_registration_hooks: dict = {}
_global_module_registration_hooks: dict = {}
_global_parameter_registration_hooks: dict = {}
_global_forward_pre_hooks: dict = {}
_global_forward_hooks: dict = {}
_global_forward_hooks_with_kwargs: dict = {}
_global_forward_hooks_always_called: dict = {}
_global_backward_pre_hooks: dict = {}
_global_backward_hooks: dict = {}
_global_is_full_backward_hook: bool | None = None  # global backward hooks are all full ones, or all legacy ones
# Every global hook that runs when a module is called, by id: Module.__call__ checks only this (and the module's own).
_global_hooks_on_call: dict = {}

_EXTRA_STATE_KEY_SUFFIX = "_extra_state"


def register_module_buffer_registration_hook(hook: Callable[..., None]) -> RemovableHandle:
    """``hook(module, name, buffer)`` runs whenever any module registers a buffer; a non-None result replaces it.

    >>> import ember
    >>> handle = register_module_buffer_registration_hook(lambda m, name, b: b * 2)
    >>> m = ember.nn.Module(); m.register_buffer("b", ember.ones(1)); handle.remove(); m.b
    tensor([2.])
    """
    return RemovableHandle.add(_global_buffer_registration_hooks, hook)


def register_module_module_registration_hook(hook: Callable[..., None]) -> RemovableHandle:
    """``hook(module, name, submodule)`` runs whenever any module registers a child; a non-None result replaces it.

    >>> import ember
    >>> handle = register_module_module_registration_hook(lambda m, name, child: ember.nn.Tanh())
    >>> ember.nn.Sequential(ember.nn.ReLU())[0], handle.remove()
    (Tanh(), None)
    """
    return RemovableHandle.add(_global_module_registration_hooks, hook)


def register_module_parameter_registration_hook(hook: Callable[..., None]) -> RemovableHandle:
    """``hook(module, name, param)`` runs whenever any module registers a (non-None) parameter; a non-None
    result replaces it.

    >>> import ember
    >>> names = []
    >>> handle = register_module_parameter_registration_hook(lambda m, name, p: names.append(name))
    >>> _ = ember.nn.Linear(2, 1); handle.remove(); names
    ['weight', 'bias']
    """
    return RemovableHandle.add(_global_parameter_registration_hooks, hook)


def register_module_forward_pre_hook(hook: Callable[..., None]) -> RemovableHandle:
    """``hook(module, args)`` runs before every module's ``forward``, before the module's own pre-hooks.

    A non-None result replaces ``args`` (a single value is made a 1-tuple).

    >>> import ember
    >>> handle = register_module_forward_pre_hook(lambda m, args: args[0] + 1)
    >>> ember.nn.ReLU()(ember.zeros(1)), handle.remove()
    (tensor([1.]), None)
    """
    return _add_call_hook(_global_forward_pre_hooks, hook, False, _global_hooks_on_call)


def register_module_forward_hook(hook: Callable[..., None], *, with_kwargs: bool = False,
                                 always_call: bool = False) -> RemovableHandle:
    """``hook(module, args, output)`` runs after every module's ``forward``, before the module's own hooks.

    A non-None result replaces the output. ``with_kwargs=True``: ``hook(module, args, kwargs, output)``;
    ``always_call=True``: it also runs (with the output so far, usually None) when the call raises.

    >>> import ember
    >>> handle = register_module_forward_hook(lambda m, args, out: out * 10)
    >>> ember.nn.ReLU()(ember.ones(1)), handle.remove()
    (tensor([10.]), None)
    """
    handle = _add_call_hook(_global_forward_hooks, hook, False, _global_hooks_on_call,
                            _global_forward_hooks_with_kwargs, _global_forward_hooks_always_called)
    if with_kwargs:
        _global_forward_hooks_with_kwargs[handle.id] = True
    if always_call:
        _global_forward_hooks_always_called[handle.id] = True
    return handle


def register_module_full_backward_pre_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """As ``Module.register_full_backward_pre_hook``, for every module; runs before the module's own."""
    return _add_call_hook(_global_backward_pre_hooks, hook, False, _global_hooks_on_call)


def register_module_full_backward_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """As ``Module.register_full_backward_hook``, for every module; runs before the module's own."""
    _claim_global_backward_kind(True)
    return _add_call_hook(_global_backward_hooks, hook, False, _global_hooks_on_call)


def register_module_backward_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Deprecated: as ``Module.register_backward_hook``, for every module; use
    ``register_module_full_backward_hook``."""
    _claim_global_backward_kind(False)
    return _add_call_hook(_global_backward_hooks, hook, False, _global_hooks_on_call)


def _claim_global_backward_kind(full: bool) -> None:
    global _global_is_full_backward_hook
    if _global_is_full_backward_hook is (not full):
        raise RuntimeError(
            "Cannot use both regular backward hooks and full backward hooks as a global Module hook. Please use "
            "only one of them (the first kind registered stays the kind for the rest of the process)."
        )
    _global_is_full_backward_hook = full


class _WrappedHook:
    """A hook called with its module first; it holds the module weakly (a module's hook must not keep it alive)."""

    def __init__(self, hook: Callable, module: "Module | None" = None):
        self.hook = hook
        functools.update_wrapper(self, hook)
        self.with_module = module is not None
        if self.with_module:
            self.module = weakref.ref(module)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not self.with_module:
            return self.hook(*args, **kwargs)
        module = self.module()
        if module is None:
            raise RuntimeError("You are trying to call the hook of a dead Module!")
        return self.hook(module, *args, **kwargs)

    def __getstate__(self) -> dict:
        state = {"hook": self.hook, "with_module": self.with_module}
        if self.with_module:
            state["module"] = self.module()
        return state

    def __setstate__(self, state: dict) -> None:
        self.hook = state["hook"]
        self.with_module = state["with_module"]
        if self.with_module:
            if state["module"] is None:
                raise RuntimeError("You are trying to revive the hook of a dead Module!")
            self.module = weakref.ref(state["module"])


def _forward_unimplemented(self, *input: Any) -> Any:
    raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')


_LEGACY_TYPE_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long", "int32": "Int",
                      "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool", "bfloat16": "BFloat16"}


def _typename(value: Any) -> str:
    """How error messages name the type of a wrongly assigned value (``ember.FloatTensor``, ``int`` ...)."""
    if isinstance(value, Tensor) and not isinstance(value, Parameter):
        return f"ember.{_LEGACY_TYPE_NAMES.get(value.dtype.name, 'Float')}Tensor"
    cls = type(value)
    module = cls.__module__
    return cls.__qualname__ if module in ("builtins", None) else f"{module}.{cls.__qualname__}"


def _indent_continuation_lines(text: str, spaces: int) -> str:
    """Indent every line but the first, so a child's repr nests under its ``(name): `` label."""
    first, *rest = text.split("\n")
    return "\n".join([first] + [" " * spaces + line for line in rest])


# torch's name for it, which modules written for torch import to nest their own reprs
_addindent = _indent_continuation_lines


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What ``load_state_dict`` returns: the keys it could not match."""

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _unexpected_init_arguments(name: str, args: tuple, kwargs: dict) -> None:
    """Module.__init__ takes no arguments: Python's words (as torch gives them), and the usual cause."""
    if kwargs:
        problem = f"got an unexpected keyword argument '{next(iter(kwargs))}'"
    else:
        problem = f"takes 1 positional argument but {len(args) + 1} were given"
    raise TypeError(f"{name}.__init__() {problem} (Module.__init__ takes none: a subclass that accepts arguments "
                    "defines its own __init__ and calls super().__init__(), or sets call_super_init = True to pass them on to "
                    "the next class in its MRO)")


# Each module's hook registries, by attribute name. ``_hooks_on_call`` holds every hook that runs when
# the module is called (forward and backward ones, by id): __call__ checks it alone.
_HOOK_DICTS = (
    "_forward_pre_hooks", "_forward_pre_hooks_with_kwargs", "_forward_hooks", "_forward_hooks_with_kwargs",
    "_forward_hooks_always_called", "_backward_pre_hooks", "_backward_hooks", "_hooks_on_call",
    "_state_dict_hooks", "_state_dict_pre_hooks", "_load_state_dict_pre_hooks", "_load_state_dict_post_hooks",
)


class Module:
    """Base class for all neural-network layers; subclass it and define ``forward``.

    Assigning a ``Parameter``, a ``Module`` or (after ``register_buffer``) a tensor
    as an attribute registers it; calling the module runs its hooks and ``forward``.
    """

    training: bool
    forward: Callable[..., Any] = _forward_unimplemented
    # The format version of this class's state_dict entries, saved in ``state_dict()._metadata``;
    # a subclass that changes its format bumps it and reads the old one back when loading.
    _version: int = 1
    # True: __init__ passes its arguments on to the next class in the MRO (for mixins with their own __init__).
    call_super_init: bool = False
    dump_patches: bool = False  # kept for code that sets it; ember saves no source patches
    T_destination = TypeVar("T_destination", bound=dict[str, Any])

    def __init__(self, *args, **kwargs) -> None:
        if (args or kwargs) and not self.call_super_init:
            _unexpected_init_arguments(type(self).__name__, args, kwargs)
        # object.__setattr__: our own __setattr__ needs these dicts to exist already.
        set_ = object.__setattr__
        set_(self, "training", True)
        set_(self, "_parameters", {})
        set_(self, "_buffers", {})
        set_(self, "_non_persistent_buffers_set", set())
        set_(self, "_modules", {})
        for name in _HOOK_DICTS:
            set_(self, name, {})
        set_(self, "_is_full_backward_hook", None)
        if self.call_super_init:
            super().__init__(*args, **kwargs)

    # ------------------------------------------------------------------ registration

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add ``param`` (or ``None``, a placeholder for an optional weight) under ``name``."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        self._check_new_name(name, "parameter", self._parameters)
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(
                f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                "(ember.nn.Parameter or None required)"
            )
        if param is not None and param.grad_fn is not None:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be created "
                f"explicitly. To express '{name}' as a function of another Tensor, compute the value in the "
                "forward() method."
            )
        if param is not None:
            param = _run_registration_hooks(_global_parameter_registration_hooks, self, name, param)
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Add a tensor that is state but not a parameter; ``persistent=False`` leaves it out of state_dict."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        self._check_new_name(name, "buffer", self._buffers)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(
                f"cannot assign '{_typename(tensor)}' object to buffer '{name}' (ember.Tensor or None required)"
            )
        self._buffers[name] = _run_registration_hooks(_global_buffer_registration_hooks, self, name, tensor)
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name: str, module: "Module | None") -> None:
        """Add a child module (or ``None``) under ``name``, as ``self.<name> = module`` would."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        if "_modules" not in self.__dict__:
            raise AttributeError("cannot assign module before Module.__init__() call")
        self._check_new_name(name, "module", self._modules)
        self._modules[name] = _run_registration_hooks(_global_module_registration_hooks, self, name, module)

    register_module = add_module

    def _check_new_name(self, name: Any, kind: str, registry: dict) -> None:
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {_typename(name)}")
        if name == "":
            raise KeyError(f'{kind} name can\'t be empty string ""')
        if "." in name:
            # "." separates the levels of qualified names such as "block.fc.weight".
            raise KeyError(f'{kind} name can\'t contain "."' + (f", got: {name}" if kind == "module" else ""))
        if hasattr(self, name) and name not in registry:
            raise KeyError(f"attribute '{name}' already exists")

    # ------------------------------------------------------------------ attribute access

    def __setattr__(self, name: str, value: Any) -> None:
        params = self.__dict__.get("_parameters")
        modules = self.__dict__.get("_modules")
        buffers = self.__dict__.get("_buffers")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._forget(name, keep="_parameters")
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as parameter '{name}' (ember.nn.Parameter or None expected)"
                )
            self.register_parameter(name, value)
        elif isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._forget(name, keep="_modules")
            modules[name] = _run_registration_hooks(_global_module_registration_hooks, self, name, value)
        elif modules is not None and name in modules:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as child module '{name}' (ember.nn.Module or None expected)"
                )
            modules[name] = _run_registration_hooks(_global_module_registration_hooks, self, name, value)
        elif isinstance(value, Tensor) and value.__dict__.get("_is_buffer"):  # made by nn.Buffer
            if buffers is None:
                raise AttributeError("cannot assign buffer before Module.__init__() call")
            self._forget(name, keep="_buffers")
            self.register_buffer(name, value, value.persistent)
        elif buffers is not None and name in buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as buffer '{name}' (ember.Tensor or None expected)"
                )
            buffers[name] = _run_registration_hooks(_global_buffer_registration_hooks, self, name, value)
        else:
            object.__setattr__(self, name, value)

    def _forget(self, name: str, keep: str) -> None:
        """Remove ``name`` from every place but ``keep``: it is about to be re-registered there."""
        self.__dict__.pop(name, None)
        for registry in ("_parameters", "_buffers", "_modules"):
            if registry != keep:
                self.__dict__[registry].pop(name, None)
        self._non_persistent_buffers_set.discard(name)

    def __getattr__(self, name: str) -> Any:
        # Only called when normal lookup fails. Read the registries through __dict__:
        # during copy/unpickling they may not exist yet, and self._parameters would recurse.
        state = self.__dict__
        parameters = state.get("_parameters")  # (a layer's weight and bias, read on every call: first)
        if parameters is not None and name in parameters:
            return parameters[name]
        for registry in ("_buffers", "_modules"):
            if registry in state and name in state[registry]:
                return state[registry][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        for registry in ("_parameters", "_buffers", "_modules"):
            if name in self.__dict__.get(registry, ()):
                del self.__dict__[registry][name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self) -> list:
        names = set(dir(type(self))) | set(self.__dict__)
        names |= set(self._parameters) | set(self._modules) | set(self._buffers)
        # Sequential's children are named "0", "1" ...: not attribute names.
        return sorted(n for n in names if not n[0].isdigit())

    # ------------------------------------------------------------------ walking the tree

    def named_modules(self, memo: set | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple[str, "Module"]]:
        """Yield ``(qualified name, module)`` for this module and all below it, each once."""
        if memo is None:
            memo = set()
        if self in memo:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is not None:
                yield from module.named_modules(memo, _join(prefix, name), remove_duplicate)

    def modules(self) -> Iterator["Module"]:
        for _, module in self.named_modules():
            yield module

    def named_children(self) -> Iterator[tuple[str, "Module"]]:
        seen = set()
        for name, module in self._modules.items():
            if module is not None and module not in seen:
                seen.add(module)
                yield name, module

    def children(self) -> Iterator["Module"]:
        for _, module in self.named_children():
            yield module

    def get_submodule(self, target: str) -> "Module":
        """The module at the dotted path ``target`` ("" is this module).

        >>> model = ember.nn.Sequential(ember.nn.Linear(2, 3), ember.nn.ReLU())
        >>> model.get_submodule("0"), model.get_parameter("0.bias").shape
        (Linear(in_features=2, out_features=3, bias=True), ember.Size([3]))
        """
        module = self
        if target == "":
            return module
        for name in target.split("."):
            if not hasattr(module, name):
                raise AttributeError(f"{module._get_name()} has no attribute `{name}`")
            module = getattr(module, name)
            if not isinstance(module, Module):
                raise AttributeError(f"`{name}` is not an nn.Module")
        return module

    def set_submodule(self, target: str, module: "Module", strict: bool = False) -> None:
        """Put ``module`` at the dotted path ``target``, whose parent must exist.

        The last name may be new unless ``strict``; if it exists it must be a module.

        >>> model = ember.nn.Sequential(ember.nn.Linear(2, 3), ember.nn.ReLU())
        >>> model.set_submodule("1", ember.nn.Tanh()); model[1]
        Tanh()
        """
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        if not isinstance(module, Module):
            raise ValueError(f"`module` is not an nn.Module, found {type(module)}")
        path, _, name = target.rpartition(".")
        parent = self.get_submodule(path)
        if not hasattr(parent, name):
            if strict:
                raise AttributeError(f"{parent._get_name()} has no attribute `{name}`")
        elif not isinstance(getattr(parent, name), Module):
            raise AttributeError(f"`{name}` is not an nn.Module")
        setattr(parent, name, module)

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at the dotted path ``target``: ``model.get_parameter("encoder.0.weight")``."""
        owner, name = self._owner_of(target)
        value = getattr(owner, name)
        if not isinstance(value, Parameter):
            raise AttributeError(f"`{name}` is not an nn.Parameter")
        return value

    def get_buffer(self, target: str) -> Tensor:
        """The buffer at the dotted path ``target``: ``model.get_buffer("norm.running_mean")``."""
        owner, name = self._owner_of(target)
        if name not in owner._buffers:
            raise AttributeError(f"`{name}` is not a buffer")
        return owner._buffers[name]

    def _owner_of(self, target: str) -> tuple["Module", str]:
        """The module that holds the last name of the dotted path ``target``, and that name (which it must have)."""
        path, _, name = target.rpartition(".")
        owner = self.get_submodule(path)
        if not hasattr(owner, name):
            raise AttributeError(f"{owner._get_name()} has no attribute `{name}`")
        return owner, name

    def _named_members(self, registry: str, prefix: str, recurse: bool, remove_duplicate: bool):
        """Yield ``(qualified name, tensor)`` from ``registry`` of this module (and below if ``recurse``)."""
        owners = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse else [(prefix, self)]
        seen_ids = set()
        for owner_prefix, owner in owners:
            for name, value in getattr(owner, registry).items():
                if value is None or id(value) in seen_ids:
                    continue
                if remove_duplicate:
                    seen_ids.add(id(value))
                yield _join(owner_prefix, name), value

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Parameter]]:
        """Yield ``(name, parameter)``; a parameter shared by two modules appears once.

        >>> import ember
        >>> [n for n, _ in ember.nn.Sequential(ember.nn.Linear(2, 1)).named_parameters()]
        ['0.weight', '0.bias']
        """
        yield from self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        yield from self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, buffer in self.named_buffers(recurse=recurse):
            yield buffer

    def apply(self, fn: Callable[["Module"], None]) -> "Module":
        """Call ``fn`` on every child (recursively), then on this module; e.g. to initialise weights."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # ------------------------------------------------------------------ modes and gradients

    def train(self, mode: bool = True) -> "Module":
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self) -> "Module":
        """Evaluation mode (``train(False)``): layers like dropout change behaviour; gradients still flow."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> "Module":
        for param in self.parameters():
            param.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Forget the parameters' gradients: ``None`` by default, zeros with ``set_to_none=False``."""
        for param in self.parameters():
            _clear_grad(param, set_to_none)

    # ------------------------------------------------------------------ dtype conversion

    def _apply(self, fn: Callable[[Tensor], Tensor], recurse: bool = True) -> "Module":
        """Convert every parameter, gradient and buffer with ``fn`` (submodules' too if ``recurse``),
        keeping the Parameter objects.

        Parameters keep their identity (their ``.data`` is replaced), so an
        optimizer built before ``model.double()`` still updates the model.
        """
        if recurse:
            for module in self.children():
                module._apply(fn)
        with no_grad():
            for key, param in self._parameters.items():
                if param is not None:
                    convert_parameter(self._parameters, key, param, fn)  # as ember.__future__'s switches say
            for name, buffer in self._buffers.items():
                if buffer is not None:
                    self._buffers[name] = fn(buffer)
        return self

    def to(self, *args, **kwargs) -> "Module":
        """``to(dtype)``, ``to(device)`` or ``to(tensor)``: convert floating-point and complex parameters and buffers.

        >>> import ember
        >>> ember.nn.Linear(2, 1).to(ember.float64).weight.dtype
        ember.float64
        """
        dtype = _dtype_from_to_args(args, kwargs)
        layout = kwargs.get("memory_format")  # (as torch: applied to the 4-d and 5-d tensors only)
        if dtype is None:
            if layout is None:
                return self
            return self._apply(lambda t: t.to(memory_format=layout) if t.dim() in (4, 5) else t)
        if not (dtype.is_floating_point or getattr(dtype, "is_complex", False)):
            raise TypeError(
                f"nn.Module.to only accepts floating point or complex dtypes, but got desired dtype={dtype}"
            )
        if getattr(dtype, "is_complex", False):
            warnings.warn("Complex modules are a new feature: some modules may not work as expected with complex "
                          "parameters or buffers", UserWarning, stacklevel=2)

        def convert(t):
            target = dtype if t.is_floating_point() or t.is_complex() else t.dtype
            return t.to(target, memory_format=layout) if layout is not None and t.dim() in (4, 5) else t.to(target)
        return self._apply(convert)

    def float(self) -> "Module":
        return self._apply(lambda t: t.float() if t.is_floating_point() else t)

    def double(self) -> "Module":
        return self._apply(lambda t: t.double() if t.is_floating_point() else t)

    def half(self) -> "Module":
        return self._apply(lambda t: t.half() if t.is_floating_point() else t)

    def bfloat16(self) -> "Module":
        return self._apply(lambda t: t.bfloat16() if t.is_floating_point() else t)

    def to_empty(self, *, device: Any, recurse: bool = True) -> "Module":
        """Replace every parameter and buffer (submodules' too if ``recurse``) by an uninitialised one of the same
        shape and dtype on ``device`` (only the CPU), keeping the Parameter objects; e.g. before loading a state_dict.

        >>> import ember
        >>> lin = ember.nn.Linear(2, 1)
        >>> lin.to_empty(device="cpu").weight.shape
        ember.Size([1, 2])
        """
        from ember._creation import empty_like
        from ember._tensor import device as device_type

        if device is not None:
            device_type(device)  # raises for anything but the CPU
        return self._apply(empty_like, recurse=recurse)

    def share_memory(self) -> "Module":
        """Move every parameter, gradient and buffer into shared memory, keeping the Parameter objects.

        Processes forked afterwards (``multiprocessing`` with the "fork" start method) then see each other's
        in-place updates, as Hogwild training needs. ember has no ``ember.multiprocessing``: a module sent to a
        spawned process is pickled, so that process gets a copy.

        >>> import ember
        >>> lin = ember.nn.Linear(2, 1)
        >>> weight = lin.weight
        >>> lin.share_memory().weight is weight
        True
        """
        return self._apply(_in_shared_memory)

    def type(self, dst_type: Any) -> "Module":
        """Cast every parameter and buffer, integer ones too, to ``dst_type`` (``to`` leaves those alone)."""
        return self._apply(lambda t: t.type(dst_type))

    def cpu(self) -> "Module":
        return self

    def cuda(self, device: Any = None) -> "Module":
        """Always an error: ember runs on the CPU only."""
        from ember._tensor import device as device_type

        device_type("cuda" if device is None else device)
        return self

    def ipu(self, device: Any = None) -> "Module":
        """Always an error: ember runs on the CPU only."""
        _refuse_accelerator("ipu")

    def xpu(self, device: Any = None) -> "Module":
        """Always an error: ember runs on the CPU only."""
        _refuse_accelerator("xpu")

    def mtia(self, device: Any = None) -> "Module":
        """Always an error: ember runs on the CPU only."""
        _refuse_accelerator("mtia")

    def compile(self, *args, **kwargs) -> None:
        """Accepted and ignored, as ``ember.compile``: ember has no compiler, and the module runs eagerly as before."""
        from ember._compile import compile as _compile

        _compile(self, *args, **kwargs)  # checks the options as torch does

    # ------------------------------------------------------------------ state_dict

    def state_dict(self, *args, destination: dict | None = None, prefix: str = "", keep_vars: bool = False) -> dict:
        """Parameters and persistent buffers by qualified name (detached unless ``keep_vars``).

        A new result is an ``OrderedDict`` whose ``_metadata`` holds each module's
        format ``{"version": ...}`` by qualified name.

        >>> import ember
        >>> sd = ember.nn.Linear(2, 1).state_dict()
        >>> list(sd), dict(sd._metadata)
        (['weight', 'bias'], {'': {'version': 1}})
        """
        if args:
            warnings.warn(
                "Module.state_dict(): positional args are being deprecated, use kwargs instead: "
                "state_dict(destination=..., prefix=..., keep_vars=...)",
                FutureWarning, stacklevel=2,
            )
            destination, prefix, keep_vars = _state_dict_positional(args, destination, prefix, keep_vars)
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        local_metadata = {"version": self._version}
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        for hook in list(self._state_dict_pre_hooks.values()):
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        for hook in list(self._state_dict_hooks.values()):
            result = hook(self, destination, prefix, local_metadata)
            if getattr(hook, "_from_public_api", False):
                if result is not None:
                    raise RuntimeError(
                        "state_dict post-hook must return None (change the state_dict passed to it in place)"
                    )
            elif result is not None:
                destination = result  # the older private hooks may return a new dict
        return destination

    def _save_to_state_dict(self, destination: dict, prefix: str, keep_vars: bool) -> None:
        """Put this module's own entries (not its children's) into ``destination``; override to save more."""
        for name, value in self._local_state().items():
            destination[prefix + name] = value if keep_vars else value.detach()
        if type(self).get_extra_state is not Module.get_extra_state:
            destination[prefix + _EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()

    def get_extra_state(self) -> Any:
        """Override (with ``set_extra_state``) to save state that is not a tensor; ``state_dict`` stores what it
        returns under ``<prefix>_extra_state``.

        >>> import ember
        >>> class Counter(ember.nn.Module):
        ...     calls = 0
        ...     def get_extra_state(self):
        ...         return {"calls": self.calls}
        ...     def set_extra_state(self, state):
        ...         self.calls = state["calls"]
        >>> Counter().state_dict()
        OrderedDict([('_extra_state', {'calls': 0})])
        """
        raise RuntimeError(
            "Module.get_extra_state() was called, but this module does not implement it: a module with extra "
            "state overrides both get_extra_state() and set_extra_state(); state_dict() calls it only then"
        )

    def set_extra_state(self, state: Any) -> None:
        """Override (with ``get_extra_state``) to restore the extra state that ``load_state_dict`` finds."""
        raise RuntimeError(
            "Module.set_extra_state() was called, but this module does not implement it: a module with extra "
            "state overrides both get_extra_state() and set_extra_state(); load_state_dict() calls it only then"
        )

    def register_state_dict_pre_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(module, prefix, keep_vars)`` runs when ``state_dict`` starts on this module.

        >>> import ember
        >>> model = ember.nn.Sequential(ember.nn.Linear(1, 1))
        >>> _ = model[0].register_state_dict_pre_hook(lambda m, prefix, keep_vars: print(repr(prefix)))
        >>> _ = model.state_dict()
        '0.'
        """
        return RemovableHandle.add(self._state_dict_pre_hooks, hook)

    def register_state_dict_post_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(module, state_dict, prefix, local_metadata)`` runs when ``state_dict`` has saved this module and
        its children; it may change ``state_dict`` in place, and must return None.

        >>> import ember
        >>> lin = ember.nn.Linear(2, 1)
        >>> def drop_bias(module, sd, prefix, local_metadata):
        ...     del sd[prefix + "bias"]
        >>> _ = lin.register_state_dict_post_hook(drop_bias)
        >>> list(lin.state_dict())
        ['weight']
        """
        hook._from_public_api = True  # as torch marks it: such a hook may not return a new dict
        return RemovableHandle.add(self._state_dict_hooks, hook)

    def _register_state_dict_hook(self, hook: Callable) -> RemovableHandle:
        """The older post-hook: as ``register_state_dict_post_hook``, but a non-None result replaces the dict
        (only at the module ``state_dict`` was called on)."""
        if getattr(hook, "_from_public_api", False):
            raise RuntimeError(
                "Cannot register the same function as the state dict post hook that was previously registered via "
                "register_state_dict_post_hook"
            )
        return RemovableHandle.add(self._state_dict_hooks, hook)

    def _local_state(self) -> dict:
        """This module's own saved entries: parameters, then persistent buffers (None ones left out)."""
        state = {name: p for name, p in self._parameters.items() if p is not None}
        state.update(
            (name, b) for name, b in self._buffers.items()
            if b is not None and name not in self._non_persistent_buffers_set
        )
        return state

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True, assign: bool = False):
        """Copy values from ``state_dict`` into the parameters and buffers.

        With ``strict`` (the default) any missing or unexpected key is an error;
        otherwise they are returned as ``(missing_keys, unexpected_keys)``.
        """
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing, unexpected, errors = [], [], []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)  # a copy: the pre-hooks may change it (rename old keys ...)
        if metadata is not None:
            state_dict._metadata = metadata
        _load_subtree(self, state_dict, "", metadata, assign, (missing, unexpected, errors))
        if strict:
            if unexpected:
                errors.insert(0, f"Unexpected key(s) in state_dict: {_quoted(unexpected)}. ")
            if missing:
                errors.insert(0, f"Missing key(s) in state_dict: {_quoted(missing)}. ")
        if errors:
            raise RuntimeError(
                "Error(s) in loading state_dict for {}:\n\t{}".format(type(self).__name__, "\n\t".join(errors))
            )
        return _IncompatibleKeys(missing, unexpected)

    def _load_from_state_dict(self, state_dict: dict, prefix: str, local_metadata: dict, strict: bool,
                              missing_keys: list, unexpected_keys: list, error_msgs: list) -> None:
        """Load this module's own entries (not its children's) from ``state_dict``; override to read old formats
        (``local_metadata["version"]`` is the ``_version`` they were saved with)."""
        for hook in list(self._load_state_dict_pre_hooks.values()):
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)
        local = self._local_state()
        assign = local_metadata.get("assign_to_params_buffers", False)
        for name, current in local.items():
            key = prefix + name
            if key in state_dict:
                error = _copy_into(self, name, current, state_dict[key], key, assign)
                if error:
                    error_msgs.append(error)
            elif strict:
                missing_keys.append(key)
        extra_key = prefix + _EXTRA_STATE_KEY_SUFFIX
        if type(self).set_extra_state is not Module.set_extra_state:
            if extra_key in state_dict:
                self.set_extra_state(state_dict[extra_key])
            elif strict:
                missing_keys.append(extra_key)
        elif strict and extra_key in state_dict:
            unexpected_keys.append(extra_key)
        if not strict:
            return
        for key in state_dict:
            if key.startswith(prefix) and key != extra_key:
                first, dot, _ = key[len(prefix):].partition(".")
                # A dotted rest belongs to a child module; a plain name must be one of this module's own.
                if (first not in self._modules) if dot else (first not in local):
                    unexpected_keys.append(key)

    def register_load_state_dict_pre_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(module, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)``
        runs before ``load_state_dict`` loads this module's entries; it may change ``state_dict`` (a copy) in place.

        >>> import ember
        >>> lin = ember.nn.Linear(1, 1)
        >>> def rename(module, sd, prefix, *rest):
        ...     if prefix + "w" in sd:
        ...         sd[prefix + "weight"] = sd.pop(prefix + "w")
        >>> _ = lin.register_load_state_dict_pre_hook(rename)
        >>> lin.load_state_dict({"w": ember.ones(1, 1), "bias": ember.zeros(1)})
        <All keys matched successfully>
        """
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def _register_load_state_dict_pre_hook(self, hook: Callable, with_module: bool = False) -> RemovableHandle:
        """As ``register_load_state_dict_pre_hook``; without ``with_module`` the hook is not passed the module."""
        return RemovableHandle.add(self._load_state_dict_pre_hooks, _WrappedHook(hook, self if with_module else None))

    def register_load_state_dict_post_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(module, incompatible_keys)`` runs after ``load_state_dict`` has loaded this module and its children,
        before ``strict`` is checked; it may change ``incompatible_keys.missing_keys``/``unexpected_keys`` in place,
        and must return None.

        >>> import ember
        >>> lin = ember.nn.Linear(1, 1)
        >>> _ = lin.register_load_state_dict_post_hook(lambda m, keys: keys.missing_keys.remove("bias"))
        >>> lin.load_state_dict({"weight": ember.ones(1, 1)})
        <All keys matched successfully>
        """
        return RemovableHandle.add(self._load_state_dict_post_hooks, hook)

    # ------------------------------------------------------------------ calling

    def register_forward_pre_hook(self, hook: Callable, *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """``hook(module, args)`` runs before ``forward``; a non-None result replaces ``args``.

        With ``with_kwargs=True`` it is ``hook(module, args, kwargs)`` and may return ``(args, kwargs)``.
        """
        handle = _add_call_hook(self._forward_pre_hooks, hook, prepend, self._hooks_on_call,
                                self._forward_pre_hooks_with_kwargs)
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        return handle

    def register_forward_hook(self, hook: Callable, *, prepend: bool = False, with_kwargs: bool = False,
                              always_call: bool = False) -> RemovableHandle:
        """``hook(module, args, output)`` runs after ``forward``; a non-None result replaces the output.

        With ``always_call=True`` it also runs (with ``output=None``) when ``forward`` raises.
        """
        handle = _add_call_hook(self._forward_hooks, hook, prepend, self._hooks_on_call,
                                self._forward_hooks_with_kwargs, self._forward_hooks_always_called)
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        return handle

    def register_full_backward_pre_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        """``hook(module, grad_output)`` runs when the gradients w.r.t. the module's outputs are known, before
        they go on; a non-None result (as many entries as ``grad_output``) replaces them.

        ``grad_output`` has one entry per output (a tensor output counts as one), None where it is not a tensor
        or received no gradient. While the hook is registered, calls of the module pass their tensors through
        an identity node: modifying the module's inputs or outputs in place is an error.

        >>> import ember
        >>> relu = ember.nn.ReLU()
        >>> _ = relu.register_full_backward_pre_hook(lambda m, grad_output: (grad_output[0] * 10,))
        >>> x = ember.ones(2, requires_grad=True)
        >>> relu(x).sum().backward(); x.grad
        tensor([10., 10.])
        """
        return _add_call_hook(self._backward_pre_hooks, hook, prepend, self._hooks_on_call)

    def register_full_backward_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        """``hook(module, grad_input, grad_output)`` runs once the gradients w.r.t. the module's inputs are computed;
        a non-None result (as many entries as ``grad_input``) replaces ``grad_input``.

        ``grad_input`` has one entry per positional argument (keyword arguments are not seen), None where it is
        not a tensor; an input tensor that does not require grad gets a zero gradient. If no input requires grad,
        the hook runs when the output gradients are known, with ``grad_input`` all None, and may not replace it.
        A call whose outputs do not require grad (or made under no_grad) runs no backward hook.

        >>> import ember
        >>> lin = ember.nn.Linear(2, 1)
        >>> _ = lin.register_full_backward_hook(lambda m, grad_input, grad_output: (ember.ones(1, 2),))
        >>> x = ember.ones(1, 2, requires_grad=True)
        >>> lin(x).sum().backward(); x.grad
        tensor([[1., 1.]])
        """
        self._claim_backward_kind(True)
        return _add_call_hook(self._backward_hooks, hook, prepend, self._hooks_on_call)

    def register_backward_hook(self, hook: Callable) -> RemovableHandle:
        """Deprecated: use ``register_full_backward_hook``.

        ``hook(module, grad_input, grad_output)`` is attached to the node that made the module's (first) output:
        ``grad_input`` are the gradients w.r.t. *that node's* inputs, which are the module's only when its forward
        is a single operation. A call where they are not warns (FutureWarning) that the hook misses gradients.

        >>> import ember
        >>> sigmoid = ember.nn.Sigmoid()
        >>> _ = sigmoid.register_backward_hook(lambda m, grad_input, grad_output: print(grad_input))
        >>> x = ember.zeros(1, requires_grad=True)
        >>> sigmoid(x * 1).sum().backward()
        (tensor([0.2500]),)
        """
        self._claim_backward_kind(False)
        return _add_call_hook(self._backward_hooks, hook, False, self._hooks_on_call)

    def _claim_backward_kind(self, full: bool) -> None:
        if self._is_full_backward_hook is (not full):
            raise RuntimeError(
                "Cannot use both regular backward hooks and full backward hooks on a single Module. Please use only "
                "one of them (register_full_backward_hook; register_backward_hook is deprecated)."
            )
        self._is_full_backward_hook = full

    def _get_backward_hooks(self) -> tuple[list, list]:
        """The backward hooks of a call, global ones first: ``(full ones, legacy ones)``."""
        full, legacy = [], []
        for kind, hooks in ((_global_is_full_backward_hook, _global_backward_hooks),
                            (self._is_full_backward_hook, self._backward_hooks)):
            if kind is not None:
                (full if kind else legacy).extend(hooks.values())
        return full, legacy

    def _get_backward_pre_hooks(self) -> list:
        return [*_global_backward_pre_hooks.values(), *self._backward_pre_hooks.values()]

    def __call__(self, *args, **kwargs) -> Any:
        # One check covers every kind of hook, the module's and the global ones: without hooks, a call costs
        # no more than forward.
        if self._hooks_on_call or _global_hooks_on_call:
            return self._call_with_hooks(args, kwargs)
        return self.forward(*args, **kwargs)

    _call_impl = __call__

    def _call_with_hooks(self, args: tuple, kwargs: dict) -> Any:
        """A call with hooks; if anything in it raises, the ``always_call`` forward hooks that did not run yet
        run (with the arguments and output so far) before the error goes on."""
        call = _Call(args, kwargs)
        try:
            return self._run_hooked_call(call)
        except Exception:
            self._run_always_called_hooks(call)
            raise

    def _run_hooked_call(self, call: "_Call") -> Any:
        full_hooks, legacy_hooks = self._get_backward_hooks()
        pre_hooks = self._get_backward_pre_hooks()
        if self._forward_pre_hooks or _global_forward_pre_hooks:
            self._run_forward_pre_hooks(call)
        backward_hook = None
        if full_hooks or pre_hooks:
            backward_hook = BackwardHook(self, full_hooks, pre_hooks)
            call.args = backward_hook.setup_input_hook(call.args)
        call.result = self.forward(*call.args, **call.kwargs)
        if self._forward_hooks or _global_forward_hooks:
            self._run_forward_hooks(call)
        if backward_hook is not None:
            if not isinstance(call.result, (Tensor, tuple)):
                warnings.warn(
                    "For backward hooks to be called, module output should be a Tensor or a tuple of Tensors but "
                    f"received {type(call.result)}", stacklevel=4,
                )
            call.result = backward_hook.setup_output_hook(call.result)
        if legacy_hooks:
            self._attach_legacy_backward_hooks(legacy_hooks, call.args, call.result)
        return call.result

    def _run_forward_pre_hooks(self, call: "_Call") -> None:
        for key, hook in [*_global_forward_pre_hooks.items(), *self._forward_pre_hooks.items()]:
            if key in self._forward_pre_hooks_with_kwargs:
                result = hook(self, call.args, call.kwargs)
                if result is not None:
                    if not (isinstance(result, tuple) and len(result) == 2):
                        raise RuntimeError(
                            f"forward pre-hook must return None or a tuple of (new_args, new_kwargs), but got {result}."
                        )
                    call.args, call.kwargs = result
            else:
                result = hook(self, call.args)
                if result is not None:
                    call.args = result if isinstance(result, tuple) else (result,)

    def _run_forward_hooks(self, call: "_Call") -> None:
        for key, hook in [*_global_forward_hooks.items(), *self._forward_hooks.items()]:
            if key in self._forward_hooks_always_called or key in _global_forward_hooks_always_called:
                call.ran_always_called.add(key)
            if key in self._forward_hooks_with_kwargs or key in _global_forward_hooks_with_kwargs:
                result = hook(self, call.args, call.kwargs, call.result)
            else:
                result = hook(self, call.args, call.result)
            if result is not None:
                call.result = result

    def _run_always_called_hooks(self, call: "_Call") -> None:
        """After an error in a call: the ``always_call`` hooks that did not run; their own errors only warn."""
        for scope, hooks, flags in (("global module", _global_forward_hooks, _global_forward_hooks_always_called),
                                    ("module", self._forward_hooks, self._forward_hooks_always_called)):
            for key, hook in list(hooks.items()):
                if key not in flags or key in call.ran_always_called:
                    continue
                try:
                    # (torch forgets a global hook's with_kwargs here, and calls it without the kwargs)
                    if key in self._forward_hooks_with_kwargs or key in _global_forward_hooks_with_kwargs:
                        result = hook(self, call.args, call.kwargs, call.result)
                    else:
                        result = hook(self, call.args, call.result)
                    if result is not None:
                        call.result = result
                except Exception as error:
                    warnings.warn(
                        f"{scope} forward hook with ``always_call=True`` raised an exception that was silenced as "
                        f"another error was raised in forward: {error}",
                        stacklevel=4,
                    )

    def _attach_legacy_backward_hooks(self, hooks: list, args: tuple, result: Any) -> None:
        """``register_backward_hook``'s hooks go on the node that made the first tensor of the output."""
        first = result
        while not isinstance(first, Tensor):
            if isinstance(first, dict):
                first = next(v for v in first.values() if isinstance(v, Tensor))
            else:
                first = first[0]
        node = first.grad_fn
        if node is None:
            return
        for hook in hooks:
            node.register_hook(_WrappedHook(hook, self))
        _warn_if_legacy_hook_misses_gradients(args, result, node)

    def __setstate__(self, state: dict) -> None:
        """Unpickling a module saved before some hook registries existed: start those empty."""
        self.__dict__.update(state)
        for name in _HOOK_DICTS:
            if name not in self.__dict__:
                object.__setattr__(self, name, {})
        self.__dict__.setdefault("_is_full_backward_hook", None)
        if not self._hooks_on_call:
            for name in ("_forward_pre_hooks", "_forward_hooks", "_backward_pre_hooks", "_backward_hooks"):
                self._hooks_on_call.update(self.__dict__[name])

    # ------------------------------------------------------------------ printing

    def extra_repr(self) -> str:
        """Override to show a module's settings in its repr, e.g. ``in_features=3, out_features=2``."""
        return ""

    def _get_name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [
            f"({name}): " + _indent_continuation_lines(repr(module), 2) for name, module in self._modules.items()
        ]
        return _format_module(self._get_name(), extra_lines, child_lines)


def _format_module(name: str, extra_lines: list, child_lines: list) -> str:
    """``Name(extra)`` on one line when there is one extra line and no child, else one item per line."""
    if len(extra_lines) == 1 and not child_lines:
        return f"{name}({extra_lines[0]})"
    lines = extra_lines + child_lines
    if not lines:
        return f"{name}()"
    return f"{name}(\n  " + "\n  ".join(lines) + "\n)"


def _state_dict_positional(args: tuple, destination, prefix: str, keep_vars: bool) -> tuple:
    """``state_dict``'s old positional ``(destination, prefix, keep_vars)``; keywords given too win."""
    if destination is None:
        destination = args[0]
    if len(args) > 1 and prefix == "":
        prefix = args[1]
    if len(args) > 2 and keep_vars is False:
        keep_vars = args[2]
    return destination, prefix, keep_vars


def _quoted(keys: list) -> str:
    return ", ".join(f'"{key}"' for key in keys)


def _join(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name


def _clear_grad(param: Tensor, set_to_none: bool) -> None:
    """What ``zero_grad`` does to one tensor (shared by Module and Optimizer)."""
    if param.grad is None:
        return
    if set_to_none:
        param.grad = None
        return
    grad = param.grad
    if grad.grad_fn is not None:
        grad.detach_()
    else:
        grad.requires_grad_(False)
    grad.zero_()


def _run_registration_hooks(hooks: dict, module: Module, name: str, value: Any) -> Any:
    """The global registration hooks, in order; each non-None result replaces the value being registered."""
    for hook in list(hooks.values()):
        replacement = hook(module, name, value)
        if replacement is not None:
            value = replacement
    return value


def _add_call_hook(hooks: dict, hook: Callable, prepend: bool, index: dict, *flags: dict) -> RemovableHandle:
    """Register a hook that runs when a module is called: also in ``index``, the one dict ``__call__`` checks.

    Its handle removes it from ``index`` and from the ``flags`` dicts (with_kwargs, always_call) too.
    """
    handle = _add_hook(hooks, hook, prepend, index, *flags)
    index[handle.id] = hook
    return handle


def _add_hook(hooks: dict, hook: Callable, prepend: bool, *linked: dict) -> RemovableHandle:
    handle = RemovableHandle.add(hooks, hook, *linked)
    if prepend:
        # Rebuild the same dict (the handle keeps a reference to it) with the new hook first.
        others = [(k, v) for k, v in hooks.items() if k != handle.id]
        hooks.clear()
        hooks[handle.id] = hook
        hooks.update(others)
    return handle


class _Call:
    """What one hooked call has so far: the hooks may replace its arguments and result as it goes."""

    __slots__ = ("args", "kwargs", "result", "ran_always_called")

    def __init__(self, args: tuple, kwargs: dict):
        self.args = args
        self.kwargs = kwargs
        self.result = None
        self.ran_always_called = set()


def _warn_if_legacy_hook_misses_gradients(args: tuple, result: Any, node) -> None:
    """A legacy backward hook sees one node's gradients; say so when they are not the whole module's."""
    outputs = (result,) if isinstance(result, Tensor) else result
    if not (isinstance(outputs, tuple) and all(isinstance(r, Tensor) for r in outputs)):
        problem = ("on a Module that does not return a single Tensor or a tuple of Tensors", "some of the grad_output")
    elif not all(isinstance(a, Tensor) for a in args):
        problem = ("on a Module that does not take as input a single Tensor or a tuple of Tensors",
                   "some of the grad_input")
    else:
        problem = _legacy_hook_node_problem(args, outputs, node)
        if problem is None:
            return
    warnings.warn(
        f"Using non-full backward hooks {problem[0]} is deprecated and will be removed in future versions. This "
        f"hook will be missing {problem[1]}. Please use register_full_backward_hook to get the documented behavior.",
        FutureWarning, stacklevel=5,
    )


def _legacy_hook_node_problem(args: tuple, outputs: tuple, node) -> tuple | None:
    output_nodes = {o.grad_fn for o in outputs if o.grad_fn is not None}
    if not output_nodes or (len(output_nodes) == 1 and node not in output_nodes):
        return "when outputs are nested in python data structure", "some grad_output"
    if len(output_nodes) > 1:
        return "when outputs are generated by different autograd Nodes", "some grad_output"
    input_nodes = {a.grad_fn for a in args if a.grad_fn is not None}
    if input_nodes != {n for n, _ in node._recorded_next_functions()}:  # (the edges its hook's grad_inputs match)
        return "when the forward contains multiple autograd Nodes", "some grad_input"
    return None


def _load_subtree(module: Module, state_dict: dict, prefix: str, metadata, assign: bool, found: tuple) -> None:
    """Load ``module`` and its children (shared ones again) from ``state_dict``, then run its post-hooks.

    Each child gets a copy of the entries under its prefix: what its pre-hooks change stays its own.
    ``found`` is (missing_keys, unexpected_keys, error_msgs), filled as torch fills them.
    """
    local_metadata = {} if metadata is None else dict(metadata.get(prefix[:-1], {}))
    if assign:
        local_metadata["assign_to_params_buffers"] = assign
    module._load_from_state_dict(state_dict, prefix, local_metadata, True, *found)
    for name, child in module._modules.items():
        if child is not None:
            child_prefix = prefix + name + "."
            child_state = {k: v for k, v in state_dict.items() if k.startswith(child_prefix)}
            _load_subtree(child, child_state, child_prefix, metadata, assign, found)
    keys = _IncompatibleKeys(found[0], found[1])
    for hook in list(module._load_state_dict_post_hooks.values()):
        if hook(module, keys) is not None:
            raise AssertionError(
                "Hooks registered with ``register_load_state_dict_post_hook`` are not expected to return new values; "
                "if incompatible_keys need to be modified, it should be done inplace."
            )


def _in_shared_memory(tensor: Tensor) -> Tensor:
    """A copy of ``tensor`` in anonymous shared memory: processes forked later write to the same pages."""
    from ember._creation import from_numpy

    data = tensor.detach().numpy()
    pages = mmap.mmap(-1, max(data.nbytes, 1))
    shared = np.frombuffer(pages, dtype=data.dtype, count=data.size).reshape(data.shape)
    shared[...] = data
    return from_numpy(shared)


def _refuse_accelerator(name: str) -> None:
    raise RuntimeError(
        f"Module.{name}(): ember runs on the CPU only; there is no {name.upper()} device (leave the module on the "
        "CPU: it is there already)"
    )


def _copy_into(module: Module, name: str, current: Tensor, value: Any, key: str, assign: bool) -> str | None:
    """Load ``value`` into the parameter or buffer ``current``; return an error message, or None."""
    if not isinstance(value, Tensor):
        return (
            f'While copying the parameter named "{key}", expected ember.Tensor or Tensor-like object from '
            f"checkpoint but received {type(value)}"
        )
    if current.dim() == 0 and value.shape == (1,):
        value = value[0]  # checkpoints from before 0-d tensors existed saved scalars as shape [1]
    if value.shape != current.shape:
        return (
            f"size mismatch for {key}: copying a param with shape {value.shape} from checkpoint, "
            f"the shape in current model is {current.shape}."
        )
    swapping = get_swap_module_params_on_conversion()
    try:
        _load_one(module, name, current, value, assign, swapping)
    except Exception as error:
        # as torch: the failure joins the other errors of the load, which are all reported together
        return (
            f'While {"swapping" if swapping else "copying"} the parameter named "{key}", whose dimensions in the '
            f"model are {current.shape} and whose dimensions in the checkpoint are {value.shape}, an exception "
            f"occurred : {error.args}."
        )
    return None


def _load_one(module: Module, name: str, current: Tensor, value: Tensor, assign: bool, swapping: bool) -> None:
    """Put ``value`` (of ``current``'s shape) in the place of ``current``: swapped, assigned or copied in."""
    if swapping:
        load_by_swapping(current, value, assign)
        return
    if assign:
        if isinstance(current, Parameter):
            if isinstance(value, Parameter):
                value.requires_grad_(current.requires_grad)  # the checkpoint's own Parameter object is kept
            else:
                value = Parameter(value, requires_grad=current.requires_grad)
        setattr(module, name, value)
        return
    with no_grad():
        current.copy_(value)


# What Module.to(...) accepts by position, as Tensor.to does: kinds of arguments, in order.
_TO_SIGNATURES = (("device", "dtype", "bool"), ("dtype", "bool"), ("tensor", "bool"))


def _to_kind(value: Any) -> str:
    from ember._dtype import dtype as dtype_type
    from ember._tensor import device

    if isinstance(value, bool):
        return "bool"
    if isinstance(value, dtype_type):
        return "dtype"
    if isinstance(value, Tensor):
        return "tensor"
    if value is None or isinstance(value, (str, int, device)):
        return "device"
    return type(value).__name__


def _dtype_from_to_args(args: tuple, kwargs: dict):
    """The dtype asked for by ``Module.to(...)``, or None when only a device (always the CPU) is given."""
    from ember._tensor import device

    if "copy" in kwargs:
        raise RuntimeError("Module.to() does not accept the copy argument; use copy.deepcopy(module) to copy a module")
    kinds = tuple(_to_kind(a) for a in args)
    unknown = [f"{k}={type(v).__name__}" for k, v in kwargs.items()
               if k not in ("device", "dtype", "non_blocking", "tensor", "memory_format")]
    if unknown or not any(kinds == signature[:len(kinds)] for signature in _TO_SIGNATURES):
        got = ", ".join(list(kinds) + unknown)
        raise TypeError(
            f"Module.to() received an invalid combination of arguments - got ({got}), but expected one of: "
            "(device=None, dtype=None, non_blocking=False), (dtype, non_blocking=False), (tensor, non_blocking=False)"
        )
    named = dict(zip(kinds, args))
    if named.get("device", kwargs.get("device")) is not None:
        device(named.get("device", kwargs.get("device")))  # raises for anything but the CPU
    if "tensor" in named or kwargs.get("tensor") is not None:
        return named.get("tensor", kwargs.get("tensor")).dtype
    return named.get("dtype", kwargs.get("dtype"))
