"""The one switch of forward-mode AD that ``Function.apply`` reads on every call (see ``forward_ad``)."""
from __future__ import annotations


class _ForwardState:
    """``key`` is the active dual level's private key, or None: then no op looks at tangents at all."""

    __slots__ = ("key", "apply")

    def __init__(self):
        self.key = None
        self.apply = None  # forward_ad's Function.apply for calls made while a dual level is active


state = _ForwardState()
