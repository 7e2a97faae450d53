"""Containers: ``Sequential`` (a pipeline), and ``ModuleList``/``ModuleDict`` (whose modules get registered).

>>> import ember
>>> from ember import nn
>>> net = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
>>> net(ember.ones(2, 3)).shape
ember.Size([2, 1])
>>> len(list(net.parameters()))
4
"""
from __future__ import annotations

import operator
from collections import OrderedDict
from typing import Any, Iterable, Iterator, Mapping

from ember.nn.modules.module import Module, _format_module, _indent_continuation_lines

__all__ = ["ModuleDict", "ModuleList", "ParameterDict", "ParameterList", "Sequential"]


def _checked_index(idx: int, length: int) -> int:
    """``idx`` as a position in ``range(length)``, negative indices counting from the end."""
    idx = operator.index(idx)
    if not -length <= idx < length:
        raise IndexError(f"index {idx} is out of range")
    return idx % length


class _Indexed(Module):
    """What Sequential and ModuleList share: children named "0", "1", ... in order."""

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def _key(self, idx: int) -> str:
        return list(self._modules)[_checked_index(idx, len(self))]

    def __setitem__(self, idx: int, module: Module) -> None:
        setattr(self, self._key(idx), module)

    def __delitem__(self, idx: int | slice) -> None:
        keys = list(self._modules)
        for key in (keys[idx] if isinstance(idx, slice) else [self._key(idx)]):
            del self._modules[key]
        # Renumber, so the names stay "0", "1", ... and indexing by position keeps working.
        remaining = list(self._modules.values())
        self._modules.clear()
        for position, module in enumerate(remaining):
            self._modules[str(position)] = module

    def append(self, module: Module) -> "_Indexed":
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> "_Indexed":
        if not isinstance(modules, Iterable):
            raise TypeError(
                f"{type(self).__name__}.extend should be called with an iterable, but got {type(modules).__name__}"
            )
        for module in list(modules):  # a copy: ``x.extend(x)`` doubles x instead of running forever
            self.append(module)
        return self

    def pop(self, idx: int | slice) -> Any:
        """Remove the module (or, for a slice, the container of modules) at ``idx`` and return it."""
        popped = self[idx]
        del self[idx]
        return popped

    def insert(self, index: int, module: Module) -> None:
        """Put ``module`` before position ``index`` (clamped to the ends, like ``list.insert``)."""
        if not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        modules = list(self._modules.values())
        modules.insert(index, module)
        self._modules.clear()
        for position, item in enumerate(modules):
            self._modules[str(position)] = item


class Sequential(_Indexed):
    """Modules applied one after another; built from modules or from an ``OrderedDict`` of named ones."""

    def __init__(self, *args: Module) -> None:
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for name, module in args[0].items():
                self.add_module(name, module)
        else:
            for position, module in enumerate(args):
                self.add_module(str(position), module)

    def __getitem__(self, idx: int | slice) -> Any:
        if isinstance(idx, slice):
            # A slice keeps the children's names, as torch does.
            return type(self)(OrderedDict(list(self._modules.items())[idx]))
        return self._modules[self._key(idx)]

    def insert(self, index: int, module: Module) -> "Sequential":
        """Put ``module`` before position ``index`` (``-len(self) <= index <= len(self)``) and return self."""
        if not -len(self) <= operator.index(index) <= len(self):
            raise IndexError(f"Index out of range: {index}")
        super().insert(index, module)
        return self

    def __add__(self, other: "Sequential") -> "Sequential":
        """A new Sequential of this one's modules, then ``other``'s (the same module objects)."""
        _check_sequential("add", other)
        return Sequential(*self, *other)

    def __iadd__(self, other: "Sequential") -> "Sequential":
        _check_sequential("add", other)
        return self.extend(other)

    def __mul__(self, times: int) -> "Sequential":
        """A new Sequential that runs these modules ``times`` times over (the same objects, so weights are shared)."""
        return Sequential(*(list(self) * _check_repeats(self, times)))

    __rmul__ = __mul__

    def __imul__(self, times: int) -> "Sequential":
        return self.extend(list(self) * (_check_repeats(self, times) - 1))

    def forward(self, input: Any) -> Any:
        for module in self:
            input = module(input)
        return input


def _check_sequential(operation: str, other: Any) -> None:
    if not isinstance(other, Sequential):
        raise ValueError(
            f"{operation} operator supports only objects of Sequential class, but {type(other)} is given."
        )


def _check_repeats(container: Module, times: Any) -> int:
    if not isinstance(times, int) or isinstance(times, bool):
        raise TypeError(f"unsupported operand type(s) for *: {type(container)} and {type(times)}")
    if times <= 0:
        raise ValueError(f"Non-positive multiplication factor {times} for {type(container)}")
    return times


class ModuleList(_Indexed):
    """A list of modules that registers them, so their parameters belong to the owner.

    Like a plain list, it has no ``forward``: iterate over it in your own module's ``forward``.
    """

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __getitem__(self, idx: int | slice) -> Any:
        if isinstance(idx, slice):
            return type(self)(list(self._modules.values())[idx])
        return self._modules[self._key(idx)]

    def __iadd__(self, modules: Iterable[Module]) -> "ModuleList":
        return self.extend(modules)

    def __add__(self, other: Iterable[Module]) -> "ModuleList":
        return ModuleList(list(self) + list(other))

    def __repr__(self) -> str:
        # Runs of identical children print once: "(0-2): 3 x Linear(...)".
        runs: list[list] = []  # [first name, last name, count, repr]
        for name, module in self._modules.items():
            text = repr(module)
            if runs and runs[-1][3] == text:
                runs[-1][1] = name
                runs[-1][2] += 1
            else:
                runs.append([name, name, 1, text])
        lines = []
        for first, last, count, text in runs:
            text = _indent_continuation_lines(text, 2)
            lines.append(f"({first}): {text}" if count == 1 else f"({first}-{last}): {count} x {text}")
        return _format_module(self._get_name(), [], lines)


class ModuleDict(Module):
    """A dict of modules (in insertion order) that registers them, so their parameters belong to the owner.

    >>> import ember
    >>> heads = ember.nn.ModuleDict({"mean": ember.nn.Linear(4, 1), "scale": ember.nn.Linear(4, 1)})
    >>> list(heads), len(list(heads.parameters()))
    (['mean', 'scale'], 4)
    """

    def __init__(self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __contains__(self, key: str) -> bool:
        return key in self._modules

    def keys(self):
        return self._modules.keys()

    def values(self):
        return self._modules.values()

    def items(self):
        return self._modules.items()

    def pop(self, key: str) -> Module:
        module = self[key]
        del self[key]
        return module

    def clear(self) -> None:
        self._modules.clear()

    def update(self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]]) -> None:
        """Add or replace modules from a mapping (a ModuleDict too) or from ``(key, module)`` pairs."""
        if isinstance(modules, (Mapping, ModuleDict)):
            pairs = list(modules.items())
        elif isinstance(modules, Iterable):
            pairs = list(modules)
            for position, pair in enumerate(pairs):
                if not isinstance(pair, Iterable):
                    raise TypeError(
                        f"ModuleDict update sequence element #{position} should be Iterable; is {type(pair).__name__}"
                    )
                if len(pair) != 2:
                    raise ValueError(
                        f"ModuleDict update sequence element #{position} has length {len(pair)}; 2 is required"
                    )
        else:
            raise TypeError(
                "ModuleDict.update should be called with an iterable of key/value pairs, but got "
                f"{type(modules).__name__}"
            )
        for key, module in pairs:
            self[key] = module


def _as_parameter(value: Any) -> Any:
    """A plain tensor stored in a parameter container becomes a Parameter; anything else is kept as it is."""
    from ember._tensor import Tensor
    from ember.nn.parameter import Parameter

    if isinstance(value, Tensor) and not isinstance(value, Parameter):
        return Parameter(value)
    return value


def _describe_entry(key: Any, value: Any, type_name) -> str:
    from ember._tensor import Tensor
    from ember.nn.parameter import Parameter

    if not isinstance(value, Tensor):
        return f"  ({key}): Object of type: {type(value).__name__}"
    kind = "Parameter" if isinstance(value, Parameter) else "Tensor"
    size = "x".join(str(n) for n in value.size())  # (size(): what an uninitialized parameter allows, as in torch)
    return f"  ({key}): {kind} containing: [{type_name(value)} of size {size}]"


class ParameterList(Module):
    """A list of parameters that registers them (plain tensors are wrapped in ``Parameter``).

    >>> import ember
    >>> params = ember.nn.ParameterList([ember.zeros(2, 3)])
    >>> params.append(ember.ones(3))
    ParameterList(
        (0): Parameter containing: [ember.float32 of size 2x3]
        (1): Parameter containing: [ember.float32 of size 3]
    )
    >>> list(params.state_dict())
    ['0', '1']
    """

    def __init__(self, values: Iterable[Any] | None = None) -> None:
        super().__init__()
        self._size = 0
        if values is not None:
            self += values

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator[Any]:
        return (self[i] for i in range(len(self)))

    def __getitem__(self, idx: int | slice) -> Any:
        if isinstance(idx, slice):
            return type(self)([self[i] for i in range(len(self))[idx]])
        return getattr(self, str(_checked_index(idx, len(self))))

    def __setitem__(self, idx: int, param: Any) -> None:
        setattr(self, str(_checked_index(idx, len(self))), _as_parameter(param))

    def __iadd__(self, parameters: Iterable[Any]) -> "ParameterList":
        return self.extend(parameters)

    def __dir__(self) -> list:
        return [key for key in super().__dir__() if not key.isdigit()]

    def append(self, value: Any) -> "ParameterList":
        """Add ``value`` at the end and return the list."""
        self._size += 1
        self[self._size - 1] = value
        return self

    def extend(self, values: Iterable[Any]) -> "ParameterList":
        """Append each of ``values`` (any iterable but a single tensor) and return the list."""
        from ember._tensor import Tensor

        if not isinstance(values, Iterable) or isinstance(values, Tensor):
            raise TypeError(f"ParameterList.extend should be called with an iterable, but got {type(values).__name__}")
        for value in list(values):
            self.append(value)
        return self

    def extra_repr(self) -> str:
        return "\n".join(_describe_entry(i, value, lambda t: t.dtype) for i, value in enumerate(self))

    def __call__(self, *args, **kwargs):
        raise RuntimeError("ParameterList should not be called.")


def _checked_pairs(values: Iterable[Any]) -> Iterator[tuple[Any, Any]]:
    """Each ``(key, value)`` of ``values``, checked as it comes: as with ``dict(pairs)`` (and torch), any
    iterable of two items is a pair (a two-letter string too), and the pairs before a bad one are kept."""
    for position, pair in enumerate(values):
        if not isinstance(pair, Iterable):
            raise TypeError(f"ParameterDict update sequence element #{position} should be Iterable; is "
                            f"{type(pair).__name__}")
        items = list(pair)
        if len(items) != 2:
            raise ValueError(f"ParameterDict update sequence element #{position} has length {len(items)}; "
                             "2 is required")
        yield items[0], items[1]


class ParameterDict(Module):
    """A dict of parameters (in insertion order) that registers them (plain tensors are wrapped in ``Parameter``).

    >>> import ember
    >>> params = ember.nn.ParameterDict({"scale": ember.ones(2)})
    >>> params["shift"] = ember.zeros(2, dtype=ember.float64)
    >>> params
    ParameterDict(
        (scale): Parameter containing: [ember.FloatTensor of size 2]
        (shift): Parameter containing: [ember.DoubleTensor of size 2]
    )
    """

    def __init__(self, parameters: Any = None) -> None:
        super().__init__()
        self._keys: dict[str, None] = {}
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key: str) -> Any:
        return getattr(self, key)

    def __setitem__(self, key: str, value: Any) -> None:
        if not isinstance(key, str):
            raise TypeError(f"ParameterDict keys must be strings, but got {type(key).__name__}")
        self._keys[key] = None
        setattr(self, key, _as_parameter(value))

    def __delitem__(self, key: str) -> None:
        del self._keys[key]
        delattr(self, key)

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __reversed__(self) -> Iterator[str]:
        return reversed(list(self._keys))

    def __contains__(self, key: str) -> bool:
        return key in self._keys

    def __or__(self, other: Mapping[str, Any]) -> "ParameterDict":
        merged = self.copy()
        merged.update(other)
        return merged

    def __ror__(self, other: Mapping[str, Any]) -> Any:
        # as torch: ``dict | ParameterDict`` is the dict's copy updated with this one's entries (a dict, then)
        merged = other.copy()
        merged.update(self)
        return merged

    def __ior__(self, other: Mapping[str, Any]) -> "ParameterDict":
        self.update(other)
        return self

    def copy(self) -> "ParameterDict":
        """A new ParameterDict holding the same parameter objects."""
        return ParameterDict(list(self.items()))

    def keys(self):
        return self._keys.keys()

    def values(self):
        return [self[key] for key in self._keys]

    def items(self):
        return [(key, self[key]) for key in self._keys]

    def get(self, key: str, default: Any = None) -> Any:
        return self[key] if key in self else default

    def setdefault(self, key: str, default: Any = None) -> Any:
        if key not in self:
            self[key] = default
        return self[key]

    def pop(self, key: str) -> Any:
        value = self[key]
        del self[key]
        return value

    def popitem(self) -> tuple[str, Any]:
        """Remove and return the last inserted ``(key, value)``."""
        if not self._keys:
            raise KeyError("popitem(): dictionary is empty")
        key = list(self._keys)[-1]
        return key, self.pop(key)

    def clear(self) -> None:
        for key in list(self._keys):
            del self[key]

    def fromkeys(self, keys: Iterable[str], default: Any = None) -> "ParameterDict":
        return ParameterDict((key, default) for key in keys)

    def update(self, values: Any) -> None:
        """Add or replace entries from a mapping or from ``(key, value)`` pairs."""
        if isinstance(values, (OrderedDict, ParameterDict)):
            pairs = list(values.items())
        elif isinstance(values, Mapping):
            # as torch: a plain mapping's entries go in sorted by key (an OrderedDict's or pairs' keep their order),
            # which decides the order of parameters(), state_dict() and so of an optimizer's state
            pairs = sorted(values.items())
        elif isinstance(values, Iterable):
            pairs = _checked_pairs(values)
        else:
            raise TypeError(
                f"ParametersDict.update should be called with an iterable of key/value pairs, but got "
                f"{type(values).__name__}"
            )
        for key, value in pairs:
            self[key] = value

    def extra_repr(self) -> str:
        return "\n".join(_describe_entry(key, value, lambda t: t.type()) for key, value in self.items())

    def __call__(self, input):
        raise RuntimeError("ParameterDict should not be called.")
