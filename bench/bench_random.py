"""Random sampling, ember against torch 2.13: the samplers that draw torch's numbers (``ember/_streams.py``).

Each row is timed in interleaved repeats (ember, then torch, back to back) in CPU time; the ratio is the
median of the per-repeat ratios. One thread each.

    python bench/bench_random.py
"""
from __future__ import annotations

import os
import statistics
import time
import timeit

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

ROWS = (
    ("rand(1,000,000)", lambda L: L.rand(1_000_000)),
    ("randn(1,000,000)", lambda L: L.randn(1_000_000)),
    ("randn(1,000,000), float64", lambda L: L.randn(1_000_000, dtype=L.float64)),
    ("randn(64, 64)", lambda L: L.randn(64, 64)),
    ("randn(8) (one by one)", lambda L: L.randn(8)),
    ("randint(0, 10, (1,000,000,))", lambda L: L.randint(0, 10, (1_000_000,))),
    ("randperm(60,000)", lambda L: L.randperm(60_000)),
    ("dropout(p=0.1) of [256, 1024]", lambda L: L.nn.functional.dropout(L.ones(256, 1024), 0.1)),
    ("Linear(1024, 1024) made", lambda L: L.nn.Linear(1024, 1024)),
)


def _ms(fn, lib, number: int) -> float:
    return min(timeit.repeat(lambda: fn(lib), number=number, repeat=3, timer=time.process_time)) / number * 1e3


def run(repeats: int = 5, number: int = 5) -> dict:
    import ember
    import torch

    torch.set_num_threads(1)
    results = {}
    for label, fn in ROWS:
        mine, theirs = [], []
        for _ in range(repeats):
            mine.append(_ms(fn, ember, number))
            theirs.append(_ms(fn, torch, number))
        results[label] = (statistics.median(mine), statistics.median(theirs),
                          statistics.median(m / t for m, t in zip(mine, theirs)))
    return results


def report(results: dict) -> str:
    lines = ["| sampler | ember ms | torch ms | ember / torch |", "|---|---|---|---|"]
    lines += [f"| `{label}` | {m:.3f} | {t:.3f} | {r:.2f} |" for label, (m, t, r) in results.items()]
    return "\n".join(lines)


if __name__ == "__main__":
    print(report(run()))
