"""Channel shuffling: the channels regrouped so that each group takes one from every former group.

>>> import ember
>>> ember.nn.functional.channel_shuffle(ember.arange(6.).view(1, 6, 1), 2).flatten()
tensor([0., 3., 1., 4., 2., 5.])
"""
from __future__ import annotations

from ember._tensor import Tensor
from ember.autograd._node_names import named_node
from ember.overrides import overridable

__all__ = ["channel_shuffle", "native_channel_shuffle"]


def _shuffled(op: str, input: Tensor, groups: int) -> Tensor:
    if input.dim() <= 2:
        raise RuntimeError(f"{op} expects input with > 2 dims, but got input with sizes {list(input.shape)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{groups}")
    channels = input.shape[1]
    if channels % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {channels} channels and {groups} "
                           "groups.")
    n, rest = input.shape[0], tuple(input.shape[2:])
    grouped = input.reshape(n, groups, channels // groups, *rest)
    return grouped.transpose(1, 2).reshape(n, channels, *rest)


@overridable("ember.nn.functional")
def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """``input`` ``[N, C, *]`` with its ``C`` channels, seen as ``groups`` groups, interleaved (as ShuffleNet does)."""
    return named_node(_shuffled("channel_shuffle", input, groups), "ChannelShuffleBackward0", input, listed=(input,))


@overridable("ember.nn.functional")
def native_channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """The same as ``channel_shuffle``."""
    return _shuffled("channel_shuffle", input, groups)
