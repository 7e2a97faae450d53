"""cdist's and pdist's float32 error against float64, ember beside torch: float32 x1 [512, 64], x2 [300, 64]
of normal values, a tenth of x1's rows set near rows of x2 (1e-3 away: where the product form cancels).

Errors are the largest absolute difference from the float64 result (of the same library and mode), in
units of the float32 spacing at the largest value, for the distances and for the gradient of a weighted
sum with respect to x1. Run ``python bench/accuracy_cdist.py``.
"""
from __future__ import annotations

import math

import numpy as np

MODES = {"mm": "use_mm_for_euclid_dist", "no mm": "donot_use_mm_for_euclid_dist"}


def _inputs():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((512, 64)), rng.standard_normal((300, 64))
    a[::10] = b[rng.integers(0, 300, len(a[::10]))] + 1e-3 * rng.standard_normal((len(a[::10]), 64))
    return a, b, rng.uniform(-1, 1, (512, 300))


def _run(lib, dtype, a, b, weights, function):
    x1 = lib.tensor(a, dtype=dtype, requires_grad=True)
    x2 = lib.tensor(b, dtype=dtype)
    distances = function(lib, x1, x2)
    weighing = weights.reshape(-1)[:distances.numel()].reshape(distances.shape)
    (distances * lib.tensor(weighing, dtype=dtype)).sum().backward()
    return distances.detach().double().numpy(), x1.grad.double().numpy()


def _ulps(approximate: np.ndarray, exact: np.ndarray) -> float:
    spacing = np.spacing(np.float32(np.abs(exact).max()))
    return float(np.abs(approximate - exact).max() / spacing)


def report() -> str:
    import torch

    import ember

    a, b, weights = _inputs()
    cases = {f"cdist p={p} {mode}": (lambda lib, x1, x2, p=p, m=m: lib.cdist(x1, x2, p, compute_mode=m))
             for p in (2.0,) for mode, m in MODES.items()}
    cases.update({f"cdist p={p}": (lambda lib, x1, x2, p=p: lib.cdist(x1, x2, p)) for p in (0.5, 1.0, 3.0, math.inf)})
    cases.update({f"pdist p={p}": (lambda lib, x1, x2, p=p: lib.pdist(x1, p)) for p in (1.0, 2.0, 3.0)})
    lines = ["| float32, ulps of the largest value | ember distances | torch distances | ember gradient | "
             "torch gradient |", "|---|---|---|---|---|"]
    for name, function in cases.items():
        errors = {}
        for lib in (ember, torch):
            single = _run(lib, lib.float32, a, b, weights, function)
            double = _run(lib, lib.float64, a, b, weights, function)
            errors[lib.__name__] = [_ulps(s, d) for s, d in zip(single, double)]
        lines.append(f"| {name} | {errors['ember'][0]:.1f} | {errors['torch'][0]:.1f} | {errors['ember'][1]:.1f} | "
                     f"{errors['torch'][1]:.1f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(report())
