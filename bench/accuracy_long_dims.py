"""Float32 sums and scans along a long dim: the largest relative error against float64, for NumPy's own
kernels (what ember ran before ``ember._ops._cascade``), torch 2.13 and ember.

The data: a ``[1000000, 3]`` float32 array of standard normal values plus 3, reduced or scanned along dim 0
(the scans along its first column). Run ``python bench/accuracy_long_dims.py``.
"""
from __future__ import annotations

import numpy as np


def _ops() -> dict:
    """label -> (NumPy's own float32 computation, the same on a framework (ember or torch))."""
    return {
        "`x.sum(0)`": (lambda a: a.sum(0), lambda L, x: x.sum(0)),
        "`x.mean(0)`": (lambda a: a.mean(0), lambda L, x: x.mean(0)),
        "`x.var(0)`": (lambda a: a.var(0, ddof=1), lambda L, x: x.var(0)),
        "`x[:, 0].cumsum(0)`": (lambda a: np.cumsum(a[:, 0]), lambda L, x: x[:, 0].cumsum(0)),
        "`x[:, 0].cumprod(0)` of 1 + x / 1000": (lambda a: np.cumprod(1 + (a[:, 0] - 3) / np.float32(1000)),
                                                 lambda L, x: (1 + (x[:, 0] - 3) / 1000).cumprod(0)),
        "`logcumsumexp(x[:, 0], 0)`": (lambda a: np.logaddexp.accumulate(a[:, 0]),
                                       lambda L, x: L.logcumsumexp(x[:, 0], 0)),
    }


def _error(result, truth: np.ndarray) -> float:
    values = np.asarray(result, dtype=np.float64)
    return float(np.abs(values - truth).max() / np.abs(truth).max())


def report() -> str:
    import torch

    import ember

    values = (np.random.default_rng(0).standard_normal((1_000_000, 3)) + 3).astype(np.float32)
    lines = ["| op | NumPy's own | torch | ember |", "|---|---|---|---|"]
    for label, (by_numpy, by_framework) in _ops().items():
        truth = by_framework(torch, torch.from_numpy(values.astype(np.float64))).numpy()
        errors = (_error(by_numpy(values), truth), _error(by_framework(torch, torch.from_numpy(values)).numpy(), truth),
                  _error(by_framework(ember, ember.tensor(values)).numpy(), truth))
        lines.append(f"| {label} | " + " | ".join(f"{e:.1e}" for e in errors) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(report())
