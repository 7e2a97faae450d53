"""Normalization layers over the last dims or groups of channels: LayerNorm, RMSNorm, GroupNorm, LocalResponseNorm,
CrossMapLRN2d.

>>> import ember
>>> ember.nn.LayerNorm(4)
LayerNorm((4,), eps=1e-05, elementwise_affine=True, bias=True)
"""
from __future__ import annotations

import numpy as np

from ember._creation import empty, tensor
from ember._tensor import Tensor
from ember.nn import functional as F, init
from ember.nn.modules.module import Module
from ember.nn.parameter import Parameter

__all__ = ["CrossMapLRN2d", "GroupNorm", "LayerNorm", "LocalResponseNorm", "RMSNorm"]


def _shape(normalized_shape) -> tuple:
    return (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)


def _ones_and_zeros(weight: Parameter | None, bias: Parameter | None) -> None:
    """torch's start for an affine map: the identity."""
    if weight is not None:
        init.ones_(weight)
    if bias is not None:
        init.zeros_(bias)


class LayerNorm(Module):
    """Normalise over the trailing ``normalized_shape`` dims, then scale and shift elementwise."""

    def __init__(self, normalized_shape, eps: float = 1e-05, elementwise_affine: bool = True, bias: bool = True,
                 device=None, dtype=None) -> None:
        super().__init__()
        self.normalized_shape = _shape(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        shape = self.normalized_shape
        self.weight = Parameter(empty(shape, device=device, dtype=dtype)) if elementwise_affine else None
        self.bias = Parameter(empty(shape, device=device, dtype=dtype)) if elementwise_affine and bias else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _ones_and_zeros(self.weight, self.bias)

    def forward(self, input: Tensor) -> Tensor:
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
                f"bias={self.bias is not None}")


class RMSNorm(Module):
    """Divide by the root mean square over the trailing ``normalized_shape`` dims, then scale."""

    def __init__(self, normalized_shape, eps: float | None = None, elementwise_affine: bool = True, device=None,
                 dtype=None) -> None:
        super().__init__()
        self.normalized_shape = _shape(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(empty(self.normalized_shape, device=device, dtype=dtype))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, input: Tensor) -> Tensor:
        return F.rms_norm(input, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class GroupNorm(Module):
    """Normalise each sample over groups of ``num_channels // num_groups`` channels, then a per-channel affine."""

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-05, affine: bool = True, device=None,
                 dtype=None, *, bias: bool = True) -> None:
        super().__init__()
        if num_channels % num_groups:
            raise ValueError(f"GroupNorm: num_channels ({num_channels}) must be divisible by num_groups "
                             f"({num_groups})")
        self.num_groups, self.num_channels, self.eps, self.affine = num_groups, num_channels, eps, affine
        self.weight = Parameter(empty(num_channels, device=device, dtype=dtype)) if affine else None
        self.bias = Parameter(empty(num_channels, device=device, dtype=dtype)) if affine and bias else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _ones_and_zeros(self.weight, self.bias)

    def forward(self, input: Tensor) -> Tensor:
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


class LocalResponseNorm(Module):
    """Normalise each channel by the activity of its ``size`` neighbouring channels."""

    def __init__(self, size: int, alpha: float = 0.0001, beta: float = 0.75, k: float = 1.0) -> None:
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input: Tensor) -> Tensor:
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class CrossMapLRN2d(Module):
    """The legacy local response norm of ``[N, C, H, W]`` inputs: ``x * (k + alpha / size * s) ** -beta``,
    where ``s`` sums the squares of a window of channels.

    Its window is torch's legacy one: channels ``c - p + 1`` to ``c + p - 1`` (``p = (size - 1) // 2 + 1``),
    clipped to the channels, and always channel 0 as well. Its gradient is that of this forward; torch's
    hand-written backward is that of a centred window instead (and fails for ``size=1``).

    >>> layer = ember.nn.CrossMapLRN2d(3, alpha=1.0, beta=1.0)
    >>> layer(ember.ones(1, 3, 1, 1)).flatten()
    tensor([0.6000, 0.5000, 0.5000])
    """

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1) -> None:
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input: Tensor) -> Tensor:
        if input.dim() != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D instead.")
        if not input.is_floating_point():
            raise RuntimeError(f"CrossMapLRN2d: result type Float can't be cast to the desired output type "
                               f"{input.dtype}; convert the input first, e.g. input.float()")
        n, channels, height, width = input.shape
        squares = (input * input).reshape(n, channels, height * width)
        sums = (tensor(self._window(channels), dtype=input.dtype) @ squares).reshape(input.shape)
        return input * (sums * (self.alpha / self.size) + self.k) ** -self.beta

    def _window(self, channels: int) -> np.ndarray:
        """Which channels' squares each channel's sum takes (a row per channel)."""
        reach = (self.size - 1) // 2 + 1
        c = np.arange(channels)[:, None]
        j = np.arange(channels)[None, :]
        return ((j == 0) | ((j >= c - reach + 1) & (j <= c + reach - 1))).astype(np.float64)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
