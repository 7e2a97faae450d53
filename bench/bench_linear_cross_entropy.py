"""``F.linear_cross_entropy`` forward and backward, whole and chunked, in ember against torch 2.13 and NumPy.

The workload is a vocabulary-sized output layer: ``linear_cross_entropy(x, W, target).backward()`` with x
``[1024, 64]``, W ``[4096, 64]`` (float32), whole (``options=None``: all logits at once) and in chunks of 128 rows
(``LinearCrossEntropyOptions(batch_chunk_size=128)``), timed in interleaved repeats in CPU time; each ratio is the
median of the per-repeat ratios. The NumPy program is the same loss and gradients written by hand, whole. Also
measured: ember's peak of traced memory (``tracemalloc``, which sees NumPy's buffers) for one step each way.

Run: ``OPENBLAS_NUM_THREADS=1 PYTHONPATH=src python bench/bench_linear_cross_entropy.py``.
"""
from __future__ import annotations

import tracemalloc

import numpy as np
from _timing import compare

ROWS, FEATURES, CLASSES, CHUNK, NUMBER, REPEATS = 1024, 64, 4096, 128, 3, 5


def _arrays():
    rng = np.random.default_rng(0)
    return (rng.standard_normal((ROWS, FEATURES)).astype(np.float32),
            (rng.standard_normal((CLASSES, FEATURES)) / 8).astype(np.float32), rng.integers(0, CLASSES, ROWS))


def _workload(lib, chunked: bool):
    x, w, t = _arrays()
    x, w, t = lib.tensor(x, requires_grad=True), lib.tensor(w, requires_grad=True), lib.tensor(t)
    options = lib.nn.LinearCrossEntropyOptions(batch_chunk_size=CHUNK) if chunked else None

    def step():
        x.grad = w.grad = None
        lib.nn.functional.linear_cross_entropy(x, w, t, options=options).backward()

    return step


def _numpy_workload():
    x, w, t = _arrays()
    rows = np.arange(ROWS)

    def step():
        logits = x @ w.T
        logits -= logits.max(1, keepdims=True)
        probabilities = np.exp(logits)
        probabilities /= probabilities.sum(1, keepdims=True)
        loss = -np.log(probabilities[rows, t]).mean()
        probabilities[rows, t] -= 1
        probabilities /= ROWS
        return loss, probabilities @ w, probabilities.T @ x

    return step


def peak_mb(step) -> float:
    step()
    tracemalloc.start()
    step()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 2 ** 20


def main() -> None:
    import torch

    import ember

    torch.set_num_threads(1)
    programs = {"torch": _workload(torch, False), "torch chunked": _workload(torch, True),
                "ember": _workload(ember, False), "ember chunked": _workload(ember, True), "numpy": _numpy_workload()}
    r = compare(programs, REPEATS, NUMBER)
    print("| program | ms per step | / torch (same path) | / NumPy (whole) |\n|---|---|---|---|")
    for name in programs:
        same = "torch chunked" if "chunked" in name else "torch"
        versus = "1.00" if name == same else f"{r[f'{name}/{same}']:.2f}" if name != "numpy" else "-"
        print(f"| {name} | {r[f'{name}_ms']:.1f} | {versus} | {r.get(f'{name}/numpy', 1.0):.2f} |")
    print(f"\nember's peak traced memory per step: whole {peak_mb(programs['ember']):.1f} MB, chunked "
          f"{peak_mb(programs['ember chunked']):.1f} MB (the logits alone: {ROWS * CLASSES * 4 / 2 ** 20:.1f} MB)")


if __name__ == "__main__":
    main()
