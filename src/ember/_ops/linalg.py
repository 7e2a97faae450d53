"""Matrix products: mm and matmul (with batch broadcasting and 1-D operands).

>>> import ember
>>> a = ember.tensor([[1., 2.], [3., 4.]], requires_grad=True)
>>> (a @ a).sum().backward(); a.grad
tensor([[ 7., 11.],
        [ 9., 13.]])
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from ember import _blas
from ember._dtype import BF16 as _BF16, LOW as _LOW_PRECISION, from_numpy_dtype, promote_types
from ember._ops import copy as _copy, views as _views
from ember._ops._jvp import linear_jvp, product_jvp
from ember._ops._quiet import IGNORE_ALL, quietly_on_objection
from ember._ops._support import check_broadcast, ember_function, refuse_bool, require_tensor, wrap
from ember._ops.complex import conjugated
from ember._ops.out import into_out, into_out_of_its_dtype
from ember._tensor import Tensor, torch_strides
from ember.autograd.engine import column_sums
from ember.autograd.saved_attributes import input_sizes, saved_strides
from ember.autograd.function import Function


def _same_dtype(op: str, a: Tensor, b: Tensor) -> tuple:
    """Both operands' arrays; as torch, a matrix product does not promote: the dtypes must agree."""
    x, y = a._data, b._data
    if x.dtype != y.dtype:
        first, second = from_numpy_dtype(x.dtype), from_numpy_dtype(y.dtype)
        raise RuntimeError(
            f"{op}: expected both operands to have the same dtype, but got {first} and {second}; "
            f"convert one first, e.g. b.to({promote_types(first, second)})"
        )
    return refuse_bool(op, x), y


def vector_length_mismatch(op: str, a: Tensor, b: Tensor) -> RuntimeError:
    """The error for two vectors of different lengths; as torch, differing dtypes are reported first."""
    _same_dtype(op, a, b)
    return RuntimeError(f"{op}: inconsistent tensor size: {a._data.shape[0]} and {b._data.shape[0]} elements; "
                        "both vectors must have the same length")


def operands(ctx) -> tuple:
    """A product's saved operands as its gradients take them: conjugated if they are complex (``ctx.complex``,
    set by the forward: one test there keeps the real path as fast as it was)."""
    saved = ctx.saved_tensors
    return tuple(conjugated(t) for t in saved) if ctx.complex else saved


def check_scalars(op: str, dtype: np.dtype, beta, alpha) -> None:
    """A complex ``beta`` or ``alpha`` scales complex operands only (as torch: it has no real value)."""
    if dtype.kind != "c":
        for name, value in (("beta", beta), ("alpha", alpha)):
            if isinstance(value, numbers.Complex) and not isinstance(value, numbers.Real):
                raise RuntimeError(f"{op}: {name} is the complex number {value!r}, but the operands are "
                                   f"{from_numpy_dtype(dtype)}; convert the operands to a complex dtype first "
                                   f"(e.g. .to(ember.complex128)) or pass a real {name}")


def _check_inner(op: str, a: np.ndarray, b: np.ndarray) -> None:
    if a.shape[-1] != b.shape[-2]:
        raise RuntimeError(
            f"{op}: inner dimensions differ: a is {list(a.shape)}, b is {list(b.shape)} "
            f"({a.shape[-1]} != {b.shape[-2]}); the last dim of a must equal the second-to-last dim of b"
        )


def matmul_arrays(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``np.matmul`` in the operands' dtype (by MKL where ``_blas`` takes it): ml_dtypes' matmul of bfloat16
    answers in single (torch computes in single too), so that answer is rounded once to bfloat16."""
    if x.dtype is _BF16 and y.dtype is _BF16:
        return _blas.matmul(x.astype(np.float32), y.astype(np.float32)).astype(_BF16)
    return _blas.matmul(x, y)


_REAL = (np.dtype(np.float32), np.dtype(np.float64))


def _small_real_product(x: np.ndarray, y: np.ndarray) -> np.ndarray | None:
    """``x @ y`` for two float32 or float64 matrices that fit, small enough for ``_blas.matmul`` to take NumPy's
    dot (as it would, after its own checks); else None, for the general path and its errors."""
    dtype = x.dtype
    if y.dtype is not dtype or dtype not in _REAL or x.ndim != 2 or y.ndim != 2:
        return None
    m, k = x.shape
    inner, n = y.shape
    if k != inner or m * k * n >= _blas.THRESHOLD:
        return None
    return x.dot(y)


class MatMul(Function):
    """The product of two tensors of at least 2 dims, broadcasting batch dims."""

    backward_name = "MmBackward0"
    torch_saved_tensors = {"self": 0, "mat2": 1}
    torch_saved_values = {"self_sym_sizes": input_sizes(0), "self_sym_strides": saved_strides(0),
                          "mat2_sym_sizes": input_sizes(1), "mat2_sym_strides": saved_strides(1)}
    backward_on_arrays = True  # @ and .mT are NumPy's too; a broadcast batch gradient is summed down by the engine
    op = "matmul"  # the name in error messages
    jvp = product_jvp(0, 1)

    @classmethod
    def forward(cls, ctx, a, b):
        needs = ctx.needs_input_grad
        ctx.save_for_backward(a if needs[1] else None, b if needs[0] else None)  # each is the other's gradient
        product = _small_real_product(a._data, b._data)
        if product is not None:
            ctx.complex = False
            return wrap(product)
        x, y = _same_dtype(cls.op, a, b)
        _check_inner(cls.op, x, y)
        ctx.complex = x.dtype.kind == "c"
        return wrap(matmul_arrays(x, y) if x.dtype is _BF16 else _blas.matmul(x, y))

    @staticmethod
    def backward(ctx, grad):
        a, b = operands(ctx)
        needs = ctx.needs_input_grad
        product = _blas.product  # grad B^H, A^H grad
        return (product(grad, b.mT) if needs[0] else None), (product(a.mT, grad) if needs[1] else None)


class BatchMatMul(MatMul):
    """Matrices stacked along one batch dim, of the same length in both operands (torch's bmm)."""

    backward_name = "BmmBackward0"
    torch_saved_tensors = {"mat2": 1, "self": 0}

    @staticmethod
    def backward(ctx, grad):
        a, b = operands(ctx)
        needs = ctx.needs_input_grad
        product = matmul_arrays if type(grad) is np.ndarray else BatchMatMul.apply  # not matmul: it would fold, view
        return (product(grad, b.mT) if needs[0] else None), (product(a.mT, grad) if needs[1] else None)


class SqueezeRow(Function):
    """The one row of a fresh ``[1, n]`` product as a vector: torch squeezes it in place, so it is no view."""

    backward_name = "SqueezeBackward4"
    torch_saved_values = {"dim": lambda node: 0, "self_sym_sizes": input_sizes(0)}
    backward_on_arrays = True
    jvp = linear_jvp(0)

    @staticmethod
    def forward(ctx, x):
        return wrap(x._data[0])

    @staticmethod
    def backward(ctx, grad):
        return grad[None]


class MatrixProduct(MatMul):
    backward_name = "MmBackward0"
    torch_saved_tensors, torch_saved_values = MatMul.torch_saved_tensors, MatMul.torch_saved_values
    op = "mm"


class Dot(Function):
    """The inner product of two vectors (a 0-d result)."""

    backward_name = "DotBackward0"
    torch_saved_tensors = {"self": 0, "tensor": 1}
    backward_on_arrays = True
    jvp = product_jvp(0, 1)

    @staticmethod
    def forward(ctx, a, b):
        x, y = _same_dtype("dot", a, b)
        ctx.save_for_backward(a if ctx.needs_input_grad[1] else None, b if ctx.needs_input_grad[0] else None)
        ctx.complex = x.dtype.kind == "c"
        return wrap(np.asarray(np.dot(x, y)))

    @staticmethod
    def backward(ctx, grad):
        a, b = operands(ctx)
        needs = ctx.needs_input_grad
        return (grad * b if needs[0] else None), (grad * a if needs[1] else None)


class MatVec(Function):
    """A matrix times a vector."""

    backward_name = "MvBackward0"
    torch_saved_tensors = {"self": 0, "vec": 1}
    backward_on_arrays = True
    jvp = product_jvp(0, 1)

    @staticmethod
    def forward(ctx, a, b):
        x, y = _same_dtype("matmul", a, b)
        if x.shape[-1] != y.shape[0]:
            raise RuntimeError(
                f"matmul: size mismatch: matrix is {list(x.shape)}, vector is {list(y.shape)} "
                f"({x.shape[-1]} != {y.shape[0]}); the vector's length must equal the matrix's last dim"
            )
        ctx.save_for_backward(a if ctx.needs_input_grad[1] else None, b if ctx.needs_input_grad[0] else None)
        ctx.complex = x.dtype.kind == "c"
        return wrap(matmul_arrays(x, y))

    @staticmethod
    def backward(ctx, grad):
        a, b = operands(ctx)
        needs = ctx.needs_input_grad
        return (grad[..., None] * b if needs[0] else None), \
            ((matmul_arrays(a.mT, grad) if type(grad) is np.ndarray else a.mT @ grad) if needs[1] else None)


class Addmm(Function):
    """``beta * input + alpha * (mat1 @ mat2)``: a matrix product and a (broadcast) bias in one op."""

    backward_name = "AddmmBackward0"
    torch_saved_tensors = {"mat1": 0, "mat2": 1}
    torch_saved_values = {"alpha": "alpha", "beta": "beta", "mat1_sym_sizes": input_sizes(1),
                          "mat1_sym_strides": saved_strides(0), "mat2_sym_sizes": input_sizes(2),
                          "mat2_sym_strides": saved_strides(1)}
    backward_on_arrays = True

    @staticmethod
    def forward(ctx, bias, a, b, beta=1, alpha=1):
        c, x, y = bias._data, a._data, b._data
        dtype = x.dtype
        if (dtype is _SINGLE or dtype is _DOUBLE) and dtype is y.dtype and dtype is c.dtype and beta == 1 == alpha \
                and x.ndim == 2 == y.ndim and x.shape[1] == y.shape[0] and c.shape == y.shape[1:]:
            # a linear layer's call (two float matrices that fit, a bias row of their dtype): nothing to check,
            # promote or scale; the product is fresh, so the bias is added into it
            result = _blas.matmul(x, y)
            result = np.add(result, c, result)
            ctx.complex = False
            ctx.bias_row = True
        else:
            _check_addmm_operands(c, x, y)  # first: as torch, a bias of another dtype before bools
            x, y = _same_dtype("addmm", a, b)
            ctx.complex = x.dtype.kind == "c"
            ctx.bias_row = False
            result = scaled_sum(_blas.matmul, x, y, c, beta, alpha)
        ctx.save_for_backward(a if ctx.needs_input_grad[2] else None, b if ctx.needs_input_grad[1] else None)
        ctx.beta, ctx.alpha = beta, alpha
        # a transposed operand (linear's weight.t()) gets its gradient made in its own layout, so that the
        # leaf's .grad takes the product without a transposing copy
        ctx.transposed = not y.flags.c_contiguous and y.flags.f_contiguous
        return wrap(result)

    @staticmethod
    def backward(ctx, grad):
        if ctx.bias_row and type(grad) is np.ndarray:
            return _linear_backward(ctx, grad)
        a, b = operands(ctx)
        needs = ctx.needs_input_grad
        scaled = grad if ctx.alpha == 1 else grad * conjugated(ctx.alpha)
        grad_bias = None if not needs[0] else (grad if ctx.beta == 1 else grad * conjugated(ctx.beta))  # summed down
        product = _blas.product
        grad_b = None if not needs[2] else product(scaled.mT, a).mT if ctx.transposed else product(a.mT, scaled)
        grads = (grad_bias, product(scaled, b.mT) if needs[1] else None, grad_b)
        return grads if len(needs) == 3 else grads + (None, None)  # beta and alpha are inputs only when given


def _linear_backward(ctx, grad: np.ndarray) -> tuple:
    """Addmm's first-order backward for a linear layer's call (real float matrices, a bias row, beta and alpha
    1: nothing to scale or conjugate). The bias gradient leaves summed over the rows, as the engine would sum it."""
    a, b = ctx.saved_tensors
    needs = ctx.needs_input_grad
    matmul = _blas.matmul
    grad_b = None
    if needs[2]:
        grad_b = matmul(grad.mT, a).mT if ctx.transposed else matmul(a.mT, grad)
    grads = (column_sums(grad) if needs[0] else None, matmul(grad, b.mT) if needs[1] else None, grad_b)
    return grads if len(needs) == 3 else grads + (None, None)  # beta and alpha are inputs only when given


_SINGLE, _DOUBLE = np.dtype(np.float32), np.dtype(np.float64)


def scaled_sum(product, x: np.ndarray, y: np.ndarray, bias: np.ndarray, beta, alpha) -> np.ndarray:
    """``beta * bias + alpha * product(x, y)`` in x's dtype, rounded once: as torch, half precision is computed
    in single, and alpha and beta are taken in the computing dtype. With beta 0 the bias is ignored (nan too)."""
    dtype = x.dtype
    if dtype.itemsize == 2 and dtype in _LOW_PRECISION:
        x, y, bias = x.astype(np.float32), y.astype(np.float32), bias.astype(np.float32)
    result = product(x, y)
    if alpha != 1:
        result = result * np.asarray(alpha).astype(x.dtype)
    if beta != 0:
        bias = bias if beta == 1 else bias * np.asarray(beta).astype(x.dtype)
        if type(result) is np.ndarray and bias.ndim <= result.ndim and bias.shape == result.shape[result.ndim - bias.ndim:]:
            result = np.add(result, bias, out=result)  # the product is fresh: no second array of its size
        else:
            result = result + bias
    return np.asarray(result, dtype)


def _check_addmm_operands(bias: np.ndarray, x: np.ndarray, y: np.ndarray) -> None:
    for name, m in (("mat1", x), ("mat2", y)):
        if m.ndim != 2:
            raise RuntimeError(f"addmm: {name} must be a matrix, got {m.ndim}-D tensor")
    if x.shape[1] != y.shape[0]:
        raise RuntimeError(
            f"addmm: mat1 and mat2 shapes cannot be multiplied ({x.shape[0]}x{x.shape[1]} and "
            f"{y.shape[0]}x{y.shape[1]}); mat1's columns must equal mat2's rows"
        )
    if bias.dtype != y.dtype:
        raise RuntimeError(
            f"addmm: self and mat2 must have the same dtype, but got {from_numpy_dtype(bias.dtype)} and "
            f"{from_numpy_dtype(y.dtype)}; convert the bias first, e.g. bias.to({from_numpy_dtype(y.dtype)})"
        )
    result = (x.shape[0], y.shape[1])
    if bias.shape == result[1:] or bias.shape == result:  # the usual biases, checked first
        return
    if len(bias.shape) > 2 or any(n not in (1, r) for n, r in zip(bias.shape[::-1], result[::-1])):
        raise RuntimeError(
            f"addmm: the bias of shape {list(bias.shape)} does not broadcast to the product's shape {list(result)}"
        )


@ember_function
def addmm(input, mat1, mat2, *, beta=1, alpha=1, out=None) -> Tensor:
    """``beta * input + alpha * (mat1 @ mat2)``, ``input`` broadcasting to the product (how Linear adds its bias).

    >>> ember.addmm(ember.tensor([1., 2.]), ember.ones(1, 3), ember.ones(3, 2))
    tensor([[4., 5.]])
    """
    operands = (require_tensor(input, "addmm"), require_tensor(mat1, "addmm", 2, "mat1"),
                require_tensor(mat2, "addmm", 3, "mat2"))
    if beta == 1 and alpha == 1 and type(beta) is int and type(alpha) is int:
        result = Addmm.apply(*operands)  # three inputs: fewer to record
    else:
        check_scalars("addmm", operands[2]._data.dtype, beta, alpha)
        result = Addmm.apply(*operands, beta, alpha)
    return result if out is None else into_out_of_its_dtype("addmm", result, out, input, mat1, mat2)


@ember_function
def mm(input, mat2, *, out=None) -> Tensor:
    """Product of two matrices.

    >>> ember.mm(ember.ones(2, 3), ember.ones(3, 1))
    tensor([[3.],
            [3.]])
    """
    a, b = require_tensor(input, "mm"), require_tensor(mat2, "mm", 2, "mat2")
    if a._data.ndim != 2 or b._data.ndim != 2:
        raise RuntimeError(
            f"mm: both arguments must be matrices (2-D), got {a._data.ndim}-D and {b._data.ndim}-D; use matmul for other shapes"
        )
    result = MatrixProduct.apply(a, b)
    return result if out is None else into_out_of_its_dtype("mm", result, out, a, b)


@ember_function
def matmul(input, other, *, out=None) -> Tensor:
    """NumPy-style matrix product: vectors are promoted to matrices, batch dims broadcast.

    It takes torch's steps (mm, mv or bmm, and the views and copies around them), so the graph, the
    strides of the result and whether it is a view are torch's. ``nn.functional.linear`` takes the same.
    """
    if out is not None:
        return into_out_of_its_dtype("matmul", matmul.__wrapped__(input, other), out, input, other)
    a = input if type(input) is Tensor else require_tensor(input, "matmul")
    b = other if type(other) is Tensor else require_tensor(other, "matmul", 2, "other")
    dims_a, dims_b = a._data.ndim, b._data.ndim
    if dims_a == 0 or dims_b == 0:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {dims_a}D and {dims_b}D"
        )
    if dims_b == 1 and dims_a <= 2:
        return (dot if dims_a == 1 else _matrix_vector)(a, b)
    if dims_a == 2 and dims_b == 2:
        return MatMul.apply(a, b)
    if dims_a == 1 and dims_b == 2:
        return SqueezeRow.apply(MatMul.apply(_views.unsqueeze.__wrapped__(a, 0), b))
    _check_batch_inner(a._data.shape, b._data.shape)
    if not (a.requires_grad or b.requires_grad or a._fw is not None or b._fw is not None):
        # no graph (and no tangent) to record: one NumPy product, laid out as torch's
        x, y = _same_dtype("matmul", a, b)
        check_broadcast("matmul", x.shape[:-2], y.shape[:-2])
        return wrap(quietly_on_objection(IGNORE_ALL, matmul_arrays, x, y))  # (as Function.apply does)
    if _should_fold(a, b):
        return _folded_product(a, b)
    return _batched_product(a, b)


def _check_batch_inner(shape_a: tuple, shape_b: tuple) -> None:
    inner_b = shape_b[-2] if len(shape_b) > 1 else shape_b[0]
    if shape_a[-1] != inner_b:
        raise RuntimeError(
            f"matmul: inner dimensions differ: a is {list(shape_a)}, b is {list(shape_b)} "
            f"({shape_a[-1]} != {inner_b}); the last dim of a must equal the "
            f"{'length' if len(shape_b) == 1 else 'second-to-last dim'} of b"
        )


def _should_fold(a: Tensor, b: Tensor) -> bool:
    """Whether torch folds the batch dims of the operand with more dims into the rows of one mm (or mv).

    Only against a vector or a matrix. torch folds when the smaller operand requires grad (its gradient
    would otherwise be a batch of products summed down), or when the folding reshape is a view.
    """
    a_larger = a._data.ndim >= b._data.ndim
    larger, smaller = (a, b) if a_larger else (b, a)
    if larger._data.ndim < 3 or smaller._data.ndim > 2:
        return False
    if smaller.requires_grad:
        return True
    if a._data.ndim == 2:  # a matrix times a batch: a bmm, unless a requires grad (above)
        return False
    if not larger._data.size:
        return True
    shape, strides = larger._data.shape, torch_strides(larger._data)  # torch's, for its size-1 dims too
    if not a_larger:  # the batch is b, seen transposed
        shape, strides = shape[:-2] + shape[:-3:-1], strides[:-2] + strides[:-3:-1]
    return all(strides[i] == strides[i + 1] * shape[i + 1] for i in range(len(shape) - 2))


def _folded_product(a: Tensor, b: Tensor) -> Tensor:
    """One mm (or mv) of the batch folded into rows; a batch on the right is folded through its transpose."""
    transposed = b._data.ndim > a._data.ndim
    if transposed:  # (a @ b) is (b.mT @ a.mT).mT
        rows = _views.transpose.__wrapped__(b, -2, -1)
        right = _views.t.__wrapped__(a) if a._data.ndim == 2 else a
    else:
        rows, right = a, b
    shape = rows._data.shape
    folded = _views.reshape.__wrapped__(rows, math.prod(shape[:-1]), shape[-1])
    if right._data.ndim == 1:
        return _views.ReshapeCopy.apply(MatVec.apply(folded, right), shape[:-1])
    product = _views.ReshapeCopy.apply(MatMul.apply(folded, right), (*shape[:-1], right._data.shape[1]))
    if transposed:
        return _copy.contiguous(_views.transpose.__wrapped__(product, -2, -1))
    return product


def _batched_product(a: Tensor, b: Tensor) -> Tensor:
    """A bmm of both operands expanded to the broadcast batch and flattened to one batch dim."""
    if a._data.ndim == 3 and b._data.ndim == 3 and a._data.shape[0] != b._data.shape[0]:
        # as torch: a batch of one that requires grad is dropped, so its gradient is no sum over copies
        if a._data.shape[0] == 1 and a.requires_grad:
            return matmul.__wrapped__(_views.squeeze.__wrapped__(a, 0), b)
        if b._data.shape[0] == 1 and b.requires_grad:
            return matmul.__wrapped__(a, _views.squeeze.__wrapped__(b, 0))
    shape_a, shape_b = a._data.shape, b._data.shape
    vector_a, vector_b = len(shape_a) == 1, len(shape_b) == 1
    rows, inner = (1 if vector_a else shape_a[-2]), shape_a[-1]
    columns = 1 if vector_b else shape_b[-1]
    batch = _broadcast_batch(shape_a[:-2], shape_b[:-2])
    count = math.prod(batch)
    left = _views.reshape.__wrapped__(_views.expand.__wrapped__(a, (*batch, rows, inner)), count, rows, inner)
    if vector_b:
        right = _views.expand.__wrapped__(b, (*batch, inner))
        right = _views.unsqueeze.__wrapped__(_views.reshape.__wrapped__(right, count, inner), 2)
    else:
        right = _views.expand.__wrapped__(b, (*batch, inner, columns))
        right = _views.reshape.__wrapped__(right, count, inner, columns)
    product = BatchMatMul.apply(left, right)
    if vector_b:
        product = _views.squeeze.__wrapped__(product, -1)
    return _views.ReshapeCopy.apply(product, (*batch, *(() if vector_a else (rows,)), *(() if vector_b else (columns,))))


def _broadcast_batch(batch_a: tuple, batch_b: tuple) -> tuple:
    check_broadcast("matmul", batch_a, batch_b)  # torch's error, before NumPy's
    return np.broadcast_shapes(batch_a, batch_b)


def _matrix_vector(a: Tensor, b: Tensor) -> Tensor:
    return MatVec.apply(a, b)


@ember_function
def dot(input, tensor, *, out=None) -> Tensor:
    """Inner product of two 1-D tensors.

    >>> ember.dot(ember.tensor([1., 2.]), ember.tensor([3., 4.]))
    tensor(11.)
    """
    a, b = require_tensor(input, "dot"), require_tensor(tensor, "dot", 2, "tensor")  # torch's names for them
    if a._data.ndim != 1 or b._data.ndim != 1:
        raise RuntimeError(f"dot: 1D tensors expected, but got {a._data.ndim}D and {b._data.ndim}D tensors")
    if a._data.shape != b._data.shape:
        raise vector_length_mismatch("dot", a, b)
    result = Dot.apply(a, b)
    return result if out is None else into_out_of_its_dtype("dot", result, out, a, b)
