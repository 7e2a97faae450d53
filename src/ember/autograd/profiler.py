"""``ember.autograd.profiler``: the older spelling of :mod:`ember.profiler`, as programs written for it use it.

>>> import ember
>>> with ember.autograd.profiler.profile() as prof:
...     (ember.ones(2, requires_grad=True) * 2).sum().backward()
>>> "MulBackward0" in {e.key for e in prof.key_averages()}
True
"""
from __future__ import annotations

from typing import Any

from ember.profiler.profiler import profile as _profile, record_function

__all__ = ["profile", "record_function"]


class profile(_profile):
    """``profile(enabled=True, *, record_shapes=False, profile_memory=False, with_stack=False, ...)``: records
    the block as :class:`ember.profiler.profile` does; with ``enabled=False`` it records nothing."""

    def __init__(self, enabled: bool = True, *, use_cuda: bool = False, use_device: Any = None,
                 record_shapes: bool = False, with_flops: bool = False, profile_memory: bool = False,
                 with_stack: bool = False, with_modules: bool = False, **more: Any) -> None:
        super().__init__(record_shapes=record_shapes, profile_memory=profile_memory, with_stack=with_stack)
        self.enabled = bool(enabled)

    def __enter__(self) -> "profile | None":
        if not self.enabled:
            return None  # as torch's: a disabled profile gives nothing to read
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        if self.enabled:
            self.stop()

    @property
    def self_cpu_time_total(self) -> float:
        """Microseconds spent in all events, each counted once (its own time only)."""
        return sum(e.self_cpu_time_total for e in self.events())

    def table(self, **options: Any) -> str:
        return self.events().table(**options)
