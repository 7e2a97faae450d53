"""Convolution layers: ``Conv1d``, ``Conv2d``, ``Conv3d`` and the transposed ``ConvTranspose1d/2d/3d``.

>>> import ember
>>> layer = ember.nn.Conv2d(1, 4, 3, padding=1, padding_mode="reflect")
>>> layer
Conv2d(1, 4, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1), padding_mode=reflect)
>>> layer(ember.ones(2, 1, 5, 5)).shape
ember.Size([2, 4, 5, 5])
"""
from __future__ import annotations

import math

from ember._creation import empty
from ember._tensor import Tensor
from ember.nn import functional as F, init
from ember.nn._functional.conv import as_tuple
from ember.nn.modules.module import Module
from ember.nn.parameter import Parameter

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"]

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


class _ConvNd(Module):
    """What the convolution layers share: their arguments, weights, initialisation and repr."""

    spatial = 2
    transposed = False

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, dilation=1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device=None, dtype=None,
                 output_padding=0) -> None:
        super().__init__()
        name, n = type(self).__name__, self.spatial
        _check_layer_arguments(name, in_channels, out_channels, groups, padding_mode, padding, stride)
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size = as_tuple(kernel_size, n, name, "kernel_size")
        self.stride = as_tuple(stride, n, name, "stride")
        self.padding = padding if isinstance(padding, str) else as_tuple(padding, n, name, "padding")
        self.dilation = as_tuple(dilation, n, name, "dilation")
        self.output_padding = as_tuple(output_padding, n, name, "output_padding")
        self.padding_mode = padding_mode
        self._reversed_padding_repeated_twice = self._pads()
        shape = ((in_channels, out_channels // groups) if self.transposed else (out_channels, in_channels // groups))
        add_weight_and_bias(self, shape + self.kernel_size, bias, {"device": device, "dtype": dtype}, out_channels)

    def _check_input(self, input: Tensor) -> None:
        """A wrong input's error names the layer, as well as the op's own check would name the op."""
        n, channels = self.spatial, self.in_channels
        if not isinstance(input, Tensor) or input.dim() not in (n + 1, n + 2) or input.shape[-n - 1] != channels:
            got = list(input.shape) if isinstance(input, Tensor) else type(input).__name__
            raise RuntimeError(f"{self!r}: expected an input [N, {channels}, {', '.join('*' * n)}] "
                               f"or [{channels}, {', '.join('*' * n)}], but got input of size {got}")

    def _pads(self) -> list:
        """``F.pad``'s amounts (last dim first) for a padding mode other than zeros."""
        if self.padding == "same":
            totals = [d * (k - 1) for d, k in zip(self.dilation, self.kernel_size)]
            pairs = [(t // 2, t - t // 2) for t in totals]
        elif self.padding == "valid":
            pairs = [(0, 0)] * self.spatial
        else:
            pairs = [(p, p) for p in self.padding]
        return [amount for pair in reversed(pairs) for amount in pair]

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self) -> str:
        n = self.spatial
        text = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * n:
            text += f", padding={self.padding}"
        if self.dilation != (1,) * n:
            text += f", dilation={self.dilation}"
        if self.output_padding != (0,) * n:
            text += f", output_padding={self.output_padding}"
        if self.groups != 1:
            text += f", groups={self.groups}"
        if self.bias is None:
            text += ", bias=False"
        if self.padding_mode != "zeros":
            text += f", padding_mode={self.padding_mode}"
        return text


def add_weight_and_bias(layer: Module, shape: tuple, bias: bool, factory: dict, outputs: int | None = None) -> None:
    """Register an uninitialised ``weight`` of ``shape`` and ``bias`` (``[outputs]``, by default ``[shape[0]]``,
    or None), then initialise. A transposed convolution's weight starts with its inputs, its bias has outputs."""
    layer.weight = Parameter(empty(shape, **factory))
    if bias:
        layer.bias = Parameter(empty(shape[0] if outputs is None else outputs, **factory))
    else:
        layer.register_parameter("bias", None)
    layer.reset_parameters()


def _check_layer_arguments(name: str, in_channels: int, out_channels: int, groups: int, padding_mode: str,
                           padding, stride) -> None:
    if groups <= 0:
        raise ValueError(f"{name}: groups must be a positive integer, but got groups={groups}")
    if in_channels % groups:
        raise ValueError(f"{name}: in_channels must be divisible by groups ({in_channels} % {groups} != 0)")
    if out_channels % groups:
        raise ValueError(f"{name}: out_channels must be divisible by groups ({out_channels} % {groups} != 0)")
    if padding_mode not in _PADDING_MODES:
        raise ValueError(f"padding_mode must be one of {list(_PADDING_MODES)}, but got padding_mode='{padding_mode}'")
    if isinstance(padding, str):
        if padding not in ("same", "valid"):
            raise ValueError(f"Invalid padding string {padding!r}, should be one of {{'valid', 'same'}}")
        if padding == "same" and any(s != 1 for s in (stride if isinstance(stride, (tuple, list)) else (stride,))):
            raise ValueError("padding='same' is not supported for strided convolutions")


class _Conv(_ConvNd):
    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, dilation=1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device=None, dtype=None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, device, dtype)

    def _conv_forward(self, input: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
        function = (F.conv1d, F.conv2d, F.conv3d)[self.spatial - 1]
        if self.padding_mode != "zeros":
            padded = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return function(padded, weight, bias, self.stride, 0, self.dilation, self.groups)
        return function(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input: Tensor) -> Tensor:
        self._check_input(input)
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_Conv):
    """A 1-d convolution over ``[N, C, L]``; the weight is ``[out, in/groups, k]``, initialised as torch's."""

    spatial = 1


class Conv2d(_Conv):
    """A 2-d convolution over ``[N, C, H, W]``; the weight is ``[out, in/groups, kH, kW]``."""

    spatial = 2


class Conv3d(_Conv):
    """A 3-d convolution over ``[N, C, D, H, W]``; the weight is ``[out, in/groups, kD, kH, kW]``."""

    spatial = 3


class _ConvTranspose(_ConvNd):
    transposed = True

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, output_padding=0,
                 groups: int = 1, bias: bool = True, dilation=1, padding_mode: str = "zeros", device=None,
                 dtype=None) -> None:
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        if isinstance(padding, str):
            raise ValueError(f"{type(self).__name__}: padding must be ints, not {padding!r}")
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, device, dtype, output_padding)

    def _output_padding(self, input: Tensor, output_size) -> tuple:
        """The ``output_padding`` that gives ``output_size`` (which may include batch and channels)."""
        if output_size is None:
            return self.output_padding
        n = self.spatial
        wanted = tuple(output_size)[-n:]
        smallest = [(m - 1) * s - 2 * p + d * (k - 1) + 1 for m, s, p, d, k in
                    zip(input.shape[-n:], self.stride, self.padding, self.dilation, self.kernel_size)]
        largest = [low + max(s, d) - 1 for low, s, d in zip(smallest, self.stride, self.dilation)]
        if len(wanted) != n or any(not low <= w <= high for w, low, high in zip(wanted, smallest, largest)):
            raise ValueError(f"{type(self).__name__}: requested an output size of {list(output_size)}, but valid "
                             f"sizes range from {smallest} to {largest} (for an input of {list(input.shape[-n:])})")
        return tuple(w - low for w, low in zip(wanted, smallest))
        return extra

    def forward(self, input: Tensor, output_size=None) -> Tensor:
        self._check_input(input)
        function = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[self.spatial - 1]
        return function(input, self.weight, self.bias, self.stride, self.padding,
                        self._output_padding(input, output_size), self.groups, self.dilation)


class ConvTranspose1d(_ConvTranspose):
    """The transposed 1-d convolution; the weight is ``[in, out/groups, k]``."""

    spatial = 1


class ConvTranspose2d(_ConvTranspose):
    """The transposed 2-d convolution; the weight is ``[in, out/groups, kH, kW]``."""

    spatial = 2


class ConvTranspose3d(_ConvTranspose):
    """The transposed 3-d convolution; the weight is ``[in, out/groups, kD, kH, kW]``."""

    spatial = 3
