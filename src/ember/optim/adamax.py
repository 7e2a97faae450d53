"""Adamax: Adam with the infinity norm in place of the root mean square.

>>> import ember
>>> w = ember.nn.Parameter(ember.tensor([3., -0.5]))
>>> opt = ember.optim.Adamax([w], lr=0.1)
>>> w.sum().backward()
>>> opt.step()
>>> opt.state[w]["exp_inf"]
tensor([1., 1.])
"""
from __future__ import annotations

from typing import Iterable

import numpy as np

from ember._tensor import Tensor
from ember.optim.optimizer import (
    _PerParameter, _buffer, _check_adam_family, _lerp, _maximum_, _plus_quotient_, _scale_,
)

__all__ = ["Adamax"]


class Adamax(_PerParameter):
    """``m = lerp(m, g, 1 - beta1)``, ``u = max(beta2 * u, |g| + eps)``, ``p -= lr / (1 - beta1**t) * m / u``."""

    _options = {"maximize": False, "foreach": None, "differentiable": False, "capturable": False}

    def __init__(self, params: Iterable, lr: float | Tensor = 2e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, foreach: bool | None = None, *, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False) -> None:
        _check_adam_family(lr, eps, betas, weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict, group: dict) -> None:
        step, lr, grad = self._begin(param, grad, state, group, "exp_avg", "exp_inf")
        beta1, beta2 = group["betas"]
        exp_avg, exp_inf = _buffer(state, "exp_avg", param), _buffer(state, "exp_inf", param)
        _lerp(exp_avg, grad, 1 - beta1)
        _scale_(exp_inf, beta2)
        _maximum_(exp_inf, abs(grad) + group["eps"])
        _plus_quotient_(param, exp_avg, exp_inf, -(lr / (1 - beta1 ** step)))
