"""Op-table rows: matrix products and ember.linalg."""
import math

from op_spec import A, C, D, Err, FLOATS, HALF, OpSpec, S, T, getattr_op, in_place, s  # noqa: F401

FLOAT_INT = FLOATS + ("int64",)
PRODUCT_DTYPES = HALF + ("int64",)  # half products are computed in single and rounded once, as torch


def wrong_dtypes(op) -> Err:
    """Two operands of different float dtypes: the products do not promote."""
    return Err(lambda m: op(m, m.ones(3, 3), m.ones(3, 3, dtype=m.float64)), RuntimeError)


PRODUCTS = (
    OpSpec("bmm", getattr_op("bmm"), (s(A(2, 3, 4), A(2, 4, 2)), s(T(2, 3, 3), A(2, 3, 1)), s(A(0, 2, 3), A(0, 3, 2)),
                                      s(A(2, 0, 3), A(2, 3, 2))),
           dtypes=PRODUCT_DTYPES,
           errors=(Err(lambda m: m.bmm(m.ones(2, 3, 4), m.ones(3, 4, 2)), RuntimeError),
                   Err(lambda m: m.bmm(m.ones(3, 4), m.ones(4, 2)), RuntimeError),
                   Err(lambda m: m.bmm(m.ones(2, 3, 4), m.ones(2, 4, 2, dtype=m.float64)), RuntimeError))),
    OpSpec("mv", getattr_op("mv"), (s(A(2, 3), A(3)), s(T(3, 4), S(4)), s(A(0, 3), A(3)), s(A(2, 0), A(0))),
           dtypes=PRODUCT_DTYPES,
           errors=(Err(lambda m: m.mv(m.ones(2, 3), m.ones(4)), RuntimeError),
                   Err(lambda m: m.mv(m.ones(2, 3), m.ones(3, 1)), RuntimeError))),
    OpSpec("vdot", getattr_op("vdot"), (s(A(3), A(3)), s(A(0), A(0)), s(S(3), A(3))), dtypes=PRODUCT_DTYPES,
           errors=(Err(lambda m: m.vdot(m.ones(3), m.ones(4)), RuntimeError),
                   Err(lambda m: m.vdot(m.ones(3, 1), m.ones(3)), RuntimeError),
                   Err(lambda m: m.vdot(m.ones(3), m.ones(3, dtype=m.float64)), RuntimeError))),
    OpSpec("inner", getattr_op("inner"),
           (s(A(3), A(3)), s(A(2, 3), A(4, 3)), s(A(2, 2, 3), A(3)), s(A(), A(2, 3)), s(T(3, 4), S(2, 4)),
            s(A(0, 3), A(3))),
           dtypes=PRODUCT_DTYPES, grad_fn={3: "MulBackward0"},
           note="a 0-d operand: torch records the product's view, ember the product",
           errors=(Err(lambda m: m.inner(m.ones(2, 3), m.ones(2)), RuntimeError),
                   Err(lambda m: m.inner(m.ones(3), m.ones(3, dtype=m.float64)), RuntimeError))),
    OpSpec("outer", getattr_op("outer"), (s(A(3), A(4)), s(A(0), A(2)), s(S(3), A(1))), dtypes=PRODUCT_DTYPES,
           errors=(Err(lambda m: m.outer(m.ones(3, 1), m.ones(3)), RuntimeError),)),
    OpSpec("ger", getattr_op("ger"), (s(A(3), A(4)), s(S(2), A(3))),
           errors=(Err(lambda m: m.ger(m.ones(3, 1), m.ones(3)), RuntimeError),)),
    OpSpec("addmv", getattr_op("addmv"),
           (s(A(2), A(2, 3), A(3)), s(A(), T(3, 2), S(2)), s(A(1), A(2, 3), A(3), beta=0.5, alpha=2.0),
            s(A(0), A(0, 3), A(3)), s(A(2), A(2, 0), A(0)), s(A(2), A(2, 3), A(3), beta=0)),
           dtypes=HALF, inplace=in_place("addmv_"),
           errors=(Err(lambda m: m.addmv(m.ones(3), m.ones(2, 3), m.ones(3)), RuntimeError),
                   Err(lambda m: m.addmv(m.ones(2), m.ones(2, 3), m.ones(4)), RuntimeError),
                   Err(lambda m: m.addmv(m.ones(2), m.ones(2, 3), m.ones(3, dtype=m.float64)), RuntimeError))),
    OpSpec("addr", getattr_op("addr"),
           (s(A(2, 3), A(2), A(3)), s(A(3), S(2), A(3)), s(A(), A(2), A(3), beta=2.0, alpha=-1.5),
            s(A(0, 3), A(0), A(3))),
           dtypes=HALF, inplace=in_place("addr_"),
           errors=(Err(lambda m: m.addr(m.ones(3, 2), m.ones(2), m.ones(3)), RuntimeError),
                   Err(lambda m: m.addr(m.ones(2, 3), m.ones(2, 1), m.ones(3)), RuntimeError))),
    OpSpec("baddbmm", getattr_op("baddbmm"),
           (s(A(2, 3, 2), A(2, 3, 4), A(2, 4, 2)), s(A(2), T(2, 3, 3), A(2, 3, 2)),
            s(A(1, 3, 1), A(2, 3, 4), A(2, 4, 1), beta=0.5, alpha=2.0), s(A(0, 2, 2), A(0, 2, 3), A(0, 3, 2)),
            s(A(2, 3, 2), A(2, 3, 0), A(2, 0, 2))),
           dtypes=HALF, inplace=in_place("baddbmm_"),
           errors=(Err(lambda m: m.baddbmm(m.ones(2, 3, 2), m.ones(2, 3, 4), m.ones(3, 4, 2)), RuntimeError),
                   Err(lambda m: m.baddbmm(m.ones(5), m.ones(2, 3, 4), m.ones(2, 4, 2)), RuntimeError))),
    OpSpec("addbmm", getattr_op("addbmm"),
           (s(A(3, 2), A(2, 3, 4), A(2, 4, 2)), s(A(2), T(2, 3, 3), A(2, 3, 2)),
            s(A(), A(4, 3, 2), A(4, 2, 2), beta=-1.0, alpha=0.5), s(A(2, 2), A(0, 2, 3), A(0, 3, 2))), dtypes=HALF,
           errors=(Err(lambda m: m.addbmm(m.ones(3, 2), m.ones(2, 3, 4), m.ones(2, 3, 2)), RuntimeError),
                   Err(lambda m: m.addbmm(m.ones(3, 2), m.ones(2, 3, 4), m.ones(3, 4, 2)), RuntimeError))),
    OpSpec("addbmm_inplace", getattr_op("addbmm"),
           (s(A(3, 2), A(2, 3, 4), A(2, 4, 2)), s(T(3, 3), A(2, 3, 2), S(2, 2, 3), beta=0.5, alpha=2.0)),
           dtypes=HALF, inplace=in_place("addbmm_")),
    OpSpec("addmm_inplace", getattr_op("addmm"),
           (s(A(2, 4), A(2, 3), A(3, 4)), s(A(2, 4), T(2, 3), S(3, 4), beta=0.5, alpha=2.0)),
           dtypes=HALF, inplace=in_place("addmm_")),
    OpSpec("tensordot", getattr_op("tensordot"),
           (s(A(2, 3, 4), A(3, 4, 2)), s(A(2, 3), A(3, 2), 1), s(A(3, 2), A(3, 4), ([0], [0])), s(A(2), A(3), 0),
            s(T(3, 4), S(4, 3), ([0, 1], [1, 0])), s(A(0, 3), A(3, 2), 1)),
           dtypes=PRODUCT_DTYPES,
           errors=(Err(lambda m: m.tensordot(m.ones(2, 3), m.ones(2, 3), 1), RuntimeError),
                   Err(lambda m: m.tensordot(m.ones(2, 3), m.ones(3, 3, dtype=m.float64), 1), RuntimeError),
                   Err(lambda m: m.tensordot(m.ones(2, 3), m.ones(3, 2), ([0], [5])), IndexError))),
    OpSpec("kron", getattr_op("kron"), (s(A(2, 3), A(2, 2)), s(A(2), A(2, 3)), s(A(), A(2)), s(A(0, 2), A(2, 2))),
           dtypes=PRODUCT_DTYPES, grad_fn={2: "UnsafeViewBackward0"},
           note="0-d: torch multiplies, ember reshapes; torch's kron of a transposed input fails (a view of a copy), "
                "so no non-contiguous sample"),
    OpSpec("cross", lambda m, a, b, dim=None: m.cross(a, b, dim=dim),
           (s(A(3), A(3), dim=0), s(A(4, 3), A(4, 3), dim=1), s(A(3, 2), A(3, 1), dim=0), s(T(3, 4), S(3, 4), dim=-2),
            s(A(0, 3), A(0, 3), dim=1), s(A(2, 3), A(2, 3))),
           dtypes=PRODUCT_DTYPES,
           errors=(Err(lambda m: m.cross(m.ones(2, 3), m.ones(2, 3), dim=0), RuntimeError),
                   Err(lambda m: m.cross(m.ones(2, 3), m.ones(2, 3), dim=2), IndexError),
                   Err(lambda m: m.cross(m.ones(3), m.ones(3, dtype=m.float64), dim=0), RuntimeError))),
    OpSpec("linalg_cross", lambda m, a, b, **kw: m.linalg.cross(a, b, **kw),
           (s(A(4, 3), A(4, 3)), s(A(3, 2), A(3, 2), dim=0), s(A(1, 3), A(2, 3)), s(A(3), A(3))),
           errors=(Err(lambda m: m.linalg.cross(m.ones(2, 2), m.ones(2, 2)), RuntimeError, "cross"),)),
    OpSpec("trace", getattr_op("trace"), (s(A(3, 3)), s(A(2, 4)), s(T(3, 2)), s(A(0, 2))),
           dtypes=FLOATS + ("int64", "int32"),
           errors=(Err(lambda m: m.trace(m.ones(2, 2, 2)), RuntimeError),
                   Err(lambda m: m.trace(m.ones(2, 2, dtype=m.bool)), NotImplementedError))),
    OpSpec("cdist", getattr_op("cdist"),
           (s(A(3, 2), A(4, 2)), s(A(3, 2), A(4, 2), 1.0), s(A(3, 2), A(4, 2), math.inf), s(A(3, 2), A(4, 2), 3.0),
            s(A(2, 3, 2), A(4, 2), 0.5), s(T(3, 3), S(2, 3)), s(A(0, 2), A(3, 2)), s(A(3, 2), A(4, 2), 0.0)),
           domain=(-3.0, 3.0), differentiable=False,
           note="torch has no second derivative: the gradients are compared in test_linalg_ops.py",
           errors=(Err(lambda m: m.cdist(m.ones(3, 2), m.ones(3, 3)), RuntimeError),
                   Err(lambda m: m.cdist(m.ones(3), m.ones(3)), RuntimeError),
                   Err(lambda m: m.cdist(m.ones(3, 2, dtype=m.int64), m.ones(3, 2, dtype=m.int64)), RuntimeError))),
    OpSpec("cdist_mm", lambda m, a, b, mode="use_mm_for_euclid_dist": m.cdist(a, b, compute_mode=mode),
           (s(A(3, 2), A(4, 2)), s(T(3, 3), S(2, 3)), s(A(2, 3, 2), A(4, 2)), s(A(1, 2, 2), A(3, 1, 4, 2)),
            s(A(30, 2), A(2, 2), mode="use_mm_for_euclid_dist_if_necessary")),
           domain=(-3.0, 3.0),
           note="the matrix-product form of p = 2: torch differentiates it twice (its other forms only once); "
                "in half ember rounds once where torch rounds the squares too (test_linalg_ops.py compares them)",
           errors=(Err(lambda m: m.cdist(m.ones(3, 2), m.ones(3, 2), compute_mode="mm"), ValueError, "compute_mode"),
                   Err(lambda m: m.cdist(m.ones(30, 2), m.ones(3, 3)), RuntimeError))),
    OpSpec("chain_matmul", getattr_op("chain_matmul"),
           (s(A(2, 3), A(3, 4), A(4, 1)), s(A(3, 2), T(2, 2)), s(A(1, 4), A(4, 5), A(5, 2), A(2, 6))),
           grad_fn={0: "ViewBackward0"}, domain=(-1.0, 1.0),
           note="entries within 1, so that a product of four stays small: with entries up to 2 an element of sample "
                "2 cancels from terms near 30, where float32 rounding differs by BLAS kernel (torch's was 1.8e-6 "
                "from the exact value, ember's 1.8e-7, and the table's tolerance is 1e-6)"),
    OpSpec("multi_dot", lambda m, *ts: m.linalg.multi_dot(ts),
           (s(A(2, 3), A(3, 4), A(4, 1)), s(A(3), A(3, 2), A(2)), s(A(3), A(3)), s(T(3, 2), A(2, 4), A(4)),
            s(A(0, 2), A(2, 3)))),
    OpSpec("einsum_mm", lambda m, a, b: m.einsum("ij,jk->ik", a, b),
           (s(A(2, 3), A(3, 4)), s(T(3, 3), S(3, 2)), s(A(0, 3), A(3, 2))), dtypes=PRODUCT_DTYPES),
    OpSpec("einsum_batch", lambda m, a, b: m.einsum("bij,bjk->bik", a, b), (s(A(2, 2, 3), A(2, 3, 4)),)),
    OpSpec("einsum_trace", lambda m, x: m.einsum("ii", x), (s(A(3, 3)), s(T(2, 2)))),
    OpSpec("einsum_diagonal", lambda m, x: m.einsum("ii->i", x), (s(A(3, 3)),), grad_fn={0: "DiagonalBackward0"}),
    OpSpec("einsum_transpose", lambda m, x: m.einsum("ij->ji", x), (s(A(2, 3)),)),
    OpSpec("einsum_outer", lambda m, a, b: m.einsum("i,j->ij", a, b), (s(A(3), A(2)),)),
    OpSpec("einsum_three", lambda m, a, b, c: m.einsum("ij,jk,kl->il", a, b, c),
           (s(A(2, 3), A(3, 4), A(4, 5)), s(A(5, 2), A(2, 3), A(3, 2)))),
    OpSpec("einsum_ellipsis", lambda m, a, b: m.einsum("...ij,...jk", a, b), (s(A(2, 2, 3), A(3, 2)),)),
    OpSpec("einsum_sum", lambda m, a, b: m.einsum("ij,kj->k", a, b), (s(A(2, 3), A(4, 3)), s(A(2, 3), A(1, 3)))),
    OpSpec("einsum_sublist", lambda m, a, b: m.einsum(a, [0, 1], b, [1, 2], [2, 0]), (s(A(2, 3), A(3, 4)),),
           errors=(Err(lambda m: m.einsum("ij,jk->ik", m.ones(2, 3), m.ones(4, 2)), RuntimeError),
                   Err(lambda m: m.einsum("ij,jk->ik", m.ones(2, 3)), RuntimeError),
                   Err(lambda m: m.einsum("ij->ik", m.ones(2, 3)), RuntimeError),
                   Err(lambda m: m.einsum("ijk", m.ones(2, 3)), RuntimeError),
                   Err(lambda m: m.einsum("i,i", m.ones(2), m.ones(2, dtype=m.float64)), RuntimeError))),
)




# ----------------------------------------------------------------- ember.linalg and its top-level names
# Random matrices are made well-conditioned where the op needs it: x + 3I for entries in (-1, 1) is diagonally
# dominant; x x^T + I is positive-definite; x + x^T is symmetric (eigh reads one triangle, so its gradient is
# only comparable through a symmetric input). Eigen- and singular vectors enter gauge-invariant losses (V * V).

def _shifted(m, x):
    return x + 3 * m.eye(x.shape[-1], dtype=x.dtype)


def _positive(m, x):
    return x @ x.mT + m.eye(x.shape[-1], dtype=x.dtype)


def _factor(m, x, upper: bool):
    """A Cholesky factor (lower, or upper if ``upper``) of a positive-definite matrix made from ``x``."""
    return m.linalg.cholesky(_positive(m, x), upper=upper)


def square_errors(op) -> tuple:
    """Not square, integers, fewer than 2 dims: RuntimeErrors, as torch."""
    return (Err(lambda m: op(m, m.ones(2, 3)), RuntimeError, "linalg"),
            Err(lambda m: op(m, m.ones(2, 2, dtype=m.int64)), RuntimeError, "linalg"),
            Err(lambda m: op(m, m.ones(3)), RuntimeError, "linalg"))


def singular(op) -> Err:
    return Err(lambda m: op(m, m.tensor([[1.0, 2.0], [2.0, 4.0]])), RuntimeError, "singular")


SQUARE = (s(A(3, 3)), s(A(2, 3, 3)), s(T(3, 3)), s(A(0, 0)), s(A(2, 0, 0)), s(A(1, 1)))
UNIT = (-1.0, 1.0)
_inv = lambda m, x: m.linalg.inv(x)  # noqa: E731
_det = lambda m, x: m.linalg.det(x)  # noqa: E731
_chol = lambda m, x: m.linalg.cholesky(x)  # noqa: E731

DECOMPOSITIONS = (
    OpSpec("linalg_inv", lambda m, x: m.linalg.inv(_shifted(m, x)), SQUARE, domain=UNIT,
           errors=square_errors(_inv) + (singular(_inv),)),
    OpSpec("linalg_inv_direct", _inv, (s(T(3, 3)), s(S(2, 2))), domain=(1.0, 2.0)),
    OpSpec("linalg_inv_ex", lambda m, x: m.linalg.inv_ex(_shifted(m, x)).inverse, SQUARE[:3], domain=UNIT),
    OpSpec("inverse", lambda m, x: _shifted(m, x).inverse(), SQUARE[:4], domain=UNIT,
           errors=(Err(lambda m: m.inverse(m.ones(2, 3)), RuntimeError, "linalg.inv"),)),
    OpSpec("linalg_det", lambda m, x: m.linalg.det(_shifted(m, x)), SQUARE, domain=UNIT,
           errors=square_errors(_det)),
    OpSpec("linalg_det_direct", _det, (s(T(3, 3)), s(S(2, 2)), s(A(2, 4, 4))), domain=(-2.0, 2.0)),
    OpSpec("det", lambda m, x: m.det(_shifted(m, x)), SQUARE[:3], domain=UNIT),
    OpSpec("linalg_slogdet", lambda m, x: m.linalg.slogdet(x).logabsdet,
           (s(A(3, 3)), s(A(2, 3, 3)), s(T(3, 3)), s(A(0, 0))), domain=(-2.0, 2.0),
           errors=square_errors(lambda m, x: m.linalg.slogdet(x))),
    OpSpec("slogdet", lambda m, x: m.slogdet(x)[1], (s(A(3, 3)),)),
    OpSpec("logdet", lambda m, x: m.logdet(_positive(m, x)), (s(A(3, 3)), s(A(2, 2, 2))),
           grad_fn={}),
    OpSpec("linalg_solve", lambda m, a, b, **kw: m.linalg.solve(_shifted(m, a), b, **kw),
           (s(A(3, 3), A(3, 2)), s(A(3, 3), A(3)), s(A(2, 3, 3), A(3, 1)), s(A(2, 3, 3), A(2, 3)),
            s(T(3, 3), S(3, 2)), s(A(3, 3), A(2, 3), left=False), s(A(0, 0), A(0, 2)), s(A(3, 3), A(3, 0))),
           domain=UNIT,
           errors=(Err(lambda m: m.linalg.solve(m.eye(2), m.ones(3, 2)), RuntimeError, "linalg"),
                   Err(lambda m: m.linalg.solve(m.eye(2), m.ones(2, dtype=m.float64)), RuntimeError, "linalg"),
                   singular(lambda m, x: m.linalg.solve(x, m.ones(2))))),
    OpSpec("linalg_solve_ex", lambda m, a, b: m.linalg.solve_ex(_shifted(m, a), b).result, (s(A(3, 3), A(3, 2)),),
           domain=UNIT),
    OpSpec("linalg_cholesky", lambda m, x, **kw: m.linalg.cholesky(_positive(m, x), **kw),
           (s(A(3, 3)), s(A(2, 3, 3)), s(A(3, 3), upper=True), s(A(0, 0)), s(A(1, 1))),
           errors=square_errors(_chol) + (Err(lambda m: m.linalg.cholesky(-m.eye(2)), RuntimeError,
                                              "positive-definite"),)),
    OpSpec("linalg_cholesky_ex", lambda m, x: m.linalg.cholesky_ex(_positive(m, x)).L, (s(A(3, 3)),)),
    OpSpec("cholesky", lambda m, x, *args: m.cholesky(_positive(m, x), *args), (s(A(3, 3)), s(A(2, 2), True))),
    OpSpec("linalg_qr_Q", lambda m, x, *args: m.linalg.qr(x, *args).Q,
           (s(A(4, 3)), s(A(3, 4)), s(A(3, 3)), s(A(2, 4, 3)), s(T(4, 3)), s(A(3, 4), "complete"))),
    OpSpec("linalg_qr_R", lambda m, x, *args: m.linalg.qr(x, *args).R,
           (s(A(4, 3)), s(A(3, 4)), s(A(2, 3, 4)), s(S(4, 3)), s(A(3, 4), "complete"), s(A(0, 3)), s(A(3, 0))),
           errors=(Err(lambda m: m.linalg.qr(m.ones(2, 2), "x"), RuntimeError, "mode"),
                   Err(lambda m: m.linalg.qr(m.ones(2, 2, dtype=m.int64)), RuntimeError, "linalg"))),
    OpSpec("linalg_qr_r", lambda m, x, *args: m.linalg.qr(x, "r").R, (s(A(4, 3)), s(A(3, 4))), differentiable=False,
           note="torch refuses the gradient of mode 'r' (no Q): so does ember (test_linalg_ops.py)"),
    OpSpec("qr", lambda m, x, *args: m.qr(x, *args)[0] * 2 + m.qr(x, *args)[1].sum(), (s(A(4, 3)), s(A(3, 4), False)),
           grad_fn={0: "AddBackward0", 1: "AddBackward0"}),
    OpSpec("linalg_svd_S", lambda m, x, *args: m.linalg.svd(x, *args).S,
           (s(A(4, 3)), s(A(3, 4), False), s(A(2, 3, 3)), s(T(3, 4)))),
    OpSpec("linalg_svd_vectors",
           lambda m, x, *args: (lambda r: r.U[..., :, :2] * r.U[..., :, :2])(m.linalg.svd(x, *args)),
           (s(A(4, 3)), s(A(3, 4), False), s(A(2, 3, 3)))),
    OpSpec("linalg_svd_Vh", lambda m, x, *args: (lambda r: r.Vh[..., :2, :] * r.Vh[..., :2, :])(m.linalg.svd(x, *args)),
           (s(A(4, 3), False), s(A(3, 4)))),
    OpSpec("svd", lambda m, x, *args: (lambda r: r.V[..., :3] * r.V[..., :3])(m.svd(x, *args)),
           (s(A(4, 3)), s(A(3, 4), False))),
    OpSpec("linalg_eigh_values", lambda m, x, *args: m.linalg.eigh(x + x.mT, *args).eigenvalues,
           (s(A(3, 3)), s(A(2, 4, 4), "U"), s(A(0, 0))),
           errors=square_errors(lambda m, x: m.linalg.eigh(x)) + (
               Err(lambda m: m.linalg.eigh(m.eye(2), "X"), RuntimeError, "UPLO"),)),
    OpSpec("linalg_eigh_vectors", lambda m, x, *args: (lambda V: V * V)(m.linalg.eigh(x + x.mT, *args).eigenvectors),
           (s(A(3, 3)), s(A(2, 4, 4), "U"))),
    OpSpec("linalg_eigvalsh", lambda m, x, *args: m.linalg.eigvalsh(x + x.mT, *args), (s(A(3, 3)), s(A(3, 3), "U"))),
    OpSpec("linalg_pinv", lambda m, x, **kw: m.linalg.pinv(x, **kw),
           (s(A(4, 3)), s(A(3, 4)), s(A(2, 3, 3)), s(T(3, 4)), s(A(4, 3), rtol=0.1), s(A(4, 3), atol=0.5)),
           errors=(Err(lambda m: m.linalg.pinv(m.ones(2, 2, dtype=m.int64)), RuntimeError, "linalg"),)),
    OpSpec("linalg_pinv_hermitian", lambda m, x: m.linalg.pinv(_positive(m, x), hermitian=True), (s(A(3, 3)),)),
    OpSpec("pinverse", lambda m, x, *args: m.pinverse(x, *args), (s(A(4, 3)), s(A(3, 4), 1e-3))),
    OpSpec("linalg_lstsq", lambda m, a, b: m.linalg.lstsq(a, b).solution,
           (s(A(4, 3), A(4, 2)), s(A(4, 3), A(4)), s(A(2, 4, 3), A(2, 4, 1)), s(T(3, 3), A(3, 2))),
           errors=(Err(lambda m: m.linalg.lstsq(m.ones(3, 2), m.ones(4, 1)), RuntimeError, "linalg"),)),
    OpSpec("linalg_matrix_power", lambda m, x, n: m.linalg.matrix_power(x, n),
           (s(A(3, 3), 2), s(A(3, 3), 3), s(A(2, 3, 3), 5), s(A(3, 3), 1), s(T(2, 2), 4)),
           dtypes=FLOAT_INT, errors=(Err(lambda m: m.linalg.matrix_power(m.ones(2, 3), 2), RuntimeError, "linalg"),)),
    OpSpec("linalg_matrix_power_negative", lambda m, x, n: m.linalg.matrix_power(_shifted(m, x), n),
           (s(A(3, 3), -1), s(A(3, 3), -2)), domain=UNIT),
    OpSpec("matrix_power", lambda m, x, n: x.matrix_power(n), (s(A(3, 3), 2), s(A(3, 3), 3))),
    OpSpec("linalg_matrix_exp", lambda m, x: m.linalg.matrix_exp(x),
           (s(A(3, 3)), s(A(2, 3, 3)), s(T(2, 2)), s(A(1, 1)), s(A(0, 0))), dtypes=FLOATS,
           errors=square_errors(lambda m, x: m.linalg.matrix_exp(x))),
    OpSpec("matrix_exp", lambda m, x: x.matrix_exp(), (s(A(3, 3)),), domain=(-5.0, 5.0)),
    OpSpec("linalg_diagonal", lambda m, x, **kw: m.linalg.diagonal(x, **kw),
           (s(A(3, 3)), s(A(2, 3, 4), offset=1), s(A(3, 4), offset=-2), s(A(2, 3, 4), dim1=0, dim2=2), s(T(3, 3)),
            s(A(0, 3)), s(A(3, 3), offset=5)),
           dtypes=FLOAT_INT,
           errors=(Err(lambda m: m.linalg.diagonal(m.ones(2, 2), dim1=0, dim2=0), RuntimeError, "diagonal"),
                   Err(lambda m: m.linalg.diagonal(m.ones(2, 2), dim1=3), IndexError, "diagonal"))),
    OpSpec("linalg_vecdot", lambda m, a, b, **kw: m.linalg.vecdot(a, b, **kw),
           (s(A(3, 4), A(3, 4)), s(A(3, 4), A(4)), s(A(3, 4), A(3, 4), dim=0)),
           errors=(Err(lambda m: m.linalg.vecdot(m.ones(3), m.ones(3, dtype=m.float64)), RuntimeError, "vecdot"),)),
    OpSpec("linalg_matrix_rank", lambda m, x, **kw: m.linalg.matrix_rank(x[..., :, :2] @ x[..., :2, :], **kw),
           (s(A(3, 4)), s(A(2, 3, 4)), s(A(3, 4), hermitian=False, atol=0.5)), differentiable=False),
)

_tri = lambda m, a, b, **kw: m.linalg.solve_triangular(a, b, **kw)  # noqa: E731

SOLVERS = (
    OpSpec("linalg_solve_triangular", lambda m, a, b, **kw: m.linalg.solve_triangular(_shifted(m, a), b, **kw),
           (s(A(3, 3), A(3, 2), upper=True), s(A(3, 3), A(3, 2), upper=False), s(A(2, 3, 3), A(3, 1), upper=True),
            s(T(3, 3), S(3, 2), upper=False, unitriangular=True), s(A(3, 3), A(2, 3), upper=True, left=False),
            s(A(3, 3), A(4, 3), upper=False, left=False, unitriangular=True), s(A(0, 0), A(0, 2), upper=True)),
           domain=UNIT,
           errors=(Err(lambda m: _tri(m, m.eye(2), m.ones(2), upper=True), RuntimeError, "linalg"),
                   Err(lambda m: _tri(m, m.eye(2), m.ones(3, 2), upper=True), RuntimeError, "linalg"),
                   Err(lambda m: _tri(m, m.eye(2, dtype=m.int64), m.ones(2, 2, dtype=m.int64), upper=True),
                       RuntimeError, "linalg"))),
    OpSpec("cholesky_solve", lambda m, b, x, upper=False: m.cholesky_solve(b, _factor(m, x, upper), upper),
           (s(A(3, 2), A(3, 3)), s(A(2, 3, 1), A(3, 3), True), s(A(3, 2), A(2, 3, 3)), s(A(3, 2), A(3, 3), True))),
    OpSpec("cholesky_inverse", lambda m, x, upper=False: m.cholesky_inverse(_factor(m, x, upper), upper),
           (s(A(3, 3)), s(A(2, 3, 3), True))),
    OpSpec("linalg_cond", lambda m, x, *args: m.linalg.cond(_shifted(m, x), *args),
           (s(A(3, 3)), s(A(2, 3, 3), -2), s(A(3, 3), 2)), domain=UNIT,
           grad_fn={0: "DivBackward0", 1: "DivBackward0", 2: "DivBackward0"}, view_differs=(0, 1, 2),
           note="a composite: the ratio of the extreme singular values (torch's is a squeezed view)"),
    OpSpec("linalg_cond_norms", lambda m, x, p: m.linalg.cond(_shifted(m, x), p),
           (s(A(3, 3), "fro"), s(A(3, 3), "nuc"), s(A(3, 3), 1), s(A(3, 3), -math.inf)), domain=UNIT,
           differentiable=False, note="torch's gradient of these fails (an in-place change of its inverse)",
           errors=(Err(lambda m: m.linalg.cond(m.ones(2, 3), "fro"), RuntimeError, "linalg"),)),
    OpSpec("linalg_vander", lambda m, x, **kw: m.linalg.vander(x, **kw),
           (s(A(3)), s(A(2, 3), N=4), s(S(3)), s(A(4), N=2)), dtypes=FLOAT_INT,
           errors=(Err(lambda m: m.linalg.vander(m.ones(3), N=1), RuntimeError, "N must be greater than 1"),
                   Err(lambda m: m.linalg.vander(m.ones(0)), RuntimeError, "N must be greater than 1"))),
    OpSpec("linalg_tensorinv", lambda m, x, shape, ind: m.linalg.tensorinv(_shifted(m, x).reshape(shape), ind),
           (s(A(4, 4), (2, 2, 4), 2), s(A(4, 4), (4, 2, 2), 1)), domain=UNIT,
           grad_fn={0: "ViewBackward0", 1: "ViewBackward0"},
           note="torch's inverse is laid out column-major, so its reshape is an alias; ember's is a view",
           errors=(Err(lambda m: m.linalg.tensorinv(m.ones(2, 3), 1), RuntimeError, "linalg"),)),
    OpSpec("linalg_tensorsolve", lambda m, a, b, *args: m.linalg.tensorsolve(_shifted(m, a).reshape(2, 3, 6), b, *args),
           (s(A(6, 6), A(2, 3)),), domain=UNIT,
           errors=(Err(lambda m: m.linalg.tensorsolve(m.ones(2, 3, 4), m.ones(2, 3)), RuntimeError, "linalg"),)),
)

LU_SAMPLES = (s(A(3, 3)), s(A(2, 4, 4)), s(A(4, 2)), s(A(2, 4)), s(T(3, 3)), s(A(0, 0)), s(A(2, 0, 3)))
_unpacked_names = {i: "WhereBackward0" for i in range(len(LU_SAMPLES))}

LU = (
    OpSpec("linalg_lu_factor", lambda m, x: m.linalg.lu_factor(x).LU, LU_SAMPLES,
           errors=square_errors(lambda m, x: m.linalg.lu_factor(x))[1:] + (
               Err(lambda m: m.linalg.lu_factor(m.zeros(2, 2)), RuntimeError, "zero"),
               Err(lambda m: m.linalg.lu_factor(m.eye(2), pivot=False), RuntimeError, "pivot"))),
    OpSpec("linalg_lu_factor_ex", lambda m, x: m.linalg.lu_factor_ex(x).LU, LU_SAMPLES[:4]),
    OpSpec("linalg_lu_L", lambda m, x: m.linalg.lu(x).L, LU_SAMPLES, grad_fn=_unpacked_names,
           note="a composite of lu_factor and lu_unpack: its nodes are those of the unpacking"),
    OpSpec("linalg_lu_U", lambda m, x: m.linalg.lu(x).U, LU_SAMPLES,
           grad_fn={i: "WhereBackward0" for i in range(len(LU_SAMPLES))}),
    OpSpec("lu_unpack", lambda m, x: m.lu_unpack(*m.linalg.lu_factor(x)).L, LU_SAMPLES[:4], grad_fn=_unpacked_names),
    OpSpec("linalg_lu_solve", lambda m, a, b, **kw: m.linalg.lu_solve(*m.linalg.lu_factor(_shifted(m, a)), b, **kw),
           (s(A(3, 3), A(3, 2)), s(A(2, 3, 3), A(3, 1)), s(A(3, 3), A(3, 2), adjoint=True),
            s(A(3, 3), A(2, 3), left=False), s(T(3, 3), S(3, 2))),
           domain=UNIT,
           errors=(Err(lambda m: m.linalg.lu_solve(*m.linalg.lu_factor(m.eye(2)), m.ones(2)), RuntimeError, "linalg"),)),
)

OLD_NAMES = (
    OpSpec("triangular_solve", lambda m, b, a, *args: m.triangular_solve(b, _shifted(m, a), *args).solution,
           (s(A(3, 2), A(3, 3)), s(A(3, 2), A(3, 3), False, True), s(A(2, 3, 1), T(3, 3), True, False, True)),
           domain=UNIT, grad_fn={i: "LinalgSolveTriangularBackward0" for i in range(3)},
           note="linalg.solve_triangular's node (torch's older function has one of its own)"),
    OpSpec("lu_solve", lambda m, b, a: m.lu_solve(b, *m.lu(_shifted(m, a))), (s(A(3, 2), A(3, 3)),), domain=UNIT),
)

REFLECTORS = (
    OpSpec("linalg_householder_product", lambda m, a, tau: m.linalg.householder_product(a, tau),
           (s(A(4, 3), A(2)), s(A(3, 3), A(3)), s(A(2, 4, 2), A(2, 2)), s(T(3, 2), S(1)), s(A(3, 0), A(0))),
           errors=(Err(lambda m: m.linalg.householder_product(m.ones(3, 4), m.ones(2)), RuntimeError, "linalg"),
                   Err(lambda m: m.linalg.householder_product(m.ones(4, 3), m.ones(4)), RuntimeError, "linalg"),
                   Err(lambda m: m.linalg.householder_product(m.ones(4, 3), m.ones(2, 2)), RuntimeError,
                       "householder_product"),
                   Err(lambda m: m.linalg.householder_product(m.ones(4, 3), m.ones(2, dtype=m.float64)),
                       RuntimeError, "linalg"))),
    OpSpec("orgqr", lambda m, a, tau: a.orgqr(tau), (s(A(4, 3), A(2)),)),
)

OPS = PRODUCTS + DECOMPOSITIONS + SOLVERS + LU + OLD_NAMES + REFLECTORS
