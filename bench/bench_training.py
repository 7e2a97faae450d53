"""One training step of a small model, ember against torch 2.13: how the per-op costs add up in practice.

The model is an MLP (Linear, ReLU, Linear, Tanh, Linear) with an MSE loss and SGD with
momentum; a step is ``zero_grad``, forward, ``backward`` and ``step``. Each repeat times
both libraries back to back, and the ratio is the median of the per-repeat ratios.

Run ``python bench/bench_training.py``; ``run()`` returns the figures.
"""
from __future__ import annotations

import statistics
import timeit

SIZES = ((16, 8), (64, 32), (256, 128))  # (width, batch)


def _step(lib, width: int, batch: int):
    lib.manual_seed(0)
    nn = lib.nn
    model = nn.Sequential(nn.Linear(width, width), nn.ReLU(), nn.Linear(width, width), nn.Tanh(), nn.Linear(width, 1))
    optimizer = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x, y = lib.randn(batch, width), lib.randn(batch, 1)
    loss_fn = nn.MSELoss()

    def step():
        optimizer.zero_grad()
        loss_fn(model(x), y).backward()
        optimizer.step()

    return step


def run(repeats: int = 11, number: int = 100) -> dict:
    """Median µs per step for each library and size, and ember's ratio to torch."""
    import ember
    import torch

    results = {}
    for width, batch in SIZES:
        steps = {lib.__name__: _step(lib, width, batch) for lib in (ember, torch)}
        times = {name: [] for name in steps}
        for _ in range(repeats):
            for name, step in steps.items():
                times[name].append(timeit.timeit(step, number=number) / number * 1e6)
        ratios = [e / t for e, t in zip(times["ember"], times["torch"])]
        results[(width, batch)] = {"ember_us": statistics.median(times["ember"]),
                                   "torch_us": statistics.median(times["torch"]), "ratio": statistics.median(ratios)}
    return results


def report(results: dict) -> str:
    lines = ["| width, batch | ember µs | torch µs | ember / torch |", "|---|---|---|---|"]
    for (width, batch), r in results.items():
        lines.append(f"| {width}, {batch} | {r['ember_us']:.0f} | {r['torch_us']:.0f} | {r['ratio']:.2f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(report(run()))
