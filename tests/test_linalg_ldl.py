"""linalg.ldl_factor, ldl_factor_ex and ldl_solve against torch: the same pivots, factors and solutions."""
import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from twins import both, both_raise, normalise

import ember


def _symmetric(seed: int, shape: tuple, diagonal_scale: float = 1.0, dtype=np.float64) -> np.ndarray:
    a = np.random.default_rng(seed).standard_normal(shape)
    a = a + np.swapaxes(a, -1, -2)
    n = shape[-1]
    a[..., range(n), range(n)] *= diagonal_scale  # small diagonals force exchanges and 2x2 blocks
    return a.astype(dtype)


@given(seed=st.integers(0, 10_000), n=st.integers(1, 12), scale=st.sampled_from([1.0, 1e-3, 0.0]))
def test_factors_and_solutions_as_torch(seed, n, scale):
    a = _symmetric(seed, (n, n), scale)
    if np.linalg.matrix_rank(a) < n:
        return

    def program(lib):
        LD, pivots = lib.linalg.ldl_factor(lib.tensor(a))
        b = lib.tensor(np.random.default_rng(seed + 1).standard_normal((n, 3)))
        return LD, pivots, lib.linalg.ldl_solve(LD, pivots, b), lib.linalg.ldl_solve(LD, pivots.long(), b)

    both(program)


def test_ldl_reconstructs_a_and_reads_only_the_lower_triangle():
    a = _symmetric(3, (6, 6), 1e-3)
    noisy_upper = np.tril(a) + np.triu(np.full_like(a, 7.0), 1)
    LD, pivots = ember.linalg.ldl_factor(ember.tensor(noisy_upper))
    x = ember.linalg.ldl_solve(LD, pivots, ember.eye(6, dtype=ember.float64))
    np.testing.assert_allclose(x.numpy() @ a, np.eye(6), atol=1e-10)  # the inverse of the symmetric A
    assert np.all(np.triu(LD.numpy(), 1) == 0)


def test_batches_dtypes_and_broadcast_solves_as_torch():
    a = _symmetric(5, (2, 3, 5, 5), 1e-2)

    def program(lib):
        LD, pivots, info = lib.linalg.ldl_factor_ex(lib.tensor(a))
        b = lib.tensor(np.random.default_rng(6).standard_normal((5, 2)))
        return LD, pivots, info, LD.dtype, pivots.dtype, info.dtype, lib.linalg.ldl_solve(LD, pivots, b)

    both(program, prepare=normalise)
    single = [lib.linalg.ldl_factor(lib.tensor(a.astype(np.float32))) for lib in (torch, ember)]
    assert single[1].LD.dtype == ember.float32
    np.testing.assert_array_equal(single[0].pivots.numpy(), single[1].pivots.numpy())
    np.testing.assert_allclose(single[1].LD.numpy(), single[0].LD.numpy(), rtol=1e-4, atol=1e-5)


def test_empty_and_singular_matrices_as_torch():
    def program(lib):
        empty = lib.linalg.ldl_factor(lib.empty(0, 0, dtype=lib.float64))
        singular = lib.zeros(2, 3, 3, dtype=lib.float64)
        singular[:, 0, 0] = 1.0
        singular[1] = lib.eye(3)
        return empty.LD.shape, empty.pivots.shape, lib.linalg.ldl_factor_ex(singular)

    both(program, prepare=normalise)
    with pytest.raises(RuntimeError, match="is singular: D's diagonal element 2 is zero"):  # torch: an internal error
        ember.linalg.ldl_factor(ember.diag(ember.tensor([1.0, 0.0, 0.0])))
    with pytest.raises(RuntimeError, match="batch element 0"):
        ember.linalg.ldl_factor_ex(ember.zeros(2, 2, 2), check_errors=True)


def test_no_derivative_as_torch():
    for lib in (torch, ember):
        a = lib.tensor(_symmetric(1, (3, 3)), requires_grad=True)
        LD, pivots = lib.linalg.ldl_factor(a)
        assert not pivots.requires_grad
        with pytest.raises(RuntimeError, match="derivative for aten::linalg_ldl_factor_ex is not implemented"):
            LD.sum().backward()
        b = lib.ones(3, 1, dtype=lib.float64, requires_grad=True)
        with pytest.raises(RuntimeError, match="derivative for aten::linalg_ldl_solve is not implemented"):
            lib.linalg.ldl_solve(LD.detach(), pivots, b).sum().backward()


@pytest.mark.parametrize("program, fragment", [
    (lambda lib: lib.linalg.ldl_factor(lib.ones(2, 3)), "must be batches of square matrices, but they are 2 by 3"),
    (lambda lib: lib.linalg.ldl_factor(lib.ones(3)), "must have at least 2 dimensions"),
    (lambda lib: lib.linalg.ldl_factor(lib.ones(2, 2, dtype=lib.int64)), "Expected a floating point"),
    (lambda lib: lib.linalg.ldl_solve(*lib.linalg.ldl_factor(lib.eye(4)), lib.ones(3, 1)),
     "each A matrix is 4 by 4 but each b matrix is 3 by 1"),
    (lambda lib: lib.linalg.ldl_solve(*lib.linalg.ldl_factor(lib.eye(4)), lib.ones(4, 1, dtype=lib.float64)),
     "Expected b and A to have the same dtype, but found b of type Double and A of type Float"),
])
def test_errors_as_torch(program, fragment):
    both_raise(program, RuntimeError, fragment)


def test_out_as_torch():
    def program(lib):
        a = lib.tensor(_symmetric(2, (3, 3), 1e-3))
        LD, pivots = lib.empty(3, 3, dtype=lib.float64), lib.empty(3, dtype=lib.int32)
        returned = lib.linalg.ldl_factor(a, out=(LD, pivots))
        x = lib.empty(3, 1, dtype=lib.float64)
        lib.linalg.ldl_solve(LD, pivots, lib.ones(3, 1, dtype=lib.float64), out=x)
        return returned[0] is LD, LD, pivots, x

    both(program)


def test_under_vmap():
    from ember.func import vmap

    A, B = ember.tensor(_symmetric(4, (3, 4, 4), 1e-2)), ember.randn(3, 4, 2, dtype=ember.float64)
    LD, pivots = vmap(ember.linalg.ldl_factor)(A)
    each = [ember.linalg.ldl_factor(A[i]) for i in range(3)]
    assert ember.equal(LD, ember.stack([f.LD for f in each])) and ember.equal(pivots, ember.stack([f.pivots for f in each]))
    solved = vmap(ember.linalg.ldl_solve)(LD, pivots, B)
    assert ember.allclose(solved, ember.stack([ember.linalg.ldl_solve(LD[i], pivots[i], B[i]) for i in range(3)]))
