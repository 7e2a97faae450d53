"""``Unfold`` (image to columns of blocks) and ``Fold`` (columns summed back into an image).

>>> import ember
>>> ember.nn.Unfold(2)(ember.ones(1, 3, 4, 4)).shape
ember.Size([1, 12, 9])
"""
from __future__ import annotations

from ember._tensor import Tensor
from ember.nn import functional as F
from ember.nn.modules.module import Module

__all__ = ["Fold", "Unfold"]


class Fold(Module):
    """Columns ``[N, C * prod(kernel_size), L]`` summed into an image ``[N, C, *output_size]``."""

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1) -> None:
        super().__init__()
        self.output_size, self.kernel_size = output_size, kernel_size
        self.dilation, self.padding, self.stride = dilation, padding, stride

    def forward(self, input: Tensor) -> Tensor:
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")


class Unfold(Module):
    """Every block of an image ``[N, C, H, W]`` as a column of ``[N, C * prod(kernel_size), L]``."""

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1) -> None:
        super().__init__()
        self.kernel_size, self.dilation, self.padding, self.stride = kernel_size, dilation, padding, stride

    def forward(self, input: Tensor) -> Tensor:
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, padding={self.padding}, "
                f"stride={self.stride}")
