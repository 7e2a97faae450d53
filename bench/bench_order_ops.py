"""Order statistics, running extrema, products and float16 casts: ember against torch 2.13 on a [256, 400]
float32 tensor, interleaved repeats, CPU time, one BLAS thread each. Each row is forward only, or forward and
backward ("fb": the result summed, then ``backward``).

Run ``python bench/bench_order_ops.py [word ...]`` (only the rows whose label holds a word, if given); with
``PYTHONPATH=<another tree's src>:bench`` it times that tree.
"""
from __future__ import annotations

import os
import sys

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from _timing import compare  # noqa: E402
from bench_outliers import _program  # noqa: E402

_SHAPE = (256, 400)


# (label, whether the row runs backward, op of (library, input))
_ROWS = (
    ("median(1)", False, lambda L, x: L.median(x, 1)),
    ("median(1) fb", True, lambda L, x: L.median(x, 1).values),
    ("nanmedian(1)", False, lambda L, x: L.nanmedian(x, 1)),
    ("nanmedian(1) fb", True, lambda L, x: L.nanmedian(x, 1).values),
    ("kthvalue(7, 1)", False, lambda L, x: L.kthvalue(x, 7, 1)),
    ("kthvalue(7, 1) fb", True, lambda L, x: L.kthvalue(x, 7, 1).values),
    ("cummax(1)", False, lambda L, x: L.cummax(x, 1)),
    ("cummax(1) fb", True, lambda L, x: L.cummax(x, 1).values),
    ("cummin(0)", False, lambda L, x: L.cummin(x, 0)),
    ("cummin(0) fb", True, lambda L, x: L.cummin(x, 0).values),
    ("prod(1)", False, lambda L, x: L.prod(x, 1)),
    ("prod(1) fb", True, lambda L, x: L.prod(x, 1)),
    ("prod()", False, lambda L, x: L.prod(x)),
    ("prod() fb", True, lambda L, x: L.prod(x)),
    ("half()", False, lambda L, x: x.half()),
    ("half().float()", False, lambda L, x: x.half().float()),
    ("half().float() fb", True, lambda L, x: x.half().float()),
)


def report(words: tuple = (), repeats: int = 7, number: int = 5) -> str:
    import torch

    import ember

    torch.set_num_threads(1)
    ember.set_num_threads(1)
    # values near 1 keep the products finite, as a product of 400 normals would not be
    values = (1 + 0.05 * np.random.default_rng(0).standard_normal(_SHAPE)).astype(np.float32)
    lines = ["| op on [256, 400] | ember ms | torch ms | ember / torch |", "|---|---|---|---|"]
    for label, backward, op in _ROWS:
        if words and not any(word in label for word in words):
            continue
        r = compare({"ember": _program(ember, op, values, backward), "torch": _program(torch, op, values, backward)},
                    repeats, number)
        lines.append(f"| {label} | {r['ember_ms']:.3f} | {r['torch_ms']:.3f} | {r['ember/torch']:.2f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(report(tuple(sys.argv[1:])))
