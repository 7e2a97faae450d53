"""The special functions with float32 kernels of their own (erfc, special.erfcx, special.ndtr, special.ndtri,
lgamma, digamma, special.log_ndtr) on a float32 ``[256, 400]`` input, ember against torch 2.13: interleaved
repeats, CPU time, one BLAS thread each.

Run ``python bench/bench_special.py``.
"""
from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from _timing import compare  # noqa: E402

_INPUTS = {"randn": lambda rng: rng.standard_normal((256, 400)),
           "uniform(0.01, 20)": lambda rng: rng.uniform(0.01, 20, (256, 400)),
           "uniform(0, 1)": lambda rng: rng.uniform(0, 1, (256, 400))}
_CASES = (("erfc", "randn"), ("special.erfcx", "randn"), ("special.ndtr", "randn"), ("special.ndtri", "uniform(0, 1)"),
          ("lgamma", "uniform(0.01, 20)"), ("lgamma", "randn"), ("digamma", "uniform(0.01, 20)"),
          ("special.log_ndtr", "randn"))


def _function(lib, name: str):
    owner = lib.special if name.startswith("special.") else lib
    return getattr(owner, name.removeprefix("special."))


def report(repeats: int = 9, number: int = 5) -> str:
    import torch

    import ember

    torch.set_num_threads(1)
    lines = ["| float32 [256, 400] | input | ember ms | torch ms | ember / torch |", "|---|---|---|---|---|"]
    for name, kind in _CASES:
        values = _INPUTS[kind](np.random.default_rng(0)).astype(np.float32)
        mine, theirs = _function(ember, name), _function(torch, name)
        x, t = ember.tensor(values), torch.from_numpy(values)
        r = compare({"ember": lambda: mine(x), "torch": lambda: theirs(t)}, repeats, number)
        lines.append(f"| {name} | {kind} | {r['ember_ms']:.3f} | {r['torch_ms']:.3f} | {r['ember/torch']:.1f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(report())
