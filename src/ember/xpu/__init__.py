"""``ember.xpu``: Intel GPUs, which ember does not use, answered as torch answers on a machine without one.

Device-selection code probes it and falls through to the CPU:

>>> import ember
>>> ember.xpu.is_available(), ember.xpu.device_count(), ember.xpu.memory_allocated()
(False, 0, 0)
>>> device = "xpu" if ember.xpu.is_available() else "cpu"
>>> device
'cpu'

As in torch, seeding does nothing and the calls that need a device (``synchronize``, ``current_device``,
``get_device_name`` ...) raise AssertionError.
"""
from __future__ import annotations

from collections import OrderedDict
from typing import Any

from ember._absent_device import (
    ignored_seed, no_bytes, no_devices, no_states, not_compiled, nothing, unavailable,
)

__all__ = [
    "can_device_access_peer", "current_device", "current_stream", "device_count", "empty_cache", "get_arch_list",
    "get_device_capability", "get_device_name", "get_device_properties", "get_gencode_flags",
    "get_per_process_memory_fraction", "get_rng_state", "get_rng_state_all", "init", "initial_seed",
    "is_available", "is_bf16_supported", "is_initialized", "is_tf32_supported", "manual_seed", "manual_seed_all",
    "max_memory_allocated", "max_memory_reserved", "mem_get_info", "memory_allocated", "memory_reserved",
    "memory_snapshot", "memory_stats", "reset_peak_memory_stats", "seed", "seed_all", "set_device",
    "set_per_process_memory_fraction", "set_rng_state", "set_rng_state_all", "synchronize",
]

is_available = unavailable
device_count = no_devices
manual_seed = manual_seed_all = ignored_seed
seed = seed_all = empty_cache = nothing
memory_allocated = max_memory_allocated = memory_reserved = max_memory_reserved = no_bytes
get_rng_state_all = no_states


def is_initialized() -> bool:
    return False


def is_bf16_supported(including_emulation: bool = True) -> bool:
    return False


def is_tf32_supported() -> bool:
    return False


def get_arch_list() -> list[str]:
    """No architectures: ember was built for none."""
    return []


def get_gencode_flags() -> str:
    return ""


def memory_stats(device: Any = None) -> dict[str, Any]:
    return OrderedDict()


def memory_snapshot(mempool_id: tuple[int, int] | None = None) -> list[dict[str, Any]]:
    return []


def set_rng_state(new_state: Any, device: Any = "xpu") -> None:
    """Nothing: as in torch, a state for a device that is not there is not applied."""


def set_rng_state_all(new_states: Any) -> None:
    for state in new_states:
        set_rng_state(state)


# ---- the calls that need a device
def synchronize(device: Any = None) -> None:
    raise not_compiled("xpu", "synchronize")


def current_device() -> int:
    raise not_compiled("xpu", "current_device")


def init() -> None:
    raise not_compiled("xpu", "init")


def initial_seed() -> int:
    raise not_compiled("xpu", "initial_seed")


def get_rng_state(device: Any = "xpu") -> Any:
    raise not_compiled("xpu", "get_rng_state")


def set_device(device: Any) -> None:
    raise not_compiled("xpu", "set_device")


def get_device_name(device: Any = None) -> str:
    raise not_compiled("xpu", "get_device_name")


def get_device_properties(device: Any = None) -> Any:
    raise not_compiled("xpu", "get_device_properties")


def get_device_capability(device: Any = None) -> dict[str, Any]:
    raise not_compiled("xpu", "get_device_capability")


def current_stream(device: Any = None) -> Any:
    raise not_compiled("xpu", "current_stream")


def mem_get_info(device: Any = None) -> tuple[int, int]:
    raise not_compiled("xpu", "mem_get_info")


def set_per_process_memory_fraction(fraction: float, device: Any = None) -> None:
    raise not_compiled("xpu", "set_per_process_memory_fraction")


def get_per_process_memory_fraction(device: Any = None) -> float:
    raise not_compiled("xpu", "get_per_process_memory_fraction")


def can_device_access_peer(device: Any, peer: Any) -> bool:
    raise not_compiled("xpu", "can_device_access_peer")


def reset_peak_memory_stats(device: Any = None) -> None:
    raise not_compiled("xpu", "reset_peak_memory_stats")
