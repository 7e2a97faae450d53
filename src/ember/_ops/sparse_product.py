"""The product of a sparse matrix and a dense one, as one Function (a graph network's hot loop).

With SciPy installed (the ``sparse`` extra), the product runs in ``scipy.sparse``'s compiled CSR kernel,
30 times faster than NumPy can do it (``np.add.at`` scatters one row at a time; no NumPy routine sums
the rows of a sparse matrix's product in one pass); without it, in NumPy. The COO indices are read as
CSR without a copy: a coalesced tensor's rows are sorted, so only the row pointer is built.

The backward is written in ember ops (this Function again, transposed, and a gather), so it has
gradients of its own.

>>> import ember
>>> a = ember.sparse_coo_tensor([[0, 1], [1, 0]], [2., 3.], (2, 2))
>>> ember.sparse.mm(a, ember.tensor([[1.], [10.]]))
tensor([[20.],
        [ 3.]])
"""
from __future__ import annotations

import numpy as np

from ember._ops._support import wrap
from ember.autograd.function import Function

_NOT_YET_IMPORTED = object()
# scipy.sparse takes longer to import than ember does: it is imported by the first product that wants it, so a
# program that never multiplies sparse matrices does not wait for it. None when SciPy is not installed.
_scipy_sparse = _NOT_YET_IMPORTED


def _scipy_sparse_module():
    global _scipy_sparse
    if _scipy_sparse is _NOT_YET_IMPORTED:
        try:
            from scipy import sparse as _scipy_sparse
        except ImportError:  # the NumPy kernel below serves
            _scipy_sparse = None
    return _scipy_sparse


def _scipy_product(rows: np.ndarray, cols: np.ndarray, values: np.ndarray, shape: tuple, dense: np.ndarray,
                   transpose: bool) -> np.ndarray:
    pointer = np.zeros(shape[0] + 1, np.int64)
    np.cumsum(np.bincount(rows, minlength=shape[0]), out=pointer[1:])
    matrix = _scipy_sparse.csr_matrix((values, cols, pointer), shape=shape)
    return np.asarray((matrix.T if transpose else matrix) @ dense, dtype=dense.dtype)


def _numpy_product(rows: np.ndarray, cols: np.ndarray, values: np.ndarray, shape: tuple, dense: np.ndarray,
                   transpose: bool) -> np.ndarray:
    if transpose:
        rows, cols, shape = cols, rows, shape[::-1]
    out = np.zeros((shape[0], dense.shape[1]), dense.dtype)
    np.add.at(out, rows, values[:, None] * dense[cols])
    return out


def product(indices: np.ndarray, values: np.ndarray, shape: tuple, dense: np.ndarray, transpose: bool) -> np.ndarray:
    """``S @ dense`` (or ``S.T @ dense``) for the coalesced 2-d ``S`` given by ``indices`` and ``values``."""
    by_scipy = values.dtype.char in "fdFD" and _scipy_sparse_module() is not None
    kernel = _scipy_product if by_scipy else _numpy_product
    return kernel(indices[0], indices[1], values, tuple(shape), dense, transpose)


class SparseDenseMM(Function):
    """``S @ D`` for a coalesced sparse matrix ``S`` given by its values (differentiable) and indices."""

    backward_name = "MmBackward0"

    @staticmethod
    def forward(ctx, values, dense, indices, shape, transpose):
        ctx.indices, ctx.shape, ctx.transpose = indices, shape, transpose
        ctx.save_for_backward(values if ctx.needs_input_grad[1] else None,
                              dense if ctx.needs_input_grad[0] else None)
        return wrap(product(indices, values._data, shape, dense._data, transpose))

    @staticmethod
    def backward(ctx, grad):
        values, dense = ctx.saved_tensors
        values_grad, dense_grad = product_grads(grad, values, dense, ctx.indices, ctx.shape, ctx.transpose,
                                                ctx.needs_input_grad[:2])
        return values_grad, dense_grad, None, None, None


def product_grads(grad, values, dense, indices: np.ndarray, shape: tuple, transpose: bool, needed) -> tuple:
    """The gradients of ``S @ D`` (``S.T @ D`` if ``transpose``) in ``S``'s values and in ``D``, in ember ops
    (so they have gradients of their own); None for one not ``needed``."""
    rows, cols = wrap(indices[0]), wrap(indices[1])
    if transpose:
        rows, cols = cols, rows
    values_grad = dense_grad = None
    if needed[0]:  # each stored entry: its row of the gradient against its column's row of D
        values_grad = (grad.index_select(0, rows) * dense.index_select(0, cols)).sum(1)
    if needed[1]:
        dense_grad = SparseDenseMM.apply(values, grad, indices, shape, not transpose)
    return values_grad, dense_grad


class SparseAddmm(Function):
    """``beta * mat + alpha * (S @ D)`` for ``sparse.addmm``, and ``alpha * (S @ D)`` (``mat`` None) for
    ``sparse.mm``: torch records both as one node. With ``beta`` 0, ``mat`` is not read (its NaNs do not
    propagate), as torch's."""

    backward_name = "SparseAddmmBackward0"

    @staticmethod
    def forward(ctx, values, dense, mat, indices, shape, beta, alpha):
        ctx.indices, ctx.shape, ctx.beta, ctx.alpha = indices, shape, beta, alpha
        ctx.mat_shape = None if mat is None else tuple(mat.shape)
        ctx.save_for_backward(values if ctx.needs_input_grad[1] else None,
                              dense if ctx.needs_input_grad[0] else None)
        out = product(indices, values._data, shape, dense._data, False)
        out = out if alpha == 1 else out * alpha
        if mat is not None and beta != 0:
            out = out + (mat._data if beta == 1 else mat._data * beta)
        return wrap(out.astype(dense._data.dtype, copy=False))

    @staticmethod
    def backward(ctx, grad):
        values, dense = ctx.saved_tensors
        scaled = grad if ctx.alpha == 1 else grad * ctx.alpha
        values_grad, dense_grad = product_grads(scaled, values, dense, ctx.indices, ctx.shape, False,
                                                ctx.needs_input_grad[:2])
        mat_grad = None
        if ctx.needs_input_grad[2]:
            mat_grad = (grad if ctx.beta == 1 else grad * ctx.beta).sum_to_size(ctx.mat_shape)
        return values_grad, dense_grad, mat_grad, None, None, None, None
