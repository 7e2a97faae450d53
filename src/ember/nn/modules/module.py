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

import warnings
from collections import OrderedDict, namedtuple
from typing import Any, Callable, Iterator, Mapping

from ember._tensor import Tensor
from ember.autograd.grad_mode import no_grad
from ember.nn.parameter import Parameter
from ember.utils.hooks import RemovableHandle

__all__ = ["Module"]


def _forward_unimplemented(self, *input: Any) -> Any:
    raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')


_LEGACY_TYPE_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long", "int32": "Int",
                      "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}


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


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What ``load_state_dict`` returns: the keys it could not match."""

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _unexpected_init_arguments(name: str, args: tuple, kwargs: dict) -> None:
    """Module.__init__ takes no arguments: Python's words (as torch gives them), and the usual cause."""
    if args:
        problem = f"takes 1 positional argument but {len(args) + 1} were given"
    else:
        problem = f"got an unexpected keyword argument '{next(iter(kwargs))}'"
    raise TypeError(f"{name}.__init__() {problem} (Module.__init__ takes none: a subclass that accepts arguments "
                    "defines its own __init__ and calls super().__init__())")


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

    def __init__(self, *args, **kwargs) -> None:
        if args or kwargs:
            _unexpected_init_arguments(type(self).__name__, args, kwargs)
        # object.__setattr__: our own __setattr__ needs these dicts to exist already.
        set_ = object.__setattr__
        set_(self, "training", True)
        set_(self, "_parameters", {})
        set_(self, "_buffers", {})
        set_(self, "_non_persistent_buffers_set", set())
        set_(self, "_modules", {})
        set_(self, "_forward_hooks", {})
        set_(self, "_forward_hooks_with_kwargs", set())
        set_(self, "_forward_hooks_always_called", set())
        set_(self, "_forward_pre_hooks", {})
        set_(self, "_forward_pre_hooks_with_kwargs", set())

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
        self._buffers[name] = tensor
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
        self._modules[name] = module

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
            modules[name] = value
        elif modules is not None and name in modules:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as child module '{name}' (ember.nn.Module or None expected)"
                )
            modules[name] = value
        elif buffers is not None and name in buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as buffer '{name}' (ember.Tensor or None expected)"
                )
            buffers[name] = value
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
        for registry in ("_parameters", "_buffers", "_modules"):
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

    def _apply(self, fn: Callable[[Tensor], Tensor]) -> "Module":
        """Convert every parameter, gradient and buffer with ``fn``, keeping the Parameter objects.

        Parameters keep their identity (their ``.data`` is replaced), so an
        optimizer built before ``model.double()`` still updates the model.
        """
        for module in self.children():
            module._apply(fn)
        with no_grad():
            for param in self._parameters.values():
                if param is None:
                    continue
                param.data = fn(param)
                if param.grad is not None:
                    param.grad.data = fn(param.grad)
            for name, buffer in self._buffers.items():
                if buffer is not None:
                    self._buffers[name] = fn(buffer)
        return self

    def to(self, *args, **kwargs) -> "Module":
        """``to(dtype)``, ``to(device)`` or ``to(tensor)``: convert floating-point parameters and buffers.

        >>> import ember
        >>> ember.nn.Linear(2, 1).to(ember.float64).weight.dtype
        ember.float64
        """
        dtype = _dtype_from_to_args(args, kwargs)
        if dtype is None:
            return self
        if not (dtype.is_floating_point or getattr(dtype, "is_complex", False)):
            raise TypeError(
                f"nn.Module.to only accepts floating point or complex dtypes, but got desired dtype={dtype}"
            )
        return self._apply(lambda t: t.to(dtype) if t.is_floating_point() else t)

    def float(self) -> "Module":
        return self._apply(lambda t: t.float() if t.is_floating_point() else t)

    def double(self) -> "Module":
        return self._apply(lambda t: t.double() if t.is_floating_point() else t)

    def half(self) -> "Module":
        return self._apply(lambda t: t.half() if t.is_floating_point() else t)

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
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = {"version": self._version}
        for name, value in self._local_state().items():
            destination[prefix + name] = value if keep_vars else value.detach()
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        return destination

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
        for prefix, module in _loading_order(self):
            module._load_local_state(state_dict, prefix, assign, missing, unexpected, errors)
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

    def _load_local_state(self, state_dict, prefix, assign, missing, unexpected, errors) -> None:
        local = self._local_state()
        for name, current in local.items():
            key = prefix + name
            if key not in state_dict:
                missing.append(key)
                continue
            error = _copy_into(self, name, current, state_dict[key], key, assign)
            if error:
                errors.append(error)
        for key in state_dict:
            if key.startswith(prefix):
                first, dot, _ = key[len(prefix):].partition(".")
                # A dotted rest belongs to a child module; a plain name must be one of this module's own.
                if (first not in self._modules) if dot else (first not in local):
                    unexpected.append(key)

    # ------------------------------------------------------------------ calling

    def register_forward_pre_hook(self, hook: Callable, *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """``hook(module, args)`` runs before ``forward``; a non-None result replaces ``args``.

        With ``with_kwargs=True`` it is ``hook(module, args, kwargs)`` and may return ``(args, kwargs)``.
        """
        handle = _add_hook(self._forward_pre_hooks, hook, prepend)
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs.add(handle.id)
        return handle

    def register_forward_hook(self, hook: Callable, *, prepend: bool = False, with_kwargs: bool = False,
                              always_call: bool = False) -> RemovableHandle:
        """``hook(module, args, output)`` runs after ``forward``; a non-None result replaces the output.

        With ``always_call=True`` it also runs (with ``output=None``) when ``forward`` raises.
        """
        handle = _add_hook(self._forward_hooks, hook, prepend)
        if with_kwargs:
            self._forward_hooks_with_kwargs.add(handle.id)
        if always_call:
            self._forward_hooks_always_called.add(handle.id)
        return handle

    def __call__(self, *args, **kwargs) -> Any:
        if self._forward_pre_hooks:
            args, kwargs = self._run_pre_hooks(args, kwargs)
        try:
            result = self.forward(*args, **kwargs)
        except Exception:
            if self._forward_hooks_always_called:
                self._run_always_called_hooks(args, kwargs)
            raise
        if self._forward_hooks:
            for key, hook in list(self._forward_hooks.items()):
                replacement = self._call_forward_hook(key, hook, args, kwargs, result)
                if replacement is not None:
                    result = replacement
        return result

    def _call_forward_hook(self, key: int, hook: Callable, args: tuple, kwargs: dict, result: Any) -> Any:
        if key in self._forward_hooks_with_kwargs:
            return hook(self, args, kwargs, result)
        return hook(self, args, result)

    def _run_always_called_hooks(self, args: tuple, kwargs: dict) -> None:
        """After ``forward`` raised: run the ``always_call`` hooks; their own errors must not hide the first one."""
        for key, hook in list(self._forward_hooks.items()):
            if key not in self._forward_hooks_always_called:
                continue
            try:
                self._call_forward_hook(key, hook, args, kwargs, None)
            except Exception as error:
                warnings.warn(
                    f"module forward hook with always_call=True raised an exception that was silenced as another error "
                    f"was raised in forward: {error}",
                    stacklevel=3,
                )

    def _run_pre_hooks(self, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
        for key, hook in list(self._forward_pre_hooks.items()):
            if key in self._forward_pre_hooks_with_kwargs:
                result = hook(self, args, kwargs)
                if result is not None:
                    if not (isinstance(result, tuple) and len(result) == 2):
                        raise RuntimeError(
                            f"forward pre-hook must return None or a tuple of (new_args, new_kwargs), but got {result}."
                        )
                    args, kwargs = result
            else:
                result = hook(self, args)
                if result is not None:
                    args = result if isinstance(result, tuple) else (result,)
        return args, kwargs

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


def _add_hook(hooks: dict, hook: Callable, prepend: bool) -> RemovableHandle:
    handle = RemovableHandle.add(hooks, hook)
    if prepend:
        # Rebuild the same dict (the handle keeps a reference to it) with the new hook first.
        others = [(k, v) for k, v in hooks.items() if k != handle.id]
        hooks.clear()
        hooks[handle.id] = hook
        hooks.update(others)
    return handle


def _loading_order(root: Module):
    """``(prefix, module)`` for every module load_state_dict visits: parents first, shared ones again."""
    stack = [("", root)]
    while stack:
        prefix, module = stack.pop()
        yield prefix, module
        children = [(prefix + name + ".", child) for name, child in module._modules.items() if child is not None]
        stack.extend(reversed(children))


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
    if assign:
        if isinstance(current, Parameter):
            if isinstance(value, Parameter):
                value.requires_grad_(current.requires_grad)  # the checkpoint's own Parameter object is kept
            else:
                value = Parameter(value, requires_grad=current.requires_grad)
            setattr(module, name, value)
        else:
            setattr(module, name, value)
        return None
    with no_grad():
        current.copy_(value)
    return None


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
