"""Adafactor: adaptive steps from a factored second moment (a row and a column factor per matrix).

For a parameter of two or more dims, the running mean of the squared gradient is kept only as its row
means and its column means, and estimated as their outer product over their overall mean: memory
grows with rows plus columns, not rows times columns. The step is relative to the parameter's root mean
square, clipped so that the update's RMS stays within ``d``. This follows torch's variant: ``lr`` bounds the
relative step and scales the decoupled weight decay, and ``eps[0]`` (by default the dtype's machine
epsilon) stabilizes the estimate.

>>> import ember
>>> w = ember.nn.Parameter(ember.ones(2, 3))
>>> opt = ember.optim.Adafactor([w])
>>> (w * w).sum().backward()
>>> opt.step()
>>> sorted(opt.state[w])
['col_var', 'row_var', 'step']
>>> w[0, 0].item() < 1.0
True
"""
from __future__ import annotations

from typing import Iterable

import numpy as np

from ember import _dtype
from ember._tensor import Tensor
from ember.optim.optimizer import _PerParameter, _advance, _counter, _lerp, _scalar, _state_tensor

__all__ = ["Adafactor"]


def _check(lr, beta2_decay: float, eps: tuple, d: float, weight_decay: float) -> None:
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= lr:
        raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
    if not (isinstance(eps, (tuple, list)) and len(eps) == 2):
        raise TypeError(f"Adafactor: eps must be a pair (epsilon1 or None, epsilon2), but got {eps!r}")
    if not 0.0 >= beta2_decay:
        raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
    if eps[0] is not None and not 0.0 <= eps[0]:
        raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
    if not 0.0 <= eps[1]:
        raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
    if not 1.0 <= d:
        raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
    if not 0.0 <= weight_decay:
        raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")


def _first_state(state: dict, grad: np.ndarray) -> None:
    state["step"] = _counter()
    if grad.ndim > 1:
        state["row_var"] = _state_tensor(np.zeros(grad.shape[:-1] + (1,), grad.dtype))
        state["col_var"] = _state_tensor(np.zeros(grad.shape[:-2] + (1,) + grad.shape[-1:], grad.dtype))
    else:
        state["variance"] = _state_tensor(np.zeros_like(grad))


def _root_mean_square(values: np.ndarray) -> float:
    return float(np.sqrt(np.vdot(values, values) / max(values.size, 1))) if values.size else 0.0


class Adafactor(_PerParameter):
    """Adafactor, as torch's (see the module's docstring): ``lr`` caps the relative step ``min(lr, 1/sqrt(t))``."""

    _options = {"maximize": False, "foreach": None}
    _takes_complex = False

    def __init__(self, params: Iterable, lr: float | Tensor = 1e-2, beta2_decay: float = -0.8,
                 eps: tuple[float | None, float] = (None, 1e-3), d: float = 1.0, weight_decay: float = 0.0, *,
                 foreach: bool | None = None, maximize: bool = False) -> None:
        _check(lr, beta2_decay, eps, d, weight_decay)
        defaults = dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize)
        super().__init__(params, defaults)

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict, group: dict) -> None:
        if not state:
            _first_state(state, grad)
        step = _advance(state["step"])
        lr = _scalar(group["lr"])
        eps1, eps2 = group["eps"]
        eps1 = _dtype.float_info(param.dtype).eps if eps1 is None else eps1
        mix = step ** group["beta2_decay"]  # 1 - beta2 at this step
        alpha = max(eps2, _root_mean_square(param)) * min(lr, 1 / step ** 0.5)
        if group["weight_decay"]:
            param *= 1 - lr * group["weight_decay"]
        squared = grad * grad
        if grad.ndim > 1:
            rows, cols = state["row_var"]._data, state["col_var"]._data
            _lerp(rows, squared.mean(axis=-1, keepdims=True), mix)
            _lerp(cols, squared.mean(axis=-2, keepdims=True), mix)
            estimate = rows @ cols / np.maximum(rows.mean(axis=-2, keepdims=True), eps1)
        else:
            _lerp(state["variance"]._data, squared, mix)
            estimate = state["variance"]._data.copy()
        update = grad / np.sqrt(np.maximum(estimate, eps1 * eps1))
        clip = max(1.0, _root_mean_square(update) / group["d"])
        param -= (alpha / clip) * update
