"""Hypothesis properties of ``x[key]`` and ``x[key] = value`` against torch.

Random shapes (0-d to 4-d, sizes 0 to 4) and random keys mixing ints, slices with steps, None, ``...``, bools,
bool masks, int64 index tensors and lists (adjacent or separated, so torch's rule for where the advanced dims
go is exercised). For each: the value, whether it is a view, the first and second gradients of the indexed
tensor; for assignment, the tensor after it and the gradients of both the tensor and the values. A key that
torch refuses must be refused by ember with the same type of error.
"""
import numpy as np
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ember

SIZES = (0, 1, 2, 2, 3, 3, 4, 4, 4)  # a dim of size 0 now and then: most results should have elements
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# ----------------------------------------------------------------- drawing shapes and keys
# A key is drawn as a spec (plain Python data), made into each library's key by ``key_of``:
# ("index", array) is an int64 tensor, ("mask", array) a bool tensor, ("list", [...]) a list of ints.


@st.composite
def _index_for(draw, size: int, common: tuple):
    """An index tensor for a dim of ``size``: its shape broadcasts to ``common`` (the key's index shape)."""
    shape = tuple(n if draw(st.booleans()) else 1 for n in common)
    shape = shape[draw(st.integers(0, len(shape))):]  # leading dims may be missing
    low = -size if draw(st.booleans()) else 0
    if size == 0:
        return ("index", np.zeros((0,), np.int64))  # an empty dim takes only an empty index
    values = draw(st.lists(st.integers(low, size - 1), min_size=int(np.prod(shape)), max_size=int(np.prod(shape))))
    return ("index", np.array(values, np.int64).reshape(shape))


@st.composite
def _item(draw, size: int, common: tuple, kinds: tuple):
    kind = draw(st.sampled_from(kinds))
    if kind == "bad_int":
        return draw(st.sampled_from([size, -size - 1, size + 3]))
    if kind == "bad_step":
        return slice(None, None, draw(st.sampled_from([-1, -2, 0])))
    if kind == "bad_index":
        return ("index", np.array([0, size] if size else [1], np.int64))
    if kind == "int" and size:
        return draw(st.integers(-size, size - 1))
    if kind == "numpy_int" and size:
        return np.int64(draw(st.integers(-size, size - 1)))
    if kind == "0-d index" and size:
        return ("index", np.array(draw(st.integers(-size, size - 1)), np.int64))
    if kind in ("int32 index", "numpy index"):
        kind_name, values = draw(_index_for(size, common))
        return ("int32", values) if kind == "int32 index" else values
    if kind == "bool list":
        return ("list", draw(st.lists(st.booleans(), min_size=size, max_size=size)))
    if kind == "index":
        return draw(_index_for(size, common))
    if kind == "list" and size and len(common) <= 1:
        length = common[0] if common else 1
        return ("list", draw(st.lists(st.integers(-size, size - 1), min_size=length, max_size=length)))
    if kind == "mask":
        return ("mask", np.array(draw(st.lists(st.booleans(), min_size=size, max_size=size)), bool))
    bound = st.one_of(st.none(), st.integers(-size - 2, size + 2))
    return slice(draw(bound), draw(bound), draw(st.sampled_from([None, 1, 2, 3])))


@st.composite
def shapes_and_keys(draw, kinds=("int", "slice", "slice", "index", "list", "mask")):
    """(shape, key spec): the key takes some of the dims, perhaps with ``...`` and None and bools between."""
    ndim = draw(st.integers(0, 4))
    shape = tuple(draw(st.lists(st.sampled_from(SIZES), min_size=ndim, max_size=ndim)))
    taken = draw(st.integers(0, ndim))
    ellipsis_at = draw(st.one_of(st.none(), st.integers(0, taken)))
    dims = list(range(taken)) if ellipsis_at is None else \
        list(range(ellipsis_at)) + list(range(ndim - (taken - ellipsis_at), ndim))
    common = tuple(draw(st.lists(st.integers(1, 3), min_size=0, max_size=2)))
    items = [draw(_item(shape[d], common, kinds)) for d in dims]
    if ellipsis_at is not None:
        items.insert(ellipsis_at, Ellipsis)
    for _ in range(draw(st.integers(0, 2))):  # new dims: None or a bool
        items.insert(draw(st.integers(0, len(items))), draw(st.sampled_from([None, None, True, False])))
    if len(items) == 1 and draw(st.booleans()):
        return shape, items[0]  # a bare item, not a tuple
    return shape, tuple(items)


def key_of(lib, spec):
    if isinstance(spec, tuple) and len(spec) == 2 and isinstance(spec[0], str):
        kind, values = spec
        if kind == "int32":
            return lib.tensor(values, dtype=lib.int32)
        return list(values) if kind == "list" else lib.tensor(values)
    if isinstance(spec, tuple):
        return tuple(key_of(lib, k) for k in spec)
    return spec


# ----------------------------------------------------------------- running a program in both libraries


def _run(program, *args):
    """``program(lib, *args)`` in torch and in ember: both results, or both errors of one type."""
    outcomes = []
    for lib in (torch, ember):
        try:
            outcomes.append(program(lib, *args))
        except (IndexError, RuntimeError, ValueError, TypeError) as error:
            outcomes.append(error)
    theirs, mine = outcomes
    if isinstance(theirs, Exception):
        assert isinstance(mine, type(theirs)), f"torch raises {theirs!r}, ember gives {mine!r}"
        return
    if isinstance(mine, Exception):
        raise mine
    _assert_same(theirs, mine)


def _assert_same(theirs, mine, path="result"):
    if isinstance(theirs, (list, tuple)):
        assert len(theirs) == len(mine), path
        for i, (t, m) in enumerate(zip(theirs, mine)):
            _assert_same(t, m, f"{path}[{i}]")
    elif isinstance(theirs, torch.Tensor):
        assert isinstance(mine, ember.Tensor), f"{path}: {mine!r}"
        assert tuple(theirs.shape) == tuple(mine.shape), f"{path}: shape {tuple(mine.shape)} != {tuple(theirs.shape)}"
        np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(force=True), rtol=1e-12, err_msg=path)
    else:
        assert theirs == mine, f"{path}: {mine!r} != torch's {theirs!r}"


def _leaf(lib, shape: tuple, seed: int = 0):
    values = np.random.default_rng(seed).uniform(-2, 2, shape)
    return lib.tensor(values, dtype=lib.float64, requires_grad=True)


def _weights(lib, shape: tuple, seed: int):
    return lib.tensor(np.random.default_rng(seed).uniform(-1, 1, shape), dtype=lib.float64)


def indexed(lib, shape: tuple, spec):
    """``x[key]``, whether it is a view, and d/dx of ``sum(w * y * y)`` with its own gradient (second order)."""
    leaf = _leaf(lib, shape)
    x = leaf * 1
    y = x[key_of(lib, spec)]
    report = [y, y._base is not None]
    if y.numel():
        (g,) = lib.autograd.grad((_weights(lib, y.shape, 1) * y * y).sum(), leaf, create_graph=True)
        (gg,) = lib.autograd.grad((_weights(lib, g.shape, 2) * g * g).sum(), leaf)
        report += [g, gg]
    return report


def assigned(lib, shape: tuple, spec, value_spec):
    """``x[key] = value`` on a non-leaf: x after it, and the gradients of x's leaf and of the values."""
    leaf = _leaf(lib, shape)
    x = leaf * 1
    key = key_of(lib, spec)
    region = tuple(x[key].shape)
    if value_spec == "number":
        value, leaves = 1.5, (leaf,)
    else:
        value = _leaf(lib, _value_shape(region, value_spec), seed=3)
        leaves = (leaf, value)
    x[key] = value
    grads = lib.autograd.grad((_weights(lib, x.shape, 4) * x).sum(), leaves, allow_unused=True)
    return [x] + [lib.zeros(t.shape, dtype=t.dtype) if g is None else g for g, t in zip(grads, leaves)]


def _value_shape(region: tuple, value_spec: tuple) -> tuple:
    """A shape that broadcasts to ``region``: its last dims, some of them 1, perhaps with leading ones."""
    drop, ones, lead = value_spec
    shape = [1 if i in ones else n for i, n in enumerate(region)][min(drop, len(region)):]
    return (1,) * lead + tuple(shape)


def _unique_along_flat(spec) -> bool:
    """Whether every index tensor of a key has distinct values, so that an assignment has one winner per element."""
    items = spec if isinstance(spec, tuple) and not (len(spec) == 2 and isinstance(spec[0], str)) else (spec,)
    for k in items:
        if isinstance(k, tuple) and k[0] in ("index", "list"):
            values = np.asarray(k[1]).ravel()
            if len(values) > 1:
                return False  # with other indices broadcast, even distinct values can land on one element twice
    return True


# ----------------------------------------------------------------- the properties


MORE_KINDS = ("int", "numpy_int", "slice", "0-d index", "int32 index", "numpy index", "bool list", "mask", "list")


@SETTINGS
@given(shapes_and_keys())
def test_indexing_matches_torch(case):
    shape, spec = case
    _run(indexed, shape, spec)


@SETTINGS
@given(shapes_and_keys(kinds=MORE_KINDS), st.sampled_from(["get", "set"]))
def test_keys_of_numpy_values_int32_tensors_and_bool_lists_match_torch(case, operation):
    shape, spec = case
    if operation == "get":
        _run(indexed, shape, spec)
    else:
        _run(assigned, shape, _first_of_each_index(spec), (0, {0}, 0))


@SETTINGS
@given(shapes_and_keys(kinds=("int", "slice", "slice", "slice")))
def test_basic_indexing_gives_views_as_torch(case):
    shape, spec = case
    _run(lambda lib, shape, spec: indexed(lib, shape, spec)[1], shape, spec)


@SETTINGS
@given(shapes_and_keys(kinds=("int", "slice", "index", "mask", "bad_int", "bad_step", "bad_index")),
       st.sampled_from(["get", "set"]))
def test_bad_keys_are_refused_as_torch(case, operation):
    """Out-of-bounds ints and index values, and steps of 0 or below: torch's type of error, in getting and setting."""
    shape, spec = case
    spec = _bad_step_first(spec)
    if operation == "get":
        _run(indexed, shape, spec)
    else:
        _run(assigned, shape, _first_of_each_index(spec), "number")


def _bad_step_first(spec):
    """The key with its slices of step 0 or below in front: torch reads a key from the left and stops at the first
    bad item, ember checks every step before any bound, so only then is the first error the same."""
    if not isinstance(spec, tuple) or len(spec) == 2 and isinstance(spec[0], str):
        return spec
    bad = [k for k in spec if isinstance(k, slice) and k.step is not None and k.step <= 0]
    return tuple(bad) + tuple(k for k in spec if not (isinstance(k, slice) and k.step is not None and k.step <= 0))


VALUE_SPECS = st.one_of(st.just("number"), st.tuples(st.integers(0, 2), st.sets(st.integers(0, 3), max_size=2),
                                                     st.integers(0, 1)))


@SETTINGS
@given(shapes_and_keys(), VALUE_SPECS)
def test_assignment_matches_torch(case, value_spec):
    shape, spec = case
    if not _unique_along_flat(spec):  # repeated targets: torch leaves the winner unspecified
        spec = _first_of_each_index(spec)
    _run(assigned, shape, spec, value_spec)


def _first_of_each_index(spec):
    """The key with each index tensor cut to one element (shape kept broadcastable: all ones)."""
    if isinstance(spec, np.ndarray) and spec.size:
        return spec.ravel()[:1].reshape((1,) * spec.ndim)
    if isinstance(spec, tuple) and len(spec) == 2 and isinstance(spec[0], str):
        kind, values = spec
        if kind == "mask" or not np.size(values) or np.asarray(values).dtype == bool:
            return spec
        flat = np.asarray(values).ravel()[:1]
        return (kind, list(flat)) if kind == "list" else (kind, flat.reshape((1,) * np.ndim(values)))
    if isinstance(spec, tuple):
        return tuple(_first_of_each_index(k) for k in spec)
    return spec


def assigned_variant(lib, shape: tuple, spec, layout: str, dtype: str, value_kind: str):
    """``x[key] = value`` where x is a transposed or sliced view of a non-leaf, or of an integer dtype, and the
    value a Python float or int, or a tensor of x's dtype or another one. x after it, and (float64) gradients."""
    differentiable = dtype == "float64"
    leaf = lib.tensor(np.random.default_rng(0).uniform(-3, 3, shape[::-1] if layout == "t" else shape),
                      dtype=lib.float64, requires_grad=differentiable)
    x = (leaf * 1).to(getattr(lib, dtype))
    x = x.permute(*range(x.dim() - 1, -1, -1)) if layout == "t" and x.dim() > 1 else x
    key = key_of(lib, spec)
    region = tuple(x[key].shape)
    if value_kind in ("float", "int"):
        value, leaves = (2.75 if value_kind == "float" else -2), (leaf,)
    else:
        value_dtype = getattr(lib, dtype if value_kind == "same" else "float32")
        value = lib.tensor(np.random.default_rng(3).uniform(-3, 3, region), dtype=value_dtype,
                           requires_grad=differentiable and value_kind == "same")
        leaves = (leaf, value) if value.requires_grad else (leaf,)
    x[key] = value
    if not differentiable:
        return [x]
    grads = lib.autograd.grad((_weights(lib, x.shape, 4) * x).sum(), leaves, allow_unused=True)
    return [x] + [lib.zeros(t.shape, dtype=t.dtype) if g is None else g for g, t in zip(grads, leaves)]


@SETTINGS
@given(shapes_and_keys(), st.sampled_from(["c", "t"]), st.sampled_from(["float64", "int64", "float32"]),
       st.sampled_from(["float", "int", "same", "other"]))
def test_assignment_into_views_and_other_dtypes_matches_torch(case, layout, dtype, value_kind):
    shape, spec = case
    _run(assigned_variant, shape, _first_of_each_index(spec), layout, dtype, value_kind)
