"""Calls written as Python expressions, timed on two source trees in one run: this one and an earlier one.

Each round times every expression in a fresh interpreter per tree, the trees alternating, so both see the same
load on a shared host; a figure is the median over the rounds of each run's best time (CPU time of the process,
one BLAS thread). The names are 4x4 float32 tensors: ``x`` (requires grad), ``w``, ``m`` (4x1, requires grad),
``index`` (an int64 4x2 index along dim 1) and ``mask`` (x > 0), as ``bench_panel`` has them.

    python bench/bench_calls_ab.py --before /path/to/earlier/src --rounds 3 "x.sum().backward()" "x.mean(1)"
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

_TIMER = r"""
import sys, time, timeit
import numpy as np
import ember
rng = np.random.default_rng(0)
x = ember.tensor(rng.standard_normal((4, 4)).astype(np.float32), requires_grad=True)
w = ember.tensor(rng.standard_normal((4, 4)).astype(np.float32))
m = ember.tensor(rng.standard_normal((4, 1)).astype(np.float32), requires_grad=True)
index = ember.tensor([[0, 1], [2, 3], [1, 0], [3, 2]])
mask = x.detach() > 0
times = []
for text in sys.argv[1:]:
    call = eval("lambda: " + text)
    for _ in range(200):  # warm: remembered checks, caches, the specialising interpreter
        call()
    times.append(min(timeit.repeat(call, number=5000, repeat=5, timer=time.process_time)) / 5000 * 1e6)
print(" ".join(f"{t:.4f}" for t in times))
"""


def _times(src: str, expressions: list) -> list:
    env = dict(os.environ, PYTHONPATH=src, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    done = subprocess.run([sys.executable, "-c", _TIMER, *expressions], env=env, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"timing on {src} failed:\n{done.stderr}")
    return [float(t) for t in done.stdout.split()]


def run(before: str, expressions: list, rounds: int) -> list:
    """Per expression: (median µs before, median µs now)."""
    now_src = os.path.join(os.path.dirname(HERE), "src")
    runs = {"before": [], "now": []}
    for _ in range(rounds):
        runs["before"].append(_times(before, expressions))
        runs["now"].append(_times(now_src, expressions))
    return [(statistics.median(r[i] for r in runs["before"]), statistics.median(r[i] for r in runs["now"]))
            for i in range(len(expressions))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="the earlier tree's src directory")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("expressions", nargs="+")
    args = parser.parse_args()
    print("| call | before (µs) | now (µs) | now / before |\n|---|---|---|---|")
    for text, (before, now) in zip(args.expressions, run(args.before, args.expressions, args.rounds)):
        print(f"| `{text}` | {before:.2f} | {now:.2f} | {now / before:.2f} |")


if __name__ == "__main__":
    main()
