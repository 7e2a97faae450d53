"""The copies of views, as_strided_scatter, LDL^T, airy_ai and binomial: CPU time against torch 2.13 (one thread).

    python bench/bench_copies.py

Each row is the median over interleaved rounds of ember's time / torch's (``_timing.compare``).
"""
from __future__ import annotations

import numpy as np
import torch

import ember
from _timing import compare

torch.set_num_threads(1)


def _cases(lib, rng: np.random.Generator) -> dict:
    small = lib.tensor(rng.standard_normal((4, 4)))
    grad_input = lib.tensor(rng.standard_normal((16, 16)), requires_grad=True)
    symmetric = {n: rng.standard_normal((n, n)) for n in (8, 64)}
    symmetric = {n: lib.tensor(a + a.T) for n, a in symmetric.items()}
    factors = lib.linalg.ldl_factor(symmetric[64])
    rhs = lib.tensor(rng.standard_normal((64, 4)))
    points = lib.tensor(np.linspace(-50, 50, 100_000))
    counts, probs = lib.full((100_000,), 20.0), lib.full((100_000,), 0.3)
    return {
        "t_copy 4x4": lambda: lib.t_copy(small),
        "select_copy 4x4": lambda: lib.select_copy(small, 1, 2),
        "split_copy 4x4": lambda: lib.split_copy(small, 2, 1),
        "transpose_copy 16x16 + backward": lambda: lib.transpose_copy(grad_input, 0, 1).sum().backward(),
        "as_strided_scatter 4x4": lambda: lib.as_strided_scatter(small, small[0], (4,), (5,)),
        "linalg.ldl_factor 8x8": lambda: lib.linalg.ldl_factor(symmetric[8]),
        "linalg.ldl_factor 64x64": lambda: lib.linalg.ldl_factor(symmetric[64]),
        "linalg.ldl_solve 64x64, 4 columns": lambda: lib.linalg.ldl_solve(factors.LD, factors.pivots, rhs),
        "special.airy_ai 100,000": lambda: lib.special.airy_ai(points),
        "binomial 100,000": lambda: lib.binomial(counts, probs),
    }


def main() -> None:
    ours, theirs = _cases(ember, np.random.default_rng(0)), _cases(torch, np.random.default_rng(0))
    print("| op | ember ms | torch ms | ember / torch |")
    print("|---|---|---|---|")
    for name in ours:
        number = 20 if "100,000" in name or "64x64" in name else 500
        result = compare({"ember": ours[name], "torch": theirs[name]}, repeats=5, number=number)
        print(f"| {name} | {result['ember_ms']:.4f} | {result['torch_ms']:.4f} | {result['ember/torch']:.2f} |")


if __name__ == "__main__":
    main()
