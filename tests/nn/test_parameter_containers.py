"""nn.ParameterList and nn.ParameterDict against torch's."""
import numpy as np
import pytest
import torch

import ember
from ember import nn


def lists():
    values = [np.zeros((2, 3), np.float32), np.ones(3)]
    return (nn.ParameterList([ember.tensor(v) for v in values]),
            torch.nn.ParameterList([torch.tensor(v) for v in values]))


def test_parameter_list_wraps_tensors_and_registers_them():
    e, t = lists()
    assert all(isinstance(p, nn.Parameter) for p in e)
    assert list(e.state_dict()) == list(t.state_dict()) == ["0", "1"]
    assert [n for n, _ in e.named_parameters()] == [n for n, _ in t.named_parameters()]
    assert repr(e) == repr(t).replace("torch", "ember")


def test_parameter_list_append_extend_index_slice_and_setitem():
    e, t = lists()
    for lib, params in ((ember, e), (torch, t)):
        params.append(lib.zeros(1)).extend([lib.zeros(4), lib.zeros(5)])
        params += [lib.zeros(6)]
        params[0] = lib.ones(7)
    assert len(e) == len(t) == 6
    assert [tuple(p.shape) for p in e] == [tuple(p.shape) for p in t]
    assert [tuple(p.shape) for p in e[1:4]] == [tuple(p.shape) for p in t[1:4]]
    assert e[-1].shape == (6,) and isinstance(e[1:3], nn.ParameterList)
    assert list(e.state_dict()) == list(t.state_dict())


def test_parameter_list_holds_other_objects_and_modules_like_torch():
    e = nn.ParameterList([ember.zeros(1), 5, nn.Linear(1, 1)])
    t = torch.nn.ParameterList([torch.zeros(1), 5, torch.nn.Linear(1, 1)])
    assert e[1] == 5 and isinstance(e[2], nn.Linear)
    assert list(e.state_dict()) == list(t.state_dict())
    assert repr(e) == repr(t).replace("torch", "ember")


@pytest.mark.parametrize("call, error", [
    (lambda lib: lib.nn.ParameterList([lib.zeros(1)])[3], IndexError),
    (lambda lib: lib.nn.ParameterList().extend(lib.zeros(3)), TypeError),
    (lambda lib: lib.nn.ParameterList()(lib.zeros(1)), RuntimeError),
    (lambda lib: lib.nn.ParameterDict()["missing"], AttributeError),
    (lambda lib: lib.nn.ParameterDict([(1,)]), ValueError),
    (lambda lib: lib.nn.ParameterDict(5), TypeError),
])
def test_container_errors_match_torch(call, error):
    for lib in (torch, ember):
        with pytest.raises(error):
            call(lib)


def dicts():
    return (nn.ParameterDict({"a": ember.zeros(2), "b": nn.Parameter(ember.zeros(1, dtype=ember.float64), False)}),
            torch.nn.ParameterDict({"a": torch.zeros(2),
                                    "b": torch.nn.Parameter(torch.zeros(1, dtype=torch.float64), False)}))


def test_parameter_dict_repr_state_dict_and_requires_grad():
    e, t = dicts()
    assert repr(e) == repr(t).replace("torch", "ember")
    assert list(e.state_dict()) == list(t.state_dict()) == ["a", "b"]
    assert [p.requires_grad for p in e.values()] == [p.requires_grad for p in t.values()] == [True, False]


def test_parameter_dict_methods_follow_dict_semantics_like_torch():
    e, t = dicts()
    results = []
    for lib, params in ((ember, e), (torch, t)):
        params["c"] = lib.ones(3)
        params.update([("d", lib.ones(4))])
        got = [list(params.keys()), "a" in params, len(params), params.get("zz", 7), tuple(params.pop("a").shape)]
        got.append(tuple(params.setdefault("e", lib.zeros(5)).shape))
        got.append(params.popitem()[0])
        got.append(list(reversed(params)))
        got.append(list(params.fromkeys(["x", "y"], lib.zeros(1)).keys()))
        merged = params | {"f": lib.zeros(1)}
        got.append(list(merged.keys()))
        copied = params.copy()
        got.append(copied["b"] is params["b"])
        params.clear()
        got.append(len(params))
        results.append(got)
    assert results[0] == results[1]


def test_parameter_containers_belong_to_their_owner():
    class Owner(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ParameterList([ember.zeros(2)])
            self.table = nn.ParameterDict({"w": ember.zeros(3)})

    assert list(Owner().state_dict()) == ["layers.0", "table.w"]
    assert len(list(Owner().parameters())) == 2
