"""Mismatches with torch found by a bug hunt of complex autograd and of linalg's edge cases.

Each test here failed before its fix. Gradients are those of a real loss of complex tensors, compared with
torch's (the conjugate Wirtinger convention).
"""
import pytest
import torch

import ember
from twins import both


def grads(program):
    """``program(lib)`` -> (loss, inputs): the loss's gradients with respect to the inputs."""
    def run(lib):
        loss, inputs = program(lib)
        return lib.autograd.grad(loss, inputs)
    return run


# ----------------------------------------------------------------- norms

@pytest.mark.parametrize("ord", [3, 0.5, -1.5])
@pytest.mark.parametrize("values", [[0j, 0j, 0j], [0j, 1 + 2j, -2 + 0j]])
def test_vector_norm_of_complex_zeros_has_torchs_gradient(ord, values):
    # the composed (|x| ** ord).sum() ** (1 / ord) gave nan at a zero entry and at a zero norm
    def program(lib):
        x = lib.tensor(values, dtype=lib.complex128, requires_grad=True)
        return lib.linalg.vector_norm(x, ord), [x]
    both(grads(program))


# ----------------------------------------------------------------- least squares

@pytest.mark.parametrize("dtype", ["float64", "complex128"])
@pytest.mark.parametrize("driver", ["gels", "gelsd", "gelss"])
@pytest.mark.parametrize("vector", [False, True])
def test_lstsq_residuals_are_differentiable(dtype, driver, vector):
    # ember computed the residuals outside the graph: no gradient reached A or B through them
    torch.manual_seed(0)
    A0, B0 = torch.randn(2, 5, 3, dtype=getattr(torch, dtype)), torch.randn(2, 5, *(() if vector else (2,)),
                                                                             dtype=getattr(torch, dtype))

    def program(lib):
        A = lib.tensor(A0.numpy(), requires_grad=True)
        B = lib.tensor(B0.numpy(), requires_grad=True)
        residuals = lib.linalg.lstsq(A, B, driver=driver).residuals
        return (residuals * lib.arange(1., residuals.shape[-1] + 1, dtype=residuals.dtype)).sum(), [A, B]
    both(grads(program))


# ----------------------------------------------------------------- condition numbers

@pytest.mark.parametrize("values", [
    [[0., 0.], [0., 0.]],  # 0 * inf: nan
    [[1., float("inf")], [0., 1.]],  # the SVD of an infinite entry is nan
    [[[2., 1.], [0.5, 3.]], [[1., 0.], [0., 0.]]],
])
@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_cond_nuc_is_computed_from_singular_values(values, dtype):
    # ember took norm(A, 'nuc') * norm(A^-1, 'nuc') through the inverse: inf for every singular A, an error at inf
    both(lambda lib: lib.linalg.cond(lib.tensor(values, dtype=getattr(lib, dtype)), "nuc"))


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_cond_nuc_gradient(dtype):
    def program(lib):
        A = lib.tensor([[2 + 1j, 1], [0.5, 3 - 1j]] if dtype == "complex128" else [[2., 1.], [0.5, 3.]],
                       dtype=getattr(lib, dtype), requires_grad=True)
        return lib.linalg.cond(A, "nuc"), [A]
    both(grads(program))


@pytest.mark.parametrize("ord", ["fro", 1, -1, float("inf"), -float("inf")])
@pytest.mark.parametrize("values", [[[1., float("inf")], [0., 1.]], [[1., float("nan")], [0., 1.]]])
@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_cond_through_the_inverse_is_inf_where_it_would_be_nan(ord, values, dtype):
    # torch turns the product's nan (a non-finite A's inverse is nan) into inf; ember returned nan
    both(lambda lib: lib.linalg.cond(lib.tensor(values, dtype=getattr(lib, dtype)), ord))


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("program", [
    lambda lib, A: lib.linalg.svdvals(A),
    lambda lib, A: lib.linalg.svd(A),
    lambda lib, A: lib.linalg.svd(A, full_matrices=False),
    lambda lib, A: [t.resolve_conj() for t in lib.svd(A)],
    lambda lib, A: lib.linalg.matrix_norm(A, 2),
])
def test_svd_of_an_infinite_complex_matrix_has_real_singular_values(dtype, program):
    # ember's nan singular values of a matrix with an inf entry were complex
    both(lambda lib: program(lib, lib.tensor([[1, float("inf"), 0], [0, 1, 2j]], dtype=getattr(lib, dtype))))


# ----------------------------------------------------------------- which triangle is read

@pytest.mark.parametrize("dtype", ["float64", "complex128"])
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("factor_of", [
    lambda lib, A, upper: lib.linalg.cholesky(A, upper=upper),
    lambda lib, A, upper: lib.linalg.cholesky_ex(A, upper=upper).L,
    lambda lib, A, upper: lib.cholesky(A, upper=upper),
])
def test_cholesky_reads_the_triangle_it_returns(dtype, upper, factor_of):
    # with upper=True torch (LAPACK's potrf) reads A's upper triangle; ember read the lower one and transposed
    torch.manual_seed(0)
    a = torch.randn(2, 3, 3, dtype=getattr(torch, dtype))
    A0 = a @ a.mH + 3 * torch.eye(3) + torch.randn(2, 3, 3, dtype=a.dtype).tril(-1)  # the lower triangle is off

    def program(lib):
        A = lib.tensor(A0.numpy(), requires_grad=True)
        factor = factor_of(lib, A, upper)
        loss = factor.real.sum() + 2 * factor.imag.sum() if factor.is_complex() else factor.sum()
        return [factor.detach()] + list(lib.autograd.grad(loss, [A]))
    both(program)


@pytest.mark.parametrize("UPLO", ["u", "l"])
@pytest.mark.parametrize("op", ["eigvalsh", "eigh"])
def test_eigh_takes_uplo_in_lower_case(op, UPLO):
    A = [[2., 1.], [5., 3.]]
    both(lambda lib: getattr(lib.linalg, op)(lib.tensor(A, dtype=lib.float64), UPLO=UPLO))


def test_eigh_refuses_an_uplo_that_is_not_a_string():
    for lib in (torch, ember):
        with pytest.raises(TypeError, match="argument 'UPLO' must be str, not int"):
            lib.linalg.eigh(lib.eye(2), UPLO=1)


# ----------------------------------------------------------------- batch dims broadcast with B's

def singular_in_batch(lib):
    A = lib.eye(3, dtype=lib.complex128).repeat(2, 1, 1, 1)  # (2, 1, 3, 3), the second matrix singular
    A[1, 0, 1, 1] = 0
    return A


@pytest.mark.parametrize("program", [
    lambda lib, A: lib.linalg.solve_ex(A, lib.ones(4, 3, 2, dtype=A.dtype)).info,
    lambda lib, A: lib.linalg.solve_ex(A, lib.ones(4, 2, 3, dtype=A.dtype), left=False).info,
    lambda lib, A: lib.linalg.solve_ex(A[1, 0], lib.ones(4, 3, 2, dtype=A.dtype)).info,
    lambda lib, A: lib.linalg.solve_ex(A[:, 0], lib.ones(1, 3, 2, dtype=A.dtype)).info,
    lambda lib, A: lib.linalg.solve_ex(A, lib.ones(0, 3, 2, dtype=A.dtype)).info,
])
def test_solve_ex_info_has_the_batch_dims_of_A(program):
    # ember's info had the batch dims of A broadcast with B's
    both(lambda lib: program(lib, singular_in_batch(lib)))


@pytest.mark.parametrize("op", ["solve", "solve_ex"])
def test_solve_names_the_batch_element_of_A(op):
    # ember named the element's place in the batch broadcast with B's (4 here)
    for lib in (torch, ember):
        with pytest.raises(RuntimeError, match=r"\(Batch element 1\): The solver failed because the input matrix is "
                                               "singular"):
            kwargs = {"check_errors": True} if op == "solve_ex" else {}
            getattr(lib.linalg, op)(singular_in_batch(lib), lib.ones(4, 3, 2, dtype=lib.complex128), **kwargs)


def test_triangular_solve_clones_the_coefficient_broadcast():
    # torch's cloned_coefficient is A broadcast with b's batch dims; ember's was A's own shape
    torch.manual_seed(0)
    A0, b0 = torch.randn(2, 1, 3, 3, dtype=torch.complex128) + 3 * torch.eye(3), torch.randn(4, 3, 2,
                                                                                             dtype=torch.complex128)

    def program(lib):
        A, b = lib.tensor(A0.numpy(), requires_grad=True), lib.tensor(b0.numpy(), requires_grad=True)
        solution, coefficient = lib.triangular_solve(b, A)
        loss = (solution.abs() ** 2).sum() + (coefficient * lib.arange(9.).reshape(3, 3)).real.sum()
        return [solution.detach(), coefficient.detach()] + list(lib.autograd.grad(loss, [A, b]))
    both(program)


# ----------------------------------------------------------------- out=

def spd(lib):
    return lib.tensor([[4., 1., 0.], [1., 3., 1.], [0., 1., 2.]])


def outs(lib, *dtypes):
    return tuple(lib.empty(0, dtype=getattr(lib, dtype)) for dtype in dtypes)


@pytest.mark.parametrize("program, dtypes", [
    (lambda lib, A, out: lib.linalg.slogdet(A, out=out), ["float32", "float64"]),
    (lambda lib, A, out: lib.slogdet(A, out=out), ["float64", "float32"]),
    (lambda lib, A, out: lib.linalg.eigh(A, out=out), ["float64", "float32"]),
    (lambda lib, A, out: lib.linalg.cholesky_ex(A, out=out), ["float32", "int64"]),
    (lambda lib, A, out: lib.linalg.inv_ex(A, out=out), ["float64", "int32"]),
    (lambda lib, A, out: lib.linalg.solve_ex(A, A, out=out), ["float32", "int64"]),
    (lambda lib, A, out: lib.linalg.lu_factor(A, out=out), ["float32", "int64"]),
    (lambda lib, A, out: lib.linalg.lu_factor_ex(A, out=out), ["float32", "int32", "int64"]),
    (lambda lib, A, out: lib.linalg.lu(A, out=out), ["float32", "float64", "float32"]),
    (lambda lib, A, out: lib.linalg.qr(A, out=out), ["float64", "float32"]),
    (lambda lib, A, out: lib.linalg.svd(A, out=out), ["float32", "float64", "float32"]),
    (lambda lib, A, out: lib.svd(A, out=out), ["float32", "float32", "float64"]),
    (lambda lib, A, out: lib.qr(A, out=out), ["float32", "float64"]),
    (lambda lib, A, out: lib.triangular_solve(A, A, out=out), ["float64", "float32"]),
    (lambda lib, A, out: lib.lu_unpack(*lib.linalg.lu_factor(A), out=out), ["float32", "float32", "float64"]),
    (lambda lib, A, out: lib.linalg.ldl_factor(A, out=out), ["float64", "int32"]),
    (lambda lib, A, out: lib.linalg.ldl_factor_ex(A, out=out), ["float32", "int32", "int64"]),
    (lambda lib, A, out: lib.linalg.ldl_solve(*lib.linalg.ldl_factor(A), A, out=out[0]), ["float64"]),
    (lambda lib, A, out: lib.linalg.multi_dot([A, A], out=out[0]), ["float64"]),
    (lambda lib, A, out: lib.ormqr(A, A[:, 0], A, out=out[0]), ["float64"]),
])
def test_out_of_a_wider_dtype_is_refused(program, dtypes):
    # ember cast its float32 results (and int32 infos and pivots) into the wider dtypes
    for lib in (torch, ember):
        with pytest.raises(RuntimeError, match="(Expected|expected) (out tensor|input and result) to have"):
            program(lib, spd(lib), outs(lib, *dtypes))


@pytest.mark.parametrize("program, dtypes", [
    (lambda lib, A, out: lib.linalg.eig(A, out=out), ["complex128", "complex64"]),
    (lambda lib, A, out: lib.geqrf(A, out=out), ["float64", "float32"]),
    (lambda lib, A, out: lib.linalg.lstsq(A, A, out=out), ["float64", "float32", "int64", "float32"]),
    (lambda lib, A, out: (lib.cholesky(A, out=out[0]),), ["float64"]),
    (lambda lib, A, out: (lib.cholesky(A, out=out[0]),), ["complex64"]),
])
def test_out_of_a_wider_dtype_takes_these_results(program, dtypes):
    # these cast, as torch's (ember refused an out of torch.cholesky's of another dtype)
    both(lambda lib: [t.dtype.is_complex for t in program(lib, spd(lib), outs(lib, *dtypes))])


# ----------------------------------------------------------------- gradcheck

@pytest.mark.parametrize("dtype", ["float64", "complex128"])
@pytest.mark.parametrize("check", ["gradcheck", "gradgradcheck"])
@pytest.mark.parametrize("function", [
    lambda lib, A: lib.linalg.slogdet(A),
    lambda lib, A: lib.linalg.qr(A),
    lambda lib, A: lib.linalg.lu_factor(A)[:1],
])
def test_gradcheck_of_a_function_that_returns_a_named_tuple(dtype, check, function):
    # ember's gradcheck rebuilt the named tuple from one generator: a TypeError
    A0 = torch.tensor([[2., 1., 0.], [1., 3., 1.], [0.5, 1., 4.]], dtype=getattr(torch, dtype))
    A0 = A0 * (1 + 0.5j) if A0.is_complex() else A0
    both(lambda lib: getattr(lib.autograd, check)(lambda A: function(lib, A),
                                                  (lib.tensor(A0.numpy(), requires_grad=True),)))


@pytest.mark.parametrize("shapes, left", [
    (((4, 3), (2,), (4, 2)), True),
    (((4, 3), (2,), (2, 4)), False),
    (((4, 3), (4,), (4, 2)), True),
])
def test_ormqr_takes_every_reflector_or_none(shapes, left):
    # torch wants exactly min(m, n) reflectors; ember took fewer
    for lib in (torch, ember):
        with pytest.raises(RuntimeError, match=r"tau.shape\[-1\] must be equal to min"):
            lib.ormqr(*(lib.ones(shape) for shape in shapes), left=left)


# ----------------------------------------------------------------- complex dtypes where real ones are wanted

@pytest.mark.parametrize("expression, message", [
    ("L.linalg.vector_norm(L.ones(2), dtype=L.complex128)", "dtype should be real for real inputs"),
    ("L.linalg.vector_norm(L.ones(2), dtype=L.complex64)", "dtype should be real for real inputs"),
    ("L.linalg.matrix_norm(L.ones(2, 2), 'nuc', dtype=L.complex128)", "dtype should be real for real inputs"),
    ("L.linalg.norm(L.ones(2, 2), dtype=L.complex128)", "dtype should be real for real inputs"),
    ("L.norm(L.ones(2), dtype=L.complex128)", "dtype should be real for real inputs"),
    ("L.linalg.vector_norm(L.ones(2, dtype=L.complex64), dtype=L.float64)", "dtype should be complex for complex"),
    ("L.linalg.pinv(L.eye(2, dtype=L.complex128), atol=L.tensor(0.1 + 0j))", "atol tensor of complex type"),
    ("L.linalg.pinv(L.eye(2), rtol=L.tensor(0.1 + 0j))", "rtol tensor of complex type"),
    ("L.linalg.pinv(L.eye(2), rcond=L.tensor(0.1 + 0j))", "rcond tensor of complex type"),
    ("L.linalg.matrix_rank(L.eye(2, dtype=L.complex128), atol=L.tensor(0.1 + 0j))", "atol tensor of complex type"),
    ("L.complex(L.ones(2), L.ones(3))", r"size of tensor a \(2\) must match the size of tensor b \(3\)"),
    ("L.polar(L.ones(2), L.ones(3))", r"size of tensor a \(2\) must match the size of tensor b \(3\)"),
])
def test_refused_as_torch_refuses(expression, message):
    # ember computed the norms (and took the tolerances' real parts); complex's shapes raised a ValueError
    for lib in (torch, ember):
        with pytest.raises(RuntimeError, match=message):
            eval(expression, {"L": lib})


@pytest.mark.parametrize("shapes", [((0, 3, 3), (0, 3)), ((0, 3, 2), (0, 2))])
def test_householder_product_of_no_matrices_has_no_gradient(shapes):
    # torch's gradient is None (undefined) for an empty batch; ember's was zeros
    def program(lib):
        A, tau = (lib.ones(*shape, dtype=lib.complex128, requires_grad=True) for shape in shapes)
        gradients = lib.autograd.grad(lib.linalg.householder_product(A, tau).abs().sum(), [A, tau], allow_unused=True)
        return [g is None for g in gradients]
    both(program)


# ----------------------------------------------------------------- forward mode

@pytest.mark.parametrize("dtype", ["float64", "complex128"])
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("factor_of", [
    lambda lib, A, upper: lib.linalg.cholesky(A, upper=upper),
    lambda lib, A, upper: lib.linalg.cholesky_ex(A, upper=upper).L,
])
def test_cholesky_tangent_of_a_tangent_that_is_not_hermitian(dtype, upper, factor_of):
    # ember's tangent was the transpose of its backward, which reads the tangent as Hermitian; torch's formula
    # L tril_half(L^-1 dA L^-H) takes dA as it is
    torch.manual_seed(0)
    a = torch.randn(2, 3, 3, dtype=getattr(torch, dtype))
    A0, T0 = a @ a.mH + 3 * torch.eye(3), torch.randn(2, 3, 3, dtype=a.dtype)
    both(lambda lib: lib.func.jvp(lambda A: factor_of(lib, A, upper), (lib.tensor(A0.numpy()),),
                                  (lib.tensor(T0.numpy()),)))
