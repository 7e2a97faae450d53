"""Per-op and per-Function overhead of ember against torch 2.13 and hand-written NumPy.

Three workloads, each timed in several interleaved repeats of a timeit loop (ember's ratio to torch is
the median of the per-repeat ratios):
(a) a custom Function (the seeds' MulConstant): apply plus backward on 16 elements;
(b) a built-in op (mul by a constant): forward plus backward on 16 elements;
(c) backward through a chain of 1,000 multiplications (the forward is built outside the timing);
(c') the same chain of additions, whose backward does no arithmetic: it isolates the engine's own cost.
"""
from __future__ import annotations

import statistics
import timeit

import numpy as np


def _median_us(fn, number: int, repeats: int) -> float:
    return statistics.median(timeit.repeat(fn, number=number, repeat=repeats)) / number * 1e6


def _mul_constant(lib):
    class MulConstant(lib.autograd.Function):
        @staticmethod
        def forward(ctx, tensor, constant):
            ctx.constant = constant
            return tensor * constant

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output * ctx.constant, None

    return MulConstant


def _workloads(lib):
    x = lib.randn(16, requires_grad=True)
    g = lib.ones(16)
    mul_constant = _mul_constant(lib)

    def custom_function():
        mul_constant.apply(x, 2.0).backward(g)

    def builtin_op():
        (x * 2.0).backward(g)

    def chain_backward(step):
        def timed():
            y = x
            for _ in range(1000):
                y = step(y)
            start = timeit.default_timer()
            y.backward(g)
            return timeit.default_timer() - start

        return timed

    return custom_function, builtin_op, chain_backward(lambda y: y * 1.0001), chain_backward(lambda y: y + 1.0)


def _numpy_workloads():
    x = np.random.randn(16).astype(np.float32)
    g = np.ones(16, np.float32)

    def custom_function():  # the arithmetic itself, with no autograd at all
        y = x * 2.0
        return g * 2.0, y

    def chain_backward():
        grad = g
        start = timeit.default_timer()
        for _ in range(1000):
            grad = grad * 1.0001
        return timeit.default_timer() - start

    def chain_add_backward():  # the gradient of an addition is passed on unchanged: no arithmetic
        grad = g
        start = timeit.default_timer()
        for _ in range(1000):
            grad = grad
        return timeit.default_timer() - start

    return custom_function, custom_function, chain_backward, chain_add_backward


def _chain_us(chain_backward, repeats: int) -> float:
    return statistics.median(chain_backward() for _ in range(repeats)) * 1e6


def run(repeats: int = 21) -> dict:
    """Median times per library, and ember's ratio to torch: the median of the ratios of each repeat.

    Each repeat times every workload of every library once, back to back, so a
    ratio compares two measurements taken moments apart; its median over the
    repeats shrugs off bursts of load that a ratio of medians would not. The
    quartiles of those ratios are kept too ("ratio_spread"), to show how noisy the run was.
    """
    import ember
    import torch

    samples = {}
    workloads = {"ember": _workloads(ember), "torch": _workloads(torch), "numpy": _numpy_workloads()}
    for _ in range(repeats):  # interleaved, so that load on a shared machine hits all three alike
        for name, (a, b, c, c_add) in workloads.items():
            row = samples.setdefault(name, {key: [] for key in ROWS})
            row["a_custom_function_us"].append(_median_us(a, 1000, 1))
            row["b_builtin_op_us"].append(_median_us(b, 1000, 1))
            row["c_chain_backward_us"].append(_chain_us(c, 1))
            row["c_chain_add_backward_us"].append(_chain_us(c_add, 1))
    results = {name: {key: statistics.median(v) for key, v in row.items()} for name, row in samples.items()}
    ratios = {key: [e / t for e, t in zip(samples["ember"][key], samples["torch"][key])] for key in ROWS}
    results["ratio"] = {key: statistics.median(r) for key, r in ratios.items()}
    results["ratio_spread"] = {key: tuple(statistics.quantiles(r, n=4)[::2]) for key, r in ratios.items()}
    return results


TARGETS = {"a_custom_function_us": 0.25, "b_builtin_op_us": 0.25, "c_chain_backward_us": 0.5,
           "c_chain_add_backward_us": None}
ROWS = tuple(TARGETS)


def report(results: dict) -> str:
    lines = ["| workload | ember µs | torch µs | NumPy µs | ember / torch | quartiles of the ratio | target "
             "| ember / NumPy |",
             "|---|---|---|---|---|---|---|---|"]
    for key, target in TARGETS.items():
        e, t, n = results["ember"][key], results["torch"][key], results["numpy"][key]
        ratio, (low, high) = results["ratio"][key], results["ratio_spread"][key]
        goal = "-" if target is None else f"≤ {target} ({'met' if ratio <= target else 'MISSED'})"
        lines.append(f"| {key} | {e:.2f} | {t:.2f} | {n:.2f} | {ratio:.3f} | {low:.3f}-{high:.3f} | {goal} "
                     f"| {e / max(n, 1e-9):.1f} |")
    return "\n".join(lines)


def _best_us(statement: str, names: dict, number: int = 50000) -> float:
    return min(timeit.repeat(statement, globals=names, number=number, repeat=7)) / number * 1e6


def breakdown() -> str:
    """Where (b)'s time goes: a recorded op, an unrecorded one, and backward() of a one-node graph."""
    import ember
    import torch

    rows = {"`x * 2.0`, recorded (x requires grad)": "x * 2.0", "`x * 2.0`, nothing to record": "plain * 2.0",
            "`y.backward(g)` of that one-node graph": "y.backward(g, True)"}
    times = {}
    for lib in (ember, torch):
        x = lib.randn(16, requires_grad=True)
        names = {"x": x, "plain": lib.randn(16), "g": lib.ones(16), "y": x * 2.0}
        times[lib.__name__] = {row: _best_us(statement, names) for row, statement in rows.items()}
    array = np.random.randn(16).astype(np.float32)
    lines = ["| | ember µs | torch µs |", "|---|---|---|"]
    lines += [f"| {row} | {times['ember'][row]:.2f} | {times['torch'][row]:.2f} |" for row in rows]
    lines.append(f"| NumPy's own `a * 2.0` | {_best_us('a * 2.0', {'a': array}):.2f} | |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(report(run()))
    print(breakdown())
