"""ember.utils._pytree against torch.utils._pytree: leaves, specs (repr, equality, counts), rebuilding, mapping,
the *_only forms, registration of a user's class, and the errors of mismatched trees."""
from collections import OrderedDict, defaultdict, deque, namedtuple

import pytest
import torch
import torch.utils._pytree as theirs

import ember
import ember.utils._pytree as ours

Point = namedtuple("Point", "x y")

TREES = [
    1, None, "leaf", [], (), {}, (1,), [1, [2, [3]]],
    {"b": 1, "a": [2, (3, None)], "c": Point(4, 5)},
    OrderedDict(z=6, y=[7, 8]), defaultdict(list, {"k": 8, "j": (9,)}), deque([1, 2], maxlen=3),
    [Point(1, (2, 3)), {"x": {}, "y": [None]}],
]


@pytest.mark.parametrize("tree", TREES, ids=repr)
def test_flatten_gives_torchs_leaves_and_spec(tree):
    leaves, spec = ours.tree_flatten(tree)
    expected_leaves, expected_spec = theirs.tree_flatten(tree)
    assert leaves == expected_leaves
    assert repr(spec) == repr(expected_spec)
    assert (spec.num_leaves, spec.num_nodes, spec.num_children) == (
        expected_spec.num_leaves, expected_spec.num_nodes, expected_spec.num_children)
    assert spec.is_leaf() == expected_spec.is_leaf()


@pytest.mark.parametrize("tree", TREES, ids=repr)
def test_unflatten_rebuilds_the_same_types(tree):
    leaves, spec = ours.tree_flatten(tree)
    rebuilt = ours.tree_unflatten(leaves, spec)
    assert rebuilt == tree and type(rebuilt) is type(tree)
    expected = theirs.tree_unflatten(*theirs.tree_flatten(tree))
    assert repr(rebuilt) == repr(expected)


def test_size_is_a_node_as_torch_size():
    leaves, spec = ours.tree_flatten(ember.Size([2, 3]))
    expected_leaves, expected_spec = theirs.tree_flatten(torch.Size([2, 3]))
    assert leaves == expected_leaves and repr(spec) == repr(expected_spec)
    # rebuilt as a plain tuple, as torch rebuilds a Size
    rebuilt, expected = ours.tree_unflatten([4, 5], spec), theirs.tree_unflatten([4, 5], expected_spec)
    assert rebuilt == expected and type(rebuilt) is type(expected)


def test_tensors_are_leaves():
    x = ember.ones(2)
    leaves = ours.tree_leaves({"x": x, "n": [x, 1]})
    assert leaves[0] is x and leaves[1] is x and leaves[2] == 1


def test_spec_equality_as_torch():
    pairs = [([1, 2], [3, 4]), ([1, 2], (3, 4)), ({"a": 1, "b": 2}, {"b": 1, "a": 2}), ([1, [2]], [1, 2]),
             (Point(1, 2), (1, 2)), (1, "x"), (OrderedDict(a=1), {"a": 1})]
    for first, second in pairs:
        mine = ours.tree_structure(first) == ours.tree_structure(second)
        assert mine == (theirs.tree_structure(first) == theirs.tree_structure(second)), (first, second)
    assert (ours.tree_structure([1]) == [1]) == (theirs.tree_structure([1]) == [1])
    assert hash(ours.tree_structure({"a": [1]})) == hash(ours.tree_structure({"a": [2]}))


def test_leaf_spec_as_torch():
    assert repr(ours.LeafSpec()) == repr(theirs.LeafSpec()) == "*"
    assert isinstance(ours.tree_structure(1), ours.LeafSpec)
    assert ours.tree_structure(1).num_leaves == ours.LeafSpec().num_leaves == 1
    assert ours.LeafSpec() == ours.tree_structure(3.0)
    assert ours.treespec_leaf() == ours.LeafSpec()


def test_spec_children_as_torch():
    spec, expected = ours.tree_structure([1, [2]]), theirs.tree_structure([1, [2]])
    assert repr(spec.children()) == repr(expected.children())
    assert repr(spec.child(1)) == repr(expected.child(1))
    assert spec.context == expected.context and spec.type is expected.type
    assert repr(ours.treespec_tuple([ours.LeafSpec()])) == repr(theirs.treespec_tuple([theirs.LeafSpec()]))


def test_map_and_leaves_as_torch():
    tree = {"b": [1, 2.0], "a": ("s", None, 3)}
    for name in ("tree_leaves", "tree_structure"):
        assert repr(getattr(ours, name)(tree)) == repr(getattr(theirs, name)(tree))
    double = lambda v: v * 2 if isinstance(v, (int, float)) else v  # noqa: E731
    assert ours.tree_map(double, tree) == theirs.tree_map(double, tree)
    assert ours.tree_map(lambda a, b: (a, b), [1, {"k": 2}], [[9], {"k": 8}]) == theirs.tree_map(
        lambda a, b: (a, b), [1, {"k": 2}], [[9], {"k": 8}])
    # dicts of the same keys in another order, and OrderedDict against dict, map by key
    assert ours.tree_map(lambda a, b: (a, b), OrderedDict(a=1, b=2), {"b": 1, "a": 2}) == theirs.tree_map(
        lambda a, b: (a, b), OrderedDict(a=1, b=2), {"b": 1, "a": 2})


def test_is_leaf_keeps_subtrees_whole():
    pairs = lambda v: isinstance(v, tuple) and len(v) == 2  # noqa: E731
    tree = [(1, 2), [(3, 4), 5]]
    assert ours.tree_leaves(tree, is_leaf=pairs) == theirs.tree_leaves(tree, is_leaf=pairs)
    assert repr(ours.tree_structure(tree, is_leaf=pairs)) == repr(theirs.tree_structure(tree, is_leaf=pairs))
    size = lambda v: len(v) if pairs(v) else v  # noqa: E731
    assert ours.tree_map(size, tree, is_leaf=pairs) == theirs.tree_map(size, tree, is_leaf=pairs) == [2, [2, 5]]


@pytest.mark.parametrize("selector", [int, (int, float), int | str, lambda v: v == 1],
                         ids=["type", "tuple of types", "union", "predicate"])  # (a lambda's repr has its address)
def test_map_only_as_torch(selector):
    tree = [1, "a", 2.0, {"k": (3, True)}]
    times_ten = lambda v: v * 10  # noqa: E731
    assert ours.tree_map_only(selector, times_ten, tree) == theirs.tree_map_only(selector, times_ten, tree)


def test_all_and_any_as_torch():
    tree = [1, "a", (2.5, -3)]
    positive = lambda v: v > 0  # noqa: E731
    for types in (int, float, (int, float)):
        assert ours.tree_all_only(types, positive, tree) == theirs.tree_all_only(types, positive, tree)
        assert ours.tree_any_only(types, positive, tree) == theirs.tree_any_only(types, positive, tree)
    for tree in ([1, [2]], [1, [-2]], [], [-1, (-2,)]):
        assert ours.tree_all(positive, tree) == theirs.tree_all(positive, tree)
        assert ours.tree_any(positive, tree) == theirs.tree_any(positive, tree)


def test_map_in_place_returns_the_tree():
    x, y = ember.zeros(2), ember.zeros(1)
    tree = {"x": x, "y": [y]}
    assert ours.tree_map_(lambda t: t.add_(1), tree) is tree
    assert x.tolist() == [1.0, 1.0] and y.tolist() == [1.0]


class _Pair:
    def __init__(self, first, second):
        self.first, self.second = first, second


def _register(module):
    module.register_pytree_node(_Pair, lambda p: ([p.first, p.second], "ctx"), lambda v, c: _Pair(*v),
                                serialized_type_name=f"{__name__}._Pair")


def test_registered_class_flattens_as_in_torch():
    for module in (ours, theirs):
        if _Pair not in module.SUPPORTED_NODES:
            _register(module)
    tree = [_Pair(1, [2, 3]), 4]
    leaves, spec = ours.tree_flatten(tree)
    expected_leaves, expected_spec = theirs.tree_flatten(tree)
    assert leaves == expected_leaves and repr(spec) == repr(expected_spec)
    rebuilt = ours.tree_unflatten([10, 20, 30, 40], spec)
    assert isinstance(rebuilt[0], _Pair) and rebuilt[0].second == [20, 30] and rebuilt[1] == 40
    assert ours.SUPPORTED_NODES[_Pair].type is _Pair
    with pytest.raises(ValueError, match="already registered as pytree node"):
        _register(ours)


def test_supported_nodes_has_torchs_builtin_types():
    builtin = [tuple, list, dict, namedtuple, OrderedDict, defaultdict, deque]
    assert all(kind in theirs.SUPPORTED_NODES and kind in ours.SUPPORTED_NODES for kind in builtin)
    assert ember.Size in ours.SUPPORTED_NODES and torch.Size in theirs.SUPPORTED_NODES


def _same_error(call):
    with pytest.raises(Exception) as expected:
        call(theirs)
    with pytest.raises(type(expected.value)) as got:
        call(ours)
    assert str(got.value).replace("ember", "torch") == str(expected.value)


@pytest.mark.parametrize("call", [
    lambda m: m.tree_unflatten([1], m.tree_structure([1, 2])),
    lambda m: m.tree_unflatten([1, 2, 3], m.tree_structure({"a": 1, "b": (2,)})),
    lambda m: m.tree_unflatten([1], [1]),
    lambda m: m.tree_map(lambda a, b: a, [1, 2], [1]),
    lambda m: m.tree_map(lambda a, b: a, [1, 2], (1, 2)),
    lambda m: m.tree_map(lambda a, b: a, {"a": 1, "b": 2}, {"a": 1, "c": 2}),
    lambda m: m.tree_map(lambda a, b: a, Point(1, 2), namedtuple("Other", "x y")(1, 2)),
    lambda m: m.tree_map(lambda a, b: a, [1], 5),
    lambda m: m.register_pytree_node(list, lambda v: (v, None), lambda v, c: v),
], ids=range(9))
def test_errors_as_torch(call):
    _same_error(call)


def test_reachable_from_ember_utils():
    assert ember.utils._pytree is ours


PATH_TREES = [[1, [2]], {"b": 1, "a": [2, (3, None)], "c": Point(4, 5)}, OrderedDict(z=6), deque([9]),
              defaultdict(list, {"k": 8}), 7, []]


@pytest.mark.parametrize("tree", PATH_TREES, ids=repr)
def test_key_paths_as_torch(tree):
    pairs, spec = ours.tree_flatten_with_path(tree)
    expected_pairs, expected_spec = theirs.tree_flatten_with_path(tree)
    assert repr(pairs) == repr(expected_pairs) and repr(spec) == repr(expected_spec)
    assert [ours.keystr(path) for path, _ in pairs] == [theirs.keystr(path) for path, _ in expected_pairs]
    assert all(ours.key_get(tree, path) is leaf for path, leaf in pairs)
    assert repr(ours.tree_leaves_with_path(tree)) == repr(theirs.tree_leaves_with_path(tree))
    described = lambda path, leaf: (len(path), leaf)  # noqa: E731
    assert ours.tree_map_with_path(described, tree) == theirs.tree_map_with_path(described, tree)


def test_key_entries_print_and_compare_as_torch():
    for name, value in (("SequenceKey", 1), ("MappingKey", "a"), ("GetAttrKey", "x")):
        mine, reference = getattr(ours, name)(value), getattr(theirs, name)(value)
        assert (repr(mine), str(mine)) == (repr(reference), str(reference))
        assert mine == getattr(ours, name)(value) and hash(mine) == hash(getattr(ours, name)(value))
    assert ours.SequenceKey(0) != ours.MappingKey(0)


def test_path_of_a_node_without_key_function_fails_as_torch():
    class NoKeys:
        def __init__(self, value):
            self.value = value

    for module in (ours, theirs):
        module.register_pytree_node(NoKeys, lambda n: ([n.value], None), lambda v, c: NoKeys(*v))
    _same_error(lambda m: m.tree_flatten_with_path([NoKeys(1)]))


def test_return_types_are_nodes_as_torchs_structseqs():
    mine, reference = ember.max(ember.ones(2, 2), 0), torch.max(torch.ones(2, 2), 0)
    assert repr(ours.tree_structure(mine)) == repr(theirs.tree_structure(reference))
    assert ours.is_structseq(mine) and theirs.is_structseq(reference)
    assert ours.is_namedtuple(mine) == theirs.is_namedtuple(reference) == False  # noqa: E712
    assert ours.is_namedtuple(Point(1, 2)) and not ours.is_structseq(Point(1, 2))
    doubled = ours.tree_map(lambda t: t * 2, mine)
    assert type(doubled) is type(mine) and doubled.values.tolist() == [2.0, 2.0]
    assert repr(ours.tree_flatten_with_path(mine)[0][1][0]) == repr(theirs.tree_flatten_with_path(reference)[0][1][0])


def test_register_dataclass_as_torch():
    import dataclasses

    def make():
        @dataclasses.dataclass
        class Batch:
            inputs: list
            mask: object = None
            note: str = dataclasses.field(default="", init=False)
        return Batch

    mine, reference = make(), make()
    ours.register_dataclass(mine)
    theirs.register_dataclass(reference)
    for args in (([1, 2],), ([1], 5)):
        leaves, spec = ours.tree_flatten(mine(*args))
        expected_leaves, expected_spec = theirs.tree_flatten(reference(*args))
        assert leaves == expected_leaves
        assert repr(spec).replace("make.<locals>.", "") == repr(expected_spec).replace("make.<locals>.", "")
        assert ours.tree_unflatten(leaves, spec) == mine(*args)
        assert repr(ours.tree_flatten_with_path(mine(*args))[0]) == repr(
            theirs.tree_flatten_with_path(reference(*args))[0])


def test_register_dataclass_errors_as_torch():
    import dataclasses

    @dataclasses.dataclass
    class Pair:
        a: int
        b: int

    class Plain:
        pass

    for module in (ours, theirs):
        with pytest.raises(ValueError, match="field_names does not include all dataclass fields"):
            module.register_dataclass(Pair, field_names=["a"])
        with pytest.raises(ValueError, match="field_names must be specified"):
            module.register_dataclass(Plain)
    ours.register_dataclass(Pair, field_names=["a"], drop_field_names=["b"])
    assert ours.tree_leaves(Pair(1, 2)) == [1]


def test_the_older_register_name_warns_and_replaces_as_torch():
    class Old:
        def __init__(self, *values):
            self.values = values

    for module in (ours, theirs):
        with pytest.warns(FutureWarning, match="_register_pytree_node` is deprecated"):
            module._register_pytree_node(Old, lambda o: (list(o.values), None), lambda v, c: Old(*v))
        with pytest.warns(UserWarning, match="already registered as pytree node. Overwriting"):
            module._register_pytree_node(Old, lambda o: (list(o.values)[:1], None), lambda v, c: Old(*v))
    assert ours.tree_leaves(Old(1, 2)) == theirs.tree_leaves(Old(1, 2)) == [1]


def test_arg_tree_leaves_as_torch():
    assert ours.arg_tree_leaves(1, (2, {"a": 3}), k=[4]) == theirs.arg_tree_leaves(1, (2, {"a": 3}), k=[4])


def test_public_names_are_torchs():
    missing = set(theirs.__all__) - set(ours.__all__)
    assert not missing


@pytest.mark.parametrize("make", [
    lambda lib: lib.Size([2, 3]), lambda lib: lib.max(lib.ones(2, 2), 0), lambda lib: Point(1, 2),
    lambda lib: deque([1], maxlen=2), lambda lib: defaultdict(list, {"a": 1}), lambda lib: 5, lambda lib: [],
    lambda lib: ((1,),), lambda lib: {"b": 1, "a": [2, (3, None)]},
], ids=range(9))
def test_treespec_pprint_as_torch(make):
    mine = ours.treespec_pprint(ours.tree_structure(make(ember)))
    assert mine.replace("ember", "torch") == theirs.treespec_pprint(theirs.tree_structure(make(torch)))


SERIALIZABLE = [[1, (2, None)], {"b": 1, "a": [2]}, OrderedDict(z=6), defaultdict(list, {"k": 8}),
                deque([1], maxlen=3), 5, [], {}]


@pytest.mark.parametrize("tree", SERIALIZABLE, ids=repr)
def test_treespec_dumps_writes_torchs_json_and_reads_torchs(tree):
    text = ours.treespec_dumps(ours.tree_structure(tree))
    assert text == theirs.treespec_dumps(theirs.tree_structure(tree))
    assert ours.treespec_loads(text) == ours.tree_structure(tree)
    assert ours.treespec_loads(theirs.treespec_dumps(theirs.tree_structure(tree))) == ours.tree_structure(tree)


def test_treespec_dumps_of_named_tuples_and_registered_classes_as_torch():
    Named = namedtuple("Named", "a b")
    _same_error(lambda m: m.treespec_dumps(m.tree_structure([Named(1, 2)])))
    for module in (ours, theirs):
        module._register_namedtuple(Named, serialized_type_name="tests.Named")
    text = ours.treespec_dumps(ours.tree_structure([Named(1, 2)]))
    assert text == theirs.treespec_dumps(theirs.tree_structure([Named(1, 2)]))
    assert ours.treespec_loads(text) == ours.tree_structure([Named(3, 4)])

    class Unnamed:
        pass

    for module in (ours, theirs):
        module.register_pytree_node(Unnamed, lambda u: ([], None), lambda v, c: Unnamed())
        # (torch's message names its deprecated _register_pytree_node; ember's the current one)
        with pytest.raises(NotImplementedError, match="No registered serialization name for .*serialized_type_name"):
            module.treespec_dumps(module.tree_structure(Unnamed()))


@pytest.mark.parametrize("call", [
    lambda m: m.treespec_dumps(m.tree_structure([1]), protocol=7),
    lambda m: m.treespec_loads('[1, {"type": "nope", "context": null, "children_spec": []}]'),
    lambda m: m.treespec_loads('[1, {"type": "collections.namedtuple", "context": "nope.X", "children_spec": []}]'),
], ids=range(3))
def test_treespec_serialization_errors_as_torch(call):
    _same_error(call)
