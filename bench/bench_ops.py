"""Everyday ops, ember against torch 2.13, one row per op: forward plus backward, and forward alone.

Workload (b) of bench_autograd times one op, a multiplication by a number. This
panel times the ops a model is made of, so that no op's overhead hides behind
(b)'s figure: products, sums, activations, reductions to a scalar loss (with
``backward()`` creating the gradient), views, and a matrix-vector product. A second panel
times ops alone on tensors that need no gradient (inference, optimizer updates): there the
whole cost is each op's own overhead, where torch's C++ dispatch is hard to beat.
Each repeat times both libraries back to back; the ratio is the median of the per-repeat ratios.

    python bench/bench_ops.py
"""
from __future__ import annotations

import statistics
import timeit


def _panel(lib) -> dict:
    x = lib.randn(16, requires_grad=True)
    w = lib.randn(16, requires_grad=True)
    m = lib.randn(4, 16, requires_grad=True)
    c = lib.randn(16)
    g = lib.ones(16)
    g4 = lib.ones(4)
    g44 = lib.ones(4, 4)
    return {
        "`x * 2.0`": lambda: (x * 2.0).backward(g),
        "`x * c` (c a constant tensor)": lambda: (x * c).backward(g),
        "`x * w`": lambda: (x * w).backward(g),
        "`x + w`": lambda: (x + w).backward(g),
        "`x / w`": lambda: (x / w).backward(g),
        "`x.exp()`": lambda: x.exp().backward(g),
        "`x.tanh()`": lambda: x.tanh().backward(g),
        "`x.sigmoid()`": lambda: x.sigmoid().backward(g),
        "`x.relu()`": lambda: x.relu().backward(g),
        "`x.sum().backward()`": lambda: x.sum().backward(),
        "`x.mean().backward()`": lambda: x.mean().backward(),
        "`x.view(4, 4)`": lambda: x.view(4, 4).backward(g44),
        "`m @ x`": lambda: (m @ x).backward(g4),
    }


def _forward_panel(lib) -> dict:
    """Ops on 4x4 tensors that require no grad: nothing is recorded, so this is each op's own overhead."""
    x = lib.randn(4, 4)
    w = lib.randn(4, 4)
    m = lib.randn(4, 1)
    return {
        "`x + w`": lambda: x + w,
        "`x * 2.0`": lambda: x * 2.0,
        "`x / w`": lambda: x / w,
        "`x + m` (broadcast)": lambda: x + m,
        "`x @ w`": lambda: x @ w,
        "`x.exp()`": lambda: x.exp(),
        "`x.sigmoid()`": lambda: x.sigmoid(),
        "`x.relu()`": lambda: x.relu(),
        "`x.sum()`": lambda: x.sum(),
        "`x.mean(0)`": lambda: x.mean(0),
        "`x.view(16)`": lambda: x.view(16),
        "`x.t()`": lambda: x.t(),
        "`x.permute(1, 0)`": lambda: x.permute(1, 0),
        "`m.expand(4, 4)`": lambda: m.expand(4, 4),
        "`x[1]`": lambda: x[1],
        "`x[:, 1:3]`": lambda: x[:, 1:3],
        "`x > w`": lambda: x > w,
        "`x.add_(w)`": lambda: x.add_(w),
        "`x.zero_()`": lambda: x.zero_(),
        "`x.copy_(w)`": lambda: x.copy_(w),
        "`x.clone()`": lambda: x.clone(),
        "`zeros(4, 4)`": lambda: lib.zeros(4, 4),
        "`tensor([1., 2., 3.])`": lambda: lib.tensor([1.0, 2.0, 3.0]),
    }


def run(repeats: int = 11, number: int = 500, forward_only: bool = False) -> dict:
    """Per op: ember's and torch's median µs, and the median and quartiles of the per-repeat ratios."""
    import ember
    import torch

    make = _forward_panel if forward_only else _panel
    panels = {"ember": make(ember), "torch": make(torch)}
    samples = {name: {op: [] for op in panels["ember"]} for name in panels}
    for _ in range(repeats):
        for op in panels["ember"]:
            for name, panel in panels.items():
                samples[name][op].append(min(timeit.repeat(panel[op], number=number, repeat=1)) / number * 1e6)
    results = {}
    for op in panels["ember"]:
        ratios = [e / t for e, t in zip(samples["ember"][op], samples["torch"][op])]
        results[op] = {"ember_us": statistics.median(samples["ember"][op]),
                       "torch_us": statistics.median(samples["torch"][op]),
                       "ratio": statistics.median(ratios),
                       "spread": tuple(statistics.quantiles(ratios, n=4)[::2])}
    return results


def report(results: dict, what: str = "op, forward + backward") -> str:
    lines = [f"| {what} | ember µs | torch µs | ember / torch | quartiles of the ratio |",
             "|---|---|---|---|---|"]
    for op, r in results.items():
        low, high = r["spread"]
        lines.append(f"| {op} | {r['ember_us']:.2f} | {r['torch_us']:.2f} | {r['ratio']:.3f} | {low:.3f}-{high:.3f} |")
    ratios = [r["ratio"] for r in results.values()]
    lines.append(f"| median over the ops | | | {statistics.median(ratios):.3f} | |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(report(run()))
    print()
    print(report(run(forward_only=True), "op, forward only (nothing recorded)"))
