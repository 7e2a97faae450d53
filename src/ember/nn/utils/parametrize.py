"""Parametrizations: make ``module.weight`` the output of a module applied to a stored ``original`` tensor.

After ``register_parametrization(layer, "weight", P())``, reading ``layer.weight`` computes ``P()(original)``
(the gradient flows to ``original``), and assigning ``layer.weight = X`` stores ``P().right_inverse(X)`` when ``P``
defines it. The layer's class is swapped for a subclass ``Parametrized<Class>`` with a property for the name.

>>> import ember
>>> from ember import nn
>>> class Symmetric(nn.Module):
...     def forward(self, X):
...         return X.triu() + X.triu(1).T
>>> layer = nn.utils.parametrize.register_parametrization(nn.Linear(3, 3), "weight", Symmetric())
>>> bool((layer.weight == layer.weight.T).all()), type(layer).__name__
(True, 'ParametrizedLinear')
>>> list(layer.state_dict())
['bias', 'parametrizations.weight.original']
"""
from __future__ import annotations

import contextlib
import copy
import copyreg
from collections.abc import Sequence
from typing import Iterator

import ember
from ember._tensor import Tensor
from ember.autograd.grad_mode import no_grad
from ember.nn.modules.container import ModuleDict, ModuleList
from ember.nn.modules.module import Module
from ember.nn.parameter import Parameter

__all__ = ["ParametrizationList", "cached", "is_parametrized", "register_parametrization",
           "remove_parametrizations", "type_before_parametrizations", "transfer_parametrizations_and_params"]

_cache_depth = 0
_cache: dict[tuple[int, str], Tensor] = {}


@contextlib.contextmanager
def cached() -> Iterator[None]:
    """Within this block, each parametrized tensor is computed once and reused.

    >>> with ember.nn.utils.parametrize.cached():
    ...     pass
    """
    global _cache_depth
    _cache_depth += 1
    try:
        yield
    finally:
        _cache_depth -= 1
        if _cache_depth == 0:
            _cache.clear()


def _as_like(value: Tensor, original: Tensor) -> Parameter | Tensor:
    """``value`` stored the way ``original`` was: a Parameter if it was one (same requires_grad), else a buffer."""
    if isinstance(original, Parameter):
        return Parameter(value, original.requires_grad)
    return value


class ParametrizationList(ModuleList):
    """The chain of parametrizations of one tensor, holding its unparametrized value as ``original``
    (or ``original0``, ``original1``, ... when the first ``right_inverse`` returns several tensors)."""

    def __init__(self, modules, original: Tensor, unsafe: bool = False) -> None:
        if not modules:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        before = (original.dtype, original.shape)  # the original's values may be replaced below
        with no_grad():
            stored = original
            for module in reversed(list(self)):
                if hasattr(module, "right_inverse"):
                    try:
                        stored = module.right_inverse(stored)
                    except NotImplementedError:
                        pass  # a parametrization that cannot be assigned to starts from the original as it is
        if not isinstance(stored, (Tensor, Sequence)):
            raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors (list, tuple...). "
                             f"Got {type(stored).__name__}")
        self.is_tensor = isinstance(stored, Tensor)
        self.ntensors = 1 if self.is_tensor else len(stored)
        if self.is_tensor:
            _check_dtype(stored, original, "When `right_inverse` outputs one tensor, it may not change the dtype")
            # Keep the user's Parameter object (so an optimizer that holds it still works) and refresh its values.
            if stored is not original:
                _set_in_place(original, stored)
            self._store("original", original)
        else:
            for position, tensor in enumerate(stored):
                if not isinstance(tensor, Tensor):
                    raise ValueError(f"'right_inverse' must return a Tensor or a Sequence of tensors (list, tuple...). "
                                     f"Got element {position} of the sequence with type {type(tensor).__name__}.")
                self._store(f"original{position}", _as_like(tensor.detach().clone(), original))
        if not unsafe:
            self._check_forward(*before)

    def _store(self, name: str, tensor: Tensor) -> None:
        if isinstance(tensor, Parameter):
            self.register_parameter(name, tensor)
        else:
            self.register_buffer(name, tensor)

    def _check_forward(self, dtype, shape) -> None:
        value = self()
        if not isinstance(value, Tensor):
            raise ValueError(f"A parametrization must return a tensor. Got {type(value).__name__}.")
        _check_unchanged(dtype, shape, value)

    def originals(self) -> tuple[Tensor, ...]:
        if self.is_tensor:
            return (self.original,)
        return tuple(getattr(self, f"original{i}") for i in range(self.ntensors))

    def right_inverse(self, value: Tensor) -> None:
        """Store ``value`` by running the chain's right inverses backwards (without recording a gradient)."""
        with no_grad():
            for module in reversed(list(self)):
                if not hasattr(module, "right_inverse"):
                    raise RuntimeError(
                        f"parametrization {type(module).__name__} does not implement right_inverse."
                    )
                value = module.right_inverse(value)
            for target, new in zip(self.originals(), self._stored_values(value)):
                _check_dtype(new, target, "The tensor returned by `right_inverse` must keep the stored dtype")
                _set_in_place(target, new)  # the shape may change, as with torch's set_

    def _stored_values(self, value) -> tuple:
        """What ``right_inverse`` returned, checked to be what the originals can take: one tensor, or a sequence
        (a list or tuple, not a set or dict) of as many tensors as there are originals."""
        if self.is_tensor:
            if not isinstance(value, Tensor):
                raise ValueError(f"`right_inverse` should return a tensor. Got {type(value).__name__}")
            return (value,)
        if not isinstance(value, Sequence):
            raise ValueError(f"'right_inverse' must return a sequence of tensors. Got {type(value).__name__}.")
        if len(value) != self.ntensors:
            raise ValueError(f"'right_inverse' must return a sequence of tensors of length {self.ntensors}. "
                             f"Got a sequence of length {len(value)}.")
        for position, tensor in enumerate(value):
            if not isinstance(tensor, Tensor):
                raise ValueError(f"'right_inverse' must return a sequence of tensors. Got element {position} of "
                                 f"type {type(tensor).__name__}.")
        return tuple(value)

    def forward(self) -> Tensor:
        modules = list(self)
        value = modules[0](*self.originals())
        for module in modules[1:]:
            value = module(value)
        return value


def _check_dtype(new: Tensor, stored: Tensor, what: str) -> None:
    """A single stored tensor keeps its dtype (``unsafe`` or not): the module's optimizer and state expect it."""
    if new.dtype != stored.dtype:
        raise ValueError(f"{what}.\nstored dtype: {stored.dtype}\nright_inverse's dtype: {new.dtype}\n"
                         "Make right_inverse return a tensor of the stored dtype (e.g. with .to(dtype))")


def _set_in_place(target: Tensor, value: Tensor) -> None:
    """Make ``target`` (the same Parameter or buffer object) hold ``value``, whose shape may differ."""
    with no_grad():
        target.set_(value.detach())


def _check_unchanged(dtype, shape, after: Tensor) -> None:
    for what, old, new in (("dtype", dtype, after.dtype), ("shape", shape, after.shape)):
        if old != new:
            raise ValueError(
                f"Registering a parametrization may not change the {what} of the tensor, unless `unsafe` flag is "
                f"enabled.\nunparametrized {what}: {old}\nparametrized {what}: {new}"
            )


def _parametrized_value(module: Module, name: str) -> Tensor:
    chain = module.parametrizations[name]
    if _cache_depth == 0:
        return chain()
    key = (id(module), name)
    if key not in _cache:
        _cache[key] = chain()
    return _cache[key]


def _make_property(name: str) -> property:
    def read(self: Module) -> Tensor:
        return _parametrized_value(self, name)

    def write(self: Module, value: Tensor) -> None:
        self.parametrizations[name].right_inverse(value)

    return property(read, write)


def _refuse_pickling(module: Module):
    # the injected class cannot be found by name when unpickling: only the state_dict can be saved
    raise RuntimeError(
        "Serialization of parametrized modules is only supported through state_dict(): save "
        "module.state_dict() and load it into a module parametrized the same way"
    )


def _deep_copy(module: Module, memo: dict) -> Module:
    """A copy of the module (of the same injected class), its attributes copied deeply, not through pickling."""
    if id(module) in memo:
        return memo[id(module)]
    replica = module.__new__(type(module))
    memo[id(module)] = replica
    replica.__dict__ = copy.deepcopy(module.__dict__, memo)
    for slot in copyreg._slotnames(type(module)):
        if hasattr(module, slot):
            setattr(replica, slot, copy.deepcopy(getattr(module, slot), memo))
    return replica


def _inject_class(module: Module) -> None:
    """Swap ``module``'s class for a fresh subclass, so properties added to it touch this module only."""
    cls = type(module)
    namespace = {"_class_before_parametrizations": cls, "__getstate__": _refuse_pickling}
    if not hasattr(cls, "__deepcopy__"):
        namespace["__deepcopy__"] = _deep_copy
    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), namespace)


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    """Whether ``module`` has parametrizations (for ``tensor_name``, if given).

    >>> is_parametrized(ember.nn.Linear(2, 2))
    False
    """
    chains = getattr(module, "parametrizations", None)
    if not isinstance(chains, ModuleDict):
        return False
    return len(chains) > 0 if tensor_name is None else tensor_name in chains


def type_before_parametrizations(module: Module) -> type:
    """The module's class as it was before any parametrization was registered."""
    return module._class_before_parametrizations if is_parametrized(module) else type(module)


def register_parametrization(module: Module, tensor_name: str, parametrization: Module, *,
                             unsafe: bool = False) -> Module:
    """Make ``module.<tensor_name>`` be ``parametrization(original)``; a second call chains another one."""
    if is_parametrized(module, tensor_name):
        chain = module.parametrizations[tensor_name]
        if not unsafe:
            value = getattr(module, tensor_name)
            new = parametrization(value)
            if not isinstance(new, Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got {type(new).__name__}.")
            _check_unchanged(value.dtype, value.shape, new)
        chain.append(parametrization)
        chain.unsafe |= unsafe
        return module
    if tensor_name not in module._parameters and tensor_name not in module._buffers:
        raise ValueError(
            f"Module '{module}' does not have a parameter, a buffer, or a parametrized element with name "
            f"'{tensor_name}'"
        )
    original = getattr(module, tensor_name)
    chain = ParametrizationList([parametrization], original, unsafe=unsafe)
    delattr(module, tensor_name)
    if not is_parametrized(module):
        _inject_class(module)
        module.parametrizations = ModuleDict()
    setattr(type(module), tensor_name, _make_property(tensor_name))
    module.parametrizations[tensor_name] = chain
    return module


def remove_parametrizations(module: Module, tensor_name: str, leave_parametrized: bool = True) -> Module:
    """Undo ``register_parametrization``: ``tensor_name`` becomes a plain parameter (or buffer) again, holding the
    parametrized value if ``leave_parametrized`` else the original one."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    chain = module.parametrizations[tensor_name]
    if chain.is_tensor:
        original = chain.original
        if leave_parametrized:
            with no_grad():
                _set_in_place(original, getattr(module, tensor_name).clone())
    else:
        if not leave_parametrized:
            raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is parametrized "
                             "in terms of a sequence of tensors.")
        # as torch: a parameter if the value needs a gradient (an original that requires one, grad mode on),
        # else a buffer; frozen originals give a buffer
        value = getattr(module, tensor_name)
        original = Parameter(value.detach().clone()) if value.requires_grad else value.detach().clone()
    delattr(type(module), tensor_name)
    del module.parametrizations[tensor_name]
    if isinstance(original, Parameter):
        module.register_parameter(tensor_name, original)
    else:
        module.register_buffer(tensor_name, original)
    if not is_parametrized(module):
        del module.parametrizations
        module.__class__ = module._class_before_parametrizations
    return module


def transfer_parametrizations_and_params(from_module: Module, to_module: Module,
                                         tensor_name: str | None = None) -> Module:
    """Give ``to_module`` the parametrizations of ``from_module`` (the same modules, chained after any it has)
    and make it share ``from_module``'s originals: the very same tensors, as torch does, so training one module
    trains the other."""
    if not is_parametrized(from_module):
        return to_module
    names = [tensor_name] if tensor_name is not None else list(from_module.parametrizations)
    for name in names:
        if not hasattr(to_module, name):
            setattr(to_module, name, Parameter(getattr(from_module, name)))
        source = from_module.parametrizations[name]
        for parametrization in source:
            register_parametrization(to_module, name, parametrization)
        target = to_module.parametrizations[name]
        names_of_originals = ["original"] if source.is_tensor else [f"original{i}" for i in range(source.ntensors)]
        for original in names_of_originals:
            setattr(target, original, getattr(source, original))
    return to_module
