"""One training step of a LeNet-style CNN, ember against torch 2.13: speed and peak memory.

The model: Conv2d(1, 16, 5, padding=2), ReLU, MaxPool2d(2), Conv2d(16, 32, 5, padding=2), ReLU,
MaxPool2d(2), Flatten, Linear(1568, 10); a batch of 64 1x28x28 images; ``F.cross_entropy``; SGD with
momentum. A step is ``zero_grad``, forward, ``backward`` and ``step``. Each repeat times both
libraries back to back; the ratio is the median of the per-repeat ratios.

Peak memory: each library steps in a fresh interpreter, and the figure is how far the process's
peak resident size grows past what it held after building the model and data.

Steady memory: the resident size after the first step and every 100 steps up to 1,000, each library in a
fresh interpreter; flat means the steps leave nothing behind.

Per convolution: each layer's forward alone and with its backward (the gradients the step asks for: the first
layer's input needs none), ember against torch, as the step is made mostly of them.

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


# the model's two convolutions: (input shape, weight shape, whether the input needs its gradient, as in the step)
LAYERS = {"conv1": ((BATCH, 1, 28, 28), (16, 1, 5, 5), False), "conv2": ((BATCH, 16, 14, 14), (32, 16, 5, 5), True)}


def _layer(lib, input_shape: tuple, weight_shape: tuple, input_grad: bool) -> dict:
    """The layer's forward alone and its forward with a backward, as programs to time."""
    lib.manual_seed(0)
    x = lib.randn(*input_shape, requires_grad=input_grad)
    w, b = lib.randn(*weight_shape, requires_grad=True), lib.randn(weight_shape[0], requires_grad=True)
    grad = lib.randn(input_shape[0], weight_shape[0], *input_shape[2:])

    def forward():
        with lib.no_grad():
            lib.nn.functional.conv2d(x, w, b, padding=2)

    def both():
        lib.nn.functional.conv2d(x, w, b, padding=2).backward(grad)

    return {"forward": forward, "forward+backward": both}


def layers(repeats: int = 7, number: int = 10) -> dict:
    """Per convolution of the model, median ms of ember and torch and their ratio, for the forward alone and for
    the forward with its backward (the gradients the step asks for)."""
    import ember
    import torch

    torch.set_num_threads(1)
    table = {}
    for layer, shapes in LAYERS.items():
        programs = {lib.__name__: _layer(lib, *shapes) for lib in (ember, torch)}
        for part in ("forward", "forward+backward"):
            r = compare({name: p[part] for name, p in programs.items()}, repeats, number)
            table[f"{layer} {part}"] = {"ember_ms": r["ember_ms"], "torch_ms": r["torch_ms"],
                                        "ratio": r["ember/torch"]}
    return table


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
    r, by_layer, m, s = run(), layers(), peak_memory(), steady_memory()
    lines = [f"step: ember {r['ember_ms']:.1f} ms, torch {r['torch_ms']:.1f} ms, ember / torch {r['ratio']:.2f} "
             "(goal <= 1.0)"]
    lines += [f"  {name}: ember {t['ember_ms']:.2f} ms, torch {t['torch_ms']:.2f} ms, ember / torch {t['ratio']:.2f}"
              for name, t in by_layer.items()]
    lines += [f"peak memory growth: ember {m['ember']:.0f} MB, torch {m['torch']:.0f} MB (goal: ember <= torch)", "",
             "| after step | " + " | ".join(str(done) for done in s["ember"]) + " |",
             "|---|" + "---|" * len(s["ember"])]
    for lib, row in s.items():
        lines.append(f"| {lib} resident MB | " + " | ".join(f"{mb:.0f}" for mb in row.values()) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(report())
