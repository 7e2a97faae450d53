"""SparseAdam: Adam for sparse gradients (``nn.Embedding(sparse=True)``), updating only the rows a step touches.

The running averages and the parameter change only at the coordinates the (coalesced)
gradient stores, so the rows an embedding did not look up keep their moments: a lazy
Adam, which differs from Adam on the dense sum of the same gradients.

>>> import ember
>>> emb = ember.nn.Embedding(4, 2, sparse=True)
>>> opt = ember.optim.SparseAdam(emb.parameters(), lr=0.1)
>>> emb(ember.tensor([1, 3])).sum().backward()
>>> before = emb.weight.detach().clone()
>>> opt.step()
>>> (emb.weight != before).any(dim=1).tolist()
[False, True, False, True]
"""
from __future__ import annotations

import math
from typing import Any, Callable, Iterable

import numpy as np

from ember._ops._quiet import IGNORE_ALL, quietly
from ember._tensor import Tensor
from ember.autograd.grad_mode import enable_grad, no_grad
from ember.optim.optimizer import Optimizer, _check_betas, _check_hyper, _check_lr, _scalar, _state_tensor

__all__ = ["SparseAdam"]


def _refuse_params(groups: list, test: Callable, what: str) -> None:
    found = [[g, p] for g, group in enumerate(groups) for p, param in enumerate(group["params"]) if test(param)]
    if found:
        raise ValueError(f"{what} at indices {found}")


class SparseAdam(Optimizer):
    """For a sparse gradient ``g`` (coalesced) at step ``t``, at the coordinates it stores only:
    ``m = beta1 * m + (1 - beta1) * g``, ``v = beta2 * v + (1 - beta2) * g * g``, and
    ``p -= lr * sqrt(1 - beta2**t) / (1 - beta1**t) * m / (sqrt(v) + eps)``.
    """

    def __init__(self, params: Iterable, lr: float | Tensor = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, maximize: bool = False) -> None:
        _check_lr(lr)
        _check_hyper("epsilon value", eps)
        _check_betas(betas)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, maximize=maximize))
        _refuse_params(self.param_groups, lambda p: p.is_sparse,
                       "Sparse params: SparseAdam requires dense parameter tensors; found them")
        _refuse_params(self.param_groups, lambda p: p.is_complex(),
                       "Complex params: SparseAdam does not support complex parameters; found them")

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update every parameter that has a gradient (which must be sparse); ``closure`` is called first."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        with no_grad():
            for group in self.param_groups:
                for param in group["params"]:
                    if param.grad is not None:  # (quietly, as Optimizer.step)
                        quietly(IGNORE_ALL, self._update, param, param.grad, group)
        return loss

    def _update(self, param: Tensor, grad: Tensor, group: dict) -> None:
        if not grad.is_sparse:
            raise RuntimeError("SparseAdam does not support dense gradients, please consider Adam instead")
        grad = grad.coalesce()
        where = tuple(grad._ind)
        values = -grad._val if group["maximize"] else grad._val
        if values.size == 0:
            return
        state = self.state[param]
        if not state:
            state["step"] = 0
            state["exp_avg"] = _state_tensor(np.zeros_like(param._data))
            state["exp_avg_sq"] = _state_tensor(np.zeros_like(param._data))
        state["step"] += 1
        beta1, beta2 = map(_scalar, group["betas"])
        exp_avg, exp_avg_sq = state["exp_avg"]._data, state["exp_avg_sq"]._data
        first = exp_avg[where] + (values - exp_avg[where]) * (1 - beta1)
        second = exp_avg_sq[where] + (values * values - exp_avg_sq[where]) * (1 - beta2)
        exp_avg[where], exp_avg_sq[where] = first, second
        step = state["step"]
        step_size = _scalar(group["lr"]) * math.sqrt(1 - beta2 ** step) / (1 - beta1 ** step)
        param._data[where] -= step_size * first / (np.sqrt(second) + group["eps"])
        param._bump()
