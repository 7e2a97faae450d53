"""Every name of the promised tensor API (tests/tensor_api_list.py) exists in ember where it exists in torch, and
so does every listed name of torch's sub-namespaces (tests/subspace_api_list.py: ``torch.cpu``, ``torch.library``...).

A name torch has as a function must be an ember function; one torch has as a Tensor method must be an ember
Tensor method too. ``NOT_BUILT`` lists, with the reason, what ember leaves out on purpose; a name there that
ember gains fails the test too, so the list stays true.
"""
import pytest
import torch

import ember
import subspace_api_list as subspace_api
import tensor_api_list as api

NOT_BUILT: dict = {}


def _places(name: str) -> list:
    """(where, torch's object, ember's object) for each place torch has ``name``: the namespace, the Tensor."""
    places = []
    if hasattr(torch, name):
        places.append((f"ember.{name}", ember, name))
    if hasattr(torch.Tensor, name):
        places.append((f"ember.Tensor.{name}", ember.Tensor, name))
    return places


CASES = [(where, owner, attr) for name in api.TOP_LEVEL for where, owner, attr in _places(name)]
CASES += [(f"ember.Tensor.{name}", ember.Tensor, name) for name in api.TENSOR_ONLY.split()]
CASES += [(f"ember.linalg.{name}", "linalg", name) for name in api.LINALG.split()]
CASES += [(f"ember.special.{name}", "special", name) for name in api.SPECIAL.split()]


def _owner(owner):
    if isinstance(owner, str):
        return getattr(ember, owner, None)
    return owner


@pytest.mark.parametrize("where,owner,attr", CASES, ids=[c[0] for c in CASES])
def test_every_listed_name_exists_as_in_torch(where, owner, attr):
    key = where.removeprefix("ember.")
    present = hasattr(_owner(owner), attr)
    if key in NOT_BUILT:
        assert not present, f"{where} now exists: drop it from NOT_BUILT"
        pytest.skip(f"{where}: {NOT_BUILT[key]}")
    assert present, f"{where} is missing: torch has it and the tensor API promises it"


def test_every_listed_name_is_somewhere_in_torch():
    # a name in the list that torch does not have would make a case of its own impossible to check
    assert all(_places(name) for name in api.TOP_LEVEL)
    assert all(hasattr(torch.Tensor, name) for name in api.TENSOR_ONLY.split())
    assert all(hasattr(torch.linalg, name) for name in api.LINALG.split())
    assert all(hasattr(torch.special, name) for name in api.SPECIAL.split())


def _subspace(root, path: str):
    for part in path.split("."):
        root = getattr(root, part, None)
    return root


SUBSPACE_CASES = [(path, name) for path, names in subspace_api.SUBSPACES.items() for name in names.split()]


@pytest.mark.parametrize("path,name", SUBSPACE_CASES, ids=[f"{p}.{n}" for p, n in SUBSPACE_CASES])
def test_every_listed_subspace_name_exists_as_in_torch(path, name):
    assert hasattr(_subspace(torch, path), name), f"torch.{path}.{name} is listed but torch has no such name"
    assert hasattr(_subspace(ember, path), name), f"ember.{path}.{name} is missing: torch has it, the list promises it"
    assert callable(getattr(_subspace(ember, path), name)) == callable(getattr(_subspace(torch, path), name))


def test_the_subspace_list_covers_what_the_bench_compares():
    import importlib.util
    import pathlib

    bench = pathlib.Path(__file__).parents[1] / "bench" / "api_coverage.py"
    spec = importlib.util.spec_from_file_location("api_coverage", bench)
    coverage = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(coverage)
    for label, theirs, mine in coverage.subspaces():
        path = label.removeprefix("torch.")
        have = {n for n in coverage.own_public_callables(theirs) if hasattr(mine, n)}
        listed = set(subspace_api.SUBSPACES.get(path, "").split())
        assert have <= listed, f"{label}: ember now has {sorted(have - listed)}; add them to tests/subspace_api_list.py"
