"""Training steps of two MLPs in ember, against torch 2.13 and against the same step written by hand in NumPy.

A step is ``zero_grad``, forward (Linear, ReLU, Linear, ReLU, Linear), cross-entropy of class indices,
``backward`` and SGD with momentum 0.9. The hand-written step does the same arithmetic on NumPy arrays:
the products and their transposes, a stable log-softmax, the momentum buffers updated in place. All three
programs use one BLAS thread. Each repeat times the three back to back; a ratio is the median of the
per-repeat ratios.

- small: 64-128-128-10, batch 64 (Python overhead matters);
- large: 784-1024-1024-10, batch 256 (BLAS is the limit).

Run: ``OPENBLAS_NUM_THREADS=1 PYTHONPATH=src python bench/bench_mlp.py``.
"""
from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from _timing import compare  # noqa: E402

SIZES = {"small": ((64, 128, 128, 10), 64, 200), "large": ((784, 1024, 1024, 10), 256, 5)}  # widths, batch, steps
LR, MOMENTUM = 0.01, 0.9


def _data(widths: tuple, batch: int) -> tuple:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch, widths[0])).astype(np.float32)
    return x, rng.integers(0, widths[-1], batch)


def _framework_step(lib, widths: tuple, batch: int):
    lib.manual_seed(0)
    nn = lib.nn
    layers = []
    for i, (n_in, n_out) in enumerate(zip(widths, widths[1:])):
        layers += [nn.Linear(n_in, n_out)] + ([nn.ReLU()] if i < len(widths) - 2 else [])
    model = nn.Sequential(*layers)
    optimizer = lib.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    x, y = (lib.tensor(a) for a in _data(widths, batch))
    cross_entropy = nn.functional.cross_entropy

    def step():
        optimizer.zero_grad()
        cross_entropy(model(x), y).backward()
        optimizer.step()
    return step


def _numpy_step(widths: tuple, batch: int):
    """The same step by hand: weights ``[out, in]`` as torch's, biases, and one momentum buffer each."""
    rng = np.random.default_rng(0)
    params = []
    for n_in, n_out in zip(widths, widths[1:]):
        bound = 1 / np.sqrt(n_in)
        params += [rng.uniform(-bound, bound, (n_out, n_in)).astype(np.float32),
                   rng.uniform(-bound, bound, n_out).astype(np.float32)]
    buffers = [None] * len(params)
    x, y = _data(widths, batch)
    rows = np.arange(batch)

    def step():
        activations, h = [x], x
        for i in range(0, len(params), 2):
            h = h @ params[i].T + params[i + 1]
            if i < len(params) - 2:
                h = np.maximum(h, 0)
            activations.append(h)
        shifted = h - h.max(axis=1, keepdims=True)
        exp = np.exp(shifted)
        total = exp.sum(axis=1, keepdims=True)
        _loss = (np.log(total[:, 0]) - shifted[rows, y]).mean()
        g = exp / total
        g[rows, y] -= 1
        g /= batch
        grads = [None] * len(params)
        for i in range(len(params) - 2, -1, -2):
            inp = activations[i // 2]
            grads[i], grads[i + 1] = g.T @ inp, g.sum(axis=0)
            if i:
                g = (g @ params[i]) * (inp > 0)
        for i, (p, grad) in enumerate(zip(params, grads)):
            if buffers[i] is None:
                buffers[i] = grad.copy()
            else:
                buffers[i] *= MOMENTUM
                buffers[i] += grad
            p -= LR * buffers[i]
    return step


def run(repeats: int = 7) -> dict:
    """Per size: median ms per step of each program, and ember's ratios to torch and to NumPy."""
    import torch

    import ember

    torch.set_num_threads(1)
    results = {}
    for name, (widths, batch, number) in SIZES.items():
        programs = {"ember": _framework_step(ember, widths, batch), "torch": _framework_step(torch, widths, batch),
                    "numpy": _numpy_step(widths, batch)}
        r = compare(programs, repeats, number)
        results[name] = {"ember_ms": r["ember_ms"], "torch_ms": r["torch_ms"], "numpy_ms": r["numpy_ms"],
                         "to_torch": r["ember/torch"], "to_numpy": r["ember/numpy"]}
    return results


def report(results: dict) -> str:
    lines = ["| MLP, batch | ember ms | torch ms | NumPy ms | ember / torch | ember / NumPy | goal |",
             "|---|---|---|---|---|---|---|"]
    goals = {"small": "≤ 0.6 torch, ≤ 1.15 NumPy", "large": "≤ 1.05 NumPy"}
    for name, r in results.items():
        widths, batch, _ = SIZES[name]
        lines.append(f"| {'-'.join(map(str, widths))}, {batch} | {r['ember_ms']:.3f} | {r['torch_ms']:.3f} | "
                     f"{r['numpy_ms']:.3f} | {r['to_torch']:.2f} | {r['to_numpy']:.2f} | {goals[name]} |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(report(run()))
