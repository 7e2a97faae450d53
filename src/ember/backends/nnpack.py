"""``ember.backends.nnpack``: torch's switch for NNPACK's convolutions. ember's convolutions run on NumPy, so
NNPACK is never available; the switch is kept so code that sets it runs, and reads back what it set.

>>> import ember
>>> ember.backends.nnpack.is_available()
False
>>> with ember.backends.nnpack.flags(enabled=False):
...     ember.backends.nnpack.set_flags(True)
(False,)
"""
from __future__ import annotations

from contextlib import contextmanager

__all__ = ["is_available", "flags", "set_flags"]

_on = True  # the switch (named so that set_flags's argument can keep torch's name)


def is_available() -> bool:
    """False: ember is not built with NNPACK."""
    return False


def set_flags(_enabled: bool) -> tuple:
    """Set whether NNPACK may be used; returns the previous setting as a one-element tuple."""
    global _on
    previous, _on = (_on,), _enabled
    return previous


@contextmanager
def flags(enabled: bool = False):
    """Set the switch for the block (off by default), then restore it."""
    previous = set_flags(enabled)
    try:
        yield
    finally:
        set_flags(previous[0])
