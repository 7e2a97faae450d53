"""cdist and the pairwise distances around it on float32 ``x1 [512, 64]``, ``x2 [300, 64]`` (and a batch),
ember against torch 2.13: forward, and forward + ``.sum().backward()``; interleaved repeats, CPU time, one
BLAS thread each.

Run ``python bench/bench_cdist.py`` (``--quick`` for fewer repeats).
"""
from __future__ import annotations

import math
import os
import sys

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from _timing import compare  # noqa: E402

CASES = [  # (name, p, compute_mode)
    ("cdist p=2", 2.0, "use_mm_for_euclid_dist_if_necessary"),
    ("cdist p=2 donot_use_mm", 2.0, "donot_use_mm_for_euclid_dist"),
    ("cdist p=1", 1.0, None),
    ("cdist p=inf", math.inf, None),
    ("cdist p=0", 0.0, None),
    ("cdist p=3", 3.0, None),
]


def _programs(lib) -> dict:
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal(shape).astype(np.float32) for shape in ((512, 64), (300, 64)))
    x1, x2 = lib.tensor(a, requires_grad=True), lib.tensor(b, requires_grad=True)
    pairs = lib.tensor(a[:300], requires_grad=True)
    F = lib.nn.functional

    def forward_backward(function):
        def program():
            x1.grad = x2.grad = pairs.grad = batch1.grad = batch2.grad = None
            function().sum().backward()
        return program

    programs = {}
    for name, p, mode in CASES:
        kwargs = {} if mode is None else {"compute_mode": mode}
        function = (lambda p=p, kwargs=kwargs: lib.cdist(x1, x2, p, **kwargs))
        programs[name] = lambda function=function: function().detach()
        programs[name + " + backward"] = forward_backward(function)
    batch1 = lib.tensor(rng.standard_normal((8, 1, 128, 64)).astype(np.float32), requires_grad=True)
    batch2 = lib.tensor(rng.standard_normal((3, 100, 64)).astype(np.float32), requires_grad=True)
    others = {
        "cdist p=2 batch [8, 1, 128, 64] x [3, 100, 64]": lambda: lib.cdist(batch1, batch2),
        "cdist p=1 batch [8, 1, 128, 64] x [3, 100, 64]": lambda: lib.cdist(batch1, batch2, 1.0),
        "pdist [300, 64]": lambda: lib.pdist(pairs),
        "pairwise_distance [300, 64]": lambda: F.pairwise_distance(pairs, x2),
        "dist [300, 64]": lambda: lib.dist(pairs, x2),
    }
    for name, function in others.items():
        programs[name] = lambda function=function: function().detach()
        programs[name + " + backward"] = forward_backward(function)
    return programs


def measure(repeats: int, number: int) -> dict:
    """Per program: (ember ms, torch ms, median ember / torch ratio)."""
    import torch

    import ember

    torch.set_num_threads(1)
    pairs = zip(_programs(ember).items(), _programs(torch).values())
    figures = {name: compare({"ember": mine, "torch": theirs}, repeats, number) for (name, mine), theirs in pairs}
    return {name: (f["ember_ms"], f["torch_ms"], f["ember/torch"]) for name, f in figures.items()}


def report(repeats: int = 7, number: int = 3) -> str:
    rows = [f"| {name} | {mine:.3f} | {theirs:.3f} | {ratio:.1f} |"
            for name, (mine, theirs, ratio) in measure(repeats, number).items()]
    return "\n".join(["| float32 | ember ms | torch ms | ember / torch |", "|---|---|---|---|"] + rows)


if __name__ == "__main__":
    print(report(*((3, 1) if "--quick" in sys.argv else ())))
