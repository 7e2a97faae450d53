"""Settings of ``ember.autograd.graph`` that concern device streams and compiled regions, which the CPU has not.

The two stream switches are kept, checked as torch checks them, and read by nothing: on the CPU no gradient
crosses streams and no graph is captured. A memory budget means something only to a compiler's
partitioner, and nothing in ember is compiled, so it raises, as torch's does outside a compiled region.

>>> import ember
>>> ember.autograd.graph.set_warn_on_accumulate_grad_stream_mismatch(False)
>>> ember.autograd.graph.set_warn_on_accumulate_grad_stream_mismatch(True)
"""
from __future__ import annotations

from contextlib import AbstractContextManager


class _StreamSettings:
    override_stale_capture_stream = False
    warn_on_accumulate_grad_stream_mismatch = True


settings = _StreamSettings()


def _bool(enabled) -> bool:
    if type(enabled) is not bool:
        raise RuntimeError(f"enabled must be a bool, but got {type(enabled).__name__}; pass True or False")
    return enabled


def set_override_stale_capture_stream(enabled: bool) -> None:
    """Whether capturing a device graph may replace a stale stream with the capturing one (process-wide; there
    are no device graphs on the CPU)."""
    settings.override_stale_capture_stream = _bool(enabled)


def set_warn_on_accumulate_grad_stream_mismatch(enabled: bool) -> None:
    """Whether to warn when a leaf's gradient arrives on another stream than the leaf's (never, on the CPU)."""
    settings.warn_on_accumulate_grad_stream_mismatch = _bool(enabled)


def region_activation_memory_budget(budget: float) -> AbstractContextManager[None]:
    """The share (in [0, 1]) of activations a compiled region may keep for backward rather than recompute.

    Checked as torch checks it; then, since nothing in ember is compiled, a RuntimeError (torch's too, outside
    a compiled region).

    >>> ember.autograd.graph.region_activation_memory_budget(0.5)
    Traceback (most recent call last):
    RuntimeError: ember.autograd.graph.region_activation_memory_budget can only be used inside a compiled region...
    """
    name = "ember.autograd.graph.region_activation_memory_budget"
    if isinstance(budget, bool) or not isinstance(budget, (int, float)):
        raise TypeError(f"{name}: expects a float, got {type(budget).__name__}")
    if not 0.0 <= budget <= 1.0:
        raise ValueError(f"{name}: must be in [0, 1], got {budget}")
    raise RuntimeError(
        f"{name} can only be used inside a compiled region; it has no effect in eager mode, and ember runs "
        "everything eagerly: drop the block"
    )
