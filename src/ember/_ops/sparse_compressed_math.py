"""Arithmetic on compressed sparse tensors, composed of ``sparse_compressed.py``'s Functions and dense ops.

The product ``S @ D`` runs in the same kernel as COO's (``SparseDenseMM``: SciPy's CSR kernel when it is
installed): a CSR tensor's elements are already in the row-major order it takes, so its indices go in as
they are; the other layouts are put in that order first.

>>> import ember
>>> s = ember.tensor([[1., 0., 2.], [0., 3., 0.]]).to_sparse_csr()
>>> s @ ember.ones(3, 1)
tensor([[3.],
        [3.]])
"""
from __future__ import annotations

import numbers

import numpy as np

from ember import _layout
from ember._ops import sparse as coo, sparse_compressed as C, sparse_dense_grads as coo_grads, sparse_math as coo_math
from ember._ops._support import wrap
from ember._ops.sparse_compressed import from_values, to_dense, values_of, values_on_pattern
from ember._ops.sparse_compressed_convert import from_coo, from_dense, to_coo
from ember._ops.sparse_product import SparseDenseMM, product as kernel_product
from ember._tensor import Tensor
from ember.autograd.grad_mode import is_grad_enabled
from ember.sparse._compressed import (
    BLOCKED, KIND_NAMES, SparseCompressedTensor, batch_ndim, blocksize, dense_ndim, is_compressed, like, make,
    storage_coordinates,
)


def _check_matrix(op: str, s: SparseCompressedTensor, other: Tensor) -> None:
    if batch_ndim(s) or dense_ndim(s):
        raise RuntimeError(f"{op}: the {KIND_NAMES[s.layout]} operand must be a 2-d matrix without batch or dense "
                           f"dimensions, got size {list(s._data.shape)}; take one batch at a time")
    if other.layout is not _layout.strided or other._data.ndim not in (1, 2):
        raise RuntimeError(f"{op}: the other operand must be a dense 1-d or 2-d tensor, got a "
                           f"{other.layout} one of {other._data.ndim} dimensions")
    if s._data.shape[1] != other._data.shape[0]:
        second = "x".join(map(str, other._data.shape))
        raise RuntimeError(f"{op}: mat1 and mat2 shapes cannot be multiplied ({s._data.shape[0]}x{s._data.shape[1]} "
                           f"and {second})")
    if s._val.dtype != other._data.dtype:
        raise RuntimeError(f"{op}: expected both operands to have the same dtype, but got {s.dtype} for the sparse "
                           f"one and {other.dtype} for the dense one; convert one, e.g. d.to(s.dtype)")


def _row_major(s: SparseCompressedTensor) -> tuple:
    """``(indices, values)``: the stored elements as a coalesced COO matrix's, differentiable in the values."""
    if s.layout is _layout.sparse_csr:
        return np.stack(storage_coordinates(s)), values_of(s)  # (CSR's storage order is already row-major)
    c = coo.coalesce(to_coo(s))
    return c._ind, coo.values_of(c)


def row_major_arrays(s: SparseCompressedTensor) -> tuple:
    """``(indices, values)`` as ``_row_major``'s, as arrays (no autograd)."""
    coordinates = np.stack(storage_coordinates(s))
    values = s._val.reshape(-1)
    if s.layout is _layout.sparse_csr:
        return coordinates, values
    order = np.argsort(np.ravel_multi_index(tuple(coordinates), s._data.shape), kind="stable")
    return coordinates[:, order], values[order]


class MMAsDense(coo_grads.MMAsDense):
    """``ember.mm(S, D)`` for a compressed leaf ``S``: its gradient the dense ``grad @ D.T``, as torch's."""

    backward_name = "MmBackward0"  # (a subclass names its node itself)

    @staticmethod
    def forward(ctx, s, dense, transpose):
        ctx.s, ctx.dense, ctx.transpose = s, dense, transpose
        indices, values = row_major_arrays(s)
        return wrap(kernel_product(indices, values, s._data.shape, dense._data, transpose))


def sparse_dense_mm(op: str, s: SparseCompressedTensor, dense: Tensor, masked: bool = False) -> Tensor:
    """``s @ dense``. The gradient of a leaf ``s`` is dense (as torch's ``mm``), unless ``masked``
    (``sparse.mm``): then, as for a tensor made from its values, on its pattern."""
    _check_matrix(op, s, dense)
    vector = dense._data.ndim == 1
    dense = dense.unsqueeze(1) if vector else dense
    if not masked and s._requires_grad and s._grad_fn is None and is_grad_enabled():
        out = MMAsDense.apply(s, dense, False)
    else:
        indices, values = _row_major(s)
        out = SparseDenseMM.apply(values, dense, indices, s._data.shape, False)
    return out.squeeze(1) if vector else out


def matmul(input: Tensor, other: Tensor, op: str = "mm", masked: bool = False) -> Tensor:
    """``input @ other`` with one operand compressed (or both: a compressed result)."""
    if is_compressed(input) and is_compressed(other):
        product = coo_math.sparse_sparse_mm(to_coo(input), to_coo(other))
        return from_coo(product, _layout.sparse_csr)  # as torch: CSR, whatever the operands' layouts
    if is_compressed(input):
        return sparse_dense_mm(op, input, other, masked)
    if other._data.ndim != 2:
        raise RuntimeError(f"{op}: the sparse operand must be a 2-d matrix, got size {list(other._data.shape)}")
    from ember._ops.sparse_compressed_convert import transpose

    if input._data.ndim == 1:
        return sparse_dense_mm(op, transpose(other, 0, 1), input)
    return sparse_dense_mm(op, transpose(other, 0, 1), input.t()).t()


def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta=1, alpha=1, out=None, masked: bool = False) -> Tensor:
    """``beta * input + alpha * (mat1 @ mat2)``; with ``beta == 0`` the input is not read (as torch)."""
    product = matmul(mat1, mat2, "addmm", masked)
    product = product if alpha == 1 else product * alpha
    if beta == 0:
        return product
    if is_compressed(input):
        input = to_dense(input)
    return product + (input if beta == 1 else input * beta)


def mv(input: Tensor, vec: Tensor, *, out=None) -> Tensor:
    if not is_compressed(input) or vec._data.ndim != 1:
        raise RuntimeError(f"mv: expected a compressed matrix and a dense vector, got a {input.layout} one and a "
                           f"{vec._data.ndim}-d one")
    return sparse_dense_mm("mv", input, vec)


def addmv(input: Tensor, mat: Tensor, vec: Tensor, *, beta=1, alpha=1, out=None) -> Tensor:
    product = mv(mat, vec)
    product = product if alpha == 1 else product * alpha
    return product if beta == 0 else product + (input if beta == 1 else input * beta)


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``F.linear`` of a compressed input: ``input @ weight.T + bias``, dense."""
    out = matmul(input, weight.t(), "linear")
    return out if bias is None else out + bias


def _same_layout(op: str, a: SparseCompressedTensor, b: SparseCompressedTensor) -> None:
    if a.layout is not b.layout:
        raise RuntimeError(f"{op}: expected both operands in the same layout, got {a.layout} and {b.layout}; convert "
                           f"one, e.g. b.to_sparse(layout=a.layout)")
    if a._data.shape != b._data.shape:
        raise RuntimeError(f"{op}: expected both operands of one size, got {list(a._data.shape)} and "
                           f"{list(b._data.shape)}")


def add(input: Tensor, other, *, alpha=1, out=None) -> Tensor:
    """``input + alpha * other``: compressed if both are (of one layout), dense if one is dense."""
    if isinstance(other, numbers.Number) or isinstance(input, numbers.Number):
        raise RuntimeError("add: a compressed sparse tensor can only be added to a tensor, not to a number; "
                           "convert it with .to_dense() first")
    if not (is_compressed(input) and is_compressed(other)):
        if coo.is_sparse(input) or coo.is_sparse(other):
            raise RuntimeError("add: cannot add a COO tensor and a compressed one; convert one, e.g. "
                               "b.to_sparse(layout=a.layout)")
        dense_input = to_dense(input) if is_compressed(input) else input
        dense_other = to_dense(other) if is_compressed(other) else other
        return dense_input + (dense_other if alpha == 1 else dense_other * alpha)
    _same_layout("add", input, other)
    other_values = values_of(other) if alpha == 1 else values_of(other) * alpha
    if np.array_equal(input._cidx, other._cidx) and np.array_equal(input._pidx, other._pidx):
        return from_values(values_of(input) + other_values, input, node=C.Add)
    if input.layout in BLOCKED:
        summed = to_dense(input) + to_dense(from_values(other_values, other))
        return from_dense(summed, input.layout, blocksize(input), dense_ndim(input), index_dtype=input._cidx.dtype)
    summed = coo_math.add(to_coo(input), to_coo(from_values(other_values, other)))
    return from_coo(summed, input.layout, index_dtype=input._cidx.dtype)


def sub(input: Tensor, other, *, alpha=1, out=None) -> Tensor:
    return add(input, other, alpha=-alpha)


def mul(input: Tensor, other, *, out=None) -> Tensor:
    """``input * other``: a number scales the values; a tensor of the same size multiplies them elementwise,
    the result on the compressed operand's pattern."""
    if not is_compressed(input):
        input, other = other, input
    if isinstance(other, numbers.Number):
        return from_values(values_of(input) * other, input, node=C.Mul)
    if tuple(other.shape) != tuple(input._data.shape):
        raise RuntimeError(f"mul: expected a tensor of size {list(input._data.shape)} (sparse operands do not "
                           f"broadcast), got {list(other.shape)}")
    product = from_values(values_of(input) * values_on_pattern(other, input), input, node=C.Mul)
    if not is_compressed(other) or input.layout in BLOCKED or np.array_equal(input._cidx, other._cidx) and \
            np.array_equal(input._pidx, other._pidx):
        return product
    return _where_both_store(product, other)


def _where_both_store(product: SparseCompressedTensor, other: SparseCompressedTensor) -> SparseCompressedTensor:
    """The entries of ``product`` (on one operand's pattern) where ``other`` stores one too: as torch, the
    product of two compressed tensors is stored on the intersection of their patterns."""
    shape = product._data.shape
    c = coo.coalesce(to_coo(product))
    kept = np.isin(np.ravel_multi_index(tuple(c._ind), shape),
                   np.ravel_multi_index(storage_coordinates(other), shape))
    values = coo.values_of(c).index_select(0, wrap(np.flatnonzero(kept)))
    both = coo.from_values(values, c._ind[:, kept], shape, True)
    return from_coo(both, product.layout, node=C.Mul, index_dtype=product._cidx.dtype)


def div(input: Tensor, other, *, rounding_mode=None, out=None) -> Tensor:
    if not is_compressed(input) or not isinstance(other, numbers.Number) or rounding_mode is not None:
        raise RuntimeError("div: a compressed sparse tensor can only be divided by a number (without rounding_mode)")
    return from_values(values_of(input) / other, input, node=C.Div)


def neg(input: SparseCompressedTensor, *, out=None) -> SparseCompressedTensor:
    return from_values(-values_of(input), input, node=C.Neg)


def pointwise(function):
    """``function`` on a compressed tensor: applied to its values, the pattern kept (``f(0) == 0``)."""
    def on_values(input, *args, out=None, **kwargs):
        return from_values(function(values_of(input), *args, **kwargs), input)

    return on_values


def power(input, exponent, *, out=None):
    if not is_compressed(input) or not isinstance(exponent, numbers.Number):
        raise RuntimeError("pow: a compressed sparse tensor can only be raised to a number")
    if exponent == 0:
        raise RuntimeError("pow: cannot raise to zeroth power on sparse tensor; it would make the result tensor dense")
    return from_values(values_of(input) ** exponent, input)


def total(input: SparseCompressedTensor, dim=None, keepdim: bool = False, *, dtype=None, out=None) -> Tensor:
    """``s.sum()``: a dense 0-d tensor; ``s.sum(dim, keepdim=True)`` of a CSR matrix: CSR, as torch."""
    if dim is None:
        values = values_of(input)
        return values.sum(dtype=dtype) if dtype is not None else values.sum()
    if not keepdim:
        raise RuntimeError("reduction operations on CSR tensors with keepdim=False is unsupported; pass "
                           "keepdim=True, or sum s.to_dense()")
    if input.layout is not _layout.sparse_csr or input._data.ndim != 2:
        raise RuntimeError(f"sum: over a dimension, only a 2-d CSR matrix is supported, got a "
                           f"{KIND_NAMES[input.layout]} tensor of size {list(input._data.shape)}")
    from ember._ops.sparse_shape import unsqueeze

    if not isinstance(dim, int):
        raise RuntimeError(f"sum: over one dimension of a CSR matrix, got dim={dim}")
    summed = coo_math.sparse_sum(to_coo(input), dim, dtype)  # an entry for every row (column) that stores one
    return from_coo(unsqueeze(summed, dim % 2), _layout.sparse_csr, node=C.SumDim, index_dtype=input._cidx.dtype)


def converted(input: SparseCompressedTensor, dtype) -> SparseCompressedTensor:
    if dtype is None or input.dtype is dtype:
        return input
    return from_values(values_of(input).to(dtype), input, node=C.ToCopy)


def clone(input: SparseCompressedTensor, *, memory_format=None) -> SparseCompressedTensor:
    coo_math.refuse_memory_format("clone", memory_format)
    if not (input._requires_grad and is_grad_enabled()):
        return make(input._cidx.copy(), input._pidx.copy(), input._val.copy(), input._data.shape, input.layout)
    return from_values(values_of(input).clone(), input, node=C.Clone)


def detach(input: SparseCompressedTensor) -> SparseCompressedTensor:
    return like(input, input._val)


def empty_compressed(op: str, shape, dtype, layout, requires_grad: bool = False) -> SparseCompressedTensor:
    """A CSR or CSC tensor of ``shape`` (its leading dimensions batch ones) with no entries."""
    from ember._dtype import defaults, to_dtype

    if layout in BLOCKED:
        raise RuntimeError(f"{op}: expected sparse compressed (non-block) tensor layout but got "
                           f"{KIND_NAMES[layout]}; make a block tensor with t.to_sparse_bsr(blocksize)")
    shape = tuple(int(n) for n in shape)
    if len(shape) < 2:
        raise RuntimeError(f"{op}: a {KIND_NAMES[layout]} tensor has at least 2 dimensions, got size {list(shape)}")
    n = shape[-2] if layout is _layout.sparse_csr else shape[-1]
    np_dtype = (to_dtype(dtype) if dtype is not None else defaults.floating).np
    out = make(np.zeros(shape[:-2] + (n + 1,), np.int64), np.zeros(shape[:-2] + (0,), np.int64),
               np.zeros(shape[:-2] + (0,), np_dtype), shape, layout)
    return out.requires_grad_() if requires_grad else out


def zeros_like(input: SparseCompressedTensor, *, dtype=None, layout=None, device=None, requires_grad: bool = False,
               memory_format=None, pin_memory: bool = False) -> Tensor:
    """A tensor of ``input``'s size with no entries, in its layout or another sparse one (not strided, as torch)."""
    from ember._ops.sparse_shape import empty_of_layout

    if layout is _layout.strided:
        raise RuntimeError(f"zeros_like: expected a sparse layout for a tensor like this {KIND_NAMES[input.layout]} "
                           "one, got ember.strided; use ember.zeros(s.shape, dtype=s.dtype) for dense zeros")
    return empty_of_layout("zeros_like", input._data.shape, dtype or input.dtype, layout or input.layout,
                           requires_grad)


def new_zeros(input: SparseCompressedTensor, *size, dtype=None, device=None, requires_grad: bool = False,
              layout=None, pin_memory: bool = False) -> Tensor:
    """A tensor of ``size`` with no entries, in ``input``'s layout unless ``layout`` is given (dense zeros for
    ``ember.strided``)."""
    from ember._ops.sparse_shape import empty_of_layout

    shape = tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else size
    return empty_of_layout("new_zeros", shape, dtype or input.dtype, layout or input.layout, requires_grad)


def sampled_addmm(input: SparseCompressedTensor, mat1: Tensor, mat2: Tensor, *, beta=1.0, alpha=1.0,
                  out=None) -> SparseCompressedTensor:
    """``beta * input + alpha * (mat1 @ mat2)`` computed only where the CSR ``input`` stores entries."""
    if input.layout is not _layout.sparse_csr:
        raise RuntimeError(f"sampled_addmm: Expected result to have sparse csr layout, but got "
                           f"{KIND_NAMES[input.layout]}; convert it with .to_sparse_csr()")
    if input._data.ndim != 2 or mat1._data.ndim != 2 or mat2._data.ndim != 2:
        raise RuntimeError(f"sampled_addmm: expected 2-d operands, got sizes {list(input._data.shape)}, "
                           f"{list(mat1._data.shape)} and {list(mat2._data.shape)}")
    rows, cols = (wrap(a) for a in storage_coordinates(input))
    sampled = (mat1.index_select(0, rows) * mat2.t().index_select(0, cols)).sum(-1)
    return from_values(values_of(input) * beta + sampled * alpha, input, node=C.SampledAddmm)


def select(input: SparseCompressedTensor, dim: int, index: int) -> Tensor:
    """``s.select(dim, i)`` and ``s[i]``: as the COO tensor ``s`` stands for, so a COO result (as torch)."""
    from ember._ops.sparse_select import select as coo_select

    return coo_select(to_coo(input), dim, index)


def getitem(input: SparseCompressedTensor, key) -> Tensor:
    from ember._ops.sparse_select import getitem as coo_getitem

    return coo_getitem(to_coo(input), key)
