"""NAdam: Adam with Nesterov momentum, whose momentum warms up by ``momentum_decay``.

>>> import ember
>>> w = ember.nn.Parameter(ember.tensor([1., -1.]))
>>> opt = ember.optim.NAdam([w], lr=0.1)
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
    _advance, _array, _average_square, _buffer, _check_adam_family, _check_hyper, _counter, _learning_rate, _lerp,
    _PerParameter, _plus_quotient_, _sqrt, _state_tensor, _typed, _with_number, _with_weight_decay,
)

__all__ = ["NAdam"]


class NAdam(_PerParameter):
    """Momentum ``mu_t = beta1 * (1 - 0.96 ** (t * momentum_decay) / 2)``; the step mixes the gradient and
    the first moment by ``mu_t`` and ``mu_{t+1}``, each divided by the running product of the ``mu``'s."""

    _options = {"decoupled_weight_decay": False, "maximize": False, "foreach": None, "capturable": False,
                "differentiable": False}

    def __init__(self, params: Iterable, lr: float | Tensor = 2e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, *, foreach: bool | None = None, maximize: bool = False,
                 capturable: bool = False, differentiable: bool = False) -> None:
        _check_adam_family(lr, eps, betas, weight_decay)
        _check_hyper("momentum_decay value", momentum_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize, foreach=foreach,
                        capturable=capturable, differentiable=differentiable)
        super().__init__(params, defaults)

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict, group: dict) -> None:
        if not state:
            state["step"] = _counter()
            state["mu_product"] = _counter(1.0)
            state["exp_avg"] = _state_tensor(np.zeros_like(_array(param)))
            state["exp_avg_sq"] = _state_tensor(np.zeros_like(_array(param)))
        step = _advance(state["step"])
        lr, (beta1, beta2) = _learning_rate(group, param), group["betas"]
        grad = _with_weight_decay(param, grad, group, lr)
        decay = group["momentum_decay"]
        mu = beta1 * (1.0 - 0.5 * 0.96 ** (step * decay))
        mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((step + 1) * decay))
        mu_product = state["mu_product"]
        mu_product._data *= mu  # a float32 product, as torch keeps it
        mu_product._bump()
        product = float(mu_product._data)
        exp_avg, exp_avg_sq = _buffer(state, "exp_avg", param), _buffer(state, "exp_avg_sq", param)
        _lerp(exp_avg, grad, 1 - beta1)
        _average_square(exp_avg_sq, grad, beta2)
        eps = _typed(group["eps"], param)
        denom = _sqrt(_with_number(np.divide, exp_avg_sq, 1 - beta2 ** step)) + eps
        _plus_quotient_(param, grad, denom, -lr * (1.0 - mu) / (1.0 - product))
        _plus_quotient_(param, exp_avg, denom, -lr * mu_next / (1.0 - product * mu_next))
