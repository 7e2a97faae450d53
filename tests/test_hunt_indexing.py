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
