"""Complex linear algebra against torch: linalg.eig and eigvals, the matrix products and ember.linalg on complex
tensors. Values and dtypes are compared with torch on the same inputs, gradients with torch's and with
gradcheck / gradgradcheck on complex128 (through the real pairs, torch's Wirtinger convention)."""
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import ember
from twins import both, both_raise

RNG = np.random.default_rng(13)


def cplx(*shape, rng=RNG) -> np.ndarray:
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def real(*shape, rng=RNG) -> np.ndarray:
    return rng.standard_normal(shape)


def leaves(lib, arrays) -> list:
    return [lib.tensor(a, requires_grad=True) for a in arrays]


def weighted_loss(lib, out):
    """A real loss of every output element, with fixed complex weights (the same for both libraries)."""
    rng = np.random.default_rng(5)
    w = lib.tensor(rng.standard_normal(out.shape) + 1j * rng.standard_normal(out.shape))
    return (out * w).real.sum() if out.is_complex() else (out * w.real).sum()


def value_and_gradients(function, arrays, loss=weighted_loss):
    """``function``'s result and the gradients of a real loss of it, in torch and in ember: they must agree."""
    def program(lib):
        inputs = leaves(lib, arrays)
        out = function(lib, *inputs)
        grads = lib.autograd.grad(loss(lib, out), inputs, allow_unused=True)
        return out.detach().resolve_conj() if lib is torch else out, str(out.dtype).split(".")[-1], \
            [None if g is None else (g.resolve_conj() if lib is torch else g) for g in grads]

    both(program)


def gradchecks(function, arrays):
    inputs = leaves(ember, arrays)
    assert ember.autograd.gradcheck(lambda *x: function(ember, *x), inputs)
    assert ember.autograd.gradgradcheck(lambda *x: function(ember, *x), inputs)


# ----------------------------------------------------------------- linalg.eig and eigvals


def matched(values: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """The positions in ``values`` of each of ``reference``'s eigenvalues (two LAPACK builds may order them
    differently)."""
    order = np.abs(reference[..., :, None] - values[..., None, :]).argmin(-1)
    assert (np.sort(order, -1) == np.arange(values.shape[-1])).all(), "the eigenvalues differ"
    return order


@pytest.mark.parametrize("dtype,shape", [("float64", (4, 4)), ("float32", (3, 3)), ("complex128", (2, 4, 4)),
                                         ("complex64", (3, 3)), ("float64", (2, 3, 0, 0)), ("float64", (1, 1))])
def test_eig_matches_torch_up_to_each_eigenvectors_phase(dtype, shape):
    data = (cplx(*shape) if dtype.startswith("complex") else real(*shape)).astype(dtype)
    tL, tV = torch.linalg.eig(torch.tensor(data))
    eL, eV = ember.linalg.eig(ember.tensor(data))
    assert str(eL.dtype) == str(eV.dtype) == str(tL.dtype).replace("torch", "ember") == "ember.complex" + (
        "64" if dtype in ("float32", "complex64") else "128")
    (eL, eV), (tL, tV) = (eL.numpy(), eV.numpy()), (tL.numpy(), tV.numpy())
    assert eL.shape == tL.shape and eV.shape == tV.shape
    if not data.size:
        return
    tol = 1e-4 if "64" in str(eL.dtype) else 1e-10
    order = matched(eL, tL)
    np.testing.assert_allclose(np.take_along_axis(eL, order, -1), tL, atol=tol)
    columns = np.take_along_axis(eV, order[..., None, :], -1)
    phases = np.einsum("...ij,...ij->...j", tV.conj(), columns)  # v_ember = v_torch * e^(i phi)
    np.testing.assert_allclose(np.abs(phases), 1, atol=tol)
    np.testing.assert_allclose(columns, tV * phases[..., None, :], atol=10 * tol)
    np.testing.assert_allclose(np.linalg.norm(eV, axis=-2), 1, atol=tol)
    np.testing.assert_allclose(data @ eV, eV * eL[..., None, :], atol=10 * tol * np.abs(data).max())


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 5), batch=st.sampled_from([(), (2,)]), complex_input=st.booleans(), seed=st.integers(0, 2**16))
def test_eig_gives_unit_eigenvectors_with_a_v_equal_v_diag_l(n, batch, complex_input, seed):
    rng = np.random.default_rng(seed)
    data = cplx(*batch, n, n, rng=rng) if complex_input else real(*batch, n, n, rng=rng)
    L, V = (x.numpy() for x in ember.linalg.eig(ember.tensor(data)))
    np.testing.assert_allclose(data @ V, V * L[..., None, :], atol=1e-10 * max(1, np.abs(data).max() * n))
    np.testing.assert_allclose(np.linalg.norm(V, axis=-2), 1, atol=1e-12)
    np.testing.assert_allclose(ember.linalg.eigvals(ember.tensor(data)).numpy(), L, atol=1e-12)


def test_eigvals_and_out_match_torch():
    a = real(3, 3)

    def program(lib):
        L, V = lib.zeros(0, dtype=lib.complex128), lib.zeros(0, dtype=lib.complex128)
        result = lib.linalg.eig(lib.tensor(a), out=(L, V))
        values = lib.linalg.eigvals(lib.tensor([[2.0, 1.0], [0.0, -1.0]]))
        return result.eigenvalues is L, result.eigenvectors is V, values, str(values.dtype).split(".")[-1], \
            type(lib.linalg.eig(lib.tensor(a))).__name__

    both(program)


@pytest.mark.parametrize("expression,error,fragment", [
    ("L.linalg.eig(L.ones(2, 3))", RuntimeError, "square matrices"),
    ("L.linalg.eigvals(L.ones(2, 3))", RuntimeError, "square matrices"),
    ("L.linalg.eig(L.ones(3))", RuntimeError, "at least 2 dimensions"),
    ("L.linalg.eig(L.ones(3, 3, dtype=L.int64))", RuntimeError, "Long"),
    ("L.linalg.eig(L.ones(3, 3, dtype=L.float16))", NotImplementedError, "Half"),
    ("L.linalg.eig(L.tensor([[float('nan'), 1.], [1., 1.]]))", RuntimeError, "infs or NaNs"),
])
@pytest.mark.filterwarnings("ignore:ComplexHalf support is experimental")
def test_eig_refuses_what_torch_refuses(expression, error, fragment):
    both_raise(lambda L: eval(expression, {"L": L}), error, fragment)


_NAN, _INF = float("nan"), float("inf")
# Matrices torch's LAPACK answers for (for a NaN in a block that isolates nothing it answers arbitrarily, or crashes).
_NON_FINITE_MATRICES = [
    [[_NAN, 1.0], [0.0, 2.0]],
    [[1.0, _NAN], [0.0, 2.0]],
    [[1.0, 2.0, _NAN], [3.0, 4.0, 0.0], [0.0, 0.0, 5.0]],
    [[5.0, 0.0, 0.0], [_NAN, 1.0, 2.0], [0.0, 3.0, 4.0]],
    [[1.0, 2.0, 0.0], [3.0, 4.0, 0.0], [_NAN, _NAN, 5.0]],
    [[1.0, _NAN, _INF], [0.0, 2.0, 0.0], [0.0, 0.0, 3.0]],
    [[1.0, 0.0], [0.0, _INF]],
    [[1.0, _INF], [2.0, 3.0]],
]


def _assert_same_complex(mine, theirs):
    for part in ("real", "imag"):
        np.testing.assert_allclose(getattr(mine, part), getattr(theirs, part), rtol=1e-6, atol=1e-6, equal_nan=True)


@pytest.mark.parametrize("dtype", ["float64", "float32", "complex128"])
@pytest.mark.parametrize("matrix", _NON_FINITE_MATRICES, ids=range(len(_NON_FINITE_MATRICES)))
def test_eigvals_of_infs_and_nans_without_grad_as_torch(matrix, dtype):
    """NaN for an inf; with a NaN, the eigenvalues LAPACK's permutation isolates, in its order, and NaN for
    the rest: as a batch, transposed (not contiguous) or alone."""
    results = []
    for lib in (torch, ember):
        A = lib.tensor(matrix, dtype=getattr(lib, dtype))
        finite = lib.tensor([[2.0, 1.0, 0.0], [1.0, 3.0, 0.5], [0.0, 0.5, 4.0]], dtype=A.dtype)[:len(matrix), :len(matrix)]
        batch = lib.stack([A, finite])
        results.append([lib.linalg.eigvals(x).numpy() for x in (A, batch, A.mT.contiguous().mT)])
    for mine, theirs in zip(results[1], results[0]):
        assert mine.dtype == theirs.dtype
        _assert_same_complex(mine, theirs)


@pytest.mark.parametrize("matrix", [[[_NAN, 1.0], [0.0, 2.0]], [[1.0, _INF], [2.0, 3.0]]])
@pytest.mark.parametrize("call", ["L.linalg.eig(A)", "L.linalg.eigvals(A.requires_grad_())",
                                  "L.linalg.eig(A.requires_grad_())"])
def test_eig_and_eigvals_with_grad_refuse_infs_and_nans_as_torch(matrix, call):
    both_raise(lambda L: eval(call, {"L": L, "A": L.tensor(matrix)}), RuntimeError,
               "linalg.eig: input tensor should not contain infs or NaNs")


def _eigen_losses():
    """Losses of eig that do not depend on the eigenvectors' phases, nor on the order of the eigenvalues."""
    return {
        "values": lambda lib, A: lib.linalg.eig(A).eigenvalues.abs().sum() + (lib.linalg.eig(A).eigenvalues * 2).real.sum(),
        "eigvals": lambda lib, A: (lib.linalg.eigvals(A) * lib.linalg.eigvals(A)).real.sum(),
        "vectors": lambda lib, A: lib.linalg.eig(A).eigenvectors.abs().sum(),
        "both": lambda lib, A: (lib.linalg.eig(A).eigenvectors.abs() * lib.linalg.eig(A).eigenvalues.abs()).sum(),
    }


@pytest.mark.parametrize("loss", list(_eigen_losses()))
@pytest.mark.parametrize("complex_input", [False, True])
def test_eig_gradients_match_torch_and_gradcheck(loss, complex_input):
    rng = np.random.default_rng(3)
    data = cplx(3, 3, rng=rng) if complex_input else real(3, 3, rng=rng) + np.diag([0.0, 2.0, 4.0])
    function = _eigen_losses()[loss]

    def program(lib):
        A = lib.tensor(data, requires_grad=True)
        value = function(lib, A)
        return value, lib.autograd.grad(value, A)[0]

    both(program)
    assert ember.autograd.gradcheck(lambda A: function(ember, A), [ember.tensor(data, requires_grad=True)])
    if loss in ("values", "vectors"):
        assert ember.autograd.gradgradcheck(lambda A: function(ember, A), [ember.tensor(data, requires_grad=True)])


def test_eig_gradient_of_a_batch_and_its_node():
    data = cplx(2, 3, 3)

    def program(lib):
        A = lib.tensor(data, requires_grad=True)
        L, V = lib.linalg.eig(A)
        (L.abs().sum() + V.abs().sum()).backward()
        return A.grad, L.grad_fn.name(), lib.linalg.eigvals(A).grad_fn.name()

    both(program)


def test_eig_refuses_a_loss_that_depends_on_the_phases():
    def program(lib):
        # a fixed matrix with a complex pair of eigenvalues: a random one may have only real eigenvalues, whose
        # real eigenvectors make the loss well defined, so whether it raised depended on the tests run before
        A = lib.tensor([[0.5, -1.2, 0.3], [1.1, 0.2, -0.4], [0.3, 0.6, 0.9]], dtype=lib.float64, requires_grad=True)
        lib.linalg.eig(A).eigenvectors.real.sum().backward()

    both_raise(program, RuntimeError, r"linalg_eig_backward: The eigenvectors in the complex case are specified up "
                                      r"to multiplication by e\^\{i phi\}", "ill-defined")


# ----------------------------------------------------------------- matrix products


PRODUCTS = {
    "matmul": (lambda L, a, b: L.matmul(a, b), [(3, 4), (4, 2)]),
    "matmul batch by matrix": (lambda L, a, b: L.matmul(a, b), [(2, 3, 4), (4, 2)]),
    "matmul batches": (lambda L, a, b: a @ b, [(2, 3, 4), (2, 4, 2)]),
    "matmul vector": (lambda L, a, b: L.matmul(a, b), [(4,), (4, 2)]),
    "matmul by vector": (lambda L, a, b: a @ b, [(2, 3, 4), (4,)]),
    "mm": (lambda L, a, b: L.mm(a, b), [(3, 4), (4, 2)]),
    "bmm": (lambda L, a, b: L.bmm(a, b), [(2, 3, 4), (2, 4, 2)]),
    "mv": (lambda L, a, b: L.mv(a, b), [(3, 4), (4,)]),
    "dot": (lambda L, a, b: L.dot(a, b), [(4,), (4,)]),
    "vdot": (lambda L, a, b: L.vdot(a, b), [(4,), (4,)]),
    "inner": (lambda L, a, b: L.inner(a, b), [(2, 4), (3, 4)]),
    "outer": (lambda L, a, b: L.outer(a, b), [(2,), (3,)]),
    "ger": (lambda L, a, b: L.ger(a, b), [(2,), (3,)]),
    "addmm": (lambda L, x, a, b: L.addmm(x, a, b, beta=0.5 + 1j, alpha=2 - 1j), [(3, 2), (3, 4), (4, 2)]),
    "addmm bias": (lambda L, x, a, b: L.addmm(x, a, b), [(2,), (3, 4), (4, 2)]),
    "addmv": (lambda L, x, a, b: L.addmv(x, a, b, beta=0.5j, alpha=2), [(3,), (3, 4), (4,)]),
    "addr": (lambda L, x, a, b: L.addr(x, a, b, alpha=1j), [(3, 4), (3,), (4,)]),
    "addbmm": (lambda L, x, a, b: L.addbmm(x, a, b, alpha=1 + 1j), [(3, 2), (2, 3, 4), (2, 4, 2)]),
    "baddbmm": (lambda L, x, a, b: L.baddbmm(x, a, b, beta=1j), [(2, 3, 2), (2, 3, 4), (2, 4, 2)]),
    "einsum": (lambda L, a, b: L.einsum("ij,jk->ik", a, b), [(3, 4), (4, 2)]),
    "einsum of three": (lambda L, a, b, c: L.einsum("ij,jk,kl->il", a, b, c), [(3, 4), (4, 2), (2, 5)]),
    "einsum batched": (lambda L, a, b: L.einsum("bij,bjk->bik", a, b), [(2, 3, 4), (2, 4, 2)]),
    "einsum trace": (lambda L, a: L.einsum("ii->", a), [(3, 3)]),
    "tensordot": (lambda L, a, b: L.tensordot(a, b, dims=([1], [0])), [(3, 4, 2), (4, 5)]),
    "kron": (lambda L, a, b: L.kron(a, b), [(2, 3), (2, 2)]),
    "trace": (lambda L, a: L.trace(a), [(3, 3)]),
    "multi_dot": (lambda L, a, b, c: L.linalg.multi_dot([a, b, c]), [(3,), (3, 2), (2, 5)]),
    "chain_matmul": (lambda L, a, b, c: L.chain_matmul(a, b, c), [(3, 4), (4, 2), (2, 5)]),
    "cross": (lambda L, a, b: L.linalg.cross(a, b), [(2, 3), (2, 3)]),
    "matrix_power": (lambda L, a: L.linalg.matrix_power(a, 3), [(3, 3)]),
}


@pytest.mark.filterwarnings("ignore:torch.chain_matmul is deprecated")
@pytest.mark.parametrize("name", list(PRODUCTS))
def test_complex_products_match_torch_with_conjugate_gradients(name):
    function, shapes = PRODUCTS[name]
    value_and_gradients(function, [cplx(*shape) for shape in shapes])


@pytest.mark.filterwarnings("ignore:torch.chain_matmul is deprecated")
@pytest.mark.parametrize("name", ["matmul", "matmul batches", "matmul by vector", "mv", "dot", "vdot", "addmm",
                                  "addmv", "addr", "baddbmm", "einsum of three", "kron", "cross"])
def test_complex_products_pass_gradcheck_and_gradgradcheck(name):
    function, shapes = PRODUCTS[name]
    gradchecks(function, [cplx(*[min(n, 3) for n in shape]) for shape in shapes])


def test_vdot_conjugates_its_first_argument_and_dot_does_not():
    def program(lib):
        a, b = lib.tensor([1 + 2j, 3j]), lib.tensor([2 - 1j, 1 + 1j])
        return lib.vdot(a, b), lib.dot(a, b), lib.vdot(a, a), (a.conj() * b).sum()

    result = both(program)
    assert result[0] == result[3] and result[2].imag == 0


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_products_keep_the_complex_dtype(dtype):
    a, b = cplx(2, 3).astype(dtype), cplx(3, 2).astype(dtype)

    def program(lib):
        x, y = lib.tensor(a), lib.tensor(b)
        return [(r, str(r.dtype).split(".")[-1]) for r in (x @ y, lib.einsum("ij,jk", x, y), lib.kron(x, y),
                                                            lib.trace(x @ y), lib.vdot(x[0], y[:, 0]))]

    both(program)


@pytest.mark.parametrize("expression", [
    "L.matmul(r2, c2)", "r2 @ c2", "L.mm(c2, r2)", "L.bmm(r3, c3)", "L.mv(r2, c1)", "L.dot(r1, c1)", "L.vdot(c1, r1)",
    "L.inner(r1, c1)", "L.addmm(c2, r2, r2)", "L.addmv(c1, r2, r1)", "L.baddbmm(c3, r3, r3)", "L.addbmm(c2, r3, r3)",
    "L.einsum('ij,jk->ik', r2, c2)", "L.tensordot(r2, c2)", "L.linalg.multi_dot([r2, c2])",
    "L.linalg.vecdot(r1, c1)", "L.linalg.solve(c2, r1)", "L.mm(c2, c2.to(L.complex64))",
])
def test_products_of_real_and_complex_operands_are_refused_as_in_torch(expression):
    def program(L):
        r1, c1 = L.ones(2, dtype=L.float64), L.ones(2, dtype=L.complex128)
        r2, c2 = L.ones(2, 2, dtype=L.float64), L.ones(2, 2, dtype=L.complex128)
        r3, c3 = L.ones(2, 2, 2, dtype=L.float64), L.ones(2, 2, 2, dtype=L.complex128)
        return eval(expression, {"L": L, "r1": r1, "c1": c1, "r2": r2, "c2": c2, "r3": r3, "c3": c3})

    both_raise(program, RuntimeError, "dtype|scalar type")


@pytest.mark.parametrize("expression", ["L.addmm(r2, r2, r2, alpha=1j)", "L.addmv(r1, r2, r1, beta=2j)",
                                        "L.baddbmm(r3, r3, r3, alpha=1j)", "L.addr(r2, r1, r1, beta=1j)"])
def test_a_complex_alpha_or_beta_needs_complex_operands(expression):
    def program(L):
        r1, r2, r3 = L.ones(2, dtype=L.float64), L.ones(2, 2, dtype=L.float64), L.ones(2, 2, 2, dtype=L.float64)
        return eval(expression, {"L": L, "r1": r1, "r2": r2, "r3": r3})

    with pytest.raises(RuntimeError):
        program(torch)
    with pytest.raises(RuntimeError, match=r"(alpha|beta) is the complex number .* convert the operands"):
        program(ember)


@pytest.mark.parametrize("name,function", [
    ("outer", lambda L, r, c: L.outer(r, c)), ("ger", lambda L, r, c: L.ger(c, r)),
    ("kron", lambda L, r, c: L.kron(r, c)),
    ("trace of a mixed product", lambda L, r, c: L.trace(L.outer(r, c)[:, :2])),
])
def test_products_that_promote_real_and_complex_operands(name, function):
    value_and_gradients(function, [real(3), cplx(3)], loss=lambda lib, out: out.abs().sum())


def test_addr_promotes_its_operands_and_gives_a_real_input_a_real_gradient():
    """torch promotes addr's operands too (its backward then fails on the mixed dtypes: checked against outer)."""
    x, y, bias = real(2), cplx(3), real(2, 3)

    def program(lib):
        a, b, c = leaves(lib, [x, y, bias])
        out = lib.addr(c, a, b, alpha=2) if lib is ember else c + 2 * lib.outer(a, b)
        out.abs().sum().backward()
        return out, a.grad, b.grad, c.grad, str(a.grad.dtype).split(".")[-1]

    both(program)


# ----------------------------------------------------------------- ember.linalg on complex matrices


def hermitian(L, x):
    """A Hermitian positive-definite matrix made from any ``x``: what cholesky and eigh read, so that gradcheck
    perturbs only such matrices."""
    return x @ x.mH + 3 * L.eye(x.shape[-1], dtype=x.dtype) if L is torch else \
        x @ x.conj().mT + 3 * L.eye(x.shape[-1], dtype=x.dtype)


def magnitudes(lib, out):
    """A loss that does not depend on the phases of singular vectors or eigenvectors."""
    return sum(t.abs().sum() for t in (out if isinstance(out, tuple) else (out,)))


LINALG = {
    "inv": (lambda L, a: L.linalg.inv(a), [(3, 3)]),
    "inv_ex": (lambda L, a: L.linalg.inv_ex(a).inverse, [(2, 3, 3)]),
    "det": (lambda L, a: L.linalg.det(a), [(2, 3, 3)]),
    "logabsdet": (lambda L, a: L.linalg.slogdet(a).logabsdet, [(3, 3)]),
    "slogdet sign": (lambda L, a: L.linalg.slogdet(a).sign, [(3, 3)]),
    "solve": (lambda L, a, b: L.linalg.solve(a, b), [(3, 3), (3, 2)]),
    "solve vector": (lambda L, a, b: L.linalg.solve(a, b), [(2, 3, 3), (2, 3)]),
    "solve left=False": (lambda L, a, b: L.linalg.solve(a, b, left=False), [(3, 3), (2, 3)]),
    "cholesky": (lambda L, x: L.linalg.cholesky(hermitian(L, x)), [(3, 3)]),
    "cholesky upper": (lambda L, x: L.linalg.cholesky(hermitian(L, x), upper=True), [(3, 3)]),
    "qr": (lambda L, a: L.linalg.qr(a).Q[:3] + L.linalg.qr(a).R * 2, [(4, 3)]),
    "qr wide": (lambda L, a: L.linalg.qr(a).R, [(2, 3)]),
    "pinv": (lambda L, a: L.linalg.pinv(a), [(4, 3)]),
    "lstsq": (lambda L, a, b: L.linalg.lstsq(a, b).solution, [(4, 3), (4, 2)]),
    "matrix_exp": (lambda L, a: L.linalg.matrix_exp(a * 0.5), [(3, 3)]),
    "matrix_power -2": (lambda L, a: L.linalg.matrix_power(a, -2), [(3, 3)]),
    "vecdot": (lambda L, a, b: L.linalg.vecdot(a, b), [(3, 4), (3, 4)]),
    "multi_dot": (lambda L, a, b: L.linalg.multi_dot([a, b, a]), [(3, 3), (3, 3)]),
    "solve_triangular": (lambda L, a, b: L.linalg.solve_triangular(a, b, upper=True), [(3, 3), (3, 2)]),
    "solve_triangular unit left=False": (
        lambda L, a, b: L.linalg.solve_triangular(a, b, upper=False, left=False, unitriangular=True), [(3, 3), (2, 3)]),
    "triangular_solve transpose": (lambda L, b, a: L.triangular_solve(b, a, transpose=True).solution, [(3, 2), (3, 3)]),
    "cond": (lambda L, a: L.linalg.cond(a), [(3, 3)]),
    "tensorsolve": (lambda L, a, b: L.linalg.tensorsolve(a, b), [(2, 3, 6), (2, 3)]),
    "lu_factor": (lambda L, a: L.linalg.lu_factor(a).LU, [(4, 4)]),
    "lu tall": (lambda L, a: (lambda r: r.L[:3] + r.U)(L.linalg.lu(a)), [(4, 3)]),
    "lu wide": (lambda L, a: (lambda r: r.L + r.U[:, :2])(L.linalg.lu(a)), [(2, 3)]),
    "lu_solve adjoint": (lambda L, a, b: L.linalg.lu_solve(*L.linalg.lu_factor(a), b, adjoint=True), [(3, 3), (3, 2)]),
    "logdet": (lambda L, a: L.logdet(a), [(3, 3)]),
    "cholesky_solve": (lambda L, x, b: L.cholesky_solve(b, L.linalg.cholesky(hermitian(L, x))), [(3, 3), (3, 2)]),
    "cholesky_inverse upper": (lambda L, x: L.cholesky_inverse(L.linalg.cholesky(hermitian(L, x), upper=True),
                                                               upper=True), [(3, 3)]),
    "householder_product": (lambda L, a, tau: L.linalg.householder_product(a, tau), [(3, 2), (2,)]),
}


@pytest.mark.filterwarnings("ignore:torch.triangular_solve is deprecated")
@pytest.mark.parametrize("name", list(LINALG))
def test_linalg_on_complex_matrices_matches_torch(name):
    function, shapes = LINALG[name]
    value_and_gradients(function, [cplx(*shape) for shape in shapes])


@pytest.mark.parametrize("name", ["inv", "det", "slogdet sign", "solve left=False", "cholesky upper", "qr",
                                  "pinv", "matrix_exp", "solve_triangular", "lu_factor", "logdet"])
def test_linalg_on_complex_matrices_passes_gradcheck_and_gradgradcheck(name):
    function, shapes = LINALG[name]
    gradchecks(function, [cplx(*shape) for shape in shapes])


SPECTRAL = {
    "svdvals": lambda L, a: L.linalg.svdvals(a),
    "svd": lambda L, a: L.linalg.svd(a, full_matrices=False),
    "svd full": lambda L, a: L.linalg.svd(a),
    "eigvalsh": lambda L, a: L.linalg.eigvalsh(hermitian(L, a)),
    "eigh": lambda L, a: L.linalg.eigh(hermitian(L, a)),
    "eigh upper": lambda L, a: L.linalg.eigh(hermitian(L, a), UPLO="U"),
    "norm": lambda L, a: L.linalg.norm(a),
    "vector_norm 3": lambda L, a: L.linalg.vector_norm(a, 3, dim=-1),
    "vector_norm inf": lambda L, a: L.linalg.vector_norm(a, float("inf")),
    "matrix_norm 1": lambda L, a: L.linalg.matrix_norm(a, 1),
    "matrix_norm 2": lambda L, a: L.linalg.matrix_norm(a, 2),
    "matrix_norm nuc": lambda L, a: L.linalg.matrix_norm(a, "nuc"),
}


@pytest.mark.parametrize("name", list(SPECTRAL))
@pytest.mark.parametrize("shape", [(3, 3), (4, 3), (2, 3)])
def test_real_valued_results_of_complex_matrices_match_torch(name, shape):
    """Singular values, eigenvalues of Hermitian matrices and norms are real; the gradients of a loss of them
    (and of the magnitudes of the vectors, which do not depend on their phases) are torch's."""
    if name.startswith("eig") and shape[0] != shape[1]:
        return
    function = SPECTRAL[name]
    a = cplx(*shape)

    def program(lib):
        x = lib.tensor(a, requires_grad=True)
        out = function(lib, x)
        dtypes = [str(t.dtype).split(".")[-1] for t in (out if isinstance(out, tuple) else (out,))]
        values = [t.abs() for t in (out if isinstance(out, tuple) else (out,))]  # vectors: up to their phases
        return values, dtypes, lib.autograd.grad(magnitudes(lib, out), x)[0]

    both(program)


@pytest.mark.parametrize("name", ["svd", "eigh", "matrix_norm nuc", "vector_norm 3"])
def test_real_valued_results_pass_gradcheck_and_gradgradcheck(name):
    function = SPECTRAL[name]
    inputs = [ember.tensor(cplx(3, 3), requires_grad=True)]
    assert ember.autograd.gradcheck(lambda x: magnitudes(ember, function(ember, x)), inputs)
    assert ember.autograd.gradgradcheck(lambda x: magnitudes(ember, function(ember, x)), inputs)


@pytest.mark.parametrize("program,message", [
    (lambda L, a: L.linalg.svd(a).U.real.sum(), "svd_backward: The singular vectors in the complex case are "
                                                r"specified up to multiplication by e\^\{i phi\}"),
    (lambda L, a: L.linalg.svd(a).Vh[0].imag.sum(), "svd_backward: The singular vectors"),
    (lambda L, a: L.linalg.eigh(hermitian(L, a)).eigenvectors.real.sum(),
     r"linalg_eigh_backward: The eigenvectors in the complex case are specified up to multiplication by e\^\{i phi\}"),
])
def test_losses_that_depend_on_the_vectors_phases_are_refused(program, message):
    a = cplx(3, 3)

    def run(lib):
        x = lib.tensor(a, requires_grad=True)
        program(lib, x).backward()

    both_raise(run, RuntimeError, message)


def test_the_phase_of_a_singular_vector_pair_cancels_in_u_vh():
    """U Vh does not depend on the common phase of each pair: its gradient is defined, and torch's."""
    value_and_gradients(lambda L, a: (lambda r: r.U @ r.Vh)(L.linalg.svd(a, full_matrices=False)), [cplx(3, 3)])


@pytest.mark.parametrize("shape", [(4, 3), (3, 3), (2, 4), (2, 3, 3)])
def test_geqrf_of_complex_matrices_matches_torch_and_householder_product_rebuilds_q(shape):
    a = cplx(*shape)

    def program(lib):
        compact = lib.geqrf(lib.tensor(a))
        rows, columns = shape[-2:]
        reflectors = compact.a if rows >= columns else compact.a[..., :rows]
        return tuple(compact), lib.linalg.householder_product(reflectors, compact.tau)

    both(program)


def test_geqrf_leaves_a_column_with_nothing_to_reflect():
    """A column (alpha, 0, ...) with real alpha needs no reflector: tau is 0, as LAPACK's."""
    both(lambda lib: tuple(lib.geqrf(lib.tensor([[1 + 0j, 2], [0, 3]]))))


@pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated")
def test_forward_mode_tangents_of_complex_products_match_torch():
    a, b, ta, tb = (cplx(3, 3) for _ in range(4))

    def program(lib):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            x, y = fw.make_dual(lib.tensor(a), lib.tensor(ta)), fw.make_dual(lib.tensor(b), lib.tensor(tb))
            outs = [x @ y, lib.vdot(x[0], y[0]), lib.einsum("ij,jk", x, y), lib.addmm(x, x, y, alpha=1j)]
            return [fw.unpack_dual(o).tangent for o in outs]

    both(program)


@pytest.mark.parametrize("driver", ["gelsy", "gels", "gelsd", "gelss"])
def test_lstsq_of_complex_matrices_gives_torchs_named_result(driver):
    """The residuals are real: the squared moduli of the misfit."""
    a, b = cplx(4, 3), cplx(4, 2)
    both(lambda lib: [(t, str(t.dtype).split(".")[-1])
                      for t in lib.linalg.lstsq(lib.tensor(a), lib.tensor(b), driver=driver)])


@pytest.mark.parametrize("ord", [0, 1, 2, 3.5, float("inf"), -float("inf")])
def test_vector_norms_of_complex_vectors_are_real_as_torchs(ord):
    a = cplx(2, 3)
    a[0, 1] = 0
    both(lambda lib: [(n, str(n.dtype).split(".")[-1]) for n in
                      (lib.linalg.vector_norm(lib.tensor(a), ord), lib.linalg.vector_norm(lib.tensor(a), ord, dim=1),
                       lib.linalg.vector_norm(lib.tensor(a.astype("complex64")), ord))])


def test_eig_under_vmap_and_grad_matches_torch():
    x = real(3, 4, 4)

    def program(lib):
        values = lib.func.vmap(lib.linalg.eigvals)(lib.tensor(x))
        magnitudes_ = lib.func.vmap(lambda a: lib.linalg.eig(a).eigenvectors.abs())(lib.tensor(x))
        grads = lib.func.vmap(lib.func.grad(lambda a: lib.linalg.eigvals(a).abs().sum()))(lib.tensor(x))
        return values, magnitudes_, grads

    both(program)


@pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated")
@pytest.mark.parametrize("complex_input", [False, True])
def test_eig_forward_mode_tangents_match_torch(complex_input):
    """The eigenvectors are not a holomorphic function of A: their tangent is eig's own formula (torch's)."""
    rng = np.random.default_rng(8)
    a, t = (cplx(2, 3, 3, rng=rng) if complex_input else real(2, 3, 3, rng=rng) for _ in range(2))

    def program(lib):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            L, V = lib.linalg.eig(fw.make_dual(lib.tensor(a), lib.tensor(t)))
            return fw.unpack_dual(L).tangent, fw.unpack_dual(V).tangent.resolve_conj() if lib is torch else \
                fw.unpack_dual(V).tangent

    both(program)


@pytest.mark.parametrize("some,compute_uv", [(True, True), (False, True), (True, False)])
def test_the_older_svd_gives_v_the_conjugate_transpose_of_vh(some, compute_uv):
    a = cplx(3, 2)

    def program(lib):
        U, S, V = lib.svd(lib.tensor(a), some=some, compute_uv=compute_uv)
        rebuilt = (U[:, :2] * S) @ V[:, :2].mH if lib is torch else (U[:, :2] * S) @ V[:, :2].conj().mT
        return S, [str(t.dtype).split(".")[-1] for t in (U, S, V)], rebuilt if compute_uv else U.abs()

    both(program)


def test_singular_complex_matrices_report_lapacks_info_and_nan():
    a = [[1 + 1j, 2j, 1], [2 + 2j, 4j, 2], [0, 1j, 3]]  # the second row twice the first

    def program(lib):
        batch = lib.stack([lib.eye(3, dtype=lib.complex128), lib.tensor(a)])
        inverse = lib.linalg.inv_ex(batch)
        return inverse.info, inverse.inverse[1], lib.linalg.solve_ex(batch, lib.ones(2, 3, dtype=batch.dtype)).info, \
            lib.linalg.lu_factor_ex(batch).info

    both(program)
    both_raise(lambda lib: lib.linalg.inv(lib.tensor(a)), RuntimeError, "The diagonal element 3 is zero")


@settings(max_examples=20, deadline=None)
@given(batch_a=st.sampled_from([(), (2,), (1, 3), (2, 1)]), batch_b=st.sampled_from([(), (2,), (3,), (2, 3)]),
       n=st.integers(1, 3), k=st.integers(1, 3), m=st.integers(1, 3), vectors=st.sampled_from(["", "a", "b"]),
       seed=st.integers(0, 2**16))
def test_complex_matmul_of_random_shapes_matches_torch(batch_a, batch_b, n, k, m, vectors, seed):
    """Batch dims broadcast, 1-D operands, folded and batched products: values and conjugate gradients."""
    rng = np.random.default_rng(seed)
    shape_a = (k,) if vectors == "a" else batch_a + (n, k)
    shape_b = (k,) if vectors == "b" else batch_b + (k, m)
    try:
        np.broadcast_shapes(shape_a[:-2], shape_b[:-2])
    except ValueError:
        return
    value_and_gradients(lambda L, a, b: L.matmul(a, b), [cplx(*shape_a, rng=rng), cplx(*shape_b, rng=rng)])
