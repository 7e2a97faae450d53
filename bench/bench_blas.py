"""Matrix products by shape class: MKL's cblas gemm (through ``ember._blas``) against NumPy's matmul (OpenBLAS)
and torch 2.13's ``matmul``, float32, one thread each, CPU time.

Each row times the three back to back in interleaved repeats; a ratio is the median of the per-repeat ratios.
"ember takes" is the kernel ``ember._blas.matmul`` picks for that shape (its thresholds come from these rows:
MKL where it is faster, NumPy below; with ``EMBER_MKL`` unset, a CPU that is not Intel's takes NumPy
throughout). Needs the ``mkl`` extra.

Run: ``PYTHONPATH=src python bench/bench_blas.py``.
"""
from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("EMBER_MKL", "1")  # MKL on any CPU, so that it is compared with NumPy's OpenBLAS everywhere

import numpy as np  # noqa: E402
from _timing import compare  # noqa: E402

# (name, shape of x, shape of y, whether y is the transpose of a C array, as a linear layer's weight.t())
SHAPES = [
    ("square 32", (32, 32), (32, 32), False),
    ("square 64", (64, 64), (64, 64), False),
    ("square 96", (96, 96), (96, 96), False),
    ("square 128", (128, 128), (128, 128), False),
    ("square 256", (256, 256), (256, 256), False),
    ("square 512", (512, 512), (512, 512), False),
    ("tall 512x64 @ 64x32", (512, 64), (64, 32), False),
    ("LeNet conv2 im2col, whole batch", (12544, 400), (400, 32), False),
    ("LeNet conv2 im2col, one chunk", (588, 400), (400, 32), False),
    ("LeNet conv2 weight grad, one chunk", (32, 588), (588, 400), False),
    ("transformer qkv, x @ W.t()", (512, 128), (384, 128), True),
    ("transformer MLP up", (512, 128), (128, 512), False),
    ("transformer MLP down", (512, 512), (512, 128), False),
    ("MLP 784-1024, x @ W.t()", (256, 784), (1024, 784), True),
    ("MLP 1024-1024, x @ W.t()", (256, 1024), (1024, 1024), True),
    ("attention scores, 32 x [64,32]@[32,64]", (32, 64, 32), (32, 32, 64), False),
    ("batched 16 x [128,64]@[64,128]", (16, 128, 64), (16, 64, 128), False),
    ("batched 8 x [128,128]@[128,128]", (8, 128, 128), (8, 128, 128), False),
]


def _operands(x_shape: tuple, y_shape: tuple, transposed: bool) -> tuple:
    rng = np.random.default_rng(0)
    x = rng.standard_normal(x_shape).astype(np.float32)
    y = rng.standard_normal(y_shape).astype(np.float32)
    return x, (y.T if transposed else y)


def run(repeats: int = 9) -> list:
    import torch

    from ember import _blas

    torch.set_num_threads(1)
    if not _blas.loaded():
        raise SystemExit("bench_blas: the mkl extra is not installed (pip install 'ember[mkl]')")
    rows = []
    for name, x_shape, y_shape, transposed in SHAPES:
        x, y = _operands(x_shape, y_shape, transposed)
        tx, ty = torch.from_numpy(x), torch.from_numpy(np.ascontiguousarray(y.T)).T if transposed else \
            torch.from_numpy(y)
        before = dict(_blas.calls)
        _blas.matmul(x, y)
        takes = "MKL" if _blas.calls != before else "NumPy"
        saved = _blas.THRESHOLD, _blas.BATCHED_THRESHOLD
        _blas.THRESHOLD = _blas.BATCHED_THRESHOLD = 1  # MKL on every row, to show where it loses
        number = max(1, int(2e7 // (x.size * y.shape[-1])))
        try:
            r = compare({"mkl": lambda: _blas.matmul(x, y), "numpy": lambda: np.matmul(x, y),
                         "torch": lambda: torch.matmul(tx, ty)}, repeats, number)
        finally:
            _blas.THRESHOLD, _blas.BATCHED_THRESHOLD = saved
        rows.append({"name": name, "takes": takes, **r})
    return rows


def report(rows: list) -> str:
    lines = ["| product | MKL ms | NumPy ms | torch ms | MKL / NumPy | MKL / torch | ember takes |",
             "|---|---|---|---|---|---|---|"]
    lines += [f"| {r['name']} | {r['mkl_ms']:.4f} | {r['numpy_ms']:.4f} | {r['torch_ms']:.4f} | "
              f"{r['mkl/numpy']:.2f} | {r['mkl/torch']:.2f} | {r['takes']} |" for r in rows]
    return "\n".join(lines)


if __name__ == "__main__":
    print(report(run()))
