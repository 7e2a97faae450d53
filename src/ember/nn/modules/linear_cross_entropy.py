"""``nn.LinearCrossEntropyLoss``: a ``Linear`` layer to logits and the cross-entropy loss, fused.

>>> import ember
>>> loss = ember.nn.LinearCrossEntropyLoss(4, 3)
>>> loss(ember.ones(2, 4), ember.tensor([0, 2])).shape
ember.Size([])
"""
from __future__ import annotations

import math

from ember._tensor import Tensor
from ember.nn import functional as F
from ember.nn._functional.linear_cross_entropy import LinearCrossEntropyOptions
from ember.nn.modules.linear import Linear
from ember.nn.modules.loss import _WeightedLoss

__all__ = ["LinearCrossEntropyLoss", "LinearCrossEntropyOptions"]


class LinearCrossEntropyLoss(_WeightedLoss):
    """``F.linear_cross_entropy`` with its own ``Linear(in_features, num_classes * prod(out_features))``.

    The linear weight is kept 2-D (as a ``Linear``'s) and seen as ``[C, *out_features, in_features]`` in
    ``forward``; ``options`` chunks the batch (see ``LinearCrossEntropyOptions``).
    """

    def __init__(self, in_features: int, num_classes: int, *, out_features: tuple[int, ...] = (), bias: bool = False,
                 device=None, dtype=None, reduction: str = "mean", weight: Tensor | None = None,
                 ignore_index: int | None = None, label_smoothing: float = 0.0,
                 options: LinearCrossEntropyOptions | None = None) -> None:
        if weight is not None and tuple(weight.shape) != (num_classes,):
            raise RuntimeError(f"LinearCrossEntropyLoss: expected weight shape to be {(num_classes,)}, got "
                               f"{tuple(weight.shape)}")
        if not 0.0 <= label_smoothing <= 1.0:
            raise RuntimeError(f"LinearCrossEntropyLoss: expected label_smoothing to be in range [0, 1], got "
                               f"{label_smoothing}")
        super().__init__(weight, None, None, reduction)
        self.num_classes, self.out_features = num_classes, tuple(out_features)
        self.ignore_index, self.label_smoothing, self.options = ignore_index, label_smoothing, options
        self.linear = Linear(in_features, math.prod(out_features) * num_classes, bias=bias, device=device,
                             dtype=dtype)

    def extra_repr(self) -> str:
        return (f"in_features={self.linear.in_features}, num_classes={self.num_classes}, "
                f"out_features={self.out_features}, bias={self.linear.bias is not None}, "
                f"reduction={self.reduction}, ignore_index={self.ignore_index}, "
                f"label_smoothing={self.label_smoothing}, options={self.options}")

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        shape = (self.num_classes, *self.out_features)
        bias = None if self.linear.bias is None else self.linear.bias.reshape(shape)
        return F.linear_cross_entropy(input, self.linear.weight.reshape(*shape, self.linear.in_features), target,
                                      linear_bias=bias, weight=self.weight, reduction=self.reduction,
                                      ignore_index=self.ignore_index, label_smoothing=self.label_smoothing,
                                      options=self.options)
