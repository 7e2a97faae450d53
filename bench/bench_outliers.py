"""Ops that ran 5 to 70 times slower than torch 2.13, on everyday shapes: ember against torch, interleaved
repeats, CPU time, one BLAS thread each. Each row is forward only, or forward and backward ("fb": the result
summed, then ``backward``), as a model uses the op.

Run ``python bench/bench_outliers.py`` (followed by words, only the rows whose label holds them: ``float64``
for the linear algebra in double); with ``PYTHONPATH=<another tree's src>:bench`` it times that tree.
"""
from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from _timing import compare  # noqa: E402


def _normal(*shape):
    return np.random.default_rng(0).standard_normal(shape).astype(np.float32)


def _upsampled(mode: str):
    return lambda L, x: L.nn.functional.interpolate(x, scale_factor=2, mode=mode)


# Operands a linear-algebra row needs besides ``x`` (factors, a well-conditioned triangle), made once per library
# and input, so that the row times the op alone.
_PREPARED: dict = {}


def _prepared(L, x, name: str, make):
    key = (L.__name__, id(x), name)
    if key not in _PREPARED:
        _PREPARED[key] = x, make()  # x kept alive with it: its id is not reused for another row's input
    return _PREPARED[key][1]


def _as(L, x, dtype: str):
    return _prepared(L, x, dtype, lambda: x.to(getattr(L, dtype)))


def _index(L, shape: tuple, dim: int):
    return L.tensor(np.random.default_rng(1).integers(0, shape[dim], shape))


def _lu_factor(dtype: str):
    return lambda L, x: L.linalg.lu_factor(_as(L, x, dtype))


def _lu_solve(dtype: str):
    def row(L, x):
        A = _as(L, x, dtype)
        LU, pivots = _prepared(L, x, "lu " + dtype, lambda: L.linalg.lu_factor(A))
        return L.linalg.lu_solve(LU, pivots, A)
    return row


def _solve_triangular(dtype: str):
    def row(L, x):
        A = _as(L, x, dtype)
        T = _prepared(L, x, "triangle " + dtype, lambda: A.triu() + 30 * L.eye(A.shape[-1], dtype=A.dtype))
        return L.linalg.solve_triangular(T, A, upper=True)
    return row


def _geqrf(dtype: str):
    return lambda L, x: L.geqrf(_as(L, x, dtype))


def _householder_product(dtype: str):
    def row(L, x):
        A = _as(L, x, dtype)
        return L.linalg.householder_product(*_prepared(L, x, "geqrf " + dtype, lambda: L.geqrf(A)))
    return row


def _qr(dtype: str):
    return lambda L, x: L.linalg.qr(_as(L, x, dtype))


def _cholesky_solve(dtype: str):
    def row(L, x):
        A = _as(L, x, dtype)
        factor = _prepared(L, x, "cholesky " + dtype, lambda: L.linalg.cholesky(
            A @ A.mT / A.shape[-1] + L.eye(A.shape[-1], dtype=A.dtype)))
        return L.cholesky_solve(A, factor)
    return row


def _linalg_rows(dtype: str) -> tuple:
    return (
        (f"lu_factor [198, 198] {dtype}", (198, 198), False, _lu_factor(dtype)),
        (f"lu_factor [512, 512] {dtype}", (512, 512), False, _lu_factor(dtype)),
        (f"lu_factor [64, 16, 16] {dtype}", (64, 16, 16), False, _lu_factor(dtype)),
        (f"lu_solve [512, 512], 512 columns {dtype}", (512, 512), False, _lu_solve(dtype)),
        (f"solve_triangular [512, 512] {dtype}", (512, 512), False, _solve_triangular(dtype)),
        (f"geqrf [228, 171] {dtype}", (228, 171), False, _geqrf(dtype)),
        (f"householder_product [228, 171] {dtype}", (228, 171), False, _householder_product(dtype)),
        (f"linalg.qr [512, 512] {dtype}", (512, 512), False, _qr(dtype)),
        (f"cholesky_solve [512, 512] {dtype}", (512, 512), False, _cholesky_solve(dtype)),
    )


# (label, input shape, whether the row runs backward, op of (library, input))
_ROWS = (
    ("cdist [512, 64] to [300, 64]", (512, 64), False, lambda L, x: L.cdist(x, x[:300] * 0.5)),
    ("cdist fb", (512, 64), True, lambda L, x: L.cdist(x, x[:300].detach() * 0.5)),
    ("pdist [300, 64] fb", (300, 64), True, lambda L, x: L.pdist(x)),
    ("hardswish [256, 400] fb", (256, 400), True, lambda L, x: L.nn.functional.hardswish(x)),
    ("remainder(x, 0.7) [256, 400]", (256, 400), False, lambda L, x: L.remainder(x, 0.7)),
    ("smooth_l1_loss [256, 400] fb", (256, 400), True, lambda L, x: L.nn.functional.smooth_l1_loss(x, x.detach() * 0.5)),
    ("logsigmoid [256, 400] fb", (256, 400), True, lambda L, x: L.nn.functional.logsigmoid(x)),
    ("logaddexp [256, 400]", (256, 400), False, lambda L, x: L.logaddexp(x, x * 0.5)),
    ("topk(5) of [256, 1000]", (256, 1000), False, lambda L, x: L.topk(x, 5, 1)),
    ("searchsorted 102,400 in 456", (102400,), False,
     lambda L, x: L.searchsorted(x[:456].sort().values, x)),
    ("fill [256, 400]", (256, 400), False, lambda L, x: L.fill(x, 2.5)),
    ("angle [256, 400]", (256, 400), False, lambda L, x: L.angle(x)),
    ("adaptive_avg_pool2d to 1 [64, 512, 7, 7] fb", (64, 512, 7, 7), True,
     lambda L, x: L.nn.functional.adaptive_avg_pool2d(x, 1)),
    ("interpolate nearest x2 [16, 32, 32, 32] fb", (16, 32, 32, 32), True, _upsampled("nearest")),
    ("interpolate bilinear x2 [16, 32, 32, 32] fb", (16, 32, 32, 32), True, _upsampled("bilinear")),
    ("interpolate bicubic x2 [16, 32, 32, 32] fb", (16, 32, 32, 32), True, _upsampled("bicubic")),
    # float32 activations and updates of a million elements: NumPy's loops that skip their vector code
    ("relu [64, 16, 28, 28] fb (float32 loops)", (64, 16, 28, 28), True, lambda L, x: L.relu(x)),
    ("hardshrink [256, 4000] (float32 loops)", (256, 4000), False, lambda L, x: L.nn.functional.hardshrink(x)),
    ("threshold(x, 0.1, 0) [256, 4000] (float32 loops)", (256, 4000), False,
     lambda L, x: L.nn.functional.threshold(x, 0.1, 0.0)),
    ("where(x > 0, x, 0) [256, 4000] (float32 loops)", (256, 4000), False, lambda L, x: L.where(x > 0, x, 0.0)),
    ("lerp(x, y, 0.3) [256, 4000] (float32 loops)", (256, 4000), False,
     lambda L, x: L.lerp(x, _prepared(L, x, "half", lambda: x * 0.5), 0.3)),
    ("add(x, y, alpha=0.3) [256, 4000] (float32 loops)", (256, 4000), False,
     lambda L, x: L.add(x, _prepared(L, x, "half", lambda: x * 0.5), alpha=0.3)),
    ("add_(y, alpha=-1e-3) [256, 4000] (float32 loops)", (256, 4000), False,
     lambda L, x: x.add_(_prepared(L, x, "half", lambda: x * 0.5), alpha=-1e-3)),
    # one index per element, every column hit many times
    ("scatter_add along 1 [1000, 1000] (flat positions)", (1000, 1000), False,
     lambda L, x: x.scatter_add(1, _prepared(L, x, "index", lambda: _index(L, x.shape, 1)), x)),
    ("gather along 0 [1000, 1000] fb (flat positions)", (1000, 1000), True,
     lambda L, x: x.gather(0, _prepared(L, x, "index", lambda: _index(L, x.shape, 0)))),
) + _linalg_rows("float32") + _linalg_rows("float64")


def _program(lib, op, values: np.ndarray, backward: bool):
    x = lib.tensor(values, requires_grad=backward)
    if not backward:
        return lambda: op(lib, x)

    def step():
        x.grad = None
        op(lib, x).sum().backward()
    return step


def report(repeats: int = 7, number: int = 3, only: str = "") -> str:
    import torch

    import ember

    torch.set_num_threads(1)
    lines = ["| op | ember ms | torch ms | ember / torch |", "|---|---|---|---|"]
    for label, shape, backward, op in _ROWS:
        if only not in label:
            continue
        values = _normal(*shape)
        r = compare({"ember": _program(ember, op, values, backward), "torch": _program(torch, op, values, backward)},
                    repeats, number)
        lines.append(f"| {label} | {r['ember_ms']:.3f} | {r['torch_ms']:.3f} | {r['ember/torch']:.2f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    import sys

    print(report(only=" ".join(sys.argv[1:])))  # e.g. ``python bench/bench_outliers.py float64``: those rows only
