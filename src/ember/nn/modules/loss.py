"""Loss functions as modules.

>>> import ember
>>> ember.nn.MSELoss()(ember.tensor([1., 3.]), ember.tensor([1., 1.]))
tensor(2.)
"""
from __future__ import annotations

from ember._tensor import Tensor
from ember.nn import functional as F
from ember.nn.modules.module import Module

__all__ = ["MSELoss"]


class _Loss(Module):
    """Holds ``reduction`` ('mean', 'sum' or 'none'), also when given in the legacy size_average/reduce form."""

    def __init__(self, size_average: bool | None = None, reduce: bool | None = None, reduction: str = "mean") -> None:
        super().__init__()
        if size_average is not None or reduce is not None:
            reduction = F._legacy_reduction(size_average, reduce)
        self.reduction = reduction


class MSELoss(_Loss):
    """Mean squared error between input and target (see ``nn.functional.mse_loss``)."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.mse_loss(input, target, reduction=self.reduction)
