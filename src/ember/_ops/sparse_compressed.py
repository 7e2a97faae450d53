"""Compressed sparse tensors (CSR, CSC, BSR, BSC): the three Functions that cross between them and dense
tensors, and the constructors.

``FromValues`` makes a compressed tensor from its values (differentiable in them), ``Values`` reads them
back, ``ToDense`` scatters them into a dense tensor. Every other compressed op (conversions, products,
sums, arithmetic) is a composite of these and of dense ember ops, so it is differentiable to any order.
A compressed tensor's gradient is compressed, on the tensor's own pattern, as torch's ``to_dense`` and
``values`` give it.

>>> import ember
>>> s = ember.sparse_csr_tensor([0, 2, 3], [0, 2, 1], [1., 2., 3.])
>>> s.to_dense()
tensor([[1., 0., 2.],
        [0., 3., 0.]])
"""
from __future__ import annotations

import numpy as np

from ember import _layout
from ember._ops._support import ember_function, wrap
from ember._ops.sparse import SparseOutput, as_tensor_grad
from ember._tensor import Tensor
from ember.autograd.function import Function
from ember.sparse._compressed import (
    SparseCompressedTensor, element_shape, is_compressed, like, make, storage_coordinates,
)


def pattern_of(s: SparseCompressedTensor) -> SparseCompressedTensor:
    """A tensor with ``s``'s indices, shape and layout and no autograd history: what a gradient is laid on."""
    return like(s, s._val)


def _same_pattern(a: SparseCompressedTensor, b: SparseCompressedTensor) -> bool:
    if a.layout is not b.layout or a._data.shape != b._data.shape or a._val.shape != b._val.shape:
        return False
    return (a._cidx is b._cidx or np.array_equal(a._cidx, b._cidx)) and \
        (a._pidx is b._pidx or np.array_equal(a._pidx, b._pidx))


def values_on_pattern(t: Tensor, pattern: SparseCompressedTensor) -> Tensor:
    """The entries of ``t`` (dense, or sparse of any layout) where ``pattern`` stores elements, shaped as its
    values: differentiable."""
    if is_compressed(t) and _same_pattern(t, pattern):
        return Values.apply(t)
    if t.layout is not _layout.strided:
        from ember._ops.sparse import to_dense as any_to_dense

        t = any_to_dense(t)
    coordinates = tuple(wrap(c) for c in storage_coordinates(pattern))
    return t[coordinates].reshape(pattern._val.shape)


class FromValues(SparseOutput):
    """``values`` laid on ``pattern``'s indices: a compressed tensor (differentiable in the values)."""

    backward_name = "SparseCompressedTensorBackward0"

    @staticmethod
    def forward(ctx, values, pattern):
        ctx.pattern = like(pattern, values._data)  # not the output itself: the graph would hold a cycle
        return like(pattern, values._data)

    @staticmethod
    def backward(ctx, grad):
        return values_on_pattern(as_tensor_grad(grad), ctx.pattern), None


# FromValues under the names torch's nodes have, for the ops whose result it makes (``grad_fn`` shows them)
class ToSparseCsr(FromValues):
    backward_name = "ToSparseCsrBackward0"


class ToSparseCsc(FromValues):
    backward_name = "ToSparseCscBackward0"


class ToSparseBsr(FromValues):
    backward_name = "ToSparseBsrBackward0"


class ToSparseBsc(FromValues):
    backward_name = "ToSparseBscBackward0"


class Mul(FromValues):
    backward_name = "MulBackward0"


class Div(FromValues):
    backward_name = "DivBackward0"


class Add(FromValues):
    backward_name = "AddBackward0"


class Neg(FromValues):
    backward_name = "NegBackward0"


class Clone(FromValues):
    backward_name = "CloneBackward0"


class ToCopy(FromValues):
    backward_name = "ToCopyBackward0"


class T(FromValues):
    backward_name = "TBackward0"


class SumDim(FromValues):
    backward_name = "SumBackward1"


class SampledAddmm(FromValues):
    backward_name = "SparseSampledAddmmBackward0"


def from_values(values: Tensor, pattern: SparseCompressedTensor, shape=None, layout=None,
                node=FromValues) -> SparseCompressedTensor:
    """A compressed tensor with ``pattern``'s indices (and its shape and layout unless given) and ``values``,
    made by ``node`` (``FromValues`` or one of its named forms)."""
    if shape is not None or layout is not None:
        pattern = like(pattern, pattern._val, shape, layout)
    return node.apply(values, pattern)


class Values(Function):
    """The values of a compressed tensor (their gradient: a compressed tensor on the same pattern)."""

    backward_name = "ValuesBackward0"
    backward_on_arrays = True

    @staticmethod
    def forward(ctx, s):
        ctx.pattern = pattern_of(s)
        return wrap(s._val)

    @staticmethod
    def backward(ctx, grad):
        return from_values(as_tensor_grad(grad), ctx.pattern)


def values_of(s: SparseCompressedTensor) -> Tensor:
    """The values of ``s``, differentiable: how the composites read a compressed tensor."""
    return Values.apply(s)


class ToDense(Function):
    backward_name = "ToDenseBackward0"
    backward_on_arrays = True

    @staticmethod
    def forward(ctx, s):
        ctx.pattern = pattern_of(s)
        out = np.zeros(s._data.shape, s._val.dtype)
        out[storage_coordinates(s)] = s._val.reshape(element_shape(s))
        return wrap(out)

    @staticmethod
    def backward(ctx, grad):  # as torch: the gradient on the tensor's own pattern
        return from_values(values_on_pattern(as_tensor_grad(grad), ctx.pattern), ctx.pattern)


class ToDenseUnmasked(ToDense):
    """``to_dense(masked_grad=False)``: the gradient is the dense one made sparse in the tensor's layout (its
    nonzero elements), not kept to the tensor's pattern, as torch's."""

    backward_name = "ToDenseBackward0"

    @staticmethod
    def backward(ctx, grad):
        from ember.sparse._compressed import BLOCKED, blocksize, dense_ndim

        pattern = ctx.pattern
        block = blocksize(pattern) if pattern.layout in BLOCKED else None
        return as_tensor_grad(grad).to_sparse(layout=pattern.layout, blocksize=block, dense_dim=dense_ndim(pattern))


def to_dense(s: SparseCompressedTensor, dtype=None, *, masked_grad: bool | None = None) -> Tensor:
    out = (ToDense if masked_grad is not False else ToDenseUnmasked).apply(s)
    return out if dtype is None else out.to(dtype)


def _build(compressed, plain, values, size, dtype, layout, requires_grad: bool, op: str) -> SparseCompressedTensor:
    from ember.sparse._compressed_construct import checked_parts

    if layout not in _layout.COMPRESSED:
        got = "none" if layout is None else {"strided": "Strided", "sparse_coo": "Sparse"}.get(
            getattr(layout, "name", ""), repr(layout))
        raise RuntimeError(f"{op} expected sparse compressed tensor layout but got {got}; pass "
                           "layout=ember.sparse_csr, ember.sparse_csc, ember.sparse_bsr or ember.sparse_bsc")
    c, p, values, shape = checked_parts(compressed, plain, values, size, dtype, layout)
    pattern = make(c, p, values._data, shape, layout)
    if requires_grad:  # as a factory: a leaf of its own
        pattern.requires_grad_()
        return pattern
    return from_values(values, pattern)


@ember_function
def sparse_compressed_tensor(compressed_indices, plain_indices, values, size=None, *, dtype=None, layout=None,
                             device=None, pin_memory: bool = False, requires_grad: bool = False,
                             check_invariants: bool | None = None) -> Tensor:
    """A compressed sparse tensor of ``layout`` (``ember.sparse_csr``, ``sparse_csc``, ``sparse_bsr`` or
    ``sparse_bsc``) from its compressed indices, plain indices and values. The invariants are always checked.

    >>> import ember
    >>> ember.sparse_compressed_tensor([0, 1, 2], [1, 0], [5., 6.], layout=ember.sparse_csc).to_dense()
    tensor([[0., 6.],
            [5., 0.]])
    """
    return _build(compressed_indices, plain_indices, values, size, dtype, layout, requires_grad,
                  "sparse_compressed_tensor")


@ember_function
def sparse_csr_tensor(crow_indices, col_indices, values, size=None, *, dtype=None, device=None,
                      pin_memory: bool = False, requires_grad: bool = False,
                      check_invariants: bool | None = None) -> Tensor:
    """A CSR tensor: row ``i``'s entries are ``values[crow_indices[i]:crow_indices[i + 1]]``, in the columns
    ``col_indices[crow_indices[i]:crow_indices[i + 1]]``. Without ``size``, one column more than the largest.

    >>> import ember
    >>> ember.sparse_csr_tensor([0, 2, 3], [0, 2, 1], [1., 2., 3.]).to_dense()
    tensor([[1., 0., 2.],
            [0., 3., 0.]])
    """
    return _build(crow_indices, col_indices, values, size, dtype, _layout.sparse_csr, requires_grad,
                  "sparse_csr_tensor")


@ember_function
def sparse_csc_tensor(ccol_indices, row_indices, values, size=None, *, dtype=None, device=None,
                      pin_memory: bool = False, requires_grad: bool = False,
                      check_invariants: bool | None = None) -> Tensor:
    """A CSC tensor: column ``j``'s entries are ``values[ccol_indices[j]:ccol_indices[j + 1]]``, in the rows
    ``row_indices[ccol_indices[j]:ccol_indices[j + 1]]``.

    >>> import ember
    >>> ember.sparse_csc_tensor([0, 1, 3], [1, 0, 1], [1., 2., 3.]).to_dense()
    tensor([[0., 2.],
            [1., 3.]])
    """
    return _build(ccol_indices, row_indices, values, size, dtype, _layout.sparse_csc, requires_grad,
                  "sparse_csc_tensor")


@ember_function
def sparse_bsr_tensor(crow_indices, col_indices, values, size=None, *, dtype=None, device=None,
                      pin_memory: bool = False, requires_grad: bool = False,
                      check_invariants: bool | None = None) -> Tensor:
    """A BSR tensor: CSR over blocks, each entry of ``values`` one ``(block_rows, block_cols)`` block.

    >>> import ember
    >>> ember.sparse_bsr_tensor([0, 1, 1], [1], [[[1., 2.], [3., 4.]]], (4, 4)).to_dense()
    tensor([[0., 0., 1., 2.],
            [0., 0., 3., 4.],
            [0., 0., 0., 0.],
            [0., 0., 0., 0.]])
    """
    return _build(crow_indices, col_indices, values, size, dtype, _layout.sparse_bsr, requires_grad,
                  "sparse_bsr_tensor")


@ember_function
def sparse_bsc_tensor(ccol_indices, row_indices, values, size=None, *, dtype=None, device=None,
                      pin_memory: bool = False, requires_grad: bool = False,
                      check_invariants: bool | None = None) -> Tensor:
    """A BSC tensor: CSC over blocks, each entry of ``values`` one ``(block_rows, block_cols)`` block.

    >>> import ember
    >>> ember.sparse_bsc_tensor([0, 0, 1], [0], [[[1., 2.]]], (1, 4)).to_dense()
    tensor([[0., 0., 1., 2.]])
    """
    return _build(ccol_indices, row_indices, values, size, dtype, _layout.sparse_bsc, requires_grad,
                  "sparse_bsc_tensor")
