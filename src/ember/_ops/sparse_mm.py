"""``sparse.mm(S, D, reduce)`` for a sparse CSR ``S``: each ``out[i, j]`` the ``reduce`` ("sum", "mean",
"amax", "amin") of the products ``S[i, k] * D[k, j]`` over the entries row ``i`` stores, 0 for a row that
stores none.

The forward multiplies once per stored entry, then reduces each row's run of products with one
``ufunc.reduceat`` over the CSR row pointer (only over the rows that store something: ``reduceat`` reads
an empty run as one element). For "amax" and "amin" it also keeps which entry gave each extremum (the
first one to reach it, or the last NaN, as torch's kernel keeps it), and the gradient goes to that entry alone.

As in torch, the gradient is not differentiable again: backward runs one recorded op that has no
derivative of its own.

>>> import ember
>>> s = ember.tensor([[1., 0., 2.], [0., 0., 0.]]).to_sparse_csr()
>>> ember.sparse.mm(s, ember.tensor([[1., 5.], [0., 0.], [3., -1.]]), "amax")
tensor([[6., 5.],
        [0., 0.]])
"""
from __future__ import annotations

import numpy as np

from ember import _layout
from ember._ops._support import wrap
from ember._ops.binary import NoDerivative
from ember._ops.sparse_product import product
from ember._tensor import Tensor
from ember.autograd.function import Function

REDUCTIONS = {"sum": "sum", "mean": "mean", "amax": "amax", "max": "amax", "amin": "amin", "min": "amin"}
_ROW_REDUCERS = {"sum": np.add, "mean": np.add, "amax": np.maximum, "amin": np.minimum}


class _Omitted:
    """The default of ``reduce``: torch's ``sparse.mm`` without it is a plain product for any layout, and
    with it (even ``"sum"``) the CSR-only reducing kernel; so omitting it differs from passing "sum"."""

    def __repr__(self) -> str:
        return "omitted"


OMITTED = _Omitted()


def _check_is_string(reduce) -> None:
    if not isinstance(reduce, str):
        raise TypeError(f"sparse.mm(): argument 'reduce' must be str, not {type(reduce).__name__}; pass one of "
                        "'sum', 'mean', 'amax', 'amin', or leave it out for the plain product")


def reduction_named(reduce: str) -> str:
    """``reduce``'s canonical name ("max" is "amax", "min" "amin"); a clear error for anything else."""
    if reduce == "prod":
        raise RuntimeError("sparse_mm_reduce: reduce type of prod has not been enabled; use 'sum', 'mean', 'amax' "
                           "or 'amin'")
    if reduce not in REDUCTIONS:
        raise RuntimeError(f"sparse_mm_reduce: reduce argument must be either sum, mean, amax or amin (or max, "
                           f"min), got {reduce!r}")
    return REDUCTIONS[reduce]


def check_operands(mat1: Tensor, mat2: Tensor, reduce: str) -> None:
    """What torch's CSR kernel takes: a 2-d CSR matrix of floats without dense dimensions, and a dense 2-d
    matrix of its dtype with as many rows as it has columns."""
    from ember.sparse._compressed import KIND_NAMES, dense_ndim, is_compressed

    if not is_compressed(mat1):
        raise NotImplementedError(f"sparse.mm: reduce={reduce!r} is implemented for a sparse CSR mat1 only, got one of "
                                  f"layout {mat1.layout}; convert it with .to_sparse_csr(), or leave reduce "
                                  "out for the plain product")
    if mat1.layout is not _layout.sparse_csr:
        raise RuntimeError(f"sparse_mm_reduce: expect self to be SparseCsr, got {KIND_NAMES[mat1.layout]}; "
                           "convert it with .to_sparse_csr()")
    if dense_ndim(mat1):
        raise RuntimeError("sparse_mm_reduce: expected non-hybrid self tensor (one without dense dimensions); "
                           "convert it with .to_sparse_csr() from its dense form")
    if mat1._data.ndim != 2:
        raise RuntimeError(f"sparse_mm_reduce: expected self to be a 2-D tensor, got {mat1._data.ndim}-D tensor; "
                           "multiply one batch at a time")
    if mat2.layout is not _layout.strided:
        raise RuntimeError(f"sparse_mm_reduce: expected mat2 to have the strided layout, got {mat2.layout}; "
                           "convert it with .to_dense()")
    rows = mat1._data.shape[1]
    if mat2._data.ndim != 2 or mat2._data.shape[0] != rows:
        raise RuntimeError(f"sparse_mm_reduce: expected mat2 of dimension 2 with size[0] == {rows}, got size "
                           f"{list(mat2._data.shape)}")
    if mat1.dtype is not mat2.dtype:
        raise RuntimeError(f"sparse_mm_reduce: expected mat2 to have dtype {mat1.dtype} as mat1 has, got "
                           f"{mat2.dtype}; convert it with .to({mat1.dtype})")
    if mat2._data.dtype.kind not in "f" and mat2._data.dtype.name != "bfloat16":
        raise NotImplementedError(f"sparse_mm_reduce: not implemented for {mat2.dtype}; use a floating-point "
                                  "dtype, e.g. .to(ember.float32) for both operands")


def _row_of_each_entry(crow: np.ndarray) -> np.ndarray:
    return np.repeat(np.arange(len(crow) - 1), np.diff(crow))


def _first_extremum(products: np.ndarray, out: np.ndarray, crow: np.ndarray, filled: np.ndarray) -> np.ndarray:
    """For each row that stores entries and each column: the entry whose product is the row's result, as
    torch's kernel keeps it (the first that reaches the extremum; where a NaN makes the result, the last NaN);
    -1 where the row stores nothing."""
    nnz = products.shape[0]
    starts = crow[:-1][filled]
    positions = np.arange(nnz)[:, None]
    first_equal = np.minimum.reduceat(np.where(products == out[_row_of_each_entry(crow)], positions, nnz), starts,
                                      axis=0)
    last_nan = np.maximum.reduceat(np.where(np.isnan(products), positions, -1), starts, axis=0)
    arg = np.full(out.shape, -1, np.int64)
    arg[filled] = np.where(np.isnan(out[filled]), last_nan, first_equal)
    return arg


def _reduce_rows(products: np.ndarray, crow: np.ndarray, reduce: str) -> tuple:
    """``(out, arg)``: each row's reduction of its run of ``products`` (0 for a row without entries), and
    for amax/amin which entry gave it (None for sum and mean)."""
    counts = np.diff(crow)
    filled = counts > 0
    out = np.zeros((len(crow) - 1, products.shape[1]), products.dtype)
    if not filled.any() or products.shape[1] == 0:
        return out, (np.full(out.shape, -1, np.int64) if reduce in ("amax", "amin") else None)
    out[filled] = _ROW_REDUCERS[reduce].reduceat(products, crow[:-1][filled], axis=0)
    if reduce in ("sum", "mean"):
        out += 0.0  # a sum starts from +0, as torch's: a row whose one product is -0.0 sums to 0.0
    if reduce == "mean":
        out[filled] /= counts[filled, None].astype(out.dtype)
    arg = _first_extremum(products, out, crow, filled) if reduce in ("amax", "amin") else None
    return out, arg


class SparseMmReduce(Function):
    """The reduced product from the CSR matrix's values (differentiable), its row pointer and columns."""

    backward_name = "SparseMmReduceImplBackward0"

    @staticmethod
    def forward(ctx, values, dense, crow, col, reduce):
        products = values._data[:, None] * dense._data[col]
        out, arg = _reduce_rows(products, crow, reduce)
        ctx.crow, ctx.col, ctx.reduce, ctx.arg = crow, col, reduce, arg
        ctx.save_for_backward(values, dense)
        return wrap(out)

    @staticmethod
    def backward(ctx, grad):
        values, dense = ctx.saved_tensors
        needed = tuple(ctx.needs_input_grad[:2])
        values_grad, dense_grad = SparseMmReduceGrad.apply(grad, values, dense, ctx.crow, ctx.col, ctx.reduce,
                                                          ctx.arg, needed)
        return (values_grad if needed[0] else None), (dense_grad if needed[1] else None), None, None, None


def _grad_per_entry(grad: np.ndarray, crow: np.ndarray, reduce: str, arg) -> np.ndarray:
    """``(nnz, columns)``: how much of ``grad[i, j]`` reaches each stored entry of row ``i``: all of it (sum),
    a share by the row's count (mean), or all to the entry that gave the extremum and none to the others."""
    counts = np.diff(crow)
    rows = _row_of_each_entry(crow)
    if reduce == "sum":
        return grad[rows]
    if reduce == "mean":
        return grad[rows] / counts[rows, None].astype(grad.dtype)
    share = np.zeros((len(rows), grad.shape[1]), grad.dtype)
    filled = counts > 0
    share[arg[filled], np.arange(grad.shape[1])] = grad[filled]
    return share


class SparseMmReduceGrad(NoDerivative):
    """Both gradients of ``SparseMmReduce``; recorded without a derivative, as torch records its backward."""

    backward_name = "NotImplemented"

    @staticmethod
    def forward(ctx, grad, values, dense, crow, col, reduce, arg, needed):
        ctx.aten = "_sparse_mm_reduce_impl_backward"
        share = _grad_per_entry(grad._data, crow, reduce, arg)
        values_grad = np.zeros(values._data.shape, values._data.dtype)
        dense_grad = np.zeros(dense._data.shape, dense._data.dtype)
        if needed[0]:
            values_grad = (share * dense._data[col]).sum(1).astype(values_grad.dtype)
        if needed[1]:  # each entry's share, times its value, summed into its column's row: one sparse product
            nnz = len(col)
            picks = np.stack([np.arange(nnz), col])
            dense_grad = product(picks, np.ones(nnz, dense_grad.dtype), (nnz, dense_grad.shape[0]),
                                 values._data[:, None] * share, True).astype(dense_grad.dtype, copy=False)
        return wrap(values_grad), wrap(dense_grad)

    @staticmethod
    def backward(ctx, values_grad_grad, dense_grad_grad):
        return NoDerivative.backward(ctx, values_grad_grad)  # (an error: there is no derivative)


def mm_reduce(mat1: Tensor, mat2: Tensor, reduce) -> Tensor:
    """``sparse.mm(mat1, mat2, reduce)`` with ``reduce`` given: the CSR kernel, or torch's error."""
    from ember._ops.sparse_compressed import values_of

    _check_is_string(reduce)  # checked in torch's order: the argument's type, the operands, its value
    check_operands(mat1, mat2, reduce)
    reduce = reduction_named(reduce)
    return SparseMmReduce.apply(values_of(mat1), mat2, mat1._cidx.astype(np.intp), mat1._pidx.astype(np.intp),
                                reduce)


def _stored_entries(s) -> tuple:
    """``(indices, values)`` of the 2-d sparse matrix ``s`` in row-major order, differentiable in the values."""
    from ember._ops import sparse as coo
    from ember._ops.sparse_compressed_math import _row_major

    if coo.is_sparse(s):
        s = coo.coalesce(s)
        return s._ind, coo.values_of(s)
    return _row_major(s)


def _check_product(op: str, mat1: Tensor, mat2: Tensor) -> None:
    """A sparse matrix times a dense one, as torch's ``sparse.mm`` takes them (mat2 2-d, not a vector)."""
    from ember._ops import sparse as coo, sparse_compressed_math, sparse_math

    if mat2._data.ndim != 2:
        error = IndexError if coo.is_sparse(mat1) else RuntimeError  # (torch's types for COO and CSR)
        raise error(f"{op}: mat2 must be a matrix, got a {mat2._data.ndim}-d tensor; for a vector v, multiply "
                    "v.unsqueeze(1) and squeeze the result")
    check = sparse_math._check_matrix if coo.is_sparse(mat1) else sparse_compressed_math._check_matrix
    check(op, mat1, mat2)


def _is_sparse_times_dense(mat1: Tensor, mat2: Tensor) -> bool:
    return mat1.layout is not _layout.strided and mat2.layout is _layout.strided


def sparse_addmm(mat: Tensor, mat1: Tensor, mat2: Tensor, beta=1.0, alpha=1.0, *, others) -> Tensor:
    """``sparse.addmm``: a sparse ``mat1`` times a dense ``mat2`` as one ``SparseAddmm`` (``mat`` None: the
    product alone, for ``sparse.mm``); the other pairs of layouts by the layout's ``others`` (its addmm)."""
    from ember._ops.sparse_product import SparseAddmm

    if not _is_sparse_times_dense(mat1, mat2):
        return others(mat, mat1, mat2, beta=beta, alpha=alpha, masked=True)
    _check_product("sparse.addmm", mat1, mat2)
    _check_added(mat, mat2, (mat1._data.shape[0], mat2._data.shape[1]))
    indices, values = _stored_entries(mat1)
    return SparseAddmm.apply(values, mat2, mat, indices, tuple(mat1._data.shape), beta, alpha)


def _check_added(mat: Tensor, mat2: Tensor, shape: tuple) -> None:
    if mat.layout is not _layout.strided:
        raise RuntimeError(f"sparse.addmm: expected a strided (dense) mat to add, got one of layout {mat.layout}; "
                           "convert it with .to_dense()")
    if mat.dtype is not mat2.dtype:
        raise RuntimeError(f"sparse.addmm: expected mat of dtype {mat2.dtype}, as the product's, got {mat.dtype}; "
                           f"convert it with .to({mat2.dtype})")
    try:
        fits = np.broadcast_shapes(mat._data.shape, shape) == shape
    except ValueError:
        fits = False
    if not fits:
        raise RuntimeError(f"sparse.addmm: mat of size {list(mat._data.shape)} cannot be expanded to the product's "
                           f"size {list(shape)}")


def sparse_mm(mat1: Tensor, mat2: Tensor, reduce, *, others) -> Tensor:
    """``sparse.mm``: with ``reduce`` given, the CSR kernel (or torch's error); else a sparse ``mat1`` times
    a dense ``mat2`` as ``SparseAddmm``, and the other pairs of layouts by the layout's ``others`` (its
    matmul)."""
    from ember._ops.sparse_product import SparseAddmm

    if reduce is not OMITTED:  # even "sum": torch's CSR kernel, with its own node
        return mm_reduce(mat1, mat2, reduce)
    if not _is_sparse_times_dense(mat1, mat2):
        return others(mat1, mat2, masked=True)
    _check_product("sparse.mm", mat1, mat2)
    indices, values = _stored_entries(mat1)
    return SparseAddmm.apply(values, mat2, None, indices, tuple(mat1._data.shape), 0, 1)
