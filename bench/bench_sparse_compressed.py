"""Compressed sparse (CSR) tensors: a graph convolution's product with learned edge weights, and the
conversions into CSR, against torch 2.13 and against the same computation written by hand in NumPy, in one run.

Each row is timed in interleaved repeats (``time.process_time``, median of the per-repeat ratios), torch on
one thread, BLAS on one thread:

1. ``A @ X``: A is a 20,000-node graph's adjacency in CSR (200,000 edges before merging duplicates), X
   20,000 x 64 float32 features; forward alone, then forward and backward with A's values (the edge weights,
   through ``sparse_csr_tensor(crow, col, w)``) and X requiring grad;
2. the COO adjacency to CSR (``to_sparse_csr()``);
3. a dense 2,000 x 2,000 matrix with 1% nonzeros to CSR.

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=src python bench/bench_sparse_compressed.py
"""
from __future__ import annotations

import os
import sys
import warnings

sys.path.insert(0, os.path.dirname(__file__))
from bench_sparse import print_table  # noqa: E402 (which also sets BLAS to one thread before NumPy loads)

import numpy as np  # noqa: E402

NODES, EDGES, FEATURES = 20_000, 200_000, 64
rng = np.random.default_rng(0)
_linear = np.unique(rng.integers(0, NODES, EDGES) * NODES + rng.integers(0, NODES, EDGES))
ROWS, COLS = _linear // NODES, _linear % NODES
CROW = np.concatenate([[0], np.cumsum(np.bincount(ROWS, minlength=NODES))])
WEIGHTS = rng.random(len(COLS), dtype=np.float32)
X = rng.standard_normal((NODES, FEATURES), dtype=np.float32)
DENSE = np.where(rng.random((2000, 2000)) < 0.01, rng.standard_normal((2000, 2000)), 0).astype(np.float32)


def _graph(lib):
    crow, col = lib.tensor(CROW), lib.tensor(COLS)
    adjacency = lib.sparse_csr_tensor(crow, col, lib.tensor(WEIGHTS), (NODES, NODES))
    features = lib.tensor(X)
    weights, trained = lib.tensor(WEIGHTS, requires_grad=True), lib.tensor(X, requires_grad=True)

    def forward():
        adjacency @ features

    def backward():
        (lib.sparse_csr_tensor(crow, col, weights, (NODES, NODES)) @ trained).sum().backward()
        weights.grad = trained.grad = None

    return forward, backward


def _numpy_graph():
    """The same by hand: each entry scales its column's row of X into its row of the result; the backward
    gives each weight its row of the gradient against its column's row of X, and X the transposed product."""
    def forward():
        out = np.zeros((NODES, FEATURES), np.float32)
        np.add.at(out, ROWS, WEIGHTS[:, None] * X[COLS])
        return out

    def backward():
        out = forward()
        grad = np.ones_like(out)
        weights_grad = (grad[ROWS] * X[COLS]).sum(1)
        x_grad = np.zeros_like(X)
        np.add.at(x_grad, COLS, WEIGHTS[:, None] * grad[ROWS])
        return weights_grad, x_grad

    return forward, backward


def _numpy_from_dense():
    rows, cols = np.nonzero(DENSE)
    return np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=DENSE.shape[0]))]), cols, DENSE[rows, cols]


def main() -> None:
    import torch

    import ember

    torch.set_num_threads(1)
    warnings.simplefilter("ignore")  # torch's notes on beta support and skipped invariant checks
    (ef, eb), (tf, tb), (nf, nb) = _graph(ember), _graph(torch), _numpy_graph()
    coo = {lib: lib.sparse_coo_tensor(lib.tensor(np.stack([ROWS, COLS])), lib.tensor(WEIGHTS), (NODES, NODES))
           .coalesce() for lib in (ember, torch)}
    dense = {lib: lib.tensor(DENSE) for lib in (ember, torch)}
    rows = [
        ("`A @ X` forward (CSR)", {"ember": ef, "torch": tf, "numpy": nf}, 5, 2),
        ("`A @ X` forward + backward (weights and X)", {"ember": eb, "torch": tb, "numpy": nb}, 5, 1),
        ("COO `to_sparse_csr()`, 200,000 entries", {lib.__name__: (lambda c=coo[lib]: c.to_sparse_csr())
                                                     for lib in (ember, torch)}, 5, 2),
        ("dense 2,000 x 2,000 (1%) `to_sparse_csr()`", {"ember": lambda: dense[ember].to_sparse_csr(),
                                                        "torch": lambda: dense[torch].to_sparse_csr(),
                                                        "numpy": _numpy_from_dense}, 5, 2),
    ]
    print_table(rows)


if __name__ == "__main__":
    main()
