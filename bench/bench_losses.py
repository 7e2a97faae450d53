"""Cross-entropy of class indices, forward and backward, in ember against torch 2.13.

The workload is ``F.cross_entropy(logits, target).backward()`` for a batch of 64 rows of 10 classes (float32),
timed in interleaved repeats of a loop in CPU time; ember's ratio to torch is the median of the per-repeat ratios.
Also timed: the same loss composed of ``log_softmax`` and ``nll_loss`` in ember, the path the fused op replaces.

Run: ``PYTHONPATH=src python bench/bench_losses.py``.
"""
from __future__ import annotations

import numpy as np
from _timing import compare

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
    r = compare(programs, REPEATS, NUMBER)
    print("| program | µs per call | ratio to torch |\n|---|---|---|")
    for name in programs:
        ratio = 1.0 if name == "torch" else r[f"{name}/torch"]
        print(f"| {name} | {r[f'{name}_ms'] * 1e3:.1f} | {ratio:.2f} |")


if __name__ == "__main__":
    main()
