"""Python bytecodes and calls that one workload executes in ember: a cost map that does not depend on machine load.

Timings on a shared machine move by tens of percent between runs; the number of
bytecodes a call executes does not. This counts them (with ``sys.settrace`` and
opcode events) for the workloads of bench_autograd, per function, so a change to
the hot path can be judged exactly, and the functions that cost most are named.
It does not count NumPy's own work (a C call is one bytecode here).

    python bench/bench_bytecodes.py          # totals for each workload
    python bench/bench_bytecodes.py b        # workload (b), function by function
    python bench/bench_bytecodes.py "x[:, 1:3]" "xg.sum().backward()"   # any calls, on 4x4 tensors
"""
from __future__ import annotations

import collections
import sys

from bench_autograd import _mul_constant


def _workloads() -> dict:
    import ember

    x = ember.randn(16, requires_grad=True)
    g = ember.ones(16)
    plain = ember.randn(16)
    y = x * 2.0
    mul_constant = _mul_constant(ember)  # the seeds' MulConstant, as (a) times it
    return {
        "a": ("custom Function apply + backward", lambda: mul_constant.apply(x, 2.0).backward(g)),
        "b": ("built-in op forward + backward", lambda: (x * 2.0).backward(g)),
        "forward": ("`x * 2.0`, recorded", lambda: x * 2.0),
        "unrecorded": ("`plain * 2.0`, nothing to record", lambda: plain * 2.0),
        "backward": ("`y.backward(g)` of a one-node graph", lambda: y.backward(g, retain_graph=True)),
    }


_WORKLOAD_KEYS = ("a", "b", "forward", "unrecorded", "backward")


def count(workload) -> tuple[collections.Counter, collections.Counter]:
    """Bytecodes and calls per function ("file:function") during one call of ``workload``."""
    for _ in range(3):  # warm caches (and the specialising interpreter) first
        workload()
    opcodes: collections.Counter = collections.Counter()
    calls: collections.Counter = collections.Counter()
    this_file = __file__

    def tracer(frame, event, arg):
        code = frame.f_code
        if code.co_filename == this_file:
            return tracer  # the lambda that runs the workload is not ember's
        frame.f_trace_opcodes = True
        where = f"{code.co_filename.rsplit('/src/', 1)[-1]}:{code.co_name}"
        if event == "call":
            calls[where] += 1
        elif event == "opcode":
            opcodes[where] += 1
        return tracer

    sys.settrace(tracer)
    try:
        workload()
    finally:
        sys.settrace(None)
    return opcodes, calls


def run() -> dict:
    return {key: count(fn) for key, (_, fn) in _workloads().items()}


def report(results: dict) -> str:
    names = {key: label for key, (label, _) in _workloads().items()}
    lines = ["| workload | bytecodes | Python calls |", "|---|---|---|"]
    for key, (opcodes, calls) in results.items():
        lines.append(f"| ({key}) {names[key]} | {sum(opcodes.values())} | {sum(calls.values())} |")
    return "\n".join(lines)


def expressions(texts: list) -> str:
    """Totals for calls written as Python expressions of ``x``, ``w`` (4x4), ``m`` (4x1) and ``xg`` (4x4, requires
    grad), as bench/RESULTS.md lists them."""
    import ember

    names = {"ember": ember, "x": ember.randn(4, 4), "w": ember.randn(4, 4), "m": ember.randn(4, 1),
             "xg": ember.randn(4, 4, requires_grad=True)}
    lines = ["| call | bytecodes | Python calls |", "|---|---|---|"]
    for text in texts:
        opcodes, calls = count(eval("lambda: " + text, names))
        lines.append(f"| `{text}` | {sum(opcodes.values())} | {sum(calls.values())} |")
    return "\n".join(lines)


def detail(key: str) -> str:
    opcodes, calls = count(_workloads()[key][1])
    lines = [f"{sum(opcodes.values())} bytecodes in {sum(calls.values())} calls", "",
             "| bytecodes | calls | function |", "|---|---|---|"]
    lines += [f"| {n} | {calls[where]} | {where} |" for where, n in opcodes.most_common()]
    return "\n".join(lines)


if __name__ == "__main__":
    if len(sys.argv) == 1:
        print(report(run()))
    elif len(sys.argv) == 2 and sys.argv[1] in _WORKLOAD_KEYS:
        print(detail(sys.argv[1]))
    else:
        print(expressions(sys.argv[1:]))
