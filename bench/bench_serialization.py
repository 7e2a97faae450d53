"""Saving and loading a 100 MB state dict: ember.save / ember.load against torch.save / torch.load (torch 2.13).

The state dict: 20 float32 weights of 5 MB and 20 small biases, the same arrays in both libraries; each library
writes its own file (same format) in one temporary directory. Loading is weights-only in both (the default);
ember's plain load checks every record's CRC as it reads, torch's does not. ``mmap=True`` maps the storages.
Figures: median CPU time (``time.process_time``, which counts the kernel's copying to and from the page cache)
of ``REPEATS`` runs, ember's and torch's in turn, after one warm-up run of each.

Run: ``PYTHONPATH=src python bench/bench_serialization.py``
"""
from __future__ import annotations

import os
import statistics
import tempfile
import time

import numpy as np
import torch

import ember

REPEATS = 11
WEIGHTS, WEIGHT_ELEMENTS = 20, 5 * 2**20 // 4


def state_dicts() -> tuple[dict, dict]:
    rng = np.random.default_rng(0)
    arrays = {}
    for i in range(WEIGHTS):
        arrays[f"layer{i}.weight"] = rng.standard_normal(WEIGHT_ELEMENTS, dtype=np.float32).reshape(-1, 1024)
        arrays[f"layer{i}.bias"] = rng.standard_normal(1024, dtype=np.float32)
    return ({k: ember.from_numpy(a) for k, a in arrays.items()}, {k: torch.from_numpy(a) for k, a in arrays.items()})


def cpu_time(run) -> float:
    start = time.process_time()
    run()
    return time.process_time() - start


def median_times(ours, reference) -> tuple[float, float]:
    """Median CPU times of the two, run in turn so that a busy machine slows both alike."""
    ours(), reference()
    pairs = [(cpu_time(ours), cpu_time(reference)) for _ in range(REPEATS)]
    return statistics.median(p[0] for p in pairs), statistics.median(p[1] for p in pairs)


def main() -> None:
    torch.set_num_threads(1)
    mine, theirs = state_dicts()
    megabytes = sum(t.nbytes for t in mine.values()) / 2**20
    with tempfile.TemporaryDirectory() as directory:
        e_path, t_path = os.path.join(directory, "ember.pt"), os.path.join(directory, "torch.pt")
        rows = [
            ("save", lambda: ember.save(mine, e_path), lambda: torch.save(theirs, t_path)),
            ("load", lambda: ember.load(e_path), lambda: torch.load(t_path)),
            ("load torch's file", lambda: ember.load(t_path), lambda: torch.load(t_path)),
            ("load, mmap=True", lambda: ember.load(e_path, mmap=True), lambda: torch.load(t_path, mmap=True)),
        ]
        print(f"state dict of {len(mine)} tensors, {megabytes:.0f} MB; median of {REPEATS} runs, CPU time\n")
        print("| operation | ember, ms | torch, ms | ember / torch |")
        print("|---|---|---|---|")
        for name, ours, reference in rows:
            a, b = median_times(ours, reference)
            print(f"| {name} | {a * 1e3:.1f} | {b * 1e3:.1f} | {a / b:.2f} |")
        loaded = ember.load(e_path)
        assert all(np.array_equal(loaded[k].numpy(), mine[k].numpy()) for k in mine)


if __name__ == "__main__":
    main()
