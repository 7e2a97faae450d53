"""hash_tensor and the wide unsigned dtypes: ember against torch 2.13 and against the same computation written
by hand in NumPy, in one run, as ratios (CPU time, median of interleaved repeats).

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=src python bench/bench_leftovers.py
"""
from __future__ import annotations

import numpy as np
import torch

import ember
from _timing import compare

torch.set_num_threads(1)
_N = 1_000_000


def _rows():
    values = np.random.default_rng(0).standard_normal(_N).astype(np.float32)
    counts = np.random.default_rng(1).integers(0, 60000, _N).astype(np.uint16)
    e, t = ember.from_numpy(values), torch.from_numpy(values)
    eu, tu = ember.from_numpy(counts), torch.from_numpy(counts)
    matrix = values.reshape(1000, 1000)
    em, tm = ember.from_numpy(matrix), torch.from_numpy(matrix)
    yield "hash_tensor 1e6 float32", (lambda: ember.hash_tensor(e), lambda: torch.hash_tensor(t),
                                      lambda: np.bitwise_xor.reduce(values.astype(np.float64).view(np.uint64)))
    yield "hash_tensor 1000x1000, dim=1", (
        lambda: ember.hash_tensor(em, 1), lambda: torch.hash_tensor(tm, 1),
        lambda: np.bitwise_xor.reduce(matrix.astype(np.float64).view(np.uint64), 1))
    yield "uint16 * uint16 1e6", (lambda: eu * eu, lambda: tu * tu, lambda: counts * counts)
    yield "uint16 == uint16 1e6", (lambda: eu == eu, lambda: tu == tu, lambda: counts == counts)
    yield "uint16 sum 1e6 (int64)", (lambda: eu.sum(), lambda: tu.sum(), lambda: counts.sum(dtype=np.int64))


def main() -> None:
    print("| op | ember ms | torch ms | NumPy ms | ember / torch | ember / NumPy |")
    print("|---|---|---|---|---|---|")
    for label, (mine, theirs, by_hand) in _rows():
        r = compare({"ember": mine, "torch": theirs, "numpy": by_hand}, repeats=5, number=5)
        print(f"| {label} | {r['ember_ms']:.3f} | {r['torch_ms']:.3f} | {r['numpy_ms']:.3f} | "
              f"{r['ember/torch']:.2f} | {r['ember/numpy']:.2f} |")


if __name__ == "__main__":
    main()
