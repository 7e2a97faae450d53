"""ember.func against torch.func 2.13 and against a Python loop: per-sample gradients and a Jacobian.

1. Per-sample gradients of a 64-128-10 MLP (float32) over a batch of 64 with ``vmap(grad(loss))``, against
   ember's own Python loop of ``grad`` over the samples and against torch.func's ``vmap(grad(loss))``.
2. ``jacrev`` of a 100 -> 100 function, ``tanh(W @ x + b)`` (float32), against torch.func's ``jacrev``.

Each case is timed with ``time.process_time`` over several repeats (both libraries interleaved, one thread);
the figures are medians.

Run: ``PYTHONPATH=src python bench/bench_func.py``.
"""
from __future__ import annotations

import os

# One BLAS thread for NumPy, as torch gets one below: on a shared machine a second thread waiting for a busy
# core makes a small product with a transposed operand take milliseconds (set before NumPy is imported).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

BATCH, REPEATS = 64, 9


def _mlp_case(lib):
    rng = np.random.default_rng(0)
    model = lib.nn.Sequential(lib.nn.Linear(64, 128), lib.nn.ReLU(), lib.nn.Linear(128, 10))
    with lib.no_grad():
        for p in model.parameters():
            p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.1))
    params = {k: v.detach() for k, v in model.named_parameters()}
    x = lib.tensor(rng.standard_normal((BATCH, 64)).astype(np.float32))
    y = lib.tensor(rng.integers(0, 10, BATCH))
    F = lib.func

    def loss(p, sample, target):
        out = F.functional_call(model, p, (sample.unsqueeze(0),))
        return lib.nn.functional.cross_entropy(out, target.unsqueeze(0))

    per_sample = F.vmap(F.grad(loss), in_dims=(None, 0, 0))
    one = F.grad(loss)
    return (lambda: per_sample(params, x, y)), (lambda: [one(params, x[i], y[i]) for i in range(BATCH)])


def _jacobian_case(lib):
    rng = np.random.default_rng(1)
    w = lib.tensor(rng.standard_normal((100, 100)).astype(np.float32) * 0.1)
    b = lib.tensor(rng.standard_normal(100).astype(np.float32))
    x = lib.tensor(rng.standard_normal(100).astype(np.float32))
    jac = lib.func.jacrev(lambda v: lib.tanh(w @ v + b))
    return lambda: jac(x)


def _seconds(program, number: int) -> float:
    start = time.process_time()
    for _ in range(number):
        program()
    return (time.process_time() - start) / number


def _medians(programs: dict, number: int) -> dict:
    times = {name: [] for name in programs}
    for name, program in programs.items():
        program()  # warm up
    for _ in range(REPEATS):
        for name, program in programs.items():
            times[name].append(_seconds(program, number))
    return {name: statistics.median(values) for name, values in times.items()}


def main() -> None:
    import torch

    import ember

    torch.set_num_threads(1)  # one thread, as ember: the comparison is of the per-call work, not of the cores
    ember_vmap, ember_loop = _mlp_case(ember)
    torch_vmap, _ = _mlp_case(torch)
    t = _medians({"ember vmap(grad)": ember_vmap, "torch.func vmap(grad)": torch_vmap}, 5)
    t.update(_medians({"ember loop of grad": ember_loop}, 1))
    j = _medians({"ember jacrev": _jacobian_case(ember), "torch.func jacrev": _jacobian_case(torch)}, 20)
    print("| case | ember, ms | reference, ms | ember / reference |")
    print("|---|---|---|---|")
    rows = [("per-sample grads, MLP 64-128-10, batch 64: vmap(grad) vs torch.func", "ember vmap(grad)",
             "torch.func vmap(grad)", t),
            ("per-sample grads: vmap(grad) vs ember's Python loop of grad", "ember vmap(grad)", "ember loop of grad", t),
            ("jacrev of tanh(W @ x + b), 100 -> 100, vs torch.func", "ember jacrev", "torch.func jacrev", j)]
    for label, mine, ref, table in rows:
        print(f"| {label} | {table[mine] * 1e3:.2f} | {table[ref] * 1e3:.2f} | {table[mine] / table[ref]:.2f} |")


if __name__ == "__main__":
    main()
