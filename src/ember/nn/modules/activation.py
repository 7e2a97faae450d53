"""Elementwise activations as modules; each calls its ``nn.functional`` twin.

>>> import ember
>>> ember.nn.ReLU()(ember.tensor([-1., 2.]))
tensor([0., 2.])
"""
from __future__ import annotations

from ember._tensor import Tensor
from ember.nn import functional as F
from ember.nn.modules.module import Module

__all__ = ["ReLU", "Sigmoid", "Tanh"]


class ReLU(Module):
    """``max(0, x)``; ``inplace=True`` overwrites the input instead of allocating."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.relu(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Sigmoid(Module):
    """``1 / (1 + exp(-x))``."""

    def forward(self, input: Tensor) -> Tensor:
        return F.sigmoid(input)


class Tanh(Module):
    """Hyperbolic tangent."""

    def forward(self, input: Tensor) -> Tensor:
        return F.tanh(input)
