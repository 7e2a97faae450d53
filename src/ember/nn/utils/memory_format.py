"""Convolution weights re-laid out in memory (``channels_last``), the rest of the model left as it is.

>>> import ember
>>> model = ember.nn.Sequential(ember.nn.Conv2d(2, 3, 3), ember.nn.Linear(1, 1))
>>> _ = ember.nn.utils.convert_conv2d_weight_memory_format(model, ember.channels_last)
>>> model[0].weight.stride()
(18, 1, 6, 2)
"""
from __future__ import annotations

from ember.nn.modules.conv import Conv2d, Conv3d, ConvTranspose2d, ConvTranspose3d
from ember.nn.modules.module import Module

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]


def _convert(module: Module, memory_format, kinds: tuple) -> Module:
    # The Parameter object stays (an optimizer holding it keeps working); only its data is laid out anew.
    for layer in module.modules():
        if isinstance(layer, kinds):
            layer.weight.data = layer.weight.detach().clone(memory_format=memory_format)
    return module


def convert_conv2d_weight_memory_format(module: Module, memory_format) -> Module:
    """Lay out the weight of every ``Conv2d`` and ``ConvTranspose2d`` in ``module`` (itself included) in
    ``memory_format``; values and shapes are unchanged. Returns ``module``."""
    return _convert(module, memory_format, (Conv2d, ConvTranspose2d))


def convert_conv3d_weight_memory_format(module: Module, memory_format) -> Module:
    """As ``convert_conv2d_weight_memory_format``, for ``Conv3d`` and ``ConvTranspose3d`` (``channels_last_3d``)."""
    return _convert(module, memory_format, (Conv3d, ConvTranspose3d))
