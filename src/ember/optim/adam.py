"""Adam: per-coordinate steps from running averages of the gradient and of its square.

>>> import ember
>>> w = ember.nn.Parameter(ember.tensor([1., -1.]))
>>> opt = ember.optim.Adam([w], lr=0.1)
>>> (w ** 2).sum().backward()
>>> opt.step()
>>> w
Parameter containing:
tensor([ 0.9000, -0.9000], requires_grad=True)
"""
from __future__ import annotations

import math
from typing import Iterable

import numpy as np

from ember._tensor import Tensor
from ember.optim.optimizer import (
    _PerParameter, _average_square, _buffer, _check_adam_family, _check_fused, _lerp, _maximum_, _narrow,
    _plus_quotient_, _scalar, _scratch, _sqrt,
)

__all__ = ["Adam"]


class Adam(_PerParameter):
    """For gradient ``g`` at step ``t``: ``m = lerp(m, g, 1 - beta1)``, ``v = beta2 * v + (1 - beta2) * g * g``
    (``v`` replaced by its running maximum with ``amsgrad``), then
    ``p -= lr / (1 - beta1**t) * m / (sqrt(v) / sqrt(1 - beta2**t) + eps)``.

    ``weight_decay`` adds ``weight_decay * p`` to ``g``, or with ``decoupled_weight_decay`` (AdamW)
    scales ``p`` by ``1 - lr * weight_decay`` first.
    """

    _sparse_hint = ", please consider SparseAdam instead"
    _options = {"amsgrad": False, "maximize": False, "foreach": None, "capturable": False, "differentiable": False,
                "fused": None, "decoupled_weight_decay": False}

    def __init__(self, params: Iterable, lr: float | Tensor = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, amsgrad: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False, differentiable: bool = False,
                 fused: bool | None = None, decoupled_weight_decay: bool = False) -> None:
        _check_tensor_lr(lr, foreach, capturable)
        _check_adam_family(lr, eps, betas, weight_decay)
        betas = _checked_betas(betas, foreach, capturable)
        # foreach, fused and capturable choose how torch runs the update on a device: same arithmetic, ignored here
        # (Adam and AdamW alone keep the betas as a tuple whatever sequence they come in, as torch's)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad, maximize=maximize,
                        foreach=foreach, capturable=capturable, differentiable=differentiable, fused=fused,
                        decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)
        _check_fused(fused, foreach, differentiable)

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict, group: dict) -> None:
        moments = ("exp_avg", "exp_avg_sq", "max_exp_avg_sq") if group["amsgrad"] else ("exp_avg", "exp_avg_sq")
        step, lr, grad = self._begin(param, grad, state, group, *moments)
        beta1, beta2 = map(_scalar, group["betas"])
        exp_avg, exp_avg_sq = _buffer(state, "exp_avg", param), _buffer(state, "exp_avg_sq", param)
        scratch = _scratch(exp_avg)  # every temporary of the update, in turn
        _lerp(exp_avg, grad, 1 - beta1, scratch)
        _average_square(exp_avg_sq, grad, beta2, scratch)
        if group["amsgrad"]:
            exp_avg_sq = _maximum_(_buffer(state, "max_exp_avg_sq", param), exp_avg_sq)
        step_size = lr / (1 - beta1 ** step)
        if _narrow(param):
            _narrow_step(param, exp_avg, exp_avg_sq, step_size, math.sqrt(1 - beta2 ** step), group["eps"])
            return
        # param -= step_size * exp_avg / (sqrt(v) / sqrt(1 - beta2**t) + eps), rounded step by step as before
        denom = _sqrt(exp_avg_sq, out=scratch)
        denom /= math.sqrt(1 - beta2 ** step)
        denom += group["eps"]
        _plus_quotient_(param, exp_avg, denom, -step_size, scratch=denom)


def _check_tensor_lr(lr: float | Tensor, foreach: bool | None, capturable: bool) -> None:
    # torch's batched (foreach) update reads a tensor lr only when capturable: it refuses the pair up front
    if isinstance(lr, Tensor) and foreach and not capturable:
        raise ValueError("lr as a Tensor is not supported for capturable=False and foreach=True")


def _checked_betas(betas: tuple, foreach: bool | None, capturable: bool) -> tuple:
    """The betas as torch keeps them: both floats, or both 1-element tensors (as 0-d tensors)."""
    if not all(isinstance(beta, float) for beta in betas[:2]) and \
            not all(isinstance(beta, Tensor) for beta in betas[:2]):
        raise ValueError(f"betas must be either both floats or both Tensors, got {tuple(betas)}")
    for index, beta in enumerate(betas[:2]):
        if not isinstance(beta, Tensor):
            continue
        if foreach and not capturable:
            raise ValueError(f"betas[{index}] as a Tensor is not supported for capturable=False and foreach=True")
        if beta.numel() != 1:
            raise ValueError(f"Tensor betas[{index}] must be 1-element, got shape {list(beta.shape)}")
    return tuple(beta.reshape(()) if isinstance(beta, Tensor) else beta for beta in betas)


def _narrow_step(param: np.ndarray, exp_avg: np.ndarray, exp_avg_sq: np.ndarray, step_size: float,
                 correction: float, eps: float) -> None:
    """The last part of the update of a half-type parameter, rounded as torch rounds it: each op computed in
    float32 and rounded once (``eps``, added as a number, is rounded to the type first)."""
    denom = np.sqrt(exp_avg_sq)
    denom = (denom.astype(np.float32) / np.float32(correction)).astype(param.dtype)
    denom += np.array(eps, param.dtype)
    _plus_quotient_(param, exp_avg, denom, -step_size)
