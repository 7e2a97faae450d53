"""Operator schemas: parsing ``"(Tensor x, int n=2, *, float alpha=1.) -> Tensor"``, inferring one from a
function's type hints, and binding a call's arguments to one with PyTorch's errors.

>>> from ember.library._schema import parse_schema
>>> schema = parse_schema("mylib::scale(Tensor x, float k=1.0, *, bool flag=False) -> Tensor")
>>> [(a.name, a.type, a.default) for a in schema.arguments]
[('x', 'Tensor', <no default>), ('k', 'float', 1.0), ('flag', 'bool', False)]
>>> schema.bind((ember.ones(1), 2), {})
([tensor([1.]), 2.0], {'flag': False})
"""
from __future__ import annotations

import ast
import collections.abc
import inspect
import math
import re
import types
import typing
from dataclasses import dataclass

import numpy as np

from ember._dtype import dtype as _dtype_class
from ember._tensor import Tensor, device as _device_class


class _NoDefault:
    def __repr__(self) -> str:
        return "<no default>"


NO_DEFAULT = _NoDefault()

# The base types a schema may name. Those missing from _CHECKS accept any value (ember has no such objects).
_BASE_TYPES = {"Tensor", "int", "SymInt", "float", "bool", "str", "Scalar", "ScalarType", "Device", "Layout",
               "MemoryFormat", "Generator", "Dimname", "Storage", "Any", "complex"}
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_TYPE = re.compile(r"(?P<base>[A-Za-z]+)(?P<alias>\([a-z0-9]+!?\))?(?P<elem_optional>\?)?"
                   r"(?P<list>\[(?P<size>\d*)\])?(?P<optional>\?)?\Z")


@dataclass(frozen=True)
class Argument:
    """One argument of a schema: its name, type text (``"Tensor?"``, ``"SymInt[]"``), default and flags."""

    name: str
    type: str
    default: typing.Any = NO_DEFAULT
    kwarg_only: bool = False
    mutable: bool = False  # written Tensor(a!): the op changes it in place

    def __post_init__(self):
        # the type's parts, read once here rather than on every call
        parsed = _TYPE.match(self.type)
        is_list = parsed["list"] is not None
        parts = {"base": parsed["base"], "is_list": is_list, "size": int(parsed["size"] or 0),
                 "optional": parsed["optional"] is not None if is_list else parsed["elem_optional"] is not None,
                 "elem_optional": is_list and parsed["elem_optional"] is not None,
                 "is_tensor_like": parsed["base"] == "Tensor", "type_name": _type_name(parsed)}
        parts["is_tensor_list"] = parts["is_tensor_like"] and is_list
        for key, value in parts.items():
            object.__setattr__(self, key, value)

    def __str__(self) -> str:
        text = f"{self.type} {self.name}"
        return text if self.default is NO_DEFAULT else f"{text}={_default_repr(self.default)}"


@dataclass(frozen=True, repr=False)
class FunctionSchema:
    """``ns::name.overload(arguments) -> returns``: what an operator takes and returns."""

    name: str  # "ns::opname"
    overload_name: str
    arguments: tuple
    returns: tuple  # the type text of each return

    def __str__(self) -> str:
        name = self.name + (f".{self.overload_name}" if self.overload_name else "")
        return f"{name}{self.signature_text()}"

    __repr__ = __str__

    @property
    def keyword_only(self) -> bool:
        return any(a.kwarg_only for a in self.arguments)

    def signature_text(self) -> str:
        """``(Tensor x, *, bool flag=False) -> Tensor``: the schema without its name."""
        parts, starred = [], False
        for a in self.arguments:
            if a.kwarg_only and not starred:
                parts.append("*")
                starred = True
            parts.append(str(a))
        returns = self.returns[0] if len(self.returns) == 1 else f"({', '.join(self.returns)})"
        return f"({', '.join(parts)}) -> {returns}"

    @property
    def mutable_arguments(self) -> tuple:
        return tuple(a for a in self.arguments if a.mutable)

    def bind(self, args: tuple, kwargs: dict) -> tuple[list, dict]:
        """The call's values checked against the schema, defaults filled: (positional values, keyword-only ones).

        Raises RuntimeError as torch's operators do for too many or missing arguments, unknown keywords and values
        of the wrong type (bools are taken for ints and ints for floats, converted as torch converts them).
        """
        if not kwargs and len(args) == len(self.arguments) and not self.keyword_only:  # the usual call
            return [_checked(self, a, i, v) for i, (a, v) in enumerate(zip(self.arguments, args))], {}
        positional = [a for a in self.arguments if not a.kwarg_only]
        if len(args) > len(positional):
            self._refuse_count(len(positional), len(args))
        values = {}
        for argument, value in zip(positional, args):
            values[argument.name] = value
        known = {a.name for a in self.arguments}
        for key, value in kwargs.items():
            if key not in known:
                raise RuntimeError(f"Unknown keyword argument '{key}' for operator '{self.name}'. Schema: {self}")
            if key in values:
                raise RuntimeError(f"{self.name}() got multiple values for argument '{key}'. Declaration: {self}")
            values[key] = value
        front, back = [], {}
        for position, argument in enumerate(self.arguments):
            if argument.name in values:
                value = _checked(self, argument, position, values[argument.name])
            elif argument.default is not NO_DEFAULT:
                value = _fresh_default(argument.default)
            else:
                raise RuntimeError(f"{self.name}() is missing value for argument '{argument.name}'. "
                                   f"Declaration: {self}")
            if argument.kwarg_only:
                back[argument.name] = value
            else:
                front.append(value)
        return front, back

    def _refuse_count(self, allowed: int, given: int) -> None:
        if self.keyword_only:
            raise RuntimeError(f"{self.name}() takes {allowed} positional argument(s) but {given} was/were given. "
                               f" Declaration: {self}")
        raise RuntimeError(f"{self.name}() expected at most {allowed} argument(s) but received {given} argument(s). "
                           f"Declaration: {self}")


def _default_repr(value) -> str:
    """A default as torch prints schemas: ``1.`` for a whole float, ``"mean"`` in double quotes."""
    if isinstance(value, float) and value.is_integer():
        return f"{int(value)}."
    if isinstance(value, str):
        return '"' + value.replace('"', '\\"') + '"'
    if isinstance(value, list):
        return "[" + ", ".join(_default_repr(v) for v in value) + "]"
    return str(value)


def _fresh_default(value):
    return list(value) if type(value) is list else value  # a list default is never shared between calls


# ---- checking one value against its argument's type

def _is_int(v) -> bool:
    return isinstance(v, (int, np.integer))


def _is_float(v) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating))


def _is_scalar(v) -> bool:
    return isinstance(v, (int, float, complex, np.number, np.bool_))


_CHECKS = {  # base type -> (accepts, converts)
    "Tensor": (lambda v: isinstance(v, Tensor), lambda v: v),
    "int": (_is_int, int),
    "SymInt": (_is_int, int),
    "float": (_is_float, float),
    "bool": (lambda v: isinstance(v, (bool, np.bool_)), bool),
    "str": (lambda v: isinstance(v, str), lambda v: v),
    "Scalar": (_is_scalar, lambda v: v.item() if isinstance(v, np.generic) else v),
    "ScalarType": (lambda v: isinstance(v, _dtype_class), lambda v: v),
    "Device": (lambda v: isinstance(v, (_device_class, str, int)), lambda v: v),
    "complex": (_is_scalar, complex),
}
_TYPE_NAMES = {"Tensor": "Tensor", "int": "int", "SymInt": "int", "float": "float", "bool": "bool", "str": "str",
               "Scalar": "number", "ScalarType": "int", "Device": "Device", "complex": "complex"}


def _checked(schema: FunctionSchema, argument: Argument, position: int, value):
    """``value`` converted to ``argument``'s type, or torch's RuntimeError naming what was expected."""
    if value is None and argument.optional:
        return None
    check = _CHECKS.get(argument.base)
    if check is None:
        return value
    accepts, convert = check
    if not argument.is_list:
        if accepts(value):
            return convert(value)
    elif isinstance(value, (list, tuple)):
        if all(accepts(v) or (v is None and argument.elem_optional) for v in value):
            return [v if v is None else convert(v) for v in value]
    elif argument.size and accepts(value) and not argument.is_tensor_like:  # int[2] pads=1 means [1, 1]
        return [convert(value)] * argument.size
    raise RuntimeError(
        f"{schema.name}() Expected a value of type '{argument.type_name}' for argument '{argument.name}' but "
        f"instead found type '{type(value).__name__}'.\nPosition: {position}\nValue: {value!r}\nDeclaration: {schema}"
    )


def _type_name(parsed) -> str:
    name = _TYPE_NAMES.get(parsed["base"], parsed["base"])
    if parsed["elem_optional"]:
        name = f"Optional[{name}]"
    if parsed["list"] is not None:
        name = f"List[{name}]"
    return f"Optional[{name}]" if parsed["optional"] else name


# ---- parsing schema text

def parse_schema(text: str, name: str | None = None) -> FunctionSchema:
    """A schema from ``"ns::name.overload(args) -> returns"``, or from ``"(args) -> returns"`` with ``name`` given."""
    text = text.strip()
    open_at = text.find("(")
    if open_at < 0:
        raise RuntimeError(f"expected ( in the schema but found none: {text}")
    head = text[:open_at].strip() or name or ""
    close_at = _matching_paren(text, open_at)
    rest = text[close_at + 1:].strip()
    if not rest.startswith("->"):
        raise RuntimeError(f"expected -> after the argument list of the schema: {text}")
    qualname, _, overload = head.partition(".")
    arguments = _parse_arguments(text[open_at + 1:close_at], text)
    return FunctionSchema(qualname, overload, arguments, _parse_returns(rest[2:].strip(), text))


def _matching_paren(text: str, open_at: int) -> int:
    depth = 0
    for i in range(open_at, len(text)):
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        if depth == 0:
            return i
    raise RuntimeError(f"expected ) to close the argument list of the schema: {text}")


def _split_top_level(text: str) -> list[str]:
    """``text`` split at the commas that are outside brackets and quotes."""
    parts, depth, quote, start = [], 0, None, 0
    for i, ch in enumerate(text):
        if quote:
            quote = None if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def _parse_arguments(text: str, schema_text: str) -> tuple:
    arguments, kwarg_only = [], False
    for part in _split_top_level(text):
        if part == "*":
            kwarg_only = True
            continue
        declaration, eq, default_text = part.partition("=")
        pieces = declaration.split()
        if len(pieces) != 2 or not _IDENTIFIER.match(pieces[1]):
            raise RuntimeError(f"expected an argument written as 'Type name' but found {part!r} in: {schema_text}")
        type_text = _checked_type(pieces[0], schema_text)
        default = _parse_default(default_text.strip(), type_text, schema_text) if eq else NO_DEFAULT
        arguments.append(Argument(pieces[1], type_text, default, kwarg_only, "!" in type_text))
    return tuple(arguments)


def _checked_type(type_text: str, schema_text: str) -> str:
    parsed = _TYPE.match(type_text)
    if parsed is None or parsed["base"] not in _BASE_TYPES:
        raise RuntimeError(
            f"unknown type specifier {type_text!r}. Common valid schema types include Tensor, SymInt, int, float, "
            f"bool, Scalar, str, ScalarType, Device, each with ? (optional) or [] (list): {schema_text}"
        )
    if parsed["alias"] and parsed["base"] != "Tensor":
        raise RuntimeError(f"only Tensor arguments can carry an alias annotation such as (a!), got {type_text!r}: "
                           f"{schema_text}")
    return type_text


def _parse_default(text: str, type_text: str, schema_text: str):
    special = {"inf": math.inf, "-inf": -math.inf, "nan": math.nan, "true": True, "false": False}
    if text in special:
        return special[text]
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        raise RuntimeError(f"cannot read the default value {text!r} in: {schema_text}") from None
    parsed = _TYPE.match(type_text)
    if parsed["size"] and isinstance(value, int):  # int[2] pads=0 means [0, 0]
        return [value] * int(parsed["size"])
    if type(value) is tuple:
        return list(value)
    if parsed["base"] == "float" and type(value) is int and parsed["list"] is None:
        return float(value)
    return value


def _parse_returns(text: str, schema_text: str) -> tuple:
    if text.startswith("("):
        inner = text[1:_matching_paren(text, 0)]
        parts = [p.split()[0] for p in _split_top_level(inner)]  # named returns keep only their types
    else:
        parts = [text]
    return tuple(_checked_type(p, schema_text) for p in parts)


# ---- inferring a schema from type hints

def _argument_types() -> dict:
    """Annotation -> schema type, for the annotations an op's parameters may have (as torch accepts them)."""
    table = {Tensor: "Tensor", int: "SymInt", float: "float", bool: "bool", str: "str", _dtype_class: "ScalarType",
             _device_class: "Device", typing.Union[int, float, bool]: "Scalar"}
    listable = {Tensor: "Tensor", typing.Optional[Tensor]: "Tensor?", int: "SymInt", float: "float", bool: "bool",
                typing.Union[int, float, bool]: "Scalar"}
    for element, name in listable.items():
        for sequence in (typing.Sequence, typing.List, collections.abc.Sequence, list):
            table[sequence[element]] = f"{name}[]"
            if element is not Tensor and name != "Tensor?":
                table[typing.Optional[sequence[element]]] = f"{name}[]?"
    for plain in (Tensor, int, float, bool, str, _dtype_class, _device_class):
        table[typing.Optional[plain]] = table[plain] + "?"
    table[typing.Optional[typing.Union[int, float, bool]]] = "Scalar?"
    return {_annotation_key(k): v for k, v in table.items()}


def _return_types() -> dict:
    table = {Tensor: "Tensor", typing.List[Tensor]: "Tensor[]", int: "SymInt", float: "float", bool: "bool",
             typing.Union[int, float, bool]: "Scalar"}
    return {_annotation_key(k): v for k, v in table.items()}


_ARGUMENT_TYPES: dict | None = None


def _annotation_key(annotation):
    """``int | None`` (a types.UnionType) and ``Optional[int]`` are one annotation to the table."""
    if isinstance(annotation, types.UnionType):
        return typing.Union[annotation.__args__]
    origin = typing.get_origin(annotation)
    if origin in (list, collections.abc.Sequence) and typing.get_args(annotation):
        element = _annotation_key(typing.get_args(annotation)[0])
        return (list if origin is list else collections.abc.Sequence)[element]
    if origin is typing.Union:
        return typing.Union[tuple(_annotation_key(a) for a in typing.get_args(annotation))]
    return annotation


def infer_schema(prototype_function, /, *, mutates_args, op_name: str | None = None) -> str:
    """The schema text of an op whose kernel is ``prototype_function``, read from its type hints.

    >>> def scale(x: ember.Tensor, k: float = 2.0) -> ember.Tensor: ...
    >>> infer_schema(scale, mutates_args=())
    '(Tensor x, float k=2.0) -> Tensor'
    """
    global _ARGUMENT_TYPES
    if _ARGUMENT_TYPES is None:
        _ARGUMENT_TYPES = _argument_types()
    signature = _signature(prototype_function)

    def refuse(why: str):
        raise ValueError(f"infer_schema(func): {why} Got func with signature {signature})")

    mutated = _mutated_names(mutates_args, signature, refuse)
    parts, starred = [], False
    for p in signature.parameters.values():
        if p.kind in (p.POSITIONAL_ONLY, p.VAR_POSITIONAL, p.VAR_KEYWORD):
            refuse("We do not support positional-only args, varargs, or varkwargs.")
        if p.kind is p.KEYWORD_ONLY and not starred:
            parts.append("*")
            starred = True
        if p.annotation is inspect.Parameter.empty:
            refuse(f"Parameter {p.name} must have a type annotation.")
        schema_type = _ARGUMENT_TYPES.get(_annotation_key(p.annotation))
        if schema_type is None:
            refuse(f"Parameter {p.name} has unsupported type {p.annotation}. The valid types are: "
                   f"{_valid_names(_ARGUMENT_TYPES)}.")
        if p.name in mutated or (mutates_args == "unknown" and schema_type.startswith("Tensor")):
            if not schema_type.startswith("Tensor"):
                refuse(f"Parameter {p.name} is in mutable_args but only Tensors or collections of Tensors can be "
                       "mutated")
            schema_type = schema_type.replace("Tensor", f"Tensor(a{len(parts) - starred}!)", 1)
        parts.append(f"{schema_type} {p.name}" + _default_text(p, refuse))
    returns = _returns_text(signature.return_annotation, refuse)
    return f"{op_name or ''}({', '.join(parts)}) -> {returns}"


def _signature(function) -> inspect.Signature:
    try:
        return inspect.signature(function, eval_str=True)
    except NameError as error:  # a string annotation (PEP 563) naming what only a local scope had
        raise ValueError(
            f"infer_schema(func): Unsupported type annotation: it is not a type ({error}). With 'from __future__ "
            "import annotations' the annotations are strings, evaluated in the function's module: import the types "
            f"they name at module scope. Got func with signature {inspect.signature(function)})"
        ) from None


def _mutated_names(mutates_args, signature: inspect.Signature, refuse) -> set:
    if mutates_args == "unknown":
        return set()
    if isinstance(mutates_args, str):
        mutates_args = (mutates_args,)
    names = set(mutates_args)
    missing = names - set(signature.parameters)
    if missing:
        refuse(f"{missing} in mutates_args were not found in the custom op's signature. mutates_args should contain "
               "the names of all args that the custom op mutates, or just the string 'unknown' if you don't know.")
    return names


def _default_text(p: inspect.Parameter, refuse) -> str:
    default = p.default
    if default is inspect.Parameter.empty:
        return ""
    if default is None or isinstance(default, (bool, int, float, str)):
        return f"={_default_repr(default)}" if isinstance(default, str) else f"={default}"
    if isinstance(default, _dtype_class):
        return f"={default}"
    refuse(f"Parameter {p.name} has an unsupported default value type {type(default)}. Use None, a bool, int, "
           "float or str as the default.")


def _returns_text(annotation, refuse) -> str:
    if annotation is inspect.Signature.empty:
        refuse("No return type annotation was provided. Please add one.")
    if annotation is None or annotation is type(None):
        return "()"
    returns = _return_types()
    origin = typing.get_origin(annotation)
    if origin is tuple:
        elements = typing.get_args(annotation)
        if Ellipsis in elements or not all(_annotation_key(e) in returns for e in elements):
            refuse(f"Return has unsupported type {annotation}. The valid types are: {_valid_names(returns)}, or a "
                   "tuple of them.")
        return f"({', '.join(returns[_annotation_key(e)] for e in elements)})"
    schema_type = returns.get(_annotation_key(annotation))
    if schema_type is None:
        refuse(f"Return has unsupported type {annotation}. The valid types are: {_valid_names(returns)}, or a tuple "
               "of them.")
    return schema_type


def _valid_names(table: dict) -> str:
    return ", ".join(sorted(set(table.values())))
