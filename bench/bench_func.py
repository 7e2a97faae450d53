"""ember.func against torch.func 2.13 and against a Python loop: per-sample gradients and a Jacobian.

1. Per-sample gradients of a 64-128-10 MLP (float32) over a batch of 64 with ``vmap(grad(loss))``, against
   ember's own Python loop of ``grad`` over the samples and against torch.func's ``vmap(grad(loss))``.
2. ``jacrev`` of a 100 -> 100 function, ``tanh(W @ x + b)`` (float32), against torch.func's ``jacrev``.
3. ``autograd.grad(..., is_grads_batched=True)`` with 64 grad_outputs through a 64-128-10 tanh MLP (float32, 32
   samples): ember's one batched backward against a Python loop of 64 backward passes (what it ran before, and
   still runs where a formula cannot run batched) and against torch's.
4. Forward products: ``jvp`` of the MLP over a batch, ``jacfwd`` of the 100 -> 100 function, and ``hessian`` of a
   scalar function of 100 inputs, against torch.func, and each against ember's other way to the same products
   (the derivative of a vector-Jacobian product), which is how the transforms' choice between them was made.

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


def _batched_grad_case(lib):
    """(one batched backward, a loop of one backward per grad_output) for 64 grad_outputs through a small MLP."""
    rng = np.random.default_rng(2)
    w1, w2 = (lib.tensor(rng.standard_normal(shape).astype(np.float32) * 0.1, requires_grad=True)
              for shape in ((64, 128), (128, 10)))
    x = lib.tensor(rng.standard_normal((32, 64)).astype(np.float32))
    out = lib.tanh(x @ w1) @ w2
    vs = lib.tensor(rng.standard_normal((BATCH, 32, 10)).astype(np.float32))

    def batched():
        return lib.autograd.grad(out, (w1, w2), vs, retain_graph=True, is_grads_batched=True)

    def loop():
        entries = [lib.autograd.grad(out, (w1, w2), v, retain_graph=True) for v in vs]
        return tuple(lib.stack(parts) for parts in zip(*entries))

    return batched, loop


def _forward_cases(lib) -> dict:
    rng = np.random.default_rng(2)
    w = lib.tensor(rng.standard_normal((100, 100)).astype(np.float32) * 0.1)
    b = lib.tensor(rng.standard_normal(100).astype(np.float32))
    x = lib.tensor(rng.standard_normal(100).astype(np.float32))
    w1 = lib.tensor(rng.standard_normal((128, 64)).astype(np.float32) * 0.1)
    w2 = lib.tensor(rng.standard_normal((10, 128)).astype(np.float32) * 0.1)
    batch = lib.tensor(rng.standard_normal((BATCH, 64)).astype(np.float32))
    F = lib.func
    mlp = lambda v: (lib.relu(v @ w1.T) @ w2.T).softmax(-1)  # noqa: E731
    layer = lambda v: lib.tanh(w @ v + b)  # noqa: E731
    scalar = lambda v: (lib.tanh(w @ v) ** 2).sum() + (v.sin() * v.exp()).sum()  # noqa: E731
    return {"jvp of the MLP over the batch": lambda: F.jvp(mlp, (batch,), (batch,)),
            "jacfwd, 100 -> 100": lambda: F.jacfwd(layer)(x),
            "hessian, 100 inputs": lambda: F.hessian(scalar)(x)}


def _with_products(name: str, replacement: str, case):
    """``case`` with ember's ``_autograd.<name>`` swapped for ``_autograd.<replacement>`` while it runs."""
    from ember.func import _autograd

    def run():
        kept = getattr(_autograd, name)
        setattr(_autograd, name, getattr(_autograd, replacement))
        try:
            return case()
        finally:
            setattr(_autograd, name, kept)

    return run


def _forward_rows(ember, torch) -> list:
    """(label, ember's time, reference time) for the forward-product cases."""
    mine, theirs = _forward_cases(ember), _forward_cases(torch)
    rows = []
    for name in mine:
        hessian = name == "hessian, 100 inputs"  # hessian ships the vjp derivative; the others forward mode
        other_way = _with_products("_jvp_products", "_forward_products", mine[name]) if hessian else \
            _with_products("_products", "_jvp_products", mine[name])
        programs = {"ember": mine[name], "torch": theirs[name], "ember, vjp derivative": other_way}
        t = _medians(programs, 10)
        rows.append((f"{name}: ember vs torch.func", t["ember"], t["torch"]))
        other = "forward mode" if hessian else "vjp derivative"
        rows.append((f"{name}: ember as shipped vs by {other}", t["ember"], t["ember, vjp derivative"]))
    return rows


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
    ember_batched, ember_grad_loop = _batched_grad_case(ember)
    g = _medians({"ember is_grads_batched": ember_batched, "ember loop of grad per entry": ember_grad_loop,
                  "torch is_grads_batched": _batched_grad_case(torch)[0]}, 5)
    print("| case | ember, ms | reference, ms | ember / reference |")
    print("|---|---|---|---|")
    rows = [("per-sample grads, MLP 64-128-10, batch 64: vmap(grad) vs torch.func", "ember vmap(grad)",
             "torch.func vmap(grad)", t),
            ("per-sample grads: vmap(grad) vs ember's Python loop of grad", "ember vmap(grad)", "ember loop of grad", t),
            ("jacrev of tanh(W @ x + b), 100 -> 100, vs torch.func", "ember jacrev", "torch.func jacrev", j),
            ("autograd.grad(is_grads_batched=True), 64 grad_outputs, MLP: one batched backward vs a loop of 64",
             "ember is_grads_batched", "ember loop of grad per entry", g),
            ("autograd.grad(is_grads_batched=True), 64 grad_outputs, MLP: ember vs torch", "ember is_grads_batched",
             "torch is_grads_batched", g)]
    for label, mine, ref, table in rows:
        print(f"| {label} | {table[mine] * 1e3:.2f} | {table[ref] * 1e3:.2f} | {table[mine] / table[ref]:.2f} |")
    for label, mine, ref in _forward_rows(ember, torch):
        print(f"| {label} | {mine * 1e3:.2f} | {ref * 1e3:.2f} | {mine / ref:.2f} |")


if __name__ == "__main__":
    main()
