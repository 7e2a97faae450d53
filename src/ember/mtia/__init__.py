"""``ember.mtia``: Meta's training and inference accelerators, which ember does not use, answered as torch
answers without one.

>>> import ember
>>> ember.mtia.is_available(), ember.mtia.device_count(), ember.mtia.memory_stats()
(False, 0, {})

As in torch, seeding does nothing; the calls that need a device raise RuntimeError (``synchronize``,
``current_device``, ``empty_cache`` ...) or, for ``init``, ``initial_seed`` and ``get_rng_state``,
AssertionError.
"""
from __future__ import annotations

from typing import Any

from ember._absent_device import (
    ignored_seed, no_backend, no_bytes, no_devices, no_states, not_compiled, nothing, unavailable,
)

__all__ = [
    "current_device", "current_stream", "default_stream", "device_count", "empty_cache", "get_device_capability",
    "get_device_properties", "get_rng_state", "get_rng_state_all", "init", "initial_seed", "is_available",
    "is_bf16_supported", "is_initialized", "manual_seed", "manual_seed_all", "max_memory_allocated",
    "memory_allocated", "memory_stats", "reset_peak_memory_stats", "seed", "seed_all", "set_device",
    "set_rng_state", "set_rng_state_all", "synchronize",
]

is_available = unavailable
device_count = no_devices
manual_seed = manual_seed_all = ignored_seed
seed = seed_all = reset_peak_memory_stats = nothing
memory_allocated = max_memory_allocated = no_bytes
get_rng_state_all = no_states


def is_initialized() -> bool:
    return False


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """True, as torch answers (the answer is about the device type, not about one being present)."""
    return True


def memory_stats(device: Any = None) -> dict[str, Any]:
    return {}


def _no_current_device(call: str) -> RuntimeError:
    # torch looks up the current device first, and that is what fails
    return no_backend("mtia", call, "getCurrentDevice")


def synchronize(device: Any = None) -> None:
    raise _no_current_device("synchronize")


def current_device() -> int:
    raise _no_current_device("current_device")


def current_stream(device: Any = None) -> Any:
    raise _no_current_device("current_stream")


def default_stream(device: Any = None) -> Any:
    raise _no_current_device("default_stream")


def get_device_capability(device: Any = None) -> tuple[int, int]:
    raise _no_current_device("get_device_capability")


def set_rng_state(new_state: Any, device: Any = "mtia") -> None:
    raise _no_current_device("set_rng_state")


def set_rng_state_all(new_states: Any) -> None:
    for state in new_states:
        set_rng_state(state)


def empty_cache() -> None:
    raise no_backend("mtia", "empty_cache", "emptyCache")


def set_device(device: Any) -> None:
    raise no_backend("mtia", "set_device", "setCurrentDevice")


def get_device_properties(device: Any = None) -> dict[str, Any]:
    raise no_backend("mtia", "get_device_properties", "getDeviceProperties")


def init() -> None:
    raise not_compiled("mtia", "init")


def initial_seed() -> int:
    raise not_compiled("mtia", "initial_seed")


def get_rng_state(device: Any = "mtia") -> Any:
    raise not_compiled("mtia", "get_rng_state")
