"""ASGD: stochastic gradient descent with a decaying step, that also keeps a running average of the parameters.

>>> import ember
>>> w = ember.nn.Parameter(ember.tensor([2.]))
>>> opt = ember.optim.ASGD([w], lr=0.25, lambd=0.0, t0=0)
>>> for _ in range(3):
...     opt.zero_grad(); (w ** 2).sum().backward(); opt.step()
>>> w, opt.state[w]["ax"]
(Parameter containing:
tensor([0.2500], requires_grad=True), tensor([0.3750]))
"""
from __future__ import annotations

from typing import Iterable

import numpy as np

from ember._tensor import Tensor
from ember.optim.optimizer import (
    _advance, _array, _assign_, _buffer, _check_hyper, _check_lr, _counter, _PerParameter, _plus_scaled, _scalar,
    _scale_, _state_tensor, _with_number, _with_weight_decay,
)

__all__ = ["ASGD"]


class ASGD(_PerParameter):
    """``p = p * (1 - lambd * eta) - eta * g``; the average ``ax`` follows ``p`` with weight ``mu``;
    then ``eta = lr / (1 + lambd * lr * t) ** alpha`` and ``mu = 1 / max(1, t - t0)``."""

    _options = {"foreach": None, "maximize": False, "differentiable": False, "capturable": False}

    def __init__(self, params: Iterable, lr: float | Tensor = 1e-2, lambd: float = 1e-4, alpha: float = 0.75,
                 t0: float = 1e6, weight_decay: float = 0, foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False) -> None:
        _check_lr(lr)
        _check_hyper("weight_decay value", weight_decay)
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict, group: dict) -> None:
        lr = _scalar(group["lr"])
        if not state:
            state["step"] = _counter()
            state["eta"] = _counter(lr)
            state["mu"] = _counter(1.0)
            state["ax"] = _state_tensor(np.zeros_like(_array(param)))
        step = _advance(state["step"])
        grad = _with_weight_decay(param, grad, group, lr)
        eta, mu, lambd = float(state["eta"]._data), float(state["mu"]._data), group["lambd"]
        _scale_(param, 1 - lambd * eta)
        _plus_scaled(param, grad, -eta, out=param)
        ax = _buffer(state, "ax", param)
        if mu != 1:
            ax += _with_number(np.multiply, param - ax, mu)
        else:
            _assign_(ax, param)
        # rounded to float32 even where a loaded state holds them in float64, as torch's new values are float32
        state["eta"]._data[...] = np.float32(lr / ((1 + lambd * lr * step) ** group["alpha"]))
        state["mu"]._data[...] = np.float32(1 / max(1, step - group["t0"]))
