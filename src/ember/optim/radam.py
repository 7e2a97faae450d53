"""RAdam: Adam whose adaptive step is switched on, and rectified, once the variance estimate is reliable.

>>> import ember
>>> w = ember.nn.Parameter(ember.zeros(3))
>>> opt = ember.optim.RAdam([w], lr=0.5)
>>> (w * ember.tensor([1., 2., 3.])).sum().backward()
>>> opt.step()  # early steps are plain momentum steps
>>> w
Parameter containing:
tensor([-0.5000, -1.0000, -1.5000], requires_grad=True)
"""
from __future__ import annotations

import math
from typing import Iterable

import numpy as np

from ember._tensor import Tensor
from ember.optim.optimizer import (
    _PerParameter, _average_square, _buffer, _check_adam_family, _lerp, _sqrt, _typed, _with_number,
)

__all__ = ["RAdam"]


class RAdam(_PerParameter):
    """With ``rho_inf = 2 / (1 - beta2) - 1`` and ``rho_t = rho_inf - 2 t beta2**t / (1 - beta2**t)``: while
    ``rho_t <= 5`` the step is plain momentum ``lr * m_hat``; after, Adam's step times the rectification
    ``sqrt((rho_t - 4)(rho_t - 2) rho_inf / ((rho_inf - 4)(rho_inf - 2) rho_t))``."""

    _options = {"decoupled_weight_decay": False, "maximize": False, "foreach": None, "capturable": False,
                "differentiable": False}

    def __init__(self, params: Iterable, lr: float | Tensor = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, decoupled_weight_decay: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        _check_adam_family(lr, eps, betas, weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, maximize=maximize, foreach=foreach,
                        capturable=capturable, decoupled_weight_decay=decoupled_weight_decay,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict, group: dict) -> None:
        step, lr, grad = self._begin(param, grad, state, group, "exp_avg", "exp_avg_sq")
        beta1, beta2 = group["betas"]
        exp_avg, exp_avg_sq = _buffer(state, "exp_avg", param), _buffer(state, "exp_avg_sq", param)
        _lerp(exp_avg, grad, 1 - beta1)
        _average_square(exp_avg_sq, grad, beta2)
        correction2 = 1 - beta2 ** step
        # (each op on a number as torch's: for a half type, in float32 and rounded once)
        step_size = _with_number(np.multiply, _with_number(np.divide, exp_avg, 1 - beta1 ** step), lr)
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2 ** step) / correction2
        if rho_t > 5.0:
            rect = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
            adaptive = _with_number(np.divide, correction2 ** 0.5,
                                    _sqrt(exp_avg_sq) + _typed(group["eps"], param))
            step_size = _with_number(np.multiply, step_size * adaptive, rect)
        param -= step_size
