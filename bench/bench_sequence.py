"""Training steps of sequence models in ember against torch 2.13: a pre-norm transformer encoder block and an LSTM.

Each step is forward, a mean-squared loss, backward and an Adam update, on the same shapes in both libraries
(float32, torch on one thread as ember); ember's ratio to torch is the median of per-repeat ratios of interleaved
timeit repeats.

- transformer: ``TransformerEncoderLayer(128, 4, 512, dropout=0, norm_first=True, batch_first=True)``,
  batch 8, sequence 64.
- lstm: ``LSTM(128, 128)``, sequence 32, batch 16.

Run: ``PYTHONPATH=src python bench/bench_sequence.py``.
"""
from __future__ import annotations

import statistics
import timeit

import numpy as np

NUMBER, REPEATS = 3, 5


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


def main() -> None:
    import torch

    import ember

    torch.set_num_threads(1)
    for name, build in [("transformer block", _transformer), ("lstm", _lstm)]:
        programs = {"torch": build(torch), "ember": build(ember)}
        times = {lib: [] for lib in programs}
        for _ in range(REPEATS):
            for lib, program in programs.items():
                times[lib].append(timeit.timeit(program, number=NUMBER) / NUMBER * 1e3)
        ratio = statistics.median(e / t for e, t in zip(times["ember"], times["torch"]))
        print(f"{name:18s} torch {statistics.median(times['torch']):7.2f} ms   ember "
              f"{statistics.median(times['ember']):7.2f} ms   ratio {ratio:.2f}")


if __name__ == "__main__":
    main()
