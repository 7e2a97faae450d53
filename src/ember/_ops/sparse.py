"""Sparse COO tensors: the few Functions that cross between sparse and dense, and the ops built on them.

The primitives move values between the two layouts: ``FromValues`` (values to a
sparse tensor), ``Values`` (a coalesced sparse tensor to its values), ``ValuesAt``
(a sparse tensor's values at given coordinates), ``ToDense``, ``ToSparse``,
``Coalesce``, ``Scale`` and ``Transpose``. Everything else (products, sums,
masks, softmax) is a composite of those and of dense ember ops, so it is
differentiable to any order with no backward of its own.

The gradient of a sparse tensor is a tensor of its shape: sparse (on the
tensor's coalesced pattern) where torch gives a sparse one, as for
``sparse.mm`` and ``to_dense``, dense where torch's formula is dense.

The backward formulas here run in the engine, where ember's own formulas are
unseen by ``__torch_function__``: so they call the sparse implementations
directly and never hand a sparse tensor to a dense op.

>>> import ember
>>> i = ember.tensor([[0, 1, 1], [2, 0, 2]])
>>> s = ember.sparse_coo_tensor(i, ember.tensor([3., 4., 5.]), (2, 3))
>>> s.to_dense()
tensor([[0., 0., 3.],
        [4., 0., 5.]])
"""
from __future__ import annotations

import numpy as np

from ember._ops._support import ember_function, wrap
from ember._layout import strided as _strided
from ember._tensor import Tensor
from ember.autograd.function import Function
from ember.sparse._tensor import SparseCooTensor, coalesced_arrays, linear_indices, make


def is_sparse(t) -> bool:
    return type(t) is SparseCooTensor


def as_tensor_grad(grad):
    """A gradient as the formulas here take it: arrays (the engine's first-order pass) become tensors."""
    return wrap(grad) if isinstance(grad, np.ndarray) else grad


def _index_tensors(indices: np.ndarray) -> tuple:
    return tuple(wrap(row) for row in indices)


def coalesced_indices(s: SparseCooTensor) -> np.ndarray:
    return s._ind if s._coalesced else coalesced_arrays(s._ind, s._val, s._data.shape)[0]


class SparseOutput(Function):
    """A Function whose output is sparse: its gradients reach it sparse or dense, as they are (the engine
    densifies a sparse one only for other Functions), and its formula takes them, or arrays, as they come."""

    sparse_outputs = True
    backward_on_arrays = True


class FromValues(SparseOutput):
    """``values`` placed at ``indices``: a sparse tensor (differentiable in the values)."""

    backward_name = "SparseCooTensorWithDimsAndTensorsBackward0"

    @staticmethod
    def forward(ctx, values, indices, shape, coalesced):
        ctx.indices = indices
        return make(indices, values._data, shape, coalesced)

    @staticmethod
    def backward(ctx, grad):
        return values_at(as_tensor_grad(grad), ctx.indices), None, None, None


def from_values(values: Tensor, indices: np.ndarray, shape: tuple, coalesced: bool) -> SparseCooTensor:
    return FromValues.apply(values, indices, tuple(shape), coalesced)


class Values(Function):
    """The values of a coalesced sparse tensor (its gradient: a sparse tensor on the same pattern)."""

    backward_name = "ValuesBackward0"
    backward_on_arrays = True

    @staticmethod
    def forward(ctx, s):
        ctx.indices, ctx.shape = s._ind, s._data.shape
        return wrap(s._val)

    @staticmethod
    def backward(ctx, grad):
        return from_values(as_tensor_grad(grad), ctx.indices, ctx.shape, True)


def values_of(s: SparseCooTensor) -> Tensor:
    """The values of ``s`` once coalesced, differentiable: how the composites read a sparse tensor."""
    return Values.apply(coalesce(s))


class ValuesAt(Function):
    """A sparse tensor's values at the coordinates ``indices`` (zero where it stores none)."""

    backward_name = "SparseMaskBackward0"
    backward_on_arrays = True

    @staticmethod
    def forward(ctx, s, indices):
        shape = s._data.shape
        ctx.indices, ctx.shape = indices, shape
        stored, values = (s._ind, s._val) if s._coalesced else coalesced_arrays(s._ind, s._val, shape)[:2]
        have, want = linear_indices(stored, shape), linear_indices(indices, shape)
        at = np.minimum(np.searchsorted(have, want), max(len(have) - 1, 0))
        found = have[at] == want if len(have) else np.zeros(len(want), bool)
        out = np.zeros((len(want), *values.shape[1:]), values.dtype)
        out[found] = values[at[found]]
        return wrap(out)

    @staticmethod
    def backward(ctx, grad):
        return from_values(as_tensor_grad(grad), ctx.indices, ctx.shape, False), None


def values_at(t: Tensor, indices: np.ndarray) -> Tensor:
    """The entries of ``t`` (sparse or dense) at the coordinates in ``indices``, differentiable."""
    if is_sparse(t):
        return ValuesAt.apply(t, indices)
    return t[_index_tensors(indices)]


class ToDense(Function):
    backward_name = "ToDenseBackward0"
    backward_on_arrays = True

    @staticmethod
    def forward(ctx, s):
        ctx.indices, ctx.shape = coalesced_indices(s), s._data.shape
        out = np.zeros(s._data.shape, s._val.dtype)
        np.add.at(out, tuple(s._ind), s._val)
        return wrap(out)

    @staticmethod
    def backward(ctx, grad):  # as torch: the gradient on the tensor's own pattern
        return from_values(values_at(as_tensor_grad(grad), ctx.indices), ctx.indices, ctx.shape, True)


class ToDenseUnmasked(ToDense):
    """``to_dense(masked_grad=False)``: the gradient is not kept to the tensor's pattern but is the dense one
    made sparse (its nonzero elements, over the tensor's sparse dimensions), as torch's."""

    backward_name = "ToDenseBackward0"

    @staticmethod
    def forward(ctx, s):
        ctx.sparse_dim = s._ind.shape[0]
        return ToDense.forward(ctx, s)

    @staticmethod
    def backward(ctx, grad):
        return ToSparseByDims.apply(as_tensor_grad(grad), ctx.sparse_dim)


def to_dense(s: Tensor, dtype=None, *, masked_grad: bool | None = None) -> Tensor:
    """The tensor as a dense (strided) one; a dense tensor is returned as it is. The gradient of ``s`` stays
    on its pattern unless ``masked_grad=False``.

    >>> import ember
    >>> ember.tensor([[0., 2.]]).to_sparse().to_dense()
    tensor([[0., 2.]])
    """
    if not is_sparse(s):
        if s.layout is not _strided:  # a compressed layout
            from ember._ops.sparse_compressed import to_dense as compressed_to_dense

            return compressed_to_dense(s, dtype, masked_grad=masked_grad)
        return s
    out = (ToDense if masked_grad is not False else ToDenseUnmasked).apply(s)
    return out if dtype is None else out.to(dtype)


def _nonzero_indices(data: np.ndarray, sparse_dim: int) -> np.ndarray:
    """Where a dense array is nonzero over its first ``sparse_dim`` dimensions (any element of a dense slice)."""
    flags = data != 0
    if data.ndim > sparse_dim:
        flags = flags.any(axis=tuple(range(sparse_dim, data.ndim)))
    return np.stack(np.nonzero(flags)).astype(np.int64).reshape(sparse_dim, -1)


class ToSparse(SparseOutput):
    backward_name = "ToSparseBackward1"  # torch's node for to_sparse() and to_sparse(layout=..., dense_dim=...)

    @staticmethod
    def forward(ctx, x, sparse_dim):
        indices = _nonzero_indices(x._data, sparse_dim)
        return make(indices, np.ascontiguousarray(x._data[tuple(indices)]), x._data.shape, True)

    @staticmethod
    def backward(ctx, grad):
        grad = as_tensor_grad(grad)
        return (to_dense(grad) if is_sparse(grad) else grad), None


class ToSparseByDims(ToSparse):
    """The same conversion called as ``to_sparse(sparse_dim)``, torch's other overload, whose node it names."""

    backward_name = "ToSparseBackward0"


def to_sparse(x: Tensor, sparse_dim: int | None = None, *, layout=None, blocksize=None, dense_dim=None) -> Tensor:
    """A sparse COO tensor holding the nonzero entries of ``x`` (over its first ``sparse_dim`` dimensions).

    >>> import ember
    >>> ember.tensor([[0., 2.], [3., 0.]]).to_sparse().indices()
    tensor([[0, 1],
            [1, 0]])
    """
    from ember._layout import sparse_coo, strided

    if layout is not None and layout is not sparse_coo and layout is not strided:
        from ember._ops.sparse_compressed_convert import to_sparse as to_compressed

        return to_compressed(x, sparse_dim, layout=layout, blocksize=blocksize, dense_dim=dense_dim)
    if is_sparse(x):
        return x
    ndim = x._data.ndim
    conversion = ToSparse if sparse_dim is None else ToSparseByDims
    if sparse_dim is None:
        sparse_dim = ndim if dense_dim is None else ndim - dense_dim
    if not 0 < sparse_dim <= ndim if ndim else sparse_dim != 0:
        raise RuntimeError(f"to_sparse: sparse_dim must be in [1, {ndim}] for a {ndim}-d tensor, got {sparse_dim}")
    return conversion.apply(x, sparse_dim)


def to_sparse_coo(x: Tensor) -> Tensor:
    """``to_sparse()``: the COO layout, every dimension sparse."""
    return to_sparse(x)


class Coalesce(SparseOutput):
    """Duplicate coordinates summed, coordinates sorted: the same tensor, so its gradient passes unchanged."""

    backward_name = "CoalesceBackward0"

    @staticmethod
    def forward(ctx, s):
        indices, values, _ = coalesced_arrays(s._ind, s._val, s._data.shape)
        return make(indices, values, s._data.shape, True)

    @staticmethod
    def backward(ctx, grad):
        return as_tensor_grad(grad)


def coalesce(s: SparseCooTensor) -> SparseCooTensor:
    return s if s._coalesced else Coalesce.apply(s)


class Scale(SparseOutput):
    """``s * number``: the same coordinates, the values scaled (``neg`` is a scale by -1)."""

    backward_name = "MulBackward0"

    @staticmethod
    def forward(ctx, s, factor):
        ctx.factor = factor
        values = s._val * np.asarray(factor, s._val.dtype) if s._val.dtype.kind != "b" else s._val & bool(factor)
        return make(s._ind, values, s._data.shape, s._coalesced)

    @staticmethod
    def backward(ctx, grad):
        return scale(as_tensor_grad(grad), ctx.factor), None


class Negate(Scale):
    backward_name = "NegBackward0"


class Clone(Scale):
    """A copy (a scale by 1, recorded under torch's name for it)."""

    backward_name = "CloneBackward0"


def scale(t: Tensor, factor) -> Tensor:
    """``t * factor`` for a sparse or dense ``t``."""
    return Scale.apply(t, factor) if is_sparse(t) else t * factor


class Transpose(SparseOutput):
    backward_name = "TransposeBackward0"

    @staticmethod
    def forward(ctx, s, dim0, dim1):
        ctx.dims = (dim0, dim1)
        order = list(range(s._data.ndim))
        order[dim0], order[dim1] = dim1, dim0
        indices = s._ind[order]
        return make(indices, s._val, tuple(s._data.shape[d] for d in order), False)

    @staticmethod
    def backward(ctx, grad):
        return transpose(as_tensor_grad(grad), *ctx.dims), None, None


def transpose(t: Tensor, dim0: int, dim1: int) -> Tensor:
    if not is_sparse(t):
        return t.transpose(dim0, dim1)
    ndim, sparse_dim = t._data.ndim, t._ind.shape[0]
    dim0, dim1 = dim0 % max(ndim, 1), dim1 % max(ndim, 1)
    if max(dim0, dim1) >= sparse_dim:
        raise RuntimeError(f"transpose: of a sparse tensor, only its sparse dimensions (0 to {sparse_dim - 1}) can "
                           f"be swapped, got {dim0} and {dim1}; call .to_dense() first")
    return Transpose.apply(t, dim0, dim1)


@ember_function
def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None, pin_memory: bool = False,
                      requires_grad: bool = False, check_invariants: bool | None = None,
                      is_coalesced: bool | None = None) -> Tensor:
    """A sparse COO tensor with ``values`` at the coordinates in the columns of ``indices``.

    ``indices`` is ``(sparse_dim, nnz)``; ``values`` is ``(nnz, *dense_shape)``. Without ``size``,
    each sparse dimension is one more than its largest index. The invariants are always checked.

    >>> import ember
    >>> ember.sparse_coo_tensor([[0, 2]], [1., 5.], (4,)).to_dense()
    tensor([1., 0., 5., 0.])
    """
    from ember.sparse._construct import checked_parts

    index_array, values, shape = checked_parts(indices, values, size, dtype)
    if requires_grad:  # as a factory: a leaf of its own
        leaf = make(index_array, values._data, shape, bool(is_coalesced))
        leaf._requires_grad = True
        return leaf
    return from_values(values, index_array, shape, bool(is_coalesced))


def embedding_sparse_backward(grad: Tensor, indices: Tensor, rows: int, padding_idx: int | None,
                              scale_grad_by_freq: bool) -> SparseCooTensor:
    """An embedding's weight gradient as torch gives it with ``sparse=True``: one entry per looked-up index
    (uncoalesced, the padding row left out), its row of the output's gradient as the values."""
    if scale_grad_by_freq:
        raise RuntimeError("embedding_backward: scale_grad_by_freq not supported with sparse gradients; "
                           "use sparse=False, or drop scale_grad_by_freq")
    flat = indices._data.reshape(-1).astype(np.int64)
    grad_rows = grad.reshape(flat.shape[0], grad.shape[-1])
    if padding_idx is not None:
        kept = np.flatnonzero(flat != padding_idx)
        flat, grad_rows = flat[kept], grad_rows.index_select(0, wrap(kept))
    return from_values(grad_rows, flat[None], (rows, grad.shape[-1]), False)
