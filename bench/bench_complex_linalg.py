"""Complex linear algebra: ember against torch 2.13 and against the same computation written by hand in NumPy.

Each case is a forward and a backward: a complex matrix product, linalg.eig with a loss of its eigenvalues, and
a Hermitian eigh and a solve. One row also times a small real product (forward and backward of 4x4 matrices),
the path the complex-aware backward formulas must not slow down. CPU time (``time.process_time``), median of
interleaved repeats. Both libraries run on one thread (torch's setting, and NumPy's BLAS through the
environment, set before NumPy loads): on a shared host, BLAS threads waiting for a core add CPU time at random.

    python bench/bench_complex_linalg.py
"""
from __future__ import annotations

import os
import sys

for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import compare  # noqa: E402


def _matrices(n: int, dtype: str, count: int, seed: int = 0) -> list:
    rng = np.random.default_rng(seed)
    if dtype.startswith("complex"):
        return [(rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n))).astype(dtype) for _ in range(count)]
    return [rng.standard_normal((n, n)).astype(dtype) for _ in range(count)]


def product_step(lib, a: np.ndarray, b: np.ndarray):
    """(A @ B).abs().sum() and its gradients."""
    x, y = lib.tensor(a, requires_grad=True), lib.tensor(b, requires_grad=True)

    def step():
        x.grad = y.grad = None
        (x @ y).abs().sum().backward()

    return step


def product_by_hand(a: np.ndarray, b: np.ndarray):
    def step():
        c = a @ b
        g = c / np.abs(c)  # d|c| in the conjugate convention
        return g @ b.conj().T, a.conj().T @ g

    return step


def eig_step(lib, a: np.ndarray):
    """|eigenvalues|.sum() and its gradient (the eigenvectors are needed for it)."""
    x = lib.tensor(a, requires_grad=True)

    def step():
        x.grad = None
        lib.linalg.eigvals(x).abs().sum().backward()

    return step


def eig_by_hand(a: np.ndarray):
    def step():
        values, vectors = np.linalg.eig(a)
        vh = vectors.conj().T
        middle = np.diag(values / np.abs(values))
        return np.linalg.solve(vh, middle @ vh)

    return step


def eigh_step(lib, a: np.ndarray):
    x = lib.tensor(a @ a.conj().T, requires_grad=True)

    def step():
        x.grad = None
        lib.linalg.eigvalsh(x).sum().backward()

    return step


def solve_step(lib, a: np.ndarray, b: np.ndarray):
    x, y = lib.tensor(a, requires_grad=True), lib.tensor(b, requires_grad=True)

    def step():
        x.grad = y.grad = None
        lib.linalg.solve(x, y).abs().sum().backward()

    return step


def main() -> None:
    import torch

    import ember

    torch.set_num_threads(1)
    cases = {
        "matmul fwd+bwd, complex128 256x256": (product_step, product_by_hand, _matrices(256, "complex128", 2), 3),
        "matmul fwd+bwd, complex64 64x64": (product_step, product_by_hand, _matrices(64, "complex64", 2), 50),
        "matmul fwd+bwd, float32 4x4 (real path)": (product_step, None, _matrices(4, "float32", 2), 2000),
        "eigvals fwd+bwd, float64 64x64": (eig_step, eig_by_hand, _matrices(64, "float64", 1), 5),
        "eigvals fwd+bwd, complex128 32x32": (eig_step, eig_by_hand, _matrices(32, "complex128", 1), 10),
        "eigvalsh fwd+bwd, complex128 64x64": (eigh_step, None, _matrices(64, "complex128", 1), 10),
        "solve fwd+bwd, complex128 64x64": (solve_step, None, _matrices(64, "complex128", 2), 20),
    }
    print("| case | ember ms | torch ms | ember / torch | NumPy by hand ms | ember / NumPy |")
    print("|---|---|---|---|---|---|")
    for name, (step, by_hand, arrays, number) in cases.items():
        programs = {"ember": step(ember, *arrays), "torch": step(torch, *arrays)}
        if by_hand is not None:
            programs["numpy"] = by_hand(*arrays)
        result = compare(programs, repeats=5, number=number)
        numpy_cells = (f"{result['numpy_ms']:.3f} | {result['ember/numpy']:.2f}" if by_hand is not None else "- | -")
        print(f"| {name} | {result['ember_ms']:.3f} | {result['torch_ms']:.3f} | {result['ember/torch']:.2f} | "
              f"{numpy_cells} |")


if __name__ == "__main__":
    main()
