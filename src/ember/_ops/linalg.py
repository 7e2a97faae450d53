"""Matrix products: mm and matmul (with batch broadcasting and 1-D operands).

>>> import ember
>>> a = ember.tensor([[1., 2.], [3., 4.]], requires_grad=True)
>>> (a @ a).sum().backward(); a.grad
tensor([[ 7., 11.],
        [ 9., 13.]])
"""
from __future__ import annotations

import numpy as np

from ember._ops._support import ember_function, promoted_arrays, require_tensor, wrap
from ember._tensor import Tensor
from ember.autograd.function import Function


def _check_inner(op: str, a: np.ndarray, b: np.ndarray) -> None:
    if a.shape[-1] != b.shape[-2]:
        raise RuntimeError(
            f"{op}: inner dimensions differ: a is {list(a.shape)}, b is {list(b.shape)} "
            f"({a.shape[-1]} != {b.shape[-2]}); the last dim of a must equal the second-to-last dim of b"
        )


class MatMul(Function):
    """The product of two tensors of at least 2 dims, broadcasting batch dims."""

    backward_name = "MmBackward0"

    @staticmethod
    def forward(ctx, a, b):
        x, y = promoted_arrays(a, b, "matmul")
        _check_inner("matmul", x, y)
        ctx.save_for_backward(a, b)
        return wrap(np.matmul(x, y))

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        needs = ctx.needs_input_grad
        return (grad @ b.mT if needs[0] else None), (a.mT @ grad if needs[1] else None)


class BatchMatMul(MatMul):
    backward_name = "BmmBackward0"


@ember_function
def mm(input, mat2) -> Tensor:
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
    return MatMul.apply(a, b)


@ember_function
def matmul(input, other) -> Tensor:
    """NumPy-style matrix product: vectors are promoted to matrices, batch dims broadcast."""
    a, b = require_tensor(input, "matmul"), require_tensor(other, "matmul", 2, "other")
    if a._data.ndim == 0 or b._data.ndim == 0:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {a._data.ndim}D and {b._data.ndim}D"
        )
    vector_a, vector_b = a._data.ndim == 1, b._data.ndim == 1
    if vector_a:
        a = a.unsqueeze(0)
    if vector_b:
        b = b.unsqueeze(-1)
    result = (MatMul if a._data.ndim == b._data.ndim == 2 else BatchMatMul).apply(a, b)
    if vector_b:
        result = result.squeeze(-1)
    if vector_a:
        result = result.squeeze(-2)
    return result


@ember_function
def dot(input, other) -> Tensor:
    """Inner product of two 1-D tensors."""
    if input._data.ndim != 1 or other._data.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input._data.ndim}D and {other._data.ndim}D tensors")
    return matmul(input, other)
