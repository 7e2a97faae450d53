"""One training step of a LeNet-style CNN, ember against torch 2.13: speed and peak memory.

The model: Conv2d(1, 16, 5, padding=2), ReLU, MaxPool2d(2), Conv2d(16, 32, 5, padding=2), ReLU,
MaxPool2d(2), Flatten, Linear(1568, 10); a batch of 64 1x28x28 images; cross-entropy (ember:
``log_softmax`` and a gathered negative log-likelihood, torch: ``F.cross_entropy``); SGD with
momentum. A step is ``zero_grad``, forward, ``backward`` and ``step``. Each repeat times both
libraries back to back; the ratio is the median of the per-repeat ratios.

Peak memory: each library steps in a fresh interpreter, and the figure is how far the process's
peak resident size grows past what it held after building the model and data.

Run ``python bench/bench_cnn.py``.
"""
from __future__ import annotations

import os
import statistics
import subprocess
import sys
import timeit

# one thread each: the host's cores are shared, and torch is held to one thread too
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

BATCH = 64


def _step(lib):
    lib.manual_seed(0)
    nn, F = lib.nn, lib.nn.functional
    model = nn.Sequential(nn.Conv2d(1, 16, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Conv2d(16, 32, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Flatten(), nn.Linear(32 * 7 * 7, 10))
    optimizer = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x, y = lib.randn(BATCH, 1, 28, 28), lib.randint(0, 10, (BATCH,))

    def loss_of(logits):
        if lib.__name__ == "torch":
            return F.cross_entropy(logits, y)
        return -F.log_softmax(logits, dim=1).gather(1, y.unsqueeze(1)).mean()

    def step():
        optimizer.zero_grad()
        loss_of(model(x)).backward()
        optimizer.step()

    return step


def run(repeats: int = 7, number: int = 5) -> dict:
    """Median ms per step for each library, and ember's ratio to torch."""
    import ember
    import torch

    torch.set_num_threads(1)
    steps = {lib.__name__: _step(lib) for lib in (ember, torch)}
    times = {name: [] for name in steps}
    for step in steps.values():
        step()
    for _ in range(repeats):
        for name, step in steps.items():
            times[name].append(timeit.timeit(step, number=number) / number * 1e3)
    ratios = [e / t for e, t in zip(times["ember"], times["torch"])]
    return {"ember_ms": statistics.median(times["ember"]), "torch_ms": statistics.median(times["torch"]),
            "ratio": statistics.median(ratios)}


_MEMORY = """
import sys

def peak_kb():  # the process's own high-water mark (ru_maxrss would carry the parent's across exec)
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM"))

sys.path[:0] = {path!r}
import {lib} as lib
if lib.__name__ == "torch":
    lib.set_num_threads(1)
from bench_cnn import _step
step = _step(lib)
before = peak_kb()
for _ in range(3):
    step()
print(peak_kb() - before)
"""


def peak_memory() -> dict:
    """MB the peak resident size grows by over three steps, each library in its own interpreter."""
    path = [p for p in sys.path if p] + [__file__.rsplit("/", 1)[0]]
    return {lib: int(subprocess.run([sys.executable, "-c", _MEMORY.format(path=path, lib=lib)], check=True,
                                    capture_output=True, text=True).stdout) / 1024 for lib in ("ember", "torch")}


if __name__ == "__main__":
    r = run()
    m = peak_memory()
    print(f"step: ember {r['ember_ms']:.1f} ms, torch {r['torch_ms']:.1f} ms, ember / torch {r['ratio']:.2f}")
    print(f"peak memory growth: ember {m['ember']:.0f} MB, torch {m['torch']:.0f} MB")
