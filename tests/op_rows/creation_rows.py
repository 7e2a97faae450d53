"""Op-table rows: creation_rows, and the everyday composites of ``_ops/misc.py`` and ``_ops/windows.py``.

The composites are written in other ember ops, so their ``grad_fn`` is the last op's node, not torch's
fused one, unless the op names it as torch's: each row of the first kind records ember's node name (``_node``).
"""
import numpy as np
from op_spec import (  # noqa: F401
    A, C, D, Err, FLOATS, INTS, OpSpec, S, T, UNARY, creation, getattr_op, in_place, not_a_tensor, s,
)

INF = float("inf")


def _node(name: str, samples: tuple, others: dict) -> dict:
    """ember's grad_fn name for every sample (``others`` overrides some by index)."""
    names = {i: name for i in range(len(samples))}
    names.update(others)
    return names


def _composite(name: str, samples: tuple, node: str | None, errors: tuple = (), **options) -> OpSpec:
    """A row for a composite; ``node`` is its last op's node name, or None where it is named as torch's op."""
    if node is None:
        return OpSpec(name, getattr_op(name), samples, errors=(not_a_tensor(getattr_op(name)),) + errors, **options)
    note = options.pop("note", "a composite of ember ops: its grad_fn is the last op's node")
    return OpSpec(name, getattr_op(name), samples, grad_fn=_node(node, samples, options.pop("nodes", {})),
                  errors=(not_a_tensor(getattr_op(name)),) + errors, note=note, **options)


def _err(call, error: type = RuntimeError, mentions: str | None = None) -> Err:
    return Err(call, error, mentions)


DIFF = (s(A(3, 4)), s(A(3, 4), 2, 0), s(A(4), 1, 0, A(1), A(2)), s(A(0, 3), 1, 1), s(T(3, 4), 1, -1),
        s(S(3, 4), 3), s(A(3), 5))
COV = (s(A(3, 5)), s(A(5)), s(A(2, 4), correction=0), s(T(3, 4)), s(S(3, 4)),
       s(A(2, 4), fweights=C(np.array([1, 2, 0, 3]))), s(A(2, 4), correction=2, fweights=C(np.array([1, 2, 1, 3]))))
CORRCOEF = (s(A(3, 5)), s(A(5)), s(T(3, 4)), s(S(3, 4)))
TRAPEZOID = (s(A(3, 4)), s(A(3, 4), A(4)), s(A(3, 4), dx=0.5, dim=0), s(A(3, 4), A(3, 4)), s(T(3, 4)),
             s(S(3, 4), dim=0), s(A(5)))
TRAPEZOID_EMPTY = (s(A(0, 3)), s(A(3, 0)))
DIST = (s(A(3, 4), A(3, 4)), s(A(3, 4), A(4), 1), s(A(), A()), s(A(2, 3), A(2, 3), INF), s(A(2, 3), A(2, 3), 3),
        s(T(3, 4), S(3, 4)))
RENORM = (s(A(3, 4), 2, 0, 1.0), s(A(3, 4), 1, 1, 0.5), s(T(3, 4), 3, -1, 1.0), s(S(3, 4), 2, 0, 100.0),
          s(A(2, 3, 4), 2, 1, 1.0), s(A(0, 3), 2, 1, 1.0))
PDIST = (s(A(4, 3)), s(A(4, 3), 1), s(A(3, 2), 3.0), s(T(3, 4)), s(S(3, 4), INF), s(A(1, 3)))
WINDOW = (s(5), s(5, False), s(0), s(1), s(6, dtype=D("float64")), s(7, True, dtype=D("float64")))


def _window_errors(name: str) -> tuple:
    return (_err(lambda m: getattr(m, name)(-1)), _err(lambda m: getattr(m, name)(3, dtype=m.int64)))


def _pdist(m, x, p=2.0):
    if m.__name__ == "torch":  # the distances of the pairs i < j, in torch ops that it can differentiate twice
        first, second = m.triu_indices(x.size(0), x.size(0), 1)
        return m.linalg.vector_norm(x[first] - x[second], p, 1)
    return m.pdist(x, p)


def _hist(field: str):
    return lambda m, *args, **kwargs: getattr(m.histogram(*args, **kwargs), field)


HISTOGRAM = (s(A(10), 4), s(A(3, 4), 5, range=(-1.0, 1.0)),
             s(A(10), 3, density=True), s(A(0), 3), s(T(3, 4), 2))

OPS = (
    _composite("diff", DIFF, "SubBackward0", dtypes=FLOATS + INTS, errors=(
        _err(lambda m: m.diff(m.tensor(1.0))),
        _err(lambda m: m.diff(m.ones(2, 3), dim=2), IndexError),
        _err(lambda m: m.diff(m.ones(2, 3), -1)),
        _err(lambda m: m.diff(m.ones(2, 3), prepend=m.ones(3))),
    )),
    _composite("cov", COV, "SqueezeBackward0", errors=(
        _err(lambda m: m.cov(m.ones(2, 3, 4))),
        _err(lambda m: m.cov(m.ones(2, 3), fweights=m.ones(3))),
        _err(lambda m: m.cov(m.ones(2, 3), fweights=m.tensor([1, -1, 2]))),
        _err(lambda m: m.cov(m.ones(2, 3), aweights=m.ones(4))),
    )),
    _composite("corrcoef", CORRCOEF, "ClampBackward1", nodes={1: "DivBackward0"}),
    _composite("trapezoid", TRAPEZOID, "DivBackward0", nodes={0: "MulBackward0", 2: "MulBackward0",
                                                             4: "MulBackward0", 5: "MulBackward0", 6: "MulBackward0"},
               errors=(_err(lambda m: m.trapezoid(m.ones(3, 4), dim=2), IndexError),
                       _err(lambda m: m.trapezoid(m.ones(3, 4), m.ones(3))))),
    _composite("trapz", TRAPEZOID[:3], "MulBackward0", nodes={1: "DivBackward0"}),
    _composite("cumulative_trapezoid", TRAPEZOID, "CumsumBackward0",
               errors=(_err(lambda m: m.cumulative_trapezoid(m.ones(3, 4), dim=-3), IndexError),)),
    OpSpec("trapezoid_empty", getattr_op("trapezoid"), TRAPEZOID_EMPTY, grad_fn={0: "MulBackward0", 1: "SumBackward1"},
           note="a composite of ember ops: its grad_fn is the last op's node"),
    _composite("dist", DIST, None, errors=(
        _err(lambda m: m.dist(m.ones(2, 3), m.ones(4))),
    )),
    _composite("renorm", RENORM, None, domain=(-3.0, 3.0), inplace=in_place("renorm_"), errors=(
        _err(lambda m: m.renorm(m.ones(3), 2, 0, 1.0)),
        _err(lambda m: m.renorm(m.ones(2, 3), 0, 0, 1.0)),
        _err(lambda m: m.renorm(m.ones(2, 3), 2, 2, 1.0), IndexError),
    )),
    OpSpec("pdist", _pdist, PDIST, grad_fn=_node("PdistBackward0", PDIST, {}),
           note="torch's PdistBackward0 has no second derivative (ember's has): torch's side is the same distances "
                "in torch ops",
           errors=(
        _err(lambda m: m.pdist(m.ones(3))),
        _err(lambda m: m.pdist(m.ones(3, 2), -1.0)),
    )),
    _composite("cartesian_prod", (s(A(3), A(2)), s(A(2), A(0)), s(A(2), A(2), A(2))), "StackBackward0", errors=(
        _err(lambda m: m.cartesian_prod(m.ones(2, 2), m.ones(2))),
    )),
    OpSpec("cartesian_prod_single", getattr_op("cartesian_prod"), (s(A(3)),)),
    _composite("combinations", (s(A(4)), s(A(4), 3), s(A(3), 2, True), s(A(0)), s(A(2), 3)), "StackBackward0",
               dtypes=FLOATS + INTS, errors=(
                   _err(lambda m: m.combinations(m.ones(2, 2))),
                   _err(lambda m: m.combinations(m.ones(3), -1)),
               )),
    _composite("block_diag", (s(A(2, 3), A(), A(3)), s(A(2, 2)), s(T(3, 4), S(3, 4)), s(A(0, 3), A(2, 0))),
               None, dtypes=FLOATS + INTS, errors=(_err(lambda m: m.block_diag(m.ones(2, 2, 2))),)),
    _composite("vander", (s(A(3)), s(A(4), 2), s(A(3), 4, True), s(A(3), 1)), "FlipBackward0",
               dtypes=FLOATS + INTS, nodes={2: "CatBackward0", 3: None}, differentiable=False,
               note="torch's own vander cannot be differentiated (an in-place write in its backward graph); "
                    "test_leftovers.py gradchecks ember's", errors=(
                   _err(lambda m: m.vander(m.ones(2, 2))),
                   _err(lambda m: m.vander(m.ones(3), -1)),
               )),
    OpSpec("vander_empty", getattr_op("vander"), (s(A(0)), s(A(3), 0)), dtypes=FLOATS + INTS, differentiable=False),
    _composite("nuclear_norm", (s(A(3, 4)), s(A(3, 4), True), s(A(2, 3, 4), (1, 2))), "SumBackward1",
               nodes={1: "PermuteBackward0"}),
    _composite("frobenius_norm", (s(A(3, 4), (0, 1)), s(A(2, 3, 4), (1, 2), True), s(A(3, 4), (1,)), s(T(3, 4), (0, 1))),
               None),
    OpSpec("angle", getattr_op("angle"), UNARY, dtypes=FLOATS + INTS, errors=(not_a_tensor(getattr_op("angle")),)),
    OpSpec("fill", getattr_op("fill"), (s(A(3, 4), 2.5), s(A(), 1), s(A(3, 4), A()), s(T(3, 4), 0)),
           inplace=in_place("fill_"),
           errors=(not_a_tensor(getattr_op("fill")), _err(lambda m: m.fill(m.ones(3), m.ones(2))))),
    OpSpec("fix", getattr_op("fix"), UNARY, dtypes=FLOATS + INTS, inplace=in_place("fix_"), domain=(-3.0, 3.0),
           away_from=(-2.0, -1.0, 0.0, 1.0, 2.0), errors=(not_a_tensor(getattr_op("fix")),)),
    OpSpec("positive", getattr_op("positive"), UNARY, dtypes=FLOATS + INTS, errors=(
        not_a_tensor(getattr_op("positive")), _err(lambda m: m.positive(m.tensor([True])), mentions="positive"))),
    *(OpSpec(name, getattr_op(name), UNARY, dtypes=FLOATS + INTS, errors=(not_a_tensor(getattr_op(name)),))
      for name in ("real", "conj", "conj_physical", "resolve_conj", "resolve_neg")),
    OpSpec("detach", getattr_op("detach"), UNARY, differentiable=False),
    OpSpec("histogram", _hist("hist"), HISTOGRAM, differentiable=False, errors=(
        _err(lambda m: m.histogram(m.tensor([1, 2]), 2)),
        _err(lambda m: m.histogram(m.ones(3), -1)),
        _err(lambda m: m.histogram(m.ones(3), 2, range=(1.0, 0.0))),
    )),
    OpSpec("histogram_bin_edges", _hist("bin_edges"), HISTOGRAM, differentiable=False),
    OpSpec("histogram_edges_given", _hist("hist"), (s(A(10), C(np.array([-2.0, -0.5, 0.0, 2.0]))),),
           dtypes=("float64",), differentiable=False),
    OpSpec("dist_zero_norm", getattr_op("dist"), (s(A(2, 3), A(2, 3), 0), s(A(3), A(3), 0.5)), differentiable=False),
    *(creation(name, WINDOW, _window_errors(name))
      for name in ("hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window")),
    creation("hamming_window", (s(6, True, 0.5, 0.5), s(5, False, alpha=0.6, beta=0.3))),
    creation("kaiser_window", (s(6, True, 5.0), s(5, False, beta=0.0), s(4, True, 20.0, dtype=D("float64")))),
    creation("scalar_tensor", (s(3), s(2.5), s(True), s(3, dtype=D("int64")), s(-1.5, dtype=D("float64"))),
             (Err(lambda m: m.scalar_tensor("a"), TypeError),)),
)
