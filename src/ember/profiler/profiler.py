"""``profile``, ``schedule`` and ``record_function``: torch's profiler API over ember's :class:`Recorder`."""
from __future__ import annotations

import enum
import functools
import os
import socket
import time
import warnings
from typing import Any, Callable, Iterable

from ember.profiler._events import EventList
from ember.profiler._recorder import Recorder, active_recorder

__all__ = ["ProfilerAction", "ProfilerActivity", "profile", "record_function", "schedule", "supported_activities",
           "tensorboard_trace_handler"]


class ProfilerActivity(enum.Enum):
    CPU = 0
    XPU = 1
    MTIA = 2
    CUDA = 3
    HPU = 4
    PrivateUse1 = 5


class ProfilerAction(enum.Enum):
    """What the profiler does at a step of a :func:`schedule`."""

    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def supported_activities() -> set:
    """Only the CPU: ember has no device to trace."""
    return {ProfilerActivity.CPU}


def schedule(*, wait: int, warmup: int, active: int, repeat: int = 0, skip_first: int = 0,
             skip_first_wait: int = 0) -> Callable[[int], ProfilerAction]:
    """The action for each step: skip ``skip_first`` steps, then cycles of ``wait`` idle, ``warmup`` and ``active``
    recorded steps (the last one saves), ``repeat`` times (0: for ever).

    >>> s = schedule(wait=1, warmup=1, active=2, repeat=1)
    >>> [s(step).name for step in range(5)]
    ['NONE', 'WARMUP', 'RECORD', 'RECORD_AND_SAVE', 'NONE']
    """
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise ValueError("Invalid profiler schedule arguments: wait, warmup, repeat and skip_first must be >= 0 "
                         "and active must be > 0")
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results", UserWarning, stacklevel=2)
    cycle = wait + warmup + active

    def action(step: int) -> ProfilerAction:
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait and step < wait:  # the first cycle's wait is skipped
            step += wait
        if repeat > 0 and step // cycle >= repeat:
            return ProfilerAction.NONE
        at = step % cycle
        if at < wait:
            return ProfilerAction.NONE
        if at < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if at < cycle - 1 else ProfilerAction.RECORD_AND_SAVE

    return action


def _always_record(step: int) -> ProfilerAction:
    return ProfilerAction.RECORD


_RECORDING = (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)


class profile:
    """Record every op's forward and backward (each ``Function`` call and graph node) while the block runs.

    ``key_averages().table(sort_by=...)`` prints where the time went, in torch's format;
    ``export_chrome_trace(path)`` writes a trace for chrome://tracing or Perfetto. With a ``schedule``, call
    ``step()`` at the end of each iteration; ``on_trace_ready(prof)`` runs when each active span ends.

    >>> import ember
    >>> from ember.profiler import profile, record_function
    >>> x = ember.ones(8, 8, requires_grad=True)
    >>> with profile(record_shapes=True) as prof:
    ...     with record_function("forward"):
    ...         y = (x * 2).sum()
    ...     y.backward()
    >>> sorted(e.key for e in prof.key_averages() if e.key.endswith("Backward0") or e.key == "forward")
    ['MulBackward0', 'SumBackward0', 'forward']
    >>> print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=1))  # doctest: +SKIP
    -------------  ------------  ------------  ------------  ------------  ------------  ------------
             Name    Self CPU %      Self CPU   CPU total %     CPU total  CPU time avg    # of Calls
    -------------  ------------  ------------  ------------  ------------  ------------  ------------
        MulScalar        31.05%      41.112us        31.05%      41.112us      41.112us             1
    -------------  ------------  ------------  ------------  ------------  ------------  ------------
    Self CPU time total: 132.398us
    """

    def __init__(self, *, activities: Iterable[ProfilerActivity] | None = None,
                 schedule: Callable[[int], ProfilerAction] | None = None,
                 on_trace_ready: Callable[["profile"], Any] | None = None, record_shapes: bool = False,
                 profile_memory: bool = False, with_stack: bool = False, with_flops: bool = False,
                 with_modules: bool = False, experimental_config: Any = None, execution_trace_observer: Any = None,
                 acc_events: bool = False, use_cuda: bool | None = None, **more: Any) -> None:
        self.activities = set(activities) if activities is not None else supported_activities()
        self.schedule = schedule if schedule is not None else _always_record
        self.on_trace_ready = on_trace_ready
        self.record_shapes, self.profile_memory, self.with_stack = record_shapes, profile_memory, with_stack
        self.acc_events = acc_events
        self.step_num = 0
        self._recorder: Recorder | None = None
        self._finished: list = []  # events of the spans recorded so far (the last span's, unless acc_events)
        self._step_event = None

    def __enter__(self) -> "profile":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self) -> None:
        self.step_num = 0
        self._action = self.schedule(0)
        if self._action in _RECORDING:
            self._begin()
        self._mark_step()

    def stop(self) -> None:
        self._close_step()
        if self._recorder is not None:
            self._end(save=self.on_trace_ready is not None)

    def step(self) -> None:
        """Mark the end of an iteration: the schedule decides whether the next one is recorded."""
        self._close_step()
        previous, self.step_num = self._action, self.step_num + 1
        self._action = self.schedule(self.step_num)
        if previous == ProfilerAction.RECORD_AND_SAVE and self._recorder is not None:
            self._end(save=True)
        if self._action in _RECORDING and self._recorder is None:
            self._begin()
        self._mark_step()

    def _begin(self) -> None:
        self._recorder = Recorder(self.record_shapes, self.profile_memory, self.with_stack)
        self._recorder.start()

    def _end(self, save: bool) -> None:
        recorder, self._recorder = self._recorder, None
        recorder.stop()
        self._finished = (self._finished if self.acc_events else []) + recorder.events
        if save and self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def _mark_step(self) -> None:
        if self._recorder is not None and self.schedule is not _always_record:
            self._step_event = self._recorder.open(f"ProfilerStep#{self.step_num}", "user_annotation")

    def _close_step(self) -> None:
        if self._step_event is not None and self._recorder is not None:
            self._recorder.close(self._step_event)
        self._step_event = None

    def events(self) -> EventList:
        """The recorded events, in the order they started."""
        events = self._finished if self._recorder is None else self._finished + self._recorder.events
        return EventList(events, self.profile_memory)

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0,
                     group_by_overload_name: bool = False) -> EventList:
        if group_by_input_shape and not self.record_shapes:
            raise RuntimeError("key_averages(group_by_input_shape=True) needs the shapes: profile with "
                               "record_shapes=True")
        return self.events().key_averages(group_by_input_shape, group_by_stack_n)

    def export_chrome_trace(self, path: str) -> None:
        self.events().export_chrome_trace(path)


class record_function:
    """Time a named part of the program (a block, or a decorated function) as one event of the profile.

    With no profiler on, it costs a lookup and does nothing.

    >>> import ember
    >>> @record_function("double")
    ... def double(t):
    ...     return t * 2
    >>> with profile() as prof:
    ...     _ = double(ember.ones(3))
    >>> [(e.name, e.count) for e in prof.events() if e.name == "double"]
    [('double', 1)]
    """

    def __init__(self, name: str, args: str | None = None) -> None:
        self.name, self.args = name, args
        self._event = None
        self._recorder = None

    def __enter__(self) -> "record_function":
        self._recorder = active_recorder()
        if self._recorder is not None:
            self._event = self._recorder.record(self.name)
        return self

    def __exit__(self, *exc) -> None:
        if self._event is not None:
            self._recorder.close(self._event)
        self._event = self._recorder = None

    def __call__(self, fn: Callable) -> Callable:
        @functools.wraps(fn)
        def recorded(*args, **kwargs):
            with record_function(self.name, self.args):
                return fn(*args, **kwargs)

        return recorded


def tensorboard_trace_handler(dir_name: str, worker_name: str | None = None, use_gzip: bool = False) -> Callable:
    """An ``on_trace_ready`` that writes each span's Chrome trace into ``dir_name`` (TensorBoard reads them)."""
    def handler(prof: profile) -> None:
        os.makedirs(dir_name, exist_ok=True)
        worker = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        prof.export_chrome_trace(os.path.join(dir_name, f"{worker}.{time.time_ns()}.pt.trace.json"))

    return handler
