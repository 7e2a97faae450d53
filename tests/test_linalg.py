"""ember.linalg and amax/amin against torch: values, gradients of first and second order, dispatch."""
import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import ember
from ember.overrides import resolve_name

MATRIX = [[1.0, -2.0, 0.5], [3.0, 4.0, -5.0]]


def pair(values):
    return (ember.tensor(values, dtype=ember.float64, requires_grad=True),
            torch.tensor(values, dtype=torch.float64, requires_grad=True))


def same_value_and_gradient(fn_ember, fn_torch, values):
    e, t = pair(values)
    out_e, out_t = fn_ember(e), fn_torch(t)
    np.testing.assert_allclose(out_e.detach().numpy(), out_t.detach().numpy(), rtol=1e-12, atol=1e-12)
    out_e.sum().backward()
    out_t.sum().backward()
    if t.grad is None:  # torch defines no gradient here (the 0-norm): neither may ember
        assert e.grad is None
    else:
        np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("ord", [2, 1, 0, math.inf, -math.inf, 3, 0.5, -1.5])
@pytest.mark.parametrize("dim,keepdim", [(None, False), (1, False), (0, True), ((0, 1), False)])
def test_vector_norm_matches_torch(ord, dim, keepdim):
    same_value_and_gradient(lambda x: ember.linalg.vector_norm(x, ord, dim, keepdim),
                            lambda x: torch.linalg.vector_norm(x, ord, dim, keepdim), MATRIX)


@pytest.mark.parametrize("ord", ["fro", 1, -1, math.inf, -math.inf])
@pytest.mark.parametrize("keepdim", [False, True])
def test_matrix_norm_matches_torch(ord, keepdim):
    same_value_and_gradient(lambda x: ember.linalg.matrix_norm(x, ord, keepdim=keepdim),
                            lambda x: torch.linalg.matrix_norm(x, ord, keepdim=keepdim), MATRIX)


def test_batched_matrix_norm_and_norm_dispatcher_match_torch():
    batch = np.arange(24.0).reshape(2, 3, 4) - 10
    same_value_and_gradient(lambda x: ember.linalg.matrix_norm(x, 1), lambda x: torch.linalg.matrix_norm(x, 1), batch)
    for ord in (None, "fro", 1):
        same_value_and_gradient(lambda x: ember.linalg.norm(x, ord), lambda x: torch.linalg.norm(x, ord), MATRIX)
    same_value_and_gradient(lambda x: ember.linalg.norm(x, 3, dim=1), lambda x: torch.linalg.norm(x, 3, dim=1), MATRIX)


def test_the_gradient_of_the_two_norm_at_zero_is_zero_as_torch():
    same_value_and_gradient(lambda x: ember.linalg.vector_norm(x), lambda x: torch.linalg.vector_norm(x), [0.0, 0.0])


def test_vecdot_and_matmul_match_torch():
    a, b = np.arange(6.0).reshape(2, 3), np.ones((2, 3))
    assert ember.linalg.vecdot(ember.tensor(a), ember.tensor(b)).tolist() == \
        torch.linalg.vecdot(torch.tensor(a), torch.tensor(b)).tolist()
    assert ember.linalg.matmul(ember.tensor(a), ember.tensor(b).t()).tolist() == (a @ b.T).tolist()


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-3, 3).filter(lambda v: abs(v) > 0.1), min_size=2, max_size=6),
       st.sampled_from([2, 1, 3, 0.5, math.inf]))
def test_norms_pass_gradcheck_and_gradgradcheck(values, ord):
    x = ember.tensor(values, dtype=ember.float64, requires_grad=True)
    magnitudes = sorted(abs(v) for v in values)
    if ord == math.inf and min(b - a for a, b in zip(magnitudes, magnitudes[1:])) < 1e-4:
        return  # (near) ties: the max is not differentiable there, and finite differences step across the kink
    assert ember.autograd.gradcheck(lambda t: ember.linalg.vector_norm(t, ord), (x,))
    assert ember.autograd.gradgradcheck(lambda t: ember.linalg.vector_norm(t, ord), (x,))


@pytest.mark.parametrize("name", ["amax", "amin"])
def test_amax_amin_share_the_gradient_among_ties_as_torch(name):
    values = [[1.0, 5.0, 5.0], [2.0, 2.0, -1.0]]
    for dim in [(), 0, 1, (0, 1)]:
        same_value_and_gradient(lambda x: getattr(ember, name)(x, dim), lambda x: getattr(torch, name)(x, dim), values)
    e, t = pair(values)
    assert getattr(e, name)(1).grad_fn.name() == getattr(t, name)(1).grad_fn.name()


@pytest.mark.parametrize("ord", [2, 0, 1])
def test_vector_norm_of_a_0d_tensor_over_dim_0_matches_torch(ord):
    same_value_and_gradient(lambda x: ember.linalg.vector_norm(x, ord, 0),
                            lambda x: torch.linalg.vector_norm(x, ord, 0), 3.0)


@pytest.mark.parametrize("ord", [2, 0])
@pytest.mark.parametrize("dim", [2, -3, (0, 5)])
def test_vector_norm_rejects_an_out_of_range_dim_like_torch(ord, dim):
    for lib in (ember, torch):  # ember used to wrap 2 around to 0 and answer silently
        with pytest.raises(IndexError, match="Dimension out of range"):
            lib.linalg.vector_norm(lib.tensor(MATRIX), ord, dim)


def test_amax_of_an_empty_dim_raises_like_torch():
    for lib in (ember, torch):
        with pytest.raises(IndexError, match="Expected reduction dim 0 to have non-zero size"):
            lib.amax(lib.zeros(0, 3), 0)


def test_errors_name_the_function():
    with pytest.raises(RuntimeError, match="linalg.vector_norm: Expected a floating point tensor"):
        ember.linalg.vector_norm(ember.tensor([1, 2]))
    with pytest.raises(ValueError, match="ord=2 is not supported"):
        ember.linalg.matrix_norm(ember.ones(2, 2), 2)
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        ember.linalg.matrix_norm(ember.ones(2))


class Recorder:
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return resolve_name(func)


@pytest.mark.parametrize("name", ["vector_norm", "matrix_norm", "norm", "vecdot", "matmul"])
def test_linalg_functions_dispatch_through_the_protocol(name):
    function = getattr(ember.linalg, name)
    args = (Recorder(), Recorder()) if name in ("vecdot", "matmul") else (Recorder(),)
    assert function(*args) == f"ember.linalg.{name}"
    assert function in ember.overrides.get_overridable_functions()[ember.linalg]


@pytest.mark.parametrize("kwargs", [{}, {"p": 1}, {"p": 2, "dim": 1}, {"dim": 0, "keepdim": True}, {"p": "fro"},
                                    {"p": "fro", "dim": 1}, {"p": math.inf}, {"p": 0}, {"p": 3, "dim": (0, 1)},
                                    {"p": -1}, {"p": "fro", "dim": (0, 1)}])
def test_norm_function_and_method_match_torch(kwargs):
    """torch.norm is a vector norm whatever the dims ('fro' is the 2-norm): value and gradient."""
    same_value_and_gradient(lambda x: ember.norm(x, **kwargs), lambda x: torch.norm(x, **kwargs), MATRIX)
    same_value_and_gradient(lambda x: x.norm(**kwargs), lambda x: x.norm(**kwargs), MATRIX)


def test_norm_dtype_and_refusals_as_torch():
    for lib in (ember, torch):
        assert lib.ones(2, dtype=lib.float16).norm(dtype=lib.float64).dtype == lib.float64  # widening is allowed
        with pytest.raises(RuntimeError, match="without narrowing"):
            lib.ones(2, dtype=lib.float64).norm(dtype=lib.float32)
        with pytest.raises(RuntimeError, match="without narrowing"):
            lib.linalg.matrix_norm(lib.ones(2, 2), dtype=lib.float16)
        with pytest.raises(RuntimeError, match="Expected a floating point"):
            lib.tensor([1, 2]).norm()
        with pytest.raises(RuntimeError, match="Expected a floating point"):
            lib.linalg.vecdot(lib.ones(2, dtype=lib.int64), lib.ones(2, dtype=lib.int64))
    assert resolve_name(ember.norm) == "ember.norm" and resolve_name(ember.Tensor.norm) == "ember.Tensor.norm"
