"""Generic tests over the op table (tests/op_table.py): every row is run in ember and in torch.

* forward values, shapes and dtypes equal torch's, for each dtype of the row; views where torch has views,
  and writing into a view changes its base as in torch;
* first and second derivatives (float64) equal torch's, and pass ember's gradcheck/gradgradcheck;
* the result's ``grad_fn.name()`` is torch's, unless the row records a deliberate difference;
* in-place forms equal the out-of-place op (values, identity, version, gradients);
* bad inputs raise the error torch raises, with a message that names the op;
* type promotion of two operands (hypothesis) equals torch's;
* the rows that declare ``complex_samples`` do the same on complex64/complex128 inputs: values, gradients
  (complex weights, first and second order), gradcheck/gradgradcheck and the in-place form.
"""
from __future__ import annotations

import operator
import re
import warnings
import zlib

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import ember
from op_table import OPS, A, C, D, OpSpec, Sample
from twins import assert_same_outcome, both, both_raise, normalise

CASES = [pytest.param(spec, i, id=f"{spec.name}-{i}") for spec in OPS for i in range(len(spec.samples))]
DIFFERENTIABLE = [c for c in CASES if c.values[0].differentiable]
GRADCHECKED = [c for c in DIFFERENTIABLE if c.values[0].float64_output]
INPLACE = [c for c in CASES if c.values[0].inplace is not None]
ERRORS = [
    pytest.param(spec, err, id=f"{spec.name}-{i}") for spec in OPS for i, err in enumerate(spec.errors)
]
TOLERANCE = {"float16": (1e-3, 1e-3), "float32": (1e-5, 1e-6), "float64": (1e-10, 1e-12),
             "complex64": (1e-5, 1e-6), "complex128": (1e-10, 1e-12)}
COMPLEX = [pytest.param(spec, i, id=f"{spec.name}-{i}") for spec in OPS for i in spec.complex_samples]
COMPLEX_DIFFERENTIABLE = [c for c in COMPLEX if c.values[0].differentiable]
COMPLEX_INPLACE = [c for c in COMPLEX if c.values[0].inplace is not None]


# ----------------------------------------------------------------- building the same inputs in both libraries


def _values(spec: OpSpec, shape: tuple, dtype: str, rng: np.random.Generator) -> np.ndarray:
    """Random values in the row's domain, kept away from its special points, as ``dtype`` (a complex one: both
    parts so drawn)."""
    if dtype.startswith("complex"):
        parts = [_values(spec, shape, "float64", rng) for _ in range(2)]
        return np.asarray(parts[0] + 1j * parts[1]).astype(dtype)
    low, high = spec.domain
    x = np.asarray(rng.uniform(low, high, shape))
    integer = spec.integer_valued or dtype in ("int64", "int32", "uint8")
    if integer:
        x = np.asarray(np.round(x))
    margin = 1.0 if integer else 0.1
    for point in spec.away_from:
        near = np.abs(x - point) < margin
        x[near] = point + np.where(x[near] >= point, margin, -margin)
    if dtype == "bool":
        return np.asarray(x > (low + high) / 2)
    return x.astype(dtype)


def _storage(marker: A, values_for) -> tuple:
    """(base, layout): a contiguous array of values, and how to view it as the marker asks.

    ``layout(base)`` has ``marker.shape``: contiguous, transposed, or every second element of the last dim.
    """
    shape = marker.shape
    if marker.layout == "t" and len(shape) >= 2:
        return values_for(shape[::-1]), np.transpose
    if marker.layout == "s" and len(shape) >= 1:
        return values_for(shape[:-1] + (2 * shape[-1],)), lambda base: base[..., ::2]
    return values_for(shape), lambda base: base


class Inputs:
    """One sample's arguments, built identically (same values, same memory layout) for ember and torch."""

    def __init__(self, spec: OpSpec, sample: Sample, dtype: str, seed: int):
        rng = np.random.default_rng(seed)
        self.sample = sample
        self.storage = {}  # id of an A marker in the sample -> (base, layout)
        for marker in _markers(sample.args + tuple(sample.kwargs.values())):
            self.storage[id(marker)] = _storage(marker, lambda shape: _values(spec, shape, dtype, rng))

    def build(self, lib, requires_grad: bool = False) -> tuple:
        """(args, kwargs, leaves): the sample for ``lib``, in fresh memory; ``leaves`` are the A inputs, in order."""
        leaves = []

        def convert(value):
            if isinstance(value, A):
                base, layout = self.storage[id(value)]
                t = lib.from_numpy(layout(base.copy()))
                if requires_grad:
                    t.requires_grad_()
                leaves.append(t)
                return t
            if isinstance(value, C):
                return lib.tensor(np.asarray(value.value))
            if isinstance(value, D):
                return getattr(lib, value.name)
            if isinstance(value, tuple):
                return tuple(convert(v) for v in value)
            return value

        args = tuple(convert(a) for a in self.sample.args)
        kwargs = {k: convert(v) for k, v in self.sample.kwargs.items()}
        return args, kwargs, leaves


def _markers(values):
    for v in values:
        if isinstance(v, A):
            yield v
        elif isinstance(v, tuple):
            yield from _markers(v)


def inputs_for(spec: OpSpec, index: int, dtype: str) -> Inputs:
    seed = zlib.crc32(f"{spec.name}/{index}/{dtype}".encode())
    return Inputs(spec, spec.samples[index], dtype, seed)


def call(spec: OpSpec, lib, args: tuple, kwargs: dict):
    return spec.fn(lib, *args, **kwargs)


# ----------------------------------------------------------------- comparing results


def dtype_name(t) -> str:
    """'float32' for a tensor or a dtype of either library."""
    return str(getattr(t, "dtype", t)).split(".")[-1]


def to_numpy(t) -> np.ndarray:
    if isinstance(t, torch.Tensor):
        return t.detach().numpy(force=True)  # force: torch's gradients may be "zero tensors" without memory
    return t.detach().numpy()


def assert_same(mine, theirs, what: str = "result") -> None:
    """An ember tensor equal to a torch tensor in type, dtype, shape and values (nan where torch has nan)."""
    assert isinstance(mine, ember.Tensor), f"{what}: expected an ember.Tensor, got {type(mine).__name__}"
    assert dtype_name(mine) == dtype_name(theirs), f"{what}: dtype {mine.dtype} != torch's {theirs.dtype}"
    assert tuple(mine.shape) == tuple(theirs.shape), f"{what}: shape {tuple(mine.shape)} != {tuple(theirs.shape)}"
    rtol, atol = TOLERANCE.get(dtype_name(theirs), (0, 0))
    np.testing.assert_allclose(to_numpy(mine), to_numpy(theirs), rtol=rtol, atol=atol, equal_nan=True, err_msg=what)


def run_both(spec: OpSpec, inputs: Inputs, requires_grad: bool = False):
    """Run the row in both libraries: ((ember out, leaves), (torch out, leaves)), or the errors raised."""
    results = []
    for lib in (ember, torch):
        args, kwargs, leaves = inputs.build(lib, requires_grad)
        try:
            results.append((call(spec, lib, args, kwargs), leaves))
        except Exception as error:  # compared with the other library's outcome by the caller
            results.append((error, leaves))
    return results


# ----------------------------------------------------------------- forward


@pytest.mark.parametrize("spec,index", CASES)
def test_forward_matches_torch(spec: OpSpec, index: int):
    compared = 0
    for dtype in spec.dtypes:
        (mine, _), (theirs, _) = run_both(spec, inputs_for(spec, index, dtype))
        what = f"{spec.name}{spec.samples[index]} as {dtype}"
        if assert_same_outcome(mine, theirs, what):
            assert_same(mine, theirs, what)
            if index not in spec.view_differs:
                assert (mine._base is None) == (theirs._base is None), f"{what}: a view in one library only"
            compared += 1
    assert compared, f"{spec.name}{spec.samples[index]}: both libraries raised for every dtype, nothing was compared"


def _torch_gives_view(spec: OpSpec, index: int) -> bool:
    args, kwargs, _ = inputs_for(spec, index, spec.dtypes[0]).build(torch)
    try:
        return call(spec, torch, args, kwargs)._base is not None and index not in spec.view_differs
    except Exception:
        return False


VIEWS = [c for c in CASES if _torch_gives_view(*c.values)]


@pytest.mark.parametrize("spec,index", VIEWS)
def test_writes_to_a_view_reach_its_base(spec: OpSpec, index: int):
    """Where torch returns a view, changing it in place changes the inputs the same way in ember."""
    inputs = inputs_for(spec, index, spec.dtypes[0])
    outcomes = []
    for lib in (torch, ember):
        args, kwargs, leaves = inputs.build(lib)
        out = call(spec, lib, args, kwargs)
        try:
            out.add_(out * 0 + 3)
        except Exception as error:
            outcomes.append((error, leaves))
            continue
        outcomes.append((out, leaves))
    (theirs, their_leaves), (mine, my_leaves) = outcomes
    if assert_same_outcome(mine, theirs, f"{spec.name}{spec.samples[index]}: add_ on the result"):
        for i, (a, b) in enumerate(zip(my_leaves, their_leaves)):
            assert_same(a, b, f"{spec.name}{spec.samples[index]}: input {i} after add_ on the result")


# ----------------------------------------------------------------- gradients


def _random_like(t: torch.Tensor, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-1, 1, tuple(t.shape)).astype(np.float64)


def _grads(lib, outputs, leaves, weights, create_graph: bool):
    """d(sum(outputs * weights))/d leaves, zeros where a leaf does not reach the outputs."""
    pairs = [(o, w) for o, w in zip(outputs, weights) if o.requires_grad]
    if not pairs:
        return [lib.zeros_like(leaf) for leaf in leaves]
    grads = lib.autograd.grad(
        [o for o, _ in pairs], leaves, [lib.from_numpy(w.astype(dtype_name(o))) for o, w in pairs],
        create_graph=create_graph, allow_unused=True,
    )
    return [lib.zeros_like(leaf) if g is None else g for g, leaf in zip(grads, leaves)]


@pytest.mark.parametrize("spec,index", DIFFERENTIABLE)
def test_gradients_match_torch(spec: OpSpec, index: int):
    """First and second derivatives (float64) of the op equal torch's."""
    (mine, my_leaves), (theirs, their_leaves) = run_both(spec, inputs_for(spec, index, "float64"), True)
    assert assert_same_outcome(mine, theirs, spec.name), f"{spec.name}: both raised in float64, nothing was compared"
    assert their_leaves, f"{spec.name}{spec.samples[index]}: a differentiable sample needs an input with a gradient"
    weights = [_random_like(theirs, 1)]
    my_grads = _grads(ember, [mine], my_leaves, weights, create_graph=True)
    their_grads = _grads(torch, [theirs], their_leaves, weights, create_graph=True)
    for i, (g, h) in enumerate(zip(my_grads, their_grads)):
        assert_same(g, h, f"{spec.name}{spec.samples[index]}: gradient of input {i}")
    second_weights = [_random_like(h, 2 + i) for i, h in enumerate(their_grads)]
    my_second = _grads(ember, my_grads, my_leaves, second_weights, create_graph=False)
    their_second = _grads(torch, their_grads, their_leaves, second_weights, create_graph=False)
    for i, (g, h) in enumerate(zip(my_second, their_second)):
        assert_same(g, h, f"{spec.name}{spec.samples[index]}: second derivative, input {i}")


@pytest.mark.parametrize("spec,index", GRADCHECKED)
def test_gradcheck(spec: OpSpec, index: int):
    """ember's own gradcheck and gradgradcheck (finite differences) accept the op's backward."""
    _check_gradients(spec, index, "float64")


def _check_gradients(spec: OpSpec, index: int, dtype: str) -> None:
    """gradcheck and gradgradcheck of the op as a function of its differentiable (top-level) inputs."""
    args, kwargs, leaves = inputs_for(spec, index, dtype).build(ember, requires_grad=True)
    positions = _leaf_positions(args)
    assert leaves and len(positions) == len(leaves), "differentiable inputs are top-level arguments"

    def function(*xs):
        filled = list(args)
        for position, x in zip(positions, xs):
            filled[position] = x
        return call(spec, ember, tuple(filled), kwargs)

    assert ember.autograd.gradcheck(function, tuple(leaves))
    assert ember.autograd.gradgradcheck(function, tuple(leaves))


def _leaf_positions(args: tuple) -> list:
    return [i for i, a in enumerate(args) if isinstance(a, ember.Tensor) and a.requires_grad]


# ----------------------------------------------------------------- grad_fn names


def _node_name(t) -> str | None:
    return None if t.grad_fn is None else t.grad_fn.name()


@pytest.mark.parametrize("spec,index", DIFFERENTIABLE)
def test_grad_fn_name_matches_torch(spec: OpSpec, index: int):
    (mine, _), (theirs, _) = run_both(spec, inputs_for(spec, index, "float64"), True)
    assert assert_same_outcome(mine, theirs, spec.name), f"{spec.name}: both raised in float64, nothing was compared"
    expected = spec.grad_fn.get(index, _node_name(theirs))
    assert _node_name(mine) == expected, f"{spec.name}{spec.samples[index]}: torch says {_node_name(theirs)}"


# ----------------------------------------------------------------- in-place forms


@pytest.mark.parametrize("spec,index", INPLACE)
def test_inplace_matches_out_of_place(spec: OpSpec, index: int):
    compared = 0
    for dtype in spec.dtypes:
        inputs = inputs_for(spec, index, dtype)
        what = f"{spec.name}_{spec.samples[index]} as {dtype}"
        outcomes = []
        for lib in (ember, torch):
            args, kwargs, _ = inputs.build(lib)
            try:
                outcomes.append((args[0], args[0]._version, spec.inplace(*args, **kwargs)))
            except Exception as error:
                outcomes.append((args[0], 0, error))
        (x, version, mine), (_, _, theirs) = outcomes
        if not assert_same_outcome(mine, theirs, what):
            continue
        assert mine is x, f"{what}: an in-place method returns its tensor"
        assert x._version > version, f"{what}: the version counter did not move"
        args, kwargs, _ = inputs.build(ember)
        assert_same(x, call(spec, ember, args, kwargs), what + " (out of place)")
        assert_same(x, theirs, what + " (torch)")
        compared += 1
    if not compared and _result_fits_its_input(spec, index):
        pytest.fail(f"{spec.name}_{spec.samples[index]}: the in-place form raised in both libraries for every dtype, "
                    "though the result has its input's shape: nothing was compared")


def _result_fits_its_input(spec: OpSpec, index: int) -> bool:
    """Whether the out-of-place result has the shape of the tensor an in-place form would write into."""
    args, kwargs, _ = inputs_for(spec, index, spec.dtypes[0]).build(torch)
    try:
        return tuple(call(spec, torch, args, kwargs).shape) == tuple(args[0].shape)
    except Exception:
        return False


@pytest.mark.parametrize("through_view", [False, True], ids=["direct", "through_view"])
@pytest.mark.parametrize("spec,index", INPLACE)
def test_inplace_gradients_match_torch(spec: OpSpec, index: int, through_view: bool):
    """Gradients flow through ``base = leaf * 1; base.op_(...)`` as in torch, to the leaf and the other operands.

    ``through_view`` changes ``base`` through a view of it (``base[...]``), which autograd must record on ``base``.
    """
    inputs = inputs_for(spec, index, "float64")
    results = []
    for lib in (ember, torch):
        args, kwargs, leaves = inputs.build(lib, requires_grad=True)
        base = args[0] * 1
        try:
            spec.inplace(base[...] if through_view else base, *args[1:], **kwargs)
        except Exception as error:
            results.append((error, leaves))
            continue
        results.append((base, leaves))
    (mine, my_leaves), (theirs, their_leaves) = results
    if not assert_same_outcome(mine, theirs, spec.name):
        assert not _result_fits_its_input(spec, index), f"{spec.name}_{spec.samples[index]}: both raised"
        return
    assert_same(mine, theirs, f"{spec.name}_{spec.samples[index]}: the changed tensor")
    weights = [_random_like(theirs, 1)]
    for i, (g, h) in enumerate(zip(_grads(ember, [mine], my_leaves, weights, False),
                                   _grads(torch, [theirs], their_leaves, weights, False))):
        assert_same(g, h, f"{spec.name}_{spec.samples[index]}: gradient of input {i}")


# ----------------------------------------------------------------- complex inputs


@pytest.mark.parametrize("spec,index", COMPLEX)
def test_complex_forward_matches_torch(spec: OpSpec, index: int):
    for dtype in ("complex64", "complex128"):
        (mine, _), (theirs, _) = run_both(spec, inputs_for(spec, index, dtype))
        what = f"{spec.name}{spec.samples[index]} as {dtype}"
        assert not isinstance(theirs, Exception), f"{what}: torch refuses it ({theirs!r}): not a complex row"
        assert_same_outcome(mine, theirs, what)
        assert_same(mine, theirs, what)


def _complex_weights(t, seed: int) -> np.ndarray:
    """Random weights for ``t`` (a complex or real result, or gradient): complex ones where ``t`` is complex."""
    weights = _random_like(t, seed)
    return np.asarray(weights + 1j * _random_like(t, seed + 100)) if t.dtype.is_complex else weights


@pytest.mark.parametrize("spec,index", COMPLEX_DIFFERENTIABLE)
def test_complex_gradients_match_torch(spec: OpSpec, index: int):
    """First and second derivatives in complex128, against torch's, with complex weights on complex results
    (so that the imaginary parts of the gradients count): the conjugates must be where torch puts them."""
    (mine, my_leaves), (theirs, their_leaves) = run_both(spec, inputs_for(spec, index, "complex128"), True)
    assert assert_same_outcome(mine, theirs, spec.name), f"{spec.name}: both raised in complex128"
    weights = [_complex_weights(theirs, 1)]
    my_grads = _grads(ember, [mine], my_leaves, weights, create_graph=True)
    their_grads = _grads(torch, [theirs], their_leaves, weights, create_graph=True)
    for i, (g, h) in enumerate(zip(my_grads, their_grads)):
        assert_same(g, h.resolve_conj(), f"{spec.name}{spec.samples[index]}: complex gradient of input {i}")
    second_weights = [_complex_weights(h, 2 + i) for i, h in enumerate(their_grads)]
    my_second = _grads(ember, my_grads, my_leaves, second_weights, create_graph=False)
    their_second = _grads(torch, their_grads, their_leaves, second_weights, create_graph=False)
    for i, (g, h) in enumerate(zip(my_second, their_second)):
        assert_same(g, h.resolve_conj(), f"{spec.name}{spec.samples[index]}: complex second derivative, input {i}")


@pytest.mark.parametrize("spec,index", COMPLEX_DIFFERENTIABLE)
def test_complex_gradcheck(spec: OpSpec, index: int):
    """ember's gradcheck and gradgradcheck (through the real pairs of each complex input) in complex128."""
    _check_gradients(spec, index, "complex128")


@pytest.mark.parametrize("spec,index", COMPLEX_INPLACE)
def test_complex_inplace_matches_torch(spec: OpSpec, index: int):
    inputs = inputs_for(spec, index, "complex128")
    outcomes = []
    for lib in (ember, torch):
        args, kwargs, _ = inputs.build(lib)
        try:
            outcomes.append((args[0], spec.inplace(*args, **kwargs)))
        except Exception as error:  # (abs_ of a complex tensor, or a result larger than the tensor: as torch)
            outcomes.append((args[0], error))
    (x, mine), (_, theirs) = outcomes
    if not assert_same_outcome(mine, theirs, f"{spec.name}_{spec.samples[index]} in complex128"):
        return
    assert mine is x, f"{spec.name}_: an in-place method returns its tensor"
    assert_same(x, theirs.resolve_conj(), f"{spec.name}_{spec.samples[index]} in complex128")


# ----------------------------------------------------------------- errors


@pytest.mark.parametrize("spec,err", ERRORS)
def test_errors_match_torch_and_name_the_op(spec: OpSpec, err):
    with pytest.raises(err.error):
        err.call(torch)
    with pytest.raises(err.error) as info:
        err.call(ember)
    mention = err.mentions or spec.name.split("_")[0]
    assert mention in str(info.value), f"the message should name {mention!r}: {info.value}"


# ----------------------------------------------------------------- type promotion

DTYPES = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64")


@st.composite
def operands(draw):
    """A tensor of any dtype (with dims or 0-d), or a Python bool, int or float: as (ember value, torch value)."""
    kind = draw(st.sampled_from(("tensor", "tensor", "bool", "int", "float")))
    if kind == "bool":
        value = draw(st.booleans())
        return value, value
    if kind == "int":
        value = draw(st.one_of(st.integers(1, 5), st.integers(-300, 300)))  # out of uint8/int8 range: wraps
        return value, value
    if kind == "float":
        value = draw(st.sampled_from((0.5, 2.0, -1.5, 3.25)))
        return value, value
    dtype = draw(st.sampled_from(DTYPES))
    shape = draw(st.sampled_from(((), (2,), (2, 1))))
    data = np.full(shape, 2, dtype=dtype)
    return ember.from_numpy(data.copy()), torch.from_numpy(data.copy())


@settings(max_examples=150, deadline=None)
@given(operands(), operands())
def test_type_promotion_matches_torch(a, b):
    (ea, ta), (eb, tb) = a, b
    if not isinstance(ta, torch.Tensor) and not isinstance(tb, torch.Tensor):
        return
    assert dtype_name(ember.result_type(ea, eb)) == dtype_name(torch.result_type(ta, tb))
    for name, op in (("+", operator.add), ("-", operator.sub), ("*", operator.mul), ("/", operator.truediv),
                     ("**", operator.pow)):
        expected, actual = _outcome(op, ta, tb), _outcome(op, ea, eb)
        if isinstance(expected, type):  # torch refuses (bools in "-", negative integer powers ...): so must ember
            assert actual is expected, f"{ea!r} {name} {eb!r}: torch raises {expected.__name__}, ember gives {actual!r}"
        else:
            assert_same(actual, expected, f"{ea!r} {name} {eb!r}")


def _outcome(op, a, b):
    """``op(a, b)``, or the type of the error it raises."""
    try:
        return op(a, b)
    except (RuntimeError, NotImplementedError) as error:
        return type(error)


ARITHMETIC_CORNERS = [
    # - refuses bools, whichever side and however given
    "f - b", "b - f", "b - b", "f - True", "b - 1", "1 - b", "True - f", "lib.sub(f, b)", "f.clone().sub_(b)",
    "lib.rsub(f, True)", "f - lib.tensor(True)", "f.sub(b, alpha=2)",
    # alpha: an integer result takes no float alpha, a bool alpha needs a bool result, a bool result takes any alpha
    "f.add(b, alpha=True)", "f.add(f, alpha=True)", "i.add(i, alpha=True)", "f.sub(f, alpha=True)",
    "i.add(i, alpha=1.5)", "b.add(b, alpha=2)", "b.add(b, alpha=0)", "b.add(1, alpha=2)", "b.add(True, alpha=False)",
    # integer powers: a negative number exponent is an error (also for uint8), negative tensor exponents are not
    "u ** -1", "i ** -1", "i.clone().pow_(-1)", "lib.tensor(-1) ** -1", "u ** lib.tensor(-1)",
    "i ** lib.tensor([-1, 2, -3, 1, 0])", "lib.tensor(-1) ** i", "lib.tensor(0) ** i", "lib.pow(2, lib.tensor([-1, 2]))",
    "lib.pow(-1, lib.tensor([-1, -2]))", "i ** lib.tensor(-2, dtype=lib.int8)",
    "lib.tensor([1, -1, 2], dtype=lib.int8) ** lib.tensor([-1, -3, -2], dtype=lib.int8)", "i ** -1.0", "u ** 0",
    # a number exponent must fit the integer result's dtype
    "u ** 256", "u ** 255", "lib.tensor([2], dtype=lib.int8) ** 128", "i ** 2 ** 63", "u ** lib.tensor(300)",
    # bool powers: only the trivial ones
    "b ** b", "lib.pow(True, b)", "b ** True", "b ** False", "b ** 2", "b ** 2.0", "b ** 0", "2 ** b",
    "b ** lib.tensor(2)", "lib.tensor(2) ** b", "i ** True", "i ** False",
    # rounded division has no meaning for bools either
    "lib.div(b, b, rounding_mode='floor')", "lib.div(b, True, rounding_mode='trunc')", "lib.div(b, 2, rounding_mode='floor')",
    # NumPy scalars promote as the Python numbers they hold (np.float64 is a float: it must not make doubles)
    "f + np.float64(1e6)", "np.float64(2) * f", "f ** np.float64(2)", "lib.where(f > 0, f, np.float64(2))",
    "i.clamp(min=np.int64(1))", "i.clamp(max=np.int8(-1))", "b.clamp(min=np.int64(3))", "u.clamp(max=np.uint8(200))",
    "i.add(i, alpha=np.float16(2.5))", "u.add(u, alpha=np.int8(-1))", "lib.tensor([2], dtype=lib.int8) ** np.uint8(200)",
    # a number must fit the dtype it is converted to (a clamp bound, an alpha, a where value, a half's exponent) ...
    "u.clamp(min=300)", "u.clamp(max=-300)", "f.clamp(min=1e39)", "h.clamp(max=1e6)", "i.clamp(min=2 ** 63)",
    "u.add(u, alpha=300)", "h.add(h, alpha=1e6)", "f.sub(f, alpha=1e39)",
    "lib.where(u > 0, u, 300)", "lib.where(i > 0, i, 1e39)", "lib.where(f > 0, f, 1e39)",
    "h ** 70000.0", "h ** 2 ** 40", "h ** np.float64(1e6)",
    # ... but -1 wraps into uint8, and a half takes any number for where (beyond its range: inf)
    "u.clamp(min=-1)", "u.add(u, alpha=-1)", "lib.where(u > 0, u, -1)", "lib.where(h > 1, h, 1e6)", "h ** 65504.0",
    # two numbers: add, sub, mul and div make the first a 0-d tensor (pow does not take two numbers)
    "lib.add(2, 3)", "lib.add(2.5, 3)", "lib.mul(True, 2)", "lib.div(2, 3)", "lib.sub(2, True)", "lib.true_divide(3, 2)",
    "lib.add(True, True, alpha=2)", "lib.div(7, 2, rounding_mode='floor')", "lib.sub(2.5, 1, alpha=2)",
    # clamp takes bools between one bool bound, not two; integers round to whole numbers only
    "b.clamp(b, b)", "b.clamp(max=lib.tensor(False))", "i.round(decimals=1)", "u.round(decimals=-1)",
    # addmm checks its bias's dtype before refusing bools
    "lib.addmm(f.view(1, 2), b.view(2, 1), b.view(1, 2))",
]


@pytest.mark.parametrize("expression", ARITHMETIC_CORNERS)
def test_arithmetic_corners_match_torch(expression):
    """Values and dtypes as torch's, or the same error: where torch refuses, ember must not give an answer."""

    def program(lib):
        b, f, h = lib.tensor([True, False]), lib.ones(2), lib.tensor([0.5, 2.0], dtype=lib.float16)
        u, i = lib.tensor([0, 1, 2, 255], dtype=lib.uint8), lib.tensor([-2, -1, 0, 1, 2])
        return eval(expression, {"lib": lib, "np": np, "b": b, "f": f, "h": h, "u": u, "i": i})

    expected = _outcome(lambda lib, _: program(lib), torch, None)
    if isinstance(expected, type):
        # torch's C++ names (a kernel "div_floor_cpu" before, a type int8_t after) are not compared
        message = re.sub(r'^"[^"]*" ', "", str(pytest.raises(expected, program, torch).value))
        opening = " ".join(message.split()[:4])
        with pytest.raises(expected) as info:
            program(ember)
        assert opening.lower() in str(info.value).lower()
    else:
        both(program, prepare=normalise)


@pytest.mark.parametrize("expression", [
    "lib.eq(2, x)", "lib.lt(True, x)", "lib.ge(2.5, x)", "lib.ne(np.int64(1), x)", "lib.rsub(2, x)", "lib.pow(2, 3)",
])
def test_functions_whose_input_must_be_a_tensor_refuse_a_number_as_torch(expression):
    """torch.eq(2, x) is a TypeError (2 == x is x.eq(2), and fine); so are rsub(2, x) and pow of two numbers."""
    op = expression[4:expression.index("(")]
    both_raise(lambda lib: eval(expression, {"lib": lib, "np": np, "x": lib.ones(2)}), TypeError, rf"{op}\(")


MIXED_PRECISION = [(a, b, shapes) for a, b in (("float16", "float32"), ("float32", "float16"), ("float16", "float64"),
                                               ("float32", "float64"), ("float64", "float32"))
                   for shapes in (((2, 3), (2, 3)), ((2, 3), ()), ((), (2, 3)))]


@pytest.mark.parametrize("expression", ["a ** b", "b ** a", "a * b + a / b", "lib.where(a > 1, a, b)",
                                        "a.clamp(b, b + 1)", "lib.sub(a, b, alpha=1.5)"])
@pytest.mark.parametrize("a_dtype, b_dtype, shapes", MIXED_PRECISION)
def test_mixed_precision_gradients_have_each_inputs_dtype_and_torchs_values(expression, a_dtype, b_dtype, shapes):
    if expression == "a * b + a / b" and a_dtype == "float16" and shapes[1] == ():
        pytest.xfail("known difference in the gradient of the 0-d float tensor: torch rounds the terms of "
                     "(a / b) / b to half; ember's backward on arrays keeps them in single, as NumPy promotes a "
                     "0-d array (the forward values match torch's)")
    """Each input's gradient has its own dtype; the formulas run in the result's precision, as torch's
    (float16 ** float32: the exponent's gradient takes log of the base in float32, not in half)."""

    def program(lib):
        a = lib.tensor(np.full(shapes[0], 1.7), dtype=getattr(lib, a_dtype), requires_grad=True)
        b = lib.tensor(np.full(shapes[1], 2.3), dtype=getattr(lib, b_dtype), requires_grad=True)
        result = eval(expression, {"lib": lib, "a": a, "b": b})
        result.sum().backward()
        return result, a.grad, b.grad

    both(program)


@pytest.mark.parametrize("scalar_dtype", ["float32", "float64", "int64", "int32"])
@pytest.mark.parametrize("expression", ["x * s", "s * x", "x / s", "s / x", "x.clone().mul_(s)", "x.clone().div_(s)"])
def test_half_times_a_0_d_float_tensor_is_torchs_bit_for_bit(expression, scalar_dtype):
    """torch multiplies and divides a half tensor by a 0-d wider float or integer tensor (the second operand) in
    single precision, rounding once; with the 0-d tensor first, or a half one, it computes in half."""

    def program(lib):
        x = lib.tensor(_EVERY_HALF)
        s = lib.tensor(0.1 if scalar_dtype.startswith("float") else 2049, dtype=getattr(lib, scalar_dtype))
        return eval(expression, {"x": x, "s": s}).numpy()

    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        np.testing.assert_array_equal(program(ember), program(torch))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("divisor", [
    lambda lib: 0.1, lambda lib: -2049, lambda lib: 3.7, lambda lib: lib.tensor(0.1),
    lambda lib: lib.tensor(2049), lambda lib: lib.tensor(-0.3, dtype=lib.float64), lambda lib: 0.0,
])
@pytest.mark.parametrize("expression", [
    "x // s", "lib.div(x, s, rounding_mode='floor')", "lib.div(x, s, rounding_mode='trunc')",
    "x.clone().floor_divide_(s)", "x.clone().div_(s, rounding_mode='trunc')", "lib.floor_divide(x[7], s)",
])
def test_half_divided_by_a_scalar_and_rounded_is_torchs_bit_for_bit(expression, divisor, dtype):
    """torch divides a half or bfloat16 tensor by a number or 0-d tensor and rounds the quotient in single
    precision, with the divisor's own value: 1 // 0.1 is 9, where 0.1 rounded to half would give 10."""

    def program(lib):
        x = lib.tensor(_EVERY_HALF).to(getattr(lib, dtype))
        return eval(expression, {"x": x, "s": divisor(lib), "lib": lib}).float().numpy()

    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        np.testing.assert_array_equal(program(ember), program(torch))


@pytest.mark.parametrize("expression", [
    "x % 70000", "x % -70000", "x % 65520", "lib.fmod(x, 2049)", "lib.remainder(x, 2049)", "x < 70000",
    "lib.fmod(x.bfloat16(), 2049)",
])
def test_half_with_an_int_is_torchs_bit_for_bit(expression):
    """An int operand of a half op is rounded to half as torch rounds it (through single): one beyond half's range
    is infinite (x % 70000 keeps x's sign's infinity), not NumPy's exact int."""

    def program(lib):
        return eval(expression, {"x": lib.tensor(_EVERY_HALF), "lib": lib}).float().numpy()

    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        np.testing.assert_array_equal(program(ember), program(torch))


@pytest.mark.parametrize("name, a_shape, b_shape", [
    ("mm", (2, 2), (2, 2)), ("dot", (2,), (2,)), ("matmul", (2, 2), (2, 2)), ("matmul", (2,), (2,)),
    ("matmul", (3, 2, 2), (2, 2)), ("matmul", (2, 2), (2,)),
])
def test_matrix_products_refuse_mixed_dtypes_as_torch(name, a_shape, b_shape):
    """No silent promotion: float32 @ float64 is an error in torch, so it is in ember (which also says what to do)."""
    both_raise(lambda lib: getattr(lib, name)(lib.ones(*a_shape), lib.ones(*b_shape, dtype=lib.float64)),
               RuntimeError, "same dtype")


def test_relu_gradient_is_itself_differentiable_as_in_torch():
    """torch records relu's gradient as ThresholdBackward: differentiated again it gives zeros, not an error."""

    def program(lib):
        x = lib.tensor([1.0, -1.0, 0.0, 2.0], dtype=lib.float64, requires_grad=True)
        (g,) = lib.autograd.grad(x.relu().sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad((g * lib.tensor([1.0, 2.0, 3.0, 4.0], dtype=lib.float64)).sum(), x)
        return g, gg, g.grad_fn.name()

    both(program)


# ----------------------------------------------------------------- corners of reductions, bools and half precision

@pytest.mark.parametrize("expression", [
    "x.sum(dim=())", "x.sum(dim=[])", "x.sum((), keepdim=True)", "x.mean(dim=())", "x.mean(dim=[], keepdim=True)",
    "x.amax(dim=())", "x.amin(dim=[])", "lib.linalg.vector_norm(x, dim=())", "x.all(dim=())", "x.any(dim=[])",
    "lib.tensor(2.).sum(dim=())",
])
def test_an_empty_dim_list_reduces_every_dim_as_torch(expression):
    """torch reads dim=() as every dim for sum, mean, amax, amin and norms, and as no dim for all and any."""
    both(lambda lib: eval(expression, {"lib": lib, "x": lib.tensor([[0., 1, 2], [3, 1, 2]])}), prepare=normalise)


@pytest.mark.parametrize("op", ["sum", "mean", "amax", "amin"])
def test_a_dim_given_twice_is_an_error_as_torch(op):
    both_raise(lambda lib: getattr(lib.ones(2, 3), op)(dim=(0, -2)), RuntimeError, "dim 0 appears multiple times")


@pytest.mark.parametrize("expression, error, fragment", [
    ("b.abs()", NotImplementedError, "not implemented for 'Bool'"),
    ("b.floor()", NotImplementedError, "not implemented for 'Bool'"),
    ("b.ceil()", NotImplementedError, "not implemented for 'Bool'"),
    ("b.trunc()", NotImplementedError, "not implemented for 'Bool'"),
    ("b.round()", NotImplementedError, "not implemented for 'Bool'"),
    ("b.round(decimals=1)", NotImplementedError, "not implemented for 'Bool'"),
    ("b.clamp(min=True)", NotImplementedError, "not implemented for 'Bool'"),
    ("b.view(1, 2).mm(b.view(2, 1))", NotImplementedError, "not implemented for 'Bool'"),
    ("b.view(1, 2) @ b.view(2, 1)", NotImplementedError, "not implemented for 'Bool'"),
    ("lib.dot(b, b)", NotImplementedError, "not implemented for 'Bool'"),
    ("b.relu()", RuntimeError, "Boolean inputs not supported for relu"),
])
def test_ops_without_meaning_for_bools_refuse_them_as_torch(expression, error, fragment):
    both_raise(lambda lib: eval(expression, {"lib": lib, "b": lib.tensor([True, False])}), error, fragment)


@pytest.mark.parametrize("expression", [
    "b.sign()", "lib.tensor(True).sign()", "b.clamp(min=0)", "b.clamp(min=lib.tensor(True))", "b.exp()", "b.sqrt()",
])
def test_ops_that_take_bools_give_torchs_results(expression):
    both(lambda lib: eval(expression, {"lib": lib, "b": lib.tensor([True, False])}), prepare=normalise)


def _every_finite_half() -> np.ndarray:
    halves = np.arange(2 ** 16, dtype=np.uint16).view(np.float16)
    return halves[np.isfinite(halves)]


@pytest.mark.parametrize("name, allowed", [("exp", 0), ("sigmoid", 2), ("tanh", 0), ("log", 0), ("sqrt", 0),
                                           ("reciprocal", 0)])
def test_half_precision_functions_round_as_torch_on_every_half(name, allowed):
    """Half is computed in single and rounded once, as torch does; NumPy's own half exp rounds differently."""
    values = _every_finite_half()
    with np.errstate(all="ignore"):
        ours = getattr(ember.from_numpy(values.copy()), name)().numpy()
        theirs = getattr(torch.from_numpy(values.copy()), name)().numpy()
    differ = ~((ours == theirs) | (np.isnan(ours) & np.isnan(theirs)))
    assert differ.sum() <= allowed, f"{name} differs from torch at {values[differ][:5]}: {ours[differ][:5]}"
    one_ulp = np.abs(ours[differ].astype(np.float64) - theirs[differ]) <= np.spacing(np.abs(theirs[differ]))
    assert one_ulp.all()


# ----------------------------------------------------------------- the recorded graph's shape

GRAPH_SHAPES = [
    "x * 2.0", "2 * x", "x * p", "x + 1", "1 + x", "x - 1", "1 - x", "x / 2", "2 / x", "x ** 2", "2 ** x", "x ** x",
    "lib.where(x > 0, x, 0.)", "lib.where(x > 0, x, p)", "lib.where(x > 0, 1., x)", "x.clamp(0, 1)",
    "x.clamp(min=p)", "x.clamp(max=p)", "x.add(p, alpha=2)", "x.sub(1, alpha=2)", "lib.add(x, 1)", "lib.mul(x, 3)",
    "lib.sub(2, x)", "lib.rsub(x, 2)", "lib.rsub(x, p * 1)", "x.div(2, rounding_mode='floor')",
    "x.sum_to_size(1, 2)", "x.sum_to_size(2)", "x.sum_to_size(2, 1)", "x.sum()", "x.mean(0)", "x.t()", "x[0]",
]


@pytest.mark.parametrize("expression", GRAPH_SHAPES)
def test_recorded_graph_has_torchs_nodes_and_edges(expression):
    """grad_fn's name and next_functions as torch's: numbers torch wraps as tensors show as (None, 0)."""

    def program(lib):
        x, p = lib.ones(2, 2, requires_grad=True), lib.ones(2, 2)
        fn = eval(expression, {"lib": lib, "x": x, "p": p}).grad_fn
        return grad_fn_name_of(fn), [(None if f is None else grad_fn_name_of(f), nr) for f, nr in fn.next_functions]

    both(program)


def grad_fn_name_of(fn) -> str:
    return fn.name().replace("torch::autograd::", "")


# ----------------------------------------------------------------- gradients at special values

SPECIAL_GRADIENTS = [
    ("relu", float("nan")), ("abs", float("nan")), ("abs", 0.0), ("sign", float("nan")), ("pow0", 0.0),
    ("pow0", float("nan")), ("x/x", 1e-40), ("x/x", -1e-40), ("norm1", float("nan")), ("pow2", float("inf")),
    ("sqrt", 0.0), ("log", 0.0), ("reciprocal", 0.0), ("clamp", 1.0), ("clamp", -1.0), ("relu", 0.0),
]
SPECIAL_FUNCTIONS = {
    "relu": lambda lib, x: x.relu(), "abs": lambda lib, x: x.abs(), "sign": lambda lib, x: x.sign(),
    "pow0": lambda lib, x: x ** 0, "pow2": lambda lib, x: x ** 2, "x/x": lambda lib, x: x / x,
    "norm1": lambda lib, x: lib.linalg.vector_norm(x.view(1), 1), "sqrt": lambda lib, x: x.sqrt(),
    "log": lambda lib, x: x.log(), "reciprocal": lambda lib, x: x.reciprocal(), "clamp": lambda lib, x: x.clamp(-1, 1),
}


@pytest.mark.parametrize("name, value", SPECIAL_GRADIENTS)
def test_values_and_gradients_at_special_points_match_torch(name, value):
    """nan, 0, subnormals and bounds: the value and the gradient are torch's, nan where torch's is nan."""

    def program(lib):
        x = lib.tensor(value, dtype=lib.float64, requires_grad=True)
        y = SPECIAL_FUNCTIONS[name](lib, x)
        y.backward()
        return y.detach(), x.grad

    with np.errstate(all="ignore"):
        expected, actual = [np.array([to_numpy_value(v) for v in program(lib)]) for lib in (torch, ember)]
    np.testing.assert_array_equal(actual, expected)


@pytest.mark.parametrize("divisor", [0.0, -0.0, float("nan"), float("inf")])
def test_division_warns_of_nothing_forward_or_backward(divisor):
    """As torch: x / 0 and its gradients (run on arrays) are infinities and nans, quietly."""

    def program(lib):
        x = lib.tensor([1.0, 0.0, -2.0], dtype=lib.float32, requires_grad=True)
        w = lib.tensor([divisor] * 3, dtype=lib.float32, requires_grad=True)
        y = x / w
        y.backward(lib.ones(3))
        return y.detach(), x.grad, w.grad

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ours = program(ember)
    with np.errstate(all="ignore"):
        theirs = program(torch)
    for mine, their in zip(ours, theirs):
        np.testing.assert_array_equal(mine.numpy(), their.numpy())


_EVERY_HALF = np.arange(2 ** 16, dtype=np.uint16).view(np.float16)
_EVERY_HALF = _EVERY_HALF[np.isfinite(_EVERY_HALF)]
HALF_WITH_NUMBERS = {
    "x * 0.1": lambda lib, x, y: x * 0.1, "0.3 * x": lambda lib, x, y: 0.3 * x, "x * 7e4": lambda lib, x, y: x * 7e4,
    "x * 3": lambda lib, x, y: x * 3, "x * 1e300": lambda lib, x, y: x * 1e300, "x / 0.1": lambda lib, x, y: x / 0.1,
    "x / 3e-3": lambda lib, x, y: x / 3e-3, "x / 7": lambda lib, x, y: x / 7, "0.1 / x": lambda lib, x, y: 0.1 / x,
    "x + 0.1": lambda lib, x, y: x + 0.1, "0.1 - x": lambda lib, x, y: 0.1 - x,
    "add alpha": lambda lib, x, y: lib.add(x, y, alpha=0.1), "sub alpha": lambda lib, x, y: lib.sub(x, y, alpha=0.3),
    "add number alpha": lambda lib, x, y: lib.add(x, 0.1, alpha=3),
    "mul_": lambda lib, x, y: (x * 1).mul_(0.3), "div_": lambda lib, x, y: (x * 1).div_(0.1),
    "add_ alpha": lambda lib, x, y: (x * 1).add_(y, alpha=-0.01),
}


@pytest.mark.parametrize("name", sorted(HALF_WITH_NUMBERS))
def test_half_arithmetic_with_numbers_is_torchs_bit_for_bit(name):
    """torch multiplies and divides half tensors by numbers (and scales by alpha) in single precision, rounding
    once to half; every finite half, its value and its gradients."""

    def program(lib):
        x = lib.tensor(_EVERY_HALF, requires_grad=True)
        y = lib.tensor(np.random.default_rng(0).permutation(_EVERY_HALF), requires_grad=True)
        out = HALF_WITH_NUMBERS[name](lib, x, y)
        out.backward(lib.tensor(np.linspace(-2, 2, out.numel()).astype(np.float16)))
        return [t.detach().numpy() for t in (out, x.grad, y.grad if y.grad is not None else y * 0)]

    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        expected, actual = program(torch), program(ember)
    for mine, theirs in zip(actual, expected):
        assert mine.dtype == theirs.dtype
        np.testing.assert_array_equal(mine, theirs)


def to_numpy_value(t) -> float:
    return float(t.detach().numpy()) if t is not None else float("nan")
