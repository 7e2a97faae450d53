"""Helpers shared by the distributions: broadcasting parameters, probabilities and logits, cached properties.

>>> import ember
>>> from ember.distributions.utils import broadcast_all, probs_to_logits
>>> [t.shape for t in broadcast_all(ember.zeros(3), 1.0)]
[ember.Size([3]), ember.Size([3])]
>>> probs_to_logits(ember.tensor([0.5]), is_binary=True)
tensor([0.])
"""
from __future__ import annotations

import math
import numbers

import ember
from ember import Tensor


def broadcast_all(*values) -> tuple:
    """Tensors and Python numbers, as tensors of one broadcast shape.

    Numbers take the dtype of the first tensor among ``values`` (the default dtype when there is none).
    """
    for value in values:
        if not isinstance(value, (Tensor, numbers.Number)) and not hasattr(value, "__torch_function__"):
            raise ValueError(f"broadcast_all: every argument must be a number or a Tensor, got "
                             f"{type(value).__name__}; wrap it with ember.tensor(...)")
    first = next((v for v in values if isinstance(v, Tensor)), None)
    dtype = first.dtype if first is not None else ember.get_default_dtype()
    tensors = [v if isinstance(v, Tensor) else ember.tensor(v, dtype=dtype) for v in values]
    return tuple(ember.broadcast_tensors(*tensors))


def _sum_rightmost(value: Tensor, dim: int) -> Tensor:
    """``value`` summed over its ``dim`` rightmost dimensions (none when ``dim`` is 0)."""
    if dim == 0:
        return value
    return value.reshape(value.shape[:-dim] + (-1,)).sum(-1)


def clamp_probs(probs: Tensor) -> Tensor:
    """``probs`` kept one machine epsilon inside (0, 1), so their logarithms stay finite."""
    eps = ember.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    """Probabilities from logits: the sigmoid of each when ``is_binary``, else the softmax of the last dim."""
    if is_binary:
        return ember.sigmoid(logits)
    return ember.softmax(logits, dim=-1)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    """Logits from probabilities (clamped first): log-odds when ``is_binary``, else the log of each."""
    clamped = clamp_probs(probs)
    if is_binary:
        return ember.log(clamped) - ember.log1p(-clamped)
    return ember.log(clamped)


class lazy_property:
    """A property computed on first use and then stored on the instance (parameters derived from others)."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        self.__doc__ = wrapped.__doc__
        self.__name__ = wrapped.__name__

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        with ember.enable_grad():
            value = self.wrapped(instance)
        instance.__dict__[self.wrapped.__name__] = value
        return value


def tril_matrix_to_vec(mat: Tensor, diag: int = 0) -> Tensor:
    """The lower triangle (from diagonal ``diag``) of the last two dims, row by row, as a vector."""
    n = mat.shape[-1]
    rows, cols = ember.tril_indices(n, n, offset=diag)
    return mat[..., rows, cols]


def vec_to_tril_matrix(vec, diag: int = 0):
    """The inverse of ``tril_matrix_to_vec``: vectors (last dim) laid row by row into a lower triangle."""
    length = vec.shape[-1]
    # the positive root of n² + (1 + 2 diag) n - |diag| (diag + 1) - 2 length = 0
    b = 1 + 2 * diag
    n = (-b + math.sqrt(b * b + 8 * length + 4 * abs(diag) * (diag + 1))) / 2
    if abs(round(n) - n) > 1e-9:
        raise ValueError(f"The size of last dimension is {length} which cannot be expressed as the lower "
                         "triangular part of a square D x D matrix.")
    n = round(n)
    matrix = vec.new_zeros(vec.shape[:-1] + (n, n))
    rows, cols = ember.tril_indices(n, n, offset=diag)
    matrix[..., rows, cols] = vec
    return matrix
