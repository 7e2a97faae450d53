"""Sequential, ModuleList and ModuleDict operations against torch: arithmetic, pop, insert, update, errors."""
from collections import OrderedDict

import pytest

from twins import both, both_raise


def layers(lib):
    return [lib.nn.Linear(1, 1), lib.nn.ReLU(), lib.nn.Linear(2, 2), lib.nn.Tanh()]


def described(lib, value):
    """A container as its class, children's names and kinds, and which children are the same objects."""
    if not isinstance(value, lib.nn.Module):
        return repr(value)
    children = list(value._modules.items())
    first_seen = {}
    return (type(value).__name__, [name for name, _ in children], [type(m).__name__ for _, m in children],
            [first_seen.setdefault(id(m), i) for i, (_, m) in enumerate(children)])


SEQUENTIAL_OPS = {
    "add": lambda lib, s: s + lib.nn.Sequential(lib.nn.Sigmoid()),
    "add-self": lambda lib, s: s + s,
    "add-named": lambda lib, s: s + lib.nn.Sequential(OrderedDict(a=lib.nn.Sigmoid())),
    "mul": lambda lib, s: s * 2,
    "rmul": lambda lib, s: 3 * s,
    "mul-1": lambda lib, s: s * 1,
    "iadd": lambda lib, s: s.__iadd__(lib.nn.Sequential(lib.nn.Sigmoid())),
    "imul": lambda lib, s: s.__imul__(2),
    "pop": lambda lib, s: s.pop(1),
    "pop-negative": lambda lib, s: s.pop(-1),
    "pop-slice": lambda lib, s: s.pop(slice(1, 3)),
    "insert": lambda lib, s: s.insert(1, lib.nn.Sigmoid()),
    "insert-negative": lambda lib, s: s.insert(-1, lib.nn.Sigmoid()),
    "insert-at-end": lambda lib, s: s.insert(4, lib.nn.Sigmoid()),
    "insert-at-start": lambda lib, s: s.insert(-4, lib.nn.Sigmoid()),
}


@pytest.mark.parametrize("op", SEQUENTIAL_OPS.values(), ids=SEQUENTIAL_OPS.keys())
def test_sequential_operations_match_torch(op):
    def program(lib):
        s = lib.nn.Sequential(*layers(lib))
        result = op(lib, s)
        return described(lib, result), result is s, described(lib, s)

    both(program)


@pytest.mark.parametrize("op, error, message", [
    (lambda lib, s: s * 0, ValueError, r"Non-positive multiplication factor 0 for <class '\w+.nn.modules.container.Sequential'>"),
    (lambda lib, s: s.__imul__(-1), ValueError, "Non-positive multiplication factor -1"),
    (lambda lib, s: s * 1.5, TypeError, r"unsupported operand type\(s\) for \*: .*Sequential'> and <class 'float'>"),
    (lambda lib, s: s + [lib.nn.ReLU()], ValueError,
     r"add operator supports only objects of Sequential class, but <class 'list'> is given"),
    (lambda lib, s: s + lib.nn.ModuleList(), ValueError, "add operator supports only objects of Sequential class"),
    (lambda lib, s: s.__iadd__([lib.nn.ReLU()]), ValueError, "add operator supports only objects of Sequential class"),
    (lambda lib, s: s.pop(4), IndexError, "index 4 is out of range"),
    (lambda lib, s: s.insert(5, lib.nn.ReLU()), IndexError, "Index out of range: 5"),
    (lambda lib, s: s.insert(-5, lib.nn.ReLU()), IndexError, "Index out of range: -5"),
])
def test_sequential_operation_errors_match_torch(op, error, message):
    both_raise(lambda lib: op(lib, lib.nn.Sequential(*layers(lib))), error, message)


MODULELIST_OPS = {
    "pop": lambda lib, m: m.pop(1),
    "pop-negative": lambda lib, m: m.pop(-1),
    "pop-slice": lambda lib, m: m.pop(slice(0, 2)),
    "extend-tuple": lambda lib, m: m.extend((lib.nn.Sigmoid(),)),
    "iadd": lambda lib, m: m.__iadd__([lib.nn.Sigmoid()]),
}


@pytest.mark.parametrize("op", MODULELIST_OPS.values(), ids=MODULELIST_OPS.keys())
def test_modulelist_operations_match_torch(op):
    def program(lib):
        m = lib.nn.ModuleList(layers(lib))
        result = op(lib, m)
        return described(lib, result), result is m, described(lib, m)

    both(program)


@pytest.mark.parametrize("op, message", [
    (lambda lib, m: m.extend(3), "ModuleList.extend should be called with an iterable, but got int"),
    (lambda lib, m: m.extend(lib.nn.ReLU()), "ModuleList.extend should be called with an iterable, but got ReLU"),
    (lambda lib, m: m.__iadd__(3), "ModuleList.extend should be called with an iterable, but got int"),
    (lambda lib, m: lib.nn.ModuleList(3), "ModuleList.extend should be called with an iterable, but got int"),
])
def test_modulelist_extend_errors_match_torch(op, message):
    both_raise(lambda lib: op(lib, lib.nn.ModuleList(layers(lib))), TypeError, message)


@pytest.mark.parametrize("source", [
    lambda lib: lib.nn.ModuleDict({"c": lib.nn.Tanh(), "a": lib.nn.Sigmoid()}),
    lambda lib: OrderedDict(c=lib.nn.Tanh()),
    lambda lib: [("c", lib.nn.Tanh()), ["d", lib.nn.ReLU()]],
], ids=["moduledict", "ordereddict", "pairs"])
def test_moduledict_update_accepts_what_torch_accepts(source):
    def program(lib):
        d = lib.nn.ModuleDict({"a": lib.nn.Linear(1, 1), "b": lib.nn.ReLU()})
        d.update(source(lib))
        return [(key, type(module).__name__) for key, module in d.items()]

    both(program)


@pytest.mark.parametrize("value, error, message", [
    (3, TypeError, "ModuleDict.update should be called with an iterable of key/value pairs, but got int"),
    ([3], TypeError, r"ModuleDict update sequence element #0 should be Iterable; is ?int"),
    ([("a", "b", "c")], ValueError, "ModuleDict update sequence element #0 has length 3; 2 is required"),
])
def test_moduledict_update_errors_match_torch(value, error, message):
    both_raise(lambda lib: lib.nn.ModuleDict().update(value), error, message)
