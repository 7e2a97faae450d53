"""Cross-entropy of class indices, forward and backward, in ember against torch 2.13.

The workload is ``F.cross_entropy(logits, target).backward()`` for a batch of 64 rows of 10 classes (float32),
timed in interleaved repeats of a timeit loop; ember's ratio to torch is the median of the per-repeat ratios.
Also timed: the same loss composed of ``log_softmax`` and ``nll_loss`` in ember, the path the fused op replaces.

Run: ``PYTHONPATH=src python bench/bench_losses.py``.
"""
from __future__ import annotations

import statistics
import timeit

import numpy as np

BATCH, CLASSES, NUMBER, REPEATS = 64, 10, 500, 7


def _workload(lib, composed: bool = False):
    rng = np.random.default_rng(0)
    logits = lib.tensor(rng.standard_normal((BATCH, CLASSES)).astype(np.float32), requires_grad=True)
    target = lib.tensor(rng.integers(0, CLASSES, BATCH))
    functional = lib.nn.functional

    def fused():
        functional.cross_entropy(logits, target).backward()

    def two_ops():
        functional.nll_loss(functional.log_softmax(logits, 1), target).backward()

    return two_ops if composed else fused


def main() -> None:
    import torch

    import ember

    torch.set_num_threads(1)  # one thread, as ember: the comparison is of the per-call work, not of the cores
    programs = {"torch": _workload(torch), "ember": _workload(ember), "ember composed": _workload(ember, True)}
    times = {name: [] for name in programs}
    for _ in range(REPEATS):
        for name, program in programs.items():
            times[name].append(timeit.timeit(program, number=NUMBER) / NUMBER * 1e6)
    for name, samples in times.items():
        ratio = statistics.median(e / t for e, t in zip(samples, times["torch"]))
        print(f"{name:15s} {statistics.median(samples):7.1f} us   ratio to torch {ratio:.2f}")


if __name__ == "__main__":
    main()
