"""Rprop: each coordinate keeps its own step size, grown while its gradient keeps its sign and shrunk when it flips.

>>> import ember
>>> w = ember.nn.Parameter(ember.tensor([5.]))
>>> opt = ember.optim.Rprop([w], lr=1.0)
>>> for _ in range(3):  # same sign each time: the step grows by 1.2
...     opt.zero_grad(); w.sum().backward(); opt.step()
>>> opt.state[w]["step_size"]
tensor([1.4400])
"""
from __future__ import annotations

from typing import Iterable

import numpy as np

from ember._tensor import Tensor
from ember.optim.optimizer import (
    _advance, _array, _assign_, _buffer, _check_lr, _clip_, _constant, _PerParameter, _scalar, _state_tensor,
    _zeroed_where, _zeros,
)

__all__ = ["Rprop"]


class Rprop(_PerParameter):
    """Where ``g * g_prev > 0`` the step size is multiplied by ``etas[1]``, where ``< 0`` by ``etas[0]`` (and
    that coordinate's gradient is taken as 0, skipping its step); clamped to ``step_sizes``;
    ``p -= sign(g) * step_size``."""

    _options = {"foreach": None, "maximize": False, "differentiable": False, "capturable": False}

    def __init__(self, params: Iterable, lr: float | Tensor = 1e-2, etas: tuple[float, float] = (0.5, 1.2),
                 step_sizes: tuple[float, float] = (1e-6, 50), *, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False, differentiable: bool = False) -> None:
        _check_lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict, group: dict) -> None:
        if not state:
            _zeros(state, param, "prev")
            state["step_size"] = _state_tensor(np.full_like(_array(grad), _scalar(group["lr"])))
        _advance(state["step"])
        eta_minus, eta_plus = group["etas"]
        low, high = group["step_sizes"]
        prev, step_size = _buffer(state, "prev", param), _buffer(state, "step_size", param)
        # the signs carry no gradient: found on the arrays, whether or not the update is recorded
        agreement = np.sign(_array(grad) * _array(prev))
        dtype = _array(param).dtype
        factor = np.where(agreement > 0, eta_plus, np.where(agreement < 0, eta_minus, 1.0)).astype(dtype)
        step_size *= _constant(factor, param)
        _clip_(step_size, low, high)
        grad = _zeroed_where(agreement < 0, grad)  # a sign change skips the coordinate
        param -= _constant(np.sign(_array(grad)), param) * step_size
        _assign_(prev, grad)
