"""ember.linalg against torch.linalg on the inputs users give it: mixed dtypes, batches, shapes to refuse."""
import numpy as np
import pytest

from twins import both, both_raise

RNG = np.random.default_rng(21)
UPPER = np.triu(RNG.standard_normal((3, 3))) + 2 * np.eye(3)
RIGHT_SIDES = RNG.standard_normal((2, 3, 3))
TALL = RNG.standard_normal((2, 4, 3))


def t(lib, values, dtype="float64"):
    return lib.tensor(np.asarray(values), dtype=getattr(lib, dtype))


def rounded(result):
    """Results computed in single precision, compared at single precision's accuracy."""
    return np.round(result.detach().numpy().astype(np.complex128), 5)


@pytest.mark.parametrize("a_dtype, b_dtype", [("float64", "float32"), ("float32", "float64"),
                                              ("complex64", "float64"), ("float64", "int64")])
@pytest.mark.parametrize("left", [True, False])
def test_solve_triangular_solves_in_the_dtype_of_A_whatever_the_dtype_of_B(a_dtype, b_dtype, left):
    def program(lib):
        x = lib.linalg.solve_triangular(t(lib, UPPER, a_dtype), t(lib, RIGHT_SIDES, b_dtype), upper=True, left=left)
        return str(x.dtype).split(".")[-1], rounded(x)
    both(program)


def test_solve_triangular_with_B_of_another_dtype_differentiates_into_both():
    def program(lib):
        a = t(lib, UPPER).requires_grad_()
        b = t(lib, RIGHT_SIDES, "float32").requires_grad_()
        lib.linalg.solve_triangular(a, b, upper=True).pow(2).sum().backward()
        return str(b.grad.dtype).split(".")[-1], rounded(a.grad), rounded(b.grad)
    both(program)


@pytest.mark.parametrize("tau_shape", [(1, 2), (3, 2)])
def test_householder_product_refuses_tau_whose_batch_differs_from_the_input(tau_shape):
    both_raise(lambda lib: lib.linalg.householder_product(t(lib, TALL), t(lib, np.full(tau_shape, 0.5))),
               RuntimeError, r"Expected batch dimensions of tau to be equal to input.shape\[:-2\], but got \[\d\]")


def test_householder_product_of_a_batch():
    both(lambda lib: lib.linalg.householder_product(t(lib, TALL), t(lib, [[0.5, 1.2], [0.3, 0.1]])))


# ---- under vmap

SQUARE = RNG.standard_normal((4, 3, 3))
SQUARE_BATCHES = RNG.standard_normal((4, 2, 3, 3))  # 4 samples, each a batch of 2 matrices
PER_SAMPLE = np.array([0.1, 1.0, 2.0, 3.0])
PER_MATRIX = RNG.uniform(0.1, 3.0, (4, 2))


@pytest.mark.parametrize("matrices, tolerance", [(SQUARE, PER_SAMPLE), (SQUARE_BATCHES, PER_SAMPLE),
                                                 (SQUARE_BATCHES, PER_MATRIX)],
                         ids=["a matrix per sample", "a batch per sample", "a tolerance per matrix"])
@pytest.mark.parametrize("keyword", ["atol", "rtol"])
def test_pinv_and_matrix_rank_under_vmap_with_a_tolerance_per_sample(matrices, tolerance, keyword):
    def program(lib):
        scale = 1.0 if keyword == "atol" else 0.3
        pinv = lib.func.vmap(lambda a, tol: lib.linalg.pinv(a, **{keyword: tol}))(t(lib, matrices),
                                                                                  t(lib, tolerance * scale))
        rank = lib.func.vmap(lambda a, tol: lib.linalg.matrix_rank(a, **{keyword: tol}))(t(lib, matrices),
                                                                                         t(lib, tolerance * scale))
        return pinv, rank
    both(program)


def test_per_sample_gradient_of_pinv_with_a_tolerance_per_sample():
    both(lambda lib: lib.func.vmap(lib.func.grad(lambda a, tol: lib.linalg.pinv(a, atol=tol).sum()))(
        t(lib, SQUARE), t(lib, PER_SAMPLE / 10)))


@pytest.mark.parametrize("call", [
    lambda lib, a: lib.linalg.norm(a),
    lambda lib, a: lib.linalg.norm(a[0], "nuc"),
    lambda lib, a: lib.linalg.norm(a[0], 2),
    lambda lib, a: lib.linalg.norm(a[0, 0], 3),
    lambda lib, a: lib.linalg.norm(a, dim=(0, 2), keepdim=True),
    lambda lib, a: lib.linalg.norm(a, 1, dim=-1),
], ids=["default", "nuc", "ord 2 of a matrix", "ord 3 of a vector", "two dims", "one dim"])
def test_linalg_norm_under_vmap(call):
    both(lambda lib: lib.func.vmap(lambda a: call(lib, a))(t(lib, SQUARE_BATCHES)))


def test_linalg_norm_under_vmap_refuses_an_ord_without_dim_for_more_than_two_dims():
    both_raise(lambda lib: lib.func.vmap(lambda a: lib.linalg.norm(a, 3))(t(lib, SQUARE_BATCHES)), RuntimeError,
               "If dim is not specified but ord is, the input must be 1D or 2D. Got 3D")


def test_linalg_matmul_under_vmap_and_its_per_sample_gradient():
    both(lambda lib: lib.func.vmap(lib.linalg.matmul)(t(lib, SQUARE), t(lib, SQUARE_BATCHES[:, 0])))
    both(lambda lib: lib.func.vmap(lib.linalg.matmul, in_dims=(0, None))(t(lib, SQUARE), t(lib, SQUARE[0, 0])))
    both(lambda lib: lib.func.vmap(lib.func.grad(lambda a, b: lib.linalg.matmul(a, b).sin().sum()))(
        t(lib, SQUARE), t(lib, SQUARE_BATCHES[:, 1])))


# each sample: a batch of 2 matrices, and one right-hand side for all of them (torch broadcasts B's batch dims)
SYSTEMS = RNG.standard_normal((4, 2, 3, 3)) + 3 * np.eye(3)
RIGHT_SIDE = RNG.standard_normal((4, 3, 2))
TALL_SYSTEMS = RNG.standard_normal((4, 2, 5, 3))
TALL_RIGHT_SIDE = RNG.standard_normal((4, 5, 2))


@pytest.mark.parametrize("solve", [
    lambda lib, a, b: lib.linalg.solve_triangular(a, b, upper=True),
    lambda lib, a, b: lib.linalg.solve_triangular(a[0], a, upper=False),
    lambda lib, a, b: lib.linalg.lu_solve(*lib.linalg.lu_factor(a), b),
    lambda lib, a, b: lib.linalg.lu_solve(*lib.linalg.lu_factor(a), B=b, adjoint=True),
    lambda lib, a, b: lib.cholesky_solve(b, lib.linalg.cholesky(a @ a.mT)),
    lambda lib, a, b: lib.linalg.ldl_solve(*lib.linalg.ldl_factor(a + a.mT), b),
    lambda lib, a, b: lib.lu_solve(b, *lib.linalg.lu_factor(a)),
    lambda lib, a, b: lib.linalg.solve(a[0], lib.stack([b, b])),
], ids=["solve_triangular", "solve_triangular, A of the sample", "lu_solve", "lu_solve adjoint, B by keyword",
        "cholesky_solve", "ldl_solve", "torch.lu_solve", "solve, a batch of B"])
def test_solvers_under_vmap_broadcast_a_sample_batch_of_matrices_against_one_right_hand_side(solve):
    both(lambda lib: lib.func.vmap(lambda a, b: solve(lib, a, b))(t(lib, SYSTEMS), t(lib, RIGHT_SIDE)))


def test_lstsq_under_vmap_broadcasts_the_sample_batch():
    both(lambda lib: lib.func.vmap(lambda a, b: lib.linalg.lstsq(a, b).solution)(t(lib, TALL_SYSTEMS),
                                                                                  t(lib, TALL_RIGHT_SIDE)))


def test_ormqr_under_vmap():
    both(lambda lib: lib.func.vmap(lambda a, c: lib.ormqr(a, a[:, 0], c))(
        t(lib, TALL_SYSTEMS), t(lib, np.stack([TALL_RIGHT_SIDE] * 2, axis=1))))


def test_per_sample_gradients_of_solvers_with_a_broadcast_right_hand_side():
    def program(lib):
        def loss(a, b):
            return lib.linalg.lu_solve(*lib.linalg.lu_factor(a), b).sin().sum()
        return lib.func.vmap(lib.func.grad(loss, argnums=(0, 1)))(t(lib, SYSTEMS), t(lib, RIGHT_SIDE))
    both(program)


# ---- out= with inputs that require grad

def _spd(lib):
    a = t(lib, UPPER + UPPER.T)
    return (a @ a.mT + 3 * lib.eye(3, dtype=a.dtype)).requires_grad_()


def _empty(lib, *dtypes):
    outs = tuple(lib.empty(0, dtype=getattr(lib, d)) for d in dtypes)
    return outs if len(outs) > 1 else outs[0]


RECORDED_WITH_OUT = {
    "det": lambda lib, a: lib.linalg.det(a, out=_empty(lib, "float64")),
    "inv": lambda lib, a: lib.linalg.inv(a, out=_empty(lib, "float64")),
    "inv_ex": lambda lib, a: lib.linalg.inv_ex(a, out=_empty(lib, "float64", "int32")),
    "cholesky": lambda lib, a: lib.linalg.cholesky(a, out=_empty(lib, "float64")),
    "qr": lambda lib, a: lib.linalg.qr(a, out=_empty(lib, "float64", "float64")),
    "eigh": lambda lib, a: lib.linalg.eigh(a, out=_empty(lib, "float64", "float64")),
    "eigvalsh": lambda lib, a: lib.linalg.eigvalsh(a, out=_empty(lib, "float64")),
    "svdvals": lambda lib, a: lib.linalg.svdvals(a, out=_empty(lib, "float64")),
    "pinv": lambda lib, a: lib.linalg.pinv(a, out=_empty(lib, "float64")),
    "solve": lambda lib, a: lib.linalg.solve(a, a[0], out=_empty(lib, "float64")),
    "lu_factor": lambda lib, a: lib.linalg.lu_factor(a, out=_empty(lib, "float64", "int32")),
    "slogdet": lambda lib, a: lib.linalg.slogdet(a, out=_empty(lib, "float64", "float64")),
    "householder_product": lambda lib, a: lib.linalg.householder_product(a, a[0, :2], out=_empty(lib, "float64")),
    "solve_triangular": lambda lib, a: lib.linalg.solve_triangular(a, a, upper=True, out=_empty(lib, "float64")),
    "matrix_power": lambda lib, a: lib.linalg.matrix_power(a, 2, out=_empty(lib, "float64")),
    "lstsq": lambda lib, a: lib.linalg.lstsq(a, a, out=_empty(lib, "float64", "float64", "int64", "float64")),
}
NOT_RECORDED_WITH_OUT = {
    "norm": lambda lib, a: lib.linalg.norm(a, out=_empty(lib, "float64")),
    "matrix_norm": lambda lib, a: lib.linalg.matrix_norm(a, out=_empty(lib, "float64")),
    "matrix_rank": lambda lib, a: lib.linalg.matrix_rank(a, out=_empty(lib, "int64")),
    "cond": lambda lib, a: lib.linalg.cond(a, out=_empty(lib, "float64")),
}


@pytest.mark.parametrize("name", sorted(RECORDED_WITH_OUT))
def test_out_is_refused_for_a_result_that_needs_a_graph_as_in_torch(name):
    both_raise(lambda lib: RECORDED_WITH_OUT[name](lib, _spd(lib)), RuntimeError,
               r"functions with out=\.\.\. arguments don't support automatic differentiation, but one of the "
               r"arguments requires grad")


@pytest.mark.parametrize("name", sorted(NOT_RECORDED_WITH_OUT))
def test_out_of_the_ops_torch_composes_is_taken_with_inputs_that_require_grad(name):
    both(lambda lib: NOT_RECORDED_WITH_OUT[name](lib, _spd(lib)))


def test_out_is_taken_without_grad_mode():
    def program(lib):
        with lib.no_grad():
            return lib.linalg.det(_spd(lib), out=_empty(lib, "float64"))
    both(program)


# ---- gradients at singular matrices: not finite, as torch's, rather than an error

SINGULAR = np.diag([1.0, 0.0, 2.0])


@pytest.mark.parametrize("loss", [
    lambda lib, a: lib.linalg.slogdet(a).logabsdet,
    lambda lib, a: lib.logdet(a),
    lambda lib, a: lib.linalg.qr(a).R.sum(),
    lambda lib, a: lib.linalg.qr(a).Q.sum(),
    lambda lib, a: lib.linalg.solve_ex(a, lib.ones(3, dtype=a.dtype)).result.sum(),
    lambda lib, a: lib.linalg.solve_ex(a, lib.ones(3, 2, dtype=a.dtype)).result.sum(),
    lambda lib, a: lib.linalg.solve_ex(a, lib.ones(2, 3, dtype=a.dtype), left=False).result.sum(),
], ids=["slogdet", "logdet", "qr R", "qr Q", "solve_ex of a vector", "solve_ex of a matrix", "solve_ex, left=False"])
def test_gradient_at_a_singular_matrix_is_torchs_inf_and_nan(loss):
    def program(lib):
        a = t(lib, SINGULAR).requires_grad_()
        loss(lib, a).backward()
        return a.grad
    both(program)


def test_gradients_of_slogdet_and_qr_at_invertible_matrices_still_check():
    import ember
    from ember.autograd import gradcheck, gradgradcheck
    a = ember.tensor(RIGHT_SIDES[0] + 3 * np.eye(3), requires_grad=True)
    tall = ember.tensor(TALL[0], requires_grad=True)
    assert gradcheck(lambda x: ember.linalg.slogdet(x).logabsdet, (a,))
    assert gradgradcheck(lambda x: ember.linalg.slogdet(x).logabsdet, (a,))
    assert gradcheck(lambda x: ember.linalg.qr(x), (tall,))
    assert gradgradcheck(lambda x: ember.linalg.qr(x), (tall,))


# ---- forward-mode tangents at singular matrices: torch's inf and nan (from its LU factors), not an error

# rank-deficient matrices whose LU factors (of A and of A^T) are exact, so that zero pivots are exactly zero
RANK_DEFICIENT = {
    "2x2": np.array([[1.0, 2.0], [2.0, 4.0]]),
    "3x3 rank 2": np.array([[1.0, 2.0, 4.0], [2.0, 4.0, 8.0], [1.0, 0.0, 2.0]]),
    "3x3 rank 1": np.outer([1.0, 2.0, 4.0], [1.0, -2.0, 0.5]),
    "3x3 zero": np.zeros((3, 3)),
    "diagonal": SINGULAR,
    "batch": np.stack([np.outer([1.0, 2.0, 4.0], [1.0, -2.0, 0.5]),  # one invertible matrix among singular ones
                       np.array([[0.0, 2.0, 0.0], [4.0, 0.0, 0.0], [0.0, 0.0, 1.0]]),
                       np.array([[1.0, 2.0, 4.0], [2.0, 4.0, 8.0], [1.0, 0.0, 2.0]])]),
}


def _singular_case(lib, name: str, dtype: str, transposed: bool):
    """A rank-deficient A (complex: times 1 + i, still exact), a tangent for it, B and a tangent for B."""
    a = RANK_DEFICIENT[name] * (1 + 1j if dtype == "complex128" else 1)
    rng = np.random.default_rng(abs(hash((name, dtype))) % 2**32)
    noise = lambda shape: rng.standard_normal(shape) + (1j * rng.standard_normal(shape) if dtype == "complex128" else 0)
    A = t(lib, a.swapaxes(-1, -2).copy() if transposed else a, dtype)
    if transposed:  # not contiguous: torch factors A itself rather than A^T
        A = A.mT
    return A, t(lib, noise(a.shape), dtype), t(lib, noise(a.shape[:-1] + (2,)), dtype), \
        t(lib, noise(a.shape[:-1] + (2,)), dtype)


SOLVE_TANGENTS = {
    "slogdet": lambda lib, A, dA, B, dB: lib.func.jvp(lib.linalg.slogdet, (A,), (dA,))[1],
    "solve_ex, dA": lambda lib, A, dA, B, dB: lib.func.jvp(lambda a: lib.linalg.solve_ex(a, B).result, (A,), (dA,))[1],
    "solve_ex, dB": lambda lib, A, dA, B, dB: lib.func.jvp(lambda b: lib.linalg.solve_ex(A, b).result, (B,), (dB,))[1],
    "solve_ex, dA and dB": lambda lib, A, dA, B, dB: lib.func.jvp(
        lambda a, b: lib.linalg.solve_ex(a, b).result, (A, B), (dA, dB))[1],
    "solve_ex of a vector": lambda lib, A, dA, B, dB: lib.func.jvp(
        lambda a, b: lib.linalg.solve_ex(a, b).result, (A, B[..., 0]), (dA, dB[..., 0]))[1],
    "solve_ex, left=False": lambda lib, A, dA, B, dB: lib.func.jvp(
        lambda a, b: lib.linalg.solve_ex(a, b, left=False).result, (A, B.mT), (dA, dB.mT))[1],
}


@pytest.mark.parametrize("transposed", [False, True], ids=["contiguous", "transposed"])
@pytest.mark.parametrize("dtype", ["float64", "complex128"])
@pytest.mark.parametrize("name", list(RANK_DEFICIENT))
@pytest.mark.parametrize("tangent", list(SOLVE_TANGENTS))
def test_tangent_at_a_singular_matrix_is_torchs_inf_and_nan(tangent, name, dtype, transposed):
    both(lambda lib: _arrays(SOLVE_TANGENTS[tangent](lib, *_singular_case(lib, name, dtype, transposed))))


def _arrays(tangents) -> tuple:
    """The tangents as arrays (torch's zero tangent of a real sign is a ZeroTensor, which converts only forced)."""
    return tuple(x.detach().numpy(force=True) for x in (tangents if isinstance(tangents, tuple) else (tangents,)))


def test_solve_ex_at_a_singular_matrix_is_torchs_lu_solution_and_info():
    def program(lib):
        A, _, B, _ = _singular_case(lib, "batch", "float64", False)
        return tuple(lib.linalg.solve_ex(A, B)) + tuple(lib.linalg.solve_ex(lib.zeros(1, 1, dtype=A.dtype),
                                                                          lib.ones(1, 2, dtype=A.dtype)))
    both(program)


def test_dual_tangents_of_slogdet_and_solve_ex_at_a_singular_matrix():
    def program(lib):
        fwAD = lib.autograd.forward_ad
        A, dA, B, _ = _singular_case(lib, "3x3 rank 2", "float64", False)
        with fwAD.dual_level():
            dual = fwAD.make_dual(A, dA)
            sign, logabsdet = lib.linalg.slogdet(dual)
            solution = lib.linalg.solve_ex(dual, B).result
            return _arrays(tuple(fwAD.unpack_dual(x).tangent for x in (sign, logabsdet, solution)))
    both(program)


def test_tangents_of_slogdet_and_solve_ex_at_invertible_matrices_still_check():
    import ember
    from ember.autograd import gradcheck
    a = ember.tensor(RIGHT_SIDES[0] + 3 * np.eye(3), requires_grad=True)
    b = ember.tensor(RIGHT_SIDES[1], requires_grad=True)
    complex_a = ember.tensor((RIGHT_SIDES[0] + 3 * np.eye(3)) * (1 + 0.5j), requires_grad=True)
    for function, inputs in [(ember.linalg.slogdet, (a,)), (ember.linalg.slogdet, (complex_a,)),
                             (lambda x, y: ember.linalg.solve_ex(x, y).result, (a, b)),
                             (lambda x, y: ember.linalg.solve_ex(x, y, left=False).result, (a, b)),
                             (lambda x, y: ember.linalg.solve_ex(x, y[0]).result, (a, b))]:
        assert gradcheck(function, inputs, check_forward_ad=True, check_backward_ad=False)
