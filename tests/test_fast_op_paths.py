"""Twin tests of the ops' short paths for their usual calls, and of where those paths hand over to the general
ones: cached grid keys and offsets reused across shapes, gradients that apply already-checked Functions,
cumsum's reversed scan, reductions written in place, and cat, stack and expand on the layouts they skip."""
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ember
from twins import both, both_raise, grad_fn_name, leaf

_SHAPES = st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple)


def _values(shape: tuple, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape)


@settings(max_examples=15, deadline=None)
@given(shape=_SHAPES, seed=st.integers(0, 99), data=st.data())
def test_gather_and_its_gradient_over_shapes_that_share_cached_keys(shape, seed, data):
    """Each shape's grid key is made once and reused: values and gradients stay right as shapes come and go."""
    dim = data.draw(st.integers(0, len(shape) - 1))
    index = np.random.default_rng(seed).integers(0, shape[dim], shape)

    def program(lib):
        x = leaf(lib, _values(shape, seed))
        out = x.gather(dim, lib.tensor(index))
        (out * lib.tensor(_values(shape, seed + 1))).sum().backward()
        return out, x.grad, grad_fn_name(out)

    both(program)


def test_gather_index_select_and_scatter_add_differentiate_twice_as_torch():
    def program(lib):
        x = leaf(lib, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        gathered = x.gather(1, lib.tensor([[2, 0], [1, 1]]))
        picked = x.index_select(1, lib.tensor([2, 0, 2]))
        (g,) = lib.autograd.grad((gathered ** 2).sum() + (picked ** 3).sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x)
        return g, gg, grad_fn_name(g)

    both(program)
    x = ember.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=ember.float64, requires_grad=True)
    index = ember.tensor([[1, 1], [0, 1]])
    assert ember.autograd.gradgradcheck(lambda t: t.gather(1, index) ** 2, (x,))
    assert ember.autograd.gradgradcheck(lambda t: t.index_select(0, ember.tensor([1, 1, 0])) ** 2, (x,))


@pytest.mark.parametrize("index", [[[0, -1]], [[0, 2]]])
def test_gather_refuses_an_index_out_of_range_either_way_as_torch(index):
    both_raise(lambda lib: lib.zeros(1, 2).gather(1, lib.tensor(index)), RuntimeError, "out of bounds")


@pytest.mark.parametrize("index", [[0, -1], [0, 5], [-3]])
def test_index_select_refuses_an_index_out_of_range_as_torch(index):
    both_raise(lambda lib: lib.zeros(3).index_select(0, lib.tensor(index)), IndexError, "out of range")


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64"])
@pytest.mark.parametrize("shape, dim", [((5,), 0), ((3, 4), 1), ((3, 4), 0), ((), 0), ((2, 1, 3), 1)])
def test_cumsum_forward_and_gradient_as_torch(dtype, shape, dim):
    def program(lib):
        x = lib.tensor(_values(shape, 3)).to(getattr(lib, dtype))
        if x.is_floating_point():
            x.requires_grad_(True)
            out = x.cumsum(dim)
            (out * lib.arange(out.numel()).reshape(out.shape).to(out.dtype)).sum().backward()
            return out, x.grad
        return x.cumsum(dim)

    both(program)


def test_cumsum_differentiates_twice_and_names_its_nodes_as_torch():
    def program(lib):
        x = leaf(lib, [[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]])
        (g,) = lib.autograd.grad((x.cumsum(1) ** 2).sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad((g * x).sum(), x)
        return g, gg

    both(program)
    x = ember.tensor([[1.0, 2.0, 3.0]], dtype=ember.float64, requires_grad=True)
    (g,) = ember.autograd.grad(x.cumsum(1).pow(2).sum(), x, create_graph=True)
    assert ember.autograd.gradgradcheck(lambda t: t.cumsum(1), (x,))
    assert ember.autograd.gradgradcheck(lambda t: t.cumprod(1), (x,))


@pytest.mark.parametrize("dtype", [None, "float64", "float32"])
def test_cumsum_with_and_without_a_dtype_differentiates_as_torch(dtype):
    """Without a dtype cumsum applies a Function of two operands; with one, of three: the same gradients."""
    def program(lib):
        x = leaf(lib, [[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]], "float32")
        out = x.cumsum(1) if dtype is None else x.cumsum(1, dtype=getattr(lib, dtype))
        (out * lib.arange(6.0).reshape(2, 3)).sum().backward()
        return out, x.grad, grad_fn_name(out)

    both(program)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_the_gradient_of_a_sum_whose_own_gradient_is_one_value_as_torch(dtype):
    """A sum's gradient that is one value seen everywhere (its result summed further) is spread at once."""
    def program(lib):
        x = leaf(lib, _values((2, 3, 4), 9), dtype)
        losses = (x.sum(1).sum(), x.sum((0, 2)).mean() * 3, x.sum(0, keepdim=True).sum(),
                  x.sum(2, dtype=lib.float64).sum(), x.sum(-1).expand(5, 2, 3).sum(), x.sum(0)[1:].sum())
        return [lib.autograd.grad(loss, x)[0] for loss in losses]

    both(program)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_the_gradient_of_cumsum_given_a_non_contiguous_gradient_as_torch(dim):
    """cumsum's gradient, a running sum from the end, read from a transposed gradient and written in order."""
    def program(lib):
        x = leaf(lib, _values((3, 5), 4), "float32")
        gradient = lib.tensor(_values((5, 3), 6), dtype=lib.float32).t()
        x.cumsum(dim).backward(gradient)
        return x.grad, x.grad.is_contiguous()

    both(program)


def _over_dim_one(x, op: str, keepdim: bool):
    """``x.<op>(1, keepdim=keepdim)``; of max and min, the values (their named tuple checked on the way)."""
    out = getattr(x, op)(1, keepdim=keepdim)
    if op in ("max", "min"):
        assert type(out).__name__ == op and len(out) == 2 and out[0] is out.values and out[1] is out.indices
        return out.values
    return out


@pytest.mark.parametrize("op", ["sum", "amax", "amin", "max", "min"])
@pytest.mark.parametrize("keepdim", [False, True])
def test_reductions_over_a_dim_differentiate_twice_and_name_their_nodes_as_torch(op, keepdim):
    """Without keepdim (or dtype) they apply a Function of two operands; with it, of four: the same gradients."""
    def program(lib):
        x = leaf(lib, [[1.0, -2.0, 3.0], [3.0, 4.0, 3.0]])
        out = _over_dim_one(x, op, keepdim)
        (g,) = lib.autograd.grad((out ** 2).sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad((g * x).sum(), x)
        # (the gradient of max and min records other nodes than torch's: their names are left out)
        return out, g, gg, grad_fn_name(out), grad_fn_name(g) if op not in ("max", "min") else None

    both(program)
    x = ember.tensor([[1.0, -2.0, 3.5], [0.5, 4.0, -1.0]], dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(lambda t: _over_dim_one(t, op, keepdim), (x,))
    assert ember.autograd.gradgradcheck(lambda t: _over_dim_one(t, op, keepdim), (x,))


@pytest.mark.parametrize("values", [[[1.0, float("inf")]], [[1.0, float("-inf")]], [[float("nan"), 2.0]], [[3.0]]])
@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_softmax_with_infinities_and_nans_as_torch(values, op):
    both(lambda lib: getattr(lib.tensor(values), op)(1))


@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_softmax_of_a_0d_tensor_and_in_half_as_torch(op, dtype):
    both(lambda lib: (getattr(lib.tensor(1.5, dtype=getattr(lib, dtype)), op)(0),
                      getattr(lib.tensor([[0.5, 1.0, -1.0]], dtype=getattr(lib, dtype)), op)(1)))


@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("values, dim", [(np.linspace(-3, 4, 12).reshape(3, 4), -1), (np.linspace(-3, 4, 12).reshape(4, 3).T, 0),
                                         (np.zeros((0, 3)), 1), (np.array(1.5), -1), (np.array([[np.inf, 1.0]]), 1)])
def test_softmax_of_an_int_dim_as_with_its_own_dtype_given_and_as_torch(op, dtype, values, dim):
    """A plain call takes the short path; with ``dtype=`` (the input's own), the general one: the same values."""
    short = both(lambda lib: getattr(lib.tensor(values, dtype=getattr(lib, dtype)), op)(dim))
    general = getattr(ember.tensor(values, dtype=getattr(ember, dtype)), op)(dim, dtype=getattr(ember, dtype))
    assert np.array_equal(general.numpy(), short, equal_nan=True)


@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_softmax_refuses_what_the_short_path_leaves_as_torch(op):
    both_raise(lambda lib: getattr(lib.zeros(2, 3), op)(2), IndexError, "Dimension out of range")
    both_raise(lambda lib: getattr(lib.ones(2, 3, dtype=lib.int64), op)(1), NotImplementedError, "not implemented for")


@settings(max_examples=10, deadline=None)
@given(shape=_SHAPES, seed=st.integers(0, 99), data=st.data())
def test_max_along_a_dim_and_sort_over_shapes_that_share_cached_offsets(shape, seed, data):
    dim = data.draw(st.integers(0, len(shape) - 1))
    values = np.round(_values(shape, seed), 1)  # ties, now and then

    def program(lib):
        x = leaf(lib, values)
        top = x.max(dim)
        ordered = x.sort(dim=dim, stable=True)
        (top.values.sum() + (ordered.values * lib.tensor(_values(shape, seed + 1))).sum()).backward()
        return top, ordered, x.grad

    both(program)


def test_max_along_a_dim_with_nan_and_signed_zeros_as_torch():
    both(lambda lib: (lib.tensor([[0.0, -0.0], [-0.0, 0.0], [1.0, float("nan")]]).max(1),
                      lib.tensor([[0.0, -0.0], [-0.0, 0.0], [1.0, float("nan")]]).min(1)))


@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("values, dim", [(np.arange(12.0).reshape(3, 4) % 5, -1), (np.arange(12.0).reshape(3, 4).T, 0),
                                         (np.array(2.5), 0), (np.array(2.5), -1), (np.array([[True, False]]), 1)])
def test_max_and_min_along_an_int_dim_as_along_a_numpy_dim_and_as_torch(op, keepdim, values, dim):
    """An int dim takes the short path; a NumPy integer, the general one: both give torch's values and indices."""
    short = both(lambda lib: tuple(getattr(lib.tensor(values), op)(dim, keepdim)))
    general = getattr(ember.tensor(values), op)(np.int64(dim), keepdim)
    for mine, theirs in zip(general, short):
        assert mine.dtype == ember.tensor(theirs).dtype and np.array_equal(mine.numpy(), theirs)


@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("keepdim", [False, True])
def test_max_along_a_dim_saves_the_indices_it_returns_as_torch(op, keepdim):
    """Recorded, the indices returned are the ones backward reads: written into, backward refuses, as torch's
    does; left alone, the gradient goes where they point. Not recorded, they are kept by nobody."""
    values = np.array([[0.5, 3.0, -1.0], [2.0, -4.0, 7.0]])

    def written(lib):
        result, indices = getattr(leaf(lib, values), op)(1, keepdim)
        indices.fill_(0)
        result.sum().backward()

    both_raise(written, RuntimeError, "modified by an inplace operation", "is at version 1")

    def left_alone(lib):
        x = leaf(lib, values)
        result, indices = getattr(x, op)(1, keepdim)
        (result ** 2).sum().backward()
        plain, plain_indices = getattr(lib.tensor(values), op)(1, keepdim)
        plain_indices.fill_(2)
        return x.grad, indices, plain, plain_indices, plain_indices.dtype == lib.int64

    both(left_alone)


def test_max_along_a_dim_refuses_what_the_short_path_leaves_as_torch():
    both_raise(lambda lib: lib.zeros(2, 0).max(1), IndexError, "Expected reduction dim 1 to have non-zero size")
    both_raise(lambda lib: lib.zeros(2, 3).max(2), IndexError, "Dimension out of range")
    both_raise(lambda lib: lib.zeros(2, 3, dtype=lib.complex64).min(1), RuntimeError, "does not support complex")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape, dim", [((4, 4), 0), ((4, 4), -1), ((2, 3, 4), (0, 2)), ((0, 3), 1), ((), 0),
                                        ((1, 4095), 1), ((2, 2048), 1), ((1, 8191), 1), ((1, 8192), 1)])
def test_sum_along_dims_of_small_floats_as_with_its_own_dtype_given_and_as_torch(dtype, shape, dim):
    """A small float sum takes a short path; with ``dtype=`` (the input's own), the general one: the same sums,
    on either side of the sizes where the sums by rows (4096) and by blocks (8192) start."""
    values = np.linspace(-3, 5, math.prod(shape)).reshape(shape) ** 3

    def program(lib):
        x = lib.tensor(values, dtype=getattr(lib, dtype))
        return x.sum(dim), x.sum(dim, keepdim=True), x.mT.sum(dim) if len(shape) == 2 else x.sum(dim)

    short = both(program)
    x = ember.tensor(values, dtype=getattr(ember, dtype))
    assert np.array_equal(x.sum(dim, dtype=x.dtype).numpy(), short[0])


@pytest.mark.parametrize("op", ["amax", "amin"])
@pytest.mark.parametrize("values, dim", [([[np.nan, 1.0], [-0.0, 0.0]], 1), ([[1.0, 5.0], [3.0, 2.0]], -2), (2.5, 0),
                                         (2.5, -1), ([[True, False]], 1), (np.zeros((2, 0)), 0)])
def test_amax_and_amin_of_an_int_dim_as_of_a_tuple_and_as_torch(op, values, dim):
    """An int dim takes a short path; the same dim in a tuple, the general one."""
    short = both(lambda lib: getattr(lib.tensor(values), op)(dim))
    assert np.array_equal(getattr(ember.tensor(values), op)((dim,)).numpy(), short, equal_nan=True)


@pytest.mark.parametrize("op", ["amax", "amin"])
def test_amax_and_amin_refuse_what_the_short_path_leaves_as_torch(op):
    both_raise(lambda lib: getattr(lib.zeros(2, 0), op)(1), IndexError, "Expected reduction dim 1 to have non-zero size")
    both_raise(lambda lib: getattr(lib.zeros(2, 3), op)(2), IndexError, "Dimension out of range")


@pytest.mark.parametrize("dim, correction", [(None, 1), (1, 0), ((0, 2), 1)])
def test_var_and_std_as_torch(dim, correction):
    def program(lib):
        x = leaf(lib, _values((2, 3, 4), 5))
        var, std = x.var(dim, correction=correction), x.std(dim, correction=correction)
        (var.sum() + std.sum()).backward()
        return var, std, x.grad

    both(program)


_WHOLE_TENSOR_SPREADS = {
    "4x4": np.random.default_rng(6).standard_normal((4, 4)), "0-d": np.array(2.5), "empty": np.zeros((0, 3)),
    "transposed": np.random.default_rng(7).standard_normal((3, 5)).T, "8192 (the blocked sums)": np.linspace(-3, 5, 8192),
    "inf and nan": np.array([[np.inf, 1.0], [np.nan, 2.0]]), "beyond single": np.array([3e30, -3e30, 1.0]),
    "below single": np.array([1e-30, 2e-30, 3e-30]),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", list(_WHOLE_TENSOR_SPREADS))
def test_var_and_std_of_a_whole_tensor_as_torch_and_as_their_kept_dims(name, dtype):
    """var() of every dim takes a short path (the mean a scalar); keepdim=True takes the general one."""
    values = _WHOLE_TENSOR_SPREADS[name]

    def program(lib):
        x = lib.tensor(values, dtype=getattr(lib, dtype))
        return [f(x, correction=c) for f in (lib.var, lib.std) for c in (0, 1)] + list(lib.var_mean(x))

    results = both(program)
    x = ember.tensor(values, dtype=getattr(ember, dtype))
    for f, result in ((ember.var, results[1]), (ember.std, results[3])):
        assert np.array_equal(f(x, dim=tuple(range(x.dim())), keepdim=True).numpy().reshape(()), result,
                              equal_nan=True)


@pytest.mark.parametrize("shapes, dim", [([(2, 3), (4, 3)], 0), ([(2, 3), (2, 1)], 1), ([(2, 3), (0,)], 0),
                                         ([(0,), (2, 3)], -1), ([(1, 2, 3, 4), (1, 2, 3, 4)], 1)])
def test_cat_of_shapes_the_short_path_takes_or_leaves_as_torch(shapes, dim):
    def program(lib):
        tensors = [leaf(lib, _values(shape, i)) for i, shape in enumerate(shapes)]
        out = lib.cat(tensors, dim)
        (out * 2).sum().backward()
        return out, [t.grad for t in tensors], out.is_contiguous()

    both(program)


def test_cat_and_stack_refuse_what_does_not_fit_as_torch():
    both_raise(lambda lib: lib.cat([lib.zeros(2, 3), lib.zeros(2, 4)]), RuntimeError, "Sizes of tensors must match")
    both_raise(lambda lib: lib.cat([lib.zeros(2, 3), lib.zeros(3)]), RuntimeError, "same number of dimensions")
    both_raise(lambda lib: lib.cat([lib.zeros(2), lib.zeros(2)], 1), IndexError, "Dimension out of range")
    both_raise(lambda lib: lib.stack([lib.zeros(2), lib.zeros(2)], 2), IndexError, "Dimension out of range")


def test_cat_and_stack_keep_a_transposed_layout_as_torch():
    both(lambda lib: [(out, out.stride()) for out in (
        lib.cat([lib.ones(3, 2).t(), lib.zeros(3, 2).t()], 1), lib.stack([lib.ones(3, 2).t()] * 2, 1),
        lib.stack([lib.ones(3, 2)] * 2, -1))])


@pytest.mark.parametrize("shape, sizes", [((4, 1), (4, 3)), ((3,), (2, 3)), ((1, 1), (1, 1)), ((2, 3), (2, 3)),
                                          ((1, 3), (2, -1, 3)[1:]), ((0, 1), (0, 4))])
def test_expand_values_strides_and_writability_as_torch(shape, sizes):
    def program(lib):
        x = lib.arange(float(np.prod(shape))).reshape(shape)
        out = x.expand(*sizes)
        try:
            out.add_(1)
            wrote = True
        except RuntimeError:
            wrote = False
        return out, out.stride(), wrote, x

    both(program)


def test_expand_of_a_non_contiguous_tensor_and_its_gradient_as_torch():
    def program(lib):
        x = leaf(lib, [[1.0, 2.0], [3.0, 4.0]])
        out = x.t()[:, :1].expand(2, 3)
        (out * lib.arange(6.0, dtype=lib.float64).reshape(2, 3)).sum().backward()
        return out, out.stride(), x.grad

    both(program)


@pytest.mark.parametrize("op", ["sin", "cos"])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_sin_and_cos_gradients_on_arrays_as_torch(op, dtype):
    def program(lib):
        x = lib.tensor([[0.3, -1.2], [2.5, 0.0]], dtype=getattr(lib, dtype), requires_grad=True)
        y = lib.tensor(0.7, dtype=getattr(lib, dtype), requires_grad=True)
        (getattr(x, op)().sum() + getattr(y, op)()).backward()
        return x.grad, y.grad

    both(program)
    x = ember.tensor([0.3, 1.7], dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradgradcheck(getattr(ember, op), (x,))


@pytest.mark.parametrize("count", [1, 64, 65, 200])
@pytest.mark.parametrize("dtype", ["int64", "int32"])
@pytest.mark.parametrize("bad", [-1, 3, None])
def test_gather_and_index_select_bounds_on_either_side_of_the_short_check(count, dtype, bad):
    """Up to 64 indices are checked by Python's min and max, more by NumPy's reductions: the same answers and
    errors either way, the index's shape and dims seen once before (its checks then remembered)."""
    values = np.random.default_rng(count).integers(0, 3, count)
    if bad is not None:
        values[-1] = bad

    def gather(lib):
        x = lib.arange(3.0 * count).reshape(count, 3)
        good = lib.tensor(np.zeros((count, 1), np.int64), dtype=getattr(lib, dtype))
        x.gather(1, good)
        return x.gather(1, lib.tensor(values.reshape(count, 1), dtype=getattr(lib, dtype)))

    def index_select(lib):
        return lib.arange(6.0).reshape(3, 2).index_select(0, lib.tensor(values, dtype=getattr(lib, dtype)))

    if bad is None:
        both(gather)
        both(index_select)
    else:
        both_raise(gather, RuntimeError, "out of bounds")
        both_raise(index_select, IndexError, "out of range")


def test_gather_and_index_select_record_their_graph_as_torch():
    def program(lib):
        x = leaf(lib, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        gathered = x.gather(1, lib.tensor([[2, 0], [1, 1]]))
        picked = x.index_select(1, lib.tensor([2, 0]))
        return [(grad_fn_name(out), len(out.grad_fn.next_functions)) for out in (gathered, picked)]

    both(program)


def test_expand_remembers_layouts_by_strides_and_still_refuses_float_sizes():
    """A layout found for int sizes is not taken for floats that equal them, nor for another tensor of the same
    shape laid out with other strides."""
    def program(lib):
        column = lib.arange(3.0).reshape(3, 1)
        first = column.expand(3, 4)
        strided = lib.arange(6.0).reshape(3, 2)[:, :1]  # (3, 1) too, with a row stride of 2
        second = strided.expand(3, 4)
        return first, first.stride(), second, second.stride(), column.expand(-1, 2).stride()

    both(program)
    ember.ones(3, 1).expand(3, 4)
    both_raise(lambda lib: lib.ones(3, 1).expand(3.0, 4.0), TypeError, "")


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "complex64"])
def test_matmul_of_small_matrices_in_each_dtype_as_torch(dtype):
    def program(lib):
        a = lib.tensor([[1.5, -2.0, 0.25], [3.0, 0.5, -1.0]], dtype=getattr(lib, dtype))
        b = lib.tensor([[2.0, 1.0], [-0.5, 4.0], [1.0, -3.0]], dtype=getattr(lib, dtype))
        return a @ b, a.t() @ a, lib.ones(0, 3, dtype=getattr(lib, dtype)) @ b

    both(program)


def test_matmul_of_small_matrices_refuses_what_torch_refuses():
    both_raise(lambda lib: lib.ones(2, 3) @ lib.ones(2, 3), RuntimeError, "")
    both_raise(lambda lib: lib.ones(2, 3) @ lib.ones(3, 2, dtype=lib.float64), RuntimeError, "dtype")


def test_matmul_of_small_matrices_differentiates_twice():
    a = ember.tensor([[1.0, 2.0], [3.0, -1.0]], dtype=ember.float64, requires_grad=True)
    b = ember.tensor([[0.5, -2.0], [1.5, 4.0]], dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(lambda x, y: x @ y, (a, b))
    assert ember.autograd.gradgradcheck(lambda x, y: (x @ y) ** 2, (a, b))


def test_cat_and_stack_check_their_tensors_in_the_forward_as_torch_does_before():
    """The usual call's checks run inside the Function: the errors are torch's, grad mode is back on after them,
    and what passes the one pass joins as torch joins it."""
    grad = lambda lib: lib.ones(2, 3, requires_grad=True)  # noqa: E731
    both_raise(lambda lib: lib.stack([grad(lib), lib.ones(3, 2)]), RuntimeError, "stack expects each tensor")
    both_raise(lambda lib: lib.stack([grad(lib), 1.0]), TypeError, "")
    both_raise(lambda lib: lib.cat([grad(lib), lib.ones(2, 3, 1)]), RuntimeError, "same number of dimensions")
    both_raise(lambda lib: lib.cat([grad(lib), [1.0]]), TypeError, "")
    both_raise(lambda lib: lib.stack([]), RuntimeError, "non-empty")
    assert ember.is_grad_enabled()

    def program(lib):
        a, b = leaf(lib, [[1.0, 2.0], [3.0, 4.0]]), leaf(lib, [[5.0, 6.0], [7.0, 8.0]])
        outs = (lib.cat([a, b], -1), lib.cat((a, b.double()), 0), lib.stack([a, b], -1), lib.stack((a, b), 1),
                lib.stack([a[:, :1], b[:, 1:]]), lib.cat([a, lib.zeros(0, dtype=lib.float64)][::-1] + [b], 0))
        sum(out.sum() * (i + 1) for i, out in enumerate(outs)).backward()
        return [(out, out.stride(), grad_fn_name(out)) for out in outs], a.grad, b.grad

    both(program)


def test_view_and_reshape_take_sizes_as_they_are_and_leave_the_rest_to_their_checks():
    """Ints by position whose product is the number of elements are the shape at once; floats, bools, -1 and
    other negatives, wrong products and no sizes at all take the checked path, with torch's answers."""
    def program(lib):
        x = lib.arange(16.0).reshape(4, 4)
        outs = (x.view(16), x.view(2, 8), x.view(-1), x.view(2, -1), x.t().reshape(2, 8), x.reshape(1, 16, 1),
                lib.tensor(3.0).view(1), lib.zeros(0, 4).view(0, 2, 2), x.view((8, 2)))
        return [(out, out.stride()) for out in outs]

    both(program)
    for sizes, error in [((16.0,), TypeError), ((4, -4), RuntimeError), ((5,), RuntimeError), ((), TypeError),
                         ((True, 16), TypeError)]:
        both_raise(lambda lib: lib.arange(16.0).view(*sizes), error, "")
        both_raise(lambda lib: lib.arange(16.0).reshape(*sizes), error, "")
    x = ember.arange(16.0)
    y = x.view(4, 4)
    assert y._base is x and y.data_ptr() == x.data_ptr()
    x.add_(1)
    assert y._version == x._version == 1 and float(y[0, 0]) == 1.0


_EDGE_VALUES = [-0.0, 0.0, float("nan"), float("-inf"), float("inf"), -1.0, 0.25, 2.0]


def _bits_of_both(program) -> None:
    """``program(lib)``'s tensors from torch and from ember, to the bit (the sign of a zero, a nan's payload)."""
    import torch

    expected, actual = program(torch), program(ember)
    assert len(expected) == len(actual)
    for e, a in zip(expected, actual):
        e, a = e.detach().numpy(), a.detach().numpy()
        assert (e.dtype, e.shape) == (a.dtype, a.shape)
        assert e.tobytes() == a.tobytes(), (e, a)


def _edge_inputs(lib, dtype: str) -> list:
    """The edge values as a (2, 4) tensor, its non-contiguous transpose, a 0-d tensor and an empty one."""
    x = lib.tensor(_EDGE_VALUES, dtype=getattr(lib, dtype)).reshape(2, 4)
    return [x, x.t(), lib.tensor(-0.0, dtype=getattr(lib, dtype)), lib.zeros(0, 3, dtype=getattr(lib, dtype))]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("low, high", [(-0.0, 0.0), (0.0, -0.0), (0.0, None), (-0.0, None), (None, 0.0),
                                       (None, -0.0), (-0.5, 0.5), (3, -1), (1, 1.0), (0, None), (None, 2)])
def test_clamp_and_clamp_in_place_to_the_bit_as_torch_signed_zeros_too(dtype, low, high):
    """Number bounds clamp in one pass: a zero's sign as torch gives it (clamp(-0.0, min=0.0) is 0.0), and a
    bound met before (kept as an array) clamps as a new one."""
    def program(lib):
        results = []
        for x in _edge_inputs(lib, dtype):
            results += [x.clamp(low, high), x.clamp(low, high)]  # the second call meets its bounds again
            changed = x.clone()
            changed.clamp_(low, high)
            results.append(changed)
        return results

    _bits_of_both(program)


def test_clamp_gradients_at_and_between_the_bounds_as_torch():
    def program(lib):
        x = leaf(lib, [-1.0, -0.5, 0.0, 0.5, 0.7])
        x.clamp(-0.5, 0.5).sum().backward()
        y = leaf(lib, [-1.0, 0.0, 2.0])
        y.clamp(min=0.0).sum().backward()
        return x.grad, y.grad

    both(program)
    x = ember.tensor([-1.0, 0.2, 0.9], dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradgradcheck(lambda t: t.clamp(-0.5, 0.5) * t, (x,))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_square_and_other_powers_of_floats_to_the_bit_as_torch(dtype):
    def program(lib):
        results = []
        for x in _edge_inputs(lib, dtype) + [lib.tensor([1e30, -3e-30, 1.5], dtype=getattr(lib, dtype))]:
            results += [x ** 2, x ** 2.0]
        return results

    _bits_of_both(program)  # (other powers are NumPy's pow, a unit in the last place from torch's at times)
    both(lambda lib: [x ** k for x in _edge_inputs(lib, dtype) for k in (3, 0.5, -1)])
    x = ember.tensor([-1.5, 0.2, 3.0], dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(lambda t: t ** 2, (x,))
    assert ember.autograd.gradgradcheck(lambda t: t ** 2, (x,))


@pytest.mark.parametrize("size", [4, 5000])  # on either side of the bit masks' threshold
def test_relu_gradient_drops_infinite_and_nan_gradients_where_the_output_is_not_positive_as_torch(size):
    def program(lib):
        x = leaf(lib, np.resize([-1.0, 0.0, 2.0, float("nan")], size))
        x.relu().backward(lib.tensor(np.resize([float("inf"), float("nan"), 3.0, 1.0], size)))
        return [x.grad]

    _bits_of_both(program)


@pytest.mark.parametrize("size", [4, 5000])
def test_where_of_small_and_large_tensors_to_the_bit_as_torch(size):
    def program(lib):
        condition = lib.tensor(np.resize([True, False, False, True], size))
        a = lib.tensor(np.resize([-0.0, float("nan"), 1.0, 2.0], size), requires_grad=True)
        b = lib.tensor(np.resize([0.0, -0.0, float("inf"), -2.0], size), requires_grad=True)
        out = lib.where(condition, a, b)
        out.backward(lib.tensor(np.resize([1.0, float("nan"), -0.0, 4.0], size)))
        return [out, a.grad, b.grad]

    _bits_of_both(program)


@pytest.mark.parametrize("op", ["add", "sub"])
@pytest.mark.parametrize("alpha", [0.3, -0.01, 1.7, 3, 0.5])
@pytest.mark.parametrize("other", ["tensor", 2.5, 3])
def test_add_and_sub_with_alpha_in_place_round_once_as_out_of_place_and_as_torch(op, alpha, other):
    """In float32, ``x.add_(y, alpha=a)`` rounds ``x + a * y`` once, as ``x.add(y, alpha=a)`` and torch's fused
    kernel do (rounding the product to single first is a unit in the last place off in about a third of cases)."""
    values = np.random.default_rng(3).standard_normal((2, 50)).astype(np.float32)

    def program(lib):
        x = lib.tensor(values[0])
        y = lib.tensor(values[1]) if other == "tensor" else other
        written = x.clone()
        getattr(written, op + "_")(y, alpha=alpha)
        return [written, getattr(x, op)(y, alpha=alpha)]

    _bits_of_both(program)


def test_clamp_by_numbers_names_its_node_and_lists_only_its_input_as_torch():
    def program(lib):
        x = leaf(lib, [-1.0, 0.5, 2.0])
        results = []
        for out in (x.clamp(0.0, 1.0), x.clamp(min=0.0), x.clamp(max=1), x.clamp_min(0.0), x.clamp_max(1.0)):
            results += [grad_fn_name(out), len(out.grad_fn.next_functions)]
        return results

    both(program)
    x = ember.tensor([-1.0, 0.2, 0.9], dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(lambda t: t.clamp(min=-0.5), (x,))
    assert ember.autograd.gradgradcheck(lambda t: t.clamp_max(0.5) ** 2, (x,))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(1023,), (1024,), (64, 3, 17), (40, 40)])
def test_relu_against_the_shared_zeros_as_torch(dtype, shape):
    values = _values(shape, 3).astype(dtype)
    values.reshape(-1)[:4] = [np.nan, np.inf, -np.inf, 0.0]

    def relu(lib):
        x = lib.tensor(values, requires_grad=True)
        y = x.relu()
        y.backward(lib.arange(y.numel(), dtype=y.dtype).reshape(y.shape) - 7)  # (gradients of both signs, and 0)
        with lib.no_grad():
            return y, (x.t() if x.dim() == 2 else x[::2]).relu(), lib.nn.functional.relu(x + 1), x.grad

    both(relu)
    result = ember.tensor(values).relu()
    result += 1  # a result of its own, writable: not a view of the zeros that relu compares against
    from ember._ops._support import _ZERO_BUFFERS
    for buffer in _ZERO_BUFFERS.values():  # shared by every relu: never written, so still zeros
        assert not buffer.flags.writeable and not buffer.any()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("weight_layout", ["linear", "row-major"])
def test_addmm_of_a_linear_layer_and_its_gradients_as_the_general_path(dtype, weight_layout):
    """addmm's short path (two float matrices, a bias row of their dtype): values bit for bit the general path's
    (alpha 1.0 as a float takes the general one), gradients and graph as torch's."""
    rng = np.random.default_rng(0)  # small integers: every sum is exact, whatever order each library adds in
    x, w, b = rng.integers(-3, 4, (5, 3)), rng.integers(-3, 4, (4, 3)), rng.integers(-3, 4, 4)
    weight = w.T.copy() if weight_layout == "row-major" else w

    def program(lib):
        inputs = [leaf(lib, v, dtype) for v in (x, weight, b)]
        x_, w_, b_ = inputs
        w_t = w_.t() if weight_layout == "linear" else w_
        out = lib.addmm(b_, x_, w_t)
        general = lib.addmm(b_, x_, w_t, alpha=1.0)
        (out * lib.arange(4.0, dtype=out.dtype)).sum().backward()
        return out, lib.equal(out, general), [t.grad for t in inputs], grad_fn_name(out)

    both(program)


@pytest.mark.parametrize("bias_shape", [(1,), (5, 4), (1, 4), ()])
def test_addmm_with_biases_the_short_path_leaves_as_torch(bias_shape):
    def program(lib):
        b = leaf(lib, np.ones(bias_shape), "float32")
        x, w = leaf(lib, np.ones((5, 3)), "float32"), leaf(lib, np.ones((3, 4)), "float32")
        out = lib.addmm(b, x, w)
        out.sum().backward()
        return out, b.grad

    both(program)


def test_linear_refuses_what_the_short_path_leaves_as_torch():
    both_raise(lambda lib: lib.nn.functional.linear(lib.ones(2, 3), lib.ones(4, 3), lib.ones(4, dtype=lib.float64)),
               RuntimeError, "dtype")
    both_raise(lambda lib: lib.nn.functional.linear(lib.ones(2, 3), lib.ones(4, 2)), RuntimeError, "2x3", "cannot be multiplied")
    both_raise(lambda lib: lib.nn.functional.linear(lib.ones(2, 3), [[1.0] * 3]), TypeError, "weight", "must be Tensor")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_addmm_short_path_rounds_as_the_general_one(dtype):
    rng = np.random.default_rng(1)
    b, x, w = (ember.tensor(rng.standard_normal(shape).astype(dtype)) for shape in ((40,), (33, 20), (40, 20)))
    short = ember.nn.functional.linear(x, w, b)
    general = ember.addmm(b, x, w.t(), beta=1.0, alpha=1.0)  # float scalars: the general path
    assert short.dtype == general.dtype and np.array_equal(short.numpy(), general.numpy())


# ----------------------------------------------------------------- where, cumsum and var: their usual small calls


def test_where_of_a_bool_mask_and_two_tensors_of_its_shape_promotes_nothing(monkeypatch):
    """where(mask, x, w) of one dtype and one shape goes straight to NumPy's where: promoted_arrays is not asked."""
    from ember._ops import arithmetic

    def refused(*args):
        raise AssertionError("the usual where() took the general path")

    mask, x, w = ember.tensor([[True, False]]), ember.tensor([[1.0, 2.0]]), ember.tensor([[3.0, 4.0]])
    monkeypatch.setattr(arithmetic, "promoted_arrays", refused)
    assert ember.where(mask, x, w).tolist() == [[1.0, 4.0]]


@pytest.mark.parametrize("case", ["float32", "float64", "float16", "int64", "mixed dtypes", "broadcast mask",
                                  "broadcast operand", "a number", "transposed", "0-d", "empty", "requires grad"])
def test_where_on_either_side_of_its_short_path_to_the_bit_as_torch(case):
    rng = np.random.default_rng(4)
    values, other, mask = rng.standard_normal((3, 4)), rng.standard_normal((3, 4)), rng.random((3, 4)) > 0.5
    dtype = case if case in ("float32", "float64", "float16", "int64") else "float32"

    def program(lib):
        a = lib.tensor(values * 3).to(getattr(lib, dtype))
        b = lib.tensor(other * 3).to(getattr(lib, dtype))
        condition = lib.tensor(mask)
        if case == "mixed dtypes":
            b = b.double()
        elif case == "broadcast mask":
            condition = condition[:, :1]
        elif case == "broadcast operand":
            b = b[:1]
        elif case == "a number":
            b = 0.5
        elif case == "transposed":
            a, b, condition = a.t(), b.t(), condition.t()
        elif case == "0-d":
            a, b, condition = a[0, 0], b[0, 0], condition[0, 1]
        elif case == "empty":
            a, b, condition = a[:0], b[:0], condition[:0]
        elif case == "requires grad":
            a.requires_grad_(True)
        out = lib.where(condition, a, b)
        if case == "requires grad":
            out.backward(lib.ones_like(out))
            return [out, a.grad]
        return [out]

    _bits_of_both(program)


def test_where_refuses_what_its_short_path_leaves_as_torch():
    both_raise(lambda lib: lib.where(lib.ones(2, 3, dtype=lib.int64), lib.ones(2, 3), lib.zeros(2, 3)),
               RuntimeError, "where expected condition to be a boolean tensor")
    both_raise(lambda lib: lib.where(lib.ones(2, 3, dtype=lib.bool), lib.ones(2, 3), lib.zeros(4, 3)),
               RuntimeError, "size")
    both_raise(lambda lib: lib.where([[True]], lib.ones(1, 1), lib.zeros(1, 1)), TypeError, "condition")
    both_raise(lambda lib: lib.where(lib.ones(2, dtype=lib.bool), lib.ones(2), "zero"), TypeError, "other")

    def into_out(lib):
        out = lib.empty(2)
        result = lib.where(lib.tensor([True, False]), lib.ones(2), lib.zeros(2), out=out)
        return result, out, result.data_ptr() == out.data_ptr()

    both(into_out)


def test_cumsum_of_a_small_float32_tensor_skips_the_conversions_and_what_a_recording_keeps(monkeypatch):
    """x.cumsum(1) checks its dim at once (not through _scan_axis), and its unrecorded forward calls NumPy's scan
    directly (not through Cumsum._running, which fills the ctx for a backward)."""
    from ember._ops import scans

    def refused(*args):
        raise AssertionError("the usual cumsum took the general path")

    monkeypatch.setattr(scans, "_scan_axis", refused)
    monkeypatch.setattr(scans.Cumsum, "_running", staticmethod(refused))
    assert ember.tensor([[1.0, 2.0, 3.0]]).cumsum(1).tolist() == [[1.0, 3.0, 6.0]]
    with pytest.raises(AssertionError, match="general path"):  # recorded: the general forward, ctx and all
        ember.tensor([[1.0, 2.0]], requires_grad=True).cumsum(1)


@pytest.mark.parametrize("case", ["float32", "float64", "float16", "int64", "bool", "negative dim", "dim -2",
                                  "transposed", "0-d", "empty", "a dtype", "requires grad", "no_grad",
                                  "cancellation"])
def test_cumsum_on_either_side_of_its_short_path_to_the_bit_as_torch(case):
    values = np.random.default_rng(5).standard_normal((3, 5)) * 10
    if case == "cancellation":  # carried in double, rounded once, as torch's
        values = np.array([[1e8, 1.0, -1e8, 3.0, 0.1]])
    dtype = case if case in ("float32", "float64", "float16", "int64", "bool") else "float32"

    def program(lib):
        x = lib.tensor(values).to(getattr(lib, dtype))
        dim = {"negative dim": -1, "dim -2": -2}.get(case, 1)
        if case == "transposed":
            x = x.t()
        elif case == "0-d":
            x, dim = x[0, 0], 0
        elif case == "empty":
            x = x[:, :0]
        elif case == "requires grad":
            x.requires_grad_(True)
        if case == "a dtype":
            out = x.cumsum(dim, dtype=lib.float64)
        elif case == "no_grad":
            with lib.no_grad():
                out = x.requires_grad_(True).cumsum(dim)
        else:
            out = x.cumsum(dim)
        if case == "requires grad":
            out.backward(lib.arange(out.numel(), dtype=out.dtype).reshape(out.shape))
            return [out, x.grad]
        return [out, lib.tensor(out.is_contiguous())]

    _bits_of_both(program)


def test_cumsum_refuses_what_its_short_path_leaves_as_torch():
    both_raise(lambda lib: lib.ones(2, 3).cumsum(2), IndexError, "Dimension out of range")
    both_raise(lambda lib: lib.ones(2, 3).cumsum(1.0), TypeError, "")
    both_raise(lambda lib: lib.ones(2, 3).cumsum(True), TypeError, "")
    both_raise(lambda lib: lib.cumsum([1.0, 2.0], 0), TypeError, "")

    def into_out(lib):
        out = lib.empty(2, 3, dtype=lib.float64)
        return lib.cumsum(lib.ones(2, 3), 1, out=out), out

    both(into_out)


def test_var_of_a_whole_float_tensor_skips_the_checks_and_what_a_recording_keeps(monkeypatch):
    """x.var() and x.std() go to Var at once (not through _moments' checks), and their unrecorded forward leaves
    the ctx empty (it counts nothing with _count)."""
    from ember._ops import statistics

    def refused(*args):
        raise AssertionError("the usual var() took the general path")

    monkeypatch.setattr(statistics, "_moments", refused)
    monkeypatch.setattr(statistics, "_count", refused)
    assert ember.tensor([[1.0, 2.0], [3.0, 4.0]]).var().item() == pytest.approx(5 / 3)
    assert ember.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=ember.float64).std().item() == pytest.approx(math.sqrt(5 / 3))
    with pytest.raises(AssertionError, match="general path"):  # recorded: the general forward, ctx and all
        ember.tensor([1.0, 2.0], requires_grad=True).var()
    with pytest.raises(AssertionError, match="general path"):
        ember.tensor([1.0, 2.0]).var(0)


@pytest.mark.parametrize("case", ["float32", "float64", "float16", "bfloat16", "one element", "0-d", "empty",
                                  "keepdim", "dim", "unbiased", "correction", "by position", "requires grad",
                                  "beyond single", "below single", "inf and nan", "transposed", "no_grad"])
@pytest.mark.parametrize("op", ["var", "std"])
def test_var_and_std_on_either_side_of_their_short_path_as_torch(op, case):
    values = {"beyond single": [3e30, -3e30, 1.0], "below single": [1e-30, 2e-30, 3e-30],
              "inf and nan": [[np.inf, 1.0], [np.nan, 2.0]], "one element": [2.5], "0-d": 2.5,
              "empty": np.zeros((0, 3))}.get(case, np.random.default_rng(6).standard_normal((3, 4)))
    dtype = case if case in ("float64", "float16", "bfloat16") else "float32"

    def program(lib):
        x = lib.tensor(values, dtype=getattr(lib, dtype))
        if case == "transposed":
            x = x.t()
        if case == "requires grad":
            x.requires_grad_(True)
            out = getattr(x, op)()
            out.backward()
            return out, x.grad, grad_fn_name(out)
        if case == "no_grad":
            with lib.no_grad():
                return getattr(x.requires_grad_(True), op)()
        f = getattr(x, op)
        call = {"keepdim": lambda: f(keepdim=True), "dim": lambda: f(1), "by position": lambda: f(None),
                "unbiased": lambda: f(unbiased=False), "correction": lambda: f(correction=2)}
        out = call.get(case, f)()
        return out.float(), str(out.dtype).split(".")[-1]  # (NumPy has no bfloat16 to compare in)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (one element, empty: torch and ember both warn of the degrees of freedom)
        both(program)


@pytest.mark.parametrize("op", ["var", "std"])
@pytest.mark.parametrize("values", [[2.5], 2.5, np.zeros((0, 3))])
def test_var_and_std_warn_of_no_degrees_of_freedom_as_torch(values, op):
    for lib in (__import__("torch"), ember):
        with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
            getattr(lib.tensor(values), op)()


@pytest.mark.parametrize("op", ["var", "std"])
def test_var_and_std_refuse_integers_as_torch(op):
    both_raise(lambda lib: getattr(lib.tensor([1, 2, 3]), op)(), RuntimeError,
               "std and var only support floating point")
