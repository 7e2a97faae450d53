"""Averages of profiler events by name (``key_averages``) and torch's table of them."""
from __future__ import annotations

import json
import os

__all__ = ["EventList", "FunctionEventAvg"]

_SORT_KEYS = ("cpu_time_total", "self_cpu_time_total", "cpu_time", "count", "cpu_memory_usage",
              "self_cpu_memory_usage")


class FunctionEventAvg:
    """The events of one name (and input shapes, or stack, if grouped by them): totals and calls."""

    def __init__(self, key: str, input_shapes: list, stack: list):
        self.key, self.input_shapes, self.stack = key, input_shapes, stack
        self.count = 0
        self.cpu_time_total = self.self_cpu_time_total = 0.0
        self.cpu_memory_usage = self.self_cpu_memory_usage = 0
        self.device_time_total = self.self_device_time_total = 0.0  # there is no device: always 0

    def add(self, event) -> "FunctionEventAvg":
        self.count += event.count
        self.cpu_time_total += event.cpu_time_total
        self.self_cpu_time_total += event.self_cpu_time_total
        self.cpu_memory_usage += event.cpu_memory_usage
        self.self_cpu_memory_usage += event.self_cpu_memory_usage
        return self

    @property
    def cpu_time(self) -> float:
        """The average time of one call, microseconds."""
        return self.cpu_time_total / self.count if self.count else 0.0

    cuda_time_total = self_cuda_time_total = property(lambda self: 0.0)

    def __repr__(self) -> str:
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={_format_time(self.self_cpu_time_total)} "
                f"cpu_time={_format_time(self.cpu_time)} count={self.count} input_shapes={self.input_shapes}>")


class EventList(list):
    """A list of events (or of their averages) that prints as torch's profiler table."""

    def __init__(self, events=(), profile_memory: bool = False):
        super().__init__(events)
        self._profile_memory = profile_memory

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0) -> "EventList":
        """One row per event name (and per input shapes, or per top ``group_by_stack_n`` frames, if asked)."""
        groups: dict = {}
        for event in self:
            name = "ProfilerStep*" if event.key.startswith("ProfilerStep#") else event.key  # steps as one row
            key = (name, str(event.input_shapes) if group_by_input_shape else None,
                   tuple(event.stack[:group_by_stack_n]) if group_by_stack_n else None)
            if key not in groups:
                groups[key] = FunctionEventAvg(name, event.input_shapes if group_by_input_shape else [],
                                               event.stack[:group_by_stack_n] if group_by_stack_n else [])
            groups[key].add(event)
        result = EventList(groups.values(), self._profile_memory)
        result._shapes_column = group_by_input_shape
        result._stack_column = group_by_stack_n > 0
        return result

    def total_average(self) -> FunctionEventAvg:
        total = FunctionEventAvg("Total", [], [])
        for event in self:
            total.add(event)
        return total

    def table(self, sort_by: str | None = None, row_limit: int = 100, max_src_column_width: int = 75,
              max_name_column_width: int = 55, max_shapes_column_width: int = 80, header: str | None = None,
              top_level_events_only: bool = False) -> str:
        """The rows as torch prints them: self and total CPU time, their shares, calls (and memory, shapes)."""
        rows = list(self)
        if sort_by is not None:
            if sort_by not in _SORT_KEYS and not sort_by.startswith(("cuda", "device", "self_cuda", "self_device")):
                raise ValueError(f"table(): cannot sort by {sort_by!r}; use one of {', '.join(_SORT_KEYS)}")
            rows.sort(key=lambda e: getattr(e, sort_by, 0.0), reverse=True)
        return _table(self, rows[:row_limit] if row_limit > 0 else rows, header, max_name_column_width,
                      max_shapes_column_width, max_src_column_width)

    def export_chrome_trace(self, path: str) -> None:
        """Write the events as Chrome's trace format (JSON), which chrome://tracing and Perfetto open."""
        pid = os.getpid()
        trace = [{"ph": "X", "cat": _CATEGORY.get(e.kind, "cpu_op"), "name": e.name, "pid": pid, "tid": e.thread,
                  "ts": e.start_ns / 1e3, "dur": (e.end_ns - e.start_ns) / 1e3,
                  "args": _trace_args(e)} for e in self]
        with open(path, "w") as f:
            json.dump({"traceEvents": trace, "displayTimeUnit": "ms", "schemaVersion": 1}, f, indent=1)


_CATEGORY = {"cpu_op": "cpu_op", "backward": "cpu_op", "user_annotation": "user_annotation"}


def _trace_args(event) -> dict:
    args: dict = {}
    if event.input_shapes:
        args["Input Dims"] = event.input_shapes
    if event.stack:
        args["Call stack"] = ";".join(event.stack)
    if event.memory:
        args["Memory"] = event.memory
    return args


def _format_time(us: float) -> str:
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def _format_memory(nbytes: int) -> str:
    for unit, size in (("GB", 1024 ** 3), ("MB", 1024 ** 2), ("KB", 1024)):
        if abs(nbytes) >= size:
            return f"{nbytes / size:.2f} {unit}"
    return f"{nbytes} B"


def _percent(part: float, whole: float) -> str:
    return f"{part / whole * 100:.2f}%" if whole else "0.00%"


def _table(events: EventList, rows: list, header: str | None, max_name: int, max_shapes: int, max_src: int) -> str:
    total_self = sum(e.self_cpu_time_total for e in events)
    memory = events._profile_memory and any(e.cpu_memory_usage for e in events)
    shapes = getattr(events, "_shapes_column", False)
    stacks = getattr(events, "_stack_column", False)
    name_width = min(max((len(e.key) for e in rows), default=4) + 4, max_name)
    columns = [("Name", name_width)] + [(title, 12) for title in (
        "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg")]
    if memory:
        columns += [("CPU Mem", 12), ("Self CPU Mem", 12)]
    columns.append(("# of Calls", 12))
    if shapes:
        columns.append(("Input Shapes", min(max((len(str(e.input_shapes)) for e in rows), default=0) + 4,
                                            max_shapes)))
    if stacks:
        columns.append(("Source Location", max_src))
    line = "".join("-" * width + "  " for _, width in columns)

    def row(cells: list) -> str:
        return "".join(str(cell).rjust(width) + "  " for cell, (_, width) in zip(cells, columns))

    lines = ([header] if header else []) + [line, row([title for title, _ in columns]), line]
    for e in rows:
        name = e.key if len(e.key) <= max_name else e.key[:max_name - 3] + "..."
        cells = [name, _percent(e.self_cpu_time_total, total_self), _format_time(e.self_cpu_time_total),
                 _percent(e.cpu_time_total, total_self), _format_time(e.cpu_time_total), _format_time(e.cpu_time)]
        if memory:
            cells += [_format_memory(e.cpu_memory_usage), _format_memory(e.self_cpu_memory_usage)]
        cells.append(e.count)
        if shapes:
            cells.append(str(e.input_shapes)[:max_shapes])
        if stacks:
            cells.append((e.stack[0] if e.stack else "")[-max_src:])
        lines.append(row(cells))
    lines += [line, f"Self CPU time total: {_format_time(total_self)}", ""]
    return "\n".join(lines)
