"""Twin tests of the gather, scatter, index and mask ops: what the op table cannot say (keyword forms, tuples,
out=, gradients at ties and zeros, ops without a derivative)."""
import itertools
import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

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
    "lib.take_along_dim(x, i, dim=1)", "x.take_along_dim(i, 1)",
    "lib.put(x, lib.tensor([0, 1]), s[0], accumulate=True)",
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
    "lib.index_copy(x, 0, lib.tensor([1]), x[:1], out=out)",
    "lib.index_reduce(x, 0, lib.tensor([1]), x[:1], 'prod', out=out)",
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
    ("x.index_reduce(1, lib.tensor([3]), x[:, :1], 'prod')", IndexError, "index"),
    ("x.index_reduce_(0, lib.tensor([-3]), lib.ones(1, 3), 'amax')", IndexError, "index"),
    ("x.index_add(1, lib.tensor([3]), x[:, :1])", RuntimeError, "index 3 is out of bounds"),
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


def test_put_and_index_fill_write_into_a_copy_of_their_input():
    def program(lib):
        x = lib.zeros(3)
        y = lib.put(x, lib.tensor([0]), lib.ones(1))
        z = x.index_fill(0, lib.tensor([1]), 2.0)
        return x, y, z, y.data_ptr() != x.data_ptr()

    both(program)


@pytest.mark.parametrize("expression", [
    "x.masked_fill(x > 10, 0.)", "x.masked_scatter(x > 10, L.arange(100., 124.))", "x.roll(1, 2)", "x.roll(-1)",
    "x.tril(1)", "x.triu(-1)",
    # beyond this file's ops, the same layout: scans and softmax
    "x.cumsum(1)", "x.cumprod(0)", "x.logcumsumexp(2)", "x.softmax(1)", "x.log_softmax(-1)", "x.half().softmax(0)",
])
def test_copies_of_a_permuted_tensor_are_contiguous_as_torch(expression):
    def program(L):
        x = L.arange(24.0).reshape(2, 3, 4).permute(2, 0, 1)
        y = eval(expression, {"L": L, "x": x})
        return y, y.is_contiguous(), y.view(-1)

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


# ----------------------------------------------------------------- every mix of 0-d, 1-element and 1-d operands

SMALL_SHAPES = {"0-d": (), "(1,)": (1,), "(2,)": (2,), "(1, 1)": (1, 1)}
SMALL_OPS = {
    "gather": lambda m, a, i, c: m.gather(a, 0, i),
    "scatter": lambda m, a, i, c: m.scatter(a, 0, i, c),
    "scatter_add": lambda m, a, i, c: m.scatter_add(a, 0, i, c),
    "scatter_reduce": lambda m, a, i, c: m.scatter_reduce(a, 0, i, c, "amax"),
    "index_select": lambda m, a, i, c: m.index_select(a, 0, i),
    "index_add": lambda m, a, i, c: m.index_add(a, 0, i, c),
    "index_copy": lambda m, a, i, c: m.index_copy(a, 0, i, c),
    "index_fill": lambda m, a, i, c: m.index_fill(a, 0, i, c.sum()),
    "index_reduce": lambda m, a, i, c: m.index_reduce(a, 0, i, c, "amax"),
    "take": lambda m, a, i, c: m.take(a, i),
    "put": lambda m, a, i, c: m.put(a, i, c),
    "masked_scatter": lambda m, a, i, c: m.masked_scatter(a, i == 0, c),
    "masked_select": lambda m, a, i, c: m.masked_select(a, i == 0),
    "masked_fill": lambda m, a, i, c: m.masked_fill(a, i == 0, c.sum()),
    "take_along_dim": lambda m, a, i, c: m.take_along_dim(a, i, 0),
}


def _small_outcome(lib, op, shapes):
    """The result, its gradients' shapes and values, or the type of the error (forward or backward)."""
    x_shape, index_shape, src_shape = (SMALL_SHAPES[s] for s in shapes)
    try:
        x = lib.full(x_shape, 2.0, dtype=lib.float64, requires_grad=True)
        src = lib.arange(1.0, 1.0 + int(np.prod(src_shape)), dtype=lib.float64).reshape(src_shape).requires_grad_()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            out = SMALL_OPS[op](lib, x, lib.zeros(index_shape, dtype=lib.int64), src)
        grads = lib.autograd.grad(out.sum(), (x, src), allow_unused=True)
        return out.detach().numpy().tolist(), tuple(out.shape), [None if g is None else g.shape for g in grads]
    except (RuntimeError, IndexError, TypeError) as error:
        return type(error).__name__


@pytest.mark.parametrize("op", sorted(SMALL_OPS))
def test_0d_and_1_element_operands_as_torch(op):
    """Every mix of 0-d, one-element and 1-d input, index and source: torch's result or torch's type of error."""
    for shapes in itertools.product(SMALL_SHAPES, repeat=3):
        theirs, mine = _small_outcome(torch, op, shapes), _small_outcome(ember, op, shapes)
        theirs = theirs if isinstance(theirs, str) else (theirs[0], theirs[1], [g and tuple(g) for g in theirs[2]])
        mine = mine if isinstance(mine, str) else (mine[0], mine[1], [g and tuple(g) for g in mine[2]])
        assert mine == theirs, f"{op} of input, index, source {shapes}: ember {mine}, torch {theirs}"


@st.composite
def masked_cases(draw):
    """(shape, mask): a mask that broadcasts with the input (fewer dims, or ones), sometimes growing it."""
    shape = tuple(draw(st.lists(st.integers(1, 3), min_size=0, max_size=3)))
    mask_shape = tuple(n if draw(st.booleans()) else 1 for n in shape)[draw(st.integers(0, len(shape))):]
    if draw(st.integers(0, 4)) == 0:
        mask_shape = (2,) + tuple(n for n in shape)  # a leading dim the input lacks: the result grows
    count = int(np.prod(mask_shape))
    return shape, np.array(draw(st.lists(st.booleans(), min_size=count, max_size=count)), bool).reshape(mask_shape)


@settings(max_examples=150, deadline=None)
@given(masked_cases(), st.sampled_from(["masked_fill", "masked_fill_tensor", "masked_scatter", "masked_select"]))
def test_masked_ops_on_random_masks_match_torch(case, op):
    shape, mask = case

    def program(lib):
        x = leaf(lib, np.random.default_rng(1).uniform(-2, 2, shape))
        m = lib.tensor(mask)
        if op == "masked_fill":
            out, leaves = x.masked_fill(m, -0.5), (x,)
        elif op == "masked_fill_tensor":
            value = leaf(lib, 0.25)
            out, leaves = x.masked_fill(m, value), (x, value)
        elif op == "masked_scatter":
            size = int(np.broadcast_to(mask, np.broadcast_shapes(shape, mask.shape)).sum()) + 2
            source = leaf(lib, np.arange(size, dtype=float))
            out, leaves = x.masked_scatter(m, source), (x, source)
        else:
            out, leaves = x.masked_select(m), (x,)
        return out, _grads_of(lib, out, leaves)

    both(program)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(1, 3), min_size=0, max_size=3), st.data(), st.booleans())
def test_take_and_put_on_random_indices_match_torch(shape, data, accumulate):
    size = int(np.prod(shape))
    indices = data.draw(st.lists(st.integers(-size, size - 1), min_size=0, max_size=6))
    if not accumulate:  # a repeated place would leave the winner to chance
        indices = list({i % size: i for i in indices}.values())

    def program(lib):
        x = leaf(lib, np.random.default_rng(1).uniform(-2, 2, shape))
        index = lib.tensor(indices, dtype=lib.int64)
        source = leaf(lib, np.random.default_rng(2).uniform(-2, 2, len(indices)))
        taken, put = x.take(index), x.put(index, source, accumulate=accumulate)
        return taken, put, _grads_of(lib, taken * 1, (x,)), _grads_of(lib, put, (x, source))

    both(program)


@pytest.mark.parametrize("indices, shape", [
    ([4, 1], (2, 3)), (5, (2, 3)), ([[4], [1]], (2, 3)), (-1, (2, 3)), (2, ()), ([], (2, 3)), (1, 4),
    (1, ember.Size([4])), ([0, 23, 7], (2, 3, 4)),
])
def test_unravel_index_as_torch(indices, shape):
    both(lambda lib: lib.unravel_index(lib.tensor(indices, dtype=lib.int64), shape if not isinstance(shape, ember.Size)
                                       else lib.Size(shape)))


@pytest.mark.parametrize("expression, error", [
    ("lib.unravel_index(lib.tensor(1.), (2, 3))", TypeError), ("lib.unravel_index(lib.tensor(True), (4,))", TypeError),
    ("lib.unravel_index(lib.tensor(1), (2, -3))", ValueError),
])
def test_unravel_index_refuses_as_torch(expression, error):
    both_raise(lambda lib: eval(expression, {"lib": lib}), error)


def test_unravel_index_refuses_what_torch_wraps_around():
    """torch reads an index beyond the tensor modulo its size (6 in a 2x3 tensor as 0); ember says it is out of
    bounds."""
    with pytest.raises(RuntimeError, match="index 6 is out of bounds"):
        ember.unravel_index(ember.tensor(6), (2, 3))


@pytest.mark.parametrize("expression", [
    "x.gather(1, i)", "x.scatter(1, i, s)", "x.scatter_add(1, i, s)", "x.scatter_reduce(1, i, s, 'amax')",
    "x.index_select(1, i[0])", "x.index_add(1, i[0], s)", "x.index_fill(1, i[0], 2.)", "x.take(i)",
    "x.put(i[0], s[0])", "x.masked_fill(m, 0.)", "x.masked_select(m)", "x.masked_scatter(m, s.reshape(-1))",
])
def test_an_index_or_mask_changed_after_use_is_an_error_in_backward_as_torch(expression):
    """The index (or mask) is saved for the backward: changed in place before it, it is refused, not misread."""

    def program(lib):
        x, s = leaf(lib, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]), leaf(lib, [[7.0, 8.0], [9.0, 10.0]])
        i, m = lib.tensor([[0, 2], [1, 0]]), lib.tensor([True, False, True])
        y = eval(expression, {"lib": lib, "x": x, "s": s, "i": i, "m": m})
        i.add_(0)
        m.logical_not_() if hasattr(m, "logical_not_") else m.copy_(m)
        y.sum().backward()

    both_raise(program, RuntimeError, "modified by an inplace operation")


HALF_ROUNDED_TWICE = 1 + 2 ** -11 + 2 ** -40  # to half directly: 1 + 2**-10; through single, as torch: 1


@pytest.mark.parametrize("expression", [
    "x.masked_fill(m, v)", "x.index_fill(0, i, v)", "x.scatter(0, i, v)", "x.masked_fill(m, lib.tensor(v).double())",
    "x.index_fill(0, i, lib.tensor(v).double())", "x.masked_fill(m, float('inf'))",
])
def test_a_double_fills_a_half_tensor_through_single_as_torch(expression):
    both(lambda lib: eval(expression, {"lib": lib, "x": lib.zeros(2, dtype=lib.float16), "m": lib.tensor([True, False]),
                                       "i": lib.tensor([0]), "v": HALF_ROUNDED_TWICE}))


@pytest.mark.parametrize("expression", [
    "x.masked_fill(m, 1e5)", "x.masked_fill(m, lib.tensor(1e6))", "x.index_fill(0, i, lib.tensor(7e4))",
    "x.scatter(0, i, 1e6)", "x.long().masked_fill(m, lib.tensor(2 ** 70.))", "x.int().index_fill(0, i, 2 ** 40)",
])
def test_a_fill_value_that_does_not_fit_is_an_error_as_torch(expression):
    both_raise(lambda lib: eval(expression, {"lib": lib, "x": lib.zeros(2, dtype=lib.float16),
                                             "m": lib.tensor([True, False]), "i": lib.tensor([0])}),
               RuntimeError, "without overflow")


@pytest.mark.parametrize("expression", [
    "x.scatter_add(1, i, x)", "x.scatter_reduce(1, i, x * 3, 'sum')", "x.scatter_reduce(1, i, x, 'prod')",
    "x.scatter_reduce(1, i, x * 3, 'mean')", "x.scatter_reduce(1, i, x * 3, 'mean', include_self=False)",
    "x.index_add(0, j, s)", "x.index_reduce(0, j, s, 'mean')", "x.index_reduce(0, j, s, 'prod', include_self=False)",
    "x.put(i[:5].reshape(-1), x[:5].reshape(-1), accumulate=True)", "x.scatter(1, i, 1.7, reduce='multiply')",
])
def test_half_precision_reductions_round_as_torch(expression):
    """torch's scatter kernels combine half values in single and round once (a mean's sum before dividing);
    index_reduce and put round at each step."""
    rng = np.random.default_rng(0)
    x, s = rng.uniform(-3, 3, (50, 40)).astype(np.float16), rng.uniform(-3, 3, (30, 40)).astype(np.float16)
    i, j = rng.integers(0, 40, (50, 40)), rng.integers(0, 50, 30)

    def program(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return eval(expression, {"x": lib.tensor(x), "s": lib.tensor(s), "i": lib.tensor(i), "j": lib.tensor(j)})

    np.testing.assert_array_equal(program(ember).numpy(), program(torch).numpy())


@pytest.mark.parametrize("shape, dim, count", [((50, 40), 0, 300), ((50, 40), 1, 7), ((50,), 0, 100), ((4, 3, 5), 2, 9)])
@pytest.mark.parametrize("alpha", [0.1, -3])
def test_single_precision_index_add_with_alpha_rounds_as_torch(shape, dim, count, alpha):
    """torch adds alpha * source with one rounding per index (a fused multiply-add), in the order of the index;
    for a 1-d tensor it rounds the product first."""
    rng = np.random.default_rng(0)
    x = rng.uniform(-3, 3, shape).astype(np.float32)
    source = rng.uniform(-3, 3, tuple(count if d == dim else n for d, n in enumerate(shape))).astype(np.float32)
    index = rng.integers(0, shape[dim], count)

    def program(lib):
        return lib.tensor(x).index_add(dim, lib.tensor(index), lib.tensor(source), alpha=alpha).numpy()

    np.testing.assert_array_equal(program(ember), program(torch))


@pytest.mark.parametrize("expression", [
    "x.scatter_reduce(1, i, s, 'prod')", "x.scatter_reduce(1, i, s, 'prod', include_self=False)",
    "x.scatter_reduce(1, i, s, 'mean', include_self=False)", "x.scatter_reduce(1, i, s, 'amax')",
    "x.index_reduce(0, j, s, 'prod')", "x.index_reduce(0, j, s, 'mean')", "x.index_add(0, j, s, alpha=0.3)",
    "x.gather(1, i) * s", "x.masked_scatter(x > 1, s)", "x.take(i) * s",
])
def test_single_precision_values_and_gradients_are_torchs_bit_for_bit(expression):
    rng = np.random.default_rng(1)
    x, s = rng.uniform(0.5, 2, (20, 30)).astype(np.float32), rng.uniform(0.5, 2, (20, 30)).astype(np.float32)
    x[0, :5], s[1, :3] = 0, 0
    i, j = rng.integers(0, 30, (20, 30)), rng.integers(0, 20, 20)

    def program(lib):
        a, b = lib.tensor(x, requires_grad=True), lib.tensor(s, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            y = eval(expression, {"x": a, "s": b, "i": lib.tensor(i), "j": lib.tensor(j)})
        grads = lib.autograd.grad((y * 0.7).sum(), (a, b))
        return [t.detach().numpy() for t in (y, *grads)]

    for mine, theirs in zip(program(ember), program(torch)):
        np.testing.assert_array_equal(mine, theirs)


@pytest.mark.parametrize("condition", [[[0, 1], [2, 0]], 3.0, [], [True, False, True], [[[0.5]]]])
def test_where_of_a_condition_alone_gives_the_indices_as_torch(condition):
    both(lambda m: m.where(m.tensor(condition)))


@pytest.mark.parametrize("shape", [(3, 3), (5, 3), (7, 3), (3, 5), (2, 2, 2), (4, 4, 4, 4)])
@pytest.mark.parametrize("wrap", [False, True])
def test_fill_diagonal_matches_torch(shape, wrap):
    both(lambda lib: lib.arange(float(np.prod(shape))).reshape(shape).fill_diagonal_(-1.5, wrap=wrap))


def test_fill_diagonal_backward_zeroes_the_overwritten_entries():
    def program(lib):
        a = leaf(lib, np.ones((4, 3)).tolist())
        b = (a * 3).fill_diagonal_(7.0, wrap=True)
        (b * b).sum().backward()
        return b, a.grad
    both(program)


@pytest.mark.parametrize("shape, fragment", [((3,), "dimensions must larger than 1"),
                                              ((2, 3, 4), "all dimensions of input must be of equal length")])
def test_fill_diagonal_rejects_what_torch_rejects(shape, fragment):
    both_raise(lambda lib: lib.zeros(shape).fill_diagonal_(1.0), RuntimeError, fragment)


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 2), st.lists(st.integers(0, 4), min_size=1, max_size=40),
       st.sampled_from(["float32", "float64", "float16", "int64"]), st.integers(0, 2 ** 16))
def test_slices_added_in_rounds_are_add_at_to_the_bit(dim, index, dtype, seed):
    """index_add and index_select's gradient add whole slices in rounds (no index twice in a round); each place
    must get the same values in the same order as ufunc.at adds them, however often an index repeats."""
    from ember._ops.scatter import _add_slices

    rng = np.random.default_rng(seed)
    flat = np.array(index, np.int64)
    out_shape, values_shape = [30, 40, 20], [30, 40, 20]  # beyond the size that add.at keeps
    out_shape[dim], values_shape[dim] = 5, len(flat)
    out = (rng.standard_normal(out_shape) * 100).astype(dtype)
    values = (rng.standard_normal(values_shape) * 100).astype(dtype)
    expected = out.astype(np.float32) if dtype == "float16" else out.copy()
    np.add.at(expected, (slice(None),) * dim + (flat,), values.astype(expected.dtype))
    _add_slices(out, dim, flat, values)
    np.testing.assert_array_equal(out, expected.astype(dtype))


@pytest.mark.parametrize("value", [lambda lib: lib.tensor(2 + 0j), lambda lib: 2 + 0j,
                                   lambda lib: lib.tensor(3 + 0j, dtype=lib.complex128)])
def test_index_fill_refuses_a_complex_value_for_a_real_tensor_as_torch(value):
    both_raise(lambda lib: lib.zeros(3).index_fill_(0, lib.tensor([1]), value(lib)), RuntimeError,
               "Converting complex Scalar to non-complex type")
    both(lambda lib: lib.zeros(3, dtype=lib.complex64).index_fill_(0, lib.tensor([1]), value(lib)))


def test_masked_fill_takes_a_complex_value_without_an_imaginary_part_quietly_as_torch():
    def program(lib):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            x = lib.tensor([1, 0, 2], dtype=lib.int8)
            filled = [x.masked_fill(x != 0, lib.tensor(2 + 0j)), x.float().masked_fill(x == 0, lib.tensor(-1.5 + 0j))]
        return filled, len(caught)

    both(program)


def test_index_reduce_warns_once_that_it_is_in_beta_as_torch(monkeypatch):
    monkeypatch.setattr(ember._tensor, "_warned", set())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(2):
            ember.ones(2).index_reduce(0, ember.tensor([0]), ember.ones(1), "prod")
    assert [str(w.message) for w in caught] == ["index_reduce() is in beta and the API may change at any time."]
    assert caught[0].filename == __file__
