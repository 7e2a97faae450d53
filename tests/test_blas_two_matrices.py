"""``_blas.matmul`` of two matrices on NumPy: ``dot`` on small results, ``matmul`` (which does not zero its result
before BLAS writes it) on large ones; the bits ``dot``'s, the values torch's."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

from ember import _blas

LAYOUTS = ["C", "F", "rows strided", "no unit stride"]


def _matrix(rows: int, columns: int, layout: str, dtype, rng) -> np.ndarray:
    if layout == "C":
        a = np.empty((rows, columns), dtype)
    elif layout == "F":
        a = np.empty((columns, rows), dtype).T
    elif layout == "rows strided":
        a = np.empty((rows, columns + 3), dtype)[:, :columns]
    else:
        a = np.empty((rows, 2 * columns), dtype)[:, ::2]
    a[...] = rng.standard_normal((rows, columns))
    if a.dtype.kind == "c":
        a.imag = rng.standard_normal((rows, columns))
    return a


def _bits(a: np.ndarray) -> np.ndarray:
    return a.view(np.uint8)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
@pytest.mark.parametrize("m, k, n", [(64, 10, 1568), (128, 64, 128), (256, 1, 256), (1, 50, 20000), (64, 128, 128)])
def test_products_keep_dots_bits_in_every_layout(dtype, m, k, n):
    rng = np.random.default_rng(m + k + n)
    for left, right in itertools.product(LAYOUTS, LAYOUTS):
        x, y = _matrix(m, k, left, dtype, rng), _matrix(k, n, right, dtype, rng)
        result = _blas.matmul(x, y)
        np.testing.assert_array_equal(_bits(result), _bits(x.dot(y)), err_msg=f"{left} @ {right}")
        assert result.flags.c_contiguous
        expected = (torch.from_numpy(np.ascontiguousarray(x)) @ torch.from_numpy(np.ascontiguousarray(y))).numpy()
        np.testing.assert_allclose(result, expected, rtol=1e-4 if dtype in (np.float32, np.complex64) else 1e-12,
                                   atol=1e-4 if dtype in (np.float32, np.complex64) else 1e-12)


def test_an_unaligned_operand_keeps_dots_bits():
    rng = np.random.default_rng(0)
    raw = np.empty(64 * 10 * 4 + 1, np.uint8)[1:]
    x = raw.view(np.float32).reshape(64, 10)
    x[...] = rng.standard_normal((64, 10))
    y = rng.standard_normal((10, 1568)).astype(np.float32)
    assert not x.flags.aligned
    np.testing.assert_array_equal(_bits(_blas.matmul(x, y)), _bits(x.dot(y)))


def test_large_results_are_made_by_matmul_small_ones_by_dot(monkeypatch):
    """Which NumPy call makes the product: a result of 64 KB or more, matmul; the small MLP's, dot."""
    made = []
    real = np.matmul

    def counted(*args, **kwargs):
        made.append(args[0].shape)
        return real(*args, **kwargs)

    monkeypatch.setattr(np, "matmul", counted)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((64, 10)).astype(np.float32)
    _blas.matmul(a, rng.standard_normal((10, 1568)).astype(np.float32))  # LeNet's Linear, its input's gradient
    _blas.matmul(a.astype(np.float64), rng.standard_normal((10, 128)))  # 64 KB
    assert made == [(64, 10), (64, 10)]
    for left, right in [((64, 64), (64, 128)), ((64, 128), (128, 128)), ((64, 128), (128, 10)), ((64, 10), (10, 128))]:
        _blas.matmul(rng.standard_normal(left).astype(np.float32), rng.standard_normal(right).astype(np.float32))
    assert len(made) == 2
