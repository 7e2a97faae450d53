"""The sparse ops whose gradient torch gives densely, treating the sparse operand as the dense tensor it stands
for: ``s.sum()``, ``dense + s``, ``s * dense`` and ``ember.mm(s, dense)`` (``sparse.mm`` keeps the gradient on
``s``'s pattern instead). Their formulas are ember ops, so they have gradients of their own.

>>> import ember
>>> s = ember.tensor([[0., 2.], [3., 0.]]).to_sparse().requires_grad_()
>>> s.sum().backward()
>>> s.grad
tensor([[1., 1.],
        [1., 1.]])
"""
from __future__ import annotations

from ember._ops._support import wrap
from ember._ops.sparse import SparseOutput, ToDense, as_tensor_grad, coalesce, is_sparse, make, transpose
from ember._ops.sparse_product import product
from ember._tensor import Tensor
from ember.autograd.function import Function


class SumAsDense(Function):
    backward_name = "SumBackward0"
    backward_on_arrays = True

    @staticmethod
    def forward(ctx, s, dtype):
        ctx.shape = s._data.shape
        return wrap(s._val).sum(dtype=dtype) if dtype is not None else wrap(s._val).sum()

    @staticmethod
    def backward(ctx, grad):
        return as_tensor_grad(grad).expand(ctx.shape), None


class AddToDense(Function):
    """``dense + alpha * s``: a dense result, and dense gradients for both."""

    backward_name = "AddBackward0"
    backward_on_arrays = True

    @staticmethod
    def forward(ctx, dense, s, alpha):
        ctx.alpha = alpha
        sparse_part = ToDense.apply(s)
        return dense + (sparse_part if alpha == 1 else sparse_part * alpha)

    @staticmethod
    def backward(ctx, grad):
        grad = as_tensor_grad(grad)
        return grad, (grad if ctx.alpha == 1 else grad * ctx.alpha), None


def times(a: Tensor, b: Tensor) -> Tensor:
    """``a * b`` elementwise for any mix of sparse and dense operands of one size."""
    if not is_sparse(a) and not is_sparse(b):
        return a * b
    from ember._ops.sparse_math import mul

    return mul(a, b)


class MulByDense(SparseOutput):
    """``s * dense`` on ``s``'s (coalesced) pattern; the gradients are ``grad * dense`` and ``grad * s``."""

    backward_name = "MulBackward0"

    @staticmethod
    def forward(ctx, s, dense):
        ctx.s, ctx.dense = s, dense  # the tensors themselves: a sparse one has no array to save
        values = s._val * dense._data[tuple(s._ind)]
        return make(s._ind, values, s._data.shape, True)

    @staticmethod
    def backward(ctx, grad):
        grad = as_tensor_grad(grad)
        return times(grad, ctx.dense), times(grad, ctx.s)


def mul_by_dense(s, dense: Tensor):
    return MulByDense.apply(coalesce(s), dense)


class MMAsDense(Function):
    """``ember.mm(s, dense)`` (``s.T @ dense`` if ``transpose``): the product, with ``s``'s gradient the dense
    ``grad @ dense.T``, as torch's; its gradient of ``dense`` is this product again, so every order is dense."""

    backward_name = "MmBackward0"
    backward_on_arrays = True

    @staticmethod
    def forward(ctx, s, dense, transpose):
        ctx.s, ctx.dense, ctx.transpose = s, dense, transpose
        return wrap(product(s._ind, s._val, s._data.shape, dense._data, transpose))

    @staticmethod
    def backward(ctx, grad):
        grad, s_grad, dense_grad = as_tensor_grad(grad), None, None
        if ctx.needs_input_grad[0]:
            s_grad = ctx.dense.mm(grad.t()) if ctx.transpose else grad.mm(ctx.dense.t())
        if ctx.needs_input_grad[1]:
            dense_grad = ctx._forward_cls.apply(ctx.s, grad, not ctx.transpose)  # (a subclass: itself)
        return s_grad, dense_grad, None


def mm_as_dense(s, dense: Tensor) -> Tensor:
    vector = dense._data.ndim == 1
    out = MMAsDense.apply(coalesce(s), dense.unsqueeze(1) if vector else dense, False)
    return out.squeeze(1) if vector else out


def dense_mm_as_dense(dense: Tensor, s) -> Tensor:
    """``dense @ s``, as ``(s.T @ dense.T).T``."""
    if dense._data.ndim == 1:
        return mm_as_dense(transpose(s, 0, 1), dense)
    return mm_as_dense(transpose(s, 0, 1), dense.t()).t()


