"""The update rules' arithmetic on ember tensors, for ``differentiable=True``.

The built-in optimizers write each update rule once, with the helpers of ``optimizer`` (``_lerp``,
``_plus_quotient_``, ``_sqrt`` ...). Given NumPy arrays those run the fast, unrecorded update; given ember
tensors they come here, where every step is an ember op that autograd records, in place on the parameter and
its state as torch's differentiable update is. An operand the backward pass would read is cloned when it is a
state tensor that a later step changes in place (reading it then would fail the version check).
"""
from __future__ import annotations

import operator

import numpy as np

from ember._tensor import Tensor

# the NumPy functions the rules name, as the ember operators that record them
_OPERATORS = {np.multiply: operator.mul, np.divide: operator.truediv}


def lerp_(start: Tensor, end: Tensor, weight: float) -> Tensor:
    return start.lerp_(end, weight)


def average_square_(average: Tensor, grad: Tensor, keep: float) -> Tensor:
    return average.mul_(keep).addcmul_(grad, grad, value=1 - keep)


def plus_scaled(first: Tensor, second: Tensor, alpha: float | Tensor, out: Tensor | None) -> Tensor:
    if isinstance(alpha, Tensor):  # (a learning rate that requires grad: a factor autograd records)
        return first.add_(second * alpha) if out is first else first + second * alpha
    if out is first:
        return first.add_(second, alpha=alpha)
    return first.add(second, alpha=alpha)


def plus_quotient_(target: Tensor, numerator: Tensor, denominator: Tensor, value: float | Tensor) -> Tensor:
    if isinstance(value, Tensor):  # (a step size from a learning rate that requires grad)
        return target.add_(value * (numerator.clone() / denominator.clone()))
    return target.addcdiv_(numerator.clone(), denominator.clone(), value=value)


def with_number(op: np.ufunc, first, second) -> Tensor:
    return _OPERATORS[op](first, second)


def sqrt(value: Tensor) -> Tensor:
    """The root as a tensor the rule may go on to change in place (the root's backward reads its own result)."""
    return value.sqrt().clone()


def maximum_(target: Tensor, other: Tensor) -> Tensor:
    from ember import maximum  # imported late: ember's namespace imports the optimizers

    return target.copy_(maximum(target.clone(), other.clone()))


def detached_copy(tensor: Tensor) -> Tensor:
    """A new state tensor holding ``tensor``'s values, outside the graph (torch's first momentum buffer)."""
    return tensor.detach().clone()


def real_pairs(tensor: Tensor) -> Tensor:
    """A complex tensor as its (real, imaginary) pairs: a view through which in-place updates are recorded."""
    from ember import view_as_real  # imported late: ember's namespace imports the optimizers

    return view_as_real(tensor)


def complex_elements(tensor: Tensor) -> Tensor:
    from ember import view_as_complex

    return view_as_complex(tensor)
