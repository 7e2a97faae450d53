"""Indexing and the index ops against torch: cases a bug hunt found where ember differed."""
import warnings

import numpy as np
import pytest

from twins import both, both_raise


# ----------------------------------------------------------------- keys


@pytest.mark.parametrize("key", [
    np.array([1.5]), np.array([[1.0, 2.0]]), np.array(1.0), np.array([1.0, 2.0], np.float32),
    np.array([1, 2], np.int16), np.array([1, 2], np.int8), np.array([1, 2], np.uint16), np.array(1, np.int16),
    np.array([1, 2], np.uint64), np.array([], np.float64), (np.array([0, 2], np.int16), np.array([1.0, 3.0])),
    (slice(None), np.array([3.0, 0.0])),
], ids=repr)
def test_a_numpy_array_of_any_number_type_indexes_as_a_list_would(key):
    both(lambda lib: lib.arange(12.).reshape(3, 4)[key])

    def write(lib):
        x = lib.zeros(3, 4)
        x[key] = 1.0
        return x
    both(write)


def test_a_uint8_numpy_array_stays_a_mask():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        both(lambda lib: lib.arange(12.).reshape(3, 4)[np.array([1, 0, 1], np.uint8)])


def test_a_complex_in_a_list_key_is_a_type_error():
    both_raise(lambda lib: lib.arange(4.)[[1 + 0j]], TypeError, "complex")


# ----------------------------------------------------------------- gather and scatter


@pytest.mark.parametrize("index_shape", [(0,), (0, 2, 4), (5, 0), (0, 7)])
@pytest.mark.parametrize("index_dtype", ["int64", "float32"])
def test_an_empty_index_skips_the_shape_and_dtype_checks_of_gather_and_scatter(index_shape, index_dtype):
    def run(lib):
        x = lib.arange(12.).reshape(3, 4).requires_grad_()
        index = lib.zeros(index_shape, dtype=getattr(lib, index_dtype))
        src = lib.tensor([[2., 3.]])
        gathered = x.gather(1, index)
        scattered = [x.scatter(1, index, src), x.scatter(1, index, 2.), x.scatter_add(1, index, src),
                     x.scatter_reduce(1, index, src, "amax"), x.scatter(1, index, src, reduce="add")]
        (gathered.sum() + sum(s.sum() for s in scattered[:3])).backward()  # (torch's amax backward fails here)
        return gathered, scattered, x.grad
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        both(run)


def test_an_empty_index_still_checks_the_dim_and_the_dtype_of_src():
    both_raise(lambda lib: lib.ones(3, 4).gather(5, lib.zeros(0, dtype=lib.long)), IndexError)
    both_raise(lambda lib: lib.ones(3, 4).scatter(1, lib.zeros(0, dtype=lib.long), lib.ones(2, dtype=lib.float64)),
               RuntimeError, "dtype")


# ----------------------------------------------------------------- int arguments of the view and split ops


@pytest.mark.parametrize("call", [
    lambda lib, x: x.sum(True), lambda lib, x: x.unsqueeze(True), lambda lib, x: x.transpose(True, 0),
    lambda lib, x: x.flip(True), lambda lib, x: lib.cat([x, x], True), lambda lib, x: x.diagonal(0, True, 0),
    lambda lib, x: x.select(True, 1), lambda lib, x: x.select(1, True), lambda lib, x: x.select(1, 1.0),
    lambda lib, x: x.select(1, lib.tensor(1.)), lambda lib, x: x.select(1, np.bool_(True)),
    lambda lib, x: x.narrow(True, 1, 2), lambda lib, x: x.narrow(1, True, 2), lambda lib, x: x.narrow(1, 1, True),
    lambda lib, x: x.narrow(1, 1.0, 2), lambda lib, x: x.narrow_copy(1, True, 2),
    lambda lib, x: lib.select_scatter(x, lib.ones(3), 1, True), lambda lib, x: lib.select_scatter(x, lib.ones(3), 1, 1.),
    lambda lib, x: lib.slice_scatter(x, lib.ones(3, 2), 1, True, 3),
    lambda lib, x: lib.slice_scatter(x, lib.ones(3, 2), 1, 1.0, 3),
    lambda lib, x: lib.slice_scatter(x, lib.ones(3, 4), 1, step=None),
    lambda lib, x: lib.diagonal_scatter(x, lib.ones(3), True), lambda lib, x: lib.diagonal_scatter(x, lib.ones(3), 1.),
    lambda lib, x: x.unbind(True), lambda lib, x: x.chunk(True), lambda lib, x: x.chunk(2.0),
    lambda lib, x: x.split(True), lambda lib, x: x.split(2.0), lambda lib, x: x.split([1.0, 2]),
    lambda lib, x: x.split([True, 2]), lambda lib, x: x.tensor_split(True), lambda lib, x: x.tensor_split(2.0),
    lambda lib, x: x.tensor_split([1.0]),
])
def test_a_bool_or_float_for_an_int_argument_is_a_type_error(call):
    both_raise(lambda lib: call(lib, lib.arange(12.).reshape(3, 4)), TypeError)


@pytest.mark.parametrize("start", [lambda lib: lib.tensor([1]), lambda lib: lib.tensor(1.), lambda lib: lib.tensor(True)])
def test_narrow_takes_a_tensor_start_only_0d_and_integral(start):
    both_raise(lambda lib: lib.arange(12.).reshape(3, 4).narrow(1, start(lib), 2), RuntimeError, "0-dim integral")


def test_int_arguments_given_as_integer_tensors():
    def run(lib):
        x = lib.arange(12.).reshape(3, 4)
        return [x.select(lib.tensor(1), lib.tensor([2])), x.narrow(1, lib.tensor(1), lib.tensor([2])),
                x.narrow_copy(1, lib.tensor([1]), 2), lib.select_scatter(x, lib.ones(3), 1, lib.tensor([1])),
                lib.slice_scatter(x, lib.ones(3, 2), 1, 0, None, lib.tensor(2))]
    both(run)


def test_split_refuses_negative_sizes_in_torch_words():
    both_raise(lambda lib: lib.arange(3.).split([4, -1]), RuntimeError, "non-negative")


def test_narrow_copy_is_its_own_node_with_gradients():
    def run(lib):
        x = lib.arange(12., dtype=lib.float64).reshape(3, 4).requires_grad_()
        y = x.narrow_copy(1, -3, 2)
        (g,) = lib.autograd.grad((y * y).sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), x)
        return y, y._base is None, y.grad_fn.name(), g, gg
    both(run)


# ----------------------------------------------------------------- writes from memory that is also written


def _grid(lib):
    return lib.arange(12.).reshape(3, 4)


@pytest.mark.parametrize("write", [
    lambda lib, x: x[1:].copy_(x[:-1]), lambda lib, x: x.copy_(x[0]),
    lambda lib, x: x.view(12)[:9].view(3, 3).copy_(x.view(12)[:9].view(3, 3).t()),
    lambda lib, x: x.__setitem__(slice(1, None), x[:-1]),
    lambda lib, x: x.view(12).__setitem__(slice(0, 4), x.view(12)[2:6].view(1, 4)),
    lambda lib, x: x.__setitem__([0, 1], x[1:]), lambda lib, x: x.__setitem__([0, 1, 2], x),
    lambda lib, x: x.__setitem__([0], x[2:]), lambda lib, x: x.__setitem__([0], x[1, 1]),
    lambda lib, x: x.view(12).__setitem__(lib.arange(12) < 6, x.view(12)[3:9]),
    lambda lib, x: x.index_put_((lib.tensor([0, 1]),), x[1:]),
    lambda lib, x: x.index_put_((lib.tensor([0, 1, 2]),), x, accumulate=True),
    lambda lib, x: x.index_copy_(0, lib.tensor([0, 1]), x[1:]), lambda lib, x: x.index_add_(0, lib.tensor([0, 1, 2]), x),
    lambda lib, x: x.index_reduce_(0, lib.tensor([0, 1]), x[1:], "prod"),
    lambda lib, x: x.scatter_(0, lib.tensor([[0, 1, 2, 0]]), x[1:]),
    lambda lib, x: x.scatter_add_(0, lib.tensor([[0, 1, 2, 0]]), x[1:]),
    lambda lib, x: x.scatter_reduce_(0, lib.tensor([[0, 1, 2, 0]]), x[1:], "sum"),
    lambda lib, x: x.put_(lib.tensor([0, 1]), x.view(12)[1:3]),
    lambda lib, x: (lambda y: y.scatter_(0, y[:1], 1))(x.long() % 3),
    lambda lib, x: (lambda y: y.__setitem__(y[0, :2], 1))(x.long()),
])
def test_a_write_from_memory_it_writes_is_refused_as_in_torch(write):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        both_raise(lambda lib: write(lib, _grid(lib)), RuntimeError, "single memory location")


@pytest.mark.parametrize("write", [
    lambda lib, x: x.copy_(x), lambda lib, x: x.copy_(x.view(3, 4)), lambda lib, x: x[:1].copy_(x[2:]),
    lambda lib, x: x.__setitem__(0, x[1]), lambda lib, x: x.__setitem__(0, x[1, 1]),
    lambda lib, x: x.__setitem__(slice(None), x[0]), lambda lib, x: x.__setitem__(Ellipsis, x),
    lambda lib, x: x.__setitem__((slice(1, None), [0, 1]), x[0, :2]),
    lambda lib, x: x.masked_fill_(x > 3, x[1, 1]), lambda lib, x: x.index_fill_(0, lib.tensor([0]), x[1, 1]),
])
def test_a_write_from_memory_torch_does_not_check_runs(write):
    def run(lib):
        x = _grid(lib)
        write(lib, x)
        return x
    both(run)


def test_a_recorded_write_from_its_own_memory_is_refused_too():
    def write(lib):
        x = _grid(lib).requires_grad_() * 1
        x[1:] = x[:-1]
    both_raise(write, RuntimeError, "single memory location")
