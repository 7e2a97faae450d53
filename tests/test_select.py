"""``_select.select``: np.where by bit masks on large float arrays, bit for bit NumPy's where."""
from __future__ import annotations

import numpy as np
import torch
from hypothesis import given, settings, strategies as st

import ember
from ember._ops._select import FROM, select

_SPECIALS = (np.nan, -0.0, np.inf, -np.inf)


def _values(rng, shape, dtype) -> np.ndarray:
    values = rng.standard_normal(shape).astype(dtype)
    flat = values.reshape(-1)
    flat[: min(flat.size, 4)] = np.array(_SPECIALS[: min(flat.size, 4)], dtype)
    return values


@settings(max_examples=40, deadline=None)
@given(dtype=st.sampled_from(["float16", "float32", "float64"]), rows=st.integers(1, 200),
       broadcast=st.sampled_from(["none", "condition", "a", "b", "scalar b", "scalar a"]),
       scalar=st.sampled_from([0.0, -0.0, 2.5, np.nan]), transposed=st.booleans(),
       seed=st.integers(0, 99))
def test_bit_for_bit_numpys_where(dtype, rows, broadcast, scalar, transposed, seed):
    rng = np.random.default_rng(seed)
    width = FROM // rows + 1
    shape = (rows, width)
    condition = rng.random(shape) < 0.5
    a, b = _values(rng, shape, dtype), _values(rng, shape, dtype)
    if transposed:
        condition, a, b = condition.T, a.T, b.T
    if broadcast == "condition":
        condition = condition[:1]
    elif broadcast == "a":
        a = a[:1]
    elif broadcast == "b":
        b = b[:, :1]
    elif broadcast == "scalar b":  # where(c, x, 0.0): masks and relu-like ops (+0.0 takes a path of its own)
        b = np.full((), scalar, dtype)
    elif broadcast == "scalar a":  # where(x <= t, 0.0, x): thresholds
        a = np.full((), scalar, dtype)
    expected = np.where(condition, a, b)
    result = select(condition, a, b)
    assert result.dtype == expected.dtype and result.shape == expected.shape
    bits = np.dtype(f"i{expected.dtype.itemsize}")
    np.testing.assert_array_equal(result.view(bits), expected.view(bits))


def test_small_integer_and_mixed_operands_go_to_numpy():
    condition = np.array([True, False, True])
    np.testing.assert_array_equal(select(condition, np.arange(3), 7), [0, 7, 2])
    np.testing.assert_array_equal(select(condition, np.ones(3, np.float32), np.zeros(3)), [1.0, 0.0, 1.0])


def test_where_and_its_gradient_on_a_large_tensor_match_torch():
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((2, 300, 40)).astype(np.float32)
    results = []
    for lib in (ember, torch):
        a, b = lib.tensor(x, requires_grad=True), lib.tensor(y, requires_grad=True)
        out = lib.where(a > 0, a, b)
        out.backward(lib.tensor(x + y))
        results.append([out.detach().numpy(), a.grad.numpy(), b.grad.numpy()])
    for mine, theirs in zip(*results):
        np.testing.assert_array_equal(mine, theirs)
