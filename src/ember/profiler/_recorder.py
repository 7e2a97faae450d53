"""What the profiler records while it is on: one event per Function call, per backward node and per named range.

``ember.autograd.function._interceptor`` holds the active :class:`Recorder`; ``Function.apply`` checks that one
global and, when it is set, hands the call here. Off, the check is all it costs.
"""
from __future__ import annotations

import os
import sys
import threading
import time

from ember._tensor import Tensor
from ember.autograd import function as _function
from ember.overrides import TorchFunctionMode, _modes, resolve_name

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


class Event:
    """One timed interval: an op's forward (``cpu_op``), a node's backward, or a ``record_function`` range."""

    __slots__ = ("name", "kind", "start_ns", "end_ns", "children_ns", "input_shapes", "memory", "children_memory",
                 "stack", "depth", "thread")

    def __init__(self, name: str, kind: str, depth: int, input_shapes: list, stack: list):
        self.name, self.kind, self.depth = name, kind, depth
        self.input_shapes, self.stack = input_shapes, stack
        self.start_ns = time.perf_counter_ns()
        self.end_ns = self.start_ns
        self.children_ns = self.memory = self.children_memory = 0
        self.thread = threading.get_ident()

    @property
    def key(self) -> str:
        return self.name

    @property
    def cpu_time_total(self) -> float:
        """Microseconds from start to end, the time of what ran inside included."""
        return (self.end_ns - self.start_ns) / 1e3

    @property
    def self_cpu_time_total(self) -> float:
        """Microseconds spent here and not in a nested event."""
        return (self.end_ns - self.start_ns - self.children_ns) / 1e3

    @property
    def cpu_memory_usage(self) -> int:
        """Bytes of the tensors made here, nested events included."""
        return self.memory + self.children_memory

    @property
    def self_cpu_memory_usage(self) -> int:
        """Bytes of the tensors this event returned itself (an op's outputs, a backward's gradients)."""
        return self.memory

    @property
    def count(self) -> int:
        return 1

    def __repr__(self) -> str:
        return (f"<Event {self.name} self_cpu_time_total={self.self_cpu_time_total:.3f}us "
                f"cpu_time_total={self.cpu_time_total:.3f}us input_shapes={self.input_shapes}>")


class Recorder:
    """Collects events; installed as ``ember.autograd.function._interceptor`` by :meth:`start`."""

    def __init__(self, record_shapes: bool = False, profile_memory: bool = False, with_stack: bool = False):
        self.record_shapes, self.profile_memory, self.with_stack = record_shapes, profile_memory, with_stack
        self.events: list = []
        self._open: list = []
        self._entering = None  # the Function whose call run() is passing on to apply: apply must not hand it back
        self.active = False

    def start(self) -> None:
        self.active = True
        _function._interceptor = self
        self._calls = _PublicCalls(self).__enter__()

    def stop(self) -> None:
        self.active = False
        if _function._interceptor is self:
            _function._interceptor = None
        # its own mode, wherever it is in the stack: modes the user entered since stay
        _modes[:] = [mode for mode in _modes if mode is not self._calls]

    def open(self, name: str, kind: str, args: tuple = ()) -> Event:
        shapes = [list(a.shape) if isinstance(a, Tensor) else [] for a in args] if self.record_shapes else []
        event = Event(name, kind, len(self._open), shapes, _user_stack() if self.with_stack else [])
        self._open.append(event)
        self.events.append(event)
        return event

    def close(self, event: Event) -> None:
        event.end_ns = time.perf_counter_ns()
        while self._open and self._open[-1] is not event:  # an inner event left open by an exception
            self._open.pop().end_ns = event.end_ns
        if self._open:
            self._open.pop()
        if self._open:
            parent = self._open[-1]
            parent.children_ns += event.end_ns - event.start_ns
            parent.children_memory += event.memory + event.children_memory

    def takes(self, cls) -> bool:
        """Whether ``Function.apply`` should hand this call to :meth:`run` (not when run is making it)."""
        if self._entering is cls:
            self._entering = None
            return False
        return True

    def run(self, cls, args: tuple, kwargs: dict):
        """Call ``cls.apply`` as one event; time its node's backward too, when it records one."""
        event = self.open(cls.__name__, "cpu_op", args)
        self._entering = cls
        try:
            output = cls.apply(*args, **kwargs)
            if self.profile_memory:
                event.memory = _nbytes(output if type(output) is tuple else (output,))
        finally:
            self._entering = None
            self.close(event)
        first = output[0] if type(output) is tuple and output else output
        node = first._grad_fn if isinstance(first, Tensor) else None
        if node is not None and type(node) is cls._backward_cls:
            self._time_backward(node)
        return output

    def _time_backward(self, node) -> None:
        """Time ``node``'s backward with a pre-hook and a hook, as any user could (they return nothing: no change)."""
        opened: list = []

        def before(grad_outputs):
            if self.active:
                opened.append(self.open(node.name(), "backward"))

        def after(grad_inputs, grad_outputs):
            if opened:
                event = opened.pop()
                if self.profile_memory:
                    event.memory = _nbytes(grad_inputs)
                self.close(event)

        node.register_prehook(before)
        node.register_hook(after)

    def record(self, name: str) -> Event | None:
        return self.open(name, "user_annotation") if self.active else None


    def drop(self, event: Event, at: int) -> None:
        """Forget ``event`` (``self.events[at]``), closed already: its own time and memory become its parent's."""
        del self.events[at]
        if self._open:
            parent = self._open[-1]
            parent.children_ns -= event.end_ns - event.start_ns - event.children_ns
            parent.children_memory -= event.memory


class _PublicCalls(TorchFunctionMode):
    """Times the public calls that run no Function (comparisons, argmax, factories ...): a call that does is
    that Function's event already, so its own event is dropped."""

    def __init__(self, recorder: Recorder):
        self.recorder = recorder

    def __torch_function__(self, func, types, args=(), kwargs=None):
        recorder = self.recorder
        at = len(recorder.events)
        event = recorder.open(resolve_name(func) or getattr(func, "__name__", "call"), "cpu_op", args)
        try:
            result = func(*args, **(kwargs or {}))
        finally:
            recorder.close(event)
        if any(e.depth == event.depth + 1 and e.kind == "cpu_op" for e in recorder.events[at + 1:]):
            recorder.drop(event, at)
        elif recorder.profile_memory:
            event.memory = _nbytes(result if type(result) is tuple else (result,))
            if recorder._open:
                recorder._open[-1].children_memory += event.memory
        return result


def _nbytes(values: tuple) -> int:
    """The bytes of new memory among ``values``: tensors that are not views, or arrays (as gradients may be)."""
    return sum((v._data.nbytes if v._base is None else 0) if isinstance(v, Tensor) else getattr(v, "nbytes", 0)
               for v in values if v is not None)


def _user_stack() -> list:
    """The caller's frames outside ember, innermost first, as ``file(line): function``."""
    frames, frame = [], sys._getframe(2)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not filename.startswith(_PACKAGE_DIR):
            frames.append(f"{filename}({frame.f_lineno}): {frame.f_code.co_name}")
        frame = frame.f_back
    return frames


def active_recorder() -> Recorder | None:
    """The recording profiler, if any, past the selective checkpoints' modes entered while it records."""
    interceptor = _function._interceptor
    while interceptor is not None and not isinstance(interceptor, Recorder):
        interceptor = interceptor.previous
    return interceptor
