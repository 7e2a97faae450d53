"""One training step of a LeNet-style CNN, ember against torch 2.13: speed and peak memory.

The model: Conv2d(1, 16, 5, padding=2), ReLU, MaxPool2d(2), Conv2d(16, 32, 5, padding=2), ReLU,
MaxPool2d(2), Flatten, Linear(1568, 10); a batch of 64 1x28x28 images; ``F.cross_entropy``; SGD with
momentum. A step is ``zero_grad``, forward, ``backward`` and ``step``. Each repeat times both
libraries back to back; the ratio is the median of the per-repeat ratios.

Peak memory: each library steps in a fresh interpreter, and the figure is how far the process's
peak resident size grows past what it held after building the model and data.

Steady memory: the resident size after the first step and every 100 steps up to 1,000, each library in a
fresh interpreter; flat means the steps leave nothing behind.

Times are CPU time (``time.process_time``). Run ``python bench/bench_cnn.py``.
"""
from __future__ import annotations

import os

# one thread each: the host's cores are shared, and torch is held to one thread too
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

from _timing import compare, in_fresh_interpreter  # noqa: E402

BATCH = 64


def _step(lib):
    lib.manual_seed(0)
    nn, F = lib.nn, lib.nn.functional
    model = nn.Sequential(nn.Conv2d(1, 16, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Conv2d(16, 32, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Flatten(), nn.Linear(32 * 7 * 7, 10))
    optimizer = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x, y = lib.randn(BATCH, 1, 28, 28), lib.randint(0, 10, (BATCH,))

    def step():
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        optimizer.step()

    return step


def run(repeats: int = 7, number: int = 5) -> dict:
    """Median ms per step for each library, and ember's ratio to torch."""
    import ember
    import torch

    torch.set_num_threads(1)
    r = compare({lib.__name__: _step(lib) for lib in (ember, torch)}, repeats, number)
    return {"ember_ms": r["ember_ms"], "torch_ms": r["torch_ms"], "ratio": r["ember/torch"]}


def peak_memory() -> dict:
    """MB the peak resident size grows by over three steps, each library in its own interpreter."""
    body = "before = status_kb('VmHWM')\nfor _ in range(3):\n    step()\nprint(status_kb('VmHWM') - before)"
    return {lib: int(in_fresh_interpreter("bench_cnn", lib, body)) / 1024 for lib in ("ember", "torch")}


def steady_memory(steps: int = 1000, every: int = 100) -> dict:
    """Resident MB after step 1 and every ``every`` steps of ``steps``, each library in its own interpreter."""
    body = (f"for done in range(1, {steps} + 1):\n    step()\n"
            f"    if done == 1 or done % {every} == 0:\n        print(done, status_kb('VmRSS'))")
    table = {}
    for lib in ("ember", "torch"):
        lines = in_fresh_interpreter("bench_cnn", lib, body).splitlines()
        table[lib] = {int(done): int(kb) / 1024 for done, kb in (line.split() for line in lines)}
    return table


def report() -> str:
    r, m, s = run(), peak_memory(), steady_memory()
    lines = [f"step: ember {r['ember_ms']:.1f} ms, torch {r['torch_ms']:.1f} ms, ember / torch {r['ratio']:.2f} "
             "(goal <= 1.0)",
             f"peak memory growth: ember {m['ember']:.0f} MB, torch {m['torch']:.0f} MB (goal: ember <= torch)", "",
             "| after step | " + " | ".join(str(done) for done in s["ember"]) + " |",
             "|---|" + "---|" * len(s["ember"])]
    for lib, row in s.items():
        lines.append(f"| {lib} resident MB | " + " | ".join(f"{mb:.0f}" for mb in row.values()) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(report())
