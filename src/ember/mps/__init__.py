"""``ember.mps``: Apple's Metal GPUs, which ember does not use, answered as torch answers without one.

>>> import ember
>>> ember.mps.is_available(), ember.mps.device_count()
(False, 0)

As in torch, ``manual_seed`` does nothing, and the calls that need the device (``synchronize``,
``empty_cache``, ``seed``, the memory counters ...) raise RuntimeError.
"""
from __future__ import annotations

from typing import Any

from ember._absent_device import ignored_seed, no_backend, no_devices, unavailable

__all__ = [
    "current_allocated_memory", "device_count", "driver_allocated_memory", "empty_cache", "get_rng_state",
    "is_available", "manual_seed", "recommended_max_memory", "seed", "set_per_process_memory_fraction",
    "set_rng_state", "synchronize",
]

is_available = unavailable
device_count = no_devices
manual_seed = ignored_seed


def synchronize() -> None:
    raise no_backend("mps", "synchronize", "deviceSynchronize")


def seed() -> None:
    raise no_backend("mps", "seed", "getDefaultGenerator")


def get_rng_state(device: Any = "mps") -> Any:
    raise no_backend("mps", "get_rng_state", "getDefaultGenerator")


def set_rng_state(new_state: Any, device: Any = "mps") -> None:
    raise no_backend("mps", "set_rng_state", "getDefaultGenerator")


def empty_cache() -> None:
    raise no_backend("mps", "empty_cache", "emptyCache")


def current_allocated_memory() -> int:
    raise no_backend("mps", "current_allocated_memory", "getCurrentAllocatedMemory")


def driver_allocated_memory() -> int:
    raise no_backend("mps", "driver_allocated_memory", "getDriverAllocatedMemory")


def recommended_max_memory() -> int:
    raise no_backend("mps", "recommended_max_memory", "getRecommendedMaxMemory")


def set_per_process_memory_fraction(fraction: float) -> None:
    raise no_backend("mps", "set_per_process_memory_fraction", "setMemoryFraction")
