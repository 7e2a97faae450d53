"""``ember.cpu.amp``: the older spelling of :mod:`ember.amp` for the CPU; each class warns that it is deprecated
and works as its replacement.

>>> import ember, warnings
>>> with warnings.catch_warnings():
...     warnings.simplefilter("ignore", FutureWarning)
...     with ember.cpu.amp.autocast():
...         print(ember.get_autocast_dtype("cpu"), (ember.ones(2, 2) @ ember.ones(2, 2)).dtype)
ember.bfloat16 ember.bfloat16
"""
from __future__ import annotations

import warnings

from ember._dtype import bfloat16
from ember.amp.autocast_mode import autocast as _autocast
from ember.amp.grad_scaler import GradScaler as _GradScaler

__all__ = ["GradScaler", "autocast"]


def _deprecated(name: str) -> None:
    warnings.warn(f"`ember.cpu.amp.{name}(args...)` is deprecated. Please use `ember.amp.{name}('cpu', args...)` "
                  "instead.", FutureWarning, stacklevel=3)


class autocast(_autocast):
    """``ember.autocast("cpu", ...)``, with bfloat16 as its default dtype."""

    def __init__(self, enabled: bool = True, dtype=bfloat16, cache_enabled: bool = True) -> None:
        _deprecated("autocast")
        super().__init__("cpu", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class GradScaler(_GradScaler):
    """``ember.amp.GradScaler("cpu", ...)``."""

    def __init__(self, init_scale: float = 2.0 ** 16, growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        _deprecated("GradScaler")
        super().__init__("cpu", init_scale, growth_factor, backoff_factor, growth_interval, enabled)
