"""softmax along the last dim of few elements, where ember sums rows by a product with a column of ones and
skips taking each row's largest out: values and gradients as torch's (log_softmax's beside them), and the rows
where the short path must hand over (overflow, nan, sums too small for the quotients' digits) as torch's too."""
import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import ember
from ember._ops import statistics
from twins import both, both_raise, leaf

_ROWS = st.tuples(st.integers(1, 6), st.integers(1, 8))


def _rows(shape: tuple, seed: int, scale: float, dtype) -> np.ndarray:
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(dtype)


@settings(max_examples=60, deadline=None)
@given(shape=_ROWS, seed=st.integers(0, 999), scale=st.sampled_from([1e-3, 1.0, 5.0, 30.0, 200.0]),
       single=st.booleans())
def test_softmax_of_few_is_as_close_to_the_exact_value_as_torch(shape, seed, scale, single):
    """Against the value in extended precision: each quotient within a few units in the last place of it, or
    as close as torch's, whichever is looser; tiny results within torch's absolute error."""
    dtype = np.float32 if single else np.float64
    rows = _rows(shape, seed, scale, dtype)
    wide = rows.astype(np.longdouble)  # (64 bits of mantissa on x86, 53 elsewhere: then the test is looser)
    exact = np.exp(wide - wide.max(-1, keepdims=True))
    exact = (exact / exact.sum(-1, keepdims=True)).astype(np.float64)
    mine = ember.tensor(rows).softmax(-1).numpy().astype(np.float64)
    theirs = torch.tensor(rows).softmax(-1).numpy().astype(np.float64)
    ulp = np.spacing(exact.astype(dtype)).astype(np.float64)
    allowed = np.maximum(4 * ulp, 2 * np.abs(theirs - exact)) + np.finfo(dtype).smallest_subnormal * 2 ** 8
    assert (np.abs(mine - exact) <= allowed).all()


@pytest.mark.parametrize("row", [
    [100.0, 0.0],  # exp overflows without the shift: the general path
    [-200.0, -300.0],  # every exp underflows: a sum of 0
    [-10.0, -100.0],  # a sum below 2^-8: the quotient would keep too few digits
    [math.nan, 1.0],
    [math.inf, 1.0],
    [-math.inf, -math.inf],
    [-math.inf, 2.0],
    [88.0, 88.5],  # large but finite exps
])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_rows_the_short_path_hands_over_are_torch_s(row, dtype):
    def program(lib):
        x = lib.tensor([row, [0.5, -0.5]], dtype=getattr(lib, dtype))
        return x.softmax(-1), x.softmax(1), x.log_softmax(-1)

    both(program)


def test_the_short_path_is_taken_on_few_elements_and_left_on_many_or_other_layouts():
    few = np.random.default_rng(0).standard_normal((4, 4)).astype(np.float32)
    assert statistics._short_row_ones(few, (1,)) is not None
    assert statistics._short_row_ones(few, (0,)) is None
    assert statistics._short_row_ones(few.T, (1,)) is None  # not contiguous: NumPy's reduction
    assert statistics._short_row_ones(np.zeros((100, 100), np.float32), (1,)) is None
    assert statistics._short_row_ones(few.astype(np.float16), (1,)) is None
    assert statistics._short_row_ones(np.float32(1.0).reshape(()), ()) is None
    assert statistics._short_row_ones(np.zeros((0, 4), np.float32), (1,)) is None


@pytest.mark.parametrize("length", [1, 4, 16, 17, 100])
def test_row_sums_are_spread_over_short_rows_and_kept_as_one_on_longer(length):
    rows = np.random.default_rng(length).standard_normal((3, length))
    sums = statistics._short_row_sums(rows, (1,))
    assert sums.shape == (3, length if length <= statistics._SPREAD_ROW else 1)
    np.testing.assert_allclose(sums, np.broadcast_to(rows.sum(1, keepdims=True), sums.shape), rtol=1e-14)


@settings(max_examples=80, deadline=None)
@given(shape=_ROWS, seed=st.integers(0, 999), scale=st.sampled_from([1e-3, 0.5, 1.0, 3.0, 30.0]),
       single=st.booleans())
def test_log_softmax_of_few_is_as_close_to_the_exact_value_as_torch(shape, seed, scale, single):
    """Against the value in extended precision: within a few units in the last place of it, or as close as torch's,
    whichever is looser (its sums of short rows are products with ones, as softmax's)."""
    dtype = np.float32 if single else np.float64
    rows = _rows(shape, seed, scale, dtype)
    wide = rows.astype(np.longdouble)
    shifted = wide - wide.max(-1, keepdims=True)
    exact = (shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))).astype(np.float64)
    mine = ember.tensor(rows).log_softmax(-1).numpy().astype(np.float64)
    theirs = torch.tensor(rows).log_softmax(-1).numpy().astype(np.float64)
    ulp = np.abs(np.spacing(exact.astype(dtype))).astype(np.float64)  # (spacing is negative below 0)
    allowed = np.maximum(4 * ulp, 2 * np.abs(theirs - exact)) + np.finfo(dtype).smallest_subnormal * 2 ** 8
    assert (np.abs(mine - exact) <= allowed).all()


@pytest.mark.parametrize("row", [
    [3.0, -math.inf, -math.inf, -math.inf],  # one finite entry: log-probability exactly 0, probability exactly 1
    [3.0],
    [8.0, 0.0, 0.0, 0.0],  # one dominant entry: a log-probability near 0
    [-4.0, -6.0, -6.0, -6.0],
])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_dominant_entry_of_a_short_row_is_torch_s(row, dtype):
    def program(lib):
        x = lib.tensor([row, row[::-1]], dtype=getattr(lib, dtype))
        return x.log_softmax(-1), x.softmax(-1)

    both(program)


@settings(max_examples=25, deadline=None)
@given(shape=st.lists(st.integers(1, 5), min_size=1, max_size=3).map(tuple), seed=st.integers(0, 99),
       dim=st.integers(-3, 2), log=st.booleans())
def test_values_and_gradients_along_any_dim_as_torch(shape, seed, dim, log):
    dim = dim % len(shape)

    def program(lib):
        x = leaf(lib, _rows(shape, seed, 3.0, np.float64))
        out = x.log_softmax(dim) if log else x.softmax(dim)
        (out * lib.tensor(_rows(shape, seed + 1, 1.0, np.float64))).sum().backward()
        return out, x.grad

    both(program)


@pytest.mark.parametrize("log", [False, True])
def test_gradcheck_and_gradgradcheck_on_few_and_on_transposed_rows(log):
    fn = ember.log_softmax if log else ember.softmax
    x = ember.tensor(_rows((3, 4), 1, 2.0, np.float64), requires_grad=True)
    assert ember.autograd.gradcheck(lambda t: fn(t, -1), (x,))
    assert ember.autograd.gradgradcheck(lambda t: fn(t, -1), (x,))
    assert ember.autograd.gradcheck(lambda t: fn(t.t(), -1), (x,))


@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("shape, dim, dtype", [
    ((3,), -1, "float64"), ((2, 3), np.int64(1), "float32"), ((2, 3), -2, "float32"),
    ((1, 2, 1, 1, 3), 4, "float32"), ((1, 2, 1, 1, 3), -5, "float64"),  # more dims than the usual call's table
    ((0, 3), 1, "float32"), ((3, 0), -1, "float64"), ((), 0, "float32"), ((), -1, "float64"),
    ((3, 2), "transposed", "float32"),  # short rows, but not contiguous: the shifted form
])
def test_the_usual_call_and_the_calls_beside_it_as_torch(log, shape, dim, dtype):
    def program(lib):
        x = lib.tensor(_rows(shape, 3, 2.0, np.float64), dtype=getattr(lib, dtype))
        along = dim
        if dim == "transposed":
            x, along = x.t(), 1
        out = x.log_softmax(along) if log else x.softmax(along)
        return out, str(out.dtype).split(".")[1], out.is_contiguous()

    both(program)


@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_a_bool_or_out_of_range_dim_is_refused_as_torch(op):
    both_raise(lambda lib: getattr(lib.ones(2, 3), op)(True), TypeError, "must be int, not bool")
    both_raise(lambda lib: getattr(lib.ones(2, 3), op)(2), IndexError, "Dimension out of range")
    both_raise(lambda lib: getattr(lib.ones(2, 3), op)(-3), IndexError, "Dimension out of range")
