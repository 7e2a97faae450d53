"""More products: bmm, mv, vdot, inner, outer, the scaled sums (addmv, addr, baddbmm, addbmm), tensordot, kron,
cross, trace, cdist and chain_matmul.

>>> import ember
>>> v = ember.tensor([1., 2., 3.])
>>> ember.outer(v, v[:2])
tensor([[1., 2.],
        [2., 4.],
        [3., 6.]])
>>> ember.cross(v, ember.tensor([0., 0., 1.]), dim=0)
tensor([ 2., -1.,  0.])
"""
from __future__ import annotations

import math

import numpy as np

from ember import _blas, _dtype

from ember._dtype import from_numpy_dtype, promote_types
from ember._ops import distances as _distances, linalg as _linalg, views as _views
from ember._ops._support import check_broadcast, element_of, ember_function, refuse_bool, require_tensor, view_of, wrap
from ember._ops.complex import conjugated
from ember._ops.out import into_out, into_out_of_its_dtype
from ember._tensor import Tensor
from ember.amp import autocast_mode as _autocast
from ember.autograd.saved_attributes import input_sizes
from ember.autograd.function import Function
from ember._ops._quiet import IGNORE_ALL, quietly


def _same_dtypes(op: str, *tensors: Tensor, bools: bool = False) -> np.dtype:
    """The one dtype of ``tensors``: as torch, these products do not promote (nor take bools, unless ``bools``)."""
    first = tensors[0]._data.dtype
    for t in tensors[1:]:
        if t._data.dtype != first:
            raise RuntimeError(
                f"{op}: expected all operands to have the same dtype, but got {from_numpy_dtype(first)} and "
                f"{from_numpy_dtype(t._data.dtype)}; convert one first, e.g. "
                f"b.to({promote_types(from_numpy_dtype(first), from_numpy_dtype(t._data.dtype))})"
            )
    if not bools:
        refuse_bool(op, tensors[0]._data)
    return first


def _require_dims(op: str, t: Tensor, dims: int, name: str) -> None:
    if t._data.ndim != dims:
        raise RuntimeError(f"{op}: {name} must be a {dims}-D tensor, got a {t._data.ndim}-D tensor of shape "
                           f"{list(t._data.shape)}")


def _size_mismatch(op: str, **shapes) -> RuntimeError:
    described = ", ".join(f"{name} {list(shape)}" for name, shape in shapes.items())
    return RuntimeError(f"{op}: size mismatch, got {described}; the contracted dims must have the same size")


@ember_function
def bmm(input, mat2, *, out=None) -> Tensor:
    """Batched matrix product of ``[b, n, m]`` and ``[b, m, p]`` tensors (no broadcasting).

    >>> ember.bmm(ember.ones(2, 1, 3), ember.ones(2, 3, 2)).shape
    ember.Size([2, 1, 2])
    """
    a, b = require_tensor(input, "bmm"), require_tensor(mat2, "bmm", 2, "mat2")
    _require_dims("bmm", a, 3, "batch1")
    _require_dims("bmm", b, 3, "batch2")
    if a._data.shape[0] != b._data.shape[0] or a._data.shape[2] != b._data.shape[1]:
        raise _size_mismatch("bmm", batch1=a._data.shape, batch2=b._data.shape)
    _same_dtypes("bmm", a, b)
    result = _linalg.BatchMatMul.apply(a, b)
    return result if out is None else into_out_of_its_dtype("bmm", result, out, a, b)


@ember_function
def mv(input, vec, *, out=None) -> Tensor:
    """A matrix times a vector.

    >>> ember.mv(ember.ones(2, 3), ember.tensor([1., 2., 3.]))
    tensor([6., 6.])
    """
    a, b = require_tensor(input, "mv"), require_tensor(vec, "mv", 2, "vec")
    _require_dims("mv", a, 2, "input")
    _require_dims("mv", b, 1, "vec")
    if a._data.shape[1] != b._data.shape[0]:
        raise _size_mismatch("mv", mat=a._data.shape, vec=b._data.shape)
    _same_dtypes("mv", a, b)
    result = _linalg.MatVec.apply(a, b)
    return result if out is None else into_out_of_its_dtype("mv", result, out, a, b)


class Vdot(_linalg.Dot):
    """The inner product of two vectors, the first conjugated (for real tensors the same as dot)."""

    backward_name = "VdotBackward0"
    torch_saved_tensors = {"other": 1, "self": 0}

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a if ctx.needs_input_grad[1] else None, b if ctx.needs_input_grad[0] else None)
        return wrap(np.asarray(np.vdot(a._data, b._data)))

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        needs = ctx.needs_input_grad
        # conj(a) . b is antilinear in a: its gradient takes the incoming one conjugated, and b as it is
        return (conjugated(grad) * b if needs[0] else None), (grad * a if needs[1] else None)


@ember_function
def vdot(input, other, *, out=None) -> Tensor:
    """The inner product of two 1-D tensors (conjugating the first, which changes nothing for real ones).

    >>> ember.vdot(ember.tensor([1., 2.]), ember.tensor([3., 4.]))
    tensor(11.)
    """
    a, b = require_tensor(input, "vdot"), require_tensor(other, "vdot", 2, "other")
    if a._data.ndim != 1 or b._data.ndim != 1:
        raise RuntimeError(f"vdot: 1D tensors expected, but got {a._data.ndim}D and {b._data.ndim}D tensors")
    if a._data.shape != b._data.shape:
        raise _linalg.vector_length_mismatch("vdot", a, b)
    _same_dtypes("vdot", a, b)
    result = Vdot.apply(a, b)
    return result if out is None else into_out_of_its_dtype("vdot", result, out, a, b)


@ember_function
def outer(input, vec2, *, out=None) -> Tensor:
    """The outer product ``input[i] * vec2[j]`` of two vectors (their dtypes promote, as in a product).

    >>> ember.outer(ember.tensor([1., 2.]), ember.tensor([1., 0., -1.]))
    tensor([[ 1.,  0., -1.],
            [ 2.,  0., -2.]])
    """
    a, b = require_tensor(input, "outer"), require_tensor(vec2, "outer", 2, "vec2")
    if a._data.ndim != 1 or b._data.ndim != 1:
        raise RuntimeError(f"outer: 1D tensors expected, but got {a._data.ndim}D and {b._data.ndim}D tensors")
    result = _views.reshape.__wrapped__(a, -1, 1) * b
    return result if out is None else into_out("outer", result, out, a, b)


@ember_function
def ger(input, vec2, *, out=None) -> Tensor:
    """An old name of ``outer``.

    >>> ember.ger(ember.tensor([2.]), ember.tensor([3., 4.]))
    tensor([[6., 8.]])
    """
    a, b = require_tensor(input, "ger"), require_tensor(vec2, "ger", 2, "vec2")
    if a._data.ndim != 1 or b._data.ndim != 1:
        raise RuntimeError(f"ger: 1D tensors expected, but got {a._data.ndim}D and {b._data.ndim}D tensors")
    return outer.__wrapped__(a, b, out=out)


@ember_function
def tensordot(a, b, dims=2, out=None) -> Tensor:
    """The sum of products over the dims ``dims`` names: an int n (the last n of ``a`` with the first n of ``b``)
    or a pair of lists of dims.

    >>> ember.tensordot(ember.ones(2, 3, 4), ember.ones(3, 4, 5), dims=2).shape
    ember.Size([2, 5])
    >>> ember.tensordot(ember.ones(3, 2), ember.ones(3, 4), dims=([0], [0])).shape
    ember.Size([2, 4])
    """
    a, b = require_tensor(a, "tensordot", 1, "a"), require_tensor(b, "tensordot", 2, "b")
    dims_a, dims_b = _contracted_dims(dims, a._data.ndim, b._data.ndim)
    a, b = _broadcast_contracted(a, b, dims_a, dims_b)
    if a._data.dtype != b._data.dtype:
        raise RuntimeError(f"tensordot: both inputs should have same dtype, got {from_numpy_dtype(a._data.dtype)} "
                           f"and {from_numpy_dtype(b._data.dtype)}; convert one first")
    result = contract(a, b, dims_a, dims_b)
    return result if out is None else into_out_of_its_dtype("tensordot", result, out, a, b)


def _broadcast_contracted(a: Tensor, b: Tensor, dims_a: list, dims_b: list) -> tuple[Tensor, Tensor]:
    """``a`` and ``b`` with each contracted dim of size 1 expanded to its partner's size, as torch broadcasts
    them (a size-1 dim against n sums the other side's n entries times the one value)."""
    shape_a, shape_b = list(a._data.shape), list(b._data.shape)
    for i, j in zip(dims_a, dims_b):
        if shape_a[i] == shape_b[j]:
            continue
        if shape_a[i] == 1:
            shape_a[i] = shape_b[j]
        elif shape_b[j] == 1:
            shape_b[j] = shape_a[i]
        else:
            raise RuntimeError(
                f"tensordot: contracted dimensions need to match (or one be 1), but first has size {shape_a[i]} in "
                f"dim {i} and second has size {shape_b[j]} in dim {j}"
            )
    return (a if tuple(shape_a) == a._data.shape else a.expand(shape_a),
            b if tuple(shape_b) == b._data.shape else b.expand(shape_b))


def _contracted_dims(dims, ndim_a: int, ndim_b: int) -> tuple:
    """The dims of ``a`` and of ``b`` that tensordot sums over, as two lists of non-negative dims."""
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, int):
        if dims < 0 or dims > min(ndim_a, ndim_b):
            raise RuntimeError(f"tensordot: dims must be between 0 and {min(ndim_a, ndim_b)} (the fewer dims of a "
                               f"and b), got {dims}")
        return list(range(ndim_a - dims, ndim_a)), list(range(dims))
    if len(dims) != 2:
        raise RuntimeError(f"tensordot: dims must be an int or a pair of lists of dims, got {dims!r}")
    first, second = ([d] if isinstance(d, int) else list(d) for d in dims)
    if len(first) != len(second):
        raise RuntimeError(f"tensordot: both dimension lists should have same length, got {first} and {second}")
    return _nonnegative(first, ndim_a), _nonnegative(second, ndim_b)


def _nonnegative(dims: list, ndim: int) -> list:
    for d in dims:
        if not -ndim <= d < ndim:
            raise IndexError(f"tensordot: dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], "
                             f"but got {d})")
    return [d % ndim for d in dims]


def contract(a: Tensor, b: Tensor, dims_a: list, dims_b: list) -> Tensor:
    """``a`` and ``b`` summed over the paired dims: one matrix product of the two, permuted and reshaped."""
    free_a = [d for d in range(a._data.ndim) if d not in dims_a]
    free_b = [d for d in range(b._data.ndim) if d not in dims_b]
    shape_a, shape_b = a._data.shape, b._data.shape
    inner = math.prod(shape_a[d] for d in dims_a)
    left = _matrix_of(a, free_a + dims_a, -1 if inner else math.prod(shape_a[d] for d in free_a), inner)
    right = _matrix_of(b, dims_b + free_b, inner, -1 if inner else math.prod(shape_b[d] for d in free_b))
    if a._data.ndim > 1 or b._data.ndim > 1 or len(free_a) + len(free_b):  # (torch's dot of vectors stays)
        left, right = _autocast.lowered(left), _autocast.lowered(right)
    product = _linalg.MatMul.apply(left, right)
    shape = tuple(shape_a[d] for d in free_a) + tuple(shape_b[d] for d in free_b)
    return _views.reshape.__wrapped__(product, shape)


def _matrix_of(x: Tensor, order: list, rows: int, columns: int) -> Tensor:
    if order != list(range(len(order))):
        x = _views.permute.__wrapped__(x, tuple(order))
    return _views.reshape.__wrapped__(x, rows, columns)


@ember_function
def inner(input, other, *, out=None) -> Tensor:
    """The sum of products over the last dim of both (a 0-d operand multiplies).

    >>> ember.inner(ember.tensor([[1., 2.], [3., 4.]]), ember.tensor([1., 1.]))
    tensor([3., 7.])
    """
    a, b = require_tensor(input, "inner"), require_tensor(other, "inner", 2, "other")
    if a._data.ndim == 0 or b._data.ndim == 0:
        result = a * b
    else:
        if a._data.shape[-1] != b._data.shape[-1]:
            raise _size_mismatch("inner", input=a._data.shape, other=b._data.shape)
        _same_dtypes("inner", a, b)
        result = tensordot.__wrapped__(a, b, ([-1], [-1]))
    return result if out is None else into_out_of_its_dtype("inner", result, out, a, b)


@ember_function
def kron(input, other, *, out=None) -> Tensor:
    """The Kronecker product: every element of ``input`` scales a block that is a copy of ``other``.

    >>> ember.kron(ember.tensor([1., 2.]), ember.tensor([1., 10.]))
    tensor([ 1., 10.,  2., 20.])
    """
    a, b = require_tensor(input, "kron"), require_tensor(other, "kron", 2, "other")
    ndim = max(a._data.ndim, b._data.ndim)
    shape_a = (1,) * (ndim - a._data.ndim) + a._data.shape
    shape_b = (1,) * (ndim - b._data.ndim) + b._data.shape
    interleaved_a = [n for size in shape_a for n in (size, 1)]
    interleaved_b = [n for size in shape_b for n in (1, size)]
    # the product keeps copies of the operands (as torch's does): a change to an input after the forward is then
    # no error, and the blocks, far larger than the operands, are what costs memory anyway
    blocks = _views.reshape.__wrapped__(a.clone(), interleaved_a) * _views.reshape.__wrapped__(b.clone(), interleaved_b)
    result = _views.ReshapeCopy.apply(blocks, tuple(m * n for m, n in zip(shape_a, shape_b)))
    return result if out is None else into_out("kron", result, out, a, b)


# ----------------------------------------------------------------- beta * input + alpha * product


class _ScaledProductSum(Function):
    """``beta * input + alpha * product(p, q)``: the Function of addmv, addr, baddbmm and addbmm.

    Each subclass says how to check its operands (``shape``, the product's shape), how to multiply
    (``product``, on arrays) and what the product's gradients are (``gradients``, on arrays or tensors, given
    the operands already conjugated: each is the other's factor in a gradient).
    """

    backward_on_arrays = True  # @, .mT, indexing and * are NumPy's too
    op = ""
    bools = False  # (addr's products of bools are ands, its sums ors, as NumPy's bool arithmetic)

    @classmethod
    def forward(cls, ctx, bias, p, q, beta, alpha):
        _same_dtypes(cls.op, p, q, bias, bools=cls.bools)
        x, y = p._data, q._data
        shape = cls.shape(x.shape, y.shape)
        if not _broadcasts_to(bias._data.shape, shape):
            raise RuntimeError(f"{cls.op}: the input of shape {list(bias._data.shape)} does not broadcast to the "
                               f"product's shape {list(shape)}")
        needs = ctx.needs_input_grad
        ctx.save_for_backward(p if needs[2] else None, q if needs[1] else None)
        ctx.beta, ctx.alpha = beta, alpha
        ctx.complex = x.dtype.kind == "c"
        return wrap(_linalg.scaled_sum(cls.product, x, y, bias._data, beta, alpha))

    @classmethod
    def backward(cls, ctx, grad):
        p, q = _linalg.operands(ctx)
        needs = ctx.needs_input_grad
        scaled = grad if ctx.alpha == 1 else grad * conjugated(ctx.alpha)
        grad_bias = None if not needs[0] else (grad if ctx.beta == 1 else grad * conjugated(ctx.beta))  # summed down
        grad_p, grad_q = cls.gradients(scaled, p, q, needs[1], needs[2])
        return grad_bias, grad_p, grad_q, None, None


def _broadcasts_to(shape: tuple, target: tuple) -> bool:
    return len(shape) <= len(target) and all(n in (1, t) for n, t in zip(shape[::-1], target[::-1]))


class Addmv(_ScaledProductSum):
    backward_name = "AddmvBackward0"
    op = "addmv"

    @staticmethod
    def shape(mat: tuple, vec: tuple) -> tuple:
        if len(mat) != 2 or len(vec) != 1 or mat[1] != vec[0]:
            raise _size_mismatch("addmv", mat=mat, vec=vec)
        return mat[:1]

    @staticmethod
    def product(mat, vec):
        return mat @ vec

    @staticmethod
    def gradients(grad, mat, vec, needs_mat: bool, needs_vec: bool) -> tuple:
        return (grad[:, None] * vec if needs_mat else None), (mat.mT @ grad if needs_vec else None)


class Addr(_ScaledProductSum):
    backward_name = "AddrBackward0"
    op = "addr"
    bools = True

    @staticmethod
    def shape(vec1: tuple, vec2: tuple) -> tuple:
        if len(vec1) != 1 or len(vec2) != 1:
            raise RuntimeError(f"addr: vec1 and vec2 must be 1-D, got {len(vec1)}-D and {len(vec2)}-D tensors")
        return vec1 + vec2

    @staticmethod
    def product(vec1, vec2):
        return vec1[:, None] * vec2

    @staticmethod
    def gradients(grad, vec1, vec2, needs_1: bool, needs_2: bool) -> tuple:
        return (grad @ vec2 if needs_1 else None), (grad.mT @ vec1 if needs_2 else None)


class Baddbmm(_ScaledProductSum):
    backward_name = "BaddbmmBackward0"
    op = "baddbmm"

    @classmethod
    def shape(cls, batch1: tuple, batch2: tuple) -> tuple:
        if len(batch1) != 3 or len(batch2) != 3 or batch1[0] != batch2[0] or batch1[2] != batch2[1]:
            raise _size_mismatch(cls.op, batch1=batch1, batch2=batch2)
        return batch1[:2] + batch2[2:]

    @staticmethod
    def product(batch1, batch2):
        return _blas.matmul(batch1, batch2)

    @staticmethod
    def gradients(grad, batch1, batch2, needs_1: bool, needs_2: bool) -> tuple:
        product = _blas.product
        return (product(grad, batch2.mT) if needs_1 else None), (product(batch1.mT, grad) if needs_2 else None)


class Addbmm(Baddbmm):
    """The sum over the batch of the products (a matrix), scaled, plus the input."""

    backward_name = "AddbmmBackward0"
    op = "addbmm"

    @classmethod
    def shape(cls, batch1: tuple, batch2: tuple) -> tuple:
        return super().shape(batch1, batch2)[1:]

    @staticmethod
    def product(batch1, batch2):
        return _blas.matmul(batch1, batch2).sum(0)


def _scaled_product_sum(function: type, input, p, q, beta, alpha, out, names: tuple) -> Tensor:
    op = function.op
    operands = (require_tensor(input, op), require_tensor(p, op, 2, names[0]), require_tensor(q, op, 3, names[1]))
    if function is Addr:  # the one of these that promotes its operands, as a product of vectors does
        operands = _promoted(operands)
        if operands[0]._data.dtype.kind in "biu":  # (its integer kernel checks its scalars; the others take them)
            for name, value in (("beta", beta), ("alpha", alpha)):
                if isinstance(value, float):
                    raise RuntimeError(f"For integral input tensors, argument {name} must not be a floating point "
                                       f"number (got {name}={value}); pass an int, or convert the tensors to float")
    _linalg.check_scalars(op, operands[1]._data.dtype, beta, alpha)
    if operands[0]._data.dtype.kind in "iu":  # as torch: the scalars must fit an integer result (no -1.0 for uint8)
        for value in (beta, alpha):
            element_of(op, value, operands[0]._data.dtype)
    result = function.apply(*operands, beta, alpha)
    if out is None:
        return result
    write = into_out if function is Addr else into_out_of_its_dtype  # of these, only torch's addr casts into out
    return write(op, result, out, *operands)


def _promoted(tensors: tuple) -> tuple:
    dtype = tensors[0].dtype
    for t in tensors[1:]:
        dtype = promote_types(dtype, t.dtype)
    return tuple(t if t.dtype == dtype else t.to(dtype) for t in tensors)


@ember_function
def addmv(input, mat, vec, *, beta=1, alpha=1, out=None) -> Tensor:
    """``beta * input + alpha * (mat @ vec)``.

    >>> ember.addmv(ember.tensor([1., 1.]), ember.ones(2, 3), ember.ones(3), alpha=2)
    tensor([7., 7.])
    """
    return _scaled_product_sum(Addmv, input, mat, vec, beta, alpha, out, ("mat", "vec"))


@ember_function
def addr(input, vec1, vec2, *, beta=1, alpha=1, out=None) -> Tensor:
    """``beta * input + alpha * outer(vec1, vec2)``.

    >>> ember.addr(ember.zeros(2, 2), ember.tensor([1., 2.]), ember.tensor([1., 3.]))
    tensor([[1., 3.],
            [2., 6.]])
    """
    return _scaled_product_sum(Addr, input, vec1, vec2, beta, alpha, out, ("vec1", "vec2"))


@ember_function
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None) -> Tensor:
    """``beta * input + alpha * bmm(batch1, batch2)``.

    >>> ember.baddbmm(ember.ones(2), ember.ones(3, 2, 4), ember.ones(3, 4, 2), beta=0.5).shape
    ember.Size([3, 2, 2])
    """
    return _scaled_product_sum(Baddbmm, input, batch1, batch2, beta, alpha, out, ("batch1", "batch2"))


@ember_function
def addbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None) -> Tensor:
    """``beta * input + alpha * bmm(batch1, batch2).sum(0)``.

    >>> ember.addbmm(ember.zeros(2, 2), ember.ones(3, 2, 4), ember.ones(3, 4, 2))
    tensor([[12., 12.],
            [12., 12.]])
    """
    return _scaled_product_sum(Addbmm, input, batch1, batch2, beta, alpha, out, ("batch1", "batch2"))


# ----------------------------------------------------------------- cross, trace, cdist, chain_matmul


def _operation(grad, on_arrays, function: type):
    """``on_arrays`` for a NumPy gradient, else ``function.apply``: one formula for both kinds of operand."""
    return on_arrays if type(grad) is np.ndarray else function.apply


def _cross(a: np.ndarray, b: np.ndarray, axis: int) -> np.ndarray:
    return np.cross(a, b, axis=axis)


class Cross(Function):
    """The cross product of 3-vectors along ``dim`` (broadcasting the rest)."""

    backward_name = "LinalgCrossBackward0"
    backward_on_arrays = True

    @staticmethod
    def forward(ctx, a, b, dim):
        ctx.save_for_backward(b if ctx.needs_input_grad[0] else None, a if ctx.needs_input_grad[1] else None)
        ctx.dim = dim
        return wrap(quietly(IGNORE_ALL, _cross, a._data, b._data, dim))

    @staticmethod
    def backward(ctx, grad):
        b, a = ctx.saved_tensors
        dim = ctx.dim
        cross_product = _operation(grad, lambda x, y, d: quietly(IGNORE_ALL, _cross, x, y, d), Cross)
        needs = ctx.needs_input_grad
        return (cross_product(conjugated(b), grad, dim) if needs[0] else None), \
            (cross_product(grad, conjugated(a), dim) if needs[1] else None), None


def cross_along(op: str, a: Tensor, b: Tensor, dim: int | None) -> Tensor:
    """The cross product of ``a`` and ``b`` along ``dim`` (None: the first dim of size 3, as torch.cross)."""
    if a._data.dtype != b._data.dtype:
        raise RuntimeError(f"{op}: expected both inputs to have the same dtype, but got "
                           f"{from_numpy_dtype(a._data.dtype)} and {from_numpy_dtype(b._data.dtype)}")
    refuse_bool(op, a._data)
    if a._data.ndim != b._data.ndim:
        raise RuntimeError(f"{op}: inputs must have the same number of dimensions, got {a._data.ndim} and "
                           f"{b._data.ndim}")
    check_broadcast(op, a._data.shape, b._data.shape)
    shape = np.broadcast_shapes(a._data.shape, b._data.shape)
    if dim is None:
        dim = next((d for d, n in enumerate(shape) if n == 3), None)
        if dim is None:
            raise RuntimeError(f"{op}: no dimension of size 3 in input of shape {list(shape)}; pass dim=")
    if not -len(shape) <= dim < len(shape):
        raise IndexError(f"{op}: dimension out of range (expected to be in range of [{-len(shape)}, "
                         f"{len(shape) - 1}], but got {dim})")
    if a._data.shape[dim] != 3 or b._data.shape[dim] != 3:
        raise RuntimeError(f"{op}: inputs dimension {dim} must have length 3, got {a._data.shape[dim]} and "
                           f"{b._data.shape[dim]}")
    return Cross.apply(a, b, dim % len(shape))


@ember_function
def cross(input, other, dim=None, *, out=None) -> Tensor:
    """The cross product of 3-vectors along ``dim`` (by default the first dim of size 3).

    >>> ember.cross(ember.tensor([[1., 0., 0.]]), ember.tensor([[0., 1., 0.]]), dim=1)
    tensor([[0., 0., 1.]])
    """
    a, b = require_tensor(input, "cross"), require_tensor(other, "cross", 2, "other")
    result = cross_along("cross", a, b, dim)
    return result if out is None else into_out_of_its_dtype("cross", result, out, a, b)


class Trace(Function):
    """The sum of a matrix's diagonal."""

    backward_name = "TraceBackward0"
    torch_saved_values = {"self_sym_sizes": input_sizes(0)}
    backward_on_arrays = True

    @staticmethod
    def forward(ctx, x):
        data = x._data
        ctx.shape, ctx.dtype = data.shape, data.dtype
        total = quietly(IGNORE_ALL, np.trace, data, 0, 0, 1, np.int64 if data.dtype.kind in "iub" else data.dtype)
        return wrap(np.asarray(total))

    @staticmethod
    def backward(ctx, grad):
        eye = np.eye(*ctx.shape, dtype=ctx.dtype)
        return grad * (eye if type(grad) is np.ndarray else wrap(eye))


@ember_function
def trace(input) -> Tensor:
    """The sum of the diagonal of a matrix (integers sum as int64).

    >>> ember.trace(ember.tensor([[1., 2.], [3., 4.]]))
    tensor(5.)
    """
    x = require_tensor(input, "trace")
    if x._data.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got a {x._data.ndim}-D tensor; "
                           "for a batch use ember.linalg.diagonal(x).sum(-1)")
    refuse_bool("trace", x._data)
    return Trace.apply(x)


@ember_function
def cdist(x1, x2, p: float = 2.0, compute_mode: str = "use_mm_for_euclid_dist_if_necessary") -> Tensor:
    """The ``p``-norm distance between each row of ``x1`` ``[..., P, M]`` and each of ``x2`` ``[..., R, M]``
    (for p = 2 by matrix products as torch's ``compute_mode`` says: see ``_ops/distances.py``).

    >>> ember.cdist(ember.tensor([[0., 0.], [1., 1.]]), ember.tensor([[3., 4.]]))
    tensor([[5.0000],
            [3.6056]])
    """
    return _distances.cdist(x1, x2, p, compute_mode)


@ember_function
def chain_matmul(*matrices, out=None) -> Tensor:
    """The product of the matrices, in the cheapest order (deprecated in torch for ``linalg.multi_dot``).

    >>> ember.chain_matmul(ember.ones(2, 3), ember.ones(3, 4), ember.ones(4, 1))
    tensor([[12.],
            [12.]])
    """
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for i, m in enumerate(matrices):
        require_tensor(m, "chain_matmul", i + 1, "matrices")
        if m._data.ndim != 2:
            raise RuntimeError(f"chain_matmul(): Tensor {i} must be 2D, got {m._data.ndim}D")
    if len(matrices) == 1:
        result = matrices[0].clone()
    else:
        result = multi_dot_of("chain_matmul", list(matrices))
    return result if out is None else into_out_of_its_dtype("chain_matmul", result, out, *matrices)


def multi_dot_of(op: str, tensors: list) -> Tensor:
    """The product of ``tensors`` (the first and last may be vectors) in the order of fewest multiplications."""
    if len(tensors) < 2:
        raise RuntimeError(f"{op}(): expected at least 2 tensors but got {len(tensors)}")
    first, last = tensors[0], tensors[-1]
    vector_first, vector_last = first._data.ndim == 1, last._data.ndim == 1
    matrices = list(tensors)
    if vector_first:
        matrices[0] = _views.unsqueeze.__wrapped__(first, 0)
    if vector_last:
        matrices[-1] = _views.unsqueeze.__wrapped__(last, 1)
    _check_chain(op, matrices, tensors)
    matrices = [_autocast.lowered(m) for m in matrices]
    product = _in_order(matrices, _cheapest_order([m._data.shape for m in matrices]), 0, len(matrices) - 1)
    shape = product._data.shape
    shape = shape[vector_first:2 - vector_last] if (vector_first or vector_last) else shape
    return _views.view.__wrapped__(product, shape)


def _check_chain(op: str, matrices: list, tensors: list) -> None:
    dtype = matrices[0]._data.dtype
    for i, m in enumerate(matrices):
        if m._data.ndim != 2:
            where_ = "first and last tensors" if i in (0, len(matrices) - 1) else "tensors in the middle"
            raise RuntimeError(f"{op}(): the {where_} must be {'1D or 2D' if 'first' in where_ else '2D'}, but "
                               f"tensor {i} is {tensors[i]._data.ndim}D")
        if m._data.dtype != dtype:
            raise RuntimeError(f"{op}(): all tensors must have the same dtype, got {from_numpy_dtype(dtype)} and "
                               f"{from_numpy_dtype(m._data.dtype)} (tensor {i})")
        if i and matrices[i - 1]._data.shape[1] != m._data.shape[0]:
            raise RuntimeError(f"{op}(): tensors {i - 1} and {i} cannot be multiplied "
                               f"({list(matrices[i - 1]._data.shape)} and {list(m._data.shape)})")


def _cheapest_order(shapes: list) -> list:
    """``split[i][j]``: where the product of matrices i..j is best split (the textbook dynamic program)."""
    n = len(shapes)
    sizes = [shapes[0][0]] + [s[1] for s in shapes]
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j], split[i][j] = min(
                (cost[i][k] + cost[k + 1][j] + sizes[i] * sizes[k + 1] * sizes[j + 1], k) for k in range(i, j)
            )
    return split


def _in_order(matrices: list, split: list, i: int, j: int) -> Tensor:
    if i == j:
        return matrices[i]
    k = split[i][j]
    return _linalg.MatMul.apply(_in_order(matrices, split, i, k), _in_order(matrices, split, k + 1, j))


# ----------------------------------------------------------------- the diagonal of a pair of dims


def _diagonal_array(data: np.ndarray, offset: int, dim1: int, dim2: int) -> np.ndarray:
    """NumPy's diagonal of ``data`` over (dim1, dim2), as the last dim (as torch's), writable where ``data`` is
    (NumPy hands its view out read-only; torch's diagonal can be written to)."""
    diagonal = np.diagonal(data, offset, dim1, dim2)
    diagonal.flags.writeable = data.flags.writeable
    return diagonal


class Diagonal(Function):
    """The diagonal (shifted by ``offset``) of the matrices over (dim1, dim2): a view, put as the last dim."""

    backward_name = "DiagonalBackward0"
    torch_saved_values = {"offset": lambda node: node.dims[0], "dim1": lambda node: node.dims[1],
                          "dim2": lambda node: node.dims[2], "self_sym_sizes": "shape"}

    @staticmethod
    def forward(ctx, x, offset, dim1, dim2):
        ctx.shape, ctx.dims = x._data.shape, (offset, dim1, dim2)
        return view_of(x, _diagonal_array(x._data, offset, dim1, dim2), (diagonal_view, (offset, dim1, dim2)))

    @staticmethod
    def backward(ctx, grad):
        return DiagonalScatter.apply(grad, ctx.shape, *ctx.dims), None, None, None


class DiagonalScatter(Function):
    """Zeros of ``shape`` with ``x`` on the diagonal over (dim1, dim2): the gradient of ``Diagonal``."""

    backward_name = "DiagonalBackwardBackward0"

    @staticmethod
    def forward(ctx, x, shape, offset, dim1, dim2):
        ctx.dims = (offset, dim1, dim2)
        out = np.zeros(shape, x._data.dtype)
        _diagonal_array(out, offset, dim1, dim2)[...] = x._data
        return wrap(out)

    @staticmethod
    def backward(ctx, grad):
        return Diagonal.apply(grad, *ctx.dims), None, None, None, None


def diagonal_view(x: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """The diagonal of ``x`` over dims ``dim1`` and ``dim2`` (checked, either sign) as a view."""
    ndim = x._data.ndim
    for d in (dim1, dim2):
        if not -ndim <= d < ndim:
            raise IndexError(f"diagonal: Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], "
                             f"but got {d})")
    dim1, dim2 = dim1 % ndim, dim2 % ndim
    if dim1 == dim2:
        raise RuntimeError(f"diagonal: diagonal dimensions cannot be identical {dim1}, {dim2}; name two different dims")
    return Diagonal.apply(x, offset, dim1, dim2)
