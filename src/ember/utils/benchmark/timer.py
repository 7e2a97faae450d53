"""``Timer``: runs a statement in blocks of runs, as many blocks as a time budget or a confidence asks.

>>> t = Timer("sum(values)", setup="values = list(range(100))")
>>> m = t.timeit(100)
>>> m.number_per_run, len(m.times)
(100, 1)
"""
from __future__ import annotations

import enum
import timeit as _timeit
from typing import Callable

from ember.utils.benchmark.measurement import Measurement, TaskSpec

_MAX_BLOCK = 2 ** 31 - 1


class Language(enum.Enum):
    PYTHON = 0
    CPP = 1


class Timer:
    """Time ``stmt`` (after ``setup``) with ``globals`` in scope; the labels go into its Measurements."""

    def __init__(self, stmt: str = "pass", setup: str = "pass", global_setup: str = "",
                 timer: Callable[[], float] = _timeit.default_timer, globals: dict | None = None,
                 label: str | None = None, sub_label: str | None = None, description: str | None = None,
                 env: str | None = None, num_threads: int = 1, language=Language.PYTHON):
        if language not in (Language.PYTHON, "py", "python"):
            raise ValueError(f"Timer: ember times Python statements only, got language={language!r}")
        if not isinstance(stmt, str):
            raise ValueError(f"Timer: stmt must be a string, got {type(stmt).__name__}")
        self._task_spec = TaskSpec(stmt=stmt, setup=setup, global_setup=global_setup, label=label,
                                   sub_label=sub_label, description=description, env=env, num_threads=num_threads)
        self._timer = _timeit.Timer(stmt=stmt, setup=setup, timer=timer, globals=dict(globals or {}))

    def _time(self, number: int) -> float:
        return self._timer.timeit(number)

    def timeit(self, number: int = 1000000) -> Measurement:
        """One block of ``number`` runs, after a short warm-up."""
        self._time(max(number // 100, 2))
        return Measurement(number, [self._time(number)], self._task_spec)

    def repeat(self, repeat: int = -1, number: int = -1):
        raise NotImplementedError("Timer.repeat: see Timer.blocked_autorange, which repeats blocks itself")

    def autorange(self, callback=None):
        raise NotImplementedError("Timer.autorange: see Timer.blocked_autorange")

    def _block_size(self, min_run_time: float) -> int:
        """Runs per block: enough that the clock's own cost is negligible, and a block is short next to the
        whole budget."""
        overhead = sorted(self._time(0) for _ in range(5))[2]
        number = 1
        while number * 10 <= _MAX_BLOCK:
            taken = self._time(number)
            if taken > min_run_time or (taken >= min_run_time / 1000 and overhead <= taken * 1e-4):
                break
            number *= 10
        return number

    def _measure(self, number: int, min_run_time: float, max_run_time: float | None, enough, callback) -> Measurement:
        times: list = []
        total = 0.0
        while True:
            taken = self._time(number)
            times.append(taken)
            total += taken
            if callback is not None:
                callback(number, taken)
            if total >= min_run_time and enough(times):
                break
            if max_run_time is not None and total >= max_run_time:
                break
        return Measurement(number, times, self._task_spec)

    def blocked_autorange(self, callback=None, min_run_time: float = 0.2) -> Measurement:
        """Blocks of runs until ``min_run_time`` seconds have been spent (``callback(number, time)`` after each)."""
        number = self._block_size(min_run_time)
        return self._measure(number, min_run_time, None, lambda times: True, callback)

    def adaptive_autorange(self, threshold: float = 0.1, *, min_run_time: float = 0.01, max_run_time: float = 10.0,
                           callback=None) -> Measurement:
        """Blocks of runs until their spread is under ``threshold`` of the median (or ``max_run_time`` is spent)."""
        number = self._block_size(min_run_time=0.05)

        def confident(times: list) -> bool:
            return len(times) > 3 and Measurement(number, times, self._task_spec).meets_confidence(threshold)

        return self._measure(number, min_run_time, max_run_time, confident, callback)

    def collect_callgrind(self, *args, **kwargs):
        raise NotImplementedError("Timer.collect_callgrind: ember does not run valgrind; count instructions with "
                                  "an external profiler, or compare times with blocked_autorange")
