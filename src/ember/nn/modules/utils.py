"""Argument normalizers that layers share, as ``torch.nn.modules.utils``.

Custom layers import ``_pair`` and friends from here to accept either one size or one size per dimension:

>>> from ember.nn.modules.utils import _pair, _reverse_repeat_tuple
>>> _pair(3), _pair((3, 5))
((3, 3), (3, 5))
>>> _reverse_repeat_tuple((1, 2), 2)  # Conv padding (H, W) as F.pad wants it: W left/right, then H
(2, 2, 1, 1)
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

__all__ = ["consume_prefix_in_state_dict_if_present"]


def _ntuple(n: int, name: str = "parse") -> Callable[[Any], tuple]:
    """A function that keeps an iterable as a tuple and repeats anything else ``n`` times."""
    def parse(value: Any) -> tuple:
        if isinstance(value, Iterable):
            return tuple(value)
        return (value,) * n

    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")


def _reverse_repeat_tuple(values: tuple, n: int) -> tuple:
    """``values`` last to first, each repeated ``n`` times: per-dimension padding in ``F.pad``'s order."""
    return tuple(value for value in reversed(values) for _ in range(n))


def _list_with_default(out_size: int | list, defaults: list[int]) -> int | list[int]:
    """``out_size`` with each None taken from the trailing entries of ``defaults`` (the input's sizes), as
    the adaptive pooling layers read their ``output_size``."""
    if isinstance(out_size, int):
        return out_size
    if len(defaults) <= len(out_size):
        raise ValueError(f"Input dimension should be at least {len(out_size) + 1}")
    trailing = defaults[len(defaults) - len(out_size):]
    return [size if size is not None else default for size, default in zip(out_size, trailing)]


def consume_prefix_in_state_dict_if_present(state_dict: dict[str, Any], prefix: str) -> None:
    """Strip ``prefix`` from the keys of ``state_dict`` (and of its ``_metadata``) in place.

    A state dict saved from a ``DataParallel`` or ``DistributedDataParallel`` model has every key under
    ``module.``; stripping it lets the bare model load it.

    >>> from collections import OrderedDict
    >>> state = OrderedDict([("module.weight", 1), ("module.bias", 2)])
    >>> consume_prefix_in_state_dict_if_present(state, "module.")
    >>> list(state)
    ['weight', 'bias']
    """
    for key in list(state_dict.keys()):
        if key.startswith(prefix):
            state_dict[key[len(prefix):]] = state_dict.pop(key)
    metadata = getattr(state_dict, "_metadata", None)
    if metadata is None:
        return
    for key in list(metadata.keys()):
        # '' is the wrapper's own entry and stays; the wrapped module's entry is 'module' (without the dot)
        if key and (key == prefix.replace(".", "") or key.startswith(prefix)):
            metadata[key[len(prefix):]] = metadata.pop(key)
