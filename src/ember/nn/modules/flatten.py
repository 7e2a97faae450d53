"""Layers that only reshape or pass through: ``Identity``, ``Flatten``, ``Unflatten``.

>>> import ember
>>> ember.nn.Flatten()(ember.ones(2, 3, 4)).shape
ember.Size([2, 12])
>>> ember.nn.Unflatten(1, (2, 6))(ember.ones(2, 12)).shape
ember.Size([2, 2, 6])
"""
from __future__ import annotations

from ember._tensor import Tensor
from ember.nn.modules.module import Module

__all__ = ["Flatten", "Identity", "Unflatten"]


class Identity(Module):
    """Returns its input; takes (and ignores) any arguments, so it can stand in for another layer."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__()

    def forward(self, input: Tensor) -> Tensor:
        return input


class Flatten(Module):
    """Dims ``start_dim`` to ``end_dim`` merged into one (by default all but the batch dim)."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input: Tensor) -> Tensor:
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Dim ``dim`` split into ``unflattened_size``."""

    def __init__(self, dim: int | str, unflattened_size) -> None:
        super().__init__()
        if not isinstance(unflattened_size, (tuple, list)) or not all(isinstance(n, int) for n in unflattened_size):
            raise TypeError("unflattened_size must be a tuple of ints, but found type "
                            f"{type(unflattened_size).__name__}")
        self.dim, self.unflattened_size = dim, unflattened_size

    def forward(self, input: Tensor) -> Tensor:
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
