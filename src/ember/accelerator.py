"""``ember.accelerator``: torch's device-agnostic accelerator API, on a machine with none.

ember runs on the CPU, so there is no accelerator: ``is_available()`` is False and
``current_accelerator()`` is None, which is what device-portable programs test for. Every call
that needs an accelerator raises, as torch's CPU build does.

>>> import ember
>>> ember.accelerator.is_available(), ember.accelerator.current_accelerator(), ember.accelerator.device_count()
(False, None, 0)
>>> device = ember.accelerator.current_accelerator().type if ember.accelerator.is_available() else "cpu"
>>> device
'cpu'
"""
from __future__ import annotations

import contextlib
import warnings

__all__ = [
    "current_accelerator", "current_device_idx", "current_device_index", "current_stream", "device_count",
    "device_index", "empty_cache", "empty_host_cache", "get_device_capability", "get_memory_info", "is_available",
    "max_memory_allocated", "max_memory_reserved", "memory_allocated", "memory_reserved", "memory_stats",
    "reset_accumulated_memory_stats", "reset_peak_memory_stats", "set_device_idx", "set_device_index", "set_stream",
    "synchronize",
]


def _none_available(name: str):
    """A call that needs an accelerator: it raises, naming itself."""

    def call(*args, **kwargs):
        raise RuntimeError(f"ember.accelerator.{name}: Cannot access accelerator device when none is available. "
                           "ember runs on the CPU only: test ember.accelerator.is_available() first")

    call.__name__ = call.__qualname__ = name
    return call


def is_available() -> bool:
    """Whether an accelerator is present: never, in ember."""
    return False


def current_accelerator(check_available: bool = False) -> None:
    """The accelerator's device type: None, as there is none."""
    return None


def device_count() -> int:
    """The number of accelerator devices: 0."""
    return 0


@contextlib.contextmanager
def device_index(device: int | None, /):
    """Run a block on accelerator ``device``: only ``None`` (no change) is possible here."""
    if device is not None:
        _none_available("device_index")()
    yield


def current_device_idx() -> int:
    warnings.warn("Use `current_device_index` instead.", FutureWarning, stacklevel=2)
    return current_device_index()


def set_device_idx(device, /) -> None:
    warnings.warn("Use `set_device_index` instead.", FutureWarning, stacklevel=2)
    set_device_index(device)


current_device_index = _none_available("current_device_index")
set_device_index = _none_available("set_device_index")
current_stream = _none_available("current_stream")
set_stream = _none_available("set_stream")
synchronize = _none_available("synchronize")
empty_cache = _none_available("empty_cache")
empty_host_cache = _none_available("empty_host_cache")
get_device_capability = _none_available("get_device_capability")
get_memory_info = _none_available("get_memory_info")
max_memory_allocated = _none_available("max_memory_allocated")
max_memory_reserved = _none_available("max_memory_reserved")
memory_allocated = _none_available("memory_allocated")
memory_reserved = _none_available("memory_reserved")
memory_stats = _none_available("memory_stats")
reset_accumulated_memory_stats = _none_available("reset_accumulated_memory_stats")
reset_peak_memory_stats = _none_available("reset_peak_memory_stats")
