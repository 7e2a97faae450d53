"""``conv_tbc``: a 1-d convolution of sequences laid out (time, batch, channels), as fairseq-style models keep them.

It is ``conv1d`` on the transposed layout: the same cross-correlation, with the weight stored
(kernel width, in channels, out channels).

>>> import ember
>>> x = ember.ones(5, 2, 3)  # 5 steps, batch 2, 3 channels
>>> ember.conv_tbc(x, ember.ones(2, 3, 4), ember.zeros(4), 1).shape
ember.Size([6, 2, 4])
"""
from __future__ import annotations

from ember._tensor import Tensor
from ember.nn._functional.conv import conv1d
from ember.overrides import overridable

__all__ = ["conv_tbc"]


@overridable("ember.nn.functional")
def conv_tbc(input: Tensor, weight: Tensor, bias: Tensor, pad: int = 0) -> Tensor:
    """``input`` ``[T, B, C_in]`` convolved with ``weight`` ``[K, C_in, C_out]`` (plus ``bias``), ``pad`` zeros at each
    end of time: ``[T + 2 pad - K + 1, B, C_out]``."""
    if input.dim() != 3:
        raise RuntimeError(f"Input must have 3 dims: time, batch, in_channel (conv_tbc got input of size "
                           f"{list(input.shape)})")
    if weight.dim() != 3:
        raise RuntimeError(f"Weight tensor must have 3 dims: kernel_width, in_channels, out_channels (conv_tbc got "
                           f"weight of size {list(weight.shape)})")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError(f"Input dim 2 (input channels) is not == dim 1 in the weight tensor ({input.shape[2]} "
                           f"against {weight.shape[1]})")
    if bias.dim() != 1 or bias.shape[0] != weight.shape[2]:
        raise RuntimeError(f"Bias size must equal dim 2 in the weight tensor (output channels): bias of size "
                           f"{list(bias.shape)}, {weight.shape[2]} output channels")
    out = conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, padding=pad)
    return out.permute(2, 0, 1)
