"""``Compare``: Measurements side by side, one table per label, a column per description and a row per
sub-label (grouped by thread count), in one unit, trimmed to the figures the spread supports if asked.

>>> from ember.utils.benchmark.measurement import Measurement, TaskSpec
>>> spec = lambda d: TaskSpec("f()", "pass", label="f", sub_label="n=4", description=d)
>>> table = Compare([Measurement(100, [1.0e-4, 1.1e-4], spec("a")), Measurement(100, [2.0e-4, 2.2e-4], spec("b"))])
>>> print(table)
[--------- f ----------]
           |   a   |   b
1 threads: -------------
      n=4  |  1.1  |  2.1
<BLANKLINE>
Times are in microseconds (us).
<BLANKLINE>
"""
from __future__ import annotations

import enum

from ember.utils.benchmark.measurement import Measurement, select_unit, trim_sigfig, unit_to_english


class Colorize(enum.Enum):
    NONE = "none"
    COLUMNWISE = "columnwise"
    ROWWISE = "rowwise"


_BEST, _WORSE, _TERMINATE = "\033[92m\033[1m", "\033[31m", "\033[0m"


class Compare:
    """A table of ``results`` (Measurements), printed by ``print()`` or ``str()``."""

    def __init__(self, results: list):
        self._results = list(results)
        self._trim = False
        self._colorize = Colorize.NONE
        self._highlight_warnings = False

    def extend_results(self, results: list) -> None:
        for r in results:
            if not isinstance(r, Measurement):
                raise ValueError(f"Compare: expected Measurements, got {type(r).__name__}")
        self._results.extend(results)

    def trim_significant_figures(self) -> None:
        self._trim = True

    def colorize(self, rowwise: bool = False) -> None:
        self._colorize = Colorize.ROWWISE if rowwise else Colorize.COLUMNWISE

    def highlight_warnings(self) -> None:
        self._highlight_warnings = True

    def print(self) -> None:
        print(str(self))

    def __str__(self) -> str:
        merged = Measurement.merge(self._results)
        labels = list(dict.fromkeys(m.task_spec.label for m in merged))
        return "\n".join(self._table([m for m in merged if m.task_spec.label == label], label) for label in labels)

    def _table(self, results: list, label) -> str:
        unit, scale = select_unit(min(m.median for m in results))
        columns = list(dict.fromkeys(m.task_spec.description for m in results))
        cells = {(m.task_spec.num_threads, m.task_spec.sub_label, m.task_spec.description): m for m in results}
        header = ["", *[c or "" for c in columns]]
        body = []
        for threads in sorted(dict.fromkeys(m.task_spec.num_threads for m in results)):
            body.append(f"{threads} threads: ")
            for row in dict.fromkeys(m.task_spec.sub_label for m in results if m.task_spec.num_threads == threads):
                values = [cells.get((threads, row, c)) for c in columns]
                body.append([row or "", *self._cells(values, scale)])
        widths = [max(len(r[i]) for r in [header] + [b for b in body if isinstance(b, list)]) for i in range(len(header))]
        lines = [self._line(header, widths)]
        for item in body:
            lines.append(item + "-" * max(2, len(lines[0]) - len(item)) if isinstance(item, str)
                         else self._line(item, widths))
        title = f" {label} " if label else " "
        rule = len(lines[0])
        dashes = max(rule - len(title) - 2, 2)
        top = "[" + "-" * (dashes // 2) + title + "-" * (dashes - dashes // 2) + "]"
        return "\n".join([top, *lines, "", f"Times are in {unit_to_english(unit)}s ({unit}).", ""])

    def _cells(self, values: list, scale: float) -> list:
        shown = []
        medians = [v.median for v in values if v is not None]
        for v in values:
            if v is None:
                shown.append("")
                continue
            number = v.median / scale
            text = f"{trim_sigfig(number, v.significant_figures) if self._trim else number:.1f}"
            if self._highlight_warnings and v.has_warnings:
                text += " (! {:.0f}%)".format(v.iqr / v.median * 100)
            if self._colorize is not Colorize.NONE and len(medians) > 1:
                if v.median == min(medians):
                    text = _BEST + text + _TERMINATE
                elif v.median > 1.1 * min(medians):
                    text = _WORSE + text + _TERMINATE
            shown.append(text)
        return shown

    @staticmethod
    def _line(cells: list, widths: list) -> str:
        first = cells[0].rjust(widths[0] + 6)
        return "  |  ".join([first, *[c.center(w) for c, w in zip(cells[1:], widths[1:])]]).rstrip()
