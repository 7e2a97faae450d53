"""Single-precision accuracy of ``linalg.lu_solve``, ``cholesky_solve``, ``cholesky_inverse`` and
``linalg.householder_product``, results and gradients, ember's and torch's float32 against a float64 reference
(torch's, on the same float32-rounded inputs): the normwise relative error max |x - ref| / max |ref|.

    python bench/accuracy_linalg_solves.py [n]        (default: 128)
"""
from __future__ import annotations

import sys

import numpy as np


def _rounded(x: np.ndarray) -> np.ndarray:
    """float64 values that float32 holds exactly."""
    return np.asarray(x).astype(np.float32).astype(np.float64)


def cases(n: int) -> dict:
    import torch
    rng = np.random.default_rng(0)
    a = _rounded(rng.standard_normal((n, n)) + 4 * np.sqrt(n) * np.eye(n))
    b = _rounded(rng.standard_normal((n, n)))
    factor = _rounded(np.linalg.cholesky(a @ a.T))
    compact, tau = (_rounded(x.numpy()) for x in torch.geqrf(torch.tensor(rng.standard_normal((n, n)))))
    LU, pivots = torch.linalg.lu_factor(torch.tensor(a))
    LU, pivots = _rounded(LU.numpy()), pivots.numpy()
    return {
        "lu_solve": (lambda lib, x, y: lib.linalg.lu_solve(x, lib.tensor(pivots), y), (LU, b)),
        "lu_solve adjoint": (lambda lib, x, y: lib.linalg.lu_solve(x, lib.tensor(pivots), y, adjoint=True), (LU, b)),
        "lu_solve left=False": (lambda lib, x, y: lib.linalg.lu_solve(x, lib.tensor(pivots), y, left=False), (LU, b)),
        "cholesky_solve": (lambda lib, y, x: lib.cholesky_solve(y, x), (b, factor)),
        "cholesky_solve upper": (lambda lib, y, x: lib.cholesky_solve(y, x, True), (b, np.ascontiguousarray(factor.T))),
        "cholesky_inverse": (lambda lib, x: lib.cholesky_inverse(x), (factor,)),
        "householder_product": (lambda lib, x, t: lib.linalg.householder_product(x, t), (compact, tau)),
    }


def results(lib, program, arrays: tuple, dtype) -> list:
    """The result and every input's gradient (for a fixed pattern as the result's gradient), as float64."""
    leaves = [lib.tensor(x.astype(dtype), requires_grad=True) for x in arrays]
    out = program(lib, *leaves)
    seed = np.cos(np.arange(out.numel())).reshape(tuple(out.shape)).astype(dtype)
    gradients = lib.autograd.grad(out, leaves, lib.tensor(seed))
    return [t.detach().numpy().astype(np.float64) for t in (out, *gradients)]


def main(n: int) -> None:
    import torch

    import ember
    print(f"{'op':22s} {'':6s} {'result':>9s} {'grad 0':>9s} {'grad 1':>9s}")
    for name, (program, arrays) in cases(n).items():
        reference = results(torch, program, arrays, np.float64)
        for lib in (ember, torch):
            got = results(lib, program, arrays, np.float32)
            errors = [np.abs(x - r).max() / np.abs(r).max() for x, r in zip(got, reference)]
            print(f"{name:22s} {lib.__name__:6s} " + " ".join(f"{e:9.2e}" for e in errors))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 128)
