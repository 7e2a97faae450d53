"""Adagrad: per-coordinate steps that shrink with the sum of all squared gradients so far.

>>> import ember
>>> w = ember.nn.Parameter(ember.ones(2))
>>> opt = ember.optim.Adagrad([w], lr=0.5, initial_accumulator_value=3.0)
>>> opt.state[w]["sum"]  # made with the optimizer, before any step
tensor([3., 3.])
>>> (w * 2).sum().backward(); opt.step()
>>> opt.state[w]["sum"]
tensor([7., 7.])
"""
from __future__ import annotations

from typing import Iterable

import numpy as np

from ember._tensor import Tensor
from ember.optim.optimizer import (
    _advance, _buffer, _check_fused, _check_hyper, _check_lr, _counter, _narrow, _PerParameter, _plus_quotient_,
    _scalar, _sqrt, _state_tensor, _with_weight_decay,
)

__all__ = ["Adagrad"]


class Adagrad(_PerParameter):
    """``sum += g * g``; ``p -= lr / (1 + (t - 1) * lr_decay) * g / (sqrt(sum) + eps)``.

    As torch, the state (``sum`` from ``initial_accumulator_value``, ``step``) exists from construction.
    """

    _options = {"foreach": None, "maximize": False, "differentiable": False, "fused": None}
    _takes_sparse = True  # nn.Embedding(sparse=True)'s gradient: the same update as its dense sum

    def __init__(self, params: Iterable, lr: float | Tensor = 1e-2, lr_decay: float = 0, weight_decay: float = 0,
                 initial_accumulator_value: float = 0, eps: float = 1e-10, foreach: bool | None = None, *,
                 maximize: bool = False, differentiable: bool = False, fused: bool | None = None) -> None:
        _check_lr(lr)
        _check_hyper("lr_decay value", lr_decay)
        _check_hyper("weight_decay value", weight_decay)
        _check_hyper("initial_accumulator_value value", initial_accumulator_value)
        _check_hyper("epsilon value", eps)
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        _check_fused(fused, foreach, differentiable)
        for group in self.param_groups:
            for param in group["params"]:
                self._init_state(param, group)

    def _init_state(self, param: Tensor, group: dict) -> None:
        state = self.state[param]
        if not state:
            state["step"] = _counter()
            value = group["initial_accumulator_value"]
            if param._data.dtype.kind == "c":  # the update sees (real, imaginary) pairs: both parts start there
                value = complex(value, value)
            state["sum"] = _state_tensor(np.full_like(param._data, value))

    def add_param_group(self, param_group: dict) -> None:
        super().add_param_group(param_group)
        if hasattr(self, "state"):
            group = self.param_groups[-1]
            for param in group["params"]:
                self._init_state(param, group)

    def share_memory(self) -> None:
        """Kept for torch's API: ember's state lives in one process's memory, so there is nothing to share."""

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict, group: dict) -> None:
        step = _advance(state["step"])
        lr = _scalar(group["lr"])
        grad = _with_weight_decay(param, grad, group, lr)
        total = _buffer(state, "sum", param)
        if _narrow(total):  # as torch's addcmul_: in float32, rounded once
            total[...] = total.astype(np.float32) + np.square(grad.astype(np.float32))
        else:
            total += grad * grad
        clr = lr / (1 + (step - 1) * group["lr_decay"])
        _plus_quotient_(param, grad, _sqrt(total) + group["eps"], -clr)
