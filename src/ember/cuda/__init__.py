"""``ember.cuda``: honest answers for a framework that runs on the CPU only.

Programs written for a GPU ask before they use one; here every question has the CPU's answer, so the
usual portable idiom picks the CPU and the program runs unchanged:

>>> import ember
>>> device = "cuda" if ember.cuda.is_available() else "cpu"
>>> device, ember.cuda.device_count()
('cpu', 0)
>>> ember.ones(2).to(device)
tensor([1., 1.])

Seeding the (absent) GPU seeds the CPU generator, so a program's random numbers stay reproducible;
``synchronize`` and ``empty_cache`` do nothing, as there is nothing to wait for or free.
Asking for a GPU itself (``.cuda()``, ``device="cuda"``) is an error that shows the idiom above.
"""
from __future__ import annotations

from ember import _random
from ember._tensor import device as _device
from ember.cuda import amp  # noqa: F401

__all__ = [
    "amp", "current_device", "device_count", "empty_cache", "get_device_name", "init", "is_available",
    "is_bf16_supported", "is_initialized", "manual_seed", "manual_seed_all", "max_memory_allocated",
    "memory_allocated", "memory_reserved", "seed", "seed_all", "synchronize",
]


def is_available() -> bool:
    """False: ember has no GPU backend.

    >>> ember.cuda.is_available()
    False
    """
    return False


def device_count() -> int:
    """0: there are no GPUs ember can use."""
    return 0


def is_initialized() -> bool:
    return False


def is_bf16_supported(including_emulation: bool = True) -> bool:
    return False


def init() -> None:
    _no_gpu("init")


def current_device() -> int:
    _no_gpu("current_device")


def get_device_name(device=None) -> str:
    _no_gpu("get_device_name")


def manual_seed(seed: int) -> None:
    """Seed the CPU generator, which makes every random number in ember (there is no GPU generator).

    >>> ember.cuda.manual_seed(0); a = ember.rand(1)
    >>> ember.cuda.manual_seed(0); bool(ember.rand(1) == a)
    True
    """
    _random.manual_seed(seed)


def manual_seed_all(seed: int) -> None:
    """As :func:`manual_seed`: the CPU generator is the only one."""
    _random.manual_seed(seed)


def seed() -> None:
    _random.seed()


def seed_all() -> None:
    _random.seed()


def synchronize(device=None) -> None:
    """Nothing to wait for: every ember op has finished when it returns."""
    if device is not None:
        _device(device)


def empty_cache() -> None:
    """Nothing to free: ember keeps no cache of device memory."""


def memory_allocated(device=None) -> int:
    """0 bytes on a GPU, as there is none (torch's answer on a machine without one)."""
    return 0


max_memory_allocated = memory_reserved = memory_allocated


def _no_gpu(name: str):
    raise RuntimeError(
        f"ember.cuda.{name}(): ember runs on the CPU only and has no CUDA device; check "
        "ember.cuda.is_available() first, as in device = 'cuda' if ember.cuda.is_available() else 'cpu'"
    )
