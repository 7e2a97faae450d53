"""``ember.nn.attention``: choosing the kernel behind ``F.scaled_dot_product_attention``.

ember has one kernel, the math one (written in ember ops, so it differentiates to any order). Programs
written for torch pick kernels with ``sdpa_kernel``: with ``SDPBackend.MATH`` among the choices nothing
changes; with only fused kernels (flash, memory-efficient, cuDNN), attention raises as torch's CPU
build does for inputs its fused kernels cannot take.

>>> import ember
>>> from ember.nn.attention import SDPBackend, sdpa_kernel
>>> q = ember.randn(1, 2, 4, 8)
>>> with sdpa_kernel([SDPBackend.MATH, SDPBackend.FLASH_ATTENTION]):
...     out = ember.nn.functional.scaled_dot_product_attention(q, q, q)
>>> out.shape
ember.Size([1, 2, 4, 8])
"""
from __future__ import annotations

import contextlib
import enum
from typing import Iterable

__all__ = ["SDPBackend", "sdpa_kernel", "math_kernel_enabled"]


class SDPBackend(enum.IntEnum):
    """The kernels torch can run attention with (ember runs ``MATH``)."""

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


_enabled: set = {SDPBackend.MATH, SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION,
                 SDPBackend.CUDNN_ATTENTION, SDPBackend.OVERRIDEABLE}


def math_kernel_enabled() -> bool:
    """Whether ``scaled_dot_product_attention`` may run (the math kernel has not been ruled out)."""
    return SDPBackend.MATH in _enabled


@contextlib.contextmanager
def sdpa_kernel(backends: SDPBackend | Iterable[SDPBackend], set_priority: bool = False):
    """Within the block, attention may use only ``backends`` (the order is a priority with ``set_priority``)."""
    chosen = [backends] if isinstance(backends, SDPBackend) else list(backends) \
        if isinstance(backends, (list, tuple, set)) else None
    if chosen is None or not all(isinstance(b, SDPBackend) for b in chosen):
        raise TypeError(f"sdpa_kernel: backends must be an SDPBackend or a list of them, got "
                        f"{type(backends).__name__}")
    global _enabled
    before = _enabled
    _enabled = set(chosen)
    try:
        yield
    finally:
        _enabled = before
