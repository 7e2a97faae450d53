"""Arithmetic on sparse COO tensors, composed of the primitives in ``sparse.py`` and dense ember ops.

Being composites, these are differentiable to any order with no backward of their own.

>>> import ember
>>> s = ember.tensor([[0., 2.], [3., 0.]]).to_sparse()
>>> ember.sparse.mm(s, ember.ones(2, 1))
tensor([[2.],
        [3.]])
"""
from __future__ import annotations

import numbers

import numpy as np

from ember._ops._support import wrap
from ember._ops.sparse import (
    Clone, Negate, coalesce, coalesced_indices, from_values, is_sparse, scale, to_dense, transpose, values_at, values_of,
)
from ember._ops.sparse_dense_grads import AddToDense, SumAsDense, dense_mm_as_dense, mm_as_dense, mul_by_dense
from ember._ops.sparse_product import SparseDenseMM
from ember._tensor import Tensor
from ember.autograd.grad_mode import is_grad_enabled
from ember.sparse._tensor import SparseCooTensor, linear_indices, make


def _dense_dim(s: SparseCooTensor) -> int:
    return s._val.ndim - 1


def _check_matrix(op: str, s: SparseCooTensor, other: Tensor, sparse_first: bool = True) -> None:
    """``s @ other`` (or ``other @ s``): a 2-d sparse matrix, a dense 1-d or 2-d operand, matching sizes and dtype."""
    if s._data.ndim != 2 or _dense_dim(s) != 0:
        raise RuntimeError(f"{op}: the sparse operand must be a 2-d matrix with two sparse dimensions, got size "
                           f"{list(s._data.shape)} with {s._ind.shape[0]} sparse dimensions")
    if is_sparse(other) or other._data.ndim not in (1, 2):
        raise RuntimeError(f"{op}: the other operand must be a dense 1-d or 2-d tensor, got "
                           f"{'a sparse' if is_sparse(other) else f'a {other._data.ndim}-d'} one")
    first, second = (s._data.shape, other._data.shape) if sparse_first else (other._data.shape, s._data.shape)
    if first[-1] != second[0]:
        raise RuntimeError(f"{op}: mat1 and mat2 shapes cannot be multiplied ({'x'.join(map(str, first))} and "
                           f"{'x'.join(map(str, second))})")
    if s._val.dtype != other._data.dtype:
        raise RuntimeError(f"{op}: expected both operands to have the same dtype, but got {s.dtype} for the sparse "
                           f"one and {other.dtype} for the dense one; convert one, e.g. d.to(s.dtype)")


def sparse_dense_mm(op: str, s: SparseCooTensor, dense: Tensor) -> Tensor:
    """``s @ dense``: each stored entry scales a row of ``dense`` and adds it into its row of the result."""
    _check_matrix(op, s, dense)
    s = coalesce(s)
    vector = dense._data.ndim == 1
    out = SparseDenseMM.apply(values_of(s), dense.unsqueeze(1) if vector else dense, s._ind, s._data.shape, False)
    return out.squeeze(1) if vector else out


def dense_sparse_mm(op: str, dense: Tensor, s: SparseCooTensor) -> Tensor:
    """``dense @ s``, as ``(s.t() @ dense.t()).t()``."""
    if dense._data.ndim == 1:
        return sparse_dense_mm(op, transpose(s, 0, 1), dense)
    return sparse_dense_mm(op, transpose(s, 0, 1), dense.t()).t()


def sparse_sparse_mm(a: SparseCooTensor, b: SparseCooTensor) -> SparseCooTensor:
    """``a @ b`` for two sparse matrices, sparse and coalesced: every stored ``a[i, k]`` meets every stored
    ``b[k, j]``. A composite, so both gradients are sparse, on each operand's pattern."""
    from ember._ops.sparse_select import matching

    for name, t in (("mat1", a), ("mat2", b)):
        if t._data.ndim != 2 or _dense_dim(t) != 0:
            raise RuntimeError(f"mm: {name} must be a 2-d sparse matrix, got size {list(t._data.shape)}")
    if a._data.shape[1] != b._data.shape[0]:
        raise RuntimeError(f"mm: mat1 and mat2 shapes cannot be multiplied ({a._data.shape[0]}x{a._data.shape[1]} "
                           f"and {b._data.shape[0]}x{b._data.shape[1]})")
    if a._val.dtype != b._val.dtype:
        raise RuntimeError(f"mm: expected both operands to have the same dtype, but got {a.dtype} and {b.dtype}")
    a, b = coalesce(a), coalesce(b)
    left, right = matching(a._ind[1], b._ind[0])  # b is coalesced: its rows are sorted
    values = values_of(a).index_select(0, wrap(left)) * values_of(b).index_select(0, wrap(right))
    indices = np.stack([a._ind[0][left], b._ind[1][right]])
    return coalesce(from_values(values, indices, (a._data.shape[0], b._data.shape[1]), False))


def matmul(input: Tensor, other: Tensor, masked: bool = False) -> Tensor:
    """``input @ other``, one of them sparse. The gradient of the sparse one: on its pattern if ``masked``
    (``sparse.mm``), else dense (``ember.mm``, ``@``), as torch gives each."""
    if is_sparse(input) and is_sparse(other):
        return sparse_sparse_mm(input, other)
    if is_sparse(input):
        _check_matrix("mm", input, other)
        return sparse_dense_mm("mm", input, other) if masked else mm_as_dense(input, other)
    _check_matrix("mm", other, input, sparse_first=False)
    return dense_sparse_mm("mm", input, other) if masked else dense_mm_as_dense(input, other)


def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta=1, alpha=1, masked: bool = False) -> Tensor:
    product = matmul(mat1, mat2, masked)
    if alpha != 1:
        product = product * alpha
    input = to_dense(input)
    if beta == 0:  # as torch: input is ignored, nan and inf in it do not propagate
        return product + input.new_zeros(()).expand_as(input)
    return product + (input if beta == 1 else input * beta)


def smm(input: SparseCooTensor, mat: Tensor) -> SparseCooTensor:
    """``input @ mat`` as a sparse tensor: every column of each row ``input`` stores, as torch stores it."""
    product = sparse_dense_mm("smm", input, mat)
    rows = np.unique(input._ind[0])
    columns = product._data.shape[1]
    indices = np.stack([np.repeat(rows, columns), np.tile(np.arange(columns), len(rows))]).astype(np.int64)
    return from_values(product.index_select(0, wrap(rows)).reshape(-1), indices, product._data.shape, True)


def sspaddmm(input: SparseCooTensor, mat1: SparseCooTensor, mat2: Tensor, *, beta=1, alpha=1) -> SparseCooTensor:
    """``beta * input + alpha * (mat1 @ mat2)`` as a sparse tensor: ``input``'s entries, then the product's
    (uncoalesced, as torch leaves them)."""
    from ember import cat

    if not (is_sparse(input) and is_sparse(mat1)) or is_sparse(mat2):
        raise RuntimeError("sspaddmm: expected input and mat1 sparse and mat2 dense")
    product = smm(mat1, mat2)
    if input._data.shape != product._data.shape:
        raise RuntimeError(f"sspaddmm: input has size {list(input._data.shape)} but mat1 @ mat2 has size "
                           f"{list(product._data.shape)}")
    s = coalesce(input)
    values = cat([values_of(s) * beta, values_of(product) * alpha])
    return from_values(values, np.concatenate([s._ind, product._ind], axis=1), product._data.shape, False)


def spdiags(diagonals: Tensor, offsets: Tensor, shape: tuple, layout=None) -> SparseCooTensor:
    """A sparse matrix of ``shape`` with row ``d`` of ``diagonals`` on diagonal ``offsets[d]`` (0 the main one,
    above it positive); the value in column ``j`` is ``diagonals[d, j]``."""
    rows_, cols_, which, where = [], [], [], []
    for d, offset in enumerate(np.asarray(offsets._data).reshape(-1).tolist()):
        cols = np.arange(max(offset, 0), min(shape[1], shape[0] + offset, diagonals._data.shape[1]))
        rows_.append(cols - offset)
        cols_.append(cols)
        which.append(np.full(len(cols), d))
        where.append(cols)
    indices = np.stack([np.concatenate(rows_), np.concatenate(cols_)]).astype(np.int64)
    values = diagonals[wrap(np.concatenate(which).astype(np.int64)), wrap(np.concatenate(where).astype(np.int64))]
    return from_values(values, indices, tuple(shape), False)


def hspmm(mat1: SparseCooTensor, mat2: Tensor) -> SparseCooTensor:
    """``mat1 @ mat2`` as a hybrid sparse tensor: one sparse dimension (the rows ``mat1`` stores), dense rows."""
    product = sparse_dense_mm("hspmm", mat1, mat2)
    rows = np.unique(mat1._ind[0])
    return from_values(product.index_select(0, wrap(rows)), rows[None], product._data.shape, True)


def add(input: Tensor, other, *, alpha=1) -> Tensor:
    if isinstance(other, numbers.Number):
        raise RuntimeError("add: adding a number to a sparse tensor would fill every entry; use s.to_dense() + n")
    if is_sparse(input) and not is_sparse(other):
        raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")
    if input._data.shape != other._data.shape:
        raise RuntimeError(f"add: a sparse operand needs the other of the same size, got {list(input._data.shape)} "
                           f"and {list(other._data.shape)}")
    if not is_sparse(input):
        return AddToDense.apply(input, other, alpha)
    return _sparse_sum(input, other if alpha == 1 else scale(other, alpha))


def _sparse_sum(a: SparseCooTensor, b: SparseCooTensor) -> SparseCooTensor:
    """``a + b``: their entries side by side, coalesced (each one's gradient reaches it)."""
    from ember import cat

    if a._ind.shape[0] != b._ind.shape[0]:
        raise RuntimeError(f"add: sparse tensors need the same number of sparse dimensions, got {a._ind.shape[0]} "
                           f"and {b._ind.shape[0]}")
    a, b = coalesce(a), coalesce(b)
    values = cat([values_of(a), values_of(b)])  # (promoted, as torch adds them)
    return coalesce(from_values(values, np.concatenate([a._ind, b._ind], axis=1), a._data.shape, False))


def sub(input: Tensor, other, *, alpha=1) -> Tensor:
    return add(input, other, alpha=-alpha)


def mul(input: Tensor, other) -> Tensor:
    """Elementwise: by a number, or by a tensor of the same size (the result keeps the sparse one's pattern)."""
    if isinstance(other, numbers.Number) or (isinstance(other, Tensor) and not is_sparse(other)
                                             and other._data.ndim == 0):
        sparse, factor = (input, other) if is_sparse(input) else (other, input)
        if isinstance(factor, Tensor) and factor._requires_grad:  # the factor's gradient too: through the values
            s = coalesce(sparse)
            return from_values(values_of(s) * factor, s._ind, s._data.shape, True)
        return scale(sparse, factor.item() if isinstance(factor, Tensor) else factor)
    sparse, other = (input, other) if is_sparse(input) else (other, input)
    if sparse._data.shape != other._data.shape:
        raise RuntimeError(f"mul: a sparse tensor multiplies a tensor of its own size, got {list(sparse._data.shape)}"
                           f" and {list(other._data.shape)}")
    if not is_sparse(other):
        return mul_by_dense(sparse, other)
    sparse = coalesce(sparse)
    values = values_of(sparse) * values_at(other, sparse._ind)
    return from_values(values, sparse._ind, sparse._data.shape, True)


def neg(input: SparseCooTensor) -> SparseCooTensor:
    return Negate.apply(input, -1)


def total(input: SparseCooTensor, *, dtype=None) -> Tensor:
    """``s.sum()``: the sum of the stored values, a dense 0-d tensor (its gradient dense, as torch's)."""
    return SumAsDense.apply(input, dtype)


def sparse_sum(input: SparseCooTensor, dim=None, dtype=None) -> Tensor:
    """The sum over ``dim``: sparse while sparse dimensions remain, dense once all are summed."""
    if dim is None:  # as torch's sparse.sum: the gradient stays on the pattern
        values = values_of(input)
        return values.sum(dtype=dtype) if dtype is not None else values.sum()
    ndim, sparse_dim = input._data.ndim, input._ind.shape[0]
    dims = sorted({d % ndim for d in ((dim,) if isinstance(dim, int) else dim)})
    values = values_of(input)
    if dtype is not None:
        values = values.to(dtype)
    dense_axes = [d - sparse_dim + 1 for d in dims if d >= sparse_dim]
    if dense_axes:
        values = values.sum(dense_axes)
    keep = [d for d in range(sparse_dim) if d not in dims]
    shape = tuple(n for d, n in enumerate(input._data.shape) if d not in dims)
    if not keep:
        return values.sum(0)
    return coalesce(from_values(values, coalesce(input)._ind[keep], shape, False))


def sparse_mask(input: Tensor, mask: SparseCooTensor) -> SparseCooTensor:
    """The entries of ``input`` at the coordinates ``mask`` stores (coalesced), as a sparse tensor."""
    if not is_sparse(mask):
        raise RuntimeError(f"sparse_mask: mask must be a sparse COO tensor, got layout {mask.layout}")
    if input._data.shape != mask._data.shape:
        raise RuntimeError(f"sparse_mask: expected input and mask of the same size, got {list(input._data.shape)} "
                           f"and {list(mask._data.shape)}")
    indices = coalesced_indices(mask)
    return from_values(values_at(input, indices), indices, mask._data.shape, True)


def _segments(s: SparseCooTensor, dim: int) -> Tensor:
    """For each stored entry of coalesced ``s``, the number of its slice along ``dim`` (the other coordinates)."""
    others = [d for d in range(s._ind.shape[0]) if d != dim]
    shape = tuple(s._data.shape[d] for d in others)
    _, group = np.unique(linear_indices(s._ind[others], shape), return_inverse=True)
    return wrap(group.reshape(-1))


def _softmax_parts(input: SparseCooTensor, dim: int, dtype) -> tuple:
    from ember._creation import zeros

    ndim = input._data.ndim
    dim = dim % ndim
    if dim >= input._ind.shape[0]:
        raise RuntimeError("softmax: along a dense dimension of a sparse tensor is not supported; use a sparse one")
    s = coalesce(input)
    values = values_of(s) if dtype is None else values_of(s).to(dtype)
    group = _segments(s, dim)
    count = int(group._data.max()) + 1 if group._data.size else 0
    most = zeros(count, dtype=values.dtype).scatter_reduce(0, group, values.detach(), "amax", include_self=False)
    shifted = values - most.index_select(0, group)
    sums = zeros(count, dtype=values.dtype).index_add(0, group, shifted.exp())
    return s, shifted, sums.index_select(0, group)


def softmax(input: SparseCooTensor, dim: int, dtype=None) -> SparseCooTensor:
    """Softmax over the stored entries of each slice along ``dim`` (entries not stored count as absent, not 0)."""
    s, shifted, sums = _softmax_parts(input, dim, dtype)
    return from_values(shifted.exp() / sums, s._ind, s._data.shape, True)


def log_softmax(input: SparseCooTensor, dim: int, dtype=None) -> SparseCooTensor:
    s, shifted, sums = _softmax_parts(input, dim, dtype)
    return from_values(shifted - sums.log(), s._ind, s._data.shape, True)


def sampled_addmm(input: SparseCooTensor, mat1: Tensor, mat2: Tensor, *, beta=1.0, alpha=1.0) -> SparseCooTensor:
    """``beta * input + alpha * (mat1 @ mat2)`` computed only where ``input`` stores entries."""
    if not is_sparse(input):
        raise RuntimeError(f"sampled_addmm: input must be a sparse tensor, got layout {input.layout}")
    s = coalesce(input)
    rows, cols = wrap(s._ind[0]), wrap(s._ind[1])
    sampled = (mat1.index_select(0, rows) * mat2.t().index_select(0, cols)).sum(-1)
    return from_values(values_of(s) * beta + sampled * alpha, s._ind, s._data.shape, True)


def converted(input: SparseCooTensor, dtype) -> SparseCooTensor:
    """The tensor with its values in ``dtype`` (the same coordinates)."""
    from ember._ops.sparse import FromValues

    if dtype is None or dtype is input.dtype:
        return input
    s = coalesce(input)
    return FromValues.apply(values_of(s).to(dtype), s._ind, s._data.shape, True)


def detach(input: SparseCooTensor) -> SparseCooTensor:
    return make(input._ind, input._val, input._data.shape, input._coalesced)


def refuse_memory_format(op: str, memory_format) -> None:
    """A sparse tensor has no strides to lay out: torch refuses any memory_format given to its clone."""
    if memory_format is not None:
        raise RuntimeError(f"{op}: unsupported memory format option {memory_format} for a sparse tensor; leave "
                           "memory_format out")


def clone(input: SparseCooTensor, *, memory_format=None) -> SparseCooTensor:
    refuse_memory_format("clone", memory_format)
    if not (input._requires_grad and is_grad_enabled()):
        return make(input._ind.copy(), input._val.copy(), input._data.shape, input._coalesced)
    return Clone.apply(input, 1)


def gradient_sum(a: Tensor, b: Tensor) -> Tensor:
    """Two gradients of one tensor, one at least sparse: sparse if both are, else dense (as autograd sums them)."""
    if is_sparse(a) and is_sparse(b):
        if is_grad_enabled():  # create_graph: the sum is recorded, so it takes the differentiable way
            return _sparse_sum(a, b)
        if (a._coalesced and b._coalesced) or a._data.dtype != b._data.dtype or a._ind.shape[0] != b._ind.shape[0]:
            return _sparse_sum(a, b)  # as torch: two coalesced gradients merge into one
        # as torch accumulates uncoalesced ones: the entries side by side (no sort on every backward)
        return make(np.concatenate([a._ind, b._ind], axis=1), np.concatenate([a._val, b._val]), a._data.shape, False)
    return (to_dense(a) if is_sparse(a) else a) + (to_dense(b) if is_sparse(b) else b)


# The elementwise ops that keep zeros zero (f(0) == 0), so a sparse tensor keeps its pattern: torch's list.
ZERO_PRESERVING = (
    "abs absolute asin arcsin asinh arcsinh atan arctan atanh arctanh ceil deg2rad erf erfinv expm1 floor frac log1p "
    "rad2deg round sgn sign signbit sin sinh sqrt square tan tanh trunc fix nan_to_num relu isnan isinf isposinf "
    "isneginf"
).split()


def pointwise(function):
    """``function`` on a sparse tensor: applied to its stored values (once coalesced), the pattern kept."""
    def on_values(input, *args, out=None, **kwargs):
        s = coalesce(input)
        return from_values(function(values_of(s), *args, **kwargs), s._ind, s._data.shape, True)

    return on_values


def power(input, exponent, *, out=None):
    """``s ** exponent`` for a number ``exponent`` other than 0 (which would fill every entry)."""
    if isinstance(exponent, Tensor) or is_sparse(exponent) or not isinstance(input, SparseCooTensor):
        raise RuntimeError("pow: a sparse tensor can only be raised to a number")
    if exponent == 0:
        raise RuntimeError("pow: cannot raise to zeroth power on sparse tensor; it would make the result tensor dense")
    s = coalesce(input)
    return from_values(values_of(s) ** exponent, s._ind, s._data.shape, True)
