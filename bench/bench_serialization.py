"""Saving and loading a 100 MB state dict: ember.save / ember.load against torch.save / torch.load (torch 2.13).

Two state dicts of 100 MB, the same arrays in both libraries: 20 float32 weights of 5 MB with 20 small biases, and
160 weights of 640 KB with 160 biases (as a ResNet-50's 320 tensors). Each library writes its own file (same
format) in one temporary directory. Loading is weights-only in both (the default);
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
SHAPES = ((20, 5 * 2**20 // 4), (160, 640 * 2**10 // 4))  # (weights, elements in each), 100 MB in all


def state_dicts(weights: int, elements: int) -> tuple[dict, dict]:
    rng = np.random.default_rng(0)
    arrays = {}
    for i in range(weights):
        arrays[f"layer{i}.weight"] = rng.standard_normal(elements, dtype=np.float32).reshape(-1, 256)
        arrays[f"layer{i}.bias"] = rng.standard_normal(256, dtype=np.float32)
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
    print(f"median of {REPEATS} runs, CPU time\n")
    print("| state dict | operation | ember, ms | torch, ms | ember / torch |")
    print("|---|---|---|---|---|")
    for weights, elements in SHAPES:
        report(*state_dicts(weights, elements))


def report(mine: dict, theirs: dict) -> None:
    megabytes = sum(t.nbytes for t in mine.values()) / 2**20
    label = f"{len(mine)} tensors, {megabytes:.0f} MB"
    with tempfile.TemporaryDirectory() as directory:
        e_path, t_path = os.path.join(directory, "ember.pt"), os.path.join(directory, "torch.pt")
        rows = [
            ("save", lambda: ember.save(mine, e_path), lambda: torch.save(theirs, t_path)),
            ("load", lambda: ember.load(e_path), lambda: torch.load(t_path)),
            ("load torch's file", lambda: ember.load(t_path), lambda: torch.load(t_path)),
            ("load, mmap=True", lambda: ember.load(e_path, mmap=True), lambda: torch.load(t_path, mmap=True)),
        ]
        for name, ours, reference in rows:
            a, b = median_times(ours, reference)
            print(f"| {label} | {name} | {a * 1e3:.1f} | {b * 1e3:.1f} | {a / b:.2f} |")
        loaded = ember.load(e_path)
        assert all(np.array_equal(loaded[k].numpy(), mine[k].numpy()) for k in mine)


if __name__ == "__main__":
    main()
