"""bfloat16 against torch and against float32 in ember: what the dtype costs on NumPy through ml_dtypes.

Each row times one op on bfloat16 in ember and torch, and in ember's float32 (ml_dtypes' ufuncs widen to
single and round back on each call, so bfloat16 is slower than float32 on NumPy, where torch's kernels
gain from the smaller type). CPU time, median of interleaved repeats (``_timing.compare``).

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=src python bench/bench_bfloat16.py
"""
from __future__ import annotations

import numpy as np
import torch

import ember
from _timing import compare

torch.set_num_threads(1)


def _cases(lib, dtype):
    rng = np.random.default_rng(0)
    big = lib.tensor(rng.standard_normal(1_000_000).astype(np.float32)).to(dtype)
    square = lib.tensor(rng.standard_normal((256, 256)).astype(np.float32)).to(dtype)
    rows = lib.tensor(rng.standard_normal((512, 1000)).astype(np.float32)).to(dtype)
    return {
        "add 1e6": lambda: big + big, "mul by 0.5 1e6": lambda: big * 0.5, "exp 1e6": lambda: big.exp(),
        "sum 1e6": lambda: big.sum(), "matmul 256": lambda: square @ square,
        "softmax 512x1000": lambda: lib.softmax(rows, 1),
    }


def main() -> None:
    ours, ours32, theirs = _cases(ember, ember.bfloat16), _cases(ember, ember.float32), _cases(torch, torch.bfloat16)
    print("| op (bfloat16) | ember ms | torch ms | ember / torch | ember bf16 / ember f32 |")
    print("|---|---|---|---|---|")
    for name in ours:
        r = compare({"ember": ours[name], "torch": theirs[name], "f32": ours32[name]}, repeats=5, number=5)
        print(f"| {name} | {r['ember_ms']:.3f} | {r['torch_ms']:.3f} | {r['ember/torch']:.2f} | {r['ember/f32']:.2f} |")


if __name__ == "__main__":
    main()
