"""Resizing layers: ``Upsample`` (and its two fixed-mode forms) and the pixel shuffles.

>>> import ember
>>> ember.nn.Upsample(scale_factor=2)(ember.ones(1, 1, 2, 2)).shape
ember.Size([1, 1, 4, 4])
>>> ember.nn.PixelShuffle(2)(ember.ones(1, 8, 3, 3)).shape
ember.Size([1, 2, 6, 6])
"""
from __future__ import annotations

from ember._tensor import Tensor
from ember.nn._functional.upsampling import interpolate, pixel_shuffle, pixel_unshuffle
from ember.nn.modules.module import Module

__all__ = ["PixelShuffle", "PixelUnshuffle", "Upsample", "UpsamplingBilinear2d", "UpsamplingNearest2d"]


class Upsample(Module):
    """``nn.functional.interpolate`` as a layer."""

    def __init__(self, size=None, scale_factor=None, mode: str = "nearest", align_corners: bool | None = None,
                 recompute_scale_factor: bool | None = None) -> None:
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, (tuple, list)):
            self.scale_factor = tuple(float(factor) for factor in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor is not None else None
        self.mode, self.align_corners, self.recompute_scale_factor = mode, align_corners, recompute_scale_factor

    def forward(self, input: Tensor) -> Tensor:
        return interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                           recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self) -> str:
        shown = f"scale_factor={self.scale_factor!r}" if self.scale_factor is not None else f"size={self.size!r}"
        return f"{shown}, mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    """``Upsample`` with ``mode="nearest"``, for images."""

    def __init__(self, size=None, scale_factor=None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """``Upsample`` with ``mode="bilinear", align_corners=True``, for images."""

    def __init__(self, size=None, scale_factor=None) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)


class PixelShuffle(Module):
    """Channels ``C * r * r`` traded for an ``r`` times larger image (sub-pixel convolution's last step)."""

    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input: Tensor) -> Tensor:
        return pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """The inverse of ``PixelShuffle``: an ``r`` times smaller image with ``r * r`` times the channels."""

    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input: Tensor) -> Tensor:
        return pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"
