"""``ember.profiler``: where a program's time goes, op by op, forward and backward, in torch's format.

Each ``Function`` call (every differentiable op, built-in or yours) is one event, and so is the
backward of each graph node it records; a public call that runs no Function (a comparison, ``argmax``,
``ember.zeros``) is one under its public name, seen by a ``__torch_function__`` mode while recording;
``record_function`` adds named ranges. Events nest, so the
table shows each one's own time (Self CPU) and its time with what ran inside (CPU total).

With the profiler off, ``Function.apply`` checks one global and goes on (bench/bench_profiler.py
measures that check).
"""
from ember.profiler.profiler import (
    ProfilerAction, ProfilerActivity, profile, record_function, schedule, supported_activities,
    tensorboard_trace_handler,
)

__all__ = ["ProfilerAction", "ProfilerActivity", "profile", "record_function", "schedule", "supported_activities",
           "tensorboard_trace_handler"]


def kineto_available() -> bool:
    """False: ember's profiler records its events itself, without torch's Kineto library (its tables and
    traces come out in the same format all the same).

    >>> ember.profiler.kineto_available()
    False
    """
    return False
