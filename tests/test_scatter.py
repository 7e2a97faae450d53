"""Twin tests of the gather, scatter, index and mask ops: what the op table cannot say (keyword forms, tuples,
out=, gradients at ties and zeros, ops without a derivative)."""
import warnings

import numpy as np
import pytest
import torch

import ember
from twins import both, both_raise, grad_fn_name, leaf, normalise


def _index(lib, values):
    return lib.tensor(values)


def test_legacy_scatter_reduce_has_no_derivative_as_torch():
    """torch records scatter(..., reduce=) with a node that refuses backward; the forward works."""

    def program(lib):
        x = leaf(lib, [[1.0, 2.0], [3.0, 4.0]])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            y = x.scatter(1, _index(lib, [[1], [0]]), leaf(lib, [[5.0], [6.0]]), reduce="multiply")
        return y, grad_fn_name(y)

    both(program)
    both_raise(lambda lib: program(lib)[0].sum().backward(), RuntimeError, "derivative for .*scatter")


@pytest.mark.parametrize("reduce", ["add", "multiply"])
def test_legacy_scatter_reduce_in_place_with_a_number(reduce):
    both(lambda lib: lib.arange(6.).view(2, 3).scatter_(1, _index(lib, [[0, 0], [2, 1]]), 2.0, reduce=reduce))


@pytest.mark.parametrize("expression", [
    "lib.scatter(x, 1, i, src=s)", "lib.scatter(x, 1, i, value=2.5)", "x.scatter(dim=1, index=i, src=s)",
    "x.scatter(1, i, value=-1)", "lib.gather(x, 1, i, sparse_grad=True)", "x.gather(dim=1, index=i)",
    "lib.index_add(x, 0, lib.tensor([1, 1]), x, alpha=0.5)", "x.index_fill(1, lib.tensor([0]), value=3.)",
    "lib.take_along_dim(x, i, dim=1)", "x.take_along_dim(i, 1)", "lib.put(x, lib.tensor([0, 1]), s[0], accumulate=True)",
    "x.scatter_reduce(1, i, s, 'mean', include_self=False)", "x.index_reduce(0, lib.tensor([1, 1]), x, 'amax')",
    "lib.masked_fill(x, x > 2, value=0.)", "x.masked_scatter(x > 2, s.reshape(-1))", "lib.argwhere(x > 2)",
])
def test_keyword_and_method_forms_as_torch(expression):
    def program(lib):
        x = lib.arange(6.).view(2, 3)
        i, s = lib.tensor([[2, 0], [1, 1]]), lib.tensor([[10., 20.], [30., 40.]])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # index_reduce is "in beta" in torch
            return eval(expression, {"lib": lib, "x": x, "i": i, "s": s})

    both(program)


@pytest.mark.parametrize("values", [[[1, 0], [2, 3]], [[0, 0], [2, 0]], [[True, False]], [[0.5]], 3, 0])
def test_nonzero_as_tuple_indexes_what_it_found(values):
    def program(lib):
        x = lib.tensor(values)
        found = x.nonzero(as_tuple=True)
        return found, lib.nonzero(x), x.argwhere(), x[found] if x.dim() else None

    both(program)


@pytest.mark.parametrize("src, x", [
    ([2.0, 0.0, 3.0, 4.0], [1.0, 5.0]),  # one zero in a group
    ([0.0, 0.0, 3.0, 4.0], [1.0, 5.0]),  # two zeros in a group
    ([2.0, 3.0, 0.0, 4.0], [0.0, 5.0]),  # self zero
])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_prod_gradient_at_zeros_as_torch(src, x, include_self):
    def program(lib):
        a, b = leaf(lib, x), leaf(lib, src)
        out = a.scatter_reduce(0, lib.tensor([0, 0, 0, 1]), b, "prod", include_self=include_self)
        return lib.autograd.grad(out, (a, b), lib.tensor([1.5, -2.0], dtype=lib.float64))

    both(program)


@pytest.mark.parametrize("reduce", ["amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_extremes_share_the_gradient_among_ties_as_torch(reduce, include_self):
    def program(lib):
        a, b = leaf(lib, [2.0, 1.0, 7.0]), leaf(lib, [2.0, 2.0, 1.0, 1.0])
        out = lib.scatter_reduce(a, 0, lib.tensor([0, 0, 1, 1]), b, reduce, include_self=include_self)
        return out, lib.autograd.grad(out, (a, b), lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64))

    both(program)


@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_mean_of_integers_rounds_down_as_torch(include_self):
    both(lambda lib: lib.ones(3, dtype=lib.int64).scatter_reduce(
        0, lib.tensor([0, 0, 1, 2]), lib.tensor([-1, 2, -4, 7]), "mean", include_self=include_self))


@pytest.mark.parametrize("dtype", ["int32", "int64", "float32"])
def test_scatter_reduce_amax_without_self_leaves_unwritten_places_as_torch(dtype):
    both(lambda lib: lib.full((4,), 9, dtype=getattr(lib, dtype)).scatter_reduce(
        0, lib.tensor([0, 0, 2]), lib.tensor([1, 3, -5], dtype=getattr(lib, dtype)), "amax", include_self=False))


@pytest.mark.parametrize("expression", [
    "lib.gather(x, 1, i, out=out)", "lib.index_select(x, 0, lib.tensor([1, 0]), out=out)",
    "lib.masked_select(x, x > 1, out=out)", "lib.take_along_dim(x, i, 1, out=out)",
    "lib.nonzero(x, out=lib.zeros(0, dtype=lib.int64))",
    "lib.index_add(x, 1, lib.tensor([0, 0]), x[:, :2], out=out)", "lib.scatter(x, 1, i, x[:, :2], out=out)",
    "lib.scatter(x, 1, i, value=2., out=out)", "lib.scatter_add(x, 1, i, x[:, :2], out=out)",
    "lib.scatter_reduce(x, 1, i, x[:, :2], 'amax', out=out)", "lib.take(x, i, out=out)",
    "lib.nonzero_static(x, size=3, out=lib.zeros(0, dtype=lib.int64))", "lib.slice_scatter(x, x[:1], 0, 1, out=out)",
    "lib.index_copy(x, 0, lib.tensor([1]), x[:1], out=out)", "lib.index_reduce(x, 0, lib.tensor([1]), x[:1], 'prod', out=out)",
])
def test_out_receives_the_result_as_torch(expression):
    def program(lib):
        x, i, out = lib.arange(6.).view(2, 3), lib.tensor([[2, 0], [1, 1]]), lib.zeros(1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # the resize of a non-empty out warns in both
            result = eval(expression, {"lib": lib, "x": x, "i": i, "out": out})
        return result, result is out or expression.count("out=out") == 0

    both(program)


@pytest.mark.parametrize("expression, error, fragment", [
    ("x.gather(1, lib.tensor([[0], [-1]]))", RuntimeError, "index -1 is out of bounds for dimension 1 with size 3"),
    ("x.gather(1, lib.tensor([[0.]]))", RuntimeError, "int32/int64"),
    ("x.scatter(1, lib.tensor([[0]]), x.double())", RuntimeError, "dtype"),
    ("x.scatter_add(1, lib.tensor([[0], [1], [2]]), lib.ones(3, 1))", RuntimeError, "no larger than self"),
    ("x.scatter_reduce(1, lib.tensor([[0]]), x, 'add')", RuntimeError, "sum, prod, mean, amax or amin"),
    ("x.index_reduce(0, lib.tensor([0]), x[:1], 'sum')", RuntimeError, "prod, mean, amax or amin"),
    ("x.index_select(0, lib.tensor([5]))", IndexError, "index"),
    ("x.take(lib.tensor([6]))", IndexError, "out of range"),
    ("x.put_(lib.tensor([-7]), lib.ones(1))", IndexError, "out of range"),
    ("x.masked_fill(x > 1, 'a')", TypeError, ""),
    ("x.masked_fill_(lib.ones(2, 2, 3, dtype=lib.bool), 1.)", RuntimeError, "shape"),
    ("x.masked_scatter_(lib.ones(3, 2, 3, dtype=lib.bool), lib.ones(18))", RuntimeError, ""),
    ("x.index_copy(0, lib.tensor([0, 1]), lib.ones(3, 3))", IndexError, "Number of indices"),
    ("x.index_copy(0, lib.tensor([0, 1]), lib.ones(2, 2))", RuntimeError, "slice shape"),
    ("x.index_copy(0, lib.tensor([0, 1]), lib.ones(2, 3, 1))", IndexError, "dimensionality"),
    ("x.gather(1, [[0]])", TypeError, "Tensor"),
])
def test_bad_arguments_raise_as_torch(expression, error, fragment):
    both_raise(lambda lib: eval(expression, {"lib": lib, "x": lib.arange(6.).view(2, 3)}), error, fragment)


def test_in_place_forms_write_into_a_view_and_reach_its_base():
    """x[0].index_add_(...) changes x, and the gradient of x's leaf sees the write, as in torch."""

    def program(lib):
        a = leaf(lib, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        s = leaf(lib, [10.0, 20.0])
        x = a * 1
        x[0].index_add_(0, lib.tensor([2, 2]), s, alpha=2)
        x[1].masked_fill_(lib.tensor([True, False, True]), 0.0)
        x.scatter_(1, lib.tensor([[1], [0]]), x.detach()[:, :1] * 3)
        grads = lib.autograd.grad((x * lib.arange(6.).view(2, 3).double()).sum(), (a, s))
        return x, grads, grad_fn_name(x)

    both(program)


def test_index_put_and_put_share_no_memory_with_their_input():
    def program(lib):
        x = lib.zeros(3)
        y = lib.put(x, lib.tensor([0]), lib.ones(1))
        z = x.index_fill(0, lib.tensor([1]), 2.0)
        return x, y, z, y.data_ptr() != x.data_ptr()

    both(program)


def test_index_put_function_writes_in_place_as_torch():
    def program(lib):
        x = lib.zeros(2, 3)
        y = lib.index_put_(x, (lib.tensor([1, 1]), lib.tensor([0, 2])), lib.tensor([4., 5.]), accumulate=True)
        return x, y is x, x._version

    both(program)


def test_result_dtypes_as_torch():
    both(lambda lib: [lib.nonzero(lib.ones(2)).dtype, lib.take(lib.ones(2, dtype=lib.int32), lib.tensor([0])).dtype],
         prepare=normalise)


# ----------------------------------------------------------------- random shapes and indices (hypothesis)

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@st.composite
def gather_cases(draw):
    """(shape, dim, index, src shape): an index no larger than the input apart from ``dim``, values in range."""
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    dim = draw(st.integers(-len(shape), len(shape) - 1))
    index_shape = tuple(draw(st.integers(0 if d == dim % len(shape) else 1, 5 if d == dim % len(shape) else n))
                        for d, n in enumerate(shape))
    count = int(np.prod(index_shape))
    values = draw(st.lists(st.integers(0, shape[dim] - 1), min_size=count, max_size=count))
    return shape, dim, np.array(values, np.int64).reshape(index_shape)


def _grads_of(lib, out, leaves):
    weights = lib.tensor(np.random.default_rng(5).uniform(-1, 1, tuple(out.shape)), dtype=lib.float64)
    grads = lib.autograd.grad((out * weights).sum(), leaves, allow_unused=True, create_graph=True)
    grads = [lib.zeros_like(t) if g is None else g for g, t in zip(grads, leaves)]
    curved = [g for g in grads if g.requires_grad]
    if not curved:
        return grads
    second = lib.autograd.grad(sum((g * g).sum() for g in curved), leaves, allow_unused=True)
    return grads + [lib.zeros_like(t) if g is None else g for g, t in zip(second, leaves)]


REDUCTIONS = ["sum", "prod", "mean", "amax", "amin"]


@settings(max_examples=120, deadline=None)
@given(gather_cases(), st.sampled_from(["gather", "scatter_add"] + REDUCTIONS), st.booleans())
def test_gather_and_scatter_reduce_on_random_indices_match_torch(case, op, include_self):
    shape, dim, index = case

    def program(lib):
        x = leaf(lib, np.random.default_rng(1).uniform(0.5, 2, shape))
        i = lib.tensor(index)
        if op == "gather":
            out, leaves = x.gather(dim, i), (x,)
        else:
            src = leaf(lib, np.random.default_rng(2).uniform(0.5, 2, index.shape))
            out = x.scatter_add(dim, i, src) if op == "scatter_add" else \
                x.scatter_reduce(dim, i, src, op, include_self=include_self)
            leaves = (x, src)
        return out, _grads_of(lib, out, leaves)

    both(program)


@settings(max_examples=120, deadline=None)
@given(gather_cases(), st.sampled_from(["index_select", "index_add", "index_copy", "index_fill", "prod", "mean",
                                        "amax", "amin"]), st.booleans())
def test_index_ops_on_random_indices_match_torch(case, op, include_self):
    shape, dim, index = case
    flat = index.reshape(-1)[:5]
    if op == "index_copy":  # a repeated index would leave the winner to chance
        flat = np.unique(flat)

    def program(lib):
        x = leaf(lib, np.random.default_rng(1).uniform(0.5, 2, shape))
        i = lib.tensor(flat)
        source_shape = list(shape)
        source_shape[dim] = len(flat)
        source = leaf(lib, np.random.default_rng(2).uniform(0.5, 2, source_shape))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # index_reduce is "in beta" in torch
            if op == "index_select":
                out, leaves = x.index_select(dim, i), (x,)
            elif op == "index_fill":
                out, leaves = x.index_fill(dim, i, source.sum()), (x, source)
            elif op in ("index_add", "index_copy"):
                out, leaves = getattr(x, op)(dim, i, source), (x, source)
            else:
                out, leaves = x.index_reduce(dim, i, source, op, include_self=include_self), (x, source)
        return out, _grads_of(lib, out, leaves)

    both(program)
