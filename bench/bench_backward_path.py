"""The recording and backward path, A/B: this tree against another (``--before SRC``), on the loss path and
on a small MLP's training step.

Each workload is timed in a fresh interpreter per tree, the two trees alternating for ``--rounds`` rounds, so
that a shared machine's load falls on both alike. A round's time is the best of 9 repeats (the one least
disturbed by other jobs); a ratio is the median of the per-round ratios. The Python
bytecodes each workload executes in ember (``bench_bytecodes.count``) are printed too: they do not move with
the load, so they judge a change of the hot path exactly.

Run: ``git archive REV src | tar -x -C /tmp/before`` and then
``PYTHONPATH=src python bench/bench_backward_path.py --before /tmp/before/src``.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

BENCH = os.path.dirname(os.path.abspath(__file__))
HERE_SRC = os.path.join(os.path.dirname(BENCH), "src")

_CHILD = """
import json, os, sys, time
os.environ["OPENBLAS_NUM_THREADS"] = "1"
sys.path[:0] = [{src!r}, {bench!r}]
import ember, bench_mlp
from bench_bytecodes import count

x = ember.randn(4, 4, requires_grad=True)
w = ember.randn(4, 4, requires_grad=True)
m = ember.randn(4, 1, requires_grad=True)
work = {{
    "x.sum().backward()": (lambda: x.sum().backward(), 2000),
    "x.sin().sum().backward()": (lambda: x.sin().sum().backward(), 2000),
    "(x * w).sum().backward()": (lambda: (x * w).sum().backward(), 2000),
    "(x + m).sum().backward()": (lambda: (x + m).sum().backward(), 2000),
    "x.clamp(-0.5, 0.5).sum().backward()": (lambda: x.clamp(-0.5, 0.5).sum().backward(), 2000),
    "MLP 64-128-128-10 step, batch 64": (bench_mlp._framework_step(ember, (64, 128, 128, 10), 64), 100),
}}
out = {{}}
for name, (f, n) in work.items():
    ops, _ = count(f)
    times = []
    for _ in range(9):
        start = time.process_time()
        for _ in range(n):
            f()
        times.append((time.process_time() - start) / n * 1e6)
    out[name] = (min(times), sum(ops.values()))
print(json.dumps(out))
"""


def _run(src: str) -> dict:
    program = _CHILD.format(src=src, bench=BENCH)
    return json.loads(subprocess.run([sys.executable, "-c", program], check=True, capture_output=True,
                                     text=True).stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="the src folder of the tree to compare with")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    rounds = [(_run(args.before), _run(HERE_SRC)) for _ in range(args.rounds)]
    print("| workload | before µs | after µs | after / before | bytecodes before | bytecodes after |")
    print("|---|---|---|---|---|---|")
    for name in rounds[0][0]:
        before = statistics.median(b[name][0] for b, _ in rounds)
        after = statistics.median(a[name][0] for _, a in rounds)
        ratio = statistics.median(a[name][0] / b[name][0] for b, a in rounds)
        print(f"| `{name}` | {before:.2f} | {after:.2f} | {ratio:.3f} | {rounds[0][0][name][1]} | "
              f"{rounds[0][1][name][1]} |")


if __name__ == "__main__":
    main()
