"""Forward-mode AD: the cost of a dual op against a plain one, ember against torch 2.13, and the A/B cost of
forward mode when no dual level is open.

1. Per op on a 64x64 float64 tensor: the op on a plain tensor and on a dual one (inside a dual level), in
   ember and in torch; ``dual / plain`` is what the tangent costs. ``sin``, ``mul``, ``matmul``, ``softmax``
   and ``sum`` have written ``jvp``s; ``cumprod`` and ``logdet`` get theirs from the transpose of their
   backward (the default of a built-in op without one).
2. A Jacobian of a 8 -> 64 function by forward mode (``jacobian(..., vectorize=True,
   strategy="forward-mode")``) and by reverse mode, ember against torch.
3. With ``--before SRC``: ``x.sin()`` and ``x * 2`` on a 10-element tensor with no dual level open, timed in
   this tree and in the tree at SRC (a checkout without forward mode), alternating, in fresh interpreters.

Times are ``time.process_time`` per call, the median of 7 repeats.

Run: ``PYTHONPATH=src python bench/bench_forward_ad.py [--before /path/to/other/src]``
"""
from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time

import numpy as np
import torch

import ember

torch.set_num_threads(1)
REPEATS = 7


def per_call(f, n: int) -> float:
    """Microseconds per call: the median of REPEATS runs of n calls."""
    f()
    times = []
    for _ in range(REPEATS):
        start = time.process_time()
        for _ in range(n):
            f()
        times.append((time.process_time() - start) / n * 1e6)
    return statistics.median(times)


OPS = {
    "sin": lambda m, x: x.sin(),
    "mul": lambda m, x: x * x,
    "matmul": lambda m, x: x @ x,
    "softmax": lambda m, x: m.softmax(x, 1),
    "sum": lambda m, x: x.sum(0),
    "cumprod (transposed backward)": lambda m, x: x.cumprod(1),
    "logdet (transposed backward)": lambda m, x: m.logdet(x @ x.t() + m.eye(64, dtype=m.float64)),
}


def op_rows() -> list:
    data = np.random.default_rng(0).standard_normal((64, 64))
    tangent = np.random.default_rng(1).standard_normal((64, 64))
    rows = []
    for name, op in OPS.items():
        times = {}
        for lib in (ember, torch):
            x = lib.tensor(data)
            times[lib.__name__, "plain"] = per_call(lambda: op(lib, x), 200)
            with lib.autograd.forward_ad.dual_level():
                d = lib.autograd.forward_ad.make_dual(x, lib.tensor(tangent))
                times[lib.__name__, "dual"] = per_call(lambda: op(lib, d), 200)
        rows.append((name, times))
    return rows


def jacobian_rows() -> list:
    weight = np.random.default_rng(2).standard_normal((64, 8))
    rows = []
    for strategy in ("forward-mode", "reverse-mode"):
        times = {}
        for lib in (ember, torch):
            w, x = lib.tensor(weight), lib.tensor(np.linspace(-1, 1, 8))

            def f(t):
                return (w @ t).tanh() * t.sum()

            times[lib.__name__] = per_call(
                lambda: lib.autograd.functional.jacobian(f, x, vectorize=True, strategy=strategy), 5)
        rows.append((strategy, times))
    return rows


_AB = """
import time, statistics, ember
x = ember.ones(10)
def per_call(f, n=20000):
    times = []
    for _ in range(7):
        start = time.process_time()
        for _ in range(n):
            f()
        times.append((time.process_time() - start) / n * 1e9)
    return statistics.median(times)
print(per_call(lambda: x.sin()), per_call(lambda: x * 2))
"""


def ab_rows(before: str, rounds: int = 5) -> dict:
    """Nanoseconds of x.sin() and x * 2 in each tree: the median over ``rounds`` alternating fresh runs."""
    trees = {"this tree": os.path.abspath("src"), "before": before}
    found = {name: ([], []) for name in trees}
    for _ in range(rounds):
        for name, path in trees.items():
            env = dict(os.environ, PYTHONPATH=path)
            out = subprocess.run([sys.executable, "-c", _AB], env=env, check=True, capture_output=True, text=True)
            sin, mul = map(float, out.stdout.split())
            found[name][0].append(sin)
            found[name][1].append(mul)
    return {name: (statistics.median(s), statistics.median(m)) for name, (s, m) in found.items()}


def main() -> None:
    print("| op (64x64 float64) | ember plain, us | ember dual, us | ember dual / plain | torch dual / plain |"
          " ember dual / torch dual |")
    print("|---|---|---|---|---|---|")
    for name, t in op_rows():
        print(f"| {name} | {t['ember', 'plain']:.1f} | {t['ember', 'dual']:.1f} | "
              f"{t['ember', 'dual'] / t['ember', 'plain']:.1f} | {t['torch', 'dual'] / t['torch', 'plain']:.1f} | "
              f"{t['ember', 'dual'] / t['torch', 'dual']:.2f} |")
    print()
    print("| jacobian of 8 -> 64 (vectorize=True) | ember, ms | torch, ms | ember / torch |")
    print("|---|---|---|---|")
    for strategy, t in jacobian_rows():
        print(f"| {strategy} | {t['ember'] / 1e3:.2f} | {t['torch'] / 1e3:.2f} | {t['ember'] / t['torch']:.2f} |")
    if "--before" in sys.argv:
        before = sys.argv[sys.argv.index("--before") + 1]
        print()
        print("| no dual level open, 10 elements | x.sin(), ns | x * 2, ns |")
        print("|---|---|---|")
        for name, (sin, mul) in ab_rows(before).items():
            print(f"| {name} | {sin:.0f} | {mul:.0f} |")


if __name__ == "__main__":
    main()
