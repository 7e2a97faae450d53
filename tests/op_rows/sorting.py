"""Op-table rows: sorting, selection, order statistics and counting.

Random float inputs have no ties; rows on integer values (``ties``) have many, and compare the indices
chosen among them too (ember picks as torch's CPU kernels do).
"""
from dataclasses import replace

import numpy as np

from op_spec import A, C, D, Err, FLOATS, INTS, OpSpec, S, T, s  # noqa: F401

ALONG = (s(A(3, 4)), s(A(3, 4), 0), s(A(), 0), s(A(0, 3), 1), s(T(3, 4), 1), s(S(3, 4), -1), s(A(2, 3, 4), 1))
ALONG_KEEPDIM = ALONG + (s(A(3, 4), 1, True), s(A(), -1, True))
WHOLE = (s(A(3, 4)), s(A()), s(T(3, 4)), s(S(3, 4)), s(A(5)))
ORDERED = FLOATS + INTS + ("float16",)


def values(name: str):
    return lambda m, x, *args, **kwargs: getattr(m, name)(x, *args, **kwargs).values


def indices(name: str):
    return lambda m, x, *args, **kwargs: getattr(m, name)(x, *args, **kwargs).indices


def no_dim(name: str, *args) -> Err:
    return Err(lambda m: getattr(m, name)(m.ones(2, 3), *args, dim=2), IndexError)


def empty_dim(name: str, *args) -> Err:
    return Err(lambda m: getattr(m, name)(m.ones(0, 3), *args, dim=0), IndexError)


def ties(name: str, *args, suffix: str = "", **kwargs) -> tuple:
    """Rows of ``name`` on integer-valued inputs, full of ties: values and gradients, and the indices.

    torch does not document which of equal elements it picks; ember picks as torch's CPU kernels do, so
    the gradient reaches the same element.
    """
    empty = (s(A(0, 9)),) if not suffix else ()  # reduced along the last dim only
    samples = (s(A(4, 9)), s(T(9, 4)), s(A(3, 40))) + empty
    common = dict(domain=(-2.0, 2.0), integer_valued=True, dtypes=ORDERED)
    return (
        OpSpec(f"{name}_ties{suffix}", lambda m, x: getattr(m, name)(x, *args, **kwargs).values, samples,
               float64_output=False, note="no gradcheck: at ties there is no derivative",
               **common),
    ) + ((OpSpec(f"{name}_ties{suffix}_indices", lambda m, x: getattr(m, name)(x, *args, **kwargs).indices,
                 samples, differentiable=False, **common),))


def nan_ties(name: str, *args) -> OpSpec:
    """Indices of ``name`` on ties and NaNs (rows of NaNs alone too), where torch's kernels pick as they do."""
    nans = np.where(np.arange(40).reshape(4, 10) % 3 == 0, np.nan, 0.0)
    nans[2], nans[3] = 0.0, np.nan  # a row without NaN, a row of NaNs alone
    return OpSpec(f"{name}_nan_ties_indices", lambda m, x, n: getattr(m, name)(x + n, *args).indices,
                  (s(A(4, 10), C(nans)),), domain=(-2.0, 2.0), integer_valued=True, dtypes=FLOATS,
                  differentiable=False)


SORT = (
    OpSpec("sort", values("sort"), ALONG + (s(A(3, 4), 1, True), s(A(3, 4), descending=True, stable=True)),
           dtypes=ORDERED, grad_fn={8: "SortBackward1"}, errors=(no_dim("sort"),)),
    OpSpec("sort_indices", indices("sort"), ALONG + (s(A(3, 4), 0, True),), dtypes=ORDERED, differentiable=False),
    OpSpec("sort_stable", lambda m, x, *a, **k: m.sort(x, *a, stable=True, **k).indices,
           (s(A(4, 9)), s(A(4, 9), dim=0, descending=True), s(T(9, 4), dim=0)), integer_valued=True,
           dtypes=FLOATS + INTS, differentiable=False),
    OpSpec("argsort", lambda m, x, d=-1, **k: m.argsort(x, dim=d, stable=True, **k),
           ALONG + (s(A(4, 9), descending=True),), integer_valued=True, dtypes=ORDERED, differentiable=False,
           errors=(no_dim("argsort"),)),
    OpSpec("argsort_distinct", lambda m, x, *a: x.argsort(*a), ALONG, dtypes=FLOATS, differentiable=False),
    OpSpec("argsort_ties", lambda m, x, *a: x.argsort(*a), (s(A(3, 40)), s(T(40, 3), 0, True), s(S(2, 30), -1)),
           integer_valued=True, dtypes=ORDERED, differentiable=False),
    *ties("sort", -1), *ties("sort", 0, True, suffix="_dim0"),
    OpSpec("msort_ties", lambda m, x: m.msort(x), (s(A(40, 3)), s(T(3, 40))), integer_valued=True, dtypes=FLOATS + INTS,
           float64_output=False, note="no gradcheck: at ties there is no derivative"),
    OpSpec("msort", lambda m, x: m.msort(x), (s(A(3, 4)), s(A(5)), s(A(0, 3)), s(T(3, 4)), s(S(3, 4))),
           dtypes=ORDERED),
    OpSpec("topk", values("topk"),
           (s(A(3, 4), 2), s(A(3, 4), 3, 0), s(A(), 1), s(A(0, 3), 2, 1), s(T(3, 4), 1, 1, False),
            s(S(3, 4), 4), s(A(2, 3, 4), 0, 1), s(A(3, 4), 2, largest=False), s(A(3, 40), 3), s(T(40, 3), 2, 0, False)),
           dtypes=ORDERED, errors=(Err(lambda m: m.topk(m.ones(3), 4), RuntimeError),
                                         Err(lambda m: m.topk(m.ones(3), -1), RuntimeError), no_dim("topk", 1))),
    OpSpec("topk_indices", indices("topk"), (s(A(3, 4), 2), s(T(3, 4), 3, 0, False), s(A(), 1)),
           dtypes=FLOATS, differentiable=False),
    OpSpec("topk_unsorted", lambda m, x, *a: m.topk(x, *a, sorted=False).values,
           (s(A(3, 4), 2), s(A(5), 5), s(A(3, 200), 3), s(T(30, 4), 20, 0, False)), dtypes=FLOATS),
    OpSpec("topk_unsorted_indices", lambda m, x, *a: m.topk(x, *a, sorted=False).indices,
           (s(A(3, 4), 2), s(A(5), 5), s(A(3, 200), 3), s(A(3, 200), 3, 1, False), s(T(30, 4), 20, 0)),
           integer_valued=True, dtypes=FLOATS + INTS, differentiable=False),
    *ties("topk", 3), *ties("topk", 2, 0, False, suffix="_dim0"),
    OpSpec("kthvalue", values("kthvalue"),
           (s(A(3, 4), 2), s(A(3, 4), 3, 0), s(A(), 1), s(A(0, 3), 2, 1), s(T(3, 4), 1, 1, True),
            s(S(3, 4), 4), s(A(2, 3, 4), 3, 1)),
           dtypes=ORDERED, errors=(Err(lambda m: m.kthvalue(m.ones(3), 4), RuntimeError),
                                         Err(lambda m: m.kthvalue(m.ones(3), 0), RuntimeError),
                                         no_dim("kthvalue", 1), empty_dim("kthvalue", 1))),
    OpSpec("kthvalue_indices", indices("kthvalue"), (s(A(3, 4), 2), s(T(3, 4), 3, 0, True)), dtypes=FLOATS,
           differentiable=False),
    *ties("kthvalue", 3), *ties("kthvalue", 2, 0, True, suffix="_dim0"), nan_ties("kthvalue", 4),
)

MEDIANS = (
    OpSpec("median", lambda m, x: m.median(x), WHOLE, dtypes=ORDERED,
           errors=(Err(lambda m: m.median(m.tensor([True, False])), NotImplementedError),)),
    OpSpec("median_dim", values("median"), ALONG_KEEPDIM[1:], dtypes=ORDERED,
           errors=(no_dim("median"), empty_dim("median"))),
    OpSpec("median_indices", indices("median"), (s(A(3, 4), 1), s(T(3, 4), 0, True)), dtypes=FLOATS,
           differentiable=False),
    *ties("median", -1), *ties("median", 0, True, suffix="_dim0"), nan_ties("median", 1),
    *ties("nanmedian", -1), nan_ties("nanmedian", 1),
    OpSpec("nanmedian", lambda m, x: m.nanmedian(x), WHOLE, dtypes=ORDERED),
    OpSpec("nanmedian_dim", values("nanmedian"), ALONG_KEEPDIM[1:], dtypes=ORDERED,
           errors=(no_dim("nanmedian"), empty_dim("nanmedian"))),
    OpSpec("nanmedian_nan", lambda m, x, nans: m.nanmedian(x + nans, 1).values,
           (s(A(3, 4), C(np.array([0., np.nan, 0., np.nan]))),), dtypes=FLOATS, float64_output=False,
           note="no gradcheck: finite differences of NaN"),
    OpSpec("nanmedian_all_nan", lambda m, x, nans: m.nanmedian(x + nans, 1).values,
           (s(A(2, 4), C(np.array([[0.] * 4, [np.nan] * 4]))),), dtypes=FLOATS, differentiable=False,
           note="which NaN of a slice of NaNs torch picks (so where its gradient goes) is its own choice"),
    OpSpec("median_nan", lambda m, x, nans: m.median(x + nans, 1).values,
           (s(A(3, 4), C(np.array([0., np.nan, 0., np.nan]))),
            s(A(2, 4), C(np.array([[0.] * 4, [0., 0., np.nan, 0.]])))),
           dtypes=FLOATS, float64_output=False, note="no gradcheck: finite differences of NaN"),
    OpSpec("median_nan_indices", lambda m, x, nans: m.median(x + nans, 1).indices,
           (s(A(3, 4), C(np.array([0., np.nan, 0., np.nan]))),), dtypes=FLOATS, differentiable=False),
    OpSpec("mode", values("mode"), ALONG_KEEPDIM[1:], dtypes=ORDERED,
           errors=(no_dim("mode"), empty_dim("mode"))),
    OpSpec("mode_indices", indices("mode"), (s(A(3, 4), 1), s(T(3, 4), 0, True)), dtypes=FLOATS,
           differentiable=False),
    *ties("mode", -1), *ties("mode", 0, True, suffix="_dim0"), nan_ties("mode", 1),
)


def _q(*values) -> C:
    return C(np.array(values))


QUANTILE_SAMPLES = (
    s(A(3, 4), 0.3), s(A(3, 4), 0.5, 1), s(A(), 0.25), s(A(), 0.75, 0), s(T(3, 4), 0.0, 0, True),
    s(S(3, 4), 1.0, -1), s(A(2, 3, 4), 0.6, 1), s(A(3, 4), 0.4, keepdim=True),
)
QUANTILE_TENSOR_Q = (s(A(3, 4), _q(0.2, 0.5, 1.0), 1), s(A(5), _q(0.1, 0.9)), s(A(3, 4), _q(0.3), None, True),
                     s(A(3, 4), C(np.array(0.5)), 0))
QUANTILE_ERRORS = (
    Err(lambda m: m.quantile(m.ones(3), 1.5), RuntimeError),
    Err(lambda m: m.quantile(m.ones(3), m.tensor([0.5, -0.1])), RuntimeError),
    Err(lambda m: m.quantile(m.ones(3), m.tensor([[0.5]])), RuntimeError),
    Err(lambda m: m.quantile(m.tensor([1, 2]), 0.5), RuntimeError),
    Err(lambda m: m.quantile(m.ones(3), m.tensor([0.5], dtype=m.float64)), RuntimeError),
    Err(lambda m: m.quantile(m.ones(3), 0.5, interpolation="cubic"), RuntimeError),
    Err(lambda m: m.quantile(m.ones(0, 3), 0.5, dim=1), RuntimeError),
    Err(lambda m: m.quantile(m.ones(3), 0.5, dim=1), IndexError),
)
LINEAR_NAME = "LerpBackward1"  # torch's quantile ends in a squeeze; ember's ends in its lerp


def quantile_rows(name: str) -> tuple:
    rows = []
    for interpolation in ("linear", "lower", "higher", "midpoint", "nearest"):
        node = LINEAR_NAME if interpolation in ("linear", "midpoint") else "GatherBackward0"
        fn = (lambda i: lambda m, x, *a, **k: getattr(m, name)(x, *a, interpolation=i, **k))(interpolation)
        note = "torch's node is SqueezeBackward4 (its quantile ends in a squeeze); ember's is its last op's"
        rows.append(OpSpec(f"{name}_{interpolation}", fn, QUANTILE_SAMPLES, note=note,
                           grad_fn={i: node for i in range(len(QUANTILE_SAMPLES))}))
        rows.append(OpSpec(f"{name}_{interpolation}_q", fn, QUANTILE_TENSOR_Q, dtypes=("float64",), note=note,
                           grad_fn={i: node for i in range(len(QUANTILE_TENSOR_Q))}))
    rows.append(OpSpec(f"{name}_ties", getattr_op_q(name), (s(A(4, 9), _q(0.125, 0.5, 0.875), 1),),
                       integer_valued=True, dtypes=("float64",), grad_fn={0: LINEAR_NAME}, float64_output=False,
                       note="no gradcheck: at ties the quantile has no derivative; the gradient is torch's"))
    errors = QUANTILE_ERRORS if name == "quantile" else tuple(
        Err((lambda call: lambda m: call(_renamed(m)))(e.call), e.error) for e in QUANTILE_ERRORS)
    rows[0] = replace(rows[0], errors=errors)
    return tuple(rows)


def getattr_op_q(name: str):
    return lambda m, x, q, dim: getattr(m, name)(x, q, dim)


class _renamed:
    """The library with ``quantile`` read as ``nanquantile``: the same error cases for both."""

    def __init__(self, lib):
        self._lib = lib

    def __getattr__(self, attribute):
        return getattr(self._lib, "nanquantile" if attribute == "quantile" else attribute)


QUANTILES = quantile_rows("quantile") + quantile_rows("nanquantile") + (
    OpSpec("nanquantile_nan", lambda m, x, nans, q: m.nanquantile(x + nans, q, 1),
           (s(A(3, 4), C(np.array([0., np.nan, 0., np.nan])), 0.3),
            s(A(2, 4), C(np.array([[0.] * 4, [np.nan] * 4])), 0.5)), dtypes=FLOATS,
           grad_fn={0: LINEAR_NAME, 1: LINEAR_NAME},
           float64_output=False, note="no gradcheck: finite differences of NaN"),
    OpSpec("quantile_nan", lambda m, x, nans, q: m.quantile(x + nans, q, 1),
           (s(A(3, 4), C(np.array([0., np.nan, 0., 0.])), 0.3),), dtypes=FLOATS, grad_fn={0: LINEAR_NAME},
           float64_output=False, note="no gradcheck: finite differences of NaN"),
)

COUNTING = (
    OpSpec("unique", lambda m, x, **k: m.unique(x, **k), (s(A(4, 6)), s(A()), s(A(0, 3)), s(T(4, 6), sorted=False)),
           integer_valued=True, dtypes=ORDERED, differentiable=False),
    OpSpec("unique_inverse", lambda m, x, **k: m.unique(x, return_inverse=True, **k)[1],
           (s(A(4, 6)), s(A()), s(S(4, 6))), integer_valued=True, dtypes=FLOATS + INTS, differentiable=False),
    OpSpec("unique_counts", lambda m, x, **k: x.unique(return_counts=True, **k)[1],
           (s(A(4, 6)), s(A(0, 3)), s(T(4, 6))), integer_valued=True, dtypes=FLOATS + INTS, differentiable=False),
    OpSpec("unique_dim", lambda m, x, d: m.unique(x, dim=d), (s(A(6, 2), 0), s(A(2, 6), 1), s(T(6, 2), -2),
                                                               s(A(0, 3), 0)),
           domain=(0.0, 1.0), integer_valued=True, dtypes=FLOATS + INTS, differentiable=False,
           errors=(Err(lambda m: m.unique(m.ones(0, 3), dim=1), RuntimeError),
                   Err(lambda m: m.unique(m.tensor(1.), dim=0), IndexError),
                   Err(lambda m: m.unique(m.ones(2), dim=1), IndexError))),
    OpSpec("unique_dim_inverse", lambda m, x, d: m.unique(x, return_inverse=True, dim=d)[1],
           (s(A(6, 2), 0), s(A(2, 6), 1)), domain=(0.0, 1.0), integer_valued=True, dtypes=INTS, differentiable=False),
    OpSpec("unique_consecutive", lambda m, x, **k: m.unique_consecutive(x, **k),
           (s(A(20)), s(A()), s(A(0, 3)), s(T(4, 6)), s(A(6, 2), dim=0), s(A(2, 6), dim=1)),
           domain=(0.0, 1.0), integer_valued=True, dtypes=FLOATS + INTS, differentiable=False,
           errors=(Err(lambda m: m.unique_consecutive(m.ones(2), dim=1), IndexError),)),
    OpSpec("unique_consecutive_inverse", lambda m, x, **k: x.unique_consecutive(return_inverse=True, **k)[1],
           (s(A(20)), s(S(4, 6)), s(A(6, 2), dim=0)), domain=(0.0, 1.0), integer_valued=True, dtypes=INTS,
           differentiable=False),
    OpSpec("unique_consecutive_counts", lambda m, x, **k: m.unique_consecutive(x, return_counts=True, **k)[1],
           (s(A(20)), s(A(6, 2), dim=0), s(A(2, 6), dim=-1)), domain=(0.0, 1.0), integer_valued=True, dtypes=INTS,
           differentiable=False),
    OpSpec("bincount", lambda m, x, **k: m.bincount(x, **k), (s(A(20)), s(A(0)), s(A(6), minlength=10), s(S(7))),
           domain=(0.0, 6.0), dtypes=INTS, differentiable=False,
           errors=(Err(lambda m: m.bincount(m.tensor([1, -1])), RuntimeError),
                   Err(lambda m: m.bincount(m.tensor([[1, 2]])), RuntimeError),
                   Err(lambda m: m.bincount(m.tensor([1., 2.])), NotImplementedError),
                   Err(lambda m: m.bincount(m.tensor([1, 2]), minlength=-1), RuntimeError),
                   Err(lambda m: m.bincount(m.tensor([1, 2]), m.ones(3)), RuntimeError))),
    OpSpec("bincount_weights", lambda m, w, x, *a: m.bincount(x, w, *a),
           (s(A(4), C(np.array([0, 3, 3, 1]))), s(A(4), C(np.array([0, 3, 3, 1])), 6), s(A(0), C(np.zeros(0, int)))),
           dtypes=FLOATS + ("float16", "int64"), differentiable=False),
    OpSpec("histc", lambda m, x, *a, **k: m.histc(x, *a, **k),
           (s(A(30)), s(A(4, 5), 7), s(A(0, 3), 3), s(T(4, 5), 5, -1, 1), s(A(), 4),
            s(A(30), bins=6, min=-1.5, max=0.5),
            s(S(4, 5), 3, 1, 1)),
           dtypes=FLOATS + ("float16",), differentiable=False,
           errors=(Err(lambda m: m.histc(m.ones(3), 3, 2, 1), RuntimeError),
                   Err(lambda m: m.histc(m.ones(3), 0), RuntimeError),
                   Err(lambda m: m.histc(m.tensor([1, 2])), NotImplementedError),
                   Err(lambda m: m.histc(m.tensor([1., float("inf")])), RuntimeError))),
    OpSpec("searchsorted", lambda m, seq, x, **k: m.searchsorted(seq.sort().values, x, **k),
           (s(A(8), A(3, 4)), s(A(8), A()), s(A(0), A(3)), s(A(3, 8), A(3, 4)), s(T(4, 3), A(4, 5), right=True),
            s(A(8), S(3, 4), side="right"), s(A(8), A(5), out_int32=True), s(A(8), 0.5)),
           integer_valued=True, dtypes=ORDERED, differentiable=False,
           errors=(Err(lambda m: m.searchsorted(m.ones(2), m.ones(1), side="left", right=True), RuntimeError),
                   Err(lambda m: m.searchsorted(m.ones(2), m.ones(1), side="middle"), RuntimeError),
                   Err(lambda m: m.searchsorted(m.ones(1, 2), m.ones(2)), RuntimeError),
                   Err(lambda m: m.searchsorted(m.ones(2, 2), 1.0), RuntimeError),
                   Err(lambda m: m.searchsorted(m.tensor(1.), m.ones(2)), RuntimeError),
                   Err(lambda m: m.searchsorted(m.ones(2), m.ones(1), sorter=m.tensor([0])), RuntimeError),
                   Err(lambda m: m.searchsorted(m.ones(2), m.ones(1), sorter=m.tensor([0, 2])), RuntimeError))),
    OpSpec("searchsorted_sorter", lambda m, seq, x: m.searchsorted(seq, x, sorter=seq.argsort()),
           (s(A(8), A(3, 4)), s(A(3, 6), A(3, 2))), dtypes=FLOATS + INTS, differentiable=False),
    OpSpec("bucketize", lambda m, x, edges, **k: m.bucketize(x, edges.sort().values, **k),
           (s(A(3, 4), A(6)), s(A(), A(6)), s(A(0, 3), A(4)), s(T(3, 4), A(6), right=True), s(S(3, 4), A(0)),
            s(A(5), A(6), out_int32=True), s(1.0, A(6))),
           integer_valued=True, dtypes=ORDERED, differentiable=False,
           errors=(Err(lambda m: m.bucketize(m.ones(2), m.ones(2, 2)), RuntimeError),
                   Err(lambda m: m.bucketize(m.ones(2), m.tensor(1.)), RuntimeError))),
)

OPS = SORT + MEDIANS + QUANTILES + COUNTING
