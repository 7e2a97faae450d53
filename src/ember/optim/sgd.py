"""Stochastic gradient descent, with momentum, Nesterov momentum, weight decay and maximisation.

>>> import ember
>>> w = ember.nn.Parameter(ember.tensor([1., 2.]))
>>> opt = ember.optim.SGD([w], lr=0.1)
>>> (w ** 2).sum().backward()
>>> opt.step()
>>> w
Parameter containing:
tensor([0.8000, 1.6000], requires_grad=True)
"""
from __future__ import annotations

from typing import Any, Callable, Iterable

from ember._ops.copy import clone
from ember._tensor import Tensor
from ember.autograd.grad_mode import enable_grad, no_grad
from ember.optim.optimizer import Optimizer

__all__ = ["SGD"]


class SGD(Optimizer):
    """For each parameter ``p`` with gradient ``g`` (negated when ``maximize``):

    1. ``g = g + weight_decay * p``
    2. with momentum: ``buf = g`` on the first step, then ``buf = momentum * buf + (1 - dampening) * g``;
       ``g = g + momentum * buf`` (Nesterov) or ``g = buf``
    3. ``p = p - lr * g``
    """

    def __init__(self, params: Iterable, lr: float = 1e-3, momentum: float = 0, dampening: float = 0,
                 weight_decay: float = 0, nesterov: bool = False, *, maximize: bool = False,
                 foreach: bool | None = None, differentiable: bool = False, fused: bool | None = None) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError(f"Tensor lr must be 1-element, got shape {list(lr.shape)}")
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        # foreach and fused choose how torch batches the update on a device; the arithmetic is the same,
        # so ember accepts them (and keeps them in the groups, for state_dict compatibility) and ignores them.
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay, nesterov=nesterov,
                        maximize=maximize, foreach=foreach, differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        for group in self.param_groups:  # saved by versions that did not have these options yet
            group.setdefault("nesterov", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("differentiable", False)
            group.setdefault("fused", False)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update every parameter that has a gradient; ``closure`` (re-evaluating the loss) is called first."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        with no_grad():
            for group in self.param_groups:
                for param in group["params"]:
                    if param.grad is not None:
                        self._update(param, group)
        return loss

    def _update(self, param: Tensor, group: dict) -> None:
        grad = -param.grad if group["maximize"] else param.grad
        if group["weight_decay"] != 0:
            grad = grad.add(param, alpha=group["weight_decay"])
        momentum = group["momentum"]
        if momentum != 0:
            state = self.state[param]
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = state["momentum_buffer"] = clone(grad).detach()
            else:
                buf.mul_(momentum).add_(grad, alpha=1 - group["dampening"])
            grad = grad.add(buf, alpha=momentum) if group["nesterov"] else buf
        lr = group["lr"]
        param.add_(grad, alpha=-(lr.item() if isinstance(lr, Tensor) else lr))
