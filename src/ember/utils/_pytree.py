"""Nested containers ("pytrees") flattened to their leaves and rebuilt, as ``torch.utils._pytree``.

Lists, tuples, dicts, named tuples, ``OrderedDict``, ``defaultdict``, ``deque`` and ``ember.Size`` are nodes;
anything else (a Tensor, a number, None, a string) is a leaf. ``register_pytree_node`` makes a class of the
user's own a node too. ``ember.func`` (``vmap``, ``grad``, ``jacrev`` ...) walks its arguments with these
same functions.

>>> from ember.utils._pytree import tree_flatten, tree_map, tree_unflatten
>>> leaves, spec = tree_flatten({"b": 1, "a": [2, (3, None)]})
>>> leaves
[1, 2, 3, None]
>>> spec
TreeSpec(dict, ['b', 'a'], [*,
  TreeSpec(list, None, [*,
    TreeSpec(tuple, None, [*,
      *])])])
>>> tree_unflatten([10, 20, 30, 40], spec)
{'b': 10, 'a': [20, (30, 40)]}
>>> tree_map(lambda x: x * 2, [1, (2, 3)])
[2, (4, 6)]
"""
from __future__ import annotations

import types
from collections import OrderedDict, defaultdict, deque, namedtuple
from collections.abc import Callable, Iterable
from typing import Any

from ember._size import Size

__all__ = [
    "PyTree", "Context", "FlattenFunc", "UnflattenFunc", "TreeSpec", "LeafSpec", "register_pytree_node",
    "tree_flatten", "tree_unflatten", "tree_iter", "tree_leaves", "tree_structure", "tree_map", "tree_map_",
    "tree_map_only", "tree_map_only_", "tree_all", "tree_any", "tree_all_only", "tree_any_only", "tree_is_leaf",
    "treespec_leaf", "treespec_tuple", "treespec_dict", "is_namedtuple", "is_namedtuple_class",
    "is_namedtuple_instance", "register_dataclass", "arg_tree_leaves", "tree_flatten_with_path",
    "tree_leaves_with_path", "tree_map_with_path", "keystr", "key_get", "KeyEntry", "KeyPath", "SequenceKey",
    "MappingKey", "GetAttrKey", "FlattenFn", "UnflattenFn", "DumpableContext", "ToDumpableContextFn",
    "FromDumpableContextFn", "PyTreeSpec", "treespec_pprint", "treespec_dumps", "treespec_loads", "is_structseq",
    "is_structseq_class", "is_structseq_instance",
]

PyTree = Any
Context = Any
FlattenFunc = Callable[[PyTree], "tuple[list, Context]"]
UnflattenFunc = Callable[[Iterable, Context], PyTree]
FlattenFn, UnflattenFn = FlattenFunc, UnflattenFunc
DumpableContext = Any  # a context as JSON can hold it
ToDumpableContextFn = Callable[[Context], DumpableContext]
FromDumpableContextFn = Callable[[DumpableContext], Context]


# how one node type comes apart into children and a context, and goes back together
NodeDef = namedtuple("NodeDef", "type flatten_fn unflatten_fn flatten_with_keys_fn", defaults=(None,))


SUPPORTED_NODES: dict[Any, NodeDef] = {}
# how ``treespec_dumps`` names a node type and writes its context as JSON, and how ``treespec_loads`` reads it back
_SerializeNodeDef = namedtuple("_SerializeNodeDef",
                               "typ serialized_type_name to_dumpable_context from_dumpable_context")
SUPPORTED_SERIALIZED_TYPES: dict[Any, _SerializeNodeDef] = {}
SERIALIZED_TYPE_TO_PYTHON_TYPE: dict[str, Any] = {}
NO_SERIALIZED_TYPE_NAME_FOUND = "NO_SERIALIZED_TYPE_NAME_FOUND"


def register_pytree_node(cls: type, flatten_fn: FlattenFunc, unflatten_fn: UnflattenFunc, *,
                         serialized_type_name: str | None = None, to_dumpable_context: Callable | None = None,
                         from_dumpable_context: Callable | None = None,
                         flatten_with_keys_fn: Callable | None = None) -> None:
    """Make instances of ``cls`` nodes: ``flatten_fn(obj)`` gives ``(children, context)`` and
    ``unflatten_fn(children, context)`` rebuilds the object.

    >>> class Pair:
    ...     def __init__(self, first, second):
    ...         self.first, self.second = first, second
    >>> register_pytree_node(Pair, lambda p: ([p.first, p.second], None), lambda children, _: Pair(*children),
    ...                      serialized_type_name="example.Pair")
    >>> tree_leaves([Pair(1, 2), 3])
    [1, 2, 3]
    """
    if cls in SUPPORTED_NODES:
        raise ValueError(f"{cls} is already registered as pytree node.")
    SUPPORTED_NODES[cls] = NodeDef(cls, flatten_fn, unflatten_fn, flatten_with_keys_fn)
    _register_serialization(cls, serialized_type_name, to_dumpable_context, from_dumpable_context)


def _register_serialization(cls: Any, serialized_type_name: str | None, to_dumpable_context: Callable | None,
                            from_dumpable_context: Callable | None) -> None:
    name = NO_SERIALIZED_TYPE_NAME_FOUND if serialized_type_name is None else serialized_type_name
    SUPPORTED_SERIALIZED_TYPES[cls] = _SerializeNodeDef(cls, name, to_dumpable_context, from_dumpable_context)
    if serialized_type_name is not None:
        SERIALIZED_TYPE_TO_PYTHON_TYPE[serialized_type_name] = cls


def _register_namedtuple(cls: type, *, serialized_type_name: str) -> None:
    """Give a named tuple class the name ``treespec_dumps`` writes for it (named tuples need no other
    registration to be nodes)."""
    _register_serialization(cls, serialized_type_name, None, None)


def _register_pytree_node(cls: type, flatten_fn: FlattenFunc, unflatten_fn: UnflattenFunc,
                          to_str_fn: Callable | None = None, maybe_from_str_fn: Callable | None = None, *,
                          serialized_type_name: str | None = None, to_dumpable_context: Callable | None = None,
                          from_dumpable_context: Callable | None = None,
                          flatten_with_keys_fn: Callable | None = None) -> None:
    """torch's older, deprecated spelling of ``register_pytree_node``, which libraries written for earlier
    torch still call; unlike it, it replaces an earlier registration of ``cls`` (with a warning)."""
    import warnings

    warnings.warn("`ember.utils._pytree._register_pytree_node` is deprecated. Please use "
                  "`ember.utils._pytree.register_pytree_node` instead.", FutureWarning, stacklevel=2)
    if cls in SUPPORTED_NODES:
        warnings.warn(f"{cls} is already registered as pytree node. Overwriting the previous registration.",
                      stacklevel=2)
        del SUPPORTED_NODES[cls]
    register_pytree_node(cls, flatten_fn, unflatten_fn, serialized_type_name=serialized_type_name,
                         flatten_with_keys_fn=flatten_with_keys_fn)


def register_dataclass(cls: type, *, field_names: list[str] | None = None,
                       drop_field_names: list[str] | None = None, serialized_type_name: str | None = None) -> None:
    """Make a dataclass (or a class built from keyword fields) a node whose children are its fields; a field
    that is None is not a child, and comes back as None.

    >>> import dataclasses
    >>> @dataclasses.dataclass
    ... class Batch:
    ...     inputs: list
    ...     mask: object = None
    >>> register_dataclass(Batch)
    >>> tree_map(lambda x: x + 1, Batch([1, 2]))
    Batch(inputs=[2, 3], mask=None)
    """
    names = _dataclass_field_names(cls, field_names, drop_field_names or [])

    def flatten(obj: Any) -> tuple[list, list]:
        present = [name for name in names if getattr(obj, name) is not None]
        absent = [name for name in names if getattr(obj, name) is None]
        return [getattr(obj, name) for name in present], [present, absent]

    def unflatten(values: Iterable, context: list) -> Any:
        present, absent = context
        return cls(**dict(zip(present, values)), **dict.fromkeys(absent))

    def flatten_with_keys(obj: Any) -> tuple[list, list]:
        values, (present, _) = flatten(obj)
        return [(GetAttrKey(name), value) for name, value in zip(present, values)], present

    register_pytree_node(cls, flatten, unflatten, serialized_type_name=serialized_type_name,
                         flatten_with_keys_fn=flatten_with_keys)


def _dataclass_field_names(cls: type, field_names: list[str] | None, dropped: list[str]) -> list[str]:
    import dataclasses

    if not dataclasses.is_dataclass(cls):
        if field_names is None:
            raise ValueError(f"field_names must be specified with a list of all fields used to initialize {cls}, "
                             "as it is not a dataclass.")
        return list(field_names)
    init_fields = {field.name for field in dataclasses.fields(cls) if field.init}
    if field_names is None:
        return [field.name for field in dataclasses.fields(cls) if field.init]
    expected = init_fields - set(dropped)
    if expected != set(field_names):
        raise ValueError(
            f"register_dataclass({cls.__name__}): field_names does not include all dataclass fields: missing "
            f"{expected - set(field_names) or '{}'}, unexpected {set(field_names) - expected or '{}'}; name every "
            "field that __init__ takes in field_names, or leave it out with drop_field_names")
    return list(field_names)


# ---- key entries: how a child is reached from its parent (a path of them reaches a leaf)
class _KeyEntry:
    """One step of a key path; equal and hashable by its one field, and printed as torch prints it."""

    __slots__ = ()
    _field = ""

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self._value() == other._value()

    def __hash__(self) -> int:
        return hash((type(self), self._value()))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._field}={self._value()!r})"

    def _value(self) -> Any:
        return getattr(self, self._field)


class SequenceKey(_KeyEntry):
    """The child at position ``idx`` of a list, tuple or deque; prints as ``[idx]``."""

    __slots__ = ("idx",)
    _field = "idx"

    def __init__(self, idx: int) -> None:
        self.idx = idx

    def __str__(self) -> str:
        return f"[{self.idx!r}]"

    def get(self, sequence: Any) -> Any:
        return sequence[self.idx]


class MappingKey(_KeyEntry):
    """The value under ``key`` of a dict; prints as ``['key']``."""

    __slots__ = ("key",)
    _field = "key"

    def __init__(self, key: Any) -> None:
        self.key = key

    def __str__(self) -> str:
        return f"[{self.key!r}]"

    def get(self, mapping: Any) -> Any:
        return mapping[self.key]


class GetAttrKey(_KeyEntry):
    """The attribute ``name`` (a named tuple's field, a dataclass's); prints as ``.name``."""

    __slots__ = ("name",)
    _field = "name"

    def __init__(self, name: str) -> None:
        self.name = name

    def __str__(self) -> str:
        return f".{self.name}"

    def get(self, obj: Any) -> Any:
        return getattr(obj, self.name)


KeyEntry = SequenceKey | MappingKey | GetAttrKey
KeyPath = tuple


# ---- the built-in node types
def _sequence_flatten(sequence) -> tuple[list, None]:
    return list(sequence), None


def _dict_flatten(mapping: dict) -> tuple[list, list]:
    return list(mapping.values()), list(mapping)


def _namedtuple_flatten(value: tuple) -> tuple[list, type]:
    return list(value), type(value)


def _defaultdict_flatten(mapping: defaultdict) -> tuple[list, list]:
    return list(mapping.values()), [mapping.default_factory, list(mapping)]


def _defaultdict_unflatten(values: Iterable, context: list) -> defaultdict:
    default_factory, keys = context
    return defaultdict(default_factory, zip(keys, values))


def _deque_flatten(queue: deque) -> tuple[list, int | None]:
    return list(queue), queue.maxlen


def _sequence_keys(sequence) -> tuple[list, None]:
    return [(SequenceKey(index), value) for index, value in enumerate(sequence)], None


def _deque_keys(queue: deque) -> tuple[list, int | None]:
    return _sequence_keys(queue)[0], queue.maxlen


def _dict_keys(mapping: dict) -> tuple[list, list]:
    return [(MappingKey(key), value) for key, value in mapping.items()], list(mapping)


def _defaultdict_keys(mapping: defaultdict) -> tuple[list, list]:
    return _dict_keys(mapping)[0], [mapping.default_factory, list(mapping)]


def _namedtuple_keys(value: tuple) -> tuple[list, type]:
    return [(GetAttrKey(field), item) for field, item in zip(value._fields, value)], type(value)


def _namedtuple_serialize(cls: type) -> str:
    entry = SUPPORTED_SERIALIZED_TYPES.get(cls)
    if entry is None or entry.serialized_type_name == NO_SERIALIZED_TYPE_NAME_FOUND:
        raise NotImplementedError(f"Can't serialize TreeSpec of namedtuple class {cls} because we didn't register a "
                                  "serializated_type_name. Please register using `_register_namedtuple`.")
    return entry.serialized_type_name


def _namedtuple_deserialize(name: str) -> type:
    if name not in SERIALIZED_TYPE_TO_PYTHON_TYPE:
        raise NotImplementedError(f"Can't deserialize TreeSpec of namedtuple class {name} because we couldn't find "
                                  "a serializated name.")
    return SERIALIZED_TYPE_TO_PYTHON_TYPE[name]


def _defaultdict_serialize(context: list) -> dict:
    default_factory, keys = context
    return {"default_factory_module": default_factory.__module__,
            "default_factory_name": default_factory.__qualname__, "dict_context": keys}


def _defaultdict_deserialize(dumpable: dict) -> list:
    import importlib

    module = importlib.import_module(dumpable["default_factory_module"])
    return [getattr(module, dumpable["default_factory_name"]), dumpable["dict_context"]]


register_pytree_node(tuple, _sequence_flatten, lambda values, _: tuple(values), flatten_with_keys_fn=_sequence_keys,
                     serialized_type_name="builtins.tuple")
register_pytree_node(list, _sequence_flatten, lambda values, _: list(values), flatten_with_keys_fn=_sequence_keys,
                     serialized_type_name="builtins.list")
register_pytree_node(dict, _dict_flatten, lambda values, keys: dict(zip(keys, values)),
                     flatten_with_keys_fn=_dict_keys, serialized_type_name="builtins.dict")
# named tuples are one node type, keyed by ``namedtuple`` itself; the context is the tuple's class
register_pytree_node(namedtuple, _namedtuple_flatten, lambda values, cls: cls(*values),
                     flatten_with_keys_fn=_namedtuple_keys, serialized_type_name="collections.namedtuple",
                     to_dumpable_context=_namedtuple_serialize, from_dumpable_context=_namedtuple_deserialize)
register_pytree_node(OrderedDict, _dict_flatten, lambda values, keys: OrderedDict(zip(keys, values)),
                     flatten_with_keys_fn=_dict_keys, serialized_type_name="collections.OrderedDict")
register_pytree_node(defaultdict, _defaultdict_flatten, _defaultdict_unflatten, flatten_with_keys_fn=_defaultdict_keys,
                     serialized_type_name="collections.defaultdict", to_dumpable_context=_defaultdict_serialize,
                     from_dumpable_context=_defaultdict_deserialize)
register_pytree_node(deque, _deque_flatten, lambda values, maxlen: deque(values, maxlen=maxlen),
                     flatten_with_keys_fn=_deque_keys, serialized_type_name="collections.deque")
# a Size comes back as a plain tuple, as torch's does: its entries may have become anything
register_pytree_node(Size, _sequence_flatten, lambda values, _: tuple(values), flatten_with_keys_fn=_sequence_keys,
                     serialized_type_name="ember.Size")

BUILTIN_TYPES = frozenset({tuple, list, dict, namedtuple, OrderedDict, defaultdict, deque})
STANDARD_DICT_TYPES = frozenset({dict, OrderedDict, defaultdict})


def is_namedtuple_class(cls: type) -> bool:
    """Whether ``cls`` is a class that ``collections.namedtuple`` (or ``typing.NamedTuple``) made; the classes of
    ``ember.return_types`` are built on named tuples but count, as torch's structseqs, as their own kind."""
    return isinstance(cls, type) and issubclass(cls, tuple) and isinstance(getattr(cls, "_fields", None), tuple) \
        and callable(getattr(cls, "_make", None)) and not is_structseq_class(cls)


def is_namedtuple_instance(obj: object) -> bool:
    return is_namedtuple_class(type(obj))


def is_structseq_class(cls: type) -> bool:
    """Whether ``cls`` is a class of ``ember.return_types`` (torch's structseqs: tuples with named fields)."""
    return isinstance(cls, type) and issubclass(cls, tuple) and all(
        isinstance(getattr(cls, name, None), int) for name in ("n_fields", "n_sequence_fields", "n_unnamed_fields"))


def is_structseq_instance(obj: object) -> bool:
    return is_structseq_class(type(obj))


def is_structseq(obj: object) -> bool:
    """Whether ``obj`` is an ``ember.return_types`` result or class."""
    return is_structseq_class(obj if isinstance(obj, type) else type(obj))


def is_namedtuple(obj: object) -> bool:
    """Whether ``obj`` is a named tuple or a named tuple class."""
    return is_namedtuple_class(obj if isinstance(obj, type) else type(obj))


def _node_type(tree: PyTree) -> Any:
    # every named tuple class is the one ``namedtuple`` node type, registered or not, as in torch
    kind = type(tree)
    return namedtuple if is_namedtuple_class(kind) else kind


def tree_is_leaf(tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None) -> bool:
    """Whether ``tree`` is a leaf: not a node type, or one that ``is_leaf`` says to keep whole."""
    if is_leaf is not None and is_leaf(tree):
        return True
    return _node_type(tree) not in SUPPORTED_NODES


# ---- specs
class TreeSpec:
    """The shape of a pytree without its leaves: a node's type, its context (dict keys, a named tuple's
    class ...) and one spec per child. ``unflatten`` puts leaves back into that shape.

    >>> spec = tree_structure((1, [2, 3]))
    >>> spec.num_leaves, spec.num_children, spec.type
    (3, 2, <class 'tuple'>)
    >>> spec == tree_structure(("a", ["b", "c"])), spec == tree_structure([1, [2, 3]])
    (True, False)
    """

    def __init__(self, type: Any, context: Context, children_specs: list[TreeSpec]) -> None:
        self.type, self._context, self._children = type, context, list(children_specs)
        self.num_children = len(self._children)
        self.num_leaves = sum(child.num_leaves for child in self._children)
        self.num_nodes = 1 + sum(child.num_nodes for child in self._children)

    @property
    def context(self) -> Context:
        return self._context

    @property
    def children_specs(self) -> list[TreeSpec]:
        return self._children

    def is_leaf(self) -> bool:
        return self.num_nodes == 1 and self.num_leaves == 1

    def children(self) -> list[TreeSpec]:
        return list(self._children)

    def child(self, index: int) -> TreeSpec:
        return self._children[index]

    def __repr__(self, indent: int = 0) -> str:
        # one child per line, each level two spaces deeper, as torch prints a spec
        inner = indent + 2
        children = (",\n" + " " * inner).join(child.__repr__(inner) for child in self._children)
        name = self.type.__name__
        return f"TreeSpec({name}, {self._context}, [{children}])"

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, TreeSpec) or type(other) is not type(self):
            return NotImplemented
        return (str(self.type) == str(other.type) and self._context == other._context
                and self._children == other._children)

    def __hash__(self) -> int:
        return hash((str(self.type), self.num_nodes, self.num_leaves, tuple(map(hash, self._children))))

    def unflatten(self, leaves: Iterable) -> PyTree:
        """The pytree of this shape holding ``leaves`` in order."""
        leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise ValueError(f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} but the spec refers "
                             f"to a pytree that holds {self.num_leaves} items ({self}).")
        return self._rebuild(iter(leaves))

    def _rebuild(self, leaves) -> PyTree:
        if self.is_leaf():
            return next(leaves)
        children = [child._rebuild(leaves) for child in self._children]
        return SUPPORTED_NODES[self.type].unflatten_fn(children, self._context)

    def flatten_up_to(self, tree: PyTree) -> list[PyTree]:
        """The subtrees of ``tree`` where this spec has its leaves; ``tree`` must have this spec's nodes
        (dict, OrderedDict and defaultdict count as one kind, matched by keys)."""
        subtrees: list = []
        self._collect_up_to(tree, subtrees)
        return subtrees

    def _collect_up_to(self, tree: PyTree, subtrees: list) -> None:
        if self.is_leaf():
            subtrees.append(tree)
            return
        children = self._matching_children(tree)
        for spec, child in zip(self._children, children):
            spec._collect_up_to(child, subtrees)

    def _matching_children(self, tree: PyTree) -> list:
        kind = _node_type(tree)
        both_dicts = self.type in STANDARD_DICT_TYPES and kind in STANDARD_DICT_TYPES
        if not both_dicts and kind != self.type:
            raise ValueError(f"Node type mismatch; expected {self.type!r}, but got {kind!r}.")
        children, context = SUPPORTED_NODES[kind].flatten_fn(tree)
        if len(children) != self.num_children:
            raise ValueError(f"Node arity mismatch; expected {self.num_children}, but got {len(children)}.")
        if both_dicts:
            return _values_by_keys(tree, self._context[1] if self.type is defaultdict else self._context)
        if self.type is not deque and context != self._context:  # a deque's maxlen does not matter
            raise ValueError(f"Node context mismatch for node type {self.type!r}; expected {self._context!r}, "
                             f"but got {context!r}.")
        return children


def _values_by_keys(mapping: dict, keys: list) -> list:
    expected, got = set(keys), set(mapping)
    if expected != got:
        missing = f"; missing key(s): {expected - got}" if expected - got else ""
        extra = f"; extra key(s): {got - expected}" if got - expected else ""
        raise ValueError(f"Node keys mismatch{missing}{extra}.")
    return [mapping[key] for key in keys]


class LeafSpec(TreeSpec):
    """The spec of a leaf; it prints as ``*``."""

    def __init__(self) -> None:
        super().__init__(None, None, [])
        self.num_leaves = 1

    def __repr__(self, indent: int = 0) -> str:
        return "*"


_LEAF_SPEC = LeafSpec()
PyTreeSpec = TreeSpec


def treespec_leaf() -> LeafSpec:
    return _LEAF_SPEC


def treespec_tuple(children: Iterable[TreeSpec] = (), /) -> TreeSpec:
    return TreeSpec(tuple, None, _checked_specs(list(children)))


def treespec_dict(mapping: dict | Iterable = (), /, **named: TreeSpec) -> TreeSpec:
    entries = dict(mapping, **named)
    return TreeSpec(dict, list(entries), _checked_specs(list(entries.values())))


class _Asterisk:
    """A leaf placeholder that prints as ``*``, bare even inside containers."""

    def __repr__(self) -> str:
        return "*"


def treespec_pprint(treespec: TreeSpec) -> str:
    """The tree of ``treespec``'s shape written out with ``*`` for each leaf.

    >>> treespec_pprint(tree_structure({"b": 1, "a": [2, (3,)]}))
    "{'b': *, 'a': [*, (*,)]}"
    """
    return repr(treespec.unflatten([_Asterisk()] * treespec.num_leaves))


def _checked_specs(children: list) -> list:
    if any(not isinstance(child, TreeSpec) for child in children):
        raise ValueError(f"Expected a tuple of TreeSpec values, got: {children!r}.")
    return children


# ---- flattening and mapping
def tree_flatten(tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None) -> tuple[list, TreeSpec]:
    """The leaves of ``tree``, first to last, and the spec that ``tree_unflatten`` rebuilds it from."""
    leaves: list = []
    return leaves, _flatten_into(tree, leaves, is_leaf)


def _flatten_into(tree: PyTree, leaves: list, is_leaf) -> TreeSpec:
    if tree_is_leaf(tree, is_leaf):
        leaves.append(tree)
        return _LEAF_SPEC
    kind = _node_type(tree)
    children, context = SUPPORTED_NODES[kind].flatten_fn(tree)
    return TreeSpec(kind, context, [_flatten_into(child, leaves, is_leaf) for child in children])


def tree_unflatten(leaves: Iterable, treespec: TreeSpec) -> PyTree:
    """The pytree of ``treespec``'s shape holding ``leaves`` (the inverse of ``tree_flatten``)."""
    if not isinstance(treespec, TreeSpec):
        raise TypeError(f"Expected `treespec` to be an instance of PyTreeSpec but got item of type "
                        f"{type(treespec)}.")
    return treespec.unflatten(leaves)


def tree_iter(tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None) -> Iterable:
    """The leaves of ``tree`` one at a time."""
    if tree_is_leaf(tree, is_leaf):
        yield tree
        return
    for child in SUPPORTED_NODES[_node_type(tree)].flatten_fn(tree)[0]:
        yield from tree_iter(child, is_leaf)


def tree_leaves(tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None) -> list:
    return list(tree_iter(tree, is_leaf))


def tree_structure(tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None) -> TreeSpec:
    return tree_flatten(tree, is_leaf)[1]


def tree_map(func: Callable[..., Any], tree: PyTree, *rests: PyTree,
             is_leaf: Callable[[PyTree], bool] | None = None) -> PyTree:
    """``tree`` with each leaf ``x`` replaced by ``func(x, *the leaves at the same place in rests)``; each of
    ``rests`` must have ``tree``'s nodes (where ``tree`` has a leaf it may have a whole subtree).

    >>> tree_map(lambda a, b: a + b, {"x": 1, "y": [2]}, {"y": [20], "x": 10})
    {'x': 11, 'y': [22]}
    """
    leaves, spec = tree_flatten(tree, is_leaf)
    others = [spec.flatten_up_to(rest) for rest in rests]
    return spec.unflatten(map(func, leaves, *others))


def tree_map_(func: Callable[..., Any], tree: PyTree, *rests: PyTree,
              is_leaf: Callable[[PyTree], bool] | None = None) -> PyTree:
    """Call ``func`` on each leaf (for its side effects, e.g. an in-place op) and return ``tree`` itself."""
    leaves, spec = tree_flatten(tree, is_leaf)
    others = [spec.flatten_up_to(rest) for rest in rests]
    for arguments in zip(leaves, *others):
        func(*arguments)
    return tree


TypeOrTypes = type | tuple[type, ...] | types.UnionType


def _type_test(type_or_types_or_pred: TypeOrTypes | Callable[[Any], bool]) -> Callable[[Any], bool]:
    if isinstance(type_or_types_or_pred, (type, tuple, types.UnionType)):
        return lambda value: isinstance(value, type_or_types_or_pred)
    if callable(type_or_types_or_pred):
        return type_or_types_or_pred
    raise TypeError(f"Argument must be a type, a tuple of types, or a callable, but got "
                    f"{type(type_or_types_or_pred).__name__}")


def map_only(type_or_types_or_pred: TypeOrTypes | Callable[[Any], bool], /) -> Callable:
    """A decorator: the function applies to the values that are of these types (or pass this test) and
    returns the others unchanged."""
    selected = _type_test(type_or_types_or_pred)

    def wrap(func: Callable[[Any], Any]) -> Callable[[Any], Any]:
        def func_only(value: Any) -> Any:
            return func(value) if selected(value) else value
        return func_only
    return wrap


def tree_map_only(type_or_types_or_pred: TypeOrTypes | Callable[[Any], bool], /, func: Callable[[Any], Any],
                  tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None) -> PyTree:
    """``tree_map`` on the leaves of the given types (or that pass the test); other leaves stay.

    >>> tree_map_only(int, lambda x: x * 10, [1, "a", 2.0])
    [10, 'a', 2.0]
    """
    return tree_map(map_only(type_or_types_or_pred)(func), tree, is_leaf=is_leaf)


def tree_map_only_(type_or_types_or_pred: TypeOrTypes | Callable[[Any], bool], /, func: Callable[[Any], Any],
                   tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None) -> PyTree:
    return tree_map_(map_only(type_or_types_or_pred)(func), tree, is_leaf=is_leaf)


def tree_all(pred: Callable[[Any], bool], tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None) -> bool:
    return all(map(pred, tree_iter(tree, is_leaf)))


def tree_any(pred: Callable[[Any], bool], tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None) -> bool:
    return any(map(pred, tree_iter(tree, is_leaf)))


def tree_all_only(type_or_types: TypeOrTypes, /, pred: Callable[[Any], bool], tree: PyTree,
                  is_leaf: Callable[[PyTree], bool] | None = None) -> bool:
    """Whether ``pred`` holds for every leaf of the given types (leaves of other types are not asked)."""
    return all(pred(leaf) for leaf in tree_iter(tree, is_leaf) if isinstance(leaf, type_or_types))


def tree_any_only(type_or_types: TypeOrTypes, /, pred: Callable[[Any], bool], tree: PyTree,
                  is_leaf: Callable[[PyTree], bool] | None = None) -> bool:
    """Whether ``pred`` holds for some leaf of the given types."""
    return any(pred(leaf) for leaf in tree_iter(tree, is_leaf) if isinstance(leaf, type_or_types))


def arg_tree_leaves(*args: PyTree, **kwargs: PyTree) -> list:
    """The leaves of a call's positional and keyword arguments, in that order."""
    return tree_leaves(args) + tree_leaves(kwargs)


# ---- key paths
def tree_flatten_with_path(tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None
                           ) -> tuple[list[tuple[KeyPath, Any]], TreeSpec]:
    """Each leaf with the key path that reaches it, and ``tree``'s spec.

    >>> pairs, _ = tree_flatten_with_path({"a": [1, (2,)]})
    >>> [(keystr(path), leaf) for path, leaf in pairs]
    [("['a'][0]", 1), ("['a'][1][0]", 2)]
    """
    return list(_keyed_leaves((), tree, is_leaf)), tree_structure(tree, is_leaf)


def _keyed_leaves(path: KeyPath, tree: PyTree, is_leaf):
    if tree_is_leaf(tree, is_leaf):
        yield path, tree
        return
    kind = _node_type(tree)
    flatten_with_keys = SUPPORTED_NODES[kind].flatten_with_keys_fn
    if flatten_with_keys is None:
        raise ValueError(f"Did not find a flatten_with_keys_fn for type: {kind}. Please pass a "
                         "flatten_with_keys_fn argument to register_pytree_node.")
    for key, child in flatten_with_keys(tree)[0]:
        yield from _keyed_leaves(path + (key,), child, is_leaf)


def tree_leaves_with_path(tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None
                          ) -> list[tuple[KeyPath, Any]]:
    return list(_keyed_leaves((), tree, is_leaf))


def tree_map_with_path(func: Callable[..., Any], tree: PyTree, *rests: PyTree,
                       is_leaf: Callable[[PyTree], bool] | None = None) -> PyTree:
    """``tree_map`` whose ``func`` also gets each leaf's key path first: ``func(path, leaf, *others)``."""
    pairs, spec = tree_flatten_with_path(tree, is_leaf)
    others = [spec.flatten_up_to(rest) for rest in rests]
    return spec.unflatten(func(path, leaf, *other) for (path, leaf), *other in zip(pairs, *others))


def keystr(kp: KeyPath) -> str:
    """A key path as the indexing that follows it: ``['a'][0].x``."""
    return "".join(str(key) for key in kp)


def key_get(obj: Any, kp: KeyPath) -> Any:
    """The value at the end of key path ``kp`` in ``obj``."""
    for key in kp:
        obj = key.get(obj)
    return obj


# ---- specs as JSON
DEFAULT_TREESPEC_SERIALIZATION_PROTOCOL = 1
_PROTOCOLS = (1,)


def treespec_dumps(treespec: TreeSpec, protocol: int | None = None) -> str:
    """``treespec`` as a JSON string that ``treespec_loads`` reads back, in torch's format (protocol 1): every
    node type in it needs a ``serialized_type_name`` (named tuples: ``_register_namedtuple``).

    >>> text = treespec_dumps(tree_structure({"a": [1, 2]}))
    >>> treespec_loads(text) == tree_structure({"a": [3, 4]})
    True
    """
    import json

    protocol = DEFAULT_TREESPEC_SERIALIZATION_PROTOCOL if protocol is None else protocol
    _check_protocol(protocol)
    return json.dumps([protocol, _spec_to_json(treespec)])


def _check_protocol(protocol: int) -> None:
    if protocol not in _PROTOCOLS:
        raise ValueError(f"Unknown protocol {protocol}. Available protocols: {list(_PROTOCOLS)}")


def _spec_to_json(treespec: TreeSpec) -> dict:
    import json

    if treespec.is_leaf():
        return {"type": None, "context": None, "children_spec": []}
    if treespec.type not in SUPPORTED_SERIALIZED_TYPES:
        raise NotImplementedError(f"Serializing {treespec.type} in pytree is not registered.")
    serialization = SUPPORTED_SERIALIZED_TYPES[treespec.type]
    if serialization.serialized_type_name == NO_SERIALIZED_TYPE_NAME_FOUND:
        raise NotImplementedError(f"No registered serialization name for {treespec.type} found. Please update your "
                                  "register_pytree_node call with a `serialized_type_name` kwarg.")
    if serialization.to_dumpable_context is not None:
        context = serialization.to_dumpable_context(treespec.context)
    else:
        try:
            context = json.dumps(treespec.context)
        except TypeError as error:
            raise TypeError("Unable to serialize context. Please make the context json dump-able, or register a "
                            "custom serializer with register_pytree_node's to_dumpable_context.") from error
    return {"type": serialization.serialized_type_name, "context": context,
            "children_spec": [_spec_to_json(child) for child in treespec.children_specs]}


def treespec_loads(serialized: str) -> TreeSpec:
    """The spec that ``treespec_dumps`` wrote as ``serialized``."""
    import json

    protocol, schema = json.loads(serialized)
    _check_protocol(protocol)
    return _json_to_spec(schema)


def _json_to_spec(schema: dict) -> TreeSpec:
    import json

    if schema["type"] is None and schema["context"] is None and not schema["children_spec"]:
        return _LEAF_SPEC
    if schema["type"] not in SERIALIZED_TYPE_TO_PYTHON_TYPE:
        raise NotImplementedError(f"Deserializing {schema['type']} in pytree is not registered.")
    kind = SERIALIZED_TYPE_TO_PYTHON_TYPE[schema["type"]]
    serialization = SUPPORTED_SERIALIZED_TYPES[kind]
    if serialization.from_dumpable_context is not None:
        context = serialization.from_dumpable_context(schema["context"])
    else:
        context = json.loads(schema["context"])
    return TreeSpec(kind, context, [_json_to_spec(child) for child in schema["children_spec"]])
