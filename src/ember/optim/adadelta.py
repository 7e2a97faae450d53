"""Adadelta: steps scaled by the ratio of running root mean squares of past updates and of gradients.

>>> import ember
>>> w = ember.nn.Parameter(ember.tensor([1., -1.]))
>>> opt = ember.optim.Adadelta([w], lr=1.0, rho=0.0, eps=1.0)
>>> (w ** 2).sum().backward()
>>> opt.step()
>>> w.detach().abs().lt(1).tolist()
[True, True]
"""
from __future__ import annotations

from typing import Iterable

import numpy as np

from ember._tensor import Tensor
from ember.optim.optimizer import (
    _PerParameter, _average_square, _buffer, _check_hyper, _check_lr, _plus_scaled, _sqrt, _typed,
)

__all__ = ["Adadelta"]


class Adadelta(_PerParameter):
    """``v = rho * v + (1 - rho) * g * g``; ``delta = sqrt(u + eps) / sqrt(v + eps) * g``;
    ``u = rho * u + (1 - rho) * delta * delta``; ``p -= lr * delta``."""

    _options = {"maximize": False, "capturable": False, "foreach": None, "differentiable": False}

    def __init__(self, params: Iterable, lr: float | Tensor = 1.0, rho: float = 0.9, eps: float = 1e-6,
                 weight_decay: float = 0, foreach: bool | None = None, *, capturable: bool = False,
                 maximize: bool = False, differentiable: bool = False) -> None:
        _check_lr(lr)
        _check_hyper("rho value", rho, 0.0, None)
        if rho > 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        _check_hyper("epsilon value", eps)
        _check_hyper("weight_decay value", weight_decay)
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize, capturable=capturable,
                        foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict, group: dict) -> None:
        _, lr, grad = self._begin(param, grad, state, group, "square_avg", "acc_delta")
        rho, eps = group["rho"], group["eps"]
        square_avg, acc_delta = _buffer(state, "square_avg", param), _buffer(state, "acc_delta", param)
        _average_square(square_avg, grad, rho)
        eps = _typed(eps, param)
        delta = _sqrt(acc_delta + eps) / _sqrt(square_avg + eps) * grad
        _average_square(acc_delta, delta, rho)
        _plus_scaled(param, delta, -lr, out=param)
