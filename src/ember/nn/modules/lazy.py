"""Lazy layers: convolutions and normalizations that learn their input channels from the first input.

Until its first call such a layer has 0 input channels (``in_channels`` or ``num_features``) and its
parameters are placeholders (``nn.parameter.UninitializedParameter``). The first call sizes and initialises
them exactly as the eager layer's constructor would, in place, and the layer becomes that eager layer (a
``LazyConv2d`` turns into a ``Conv2d``), as in torch.

>>> import ember
>>> layer = ember.nn.LazyConv2d(4, 3)
>>> layer
LazyConv2d(0, 4, kernel_size=(3, 3), stride=(1, 1))
>>> layer(ember.ones(2, 3, 5, 5)).shape
ember.Size([2, 4, 3, 3])
>>> layer
Conv2d(3, 4, kernel_size=(3, 3), stride=(1, 1))
"""
from __future__ import annotations

from ember._tensor import Tensor
from ember.nn.modules.batchnorm import (
    BatchNorm1d, BatchNorm2d, BatchNorm3d, InstanceNorm1d, InstanceNorm2d, InstanceNorm3d,
)
from ember.nn.modules.conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from ember.nn.modules.module import Module
from ember.nn.parameter import UninitializedBuffer, UninitializedParameter, is_lazy

__all__ = [
    "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyConv1d", "LazyConv2d", "LazyConv3d",
    "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d",
    "LazyInstanceNorm3d",
]


def with_placeholders(layer: Module) -> None:
    """Replace ``layer``'s parameters and floating buffers, sized for 0 inputs, with placeholders of their dtype."""
    for name, param in layer._parameters.items():
        if param is not None:
            layer._parameters[name] = UninitializedParameter(param.requires_grad, dtype=param.dtype)
    for name, buffer in layer._buffers.items():
        if buffer is not None and buffer.is_floating_point():
            layer._buffers[name] = UninitializedBuffer(dtype=buffer.dtype)


def become(layer: Module, eager: Module) -> None:
    """``layer`` takes ``eager``'s sizes, initialised parameters and buffers (its hooks and training mode stay its
    own) and its class. Placeholders are materialized in place: an optimizer built before the first call keeps
    updating the layer's parameters. What the layer already holds (weights a ``load_state_dict`` gave it, its
    ``num_batches_tracked``) it keeps."""
    for name, value in vars(eager).items():
        if not name.startswith("_") and name != "training":
            setattr(layer, name, value)
    for table, eager_table in ((layer._parameters, eager._parameters), (layer._buffers, eager._buffers)):
        for name, value in eager_table.items():
            placeholder = table.get(name)
            if is_lazy(placeholder):
                placeholder._become_like(value)
            elif name not in table:
                table[name] = value
    layer.__class__ = type(eager)


class _Lazy:
    """Loading a ``state_dict`` sizes the placeholders it has entries for, as torch's lazy modules do: the
    layer can be restored from a checkpoint before its first call."""

    def _load_from_state_dict(self, state_dict: dict, prefix: str, *rest) -> None:
        for table in (self._parameters, self._buffers):
            for name, placeholder in table.items():
                value = state_dict.get(prefix + name)
                if is_lazy(placeholder) and isinstance(value, Tensor) and not is_lazy(value):
                    placeholder.materialize(value.shape)
        super()._load_from_state_dict(state_dict, prefix, *rest)


class _LazyConv(_Lazy):
    """The first call's input gives ``in_channels``; the layer then becomes ``becomes``."""

    becomes: type = Conv2d

    def __init__(self, out_channels: int, kernel_size, stride=1, padding=0, dilation=1, groups: int = 1,
                 bias: bool = True, padding_mode: str = "zeros", device=None, dtype=None, **more) -> None:
        arguments = dict(out_channels=out_channels, kernel_size=kernel_size, stride=stride, padding=padding,
                         dilation=dilation, groups=groups, bias=bias, padding_mode=padding_mode, device=device,
                         dtype=dtype, **more)
        self.becomes.__init__(self, 0, **arguments)
        with_placeholders(self)
        self._lazy_arguments = arguments

    def reset_parameters(self) -> None:
        if self.in_channels:  # nothing to initialise before the first call sizes the weight
            self.becomes.reset_parameters(self)

    def forward(self, input: Tensor) -> Tensor:
        spatial = self.becomes.spatial
        if input.dim() not in (spatial + 1, spatial + 2):
            raise RuntimeError(f"Expected {spatial + 1}D (unbatched) or {spatial + 2}D (batched) input to "
                               f"{type(self).__name__}, but got input of size: {input.shape}")
        channels = input.shape[1] if input.dim() == spatial + 2 else input.shape[0]
        if channels % self.groups:
            raise ValueError(f"{type(self).__name__}: in_channels must be divisible by groups, but the input has "
                             f"{channels} channels and groups={self.groups}")
        become(self, self.becomes(channels, **self._lazy_arguments))
        del self._lazy_arguments
        return self.forward(input)


class LazyConv1d(_LazyConv, Conv1d):
    """A ``Conv1d`` whose ``in_channels`` is the first input's."""

    becomes = Conv1d


class LazyConv2d(_LazyConv, Conv2d):
    """A ``Conv2d`` whose ``in_channels`` is the first input's."""

    becomes = Conv2d


class LazyConv3d(_LazyConv, Conv3d):
    """A ``Conv3d`` whose ``in_channels`` is the first input's."""

    becomes = Conv3d


class _LazyConvTranspose(_LazyConv):
    def __init__(self, out_channels: int, kernel_size, stride=1, padding=0, output_padding=0, groups: int = 1,
                 bias: bool = True, dilation=1, padding_mode: str = "zeros", device=None, dtype=None) -> None:
        super().__init__(out_channels, kernel_size, stride, padding, dilation, groups, bias, padding_mode, device,
                         dtype, output_padding=output_padding)


class LazyConvTranspose1d(_LazyConvTranspose, ConvTranspose1d):
    """A ``ConvTranspose1d`` whose ``in_channels`` is the first input's."""

    becomes = ConvTranspose1d


class LazyConvTranspose2d(_LazyConvTranspose, ConvTranspose2d):
    """A ``ConvTranspose2d`` whose ``in_channels`` is the first input's."""

    becomes = ConvTranspose2d


class LazyConvTranspose3d(_LazyConvTranspose, ConvTranspose3d):
    """A ``ConvTranspose3d`` whose ``in_channels`` is the first input's."""

    becomes = ConvTranspose3d


class _LazyNorm(_Lazy):
    """The first call's input gives ``num_features``; the layer then becomes ``becomes``.

    As in torch, the lazy instance norms default to ``affine=True`` and ``track_running_stats=True``.
    """

    becomes: type = BatchNorm2d

    def __init__(self, eps: float = 1e-05, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device=None, dtype=None) -> None:
        arguments = dict(eps=eps, momentum=momentum, affine=affine, track_running_stats=track_running_stats,
                         device=device, dtype=dtype)
        self.becomes.__init__(self, 0, **arguments)
        with_placeholders(self)
        self._lazy_arguments = arguments

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        unbatched = issubclass(self.becomes, (InstanceNorm1d, InstanceNorm2d, InstanceNorm3d)) and \
            input.dim() == self._input_dims[0]
        become(self, self.becomes(input.shape[0 if unbatched else 1], **self._lazy_arguments))
        del self._lazy_arguments
        return self.forward(input)


class LazyBatchNorm1d(_LazyNorm, BatchNorm1d):
    """A ``BatchNorm1d`` whose ``num_features`` is the first input's."""

    becomes = BatchNorm1d


class LazyBatchNorm2d(_LazyNorm, BatchNorm2d):
    """A ``BatchNorm2d`` whose ``num_features`` is the first input's."""

    becomes = BatchNorm2d


class LazyBatchNorm3d(_LazyNorm, BatchNorm3d):
    """A ``BatchNorm3d`` whose ``num_features`` is the first input's."""

    becomes = BatchNorm3d


class LazyInstanceNorm1d(_LazyNorm, InstanceNorm1d):
    """An ``InstanceNorm1d`` whose ``num_features`` is the first input's."""

    becomes = InstanceNorm1d


class LazyInstanceNorm2d(_LazyNorm, InstanceNorm2d):
    """An ``InstanceNorm2d`` whose ``num_features`` is the first input's."""

    becomes = InstanceNorm2d


class LazyInstanceNorm3d(_LazyNorm, InstanceNorm3d):
    """An ``InstanceNorm3d`` whose ``num_features`` is the first input's."""

    becomes = InstanceNorm3d
