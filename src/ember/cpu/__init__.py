"""``ember.cpu``: the CPU as a device module, what ``ember.get_device_module("cpu")`` returns (ember's only device).

>>> import ember
>>> ember.cpu.is_available(), ember.cpu.device_count(), ember.cpu.current_device()
(True, 1, 'cpu')
"""
from __future__ import annotations

from collections.abc import Mapping

from ember.cpu._capabilities import capabilities

from ember.cpu._streams import Event, Stream, StreamContext, current_stream, stream

__all__ = [
    "Event", "Stream", "StreamContext", "amp", "current_device", "current_stream", "device_count",
    "get_capabilities", "is_available", "is_initialized", "set_device", "stream", "synchronize",
]


def is_available() -> bool:
    """True: the CPU is always there."""
    return True


def is_initialized() -> bool:
    """True: the CPU needs no setting up."""
    return True


def device_count() -> int:
    """1: the CPU counts as one device."""
    return 1


def current_device() -> str:
    """``"cpu"``, the name of the one CPU device."""
    return "cpu"


def set_device(device) -> None:
    """Nothing to do: there is one CPU device."""


def synchronize(device=None) -> None:
    """Nothing to wait for: ember's ops finish before they return."""


def get_capabilities() -> Mapping[str, object]:
    """The CPU's instruction sets (``avx2``, ``avx512_f``, ``fma3`` ...: True or False), its name and
    architecture, its core counts and cache sizes in bytes, under torch's keys, as a read-only mapping.

    >>> caps = ember.cpu.get_capabilities()
    >>> caps["num_physical_cores"] <= caps["num_logical_cores"]
    True
    """
    return capabilities()


from ember.cpu import amp  # noqa: E402  (the deprecated ember.cpu.amp.autocast, as torch.cpu.amp has it)
