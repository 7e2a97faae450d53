"""The CPU's stand-ins for device streams and events, so code written for any device runs on the CPU.

ember's ops finish before they return, so there is nothing to order: a stream only records which one is
current, and an event is always complete.

>>> import ember
>>> side = ember.cpu.Stream()
>>> with ember.cpu.stream(side):
...     ember.cpu.current_stream() is side
True
>>> ember.cpu.current_stream() is side, ember.cpu.Event().query()
(False, True)
"""
from __future__ import annotations

from contextlib import AbstractContextManager


class Stream:
    """A CPU stream: work on it is already done when it is queued, so its waits return at once."""

    def __init__(self, priority: int = -1) -> None:
        pass

    def wait_stream(self, stream) -> None:
        """Nothing to wait for: ``stream``'s work has finished."""

    def record_event(self) -> None:
        """Nothing to record: every event on the CPU is complete."""

    def wait_event(self, event) -> None:
        """Nothing to wait for: ``event`` is complete."""


class Event:
    """A CPU event: complete as soon as it exists."""

    def query(self) -> bool:
        """True: the work before the event has finished."""
        return True

    def record(self, stream=None) -> None:
        """Nothing to record: the CPU's work is done when it is queued."""

    def synchronize(self) -> None:
        """Nothing to wait for."""

    def wait(self, stream=None) -> None:
        """Nothing to wait for."""


_default_stream = Stream()
_current = _default_stream


def current_stream(device=None) -> Stream:
    """The stream selected by the innermost ``stream(...)`` block, else the default one (``device`` is ignored:
    there is one CPU device)."""
    return _current


class StreamContext(AbstractContextManager):
    """Make ``stream`` current inside the block (``None`` leaves the current stream as it is)."""

    def __init__(self, stream: Stream | None) -> None:
        self.stream = stream
        self.prev_stream = _default_stream

    def __enter__(self) -> None:
        global _current
        if self.stream is not None:
            self.prev_stream, _current = _current, self.stream

    def __exit__(self, *exc) -> None:
        global _current
        if self.stream is not None:
            _current = self.prev_stream


def stream(stream: Stream | None) -> StreamContext:
    """A ``StreamContext`` selecting ``stream``."""
    return StreamContext(stream)
