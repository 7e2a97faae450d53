"""Float32 sums and scans along long dims are as accurate as torch's.

NumPy adds along all but the innermost dim of its loop one element after another, and runs its scans in
the array's dtype; torch sums by a cascade and carries float32 scans in double. Each op here is measured
against the float64 result, and ember's error may not exceed a few times torch's.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import ember
from ember._ops import _cascade

ROWS = 200_000


def _relative_errors(op, values: np.ndarray) -> tuple:
    """(ember's, torch's) largest error of ``op`` on float32 ``values``, relative to the float64 result's size."""
    truth = op(torch, torch.from_numpy(values.astype(np.float64))).numpy()
    scale = np.abs(truth).max()
    mine = op(ember, ember.tensor(values)).numpy().astype(np.float64)
    theirs = op(torch, torch.from_numpy(values)).numpy().astype(np.float64)
    return np.abs(mine - truth).max() / scale, np.abs(theirs - truth).max() / scale


@pytest.fixture(scope="module")
def columns() -> np.ndarray:
    return (np.random.default_rng(0).standard_normal((ROWS, 3)) + 3).astype(np.float32)


DOWN_THE_COLUMNS = {
    "sum": lambda L, x: x.sum(0),
    "mean": lambda L, x: x.mean(0),
    "var": lambda L, x: x.var(0),
    "std": lambda L, x: x.std(0),
    "var_mean": lambda L, x: L.var_mean(x, 0)[1],
    "nansum": lambda L, x: L.nansum(x, 0),
    "nanmean": lambda L, x: L.nanmean(x, 0),
    "logsumexp": lambda L, x: L.logsumexp(x - 3, 0),
    "sum of the transpose": lambda L, x: x.t().sum(1),
    "sum of every element of the transpose": lambda L, x: x.t().sum(),
    "sum over two dims": lambda L, x: x.reshape(ROWS // 8, 8, 3).sum((0, 1)),
    "half sum": lambda L, x: (x / 64).half().sum(0).float(),
    "cumsum": lambda L, x: x.cumsum(0),
    "cumsum of the transpose": lambda L, x: x.t().cumsum(1),
    "cumprod": lambda L, x: (1 + (x - 3) * 1e-3).cumprod(0),
    "logcumsumexp": lambda L, x: L.logcumsumexp(x, 0),
    "cumulative_trapezoid": lambda L, x: L.cumulative_trapezoid(x, dim=0),
    "cumsum's gradient": lambda L, x: L.autograd.grad(x.requires_grad_().cumsum(0), x, x.detach())[0],
}


@pytest.mark.parametrize("name", DOWN_THE_COLUMNS)
def test_long_dims_are_summed_as_accurately_as_torch(name, columns):
    mine, theirs = _relative_errors(DOWN_THE_COLUMNS[name], columns)
    assert mine <= 4 * theirs + 2e-7, f"{name}: ember's relative error {mine:.1e}, torch's {theirs:.1e}"


def test_a_bias_gradient_over_a_long_batch_is_as_accurate_as_torch(columns):
    truth = columns.astype(np.float64).sum(0)
    errors = []
    for lib in (ember, torch):
        bias = lib.zeros(3, requires_grad=True)
        (lib.tensor(columns) + bias).backward(lib.tensor(columns))
        errors.append(np.abs(bias.grad.numpy() / truth - 1).max())
    assert errors[0] <= 4 * errors[1] + 2e-7, f"ember {errors[0]:.1e}, torch {errors[1]:.1e}"


_layouts = st.sampled_from(["as is", "transposed", "reversed"])


@settings(max_examples=30, deadline=None)
@given(rows=st.integers(513, 20_000), width=st.integers(1, 3), axis=st.integers(0, 1),
       layout=_layouts, complex_values=st.booleans(), out_from_the_end=st.booleans())
def test_running_sums_match_double_precision(rows, width, axis, layout, complex_values, out_from_the_end):
    values = np.random.default_rng(rows).random((rows, width) if axis == 0 else (width, rows)).astype(np.float32)
    if complex_values:
        values = (values + 1j * values[::-1]).astype(np.complex64)
    values = _laid_out(values, layout)
    axis = axis if layout != "transposed" else 1 - axis
    out = np.empty(values.shape, values.dtype)
    if out_from_the_end:  # as cumsum's gradient writes it: reversed along the scan
        out = np.flip(out, axis)
    result = _cascade.scan(np.add, values, axis, out)
    assert result is out and result.dtype == values.dtype
    truth = np.add.accumulate(values.astype(np.complex128 if complex_values else np.float64), axis)
    # a few ulps: within one block the running sum is float32's, a chain of at most SCAN_BLOCK additions
    np.testing.assert_allclose(result, truth, rtol=1e-6, atol=0)


@settings(max_examples=30, deadline=None)
@given(rows=st.integers(1, 30_000), width=st.integers(1, 4), layout=_layouts, keepdims=st.booleans(),
       axes=st.sampled_from([(0,), (1,), (0, 1), None]), double=st.booleans())
def test_sums_by_blocks_match_double_precision(rows, width, layout, keepdims, axes, double):
    values = _laid_out(np.random.default_rng(rows).random((rows, width)).astype(np.float32), layout)
    dtype = np.float64 if double else None
    result = _cascade.add_reduce(values, axes, dtype, keepdims)
    expected = np.add.reduce(values, axes, dtype, keepdims=keepdims)
    assert result.shape == expected.shape and result.dtype == expected.dtype
    np.testing.assert_allclose(result, np.add.reduce(values.astype(np.float64), axes, keepdims=keepdims),
                               rtol=4e-7, atol=0)


def _laid_out(values: np.ndarray, layout: str) -> np.ndarray:
    if layout == "transposed":
        return values.T
    return values[::-1] if layout == "reversed" else values


def test_a_running_product_and_log_sum_carry_in_double():
    values = np.random.default_rng(1).standard_normal(50_000).astype(np.float32)
    near_one = 1 + values * np.float32(1e-3)
    with np.errstate(invalid="ignore"):  # NumPy's buffered cast of the fresh output
        products = _cascade.scan(np.multiply, near_one, 0)
        logs = _cascade.scan(np.logaddexp, values, 0)
    np.testing.assert_allclose(products, np.multiply.accumulate(near_one.astype(np.float64)), rtol=2e-7)
    np.testing.assert_allclose(logs, np.logaddexp.accumulate(values.astype(np.float64)), rtol=2e-7)


def test_short_scans_and_small_sums_take_numpys_own_path():
    values = np.arange(12, dtype=np.float32).reshape(3, 4)
    assert np.array_equal(_cascade.scan(np.add, values, 1), np.cumsum(values, 1))
    assert np.array_equal(_cascade.add_reduce(values, (0,)), values.sum(0))
    integers = np.arange(20_000).reshape(-1, 2)
    assert np.array_equal(_cascade.scan(np.add, integers, 0), np.cumsum(integers, 0))


@pytest.mark.parametrize("op", ["cumsum", "cumprod", "logcumsumexp", "cumsum from the end"])
def test_short_float32_scans_carry_in_double_as_torchs(op):
    # in single precision, a running sum that returns near zero keeps its larger terms' rounding: up to
    # thousands of units in its last place, where torch's (carried in double) is within one
    values = np.random.default_rng(4).standard_normal((45, 60)).astype(np.float32)
    if op == "cumprod":
        values = 1 + values / np.float32(100)
    results = []
    for lib in (ember, torch):
        x = lib.tensor(values, requires_grad=True)
        if op == "cumsum from the end":  # cumsum's gradient
            (grad,) = lib.autograd.grad(x.cumsum(1), x, lib.tensor(values))
            results.append(grad.numpy())
        else:
            results.append(getattr(lib, op)(x, 1).detach().numpy())
    np.testing.assert_array_equal(*results)


@pytest.mark.parametrize("special", [np.inf, -np.inf, np.nan, "inf and -inf", "overflow"])
@pytest.mark.parametrize("from_the_end", [False, True])
def test_long_running_sums_with_infinities_and_nans_match_torch(special, from_the_end):
    values = np.random.default_rng(3).random((3, 5000)).astype(np.float32)
    if special == "inf and -inf":
        values[1, 100], values[1, 3000] = np.inf, -np.inf
    elif special == "overflow":
        values[2, 2000:2004] = 3e38
    else:
        values[0, 4321] = special
    results = []
    for lib in (ember, torch):
        x = lib.tensor(values, requires_grad=True)
        if from_the_end:  # cumsum's gradient: the running sum from the end
            (grad,) = lib.autograd.grad(x.cumsum(1), x, lib.tensor(values))
            results.append(grad.numpy())
        else:
            results.append(x.detach().cumsum(1).numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-6, atol=0)


@pytest.mark.parametrize("shape, dims", [((50, 30, 600), (0, 1)), ((30, 700, 20), (0, 1)), ((700, 10, 30), (0, 2))])
def test_several_short_dims_reduced_together_are_as_accurate_as_torch(shape, dims):
    values = (np.random.default_rng(4).standard_normal(shape) + 3).astype(np.float32)
    mine, theirs = _relative_errors(lambda L, x: x.sum(dims), values)
    assert mine <= 4 * theirs + 2e-7, f"ember's relative error {mine:.1e}, torch's {theirs:.1e}"


@pytest.mark.parametrize("values", [[1e20, -1e20, 3e20], [3e38, -3e38, 1e38], [1e-30, 2e-30, 3e-30],
                                    [1e25] * 5 + [2e25], [1e-21, 3e-21, 1e-21, 1e-21], [2.0, 2.0, 2.0]])
@pytest.mark.parametrize("op", ["var", "std", "std along a dim", "var_mean", "std_mean"])
def test_a_float32_spread_beyond_singles_range_is_taken_in_double_as_torch(values, op):
    """Deviations whose squares overflow or underflow float32: torch computes the spread in double."""
    def run(lib, x):
        if op == "std along a dim":
            return lib.stack([x, 2 * x]).std(1)
        if op in ("var_mean", "std_mean"):
            return lib.stack(getattr(lib, op)(x))
        return getattr(x, op)()
    array = np.array(values, np.float32)
    np.testing.assert_allclose(run(ember, ember.tensor(array)).numpy(), run(torch, torch.from_numpy(array)).numpy(),
                               rtol=1e-6, atol=0)


NORMALIZATIONS = {
    "layer_norm": lambda L, x: L.nn.functional.layer_norm(x, (6,)),
    "group_norm": lambda L, x: L.nn.functional.group_norm(x.reshape(2, 4, 3), 2),
    "instance_norm": lambda L, x: L.nn.functional.instance_norm(x.reshape(2, 4, 3)),
    "batch_norm": lambda L, x: L.nn.functional.batch_norm(x, None, None, training=True),
}


@pytest.mark.parametrize("name", NORMALIZATIONS)
@pytest.mark.parametrize("scale", [1e20, 3e36])
def test_normalizing_values_whose_squares_overflow_single_gives_the_normalized_values(name, scale):
    """Deliberately not torch's float32 result (nan for layer and group norm, 0 for the others): the values
    normalized, as torch computes them in double."""
    values = (np.random.default_rng(5).standard_normal((4, 6)) * scale).astype(np.float32)
    normalize = NORMALIZATIONS[name]
    x = ember.tensor(values, requires_grad=True)
    result = normalize(ember, x)
    expected = normalize(torch, torch.from_numpy(values.astype(np.float64))).numpy()
    np.testing.assert_allclose(result.detach().numpy(), expected, rtol=1e-4, atol=1e-5)
    result.pow(2).sum().backward()
    assert np.isfinite(x.grad.numpy()).all()
