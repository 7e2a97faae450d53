"""ember.linalg and amax/amin against torch: values, gradients of first and second order, dispatch."""
import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import ember
from ember.overrides import resolve_name
from twins import both, both_raise, grad_fn_name, leaf, normalise

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


@pytest.mark.parametrize("ord", ["fro", "nuc", 2, -2, 1, -1, math.inf, -math.inf])
@pytest.mark.parametrize("keepdim", [False, True])
def test_matrix_norm_matches_torch(ord, keepdim):
    same_value_and_gradient(lambda x: ember.linalg.matrix_norm(x, ord, keepdim=keepdim),
                            lambda x: torch.linalg.matrix_norm(x, ord, keepdim=keepdim), MATRIX)


def test_batched_matrix_norm_and_norm_dispatcher_match_torch():
    batch = np.arange(24.0).reshape(2, 3, 4) - 10
    same_value_and_gradient(lambda x: ember.linalg.matrix_norm(x, 1), lambda x: torch.linalg.matrix_norm(x, 1), batch)
    for ord in (None, "fro", 1, "nuc", 2, -2):
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
    with pytest.raises(RuntimeError, match="linalg.matrix_norm: Order 3 not supported"):
        ember.linalg.matrix_norm(ember.ones(2, 2), 3)
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        ember.linalg.matrix_norm(ember.ones(2))


class Recorder:
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return resolve_name(func)


@pytest.mark.parametrize("name", ["vector_norm", "matrix_norm", "norm", "svdvals", "vecdot", "matmul"])
def test_linalg_functions_dispatch_through_the_protocol(name):
    function = getattr(ember.linalg, name)
    args = (Recorder(), Recorder()) if name in ("vecdot", "matmul") else (Recorder(),)
    assert function(*args) == f"ember.linalg.{name}"
    assert function in ember.overrides.get_overridable_functions()[ember.linalg]


@pytest.mark.parametrize("kwargs", [{}, {"p": 1}, {"p": 2, "dim": 1}, {"dim": 0, "keepdim": True}, {"p": "fro"},
                                    {"p": "fro", "dim": 1}, {"p": math.inf}, {"p": 0}, {"p": 3, "dim": (0, 1)},
                                    {"p": -1}, {"p": "fro", "dim": (0, 1)}, {"p": "nuc"}, {"p": "nuc", "dim": (1, 0)},
                                    {"p": "nuc", "keepdim": True}])
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


# ---- singular values: svdvals, and the 'nuc', 2 and -2 matrix norms built on them

SPECTRAL = ["nuc", 2, -2]


def random_matrices(shape, seed: int = 0) -> np.ndarray:
    """Gaussian entries: distinct, nonzero singular values (almost surely), so every gradient is defined."""
    return np.random.default_rng(seed).standard_normal(shape)


def conditioned_matrices(shape, singular_values, seed: int) -> np.ndarray:
    """Matrices Q1 diag(s) Q2 with the given singular values (random orthonormal Q1, Q2), one per batch entry."""
    rng = np.random.default_rng(seed)
    *batch, m, n = shape
    q1 = np.linalg.qr(rng.standard_normal((*batch, m, m)))[0][..., :, :len(singular_values)]
    q2 = np.linalg.qr(rng.standard_normal((*batch, n, n)))[0][..., :len(singular_values), :]
    return q1 @ (np.asarray(singular_values)[:, None] * q2)


def value_and_gradient_agree(program, values, dtype: str = "float64"):
    """``program(lib, A)`` in torch and in ember: the same value, dtype and grad_fn, and the same gradient of a
    weighted sum of it (weights, so that each output's gradient counts), float32 to float32's precision."""
    results = []
    for lib in (torch, ember):
        A = leaf(lib, values, dtype)
        out = program(lib, A)
        weights = np.linspace(1.0, 2.0, out.numel()).reshape(tuple(out.shape))
        (out * lib.tensor(weights, dtype=out.dtype)).sum().backward()
        results.append((out.detach().numpy(), A.grad.numpy(), normalise(out.dtype), grad_fn_name(out)))
    (value, grad, *names), (my_value, my_grad, *my_names) = results
    assert my_names == names
    assert my_value.shape == value.shape and my_grad.dtype == grad.dtype
    tolerance = {"rtol": 1e-5, "atol": 1e-5} if dtype == "float32" else {"rtol": 1e-10, "atol": 1e-12}
    np.testing.assert_allclose(my_value, value, **tolerance)
    np.testing.assert_allclose(my_grad, grad, **tolerance)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("transposed", [False, True], ids=["contiguous", "transposed"])
@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 5), (1, 1), (2, 3, 4), (2, 2, 4, 3)])
def test_svdvals_value_and_gradient_match_torch(shape, transposed, dtype):
    if transposed:
        value_and_gradient_agree(lambda lib, A: lib.linalg.svdvals(A.mT), random_matrices(shape), dtype)
    else:
        value_and_gradient_agree(lambda lib, A: lib.linalg.svdvals(A), random_matrices(shape), dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("ord", SPECTRAL)
@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 3, 4)])
def test_spectral_and_nuclear_norms_match_torch(shape, ord, dtype):
    values = random_matrices(shape, seed=1)
    value_and_gradient_agree(lambda lib, A: lib.linalg.matrix_norm(A, ord), values, dtype)
    value_and_gradient_agree(lambda lib, A: lib.linalg.matrix_norm(A.mT, ord), values, dtype)  # not contiguous


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", [(-2, -1), (-1, -2), (0, 1), (1, 0), (0, 2), (2, 0), (-3, 1)])
@pytest.mark.parametrize("ord", SPECTRAL)
def test_spectral_norms_over_any_two_dims_match_torch(ord, dim, keepdim):
    value_and_gradient_agree(lambda lib, A: lib.linalg.matrix_norm(A, ord, dim, keepdim), random_matrices((2, 3, 4)))


@pytest.mark.parametrize("ord", SPECTRAL)
def test_spectral_norms_take_dtype_as_torch(ord):
    """dtype converts the input first (widening only), so the result and the gradient's path are float64."""
    value_and_gradient_agree(lambda lib, A: lib.linalg.matrix_norm(A, ord, dtype=lib.float64),
                             random_matrices((2, 3)), "float32")


def test_nuclear_norm_through_norm_and_the_tensor_method_matches_torch():
    values = random_matrices((2, 3, 4), seed=2)
    value_and_gradient_agree(lambda lib, A: lib.norm(A, p="nuc", dim=(0, 2), keepdim=True), values)
    value_and_gradient_agree(lambda lib, A: A.norm(p="nuc", dim=(2, 1)), values)
    value_and_gradient_agree(lambda lib, A: lib.linalg.norm(A[0], 2), values)
    value_and_gradient_agree(lambda lib, A: lib.linalg.norm(A, -2, dim=(1, 2)), values)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(1, 2), max_size=1), st.integers(1, 4), st.integers(1, 4), st.integers(0, 2**32 - 1))
def test_singular_values_pass_gradcheck_and_gradgradcheck(batch, m, n, seed):
    # singular values 1, 1.5, 2, ...: distinct and away from 0, where every derivative is defined
    values = conditioned_matrices((*batch, m, n), 1.0 + 0.5 * np.arange(min(m, n))[::-1], seed)
    A = ember.tensor(values, dtype=ember.float64, requires_grad=True)
    functions = [ember.linalg.svdvals] + [lambda t, ord=ord: ember.linalg.matrix_norm(t, ord) for ord in SPECTRAL]
    for function in functions:
        assert ember.autograd.gradcheck(function, (A,))
        assert ember.autograd.gradgradcheck(function, (A,))


@pytest.mark.parametrize("ord", [None] + SPECTRAL)
@pytest.mark.parametrize("shape", [(3, 4), (2, 4, 3)])
def test_second_derivatives_of_singular_values_match_torch(shape, ord):
    """The gradient's own gradient, through U and Vh: what double backward computes."""
    def program(lib):
        A = leaf(lib, random_matrices(shape, seed=3))
        out = lib.linalg.svdvals(A) if ord is None else lib.linalg.matrix_norm(A, ord)
        (grad,) = lib.autograd.grad((out * out).sum(), A, create_graph=True)
        (grad * grad).sum().backward()
        return grad, A.grad

    both(program)


def test_singular_vector_gradients_match_torch():
    """svdvals' gradient is differentiated through U and Vh: their own gradients (of a loss that does not depend on
    the signs the SVD picks for them) are checked here, for square, tall and wide matrices."""
    def program(lib, A):
        if lib is torch:
            U, S, Vh = torch.linalg.svd(A, full_matrices=False)
        else:
            U, S, Vh = ember.linalg.SingularValueDecomposition.apply(A)
        return (U[..., :, :1] * Vh[..., :1, :]) * 3 + (U ** 4).sum(-1).unsqueeze(-1) + (Vh ** 4).sum(-2).unsqueeze(-2)

    for shape in [(3, 3), (4, 2), (2, 5), (2, 3, 4)]:
        value_and_gradient_agree(program, random_matrices(shape, seed=4))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 3), min_size=2, max_size=3),
       st.lists(st.sampled_from([0.0, 1.0, -1.0, 0.5, 2.0, -3.0, 1e-3]), min_size=36, max_size=36))
def test_singular_values_of_any_matrix_match_torch(shape, entries):
    """Values only (gradients are not unique where singular values repeat or vanish): rank-deficient, empty, ..."""
    values = np.array(entries[:math.prod(shape)]).reshape(shape)
    for program in [lambda lib: lib.linalg.svdvals(lib.tensor(values))] + [
            lambda lib, ord=ord: lib.linalg.matrix_norm(lib.tensor(values), ord) for ord in ["nuc", 2]]:
        expected, actual = program(torch).numpy(), program(ember).numpy()
        assert expected.shape == actual.shape and expected.dtype == actual.dtype
        np.testing.assert_allclose(actual, expected, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (2, 0, 3), (0, 2, 2)])
def test_singular_values_of_empty_matrices_as_torch(shape):
    both(lambda lib: [lib.linalg.svdvals(lib.ones(shape)), lib.linalg.matrix_norm(lib.ones(shape), "nuc"),
                      lib.linalg.matrix_norm(lib.ones(shape, requires_grad=True), 2).requires_grad])
    if 0 in shape[-2:]:  # the smallest of no singular values
        both_raise(lambda lib: lib.linalg.matrix_norm(lib.ones(shape), -2), IndexError, "to have non-zero size")


def test_singular_values_of_infinite_and_nan_input_as_torch():
    both(lambda lib: lib.linalg.svdvals(lib.tensor([[math.inf, 1.0], [0.0, 1.0]])))
    both_raise(lambda lib: lib.linalg.svdvals(lib.tensor([[math.nan, 1.0], [0.0, 1.0]])), RuntimeError,
               "^linalg.svd: The algorithm failed to converge because the input matrix contained non-finite values")
    with pytest.raises(ember.linalg.LinAlgError):  # a RuntimeError, as torch.linalg.LinAlgError
        ember.linalg.matrix_norm(ember.tensor([[math.nan]]), "nuc")


def test_svdvals_records_only_when_a_gradient_is_needed_as_torch():
    both(lambda lib: [grad_fn_name(lib.linalg.svdvals(lib.ones(2, 2))),
                      grad_fn_name(lib.linalg.svdvals(lib.ones(2, 2, requires_grad=True))),
                      grad_fn_name(lib.linalg.svdvals(lib.ones(2, 2, requires_grad=True).detach()))])
    with ember.no_grad():
        assert ember.linalg.svdvals(ember.ones(2, 2, requires_grad=True)).grad_fn is None


@pytest.mark.parametrize("ord", SPECTRAL)
def test_spectral_norm_refusals_as_torch(ord):
    norm = lambda lib, A, **kw: lib.linalg.matrix_norm(A, ord, **kw)  # noqa: E731
    both_raise(lambda lib: norm(lib, lib.tensor(1.0)), RuntimeError, "^linalg.matrix_norm: .*at least 2 dimensions")
    both_raise(lambda lib: norm(lib, lib.ones(3)), RuntimeError, "^linalg.matrix_norm: .*at least 2 dimensions")
    both_raise(lambda lib: norm(lib, lib.ones(3, 3, dtype=lib.int64)), RuntimeError,
               "^linalg.matrix_norm: Expected a floating point .*tensor as input. Got Long")
    both_raise(lambda lib: norm(lib, lib.ones(3, 3, dtype=lib.int64), dtype=lib.float64), RuntimeError,
               "Expected a floating point")
    both_raise(lambda lib: norm(lib, lib.ones(3, 3, dtype=lib.float16)), RuntimeError,
               "^linalg.matrix_norm: Low precision dtypes not supported. Got Half")
    both_raise(lambda lib: norm(lib, lib.ones(3, 3, dtype=lib.float64), dtype=lib.float32), RuntimeError,
               "without narrowing")
    both_raise(lambda lib: norm(lib, lib.ones(3, 3), dim=(1, -1)), RuntimeError,
               r"^linalg.matrix_norm: dims must be different. Got \(1, 1\)")
    both_raise(lambda lib: norm(lib, lib.ones(3, 3), dim=(0, 1, 2)), RuntimeError,
               "^linalg.matrix_norm: dim must be a 2-tuple. Got 0 1 2")
    both_raise(lambda lib: norm(lib, lib.ones(3, 3), dim=(0, 2)), IndexError, r"Dimension out of range .* got 2\)")


def test_svdvals_and_nuclear_norm_refusals_as_torch():
    for A in ("lib.tensor(1.0)", "lib.ones(3)"):
        both_raise(lambda lib: lib.linalg.svdvals(eval(A)), RuntimeError, "^linalg.svd.*at least 2 dimensions")
        both_raise(lambda lib: lib.norm(eval(A), p="nuc"), RuntimeError, "^linalg.matrix_norm: .*at least 2 dim")
    both_raise(lambda lib: lib.linalg.svdvals(lib.ones(2, 2, dtype=lib.int64)), RuntimeError,
               "^linalg.svd.*: Expected a floating point .*tensor as input. Got Long")
    both_raise(lambda lib: lib.linalg.svdvals(lib.ones(2, 2, dtype=lib.float16)), NotImplementedError,
               "\"linalg_svd_cpu\" not implemented for 'Half'")
    both_raise(lambda lib: lib.norm(lib.ones(2, 3, 4), p="nuc"), RuntimeError, "dim must be a 2-tuple. Got 0 1 2")
    both_raise(lambda lib: lib.norm(lib.ones(3, 3), p="nuc", dim=1), RuntimeError, r"dim must be a 2-tuple. Got 1\b")
    for ord in (3, "foo", 0.5):
        both_raise(lambda lib: lib.linalg.matrix_norm(lib.ones(3, 3), ord), RuntimeError,
                   f"^linalg.matrix_norm: Order {ord} not supported")


@pytest.mark.parametrize("ord", [-1, -2.0, -math.inf, math.inf])
@pytest.mark.parametrize("shape,dim", [((0,), None), ((0, 3), 0), ((3, 0), (0, 1)), ((0, 3), -2)])
def test_a_norm_without_identity_over_no_elements_is_an_error_as_torch(ord, shape, dim):
    both_raise(lambda lib: lib.linalg.vector_norm(lib.ones(shape), ord, dim), RuntimeError,
               r"cannot compute the -?\w+ norm on (an empty tensor|the dimension -?\d+)")


@pytest.mark.parametrize("ord", [-1, 0.5, 0, math.inf, -math.inf])
def test_a_norm_over_a_nonempty_dim_of_an_empty_tensor_is_empty_as_torch(ord):
    both(lambda lib: lib.linalg.vector_norm(lib.ones(0, 3), ord, 1))


@pytest.mark.parametrize("ord", [-1, -2, -math.inf])
@pytest.mark.parametrize("dim", [(), []])
def test_a_norm_without_identity_over_every_dim_of_an_empty_tensor_is_an_error_as_torch(ord, dim):
    both_raise(lambda lib: lib.linalg.vector_norm(lib.ones(0, 3), ord, dim), RuntimeError,
               "cannot compute the .* norm on an empty tensor")


@pytest.mark.parametrize("ord", ["fro", "nuc"])
def test_norm_with_a_string_order_and_no_dim_refuses_more_than_two_dims_as_torch(ord):
    both_raise(lambda lib: lib.linalg.norm(lib.ones(2, 3, 4), ord), RuntimeError,
               "^linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got 3D.")


@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (2, 0, 0)])
@pytest.mark.parametrize("ord", [1, math.inf, 2, "nuc", "fro"])
@pytest.mark.parametrize("dim,keepdim", [((-2, -1), False), ((-1, -2), True)])
def test_positive_matrix_norms_of_empty_matrices_are_zero_as_torch(shape, ord, dim, keepdim):
    both(lambda lib: lib.linalg.matrix_norm(lib.zeros(shape, dtype=lib.float64), ord, dim, keepdim))


@pytest.mark.parametrize("ord", [0, 3, 0.5])
def test_matrix_norm_checks_the_order_before_the_dims_as_torch(ord):
    both_raise(lambda lib: lib.linalg.matrix_norm(lib.ones(3, 3), ord, (1, 2)), RuntimeError,
               f"^linalg.matrix_norm: Order {ord} not supported")


@pytest.mark.parametrize("shape", [(0, 0), (2, 0, 0), (0, 2, 2)])
@pytest.mark.parametrize("p", [None, "fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf])
@pytest.mark.parametrize("dtype", ["float32", "complex128", "int64", "int32", "bool", "float16", "bfloat16"])
def test_the_condition_number_of_empty_matrices_is_zero_as_torch(shape, p, dtype):
    """In A's real dtype, whatever it is: torch checks the dtype only for a matrix it computes on."""
    def program(lib):
        result = lib.linalg.cond(lib.zeros(shape, dtype=getattr(lib, dtype)), p)
        return result.double(), str(result.dtype).split(".")[1]  # (torch has no NumPy form of bfloat16)

    both(program)


def test_the_condition_number_of_empty_matrices_needs_no_graph_as_torch():
    def program(lib):
        result = lib.linalg.cond(lib.zeros(2, 0, 0, requires_grad=True))
        return result, result.requires_grad

    both(program)


@pytest.mark.parametrize("call, error, fragment", [
    ("L.linalg.cond(L.ones(3))", RuntimeError, r"^linalg.cond: The input tensor must have at least 2 dimensions"),
    ("L.linalg.cond(L.ones(2, 3), 1)", RuntimeError, r"^linalg.cond\(ord=1\): A must be batches of square matrices"),
    ("L.linalg.cond(L.ones(2, 3), 'foo')", RuntimeError, r"^linalg.cond\(ord=foo\): A must be batches of square"),
    ("L.linalg.cond(L.ones(2, 3, dtype=L.int64), 'fro')", RuntimeError, r"^linalg.cond\(ord=fro\): A must be"),
    ("L.linalg.cond(L.ones(2, 3, dtype=L.int64))", RuntimeError, r"^linalg.svd: Expected a floating point"),
    ("L.linalg.cond(L.ones(2, 2, dtype=L.int32), 'nuc')", RuntimeError, r"^linalg.svd: Expected a floating point"),
    ("L.linalg.cond(L.ones(2, 2, dtype=L.bool), 'fro')", RuntimeError, r"^linalg.inv: Expected a floating point"),
    ("L.linalg.cond(L.ones(2, 2, dtype=L.bfloat16), 1)", RuntimeError, r"^linalg.inv: Low precision dtypes"),
    ("L.linalg.cond(L.ones(2, 2, dtype=L.float16), -2)", NotImplementedError, r"\"linalg_svd_cpu\" not implemented"),
])
def test_cond_checks_in_torchs_order_and_names_what_torch_names(call, error, fragment):
    both_raise(lambda L: eval(call, {"L": L}), error, fragment)


@pytest.mark.parametrize("p", [1, -math.inf, None])
def test_the_condition_number_of_empty_rectangles_in_the_one_and_inf_norms_is_zero_as_torch(p):
    both(lambda lib: lib.linalg.cond(lib.zeros(3, 0, dtype=lib.float64), p))


@pytest.mark.parametrize("p", ["fro", "nuc"])
def test_the_condition_number_of_empty_rectangles_in_the_frobenius_norms_is_refused_as_torch(p):
    both_raise(lambda lib: lib.linalg.cond(lib.zeros(0, 3), p), RuntimeError, "must be batches of square matrices")


@pytest.mark.parametrize("p", ["fro", "nuc", 1, -1, math.inf, -math.inf])
def test_the_condition_number_of_an_exactly_singular_matrix_is_inf_as_torch(p):
    batch = [[[1.0, 0.0], [0.0, 0.0]], [[1.0, 2.0], [3.0, 4.0]]]
    both(lambda lib: lib.linalg.cond(lib.tensor(batch, dtype=lib.float64), p))


@pytest.mark.parametrize("p", [3, 0])
def test_cond_refuses_an_unknown_numeric_norm_before_the_shape_as_torch(p):
    both_raise(lambda lib: lib.linalg.cond(lib.zeros(0, 3), p), RuntimeError,
               f"^linalg.cond got an invalid norm type: {p}")


def test_cond_refuses_an_unknown_string_norm_after_the_shape_as_torch():
    both_raise(lambda lib: lib.linalg.cond(lib.zeros(0, 3), "foo"), RuntimeError, "must be batches of square")
    both_raise(lambda lib: lib.linalg.cond(lib.zeros(0, 0), "foo"), RuntimeError,
               "^linalg.cond got an invalid norm type: foo")


_SINGULAR = "[[1.0, 2.0], [2.0, 4.0]]"
_INDEFINITE = "[[1.0, 2.0], [2.0, 1.0]]"


@pytest.mark.parametrize("call, fragment", [
    (f"L.linalg.inv_ex(L.tensor({_SINGULAR}), check_errors=True)", r"^linalg.inv_ex: The diagonal element 2 is zero"),
    (f"L.linalg.inv_ex(L.stack([L.eye(2), L.tensor({_SINGULAR})]), check_errors=True)",
     r"^linalg.inv_ex: \(Batch element 1\): The diagonal element 2 is zero"),
    (f"L.linalg.inv(L.stack([L.eye(2), L.tensor({_SINGULAR})]).reshape(2, 1, 2, 2))",
     r"^linalg.inv: \(Batch element 1\): The diagonal"),
    (f"L.linalg.cholesky_ex(L.tensor({_INDEFINITE}), check_errors=True)",
     r"^linalg.cholesky_ex: The factorization could not be completed because the input is not positive-definite"),
    (f"L.linalg.cholesky_ex(L.stack([L.eye(2), L.tensor({_INDEFINITE})]), upper=True, check_errors=True)",
     r"^linalg.cholesky_ex: \(Batch element 1\): The factorization"),
    (f"L.linalg.cholesky(L.stack([L.eye(2), L.tensor({_INDEFINITE})]))", r"^linalg.cholesky: \(Batch element 1\): "),
    (f"L.cholesky(L.tensor({_INDEFINITE}))", r"^cholesky: The factorization could not be completed"),
    (f"L.linalg.solve_ex(L.tensor({_SINGULAR}), L.ones(2), check_errors=True)",
     r"linalg.solve_ex: The solver failed because the input matrix is singular"),
])
def test_checked_errors_name_the_ex_function_and_the_batch_element_as_torch(call, fragment):
    both_raise(lambda L: eval(call, {"L": L}), RuntimeError, fragment)  # (LinAlgError is one, in both)


@pytest.mark.parametrize("call, fragment", [
    ("L.linalg.inv_ex(L.ones(2, 3), check_errors=True)", r"^linalg.inv: A must be batches of square matrices"),
    ("L.linalg.inv_ex(L.ones(2, 2, dtype=L.int64))", r"^linalg.inv: Expected a floating point or complex tensor"),
    ("L.linalg.inv_ex(L.ones(2, 2, dtype=L.float16))", r"^linalg.inv: Low precision dtypes not supported"),
    ("L.linalg.cholesky_ex(L.ones(2, 3))", r"^linalg.cholesky: A must be batches of square matrices"),
    ("L.linalg.cholesky_ex(L.ones(2, 2, dtype=L.int64))", r"^linalg.cholesky: Expected a floating point"),
])
def test_argument_errors_of_the_ex_functions_name_the_plain_function_as_torch(call, fragment):
    both_raise(lambda L: eval(call, {"L": L}), RuntimeError, fragment)


def rank_deficient(lib, dtype="float64"):
    """A 4x4 matrix of rank 3 (two equal columns) whose singular values spread over [0.1, 4]."""
    values = np.random.default_rng(5).standard_normal((4, 4))
    values[:, 0] = values[:, 1]
    return lib.tensor(values, dtype=getattr(lib, dtype))


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex128"])
@pytest.mark.parametrize("cuts", [{"atol": [0.1, 1.0]}, {"rtol": [1e-3, 0.5]}, {"atol": [[0.1], [1.5]], "rtol": [0.0, 0.5]},
                                  {"atol": [0.0, 0.5]}])
def test_tolerances_given_as_tensors_broadcast_with_the_batch_as_torch(dtype, cuts):
    def program(lib, op):
        tensors = {name: lib.tensor(value, dtype=lib.float64) for name, value in cuts.items()}
        return getattr(lib.linalg, op)(rank_deficient(lib, dtype), **tensors)
    both(lambda lib: program(lib, "matrix_rank"))
    expected, actual = program(torch, "pinv"), program(ember, "pinv")
    assert actual.dtype == ember.float32 if dtype == "float32" else actual.dtype == getattr(ember, dtype)
    np.testing.assert_allclose(actual.numpy(), expected.numpy(), rtol=1e-4 if dtype == "float32" else 1e-9, atol=1e-6)


@pytest.mark.parametrize("tol", [0.5, 1e-3])
@pytest.mark.parametrize("hermitian", [False, True])
def test_matrix_rank_takes_the_older_absolute_tol_as_torch(tol, hermitian):
    both(lambda lib: lib.linalg.matrix_rank(rank_deficient(lib), tol, hermitian))
    both(lambda lib: lib.linalg.matrix_rank(rank_deficient(lib), tol=lib.tensor([tol, 2.0]), hermitian=hermitian))


@pytest.mark.parametrize("rcond", [0.1, 1e-3])
def test_pinv_takes_the_older_relative_rcond_as_torch(rcond):
    both(lambda lib: lib.linalg.pinv(rank_deficient(lib), rcond))
    both(lambda lib: lib.linalg.pinv(rank_deficient(lib), rcond=rcond, hermitian=True))


def test_the_older_tolerances_do_not_mix_with_atol_and_rtol_as_torch():
    both_raise(lambda lib: lib.linalg.matrix_rank(rank_deficient(lib), tol=0.1, rtol=0.1), TypeError, "tol")
    both_raise(lambda lib: lib.linalg.pinv(rank_deficient(lib), rcond=0.1, atol=0.1), TypeError, "rcond")


@pytest.mark.parametrize("op", ["matrix_rank", "pinv"])
def test_hermitian_tolerances_refuse_rectangles_but_take_empty_matrices_as_torch(op):
    both_raise(lambda lib: getattr(lib.linalg, op)(lib.ones(3, 5), hermitian=True), RuntimeError,
               "^linalg.eigh: A must be batches of square matrices, but they are 3 by 5 matrices")
    both(lambda lib: getattr(lib.linalg, op)(lib.ones(2, 0, 3), hermitian=True))


@pytest.mark.parametrize("shape", [(3, 3), (2, 3, 3), (0, 3, 3)])
def test_the_sign_of_a_real_slogdet_is_in_the_graph_but_passes_no_gradient_as_torch(shape):
    values = np.random.default_rng(3).standard_normal(shape)
    for lib in (torch, ember):
        A = lib.tensor(values, requires_grad=True)
        sign, logabsdet = lib.linalg.slogdet(A)
        assert sign.requires_grad and grad_fn_name(sign) == "LinalgSlogdetBackward0"
        assert lib.autograd.grad(sign.sum(), A, allow_unused=True, retain_graph=True) == (None,)
        (sign * logabsdet).sum().backward()
        np.testing.assert_allclose(A.grad.numpy(), (np.linalg.slogdet(values)[0][..., None, None]
                                                     * np.linalg.inv(values).swapaxes(-1, -2)), rtol=1e-10)


def test_the_sign_of_a_complex_slogdet_passes_gradcheck_and_gradgradcheck():
    values = np.random.default_rng(4).standard_normal((2, 3, 3, 2)).view(np.complex128)[..., 0]
    A = ember.tensor(values, requires_grad=True)
    assert ember.autograd.gradcheck(lambda a: ember.linalg.slogdet(a)[0], (A,))
    assert ember.autograd.gradgradcheck(lambda a: ember.linalg.slogdet(a)[0], (A,))
