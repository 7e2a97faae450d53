"""Padding layers: the modes of ``F.pad`` as modules, for 1, 2 and 3 spatial dims.

``padding`` is one int for every side, or a tuple (left, right[, top, bottom[, front, back]]) that
starts with the last dim, as ``F.pad`` reads it.

>>> import ember
>>> pad = ember.nn.ZeroPad2d((1, 0, 0, 1))
>>> pad
ZeroPad2d((1, 0, 0, 1))
>>> pad(ember.ones(1, 2, 2))
tensor([[[0., 1., 1.],
         [0., 1., 1.],
         [0., 0., 0.]]])
"""
from __future__ import annotations

from ember._tensor import Tensor
from ember.nn import functional as F
from ember.nn.modules.module import Module

__all__ = [
    "CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d",
    "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
    "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d",
]


def _sides(padding, spatial: int) -> tuple:
    """``padding`` as a tuple of both sides of every padded dim (an int pads every side alike)."""
    if isinstance(padding, int):
        return (padding,) * (2 * spatial)
    return tuple(padding)


class _PadNd(Module):
    """A module calling ``F.pad`` with its ``mode``; subclasses name the mode and the number of spatial dims."""

    mode = "constant"
    spatial = 1

    def __init__(self, padding) -> None:
        super().__init__()
        self.padding = _sides(padding, self.spatial)

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, self.mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pads the last dim with ``value``."""

    spatial = 1


class ConstantPad2d(_ConstantPadNd):
    """Pads the last two dims with ``value``."""

    spatial = 2


class ConstantPad3d(_ConstantPadNd):
    """Pads the last three dims with ``value``."""

    spatial = 3


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad1d(_ZeroPadNd):
    """Pads the last dim with zeros."""

    spatial = 1


class ZeroPad2d(_ZeroPadNd):
    """Pads the last two dims with zeros."""

    spatial = 2


class ZeroPad3d(_ZeroPadNd):
    """Pads the last three dims with zeros."""

    spatial = 3


class ReflectionPad1d(_PadNd):
    """Pads the last dim with its reflection at each edge (the edge itself not repeated)."""

    mode, spatial = "reflect", 1


class ReflectionPad2d(_PadNd):
    """Pads the last two dims with their reflection at each edge."""

    mode, spatial = "reflect", 2


class ReflectionPad3d(_PadNd):
    """Pads the last three dims with their reflection at each edge."""

    mode, spatial = "reflect", 3


class ReplicationPad1d(_PadNd):
    """Pads the last dim by repeating its edge entries."""

    mode, spatial = "replicate", 1


class ReplicationPad2d(_PadNd):
    """Pads the last two dims by repeating their edge entries."""

    mode, spatial = "replicate", 2


class ReplicationPad3d(_PadNd):
    """Pads the last three dims by repeating their edge entries."""

    mode, spatial = "replicate", 3


class _CircularPadNd(_PadNd):
    def forward(self, input: Tensor) -> Tensor:
        # (F.pad would read a wrongly shaped input as another padding's, and name the wrong fault)
        if input.dim() not in (self.spatial + 1, self.spatial + 2):
            raise ValueError(f"{type(self).__name__}: expected {self.spatial + 1}D or {self.spatial + 2}D input "
                             f"(got {input.dim()}D input)")
        return super().forward(input)


class CircularPad1d(_CircularPadNd):
    """Pads the last dim with entries from its other end (wrapping around)."""

    mode, spatial = "circular", 1


class CircularPad2d(_CircularPadNd):
    """Pads the last two dims with entries from their other ends."""

    mode, spatial = "circular", 2


class CircularPad3d(_CircularPadNd):
    """Pads the last three dims with entries from their other ends."""

    mode, spatial = "circular", 3
