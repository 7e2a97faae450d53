"""Per-op and per-Function overhead of ember against torch 2.13 and hand-written NumPy.

Three workloads, each timed as the median of several repeats of a timeit loop:
(a) a custom Function (the seeds' MulConstant): apply plus backward on 16 elements;
(b) a built-in op (mul by a constant): forward plus backward on 16 elements;
(c) backward through a chain of 1,000 multiplications (the forward is built outside the timing).
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

    def chain():
        y = x
        for _ in range(1000):
            y = y * 1.0001
        return y

    def chain_backward(state={}):
        y = chain()
        start = timeit.default_timer()
        y.backward(g)
        return timeit.default_timer() - start

    return custom_function, builtin_op, chain_backward


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

    return custom_function, custom_function, chain_backward


def _chain_us(chain_backward, repeats: int) -> float:
    return statistics.median(chain_backward() for _ in range(repeats)) * 1e6


def run(repeats: int = 7) -> dict:
    import ember
    import torch

    results = {}
    for name, lib in (("ember", ember), ("torch", torch)):
        a, b, c = _workloads(lib)
        results[name] = {
            "a_custom_function_us": _median_us(a, 2000, repeats),
            "b_builtin_op_us": _median_us(b, 2000, repeats),
            "c_chain_backward_us": _chain_us(c, repeats),
        }
    a, b, c = _numpy_workloads()
    results["numpy"] = {
        "a_custom_function_us": _median_us(a, 2000, repeats),
        "b_builtin_op_us": _median_us(b, 2000, repeats),
        "c_chain_backward_us": _chain_us(c, repeats),
    }
    return results


TARGETS = {"a_custom_function_us": 0.25, "b_builtin_op_us": 0.25, "c_chain_backward_us": 0.5}


def report(results: dict) -> str:
    lines = ["| workload | ember µs | torch µs | NumPy µs | ember / torch | target | ember / NumPy |",
             "|---|---|---|---|---|---|---|"]
    for key, target in TARGETS.items():
        e, t, n = results["ember"][key], results["torch"][key], results["numpy"][key]
        verdict = "met" if e / t <= target else "MISSED"
        lines.append(f"| {key} | {e:.2f} | {t:.2f} | {n:.2f} | {e / t:.3f} | ≤ {target} ({verdict}) | {e / n:.1f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(report(run()))
