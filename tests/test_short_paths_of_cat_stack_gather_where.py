"""cat, stack, gather and where on the inputs their short paths take (plain tensors of one shape and dtype, few
dims, an int dim, no out=) and on the inputs next to them that must go the general way: each pinned to torch's
results, layouts, gradients and errors."""
import warnings

import numpy as np
import pytest

import ember
from twins import both, both_raise, leaf


def _values(shape: tuple, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape)


# ----------------------------------------------------------------- cat and stack

_ONE_SHAPE = [((4,), d) for d in (0, -1)] + [((2, 3), d) for d in (0, 1, -1, -2)] + \
             [((2, 3, 2), d) for d in (0, 1, 2, -1, -3)]


@pytest.mark.parametrize("op", ["cat", "stack"])
@pytest.mark.parametrize("shape, dim", _ONE_SHAPE)
@pytest.mark.parametrize("count", [1, 2, 3])
def test_cat_and_stack_of_one_shape_and_dtype_as_torch(op, shape, dim, count):
    def program(lib):
        tensors = [lib.tensor(_values(shape, i), dtype=lib.float32) for i in range(count)]
        out = getattr(lib, op)(tensors, dim)
        return out, out.dtype == lib.float32, out.stride(), out.grad_fn is None

    both(program)


@pytest.mark.parametrize("dtype", ["float64", "float16", "int64", "int32", "bool", "complex64"])
def test_cat_and_stack_keep_each_dtype_as_torch(dtype):
    def program(lib):
        tensors = [lib.tensor(_values((2, 2), i) > 0, dtype=getattr(lib, dtype)) for i in range(2)]
        return [(out, str(out.dtype).split(".")[1]) for out in (lib.cat(tensors), lib.stack(tensors, 1))]

    both(program)


@pytest.mark.parametrize("tensors", [
    lambda lib: [lib.ones(2, 2), lib.ones(2, 2, dtype=lib.float64)],  # promoted
    lambda lib: [lib.ones(2, 2, dtype=lib.int64), lib.ones(2, 2)],  # promoted
    lambda lib: [lib.ones(2, 2), lib.ones(2, 2, dtype=lib.bool)],  # promoted
    lambda lib: (lib.ones(2, 2), lib.zeros(2, 2)),  # a tuple
    lambda lib: [lib.ones(2, 2), lib.ones(2, 2).t()],  # a transposed input
    lambda lib: [lib.ones(2, 4)[:, ::2], lib.zeros(2, 2)],  # a strided view
    lambda lib: [lib.ones(2, 3), lib.zeros(1, 3)],  # two of one dtype, sizes apart along the dim
    lambda lib: [lib.ones(0), lib.ones(0)],  # 1-d empty ones only
    lambda lib: [lib.ones(2, 3), lib.ones(0), lib.zeros(2, 3)],  # a 1-d empty one, left out by cat
    lambda lib: [lib.ones(0, 3), lib.zeros(0, 3)],  # empty, of 2 dims
    lambda lib: [lib.ones(1, 2, 2, 2).to(memory_format=lib.channels_last)] * 2,  # 4 dims, channels-last
    lambda lib: [lib.ones(1, 2, 2, 2), lib.zeros(1, 2, 2, 2)],  # 4 dims
    lambda lib: [lib.nn.Parameter(lib.ones(2, 2)), lib.zeros(2, 2)],  # a subclass
])
def test_cat_hands_what_its_short_path_does_not_take_to_the_general_one_as_torch(tensors):
    def program(lib):
        out = lib.cat(tensors(lib))
        return out, str(out.dtype).split(".")[1], out.stride(), out.is_contiguous(memory_format=lib.channels_last)

    both(program)


@pytest.mark.parametrize("tensors", [
    lambda lib: [lib.ones(2, 2), lib.ones(2, 2, dtype=lib.float64)],
    lambda lib: (lib.ones(2, 2), lib.zeros(2, 2)),
    lambda lib: [lib.ones(2, 2), lib.ones(2, 2).t()],
    lambda lib: [lib.tensor(1.0), lib.tensor(2.0)],  # 0-d
    lambda lib: [lib.ones(0), lib.ones(0)],
    lambda lib: [lib.ones(1, 2, 2, 2).to(memory_format=lib.channels_last)] * 2,
    lambda lib: [lib.nn.Parameter(lib.ones(2, 2)), lib.zeros(2, 2)],
])
@pytest.mark.parametrize("dim", [0, -1])  # (in range for the 0-d ones too)
def test_stack_hands_what_its_short_path_does_not_take_to_the_general_one_as_torch(tensors, dim):
    def program(lib):
        out = lib.stack(tensors(lib), dim)
        return out, str(out.dtype).split(".")[1], out.stride()

    both(program)


@pytest.mark.parametrize("op", ["cat", "stack"])
@pytest.mark.parametrize("dim", [np.int64(1), np.int32(-1), "0-d int64", "0-d int32"])
def test_cat_and_stack_take_a_dim_of_any_integer_type_as_torch(op, dim):
    def program(lib):
        given = lib.tensor(1, dtype=getattr(lib, dim[4:])) if isinstance(dim, str) else dim
        return getattr(lib, op)([lib.ones(2, 2), lib.zeros(2, 2)], given)

    both(program)


@pytest.mark.parametrize("op", ["cat", "stack"])
@pytest.mark.parametrize("dim", [None, 1.0, True, np.bool_(False), np.float64(0), "0", "0-d float", "1-d int"])
def test_cat_and_stack_refuse_a_dim_that_is_not_an_integer_as_torch(op, dim):
    def program(lib):
        given = {"0-d float": lib.tensor(0.0), "1-d int": lib.tensor([0])}.get(dim, dim) if isinstance(dim, str) \
            else dim
        return getattr(lib, op)([lib.ones(2, 2), lib.zeros(2, 2)], given)

    both_raise(program, TypeError, rf"^{op}\(\): argument 'dim' \(position 2\) must be int, not ")


def test_cat_and_stack_refusals_next_to_the_short_path_as_torch():
    both_raise(lambda lib: lib.cat([lib.zeros(2, 3), lib.zeros(3, 2)], 1), RuntimeError,
               "Sizes of tensors must match except in dimension 1. Expected size 2 but got size 3 for tensor number 1")
    both_raise(lambda lib: lib.cat([lib.tensor(1.0), lib.tensor(2.0)]), RuntimeError, "zero-dimensional")
    both_raise(lambda lib: lib.cat([lib.zeros(2, 3)] * 2, 2), IndexError, "Dimension out of range")
    both_raise(lambda lib: lib.cat([lib.zeros(2, 3)] * 2, -3), IndexError, "Dimension out of range")
    both_raise(lambda lib: lib.cat([]), ValueError, "non-empty")
    both_raise(lambda lib: lib.stack([]), RuntimeError, "non-empty")
    both_raise(lambda lib: lib.cat([lib.zeros(2), 1.0]), TypeError, "Tensor")
    both_raise(lambda lib: lib.stack([lib.zeros(2), lib.zeros(3)]), RuntimeError, "equal size")
    both_raise(lambda lib: lib.stack([lib.zeros(2)] * 2, 3), IndexError, "Dimension out of range")


def test_cat_and_stack_into_out_as_torch():
    def program(lib):
        cat_out, stack_out = lib.empty(4, 2, dtype=lib.float64), lib.empty(2, 2, 2)
        lib.cat([lib.ones(2, 2), lib.zeros(2, 2)], out=cat_out)
        lib.stack([lib.ones(2, 2), lib.zeros(2, 2)], out=stack_out)
        return cat_out, stack_out

    both(program)


@pytest.mark.parametrize("op, dim", [("cat", 0), ("cat", -1), ("stack", 0), ("stack", 2)])
def test_cat_and_stack_of_one_shape_differentiate_as_torch(op, dim):
    def program(lib):
        a, b = leaf(lib, _values((2, 3), 0)), leaf(lib, _values((2, 3), 1))
        out = getattr(lib, op)([a, b], dim)
        (g,) = lib.autograd.grad((out ** 3).sum(), a, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), a)
        return out, out.grad_fn.name(), g, gg

    both(program)
    a = ember.tensor(_values((2, 3), 0), requires_grad=True)
    b = ember.tensor(_values((2, 3), 1), requires_grad=True)
    f = lambda a, b: getattr(ember, op)([a, b], dim) ** 2  # noqa: E731
    assert ember.autograd.gradcheck(f, (a, b)) and ember.autograd.gradgradcheck(f, (a, b))


# ----------------------------------------------------------------- gather

def _twice(program):
    """``both(program)`` twice: the second call finds the shapes checked (the short path)."""
    both(program)
    return both(program)


@pytest.mark.parametrize("shape, dim, index_shape", [
    ((4, 4), 1, (4, 2)), ((4, 4), 0, (2, 4)), ((4, 4), -1, (4, 2)), ((3, 5), 1, (2, 3)), ((6,), 0, (4,)),
    ((2, 3, 4), 2, (2, 3, 5)), ((2, 3, 4), 1, (1, 2, 2)), ((2, 3, 4), -3, (3, 1, 4)),
])
@pytest.mark.parametrize("index_dtype", ["int64", "int32"])
def test_gather_of_checked_shapes_reads_the_positions_torch_reads(shape, dim, index_shape, index_dtype):
    size = shape[dim]
    index = np.random.default_rng(1).integers(0, size, index_shape)

    def program(lib):
        x = lib.tensor(_values(shape, 0), dtype=lib.float32)
        out = x.gather(dim, lib.tensor(index, dtype=getattr(lib, index_dtype)))
        return out, out.stride(), out.grad_fn is None

    _twice(program)


@pytest.mark.parametrize("layout", ["transposed", "sliced", "channels_last"])
def test_gather_of_checked_shapes_from_data_that_is_not_row_major_as_torch(layout):
    def program(lib):
        if layout == "channels_last":
            x = lib.tensor(_values((1, 3, 2, 2), 0)).to(memory_format=lib.channels_last)
            index = lib.tensor([[[[1, 0], [0, 1]]]])
            return x.gather(3, index), lib.tensor(_values((2, 2, 2, 2), 0)).gather(3, index)
        x = lib.tensor(_values((4, 4), 0))
        x = x.t() if layout == "transposed" else x[:, ::2]
        index = lib.tensor([[1, 0], [0, 1], [1, 1], [0, 0]])
        return x.gather(1, index), lib.tensor(_values(tuple(x.shape), 1)).gather(1, index)  # (row-major first)

    _twice(program)


@pytest.mark.parametrize("bad", [4, -1, -5, 100])
@pytest.mark.parametrize("dim", [0, 1])
def test_gather_refuses_an_index_out_of_bounds_after_its_shapes_passed_as_torch(bad, dim):
    good = np.array([[0, 1], [2, 3], [1, 0], [3, 2]])
    if dim == 0:
        good = good.T
    wrong = good.copy()
    wrong[1, 1] = bad
    both(lambda lib: lib.ones(4, 4).gather(dim, lib.tensor(good)))
    both_raise(lambda lib: lib.ones(4, 4).gather(dim, lib.tensor(wrong)), RuntimeError,
               rf"index {bad} is out of bounds for dimension {dim} with size 4")


def test_gather_of_an_index_of_many_elements_or_other_inputs_as_torch():
    index = np.random.default_rng(2).integers(0, 4, (70, 3))  # more than the short path takes

    def program(lib):
        x = lib.tensor(_values((70, 4), 0))
        return (x.gather(1, lib.tensor(index)), lib.tensor(2.0).gather(0, lib.tensor([0, 0])),
                lib.tensor([1, 2, 3]).gather(0, lib.tensor([2, 0])),
                lib.tensor([[True, False]]).gather(1, lib.tensor([[1, 1, 0]])),
                lib.ones(2, 2, dtype=lib.float16).gather(1, lib.tensor([[1], [0]])),
                lib.zeros(2, 3).gather(1, lib.zeros(2, 0, dtype=lib.int64)))

    _twice(program)
    both_raise(lambda lib: lib.ones(2, 2).gather(1, lib.tensor([[0.0]])), RuntimeError, "int64")
    both_raise(lambda lib: lib.gather(lib.ones(2, 2), 1, lib.tensor([[0, 1, 0]]), out=lib.empty(1, 3, dtype=lib.int64)),
               RuntimeError, "dtype")


def test_gather_into_out_and_its_gradients_to_the_second_order_as_torch():
    index = [[0, 0], [2, 1]]

    def program(lib):
        x = leaf(lib, _values((2, 3), 0))
        out = lib.empty(2, 2, dtype=lib.float64)
        with lib.no_grad():
            lib.gather(x, 1, lib.tensor(index), out=out)
        picked = x.gather(1, lib.tensor(index))
        (g,) = lib.autograd.grad((picked ** 3).sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x)
        return out, picked, picked.grad_fn.name(), g, gg

    _twice(program)
    x = ember.tensor(_values((2, 3), 0), requires_grad=True)
    f = lambda x: x.gather(1, ember.tensor(index)) ** 2  # noqa: E731
    assert ember.autograd.gradcheck(f, (x,)) and ember.autograd.gradgradcheck(f, (x,))


@pytest.mark.parametrize("index", [[[0, 1], [2, 3], [1, 0], [3, 2]], [[0, 0], [2, 3], [1, 1], [3, 3]]])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_gather_gradient_of_indices_read_once_or_repeated_as_torch(index, dtype):
    def program(lib):
        x = lib.tensor(_values((4, 4), 0), dtype=getattr(lib, dtype), requires_grad=True)
        picked = x.gather(1, lib.tensor(index))
        (picked * lib.arange(1.0, 9.0, dtype=x.dtype).reshape(4, 2)).sum().backward()
        return picked, x.grad

    _twice(program)


def test_gather_gradient_after_the_index_changed_in_place_is_refused_as_torch():
    def program(lib):
        x, index = leaf(lib, _values((2, 3), 0)), lib.tensor([[0, 1], [2, 0]])
        x.gather(1, index)  # (the shapes checked)
        picked = x.gather(1, index)
        index[0, 0] = 2
        picked.sum().backward()

    both_raise(program, RuntimeError, "modified by an inplace operation")


# ----------------------------------------------------------------- where

@pytest.mark.parametrize("make", [
    lambda lib, c: (c, lib.tensor(_values((3, 4), 1)), lib.tensor(_values((3, 4), 2))),  # the usual call
    lambda lib, c: (c, lib.tensor(_values((3, 4), 1), dtype=lib.float32), lib.tensor(_values((3, 4), 2))),
    lambda lib, c: (c, lib.tensor(_values((4,), 1)), lib.tensor(_values((3, 1), 2))),  # broadcast
    lambda lib, c: (c, 2.5, lib.tensor(_values((3, 4), 2), dtype=lib.float32)),  # a number
    lambda lib, c: (c, lib.tensor(_values((3, 4), 1)).t().contiguous().t(), lib.tensor(_values((3, 4), 2))),
    lambda lib, c: (c.to(lib.uint8), lib.ones(3, 4), lib.zeros(3, 4)),  # a uint8 condition (deprecated)
    lambda lib, c: (c, lib.ones(3, 4, dtype=lib.int64), lib.zeros(3, 4, dtype=lib.int64)),
])
def test_where_on_its_usual_call_and_next_to_it_as_torch(make):
    def program(lib):
        condition = lib.tensor(_values((3, 4), 0) > 0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (a uint8 condition is deprecated, in both)
            out = lib.where(*make(lib, condition))
        return out, str(out.dtype).split(".")[1], out.stride()

    both(program)


def test_where_differentiates_to_the_second_order_as_torch():
    def program(lib):
        condition = lib.tensor(_values((3, 4), 0) > 0)
        a, b = leaf(lib, _values((3, 4), 1)), leaf(lib, _values((3, 4), 2))
        out = lib.where(condition, a, b)
        (ga, gb) = lib.autograd.grad((out ** 3).sum(), (a, b), create_graph=True)
        return out, ga, gb, lib.autograd.grad((ga + gb).sum(), (a, b))

    both(program)
    condition = ember.tensor(_values((3, 4), 0) > 0)
    a = ember.tensor(_values((3, 4), 1), requires_grad=True)
    b = ember.tensor(_values((3, 4), 2), requires_grad=True)
    f = lambda a, b: ember.where(condition, a, b) ** 2  # noqa: E731
    assert ember.autograd.gradcheck(f, (a, b)) and ember.autograd.gradgradcheck(f, (a, b))
