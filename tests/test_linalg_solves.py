"""lu_solve, cholesky_solve, cholesky_inverse and householder_product as ops: values, gradients and node names
as torch's, with or without gradient, float32 and float64, real and complex; first and second derivatives and
forward mode against finite differences."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import ember
from ember.autograd import gradcheck, gradgradcheck

REAL_AND_COMPLEX = ("float64", "complex128")


def _random(rng, shape, dtype: str) -> np.ndarray:
    values = rng.standard_normal(shape)
    if "complex" in dtype:
        values = values + 1j * rng.standard_normal(shape)
    return values.astype(dtype)


def _gradients(lib, program, arrays: tuple, seed: np.ndarray | None = None) -> tuple:
    """(result, its grad_fn's name, the gradients of every input) of ``program`` on leaves made from
    ``arrays``; the result's gradient is ``seed`` (a fixed pattern if None)."""
    leaves = [lib.tensor(a, requires_grad=True) for a in arrays]
    result = program(lib, *leaves)
    if seed is None:
        seed = np.cos(np.arange(result.numel())).reshape(tuple(result.shape)).astype(arrays[0].dtype)
    grads = lib.autograd.grad(result, leaves, lib.tensor(seed), allow_unused=True)
    plain = lambda t: None if t is None else t.detach().resolve_conj().numpy()
    return plain(result), type(result.grad_fn).__name__, [plain(g) for g in grads]


def _assert_as_torch(program, arrays: tuple, rtol: float = 1e-10, atol: float = 1e-12):
    mine, theirs = (_gradients(lib, program, arrays) for lib in (ember, torch))
    assert mine[1] == theirs[1]
    np.testing.assert_allclose(mine[0], theirs[0], rtol=rtol, atol=atol)
    for my_grad, their_grad in zip(mine[2], theirs[2]):
        assert (my_grad is None) == (their_grad is None)
        if my_grad is not None:
            np.testing.assert_allclose(my_grad, their_grad, rtol=rtol, atol=atol)


def _assert_derivatives(program, arrays: tuple):
    """gradcheck (with forward mode) and gradgradcheck in double precision."""
    leaves = tuple(ember.tensor(a, requires_grad=True) for a in arrays)
    function = lambda *xs: program(ember, *xs)
    assert gradcheck(function, leaves, check_forward_ad=True)
    assert gradgradcheck(function, leaves)


# ----------------------------------------------------------------- lu_solve

LU_CASES = [  # (A's shape, B's shape, left, adjoint)
    ((3, 3), (3, 2), True, False), ((3, 3), (3, 2), True, True), ((3, 3), (2, 3), False, False),
    ((3, 3), (2, 3), False, True), ((2, 3, 3), (3, 2), True, False), ((3, 3), (2, 3, 1), True, True),
    ((2, 1, 3, 3), (3, 2, 3), False, False), ((0, 3, 3), (3, 2), True, False), ((3, 3), (3, 0), True, True),
]


def _lu_factors(rng, shape, dtype) -> tuple:
    """(LU, pivots) of a well-conditioned matrix, as arrays."""
    LU, pivots = ember.linalg.lu_factor(ember.tensor(_lu_system(rng, shape, dtype)))
    return LU.numpy(), pivots.numpy()


def _lu_solve(pivots: np.ndarray, left: bool, adjoint: bool):
    return lambda lib, LU, B: lib.linalg.lu_solve(LU, lib.tensor(pivots), B, left=left, adjoint=adjoint)


def _lu_system(rng, shape, dtype):
    return _random(rng, shape, dtype) + 3 * np.eye(shape[-1], dtype=dtype)


@pytest.mark.parametrize("dtype", REAL_AND_COMPLEX)
@pytest.mark.parametrize("a_shape,b_shape,left,adjoint", LU_CASES)
def test_lu_solve_values_gradients_and_node_as_torch(dtype, a_shape, b_shape, left, adjoint):
    rng = np.random.default_rng(0)
    LU, pivots = _lu_factors(rng, a_shape, dtype)
    _assert_as_torch(_lu_solve(pivots, left, adjoint), (LU, _random(rng, b_shape, dtype)))


@pytest.mark.parametrize("dtype", REAL_AND_COMPLEX)
@pytest.mark.parametrize("a_shape,b_shape,left,adjoint", LU_CASES[:7])
def test_lu_solve_derivatives(dtype, a_shape, b_shape, left, adjoint):
    rng = np.random.default_rng(1)
    LU, pivots = _lu_factors(rng, a_shape, dtype)
    _assert_derivatives(_lu_solve(pivots, left, adjoint), (LU, _random(rng, b_shape, dtype)))


@pytest.mark.parametrize("left,adjoint", [(True, False), (True, True), (False, False)])
@pytest.mark.parametrize("constant", [0, 1])
def test_lu_solve_gradient_of_one_operand_as_torch(left, adjoint, constant):
    rng = np.random.default_rng(13)
    (LU, pivots), B = _lu_factors(rng, (3, 3), "float64"), _random(rng, (3, 3), "float64")
    grads = []
    for lib in (ember, torch):
        operands = [lib.tensor(LU, requires_grad=constant != 0), lib.tensor(B, requires_grad=constant != 1)]
        X = lib.linalg.lu_solve(operands[0], lib.tensor(pivots), operands[1], left=left, adjoint=adjoint)
        grads.append(lib.autograd.grad((X * X).sum(), operands[1 - constant])[0].numpy())
    np.testing.assert_allclose(*grads, rtol=1e-10, atol=1e-12)


def test_lu_solve_grad_fn_is_torchs():
    LU, pivots = ember.linalg.lu_factor(ember.eye(2) * 2)
    X = ember.linalg.lu_solve(LU.requires_grad_(), pivots, ember.ones(2, 1))
    assert X.grad_fn.name() == "LinalgLuSolveBackward0"
    assert len(X.grad_fn.next_functions) == 2  # LU and B: the pivots are no input of the node, as in torch


def test_lu_solve_reads_b_as_matrices_as_torch():
    A, B = ember.eye(3).expand(2, 3, 3), ember.ones(2, 3)
    with pytest.raises(RuntimeError, match="Incompatible shapes"):
        ember.linalg.lu_solve(*ember.linalg.lu_factor(A), B)
    LU, pivots = ember.linalg.lu_factor(A)
    assert ember.linalg.lu_solve(LU, pivots, B, left=False).shape == (2, 2, 3)


# ----------------------------------------------------------------- cholesky_solve and cholesky_inverse


def _factor(rng, batch: tuple, n: int, dtype: str, upper: bool) -> np.ndarray:
    """A Cholesky factor (exactly triangular) of a well-conditioned positive-definite matrix."""
    a = _random(rng, batch + (n, n), dtype)
    lower = np.linalg.cholesky(a @ np.conj(a.swapaxes(-1, -2)) + n * np.eye(n))
    return np.ascontiguousarray(np.conj(lower.swapaxes(-1, -2)) if upper else lower)


CHOLESKY_SOLVE_CASES = [  # (B's shape, the factor's batch, upper)
    ((3, 2), (), False), ((3, 2), (), True), ((2, 3, 1), (), True), ((3, 2), (2,), False), ((0, 3, 2), (), False),
    ((3, 0), (), True),
]


@pytest.mark.parametrize("dtype", REAL_AND_COMPLEX)
@pytest.mark.parametrize("b_shape,batch,upper", CHOLESKY_SOLVE_CASES)
def test_cholesky_solve_values_gradients_and_node_as_torch(dtype, b_shape, batch, upper):
    rng = np.random.default_rng(2)
    arrays = _random(rng, b_shape, dtype), _factor(rng, batch, 3, dtype, upper)
    _assert_as_torch(lambda lib, B, L: lib.cholesky_solve(B, L, upper), arrays)


@pytest.mark.parametrize("dtype", REAL_AND_COMPLEX)
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_solve_factor_gradient_is_the_full_matrix_ones(dtype, upper):
    """As torch's (and as solve(L L^H, B) with the factor taken whole): not masked to the factor's triangle."""
    rng = np.random.default_rng(3)
    B, L = _random(rng, (3, 2), dtype), _factor(rng, (), 3, dtype, upper)
    whole = lambda lib, B, L: lib.linalg.solve(L.mH @ L if upper else L @ L.mH, B)
    composite = _gradients(ember, whole, (B, L))
    mine = _gradients(ember, lambda lib, B, L: lib.cholesky_solve(B, L, upper), (B, L))
    for expected, got in zip([composite[0]] + composite[2], [mine[0]] + mine[2]):
        np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)
    assert np.abs(np.triu(mine[2][1], 1) if not upper else np.tril(mine[2][1], -1)).max() > 0


def _triangular(upper: bool):
    """The factor's triangle of a full input: finite differences then move only what the op reads."""
    return lambda x: x.triu() if upper else x.tril()


@pytest.mark.parametrize("dtype", REAL_AND_COMPLEX)
@pytest.mark.parametrize("b_shape,batch,upper", CHOLESKY_SOLVE_CASES[:4])
def test_cholesky_solve_derivatives(dtype, b_shape, batch, upper):
    rng = np.random.default_rng(4)
    triangle = _triangular(upper)
    program = lambda lib, B, L: lib.cholesky_solve(B, triangle(L), upper)
    _assert_derivatives(program, (_random(rng, b_shape, dtype), _factor(rng, batch, 3, dtype, upper)))


@pytest.mark.parametrize("dtype", REAL_AND_COMPLEX)
@pytest.mark.parametrize("batch,upper", [((), False), ((), True), ((2,), True), ((0,), False)])
def test_cholesky_inverse_values_gradients_and_node_as_torch(dtype, batch, upper):
    rng = np.random.default_rng(5)
    _assert_as_torch(lambda lib, L: lib.cholesky_inverse(L, upper), (_factor(rng, batch, 3, dtype, upper),))


@pytest.mark.parametrize("dtype", REAL_AND_COMPLEX)
@pytest.mark.parametrize("batch,upper", [((), False), ((2,), True)])
def test_cholesky_inverse_derivatives(dtype, batch, upper):
    rng = np.random.default_rng(6)
    triangle = _triangular(upper)
    factor = _factor(rng, batch, 3, dtype, upper)
    _assert_derivatives(lambda lib, L: lib.cholesky_inverse(triangle(L), upper), (factor,))


def test_cholesky_inverse_of_a_singular_factor_is_an_error_as_torch():
    for lib in (ember, torch):
        with pytest.raises(RuntimeError, match="cholesky_inverse: The diagonal element 2 is zero"):
            lib.cholesky_inverse(lib.tensor([[1., 0.], [1., 0.]], requires_grad=True))


def test_cholesky_solve_reads_b_as_matrices_as_torch():
    for lib in (ember, torch):
        with pytest.raises(RuntimeError, match="Incompatible matrix sizes for cholesky_solve"):
            lib.cholesky_solve(lib.ones(2, 3), lib.eye(3).expand(2, 3, 3))


# ----------------------------------------------------------------- householder_product

HOUSEHOLDER_CASES = [((4, 3), (2,)), ((3, 3), (3,)), ((2, 4, 2), (2, 2)), ((3, 2), (1,)), ((3, 0), (0,)),
                     ((4, 4), (0,))]


@pytest.mark.parametrize("dtype", REAL_AND_COMPLEX)
@pytest.mark.parametrize("a_shape,tau_shape", HOUSEHOLDER_CASES)
def test_householder_product_values_gradients_and_node_as_torch(dtype, a_shape, tau_shape):
    rng = np.random.default_rng(7)
    arrays = _random(rng, a_shape, dtype), _random(rng, tau_shape, dtype) / 2
    _assert_as_torch(lambda lib, A, tau: lib.linalg.householder_product(A, tau), arrays)


@pytest.mark.parametrize("dtype", REAL_AND_COMPLEX)
@pytest.mark.parametrize("a_shape,tau_shape", HOUSEHOLDER_CASES[:4])
def test_householder_product_derivatives(dtype, a_shape, tau_shape):
    rng = np.random.default_rng(8)
    arrays = _random(rng, a_shape, dtype), _random(rng, tau_shape, dtype) / 2
    _assert_derivatives(lambda lib, A, tau: lib.linalg.householder_product(A, tau), arrays)


@pytest.mark.parametrize("dtype", REAL_AND_COMPLEX)
def test_householder_product_gradient_over_several_reflector_blocks_as_torch(dtype):
    """geqrf's reflectors of a 70 x 50 matrix: more than one block of the forward, every reflector at once in
    the backward."""
    rng = np.random.default_rng(9)
    compact, tau = ember.geqrf(ember.tensor(_random(rng, (70, 50), dtype)))
    program = lambda lib, A, tau: lib.linalg.householder_product(A, tau)
    _assert_as_torch(program, (compact.numpy(), tau.numpy()), rtol=1e-9, atol=1e-11)


# ----------------------------------------------------------------- one route, with or without gradient


def _single_precision_programs():
    rng = np.random.default_rng(10)
    a, b = _lu_system(rng, (40, 40), "float64"), _random(rng, (40, 40), "float64")
    factor = _factor(rng, (), 40, "float64", False)
    compact, tau = (x.numpy() for x in ember.geqrf(ember.tensor(_random(rng, (40, 40), "float64"))))
    return {
        "lu_solve": (lambda lib, A, B: lib.linalg.lu_solve(*lib.linalg.lu_factor(A), B, adjoint=True), (a, b)),
        "cholesky_solve": (lambda lib, B, L: lib.cholesky_solve(B, L), (b, factor)),
        "cholesky_inverse": (lambda lib, L: lib.cholesky_inverse(L, True), (np.ascontiguousarray(factor.T),)),
        "householder_product": (lambda lib, A, tau: lib.linalg.householder_product(A, tau), (compact, tau)),
        "cholesky_inverse_complex": (lambda lib, L: lib.cholesky_inverse(L),
                                     (_factor(rng, (), 40, "complex128", False),)),
        # reflectors that are far from unitary: a product of norm 1e12, where torch's float32 gradient is wrong
        "householder_product_ill_conditioned": (lambda lib, A, tau: lib.linalg.householder_product(A, tau),
                                                (_random(rng, (40, 40), "float64"), np.full(40, 0.5))),
    }


def _relative_errors(result: tuple, reference: tuple) -> list:
    pairs = zip([result[0]] + result[2], [reference[0]] + reference[2])
    return [np.abs(x - y).max() / np.abs(y).max() for x, y in pairs]


@pytest.mark.parametrize("name", list(_single_precision_programs()))
def test_single_precision_as_accurate_as_torchs_and_the_same_without_gradient(name):
    program, arrays = _single_precision_programs()[name]
    single = tuple(a.astype("complex64" if a.dtype.kind == "c" else "float32") for a in arrays)
    with ember.no_grad():
        plain = program(ember, *(ember.tensor(a) for a in single)).numpy()
    mine, theirs = (_gradients(lib, program, single) for lib in (ember, torch))
    np.testing.assert_array_equal(plain, mine[0])  # one route, with or without gradient
    widened = lambda a: a.astype(np.promote_types(a.dtype, np.float64))  # the same values, in double precision
    seed = np.cos(np.arange(plain.size)).reshape(plain.shape).astype(single[0].dtype)
    reference = _gradients(torch, program, tuple(widened(a) for a in single), widened(seed))
    for my_error, their_error in zip(_relative_errors(mine, reference), _relative_errors(theirs, reference)):
        assert my_error <= max(1.5 * their_error, 2e-7)  # (the factorizations' rounding differs: not below)


def test_non_contiguous_operands():
    rng = np.random.default_rng(11)
    a, b = _lu_system(rng, (4, 4), "float64"), _random(rng, (3, 4), "float64")
    program = lambda lib, A, B: lib.linalg.lu_solve(*lib.linalg.lu_factor(A.mT), B.mT)
    _assert_as_torch(program, (a, b))
    factor = _factor(rng, (), 4, "float64", True)
    _assert_as_torch(lambda lib, B, U: lib.cholesky_solve(B.mT, U.mT), (b, factor))
    _assert_as_torch(lambda lib, A, tau: lib.linalg.householder_product(A.mT, tau[::2]),
                     (_random(rng, (3, 5), "float64"), _random(rng, (6,), "float64")))


@pytest.fixture
def triangular_paths(monkeypatch):
    """Every size solved by two triangular solves of recursive halves (3 rows a leaf), not by LAPACK whole."""
    from ember._ops import decompositions, linalg_solves
    monkeypatch.setattr(linalg_solves, "_WHOLE_SOLVE_UP_TO", 0)
    monkeypatch.setattr(decompositions, "_TRIANGLE_LEAF", 3)


@pytest.mark.parametrize("dtype", REAL_AND_COMPLEX)
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_ops_on_triangular_paths(dtype, upper, triangular_paths):
    rng = np.random.default_rng(12)
    B, factor = _random(rng, (2, 9, 3), dtype), _factor(rng, (), 9, dtype, upper)
    _assert_as_torch(lambda lib, B, L: lib.cholesky_solve(B, L, upper), (B, factor))
    _assert_as_torch(lambda lib, L: lib.cholesky_inverse(L, upper), (factor,))
    triangle = _triangular(upper)
    _assert_derivatives(lambda lib, B, L: lib.cholesky_solve(B, triangle(L), upper), (B[0, :5, :2], factor[:5, :5]))


def _raise_alike(program, error: str, fragment: str) -> None:
    """``program(lib)`` raises the error named ``error`` in both libraries (torch's LinAlgError is spelled
    _LinAlgError), a RuntimeError, with ``fragment`` in its message."""
    for lib in (torch, ember):
        with pytest.raises(RuntimeError) as info:
            program(lib)
        assert type(info.value).__name__.strip("_") == error, f"{lib.__name__}: {info.value!r}"
        assert fragment in str(info.value), f"{lib.__name__}: {info.value}"


@pytest.mark.parametrize("pivots,message", [([1, 2, 5], "smaller or equal to LU.size(-2)"),
                                            ([0, 2, 3], "greater or equal to 1"),
                                            ([1, 2], "Number of pivots per batch")])
def test_lu_solve_refuses_pivots_lu_factor_cannot_give_as_torch(pivots, message):
    def program(lib):
        LU, _ = lib.linalg.lu_factor(lib.tensor(np.eye(3) + 0.5))
        return lib.linalg.lu_solve(LU, lib.tensor(pivots, dtype=lib.int32), lib.ones(3, 1, dtype=lib.float64))
    _raise_alike(program, "RuntimeError", message)


@pytest.mark.parametrize("dtype", ["int64", "float32"])
def test_lu_solve_refuses_pivots_of_another_dtype_as_torch(dtype):
    def program(lib):
        LU, _ = lib.linalg.lu_factor(lib.tensor(np.eye(3) + 0.5))
        return lib.linalg.lu_solve(LU, lib.tensor([1, 2, 3], dtype=getattr(lib, dtype)), lib.ones(3, 1, dtype=lib.float64))
    _raise_alike(program, "RuntimeError", "pivots should be a Tensor of scalar type")


def _batch_with_a_singular_second_matrix(lib):
    values = np.random.default_rng(1).standard_normal((3, 3, 3))
    values[1, :, 0] = 0
    return lib.tensor(values)


@pytest.mark.parametrize("op", ["lu_factor", "lu_factor_ex"])
def test_lu_factor_of_a_singular_matrix_raises_a_runtime_error_naming_the_batch_element(op):
    kwargs = {"check_errors": True} if op.endswith("_ex") else {}
    _raise_alike(lambda lib: getattr(lib.linalg, op)(_batch_with_a_singular_second_matrix(lib), **kwargs),
                 "RuntimeError", "U[1,1] is zero")
    with pytest.raises(RuntimeError, match=r": \(Batch element 1\): "):
        getattr(ember.linalg, op)(_batch_with_a_singular_second_matrix(ember), **kwargs)


def test_solve_of_a_singular_batch_names_the_batch_element():
    _raise_alike(lambda lib: lib.linalg.solve(_batch_with_a_singular_second_matrix(lib), lib.ones(3, 3, 1, dtype=lib.float64)),
                 "LinAlgError", "input matrix is singular")
    with pytest.raises(ember.linalg.LinAlgError, match=r": \(Batch element 1\): "):
        ember.linalg.solve(_batch_with_a_singular_second_matrix(ember), ember.ones(3, 3, 1, dtype=ember.float64))


@pytest.mark.parametrize("b_shape,left,message", [((3,), False, "XA = B (3x3 and 3x1)"),
                                                   ((4,), True, "AX = B (3x3 and 4x1)"),
                                                   ((), True, "must have at least 2 dimensions")])
def test_solve_refuses_right_hand_sides_as_torch(b_shape, left, message):
    _raise_alike(lambda lib: lib.linalg.solve(lib.eye(3), lib.ones(b_shape), left=left), "RuntimeError", message)


@pytest.mark.parametrize("shape", [(3, 3), (4, 3), (3, 4), (2, 4, 3)])
def test_lstsq_with_gels_refuses_an_exactly_rank_deficient_matrix_as_torch(shape):
    values = np.random.default_rng(2).standard_normal(shape)
    values[..., 0] = 0 if shape[-2] >= shape[-1] else values[..., 0]
    if shape[-2] < shape[-1]:
        values[..., 0, :] = 0
    _raise_alike(lambda lib: lib.linalg.lstsq(lib.tensor(values), lib.ones(shape[:-1] + (1,), dtype=lib.float64),
                                              driver="gels"), "LinAlgError", "does not have full rank")


@pytest.mark.parametrize("driver", ["gelsd", "gelss"])
def test_lstsq_with_other_drivers_takes_an_exactly_rank_deficient_matrix_as_torch(driver):
    values = np.random.default_rng(2).standard_normal((4, 3))
    values[:, 0] = 0
    mine, theirs = (lib.linalg.lstsq(lib.tensor(values), lib.ones(4, 1, dtype=lib.float64), driver=driver)
                    for lib in (ember, torch))
    np.testing.assert_allclose(mine.solution.numpy(), theirs.solution.numpy(), rtol=1e-10, atol=1e-12)
