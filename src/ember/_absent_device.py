"""What the modules of the accelerators ember lacks (``ember.xpu``, ``ember.mps``, ``ember.mtia``) answer.

A program probes them before use (``if ember.xpu.is_available(): ...``); the probes give the answers torch
gives on a machine without that device, and the calls that need the device raise torch's error type, with a
message that says ember runs on the CPU and how to choose a device portably.
"""
from __future__ import annotations

from typing import Any


def not_compiled(device: str, call: str) -> AssertionError:
    """torch's AssertionError for a device it was not built with (``Torch not compiled with XPU enabled``)."""
    return AssertionError(
        f"ember.{device}.{call}(): ember is not compiled with {device.upper()} enabled, as it runs on the CPU "
        f"only; check ember.{device}.is_available() first, as in device = '{device}' if "
        f"ember.{device}.is_available() else 'cpu'"
    )


def no_backend(device: str, call: str, native: str) -> RuntimeError:
    """torch's RuntimeError for a device call without that backend (``Cannot execute emptyCache() without MPS
    backend.``); ``native`` is the name torch's message gives."""
    return RuntimeError(
        f"Cannot execute {native}() without {device.upper()} backend: ember.{device}.{call}() needs a "
        f"{device.upper()} device and ember runs on the CPU only; check ember.{device}.is_available() first"
    )


def unavailable() -> bool:
    """False: ember has no such device."""
    return False


def no_devices() -> int:
    """0: there is no such device to count."""
    return 0


def no_bytes(device: Any = None) -> int:
    """0 bytes: nothing is allocated on a device that is not there."""
    return 0


def ignored_seed(seed: int) -> None:
    """Nothing: as torch without the device, the seed is not applied (the CPU generator is not touched)."""


def nothing(*args: Any, **kwargs: Any) -> None:
    """Nothing to do without the device (torch returns None too)."""


def no_states() -> list:
    """No generator states: there are no devices."""
    return []
