"""erf and exact GELU on a float32 ``[512, 192]`` activation (a small transformer's MLP), ember against torch
2.13, forward and forward + backward; interleaved repeats, CPU time, one BLAS thread each.

Run ``python bench/bench_gelu.py``.
"""
from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from _timing import compare  # noqa: E402


def _programs(lib) -> dict:
    values = np.random.default_rng(0).standard_normal((512, 192)).astype(np.float32)
    x, leaf = lib.tensor(values), lib.tensor(values, requires_grad=True)
    gelu = lib.nn.functional.gelu

    def backward():
        leaf.grad = None
        gelu(leaf).sum().backward()

    return {"erf": lambda: lib.erf(x), "gelu": lambda: gelu(x), "gelu forward + backward": backward}


def report(repeats: int = 9, number: int = 10) -> str:
    import torch

    import ember

    torch.set_num_threads(1)
    mine, theirs = _programs(ember), _programs(torch)
    lines = ["| float32 [512, 192] | ember ms | torch ms | ember / torch |", "|---|---|---|---|"]
    for name in mine:
        r = compare({"ember": mine[name], "torch": theirs[name]}, repeats, number)
        lines.append(f"| {name} | {r['ember_ms']:.3f} | {r['torch_ms']:.3f} | {r['ember/torch']:.1f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(report())
