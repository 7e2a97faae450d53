"""Complex tensors through reductions, scans, indexing and an optimizer step: ember against torch 2.13.

Each op runs on complex64 inputs, forward and backward of a real loss (``real(op(z)).sum()``), on a 4x4 tensor
(where the per-call cost of the library dominates) and on 100,000 elements (where the arithmetic does); plus
one Adam step on a complex parameter. Figures are CPU time (``time.process_time``), the median of interleaved
repeats, as ember/torch ratios from one run.

Run: ``python bench/bench_complex.py``.
"""
from __future__ import annotations

import os
import statistics
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))
import ember  # noqa: E402
from _timing import compare  # noqa: E402

torch.set_num_threads(1)

OPS = {
    "sum": lambda L, z: z.sum(0),
    "mean": lambda L, z: z.mean(),
    "prod": lambda L, z: z.prod(0),
    "cumsum": lambda L, z: z.cumsum(0),
    "cumprod": lambda L, z: z.cumprod(0),
    "var": lambda L, z: z.var(0),
    "logsumexp": lambda L, z: z.logsumexp(0),
    "cat": lambda L, z: L.cat([z, z]),
    "gather": lambda L, z: z.gather(0, L.zeros(z.shape, dtype=L.int64)),
    "x[:, 1:3]": lambda L, z: z[:, 1:3],
    "masked_fill": lambda L, z: z.masked_fill(z.real > 0, 1j),
    "index_select": lambda L, z: z.index_select(0, L.tensor([0, 2])),
}


def _program(L, op, values: np.ndarray):
    z = L.tensor(values, requires_grad=True)

    def step():
        L.real(op(L, z)).sum().backward()
        z.grad = None

    return step


def _adam(L, values: np.ndarray):
    p = L.nn.Parameter(L.tensor(values))
    p.grad = L.tensor(values * 0.5)
    optimizer = L.optim.Adam([p], lr=1e-3)
    return optimizer.step


def run(repeats: int = 7) -> dict:
    rng = np.random.default_rng(0)
    results = {}
    for size, shape, number in (("4x4", (4, 4), 300), ("1e5", (250, 400), 3)):
        values = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64)
        for name, op in OPS.items():
            timed = compare({"ember": _program(ember, op, values), "torch": _program(torch, op, values)},
                            repeats, number)
            results[(name, size)] = timed["ember/torch"]
        timed = compare({"ember": _adam(ember, values), "torch": _adam(torch, values)}, repeats, number)
        results[("Adam step", size)] = timed["ember/torch"]
    return results


def report(results: dict) -> str:
    names = list(dict.fromkeys(name for name, _ in results))
    lines = ["| op (complex64, forward + backward) | 4x4 ember/torch | 1e5 ember/torch |", "|---|---|---|"]
    for name in names:
        lines.append(f"| {name} | {results[(name, '4x4')]:.2f} | {results[(name, '1e5')]:.2f} |")
    for size in ("4x4", "1e5"):
        lines.append(f"\nMedian {size}: {statistics.median(v for (n, s), v in results.items() if s == size):.2f}")
    return "\n".join(lines)


if __name__ == "__main__":
    print(report(run()))
