"""What one statement's timing is: its blocks' times per run, and the statistics read from them.

>>> m = Measurement(number_per_run=10, raw_times=[1e-5, 1.2e-5, 1.1e-5], task_spec=TaskSpec("x + 1", "pass"))
>>> round(m.median * 1e6, 3), round(m.iqr * 1e9, 1)
(1.1, 100.0)
>>> print(repr(m).split("\\n", 1)[1])
x + 1
  Median: 1.10 us
  IQR:    0.10 us (1.05 to 1.15)
  3 measurements, 10 runs per measurement, 1 thread
"""
from __future__ import annotations

import dataclasses
import math
import statistics
from typing import Any

import numpy as np

_IQR_WARN = 0.1  # a spread above this share of the median is worth a warning
_IQR_GROSS_WARN = 0.5  # and above this one, a stern one
_MIN_CONFIDENCE = 25e-9  # seconds: no clock resolves finer, whatever the statistics say
_MAX_FIGURES = 4

_UNITS = {-3: "ns", -2: "us", -1: "ms", 0: "s"}
_SCALES = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}


@dataclasses.dataclass(frozen=True)
class TaskSpec:
    """What was timed: the statement, its setup, and the labels a table groups it by."""

    stmt: str
    setup: str
    global_setup: str = ""
    label: str | None = None
    sub_label: str | None = None
    description: str | None = None
    env: str | None = None
    num_threads: int = 1

    @property
    def title(self) -> str:
        """The label (with its sub-label) if there is one, else the statement."""
        if self.label is not None:
            return self.label + (f": {self.sub_label}" if self.sub_label else "")
        return self.stmt if "\n" not in self.stmt else "stmt:\n" + self.stmt

    def summarize(self) -> str:
        lines = [self.title]
        if self.description:
            lines.append(self.description)
        if self.env:
            lines.append(f"Env: {self.env}")
        return "\n".join(lines)


def select_unit(t: float) -> tuple:
    """The unit a time in seconds reads best in, and its size: ``(unit, seconds per unit)``.

    >>> select_unit(3e-5)
    ('us', 1e-06)
    """
    power = math.floor(math.log10(t) / 3) if t > 0 else -3  # thousands: -3 for nanoseconds ... 0 for seconds
    unit = _UNITS.get(min(max(power, -3), 0), "s")
    return unit, _SCALES[unit]


def unit_to_english(unit: str) -> str:
    """``'us'`` -> ``'microsecond'``."""
    return {"ns": "nanosecond", "us": "microsecond", "ms": "millisecond", "s": "second"}[unit]


def trim_sigfig(x: float, n: int) -> float:
    """``x`` rounded to ``n`` significant figures.

    >>> trim_sigfig(123.456, 2)
    120.0
    """
    if x == 0:
        return 0.0
    magnitude = int(math.floor(math.log10(abs(x))))
    return round(x, n - 1 - magnitude) * 1.0


@dataclasses.dataclass
class Measurement:
    """The times of ``number_per_run`` runs in each block (``raw_times``, seconds) of one task."""

    number_per_run: int
    raw_times: list
    task_spec: TaskSpec
    metadata: dict | None = None

    def __post_init__(self) -> None:
        self.raw_times = list(self.raw_times)

    @property
    def times(self) -> list:
        """Seconds per run, one value per block."""
        return [t / self.number_per_run for t in self.raw_times]

    def _quantile(self, q: float) -> float:
        return float(np.quantile(np.asarray(self.times, dtype=np.float64), q))

    @property
    def median(self) -> float:
        return self._quantile(0.5)

    @property
    def mean(self) -> float:
        return statistics.mean(self.times)

    @property
    def iqr(self) -> float:
        return self._quantile(0.75) - self._quantile(0.25)

    @property
    def significant_figures(self) -> int:
        """How many figures of the median the middle half of the blocks supports (1 to 4)."""
        times = sorted(self.times)
        middle = times[len(times) // 4: math.ceil(3 * len(times) / 4)] or times
        spread = float(np.std(middle)) * 1.645 / math.sqrt(len(middle))  # a rough 90% confidence half-width
        figures = int(math.floor(math.log10(self.median / max(spread, _MIN_CONFIDENCE))))
        return min(max(figures, 1), _MAX_FIGURES)

    def meets_confidence(self, threshold: float = _IQR_WARN) -> bool:
        """Whether the spread is at most ``threshold`` of the median."""
        return self.iqr / self.median < threshold

    @property
    def has_warnings(self) -> bool:
        return len(self.times) > 1 and not self.meets_confidence(_IQR_WARN)

    @property
    def title(self) -> str:
        return self.task_spec.title

    @property
    def env(self) -> str | None:
        return self.task_spec.env

    def __getattr__(self, name: str) -> Any:
        if name in ("stmt", "setup", "label", "sub_label", "description", "num_threads", "global_setup"):
            return getattr(self.task_spec, name)
        raise AttributeError(f"'Measurement' object has no attribute '{name}'")

    @staticmethod
    def merge(measurements) -> list:
        """One measurement per task, joining the blocks of measurements of the same task."""
        joined: dict = {}
        for m in measurements:
            key = (m.task_spec, m.number_per_run)
            if key in joined:
                joined[key].raw_times.extend(m.raw_times)
            else:
                joined[key] = Measurement(m.number_per_run, list(m.raw_times), m.task_spec, m.metadata)
        return list(joined.values())

    def __repr__(self) -> str:
        unit, scale = select_unit(self.median)
        lines = [f"<{type(self).__module__}.{type(self).__name__} object at {hex(id(self))}>",
                 self.task_spec.summarize()]
        threads = f"{self.task_spec.num_threads} thread" + ("s" if self.task_spec.num_threads > 1 else "")
        if len(self.times) == 1:
            lines += [f"  {self.median / scale:.2f} {unit}", f"  1 measurement, {self.number_per_run} runs , {threads}"]
        else:
            low, high = self._quantile(0.25) / scale, self._quantile(0.75) / scale
            lines += [f"  Median: {self.median / scale:.2f} {unit}",
                      f"  IQR:    {self.iqr / scale:.2f} {unit} ({low:.2f} to {high:.2f})",
                      f"  {len(self.times)} measurements, {self.number_per_run} runs per measurement, {threads}"]
        lines += self._warnings()
        return "\n".join(lines)

    def _warnings(self) -> list:
        if not self.has_warnings:
            return []
        share = self.iqr / self.median
        reason = ("This suggests significant environmental influence." if share > _IQR_GROSS_WARN
                  else "This could indicate system fluctuation.")
        return [f"  WARNING: Interquartile range is {share * 100:.1f}% of the median measurement.",
                f"           {reason}"]
