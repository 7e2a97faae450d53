"""Sparse COO tensors: a graph convolution's product, coalescing and a sparse embedding step, against torch 2.13
and against the same computation written by hand in NumPy, in one run.

Each row is timed in interleaved repeats (``time.process_time``, median of the per-repeat ratios), torch on
one thread, BLAS on one thread:

1. ``sparse.mm(A, X)``: A is a 20,000-node graph's adjacency (200,000 edges), X 20,000 x 64 float32 features;
   forward alone, then forward and backward with X requiring grad;
2. ``coalesce()`` of 200,000 random entries (about a tenth of them repeated);
3. a step of ``nn.Embedding(50,000, 64, sparse=True)`` on 4,096 indices with ``optim.SparseAdam``.

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=src python bench/bench_sparse.py
"""
from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import sys  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from _timing import compare  # noqa: E402

NODES, EDGES, FEATURES = 20_000, 200_000, 64
rng = np.random.default_rng(0)
EDGE_INDEX = np.stack([rng.integers(0, NODES, EDGES), rng.integers(0, NODES, EDGES)])
WEIGHTS = rng.random(EDGES, dtype=np.float32)
X = rng.standard_normal((NODES, FEATURES), dtype=np.float32)
LOOKUPS = rng.integers(0, 50_000, 4096)


def _graph(lib):
    adjacency = lib.sparse_coo_tensor(lib.tensor(EDGE_INDEX), lib.tensor(WEIGHTS), (NODES, NODES)).coalesce()
    features = lib.tensor(X)
    trained = lib.tensor(X, requires_grad=True)

    def forward():
        lib.sparse.mm(adjacency, features)

    def backward():
        lib.sparse.mm(adjacency, trained).sum().backward()
        trained.grad = None

    return forward, backward


def _numpy_graph():
    """The same product by hand: each entry scales its column's row of X into its row of the result."""
    adjacency = _torch_free_coalesce(EDGE_INDEX, WEIGHTS)
    rows, cols, weights = adjacency

    def forward():
        out = np.zeros((NODES, FEATURES), np.float32)
        np.add.at(out, rows, weights[:, None] * X[cols])
        return out

    def backward():
        out = forward()
        grad = np.ones_like(out)
        x_grad = np.zeros_like(X)
        np.add.at(x_grad, cols, weights[:, None] * grad[rows])

    return forward, backward


def _torch_free_coalesce(indices, values):
    linear = indices[0] * NODES + indices[1]
    unique, inverse = np.unique(linear, return_inverse=True)
    summed = np.zeros(len(unique), values.dtype)
    np.add.at(summed, inverse, values)
    return unique // NODES, unique % NODES, summed


def _coalescing(lib):
    s = lib.sparse_coo_tensor(lib.tensor(EDGE_INDEX), lib.tensor(WEIGHTS), (NODES, NODES))
    return lambda: s.coalesce()


def _embedding_step(lib):
    lib.manual_seed(0)
    table = lib.nn.Embedding(50_000, 64, sparse=True)
    opt = lib.optim.SparseAdam(table.parameters(), lr=0.01)
    lookups = lib.tensor(LOOKUPS)

    def step():
        opt.zero_grad()
        table(lookups).pow(2).sum().backward()
        opt.step()

    return step


def main() -> None:
    import torch

    import ember

    torch.set_num_threads(1)
    warnings.simplefilter("ignore")  # torch's note that it skips invariant checks
    (ef, eb), (tf, tb), (nf, nb) = _graph(ember), _graph(torch), _numpy_graph()
    rows = [
        ("`sparse.mm(A, X)` forward", {"ember": ef, "torch": tf, "numpy": nf}, 5, 2),
        ("`sparse.mm(A, X)` forward + backward", {"ember": eb, "torch": tb, "numpy": nb}, 5, 1),
        ("`coalesce()`, 200,000 entries", {"ember": _coalescing(ember), "torch": _coalescing(torch),
                                            "numpy": lambda: _torch_free_coalesce(EDGE_INDEX, WEIGHTS)}, 5, 1),
        ("`Embedding(sparse=True)` + `SparseAdam` step", {"ember": _embedding_step(ember),
                                                          "torch": _embedding_step(torch)}, 5, 3),
    ]
    print_table(rows)


def print_table(rows: list) -> None:
    """Each ``(name, programs, repeats, number)`` timed by ``compare``: a Markdown row of ms and ratios."""
    print("| row | ember ms | torch ms | ember / torch | ember / NumPy |")
    print("|---|---|---|---|---|")
    for name, programs, repeats, number in rows:
        r = compare(programs, repeats, number)
        by_hand = f"{r['ember/numpy']:.2f}" if "numpy" in programs else "-"
        print(f"| {name} | {r['ember_ms']:.2f} | {r['torch_ms']:.2f} | {r['ember/torch']:.2f} | {by_hand} |")


if __name__ == "__main__":
    main()
