"""Muon: momentum whose update is orthogonalized (by a Newton-Schulz iteration) before the step.

For 2-D parameters (the weight matrices of hidden layers); train the others (biases, embeddings) with
an optimizer such as AdamW. As torch's: the momentum is an exponential average (``lerp``), Nesterov's by
default; five quintic Newton-Schulz steps bring the update's singular values near 1; the step is scaled
for the matrix's shape (``adjust_lr_fn``) after a decoupled weight decay. One difference: NumPy has no
bfloat16, so the iteration runs in the parameter's own precision where torch's runs in bfloat16.

>>> import ember
>>> w = ember.nn.Parameter(ember.eye(3) * 2)
>>> opt = ember.optim.Muon([w], lr=0.1, weight_decay=0.0)
>>> (w * ember.tensor([[1.0, 0, 0], [0, 2, 0], [0, 0, 3]])).sum().backward()
>>> opt.step()
>>> [round(v, 2) for v in w.diagonal().tolist()]  # gradients 1, 2 and 3: each step near lr all the same
[1.93, 1.93, 1.89]
"""
from __future__ import annotations

import math
from typing import Iterable

import numpy as np

from ember._tensor import Tensor
from ember.optim.optimizer import _PerParameter, _lerp, _scalar, _state_tensor

__all__ = ["Muon"]

_COEFFICIENTS = (3.4445, -4.7750, 2.0315)


def _orthogonalized(update: np.ndarray, coefficients: tuple, steps: int, eps: float) -> np.ndarray:
    """``update`` with its singular values pushed toward 1 by ``steps`` quintic Newton-Schulz iterations."""
    if steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if len(coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = coefficients
    tall = update.shape[0] > update.shape[1]
    x = update.T if tall else update
    x = x / max(float(np.linalg.norm(x)), eps)
    for _ in range(steps):
        gram = x @ x.T
        x = a * x + (b * gram + c * (gram @ gram)) @ x
    return x.T if tall else x


def _shape_scale(adjust_lr_fn: str | None, shape: tuple) -> float:
    rows, cols = shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        return math.sqrt(max(1, rows / cols))
    return 0.2 * math.sqrt(max(rows, cols))  # "match_rms_adamw"


class Muon(_PerParameter):
    """Muon for 2-D parameters: ``p -= lr * scale(shape) * orthogonalize(nesterov(momentum))``."""

    _options: dict = {}  # (torch's Muon has no maximize or foreach: a loaded state dict gains no such keys)
    _takes_complex = False

    def __init__(self, params: Iterable, lr: float | Tensor = 1e-3, weight_decay: float = 0.1,
                 momentum: float = 0.95, nesterov: bool = True, ns_coefficients: tuple = _COEFFICIENTS,
                 eps: float = 1e-7, ns_steps: int = 5, adjust_lr_fn: str | None = None) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ("original", "match_rms_adamw"):
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = dict(lr=lr, weight_decay=weight_decay, momentum=momentum, nesterov=nesterov,
                        ns_coefficients=ns_coefficients, eps=eps, ns_steps=ns_steps, adjust_lr_fn=adjust_lr_fn)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.dim() != 2:
                    raise ValueError(f"Muon only supports 2D parameters whereas we found a parameter with size: "
                                     f"{p.shape}")

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict, group: dict) -> None:
        if "momentum_buffer" not in state:
            state["momentum_buffer"] = _state_tensor(np.zeros_like(grad))
        buffer = state["momentum_buffer"]._data
        momentum = group["momentum"]
        _lerp(buffer, grad, 1 - momentum)
        if group["nesterov"]:
            update = grad.copy()
            _lerp(update, buffer, momentum)
        else:
            update = buffer
        update = _orthogonalized(update, group["ns_coefficients"], group["ns_steps"], group["eps"])
        lr = _scalar(group["lr"])
        decay, step = 1 - lr * group["weight_decay"], lr * _shape_scale(group["adjust_lr_fn"], param.shape)
        if isinstance(group["lr"], Tensor):  # torch works both out as tensors of lr's dtype, rounding each
            rounded = group["lr"]._data.dtype.type
            decay, step = float(1 - rounded(lr * group["weight_decay"])), float(rounded(step))
        param *= decay
        param -= step * update.astype(param.dtype, copy=False)
