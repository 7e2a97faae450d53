"""``ember.cuda.amp``: the older spelling of :mod:`ember.amp` for CUDA (disabled here, as on a machine without a GPU).

>>> import ember, warnings
>>> with warnings.catch_warnings():
...     warnings.simplefilter("ignore")
...     ember.cuda.amp.GradScaler().is_enabled()
False
"""
from __future__ import annotations

import warnings

from ember.amp.autocast_mode import autocast as _autocast
from ember.amp.grad_scaler import GradScaler as _GradScaler

__all__ = ["GradScaler", "autocast"]


class GradScaler(_GradScaler):
    """``ember.amp.GradScaler("cuda", ...)``: always disabled, as there is no CUDA device (torch warns the same)."""

    def __init__(self, init_scale: float = 2.0 ** 16, growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        warnings.warn(
            "ember.cuda.amp.GradScaler(args...) is deprecated. Please use ember.amp.GradScaler('cuda', args...) "
            "instead.", FutureWarning, stacklevel=2,
        )
        super().__init__("cuda", init_scale, growth_factor, backoff_factor, growth_interval, enabled)


class autocast(_autocast):
    """``ember.autocast("cuda", ...)``: disabled, with torch's warning, as there is no CUDA device."""

    def __init__(self, enabled: bool = True, dtype=None, cache_enabled: bool = True) -> None:
        warnings.warn(
            "ember.cuda.amp.autocast(args...) is deprecated. Please use ember.amp.autocast('cuda', args...) instead.",
            FutureWarning, stacklevel=2,
        )
        super().__init__("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)
