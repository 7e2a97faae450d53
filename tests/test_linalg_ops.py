"""Products and ember.linalg against torch where the op table cannot say it: named-tuple results as a whole,
info tensors, keyword and sublist forms, methods, out=, LinAlgError, gradients torch has only to first order
(cdist), refused gradients, and einsum on random equations (hypothesis)."""
import math
import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import ember
from twins import both, both_raise, normalise

RNG = np.random.default_rng(7)
X = RNG.uniform(-1, 1, (3, 3))
SPD = X @ X.T + np.eye(3)
WIDE = RNG.uniform(-1, 1, (3, 4))


def t(lib, values, requires_grad=False):
    return lib.tensor(np.asarray(values), dtype=lib.float64, requires_grad=requires_grad)


def signed(result) -> tuple:
    """``eigh``'s (values, vectors) as arrays, each eigenvector's largest entry made positive: the sign is
    LAPACK's choice, and two builds of LAPACK (NumPy's, torch's) may choose differently."""
    values, vectors = (r.detach().numpy() for r in result)
    signs = np.sign(np.take_along_axis(vectors, np.abs(vectors).argmax(-2)[..., None, :], -2))
    return values, vectors * signs


def named(result) -> tuple:
    """A named tuple as (its type's name, its values as a plain tuple, its values read by ember's field names)."""
    name = type(result).__name__
    fields = getattr(ember.return_types, name)._fields
    return name, tuple(result), tuple(getattr(result, field) for field in fields)


# ----------------------------------------------------------------- named tuples and info


@pytest.mark.parametrize("expression", [
    "L.linalg.slogdet(spd)", "L.linalg.slogdet(-spd)", "L.linalg.slogdet(L.zeros(2, 2, dtype=L.float64))",
    "L.linalg.qr(wide)", "L.linalg.qr(wide.mT, mode='complete')", "L.linalg.qr(wide, mode='r')",
    "L.linalg.svd(wide)", "L.linalg.svd(wide, full_matrices=False)", "L.linalg.inv_ex(spd)", "L.linalg.cholesky_ex(spd)",
    "L.linalg.cholesky_ex(spd, upper=True)", "L.linalg.solve_ex(spd, wide)", "L.slogdet(spd)", "L.qr(wide.mT)",
    "L.qr(wide.mT, some=False)", "L.svd(wide)", "L.svd(wide, some=False)", "L.svd(wide, compute_uv=False)",
    "L.linalg.lstsq(wide.mT, tall)", "L.linalg.lstsq(wide.mT, tall, driver='gelsd')",
    "L.linalg.lstsq(wide.mT, tall[:, 0], driver='gelss')", "L.linalg.lstsq(wide.mT, tall, driver='gels')",
    "L.linalg.lstsq(wide, spd[:, :2], driver='gelsd')", "L.linalg.lstsq(wide.mT, tall[:, 0], driver='gels')",
    "L.linalg.lstsq(L.ones(4, 3, dtype=L.float64), tall, driver='gelss')",
    "L.linalg.lu_factor(wide)", "L.linalg.lu_factor_ex(spd)", "L.linalg.lu_factor_ex(L.zeros(2, 2))", "L.linalg.lu(wide.mT)",
    "L.lu_unpack(*L.linalg.lu_factor(wide))", "L.lu_unpack(*L.linalg.lu_factor(spd), unpack_data=False)",
    "L.lu_unpack(*L.linalg.lu_factor(spd), unpack_pivots=False)",
])
def test_named_results_match_torch(expression):
    def program(L):
        return named(eval(expression, {"L": L, "spd": t(L, SPD), "wide": t(L, WIDE), "tall": t(L, WIDE.T[:, :2])}))

    both(program)


def _outs(L, *dtypes: str) -> tuple:
    return tuple(L.empty(0, dtype=getattr(L, dtype)) for dtype in dtypes)


@pytest.mark.parametrize("expression, out_dtypes", [
    ("L.linalg.eigh(spd, out=out)", "float64 float64"),
    ("L.linalg.slogdet(spd, out=out)", "float64 float64"),
    ("L.slogdet(spd, out=out)", "float64 float64"),
    ("L.linalg.lu_factor(spd, out=out)", "float64 int32"),
    ("L.linalg.lu_factor_ex(spd, out=out)", "float64 int32 int32"),
    ("L.linalg.lu(wide, out=out)", "float64 float64 float64"),
    ("L.linalg.qr(wide, out=out)", "float64 float64"),
    ("L.linalg.svd(wide, out=out)", "float64 float64 float64"),
    ("L.linalg.eig(spd, out=out)", "complex128 complex128"),
    ("L.linalg.lstsq(wide.mT, tall, out=out)", "float64 float64 int64 float64"),
    ("L.linalg.lstsq(wide.mT, tall, driver='gelsd', out=out)", "float64 float64 int64 float64"),
    ("L.linalg.inv_ex(spd, out=out)", "float64 int32"),
    ("L.linalg.cholesky_ex(spd, out=out)", "float64 int32"),
    ("L.linalg.solve_ex(spd, wide, out=out)", "float64 int32"),
    ("L.linalg.ldl_factor(spd, out=out)", "float64 int32"),
    ("L.linalg.ldl_factor_ex(spd, out=out)", "float64 int32 int32"),
    ("L.geqrf(wide, out=out)", "float64 float64"),
    ("L.lu_unpack(*L.linalg.lu_factor(spd), out=out)", "float64 float64 float64"),
])
def test_named_results_written_into_out_are_named_as_torchs(expression, out_dtypes):
    """torch names them ``<name>_out`` (linalg_eigh_out ...); the tensors are out's own."""
    def program(L):
        out = _outs(L, *out_dtypes.split())
        variables = {"L": L, "spd": t(L, SPD), "wide": t(L, WIDE), "tall": t(L, WIDE.T[:, :2]), "out": out}
        result = eval(expression, variables)
        return (type(result).__name__, tuple(r is o for r, o in zip(result, out)),
                tuple(getattr(result, field).shape for field in getattr(ember.return_types, type(result).__name__)._fields))

    both(program)


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("get_infos", [False, True])
def test_lu_written_into_out_is_a_plain_tuple_as_torchs(get_infos):
    def program(L):
        out = _outs(L, *("float64 int32 int32" if get_infos else "float64 int32").split())
        result = L.lu(t(L, SPD), get_infos=get_infos, out=out)
        return type(result).__name__, tuple(r is o for r, o in zip(result, out)), tuple(r.shape for r in result)

    both(program)


@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh_matches_torch_up_to_the_sign_of_each_eigenvector(uplo):
    x = RNG.uniform(-1, 1, (2, 4, 4))

    def program(L):
        s, v = L.zeros(0, dtype=L.float64), L.zeros(0, dtype=L.float64)
        result = L.linalg.eigh(t(L, x), uplo, out=(s, v))
        return result.eigenvalues is s, result.eigenvectors is v, signed(result)

    both(program)


@pytest.mark.parametrize("expression", [
    "L.linalg.inv_ex(L.tensor([[1., 2.], [2., 4.]])).info", "L.linalg.inv_ex(L.ones(2, 2)).info",
    "L.linalg.inv_ex(L.stack([L.eye(3), L.zeros(3, 3), L.ones(3, 3)])).info",
    "L.linalg.cholesky_ex(-L.eye(3)).info", "L.linalg.cholesky_ex(L.tensor([[1., 0, 0], [0, -1, 0], [0, 0, 1]])).info",
    "L.linalg.cholesky_ex(L.stack([L.eye(2), -L.eye(2)])).info", "L.linalg.solve_ex(L.ones(2, 2), L.ones(2)).info",
    "L.linalg.solve_ex(L.stack([L.eye(2), L.zeros(2, 2)]), L.ones(2, 2)).info",
])
def test_info_of_the_unchecked_forms_matches_torch(expression):
    both(lambda L: eval(expression, {"L": L}), prepare=normalise)


@pytest.mark.parametrize("expression, fragment", [
    ("L.linalg.inv(L.ones(2, 2))", "singular"), ("L.linalg.inv_ex(L.ones(2, 2), check_errors=True)", "singular"),
    ("L.linalg.solve(L.ones(2, 2), L.ones(2))", "singular"), ("L.inverse(L.zeros(1, 1))", "singular"),
    ("L.linalg.cholesky(-L.eye(2))", "positive-definite"), ("L.cholesky(L.zeros(2, 2))", "positive-definite"),
    ("L.linalg.cholesky_ex(-L.eye(2), check_errors=True)", "positive-definite"),
    ("L.linalg.matrix_power(L.zeros(2, 2), -1)", "singular"),
])  # (lu_factor raises a plain RuntimeError, as torch: see test_linalg_solves.py)
def test_singular_input_raises_linalg_error_as_torch(expression, fragment):
    both_raise(lambda L: eval(expression, {"L": L}), RuntimeError, fragment)
    with pytest.raises(ember.linalg.LinAlgError):
        eval(expression, {"L": ember})
    assert issubclass(ember.linalg.LinAlgError, RuntimeError)


@pytest.mark.parametrize("expression", [
    "L.linalg.det(L.ones(2, 2, dtype=L.int64))", "L.linalg.inv(L.ones(2, 2, dtype=L.float16))",
    "L.linalg.eigh(L.ones(2, 3))", "L.linalg.svd(L.ones(3))", "L.linalg.qr(L.ones(2, 2, dtype=L.int32))",
    "L.linalg.solve(L.eye(2), L.ones(3))", "L.linalg.lstsq(L.ones(3, 2), L.ones(3, 1), driver='x')",
    "L.linalg.matrix_exp(L.ones(2, 3))", "L.linalg.pinv(L.ones(2, 2, dtype=L.int64))",
    "L.linalg.multi_dot([L.ones(2, 2)])", "L.linalg.multi_dot([L.ones(2, 3), L.ones(2, 3)])",
    "L.linalg.multi_dot([L.ones(2, 2, 2), L.ones(2, 2)])", "L.chain_matmul()",
    "L.cdist(L.ones(2, 2), L.ones(2, 2), p=-1.)", "L.bmm(L.ones(2, 2, 2), L.ones(2, 2, 2, dtype=L.float64))",
    "L.addmv(L.ones(2), L.ones(2, 3), L.ones(3, dtype=L.float64))", "L.tensordot(L.ones(2), L.ones(2), 3)",
    "L.trace(L.ones(2))", "L.einsum('ij,jk', L.ones(2, 3), L.ones(2, 3))", "L.einsum('i.j', L.ones(2, 3))",
    "L.einsum('ij', L.ones(2, 3), L.ones(2))", "L.einsum('ij->ii', L.ones(2, 2))", "L.einsum('i?', L.ones(2, 2))",
])
def test_bad_input_raises_runtime_error_as_torch(expression):
    both_raise(lambda L: eval(expression, {"L": L}), RuntimeError)


def test_errors_name_the_op_and_say_what_to_do():
    with pytest.raises(RuntimeError, match=r"linalg.det: .*square.*2 by 3"):
        ember.linalg.det(ember.ones(2, 3))
    with pytest.raises(RuntimeError, match=r"linalg.inv: Expected a floating point.*Long.*convert"):
        ember.linalg.inv(ember.ones(2, 2, dtype=ember.int64))
    with pytest.raises(RuntimeError, match=r"bmm: size mismatch, got batch1 \[2, 2, 3\], batch2 \[2, 2, 3\]"):
        ember.bmm(ember.ones(2, 2, 3), ember.ones(2, 2, 3))


# ----------------------------------------------------------------- values at special points


@pytest.mark.parametrize("expression", [
    "L.linalg.det(L.tensor([[1., 2.], [2., 4.]]))", "L.logdet(-L.eye(2)[:1, :1])", "L.logdet(L.zeros(2, 2))",
    "L.logdet(L.tensor([[0., 1.], [1., 0.]]))", "L.linalg.det(L.zeros(0, 0))", "L.linalg.slogdet(L.zeros(2, 0, 0))",
    "L.linalg.matrix_power(L.tensor([[1., 2.], [3., 4.]]), 0)", "L.linalg.matrix_power(L.ones(2, 2, dtype=L.int64), 3)",
    "L.matrix_power(L.tensor([[2., 1.], [1., 1.]]), -3)", "L.linalg.matrix_rank(L.ones(3, 3))",
    "L.linalg.matrix_rank(L.eye(3) * L.tensor([1., 1e-3, 1e-9]), rtol=1e-4)",
    "L.linalg.matrix_rank(L.eye(3) * L.tensor([1., 0.5, 0.1]), atol=0.3)",
    "L.linalg.matrix_rank(L.tensor([[2., 1.], [1., 2.]]), hermitian=True)",
    "L.linalg.pinv(L.tensor([[1., 1.], [1., 1.]]))", "L.linalg.pinv(L.tensor([[2., 1.], [1., -3.]]), hermitian=True)",
    "L.linalg.matrix_exp(L.tensor([[0., 1.], [-1., 0.]]) * 3)", "L.linalg.matrix_exp(L.tensor([[1., 2.], [0., 1.]], dtype=L.float64) * 40)",
"L.linalg.matrix_exp(L.ones(3, 0, 0))",
    "L.linalg.inv(L.ones(2, 0, 0))", "L.linalg.eigvalsh(L.zeros(0, 0))", "L.linalg.qr(L.ones(0, 3))",
    "L.linalg.diagonal(L.arange(24.).reshape(2, 3, 4), offset=-1, dim1=2, dim2=1)",
    "L.cross(L.eye(3), L.ones(3, 3))", "L.linalg.cross(L.eye(3), L.ones(1, 3))", "L.kron(L.eye(2), L.ones(2, 1, 2))",
    "L.tensordot(L.arange(6.).reshape(2, 3), L.arange(6.).reshape(3, 2), dims=[[1, 0], [0, 1]])",
    "L.tensordot(L.arange(6.).reshape(2, 3), L.arange(6.).reshape(3, 2), dims=([1], [0]))",
    "L.inner(L.arange(6.).reshape(2, 3), L.arange(3.))", "L.outer(L.arange(3), L.arange(2.))",
    "L.trace(L.arange(6, dtype=L.int32).reshape(2, 3))", "L.chain_matmul(L.eye(2))",
    "L.addmv(L.tensor([float('nan'), 1.]), L.ones(2, 3), L.ones(3), beta=0)",
    "L.cholesky_solve(L.tensor([[1.], [2.]]), L.tensor([[2., 5.], [1., 3.]]))",
    "L.cholesky_solve(L.tensor([[1.], [2.]]), L.tensor([[2., 5.], [1., 3.]]), upper=True)",
    "L.tensor([[2., 5.], [1., 3.]]).cholesky_inverse(upper=True)", "L.tensor([[1.], [2.]]).cholesky_solve(L.eye(2))",
    "L.linalg.cond(L.tensor([[1., 2.], [2., 4.]]), 'fro')", "L.linalg.cond(L.arange(24., dtype=L.float64).reshape(2, 3, 4) ** 2)",
    "L.linalg.vander(L.tensor([1, 2, 3]), N=4)",
    "L.lu(L.tensor([[1., 2.], [3., 4.]]))", "L.lu(L.tensor([[1., 2.], [2., 4.]]), get_infos=True)",
    "L.tensor([[1., 2.], [3., 4.]]).lu()", "L.lu_solve(L.ones(2, 1), *L.lu(L.tensor([[1., 2.], [3., 4.]])))",
    "L.ones(2, 1).lu_solve(*L.tensor([[1., 2.], [3., 4.]]).lu())",
    "L.triangular_solve(L.ones(2, 1), L.tensor([[1., 2.], [3., 4.]]), transpose=True)",
    "L.ones(2, 1).triangular_solve(L.tensor([[1., 2.], [3., 4.]]), upper=False, unitriangular=True)", "L.linalg.tensorsolve(L.eye(6).reshape(6, 2, 3), L.ones(2, 3), dims=(0,))",
])
def test_values_match_torch(expression):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        both(lambda L: _plain(eval(expression, {"L": L})), prepare=normalise)


def _plain(result):
    return tuple(result) if isinstance(result, tuple) else result


def test_cross_without_dim_takes_the_first_dim_of_size_three_as_torch():
    a, b = RNG.uniform(-1, 1, (2, 3, 3)), RNG.uniform(-1, 1, (2, 3, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        both(lambda L: L.cross(t(L, a), t(L, b)))


def test_diagonal_is_a_view_that_writes_through_as_torch():
    def program(L):
        x = L.zeros(3, 3)
        d = L.linalg.diagonal(x)
        d.add_(1)
        return x, d._base is x

    both(program)


# ----------------------------------------------------------------- gradients: cdist, refusals, svd with full matrices

CDIST_P = [0.0, 0.5, 1.0, 2.0, 3.0, math.inf]
CDIST_MODES = ["use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist"]
# (x1, x2) shapes: small, more than 25 rows either side (torch's default takes products), batch dims broadcast
# both ways, empty, no columns, and large enough to take many blocks of differences in either orientation
CDIST_SHAPES = [((3, 2), (4, 2)), ((30, 3), (4, 3)), ((4, 3), (30, 3)), ((2, 1, 3, 2), (3, 27, 2)),
                ((0, 2), (3, 2)), ((2, 0, 3), (1, 4, 3)), ((3, 0), (4, 0)), ((300, 64), (41, 64)),
                ((7, 64), (300, 64)), ((40, 2, 5), (40, 3, 5))]


def _cdist_program(a, b, weights, p, mode, dtype="float64", non_contiguous=False):
    def program(L):
        x1 = L.tensor(a, dtype=getattr(L, dtype), requires_grad=True)
        x2 = L.tensor(b, dtype=getattr(L, dtype), requires_grad=True)
        left, right = (x1.mT.contiguous().mT, x2[..., ::1, :]) if non_contiguous else (x1, x2)
        distance = L.cdist(left, right, p, compute_mode=mode)
        loss = (distance * L.tensor(weights, dtype=getattr(L, dtype))).sum()
        return (distance,) + L.autograd.grad(loss, (x1, x2), allow_unused=True) + (distance.grad_fn.name(),)
    return program


def _cdist_inputs(shapes):
    a, b = RNG.uniform(-2, 2, shapes[0]), RNG.uniform(-2, 2, shapes[1])
    weights = RNG.uniform(-1, 1, np.broadcast_shapes(shapes[0][:-2], shapes[1][:-2]) + (shapes[0][-2], shapes[1][-2]))
    return a, b, weights


@pytest.mark.parametrize("mode", CDIST_MODES)
@pytest.mark.parametrize("p", CDIST_P)
@pytest.mark.parametrize("shapes", CDIST_SHAPES)
def test_cdist_values_gradients_and_graph_match_torch(p, shapes, mode):
    both(_cdist_program(*_cdist_inputs(shapes), p, mode, non_contiguous=shapes[0][-2] == 4))


def _relative_error(mine, theirs) -> float:
    return float(np.abs(mine - theirs).max() / max(float(np.abs(theirs).max()), 1e-30)) if theirs.size else 0.0


@pytest.mark.parametrize("mode", CDIST_MODES)
@pytest.mark.parametrize("p", [0.5, 1.0, 2.0, 3.0, math.inf])
@pytest.mark.parametrize("shapes", [((30, 8), (5, 8)), ((2, 1, 3, 4), (3, 27, 4)), ((300, 64), (41, 64))])
def test_cdist_in_float32_matches_torch_to_single_rounding(p, shapes, mode):
    program = _cdist_program(*_cdist_inputs(shapes), p, mode, dtype="float32")
    mine, theirs = program(ember), program(torch)
    assert mine[-1] == theirs[-1]
    for what, x, y in zip(("distance", "x1.grad", "x2.grad"), mine[:3], theirs[:3]):
        x, y = x.detach().numpy(), y.detach().numpy()
        assert x.dtype == y.dtype == np.float32
        assert _relative_error(x, y) < 2e-6, what


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("mode", CDIST_MODES)
@pytest.mark.parametrize("p", [1.0, 2.0, 3.0, math.inf, 0.5])
def test_cdist_gradient_at_zero_distance_matches_torch(p, mode, dtype):
    # integers: the squares of the product form are exact, so coincident points are at 0 there too
    a = RNG.integers(-3, 4, (30, 3)).astype(float)
    b = np.concatenate([a[::-1][:10], RNG.integers(-3, 4, (5, 3))])

    def program(L):
        x1, x2 = (L.tensor(v, dtype=getattr(L, dtype), requires_grad=True) for v in (a, b))
        distance = L.cdist(x1, x2, p, compute_mode=mode)
        return (distance,) + L.autograd.grad(distance.sum(), (x1, x2))

    if dtype == "float64":
        both(program)
        return
    for mine, theirs in zip(program(ember), program(torch)):  # float32: to single rounding
        assert _relative_error(mine.detach().numpy(), theirs.detach().numpy()) < 2e-6


@pytest.mark.parametrize("mode", CDIST_MODES)
@pytest.mark.parametrize("p", [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, math.inf])
@pytest.mark.parametrize("shapes", [((3, 2), (2, 2)), ((2, 1, 3, 2), (3, 2, 2))])
def test_cdist_passes_gradcheck_and_gradgradcheck(p, shapes, mode):
    x1, x2 = (t(ember, RNG.uniform(-2, 2, shape), True) for shape in shapes)
    assert ember.autograd.gradcheck(lambda a, b: ember.cdist(a, b, p, compute_mode=mode), (x1, x2))
    assert ember.autograd.gradgradcheck(lambda a, b: ember.cdist(a, b, p, compute_mode=mode), (x1, x2))


@pytest.mark.parametrize("mode", CDIST_MODES)
@pytest.mark.parametrize("p", CDIST_P)
def test_cdist_gradient_under_create_graph_is_the_first_order_one(p, mode):
    """The first-order gradient runs a blocked kernel on arrays; the one that can be differentiated again is in
    ember ops: both give the same numbers, coordinates and points that agree included."""
    a = RNG.integers(-2, 3, (30, 3)).astype(float)
    b = np.concatenate([a[:4], RNG.uniform(-2, 2, (3, 3))])
    weights = t(ember, RNG.uniform(-1, 1, (30, 7)))
    x1, x2 = t(ember, a, True), t(ember, b, True)
    loss = (ember.cdist(x1, x2, p, compute_mode=mode) * weights).sum()
    tensors = ember.autograd.grad(loss, (x1, x2), create_graph=True)
    arrays = ember.autograd.grad(loss, (x1, x2))
    for tensor, array in zip(tensors, arrays):
        np.testing.assert_allclose(tensor.detach().numpy(), array.numpy(), rtol=1e-12, atol=1e-12)


def test_cdist_in_half_takes_products_as_torch_and_rounds_once():
    a, b = RNG.uniform(-3, 3, (30, 4)), RNG.uniform(-3, 3, (5, 4))
    exact = np.sqrt(((a[:, None] - b[None]) ** 2).sum(-1))
    for dtype in ("float16", "bfloat16"):
        errors = []
        for L in (torch, ember):
            x1, x2 = (L.tensor(v, dtype=getattr(L, dtype), requires_grad=True) for v in (a, b))
            distance = L.cdist(x1, x2)
            distance.sum().backward()
            assert str(distance.dtype).endswith(dtype) and str(x1.grad.dtype).endswith(dtype)
            errors.append(np.abs(distance.detach().float().numpy() - exact).max())
            with pytest.raises(NotImplementedError, match="cdist"):
                L.cdist(x1[:3], x2)  # few rows: the difference form, which has no 16-bit kernel
        assert errors[1] <= errors[0]


@pytest.mark.parametrize("expression", [
    "L.cdist(L.ones(3, 2), L.ones(3, 2), compute_mode='mm')", "L.cdist(L.ones(3, 2), L.ones(3, 2), compute_mode=None)",
])
def test_cdist_refuses_an_unknown_compute_mode_as_torch(expression):
    both_raise(lambda L: eval(expression, {"L": L}), ValueError, "is not a valid value for compute_mode")


@pytest.mark.parametrize("expression", [
    "L.cdist(L.ones(30, 2), L.ones(3, 2), p=float('nan'))", "L.cdist(L.ones(30, 2), L.ones(3, 3))",
    "L.cdist(L.ones(30, 2), L.ones(3, 2, dtype=L.float64))", "L.cdist(L.ones(2, 30, 2), L.ones(3, 3, 2))",
    "L.cdist(L.ones(30, 2, dtype=L.int64), L.ones(3, 2, dtype=L.int64))",
])
def test_cdist_refuses_bad_input_by_products_too(expression):
    both_raise(lambda L: eval(expression, {"L": L}), RuntimeError)


def test_cdist_keeps_its_blocks_of_differences_bounded():
    from ember._ops import distances

    for shapes in [((512, 64), (300, 64)), ((300, 64), (512, 64)), ((1000, 3, 2), (1, 4, 2)), ((1, 3), (9000, 3))]:
        layout = distances._Layout(np.zeros(shapes[0]), np.zeros(shapes[1]))
        seen = np.zeros((layout.count, layout.rows), int)
        for matrices, rows in layout.blocks():
            block = layout.differences(matrices, rows)
            assert block.size <= max(distances._BLOCK_ELEMENTS, layout.columns * layout.inner_rows)
            seen[matrices, rows] += 1
        assert (seen == 1).all()


@pytest.mark.parametrize("case", ["cdist 2 mm", "cdist 2", "cdist 1", "cdist 3", "cdist 0.5", "pdist 1", "pdist 2",
                                  "pdist 3"])
def test_cdist_and_pdist_in_float32_are_as_accurate_as_torch(case):
    """Against the float64 result, on points of which some are close (where the product form cancels): the
    largest error no more than torch's, give or take a tenth for the luck of rounding; for the product form,
    whose error at each close pair is a matter of luck, the mean error over those pairs."""
    op, p, *mm = case.split()
    rng = np.random.default_rng(11)
    a, b = rng.standard_normal((128, 64)), rng.standard_normal((100, 64))
    a[::8] = b[:16] + 1e-3 * rng.standard_normal((16, 64))
    mode = "use_mm_for_euclid_dist" if mm else "donot_use_mm_for_euclid_dist"

    def error(L):
        def distances(dtype):
            x1, x2 = L.tensor(a, dtype=dtype), L.tensor(b, dtype=dtype)
            result = L.cdist(x1, x2, float(p), compute_mode=mode) if op == "cdist" else L.pdist(x1, float(p))
            return result.double().numpy()
        errors = np.abs(distances(L.float32) - distances(L.float64))
        return errors[::8, :16].mean() if mm else errors.max()

    assert error(ember) <= 1.1 * error(torch)


@pytest.mark.parametrize("op", ["cdist", "pdist"])
def test_euclidean_distances_by_differences_stay_exact_for_close_points_in_float32(op):
    """Without products (pdist, or cdist's 'donot_use_mm_for_euclid_dist'), p = 2 in float32 is within two
    units in the last place of each distance, however close the points, as torch's is."""
    rng = np.random.default_rng(5)
    a = rng.standard_normal((2, 1, 40, 8)).astype(np.float32)
    b = rng.standard_normal((3, 30, 8)).astype(np.float32)
    b[:, :20] = a[1, 0, :20] * (1 + rng.choice([0, 1e-7, 1e-6, 1e-4], (3, 20, 1))).astype(np.float32)
    if op == "pdist":
        a, b = np.concatenate([a[1, 0], b[0]]), None
    exact = np.sqrt(((a.astype(np.float64)[..., :, None, :] - (a if b is None else b)[..., None, :, :]) ** 2).sum(-1))
    if op == "pdist":
        exact = exact[np.triu_indices(len(a), 1)]
    for L in (ember, torch):
        x = L.tensor(a)
        result = L.pdist(x) if op == "pdist" else L.cdist(x, L.tensor(b), compute_mode="donot_use_mm_for_euclid_dist")
        errors = np.abs(result.numpy() - exact)
        assert (errors <= 2 * np.spacing(exact.astype(np.float32))).all(), L.__name__


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("p", [0.0, 0.5, 1.0, 1.5, 2.0, math.inf])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_cdist_gradients_with_nan_and_infinite_coordinates_match_torch(p, dtype, create_graph):
    """nan and inf where torch has them (the first-order kernel on arrays and the formula in ember ops alike)."""
    a, b = RNG.uniform(-2, 2, (3, 4)), RNG.uniform(-2, 2, (30, 4))
    a[0, 1], a[1, 2], b[3, 0] = np.nan, np.inf, -np.inf

    def program(L):
        x1, x2 = (L.tensor(v, dtype=getattr(L, dtype), requires_grad=True) for v in (a, b))
        distance = L.cdist(x1, x2, p, compute_mode="donot_use_mm_for_euclid_dist")
        return (distance,) + L.autograd.grad(distance.sum(), (x1, x2), create_graph=create_graph and L is ember)

    both(program)


@pytest.mark.parametrize("p", [0.0, 0.5, 1.0, 2.0, 3.0, math.inf])
def test_pdist_with_nan_and_infinite_coordinates_matches_torch(p):
    """nan and inf where torch has them: its pdist's max of p = inf keeps a nan (its cdist's passes over it)."""
    x = np.array([[0., np.nan, 1.], [2., 0., 3.], [1., 1., 1.], [np.inf, 0., 0.]])

    def program(L):
        t = L.tensor(x, requires_grad=True)
        distances = L.pdist(t, p)
        return (distances,) + L.autograd.grad(distances.sum(), t)

    both(program)


PDIST_SHAPES = [(5, 3), (1, 3), (4, 0), (300, 64), (2000, 2), (30, 700)]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("p", CDIST_P + [1.5])
@pytest.mark.parametrize("shape", PDIST_SHAPES)
def test_pdist_values_gradients_and_graph_match_torch(shape, p, dtype):
    x = RNG.uniform(-2, 2, shape)
    if shape[0] > 3:
        x[3] = x[1]  # two rows that coincide: torch's gradient is 0 for their pair
    weights = RNG.uniform(-1, 1, shape[0] * (shape[0] - 1) // 2)

    def program(L):
        t = L.tensor(x, dtype=getattr(L, dtype), requires_grad=True)
        distances = L.pdist(t.mT.contiguous().mT if shape == (5, 3) else t, p)
        return (distances,) + L.autograd.grad((distances * L.tensor(weights, dtype=t.dtype)).sum(), t) + \
            (distances.grad_fn.name(),)

    mine, theirs = program(ember), program(torch)
    assert mine[-1] == theirs[-1]
    for x_, y_ in zip(mine[:2], theirs[:2]):
        x_, y_ = x_.detach().numpy(), y_.detach().numpy()
        assert x_.dtype == y_.dtype and x_.shape == y_.shape
        assert _relative_error(x_, y_) < (1e-12 if dtype == "float64" else 3e-6)


@pytest.mark.parametrize("p", [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, math.inf])
def test_pdist_passes_gradcheck_and_gradgradcheck(p):
    x = t(ember, RNG.uniform(-2, 2, (4, 3)), True)
    assert ember.autograd.gradcheck(lambda a: ember.pdist(a, p), (x,))
    assert ember.autograd.gradgradcheck(lambda a: ember.pdist(a, p), (x,))


@pytest.mark.parametrize("expression", [
    "L.pdist(L.ones(3))", "L.pdist(L.ones(2, 3, 2))", "L.pdist(L.ones(3, 2), -1.)", "L.pdist(L.ones(3, 2), float('nan'))",
    "L.pdist(L.ones(3, 2, dtype=L.int64))",
])
def test_pdist_refuses_bad_input_as_torch(expression):
    both_raise(lambda L: eval(expression, {"L": L}), RuntimeError, "pdist only supports")


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_pdist_has_no_16_bit_kernel_as_torch(dtype):
    both_raise(lambda L: L.pdist(L.ones(3, 2, dtype=getattr(L, dtype))), NotImplementedError, "pdist")


def test_pdist_keeps_its_blocks_of_differences_bounded():
    from ember._ops import distances

    for rows, columns in [(512, 64), (3000, 2), (40, 5000)]:
        seen = np.zeros(rows, int)
        for start, stop in distances._triangle_blocks(rows, columns):
            assert (stop - start) * (rows - start - 1) * columns <= max(distances._BLOCK_ELEMENTS,
                                                                         (rows - start - 1) * columns)
            seen[start:stop] += 1
        assert (seen[:-1] == 1).all()


@pytest.mark.parametrize("shape, mode", [((3, 2), "r"), ((2, 3), "r"), ((3, 2), "complete")])
def test_qr_refuses_the_gradients_torch_refuses(shape, mode):
    def program(L):
        A = t(L, RNG.uniform(-1, 1, shape), True)
        Q, R = L.linalg.qr(A, mode=mode)
        R.sum().backward()

    both_raise(program, RuntimeError, "mode=")


def test_svd_with_full_matrices_gives_gradients_as_torch():
    def program(L):
        A = t(L, WIDE.T, True)
        U, S, Vh = L.linalg.svd(A)
        loss = (U[:, :3] ** 2 * t(L, np.arange(12.).reshape(4, 3))).sum() + S.sum() + (Vh ** 2).sum()
        return L.autograd.grad(loss, A)

    both(program)


def test_eigh_gradients_of_a_batch_match_torch():
    x = RNG.uniform(-1, 1, (2, 4, 4))

    def program(L):
        A = t(L, x, True)
        values, vectors = L.linalg.eigh(A + A.mT)
        loss = (values * t(L, [1., -2., 3., 0.5])).sum() + (vectors ** 4).sum()
        first, = L.autograd.grad(loss, A, create_graph=True)
        return first, L.autograd.grad((first ** 2).sum(), A)[0]

    both(program)


@pytest.mark.parametrize("op", ["linalg.inv", "linalg.det", "linalg.cholesky", "linalg.matrix_exp", "linalg.pinv"])
def test_decompositions_of_a_batch_pass_gradgradcheck(op):
    function = {"linalg.inv": lambda a: ember.linalg.inv(a + 3 * ember.eye(3, dtype=a.dtype)),
                "linalg.det": lambda a: ember.linalg.det(a),
                "linalg.cholesky": lambda a: ember.linalg.cholesky(a @ a.mT + ember.eye(3, dtype=a.dtype)),
                "linalg.matrix_exp": lambda a: ember.linalg.matrix_exp(a * 4),
                "linalg.pinv": lambda a: ember.linalg.pinv(a[..., :2])}[op]
    A = t(ember, RNG.uniform(-1, 1, (2, 3, 3)), True)
    assert ember.autograd.gradcheck(function, (A,))
    assert ember.autograd.gradgradcheck(function, (A,))


# ----------------------------------------------------------------- methods, keywords, out=

METHODS = [
    ("bmm", (2, 2, 3), (2, 3, 2)), ("mv", (2, 3), (3,)), ("vdot", (3,), (3,)), ("inner", (2, 3), (3,)),
    ("outer", (3,), (2,)), ("ger", (3,), (2,)), ("kron", (2, 2), (2,)), ("cross", (2, 3), (2, 3)),
    ("matmul", (2, 3), (3,)), ("dot", (3,), (3,)), ("mm", (2, 3), (3, 2)),
]


@pytest.mark.parametrize("name, shape_a, shape_b", METHODS)
def test_product_methods_match_torch(name, shape_a, shape_b):
    a, b = RNG.uniform(-1, 1, shape_a), RNG.uniform(-1, 1, shape_b)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        both(lambda L: getattr(t(L, a), name)(t(L, b)))


@pytest.mark.parametrize("expression", [
    "spd.trace()", "spd.det()", "spd.logdet()", "spd.inverse()", "spd.cholesky()", "spd.cholesky(upper=True)",
    "tuple(spd.slogdet())", "tuple(wide.qr())", "wide.svd()[1]", "wide.pinverse()", "wide.pinverse(rcond=0.5)",
    "spd.matrix_power(3)", "spd.matrix_exp()", "spd[0].addmv(spd, spd[1], beta=0.5, alpha=2)",
    "spd.addr(spd[0], spd[1], alpha=3)", "spd[None].baddbmm(spd[None], spd[None], beta=2)",
    "spd.addbmm(spd[None], spd[None], alpha=-1)", "spd.clone().addmm_(spd, spd, beta=0.5)",
    "spd[0].clone().addmv_(spd, spd[1])", "spd[None].clone().baddbmm_(spd[None], spd[None])",
    "spd.clone().addr_(spd[0], spd[1]).addbmm_(spd[None], spd[None])",
])
def test_methods_and_in_place_forms_match_torch(expression):
    both(lambda L: eval(expression, {"spd": t(L, SPD), "wide": t(L, WIDE)}))


@pytest.mark.parametrize("expression", [
    "L.matmul(a, a, out=o)", "L.mm(a, a, out=o)", "L.bmm(a[None], a[None], out=o)", "L.linalg.inv(a, out=o)",
    "L.linalg.matrix_power(a, 2, out=o)", "L.linalg.pinv(a, out=o)", "L.linalg.solve(a, a, out=o)",
    "L.linalg.cholesky(a, out=o)", "L.linalg.multi_dot([a, a, a], out=o)", "L.linalg.cross(a, a, out=o)",
    "L.linalg.vector_norm(a, dim=1, out=o)", "L.linalg.matrix_norm(a, out=o)", "L.linalg.norm(a, out=o)",
    "L.linalg.svdvals(a, out=o)", "L.linalg.vecdot(a, a, out=o)", "L.dot(a[0], a[1], out=o)", "L.inverse(a, out=o)",
    "L.addmv(a[0], a, a[1], out=o)", "L.outer(a[0], a[1], out=o)", "L.kron(a, a, out=o)",
    "L.tensordot(a, a, 1, out=o)", "L.inner(a, a, out=o)", "L.vdot(a[0], a[1], out=o)", "L.mv(a, a[0], out=o)",
])
def test_out_receives_the_result_as_torch(expression):
    def program(L):
        o = L.zeros(0, dtype=L.float64)
        result = eval(expression, {"L": L, "a": t(L, SPD), "o": o})
        return result is o, o

    both(program)


@pytest.mark.parametrize("expression", ["L.linalg.slogdet(a, out=(s, v))",
                                        "L.linalg.qr(a, out=(s, v))", "L.qr(a, out=(s, v))"])
def test_tuple_outs_receive_the_results_as_torch(expression):
    def program(L):
        s, v = L.zeros(0, dtype=L.float64), L.zeros(0, dtype=L.float64)
        result = eval(expression, {"L": L, "a": t(L, SPD), "s": s, "v": v})
        return result[0] is s, result[1] is v, s, v

    both(program)


# ----------------------------------------------------------------- einsum

@pytest.mark.parametrize("expression", [
    "L.einsum('ij,jk', [a, a])", "L.einsum('i j , j k -> k i', a, a)", "L.einsum('Ab,bA', a, a)",
    "L.einsum('ba,Ab', a, a)", "L.einsum('ij,ij->i', a[:1], a)", "L.einsum('...ii->...i', b)",
    "L.einsum('b...,b...->...', b, b)", "L.einsum(a, [Ellipsis, 0], a, [0, Ellipsis], [Ellipsis])",
    "L.einsum(b, [0, 1, 1])", "L.einsum('iij->j', b.permute(1, 2, 0))", "L.einsum('ijk,kj,ji->', b, a, a)",
    "L.einsum('ii->', a)", "L.einsum('i,j,k->ijk', a[0], a[1], a[2])", "L.einsum('', L.tensor(2.))",
    "L.einsum('ij->', a)", "L.einsum('bij,bjk,bkl->bli', b, b, b)", "L.einsum('ij,0j->i', a, a)[0]",
    "L.einsum('ij', a)._base is not None", "L.einsum('...', a).grad_fn is None",
])
def test_einsum_forms_match_torch(expression):
    a, b = RNG.uniform(-1, 1, (3, 3)), RNG.uniform(-1, 1, (2, 3, 3))

    def program(L):
        try:
            return eval(expression, {"L": L, "a": t(L, a), "b": t(L, b)})
        except RuntimeError:
            return "refused"

    both(program)


@st.composite
def equations(draw):
    """A random einsum equation over labels a-e (sizes 1-3), two or three operands, an explicit or implicit output."""
    sizes = {label: draw(st.integers(1, 3)) for label in "abcde"}
    count = draw(st.integers(1, 3))
    terms = [draw(st.lists(st.sampled_from("abcde"), min_size=0, max_size=3)) for _ in range(count)]
    used = sorted(set(sum(terms, [])))
    output = draw(st.one_of(st.none(), st.permutations(used).flatmap(
        lambda labels: st.integers(0, len(labels)).map(lambda k: labels[:k]))))
    text = ",".join("".join(term) for term in terms) + ("" if output is None else "->" + "".join(output))
    shapes = [tuple(sizes[label] for label in term) for term in terms]
    return text, shapes


@settings(max_examples=60, deadline=None)
@given(equations(), st.integers(0, 2 ** 16))
def test_einsum_values_and_gradients_match_torch_on_random_equations(equation, seed):
    text, shapes = equation
    rng = np.random.default_rng(seed)
    arrays = [rng.uniform(-1, 1, shape) for shape in shapes]

    def program(L):
        operands = [t(L, a, True) for a in arrays]
        result = L.einsum(text, *operands)
        weights = t(L, np.cos(np.arange(result.numel())).reshape(tuple(result.shape)))
        grads = L.autograd.grad((result * weights).sum(), operands, allow_unused=True)
        return result, [L.zeros_like(o) if g is None else g for g, o in zip(grads, operands)]

    both(program)


@pytest.mark.parametrize("sizes, first", [({"i": 2, "j": 100, "k": 2, "l": 100}, (0, 1)),
                                          ({"i": 100, "j": 2, "k": 100, "l": 2}, (1, 2))])
def test_einsum_of_three_operands_contracts_the_cheap_pair_first(sizes, first):
    """ij,jk,kl with j and l large: (ij jk) first, a 2 x 2 intermediate; with i and k large, (jk kl) first."""
    from ember._ops.einsum import _pairs

    terms = [["i", "j"], ["j", "k"], ["k", "l"]]
    assert _pairs(terms, ["i", "l"], sizes) == [first, (2 if first == (0, 1) else 0, 3)]
    operands = [ember.ones(sizes[a], sizes[b]) for a, b in terms]
    np.testing.assert_allclose(ember.einsum("ij,jk,kl->il", *operands).numpy(),
                               np.einsum("ij,jk,kl->il", *[o.numpy() for o in operands]))


SINGULAR = [[[1., 2., 0.], [2., 4., 1.], [0., 3., 0.]], [[1., 2., 3.], [2., 4., 6.], [1., 1., 1.]],
            [[0., 0.], [0., 0.]]]


@pytest.mark.parametrize("matrix", SINGULAR + [[[1., 2.], [2., 4.]]])
def test_det_gradients_of_singular_matrices_to_second_order_match_torch(matrix):
    n = len(matrix)

    def program(L):
        A = t(L, matrix, True)
        first, = L.autograd.grad(L.linalg.det(A), A, create_graph=True)
        return first, L.autograd.grad((first * t(L, np.arange(n * n, dtype=float).reshape(n, n))).sum(), A)[0]

    both(program)


def _cofactors(matrix) -> np.ndarray:
    """The cofactor matrix, minor by minor: the gradient of det, for singular matrices too."""
    a = np.asarray(matrix)
    n = len(a)
    minors = [[np.linalg.det(np.delete(np.delete(a, i, 0), j, 1)) if n > 1 else 1.0 for j in range(n)]
              for i in range(n)]
    signs = (-1.0) ** np.add.outer(np.arange(n), np.arange(n))
    return signs * np.array(minors)


@pytest.mark.parametrize("matrix", SINGULAR)
def test_det_gradient_of_a_singular_matrix_matches_torch(matrix):
    """Where LAPACK's factorisation leaves a tiny pivot (det about 1e-16), ember's gradient is torch's. Where
    it finds an exact zero pivot (which depends on the CPU's kernels), det is 0 and torch's first-order gradient
    is 0 too, while ember's is the adjugate, the true gradient (see the next test)."""
    def program(L):
        A = t(L, matrix, True)
        L.linalg.det(A).backward()
        return A.grad

    A = t(ember, matrix, True)
    if ember.linalg.det(A).item() != 0:
        both(program)
    else:
        np.testing.assert_allclose(program(ember).numpy(), _cofactors(matrix), atol=1e-12)


def test_det_gradient_of_an_exactly_singular_matrix_is_its_adjugate():
    """torch's first-order gradient here is 0 (det 0 times an inverse that LAPACK completes), though its own
    second-order path gives the adjugate; ember gives the adjugate both ways."""
    A = t(ember, [[1., 2.], [2., 4.]], True)
    ember.linalg.det(A).backward()
    np.testing.assert_allclose(A.grad.numpy(), [[4., -2.], [-2., 1.]], rtol=1e-12)


# ----------------------------------------------------------------- batches (hypothesis)

BATCHED = {
    "inv": lambda L, a, b: L.linalg.inv(a),
    "det": lambda L, a, b: L.linalg.det(a),
    "slogdet": lambda L, a, b: L.linalg.slogdet(a).logabsdet,
    "solve": lambda L, a, b: L.linalg.solve(a, b),
    "solve_left": lambda L, a, b: L.linalg.solve(a, b.mT, left=False),
    "cholesky": lambda L, a, b: L.linalg.cholesky(a @ a.mT),
    "eigvalsh": lambda L, a, b: L.linalg.eigvalsh(a + a.mT),
    "svdvals": lambda L, a, b: L.linalg.svdvals(a),
    "pinv": lambda L, a, b: L.linalg.pinv(a),
    "matrix_exp": lambda L, a, b: L.linalg.matrix_exp(a),
    "qr": lambda L, a, b: L.linalg.qr(a).R,
    "lstsq": lambda L, a, b: L.linalg.lstsq(a, L.broadcast_to(b, a.shape[:-2] + b.shape[-2:])).solution,
    "solve_triangular": lambda L, a, b: L.linalg.solve_triangular(a, b, upper=True),
}


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(sorted(BATCHED)), st.lists(st.integers(1, 3), max_size=2), st.integers(1, 4),
       st.integers(1, 2), st.booleans(), st.integers(0, 2 ** 16))
def test_batched_decompositions_match_torch(name, batch, n, k, broadcast_b, seed):
    """Values and gradients over batch dims; B's batch may be missing (it broadcasts)."""
    rng = np.random.default_rng(seed)
    a = rng.uniform(-1, 1, tuple(batch) + (n, n)) + 3 * np.eye(n)  # diagonally dominant: invertible, well-conditioned
    b = rng.uniform(-1, 1, ((n, k) if broadcast_b else tuple(batch) + (n, k)))

    def program(L):
        A, B = t(L, a, True), t(L, b, True)
        result = BATCHED[name](L, A, B)
        weights = t(L, np.cos(np.arange(result.numel())).reshape(tuple(result.shape)))
        grads = L.autograd.grad((result * weights).sum(), (A, B), allow_unused=True)
        return result, [L.zeros_like(x) if g is None else g for g, x in zip(grads, (A, B))]

    both(program)


# ----------------------------------------------------------------- dispatch


class Recorder:
    """A tensor-like whose handler reports which public function it was handed."""

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return "handled", func


def _linalg_functions() -> list:
    return ember.overrides.get_overridable_functions()[ember.linalg]


@pytest.mark.parametrize("func", _linalg_functions(), ids=lambda f: f.__name__)
def test_every_function_of_ember_linalg_dispatches_as_itself(func):
    import inspect

    assert getattr(ember.linalg, func.__name__) is func
    params = inspect.signature(func).parameters.values()
    required = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty]
    assert func(*[Recorder() for _ in required]) == ("handled", func)


def test_ember_linalg_has_every_function_of_torch_linalg():
    names = {n for n in dir(torch.linalg) if not n.startswith("_") and callable(getattr(torch.linalg, n))}
    missing = {n for n in names if not hasattr(ember.linalg, n)}
    assert missing == set()


@pytest.mark.parametrize("shape", [(4, 3), (3, 3), (3, 5), (2, 4, 3), (0, 3)])
def test_geqrf_and_householder_product_match_torch(shape):
    a = RNG.uniform(-1, 1, shape)

    def program(L):
        compact = L.geqrf(t(L, a))
        rows, columns = shape[-2:]
        reflectors = compact.a if rows >= columns else compact.a[..., :rows]  # Q of a wide A: its first columns
        return named(compact), L.linalg.householder_product(reflectors, compact.tau), t(L, a).geqrf()[1]

    both(program)
    if shape[-2] >= shape[-1]:  # the reflectors' product is linalg.qr's Q
        Q = ember.linalg.householder_product(*ember.geqrf(t(ember, a)))
        np.testing.assert_allclose(Q.numpy(), np.linalg.qr(a)[0], atol=1e-12)


def test_geqrf_refuses_a_gradient_as_torch():
    def program(L):
        a, tau = L.geqrf(t(L, X, True))
        a.sum().backward()

    both_raise(program, NotImplementedError, "geqrf")
