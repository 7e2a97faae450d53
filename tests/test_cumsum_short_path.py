"""cumsum's short float32 path, taken when nothing is recorded (the running sum carried in double, rounded once):
the same values as torch's along negative dims (which now take it too), on transposed and strided inputs, and on
values that overflow float32 or are infinite or nan; with NumPy set to raise, the quiet retry gives them too."""
import math

import numpy as np
import pytest
import torch

import ember
from twins import both

_ROWS = [[1.0, 2.5, -3.0, 4.0], [3e38, 3e38, -3e38, 1.0], [math.inf, 1.0, -math.inf, 2.0], [1.0, math.nan, 2.0, 3.0],
         [1e-8, 1.0, -1.0, 1e-8]]


@pytest.mark.parametrize("dim", [0, 1, -1, -2])
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "strided"])
def test_cumsum_of_float32_along_any_dim_and_layout_as_torch(dim, layout):
    def program(lib):
        x = lib.tensor(_ROWS, dtype=lib.float32)
        x = x.t() if layout == "transposed" else x[::2, 1:] if layout == "strided" else x
        out = x.cumsum(dim)
        return out, out.is_contiguous()

    both(program)


def test_cumsum_under_numpy_errors_raised_is_still_torch_s():
    def program(lib):
        return lib.tensor(_ROWS, dtype=lib.float32).cumsum(-1)

    with np.errstate(all="raise"):
        both(program)


def test_a_negative_dim_out_of_range_is_refused_as_torch():
    with pytest.raises(IndexError, match="Dimension out of range"):
        ember.zeros(2, 3).cumsum(-3)


@pytest.mark.parametrize("shape, dim", [((), 0), ((), -1), ((3,), -1), ((1,) * 6 + (3,), 6), ((1,) * 7 + (3,), -1),
                                        ((2, 3), np.int64(-1))])
def test_cumsum_finds_the_axis_of_any_number_of_dims_as_torch(shape, dim):
    def program(lib):
        out = lib.arange(math.prod(shape), dtype=lib.float32).reshape(shape).cumsum(dim)
        return out, out.is_contiguous()

    both(program)


@pytest.mark.parametrize("dim", [True, 1.0])
def test_cumsum_refuses_a_dim_that_is_not_an_integer_as_torch(dim):
    with pytest.raises(TypeError, match="must be int"):
        ember.zeros(2, 3).cumsum(dim)
    with pytest.raises(TypeError):
        torch.zeros(2, 3).cumsum(dim)
