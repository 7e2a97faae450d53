"""AdamW: Adam whose weight decay shrinks the parameters directly instead of entering the gradient.

>>> import ember
>>> w = ember.nn.Parameter(ember.tensor([1., -1.]))
>>> opt = ember.optim.AdamW([w], lr=0.1, weight_decay=0.5)
>>> (w ** 2).sum().backward()
>>> opt.step()
>>> w
Parameter containing:
tensor([ 0.8500, -0.8500], requires_grad=True)
"""
from __future__ import annotations

from typing import Iterable

from ember._tensor import Tensor
from ember.optim.adam import Adam

__all__ = ["AdamW"]


class AdamW(Adam):
    """``Adam`` with ``decoupled_weight_decay=True`` and a default ``weight_decay`` of 0.01."""

    _options = dict(Adam._options, decoupled_weight_decay=True)

    def __init__(self, params: Iterable, lr: float | Tensor = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 1e-2, amsgrad: bool = False, *, maximize: bool = False,
                 foreach: bool | None = None, capturable: bool = False, differentiable: bool = False,
                 fused: bool | None = None) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)
