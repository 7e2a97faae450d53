"""What ember.profiler costs with the profiler off, and on.

Off, ``Function.apply`` checks one global (``ember.autograd.function._interceptor``) before anything else. The
A/B: the same two calls timed in this tree and in a tree without that check (``--base SRC``, e.g. the
``src`` of the commit before the profiler, made with ``git archive``), each in its own interpreter,
alternating, median of the repeats, CPU time (``time.process_time``):

- ``x * 2`` on a 16-element float32 tensor that requires grad (a recorded op);
- a user's ``Function`` (``Square.apply(x)``) on the same tensor.

On: the same calls inside ``ember.profiler.profile()``, as a ratio to off.

Run ``python bench/bench_profiler.py --base /tmp/ember_base/src`` (without ``--base``: only the on/off figures).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import timeit

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(os.path.dirname(HERE), "src")
NUMBER = 20_000


def _calls():
    import ember

    class Square(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 2 * x * grad

    x = ember.ones(16, requires_grad=True)
    return {"x * 2": lambda: x * 2, "custom Function": lambda: Square.apply(x)}


def _us(fn) -> float:
    return min(timeit.repeat(fn, number=NUMBER, repeat=3, timer=time.process_time)) / NUMBER * 1e6


def measure(profiled: bool = False) -> dict:
    """µs per call of each case, in this interpreter (optionally under the profiler)."""
    calls = _calls()
    if not profiled:
        return {name: _us(fn) for name, fn in calls.items()}
    import ember

    figures = {}
    for name, fn in calls.items():
        with ember.profiler.profile():
            figures[name] = _us(fn)
    return figures


def _in_tree(src: str, profiled: bool = False) -> dict:
    code = f"import sys; sys.path.insert(0, {HERE!r}); import json, bench_profiler; " \
           f"print(json.dumps(bench_profiler.measure({profiled})))"
    out = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": src},
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def run(base: str | None, repeats: int = 7) -> dict:
    rows: dict = {}
    for _ in range(repeats):
        trees = [("this", SRC, False), ("on", SRC, True)] + ([("base", base, False)] if base else [])
        for label, src, profiled in trees:
            for name, us in _in_tree(src, profiled).items():
                rows.setdefault(name, {}).setdefault(label, []).append(us)
    return {name: {label: statistics.median(values) for label, values in by.items()} for name, by in rows.items()}


_recorder = None  # as ember.autograd.function._interceptor when no profile is active


def _with_check(cls):
    if _recorder is not None and _recorder.takes(cls):
        return 1
    return 0


def _without_check(cls):
    return 0


def check_alone_ns(repeats: int = 21) -> float:
    """The check by itself: a function with it against the same function without, median difference, ns."""
    differences = [(_us(lambda: _with_check(int)) - _us(lambda: _without_check(int))) * 1e3 for _ in range(repeats)]
    return statistics.median(differences)


def report(figures: dict) -> str:
    lines = ["| call | no check (base), µs | profiler off, µs | off / base | profiler on, µs | on / off |",
             "|---|---|---|---|---|---|"]
    for name, f in figures.items():
        base = f.get("base")
        lines.append(f"| {name} | {base:.3f} | {f['this']:.3f} | {f['this'] / base:.3f} | {f['on']:.3f} | "
                     f"{f['on'] / f['this']:.1f} |" if base else
                     f"| {name} | - | {f['this']:.3f} | - | {f['on']:.3f} | {f['on'] / f['this']:.1f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base", help="the src directory of a tree without the profiler's check")
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    print(report(run(args.base, args.repeats)))
    print(f"\nThe check alone: {check_alone_ns():.1f} ns per call")


if __name__ == "__main__":
    main()
