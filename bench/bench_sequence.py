"""Training steps of sequence models in ember against torch 2.13: a pre-norm transformer encoder block and an LSTM.

Each step is forward, a mean-squared loss, backward and an Adam update, on the same shapes in both libraries
(float32, torch on one thread as ember); ember's ratio to torch is the median of per-repeat ratios of interleaved
timeit repeats.

- transformer: ``TransformerEncoderLayer(128, 4, 512, dropout=0, norm_first=True, batch_first=True)``,
  batch 8, sequence 64.
- lstm: ``LSTM(128, 128)``, sequence 32, batch 16.

Times are CPU time (``time.process_time``). Run: ``PYTHONPATH=src python bench/bench_sequence.py``.
"""
from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one thread, as torch here
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from _timing import compare  # noqa: E402

NUMBER, REPEATS = 5, 9


def _step(lib, model, x):
    optimizer = lib.optim.Adam(model.parameters(), lr=1e-4)
    target = lib.zeros(x.shape)

    def step():
        optimizer.zero_grad()
        out = model(x)
        out = out[0] if isinstance(out, tuple) else out
        lib.nn.functional.mse_loss(out, target[..., :out.shape[-1]]).backward()
        optimizer.step()
    return step


def _transformer(lib):
    model = lib.nn.TransformerEncoderLayer(128, 4, 512, dropout=0.0, norm_first=True, batch_first=True)
    x = lib.tensor(np.random.default_rng(0).standard_normal((8, 64, 128)).astype(np.float32))
    return _step(lib, model, x)


def _lstm(lib):
    model = lib.nn.LSTM(128, 128)
    x = lib.tensor(np.random.default_rng(0).standard_normal((32, 16, 128)).astype(np.float32))
    return _step(lib, model, x)


def run() -> dict:
    """Per model: median ms per step of each library and ember's ratio to torch."""
    import torch

    import ember

    torch.set_num_threads(1)
    results = {}
    for name, build in [("transformer block", _transformer), ("lstm", _lstm)]:
        programs = {"torch": build(torch), "ember": build(ember)}
        r = compare(programs, REPEATS, NUMBER)
        results[name] = {"torch_ms": r["torch_ms"], "ember_ms": r["ember_ms"], "ratio": r["ember/torch"]}
    return results


def report(results: dict) -> str:
    goals = {"transformer block": 1.0, "lstm": 1.5}
    lines = ["| model | torch ms | ember ms | ember / torch | goal |", "|---|---|---|---|---|"]
    for name, r in results.items():
        lines.append(f"| {name} | {r['torch_ms']:.2f} | {r['ember_ms']:.2f} | {r['ratio']:.2f} | ≤ {goals[name]} |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(report(run()))
