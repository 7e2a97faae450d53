"""The training-step targets of nn on two source trees in one run: this one and an earlier one.

Each round runs ``bench_mlp``, ``bench_cnn`` and ``bench_sequence`` (their ``run()``: ember against torch
2.13 and hand-written NumPy, interleaved repeats, CPU time, one BLAS thread everywhere) in a fresh
interpreter per tree, the trees alternating; a figure is the median over the rounds of each run's ratio.
Ratios are taken within one run, so both trees see the same load on a shared host.

Run: ``python bench/bench_steps_ab.py --before /path/to/earlier/src [--rounds 3]``.
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

_RUN = """
import json, bench_cnn, bench_mlp, bench_sequence
mlp, seq = bench_mlp.run(), bench_sequence.run()
print(json.dumps({"mlp": mlp, "cnn": bench_cnn.run(), "seq": seq}))
"""

# (row, goal, limit, how to read the ratio from one run's results)
TARGETS = [
    ("MLP 64-128-128-10, batch 64 / torch", "≤ 0.6", 0.6, lambda r: r["mlp"]["small"]["to_torch"]),
    ("MLP 64-128-128-10, batch 64 / NumPy", "≤ 1.15", 1.15, lambda r: r["mlp"]["small"]["to_numpy"]),
    ("MLP 784-1024-1024-10, batch 256 / NumPy", "≤ 1.05", 1.05, lambda r: r["mlp"]["large"]["to_numpy"]),
    ("LeNet-style CNN, batch 64 / torch", "≤ 1.0", 1.0, lambda r: r["cnn"]["ratio"]),
    ("pre-norm transformer block + Adam / torch", "≤ 1.0", 1.0, lambda r: r["seq"]["transformer block"]["ratio"]),
    ("LSTM(128, 128), sequence 32, batch 16 / torch", "≤ 1.5", 1.5, lambda r: r["seq"]["lstm"]["ratio"]),
]


def one_run(src: str) -> dict:
    """The three benchmarks' results with ``src`` first on the path, in a fresh interpreter."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([src, HERE]), OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    done = subprocess.run([sys.executable, "-c", _RUN], env=env, cwd=HERE, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def compare(before: str, rounds: int) -> dict:
    """Per tree, the list of each round's results (the trees alternate, the earlier one first)."""
    trees = {"before": before, "now": os.path.join(os.path.dirname(HERE), "src")}
    results = {name: [] for name in trees}
    for _ in range(rounds):
        for name, src in trees.items():
            results[name].append(one_run(src))
    return results


def report(results: dict) -> str:
    lines = ["| target | goal | before | now | met now |", "|---|---|---|---|---|"]
    for row, goal, limit, read in TARGETS:
        before, now = (statistics.median(read(r) for r in results[tree]) for tree in ("before", "now"))
        lines.append(f"| {row} | {goal} | {before:.2f} | {now:.2f} | {'yes' if now <= limit else 'no'} |")
    times = ["", "Median ms per step (now): " + ", ".join(
        f"{name} ember {statistics.median(read(r) for r in results['now']):.2f} / torch "
        f"{statistics.median(torch(r) for r in results['now']):.2f}"
        for name, read, torch in [
            ("small MLP", lambda r: r["mlp"]["small"]["ember_ms"], lambda r: r["mlp"]["small"]["torch_ms"]),
            ("large MLP", lambda r: r["mlp"]["large"]["ember_ms"], lambda r: r["mlp"]["large"]["torch_ms"]),
            ("CNN", lambda r: r["cnn"]["ember_ms"], lambda r: r["cnn"]["torch_ms"]),
            ("transformer", lambda r: r["seq"]["transformer block"]["ember_ms"],
             lambda r: r["seq"]["transformer block"]["torch_ms"]),
            ("LSTM", lambda r: r["seq"]["lstm"]["ember_ms"], lambda r: r["seq"]["lstm"]["torch_ms"])])]
    return "\n".join(lines + times)


if __name__ == "__main__":
    if "--before" not in sys.argv:
        sys.exit("usage: python bench/bench_steps_ab.py --before /path/to/earlier/src [--rounds N]")
    rounds = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 3
    print(report(compare(os.path.abspath(sys.argv[sys.argv.index("--before") + 1]), rounds)))
