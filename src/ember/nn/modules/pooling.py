"""Pooling layers: max, average, adaptive, Lp and max-unpooling, each calling its functional form.

>>> import ember
>>> ember.nn.MaxPool2d(2)
MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)
>>> ember.nn.AdaptiveAvgPool2d((1, 1))(ember.ones(2, 3, 5, 5)).shape
ember.Size([2, 3, 1, 1])
"""
from __future__ import annotations

from ember._tensor import Tensor
from ember.nn import functional as F
from ember.nn.modules.module import Module
from ember.nn.modules.utils import _ntuple, _single

__all__ = ["AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d",
           "AdaptiveMaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d", "ChannelShuffle", "FractionalMaxPool2d",
           "FractionalMaxPool3d", "LPPool1d", "LPPool2d",
           "LPPool3d", "MaxPool1d", "MaxPool2d", "MaxPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d"]


class _MaxPoolNd(Module):
    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices: bool = False,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def forward(self, input: Tensor):
        return self.function(input, self.kernel_size, self.stride, self.padding, self.dilation,
                             ceil_mode=self.ceil_mode, return_indices=self.return_indices)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    """The largest entry of each window of ``[N, C, L]``."""

    function = staticmethod(F.max_pool1d)


class MaxPool2d(_MaxPoolNd):
    """The largest entry of each window of ``[N, C, H, W]``."""

    function = staticmethod(F.max_pool2d)


class MaxPool3d(_MaxPoolNd):
    """The largest entry of each window of ``[N, C, D, H, W]``."""

    function = staticmethod(F.max_pool3d)


class _MaxUnpoolNd(Module):
    def __init__(self, kernel_size, stride=None, padding=0) -> None:
        super().__init__()
        self.kernel_size = _ntuple(self.spatial)(kernel_size)
        self.stride = _ntuple(self.spatial)(stride if stride is not None else kernel_size)
        self.padding = _ntuple(self.spatial)(padding)

    def forward(self, input: Tensor, indices: Tensor, output_size=None) -> Tensor:
        return self.function(input, indices, self.kernel_size, self.stride, self.padding, output_size)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """``MaxPool1d``'s partial inverse: values back at their indices, zeros elsewhere."""

    spatial, function = 1, staticmethod(F.max_unpool1d)


class MaxUnpool2d(_MaxUnpoolNd):
    """``MaxPool2d``'s partial inverse: values back at their indices, zeros elsewhere."""

    spatial, function = 2, staticmethod(F.max_unpool2d)


class MaxUnpool3d(_MaxUnpoolNd):
    """``MaxPool3d``'s partial inverse: values back at their indices, zeros elsewhere."""

    spatial, function = 3, staticmethod(F.max_unpool3d)


class AvgPool1d(Module):
    """The mean of each window of ``[N, C, L]``."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
                 count_include_pad: bool = True) -> None:
        super().__init__()
        self.kernel_size = _single(kernel_size)
        self.stride = _single(stride if stride is not None else kernel_size)
        self.padding = _single(padding)
        self.ceil_mode, self.count_include_pad = ceil_mode, count_include_pad

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class _AvgPoolNd(Module):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False, count_include_pad: bool = True,
                 divisor_override: int | None = None) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward(self, input: Tensor) -> Tensor:
        return self.function(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                             self.count_include_pad, self.divisor_override)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool2d(_AvgPoolNd):
    """The mean of each window of ``[N, C, H, W]``."""

    function = staticmethod(F.avg_pool2d)


class AvgPool3d(_AvgPoolNd):
    """The mean of each window of ``[N, C, D, H, W]``."""

    function = staticmethod(F.avg_pool3d)


class _LPPoolNd(Module):
    def __init__(self, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False) -> None:
        super().__init__()
        self.norm_type, self.kernel_size, self.stride, self.ceil_mode = norm_type, kernel_size, stride, ceil_mode

    def forward(self, input: Tensor) -> Tensor:
        return self.function(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)

    def extra_repr(self) -> str:
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, stride={self.stride}, "
                f"ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPoolNd):
    """The ``norm_type``-norm of each window of ``[N, C, L]``."""

    function = staticmethod(F.lp_pool1d)


class LPPool2d(_LPPoolNd):
    """The ``norm_type``-norm of each window of ``[N, C, H, W]``."""

    function = staticmethod(F.lp_pool2d)


class LPPool3d(_LPPoolNd):
    """The ``norm_type``-norm of each window of ``[N, C, D, H, W]``."""

    function = staticmethod(F.lp_pool3d)


class _AdaptivePool(Module):
    def __init__(self, output_size) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input: Tensor) -> Tensor:
        return self.function(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptivePool):
    """Means over ``output_size`` windows covering ``[N, C, L]``."""

    function = staticmethod(F.adaptive_avg_pool1d)


class AdaptiveAvgPool2d(_AdaptivePool):
    """Means over an ``output_size`` grid of windows covering ``[N, C, H, W]``."""

    function = staticmethod(F.adaptive_avg_pool2d)


class AdaptiveAvgPool3d(_AdaptivePool):
    """Means over an ``output_size`` grid of windows covering ``[N, C, D, H, W]``."""

    function = staticmethod(F.adaptive_avg_pool3d)


class _AdaptiveMaxPool(_AdaptivePool):
    def __init__(self, output_size, return_indices: bool = False) -> None:
        super().__init__(output_size)
        self.return_indices = return_indices

    def forward(self, input: Tensor):
        return self.function(input, self.output_size, self.return_indices)


class AdaptiveMaxPool1d(_AdaptiveMaxPool):
    """The largest entry of each of ``output_size`` windows covering ``[N, C, L]`` (and, with ``return_indices``,
    where)."""

    function = staticmethod(F.adaptive_max_pool1d)


class AdaptiveMaxPool2d(_AdaptiveMaxPool):
    """The largest entry of each of an ``output_size`` grid of windows (and, with ``return_indices``, where)."""

    function = staticmethod(F.adaptive_max_pool2d)


class AdaptiveMaxPool3d(_AdaptiveMaxPool):
    """The largest entry of each of an ``output_size`` grid of windows over ``[N, C, D, H, W]``."""

    function = staticmethod(F.adaptive_max_pool3d)


class ChannelShuffle(Module):
    """Interleaves the channels of ``[N, C, *]`` taken as ``groups`` groups (``F.channel_shuffle``)."""

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, input: Tensor) -> Tensor:
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"


class _FractionalMaxPoolNd(Module):
    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices: bool = False,
                 _random_samples=None) -> None:
        super().__init__()
        name = type(self).__name__
        if output_size is None and output_ratio is None:
            raise ValueError(f"{name} requires specifying either an output size, or a pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if output_ratio is not None:
            for ratio in _ntuple(self.spatial)(output_ratio):
                if not 0 < ratio < 1:
                    raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")
        self.kernel_size, self.output_size, self.output_ratio = kernel_size, output_size, output_ratio
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)

    def forward(self, input: Tensor):
        return self.function(input, self.kernel_size, self.output_size, self.output_ratio, self.return_indices,
                             _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """Max pooling of ``[N, C, H, W]`` over windows whose starts are drawn per plane, to any output size."""

    spatial, function = 2, staticmethod(F.fractional_max_pool2d)


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """Max pooling of ``[N, C, T, H, W]`` over windows whose starts are drawn per plane, to any output size."""

    spatial, function = 3, staticmethod(F.fractional_max_pool3d)
