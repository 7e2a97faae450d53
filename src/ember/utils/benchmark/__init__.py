"""``ember.utils.benchmark``: time statements the careful way, as ``torch.utils.benchmark`` does.

A :class:`Timer` runs a statement in blocks of many runs and keeps each block's time, so a
:class:`Measurement` reports the median and the spread (interquartile range) instead of one number,
and warns when the spread says the machine was busy. :class:`Compare` lays several out as a table.

>>> import ember
>>> from ember.utils import benchmark
>>> timer = benchmark.Timer("x + x", globals={"x": ember.ones(4)}, label="add", description="ones")
>>> m = timer.blocked_autorange(min_run_time=0.01)
>>> m.median > 0, m.number_per_run >= 1, m.title
(True, True, 'add')
"""
from ember.utils.benchmark.measurement import Measurement, TaskSpec, select_unit, trim_sigfig, unit_to_english
from ember.utils.benchmark.timer import Language, Timer
from ember.utils.benchmark.compare import Colorize, Compare

__all__ = [
    "Colorize", "Compare", "Language", "Measurement", "TaskSpec", "Timer", "select_unit", "trim_sigfig",
    "unit_to_english",
]
