"""Solves and products from factors: ``linalg.lu_solve``, ``cholesky_solve``, ``cholesky_inverse`` and
``linalg.householder_product``, ember against torch 2.13, without gradient and forward + backward, float32 and
float64, on [n, n] matrices (the right-hand sides too). CPU time, median of interleaved repeats, one thread.

    python bench/bench_linalg_solves.py [n ...]        (default: 128 512)
"""
from __future__ import annotations

import os
import sys

for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import compare  # noqa: E402


def _operands(n: int) -> dict:
    """float64 arrays: a well-conditioned system, a right-hand side, a Cholesky factor, geqrf's reflectors."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n)) + n ** 0.5 * np.eye(n)
    return {"a": a, "b": rng.standard_normal((n, n)), "factor": np.linalg.cholesky(a @ a.T),
            "q": rng.standard_normal((n, n))}


def cases(lib, arrays: dict, dtype: str) -> dict:
    """op -> (its function of leaves, the leaves' arrays); the factors come from lib's own factorizations."""
    as_lib = lambda x: lib.tensor(x.astype(dtype))
    LU, pivots = lib.linalg.lu_factor(as_lib(arrays["a"]))
    compact, tau = lib.geqrf(as_lib(arrays["q"]))
    return {
        "lu_solve": (lambda LU_, B: lib.linalg.lu_solve(LU_, pivots, B), (LU, as_lib(arrays["b"]))),
        "cholesky_solve": (lambda B, L: lib.cholesky_solve(B, L), (as_lib(arrays["b"]), as_lib(arrays["factor"]))),
        "cholesky_inverse": (lambda L: lib.cholesky_inverse(L), (as_lib(arrays["factor"]),)),
        "householder_product": (lambda A, t: lib.linalg.householder_product(A, t), (compact, tau)),
    }


def step(lib, function, tensors: tuple, backward: bool):
    if not backward:
        return lambda: function(*tensors)
    leaves = [t.detach().clone().requires_grad_() for t in tensors]
    seed = lib.ones_like(function(*leaves))

    def forward_and_backward():
        for leaf in leaves:
            leaf.grad = None
        function(*leaves).backward(seed)

    return forward_and_backward


def main(sizes: list) -> None:
    import torch

    import ember
    torch.set_num_threads(1)
    print(f"{'op':20s} {'dtype':8s} {'n':>4s} {'mode':9s} {'ember ms':>9s} {'torch ms':>9s} {'ember/torch':>11s}")
    for n in sizes:
        arrays = _operands(n)
        for dtype in ("float32", "float64"):
            mine, theirs = cases(ember, arrays, dtype), cases(torch, arrays, dtype)
            for op in mine:
                for backward in (False, True):
                    programs = {"ember": step(ember, *mine[op], backward), "torch": step(torch, *theirs[op], backward)}
                    number = 1 if n >= 256 else 5
                    result = compare(programs, repeats=9, number=number)
                    mode = "fwd+bwd" if backward else "no grad"
                    print(f"{op:20s} {dtype:8s} {n:4d} {mode:9s} {result['ember_ms']:9.3f} {result['torch_ms']:9.3f} "
                          f"{result['ember/torch']:11.2f}", flush=True)


if __name__ == "__main__":
    main([int(n) for n in sys.argv[1:]] or [128, 512])
