"""RMSprop: divide the gradient by a running root mean square of recent gradients.

>>> import ember
>>> w = ember.nn.Parameter(ember.tensor([0.5, -3.]))
>>> opt = ember.optim.RMSprop([w], lr=0.01, alpha=0.75)
>>> w.abs().sum().backward()
>>> opt.step()  # a first step of lr / sqrt(1 - alpha) against the gradient's sign
>>> w
Parameter containing:
tensor([ 0.4800, -2.9800], requires_grad=True)
"""
from __future__ import annotations

from typing import Iterable

import numpy as np

from ember._tensor import Tensor
from ember.optim.optimizer import (
    _advance, _array, _average_square, _buffer, _check_hyper, _check_lr, _lerp, _narrow, _PerParameter,
    _plus_quotient_, _plus_scaled, _scalar, _scale_, _sqrt, _state_tensor, _with_weight_decay, _zeros,
)

__all__ = ["RMSprop"]


class RMSprop(_PerParameter):
    """``v = alpha * v + (1 - alpha) * g * g``; ``avg = sqrt(v) + eps`` (``centered``: ``sqrt(v - mean(g)**2)``);
    ``p -= lr * g / avg``, or with ``momentum``: ``buf = momentum * buf + g / avg``, ``p -= lr * buf``."""

    _options = {"momentum": 0, "centered": False, "capturable": False, "foreach": None, "maximize": False,
                "differentiable": False}

    def __init__(self, params: Iterable, lr: float | Tensor = 1e-2, alpha: float = 0.99, eps: float = 1e-8,
                 weight_decay: float = 0, momentum: float = 0, centered: bool = False, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False, differentiable: bool = False) -> None:
        _check_lr(lr)
        _check_hyper("epsilon value", eps)
        _check_hyper("momentum value", momentum)
        _check_hyper("weight_decay value", weight_decay)
        _check_hyper("alpha value", alpha)
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered, weight_decay=weight_decay,
                        capturable=capturable, foreach=foreach, maximize=maximize, differentiable=differentiable)
        super().__init__(params, defaults)

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict, group: dict) -> None:
        momentum, centered = group["momentum"], group["centered"]
        if not state:
            _zeros(state, param, "square_avg")
            if momentum > 0:
                state["momentum_buffer"] = _state_tensor(np.zeros_like(_array(param)))
            if centered:
                state["grad_avg"] = _state_tensor(np.zeros_like(_array(param)))
        _advance(state["step"])
        lr, alpha = _scalar(group["lr"]), group["alpha"]
        grad = _with_weight_decay(param, grad, group, lr)
        square_avg = _buffer(state, "square_avg", param)
        _average_square(square_avg, grad, alpha)
        if centered:
            grad_avg = _buffer(state, "grad_avg", param)
            _lerp(grad_avg, grad, 1 - alpha)
            avg = _sqrt(_centered(square_avg, grad_avg)) + group["eps"]
        else:
            avg = _sqrt(square_avg) + group["eps"]
        if momentum > 0:
            buf = _buffer(state, "momentum_buffer", param)
            _scale_(buf, momentum)
            _plus_quotient_(buf, grad, avg, 1.0)
            _plus_scaled(param, buf, -lr, out=param)
        else:
            _plus_quotient_(param, grad, avg, -lr)


def _centered(square_avg: np.ndarray | Tensor, grad_avg: np.ndarray | Tensor) -> np.ndarray | Tensor:
    """``square_avg - grad_avg**2``, as torch's ``addcmul(value=-1)``: for a half type in float32, rounded once."""
    if isinstance(grad_avg, Tensor):  # (its product's backward reads a copy: the average changes next step)
        return square_avg.addcmul(grad_avg.clone(), grad_avg.clone(), value=-1)
    if not _narrow(square_avg):
        return square_avg - grad_avg * grad_avg
    wide = grad_avg.astype(np.float32)
    return (square_avg.astype(np.float32) - wide * wide).astype(square_avg.dtype)
