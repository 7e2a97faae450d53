"""What ``set_num_threads`` does: a 1024 x 1024 float32 matmul and a Linear layer's forward and backward,
with 1 thread and with every CPU, in ember (NumPy's BLAS pool, through threadpoolctl) and in torch.

Wall time (``time.perf_counter``: threads shorten wall time, not CPU time) and CPU time
(``time.process_time``), median of the repeats. Run ``python bench/bench_threads.py``.
"""
from __future__ import annotations

import os
import statistics
import time


def _case(lib, name: str):
    lib.manual_seed(0)
    if name == "matmul 1024":
        a, b = lib.randn(1024, 1024), lib.randn(1024, 1024)
        return lambda: a @ b
    layer = lib.nn.Linear(1024, 1024)
    x = lib.randn(512, 1024)

    def step():
        layer.zero_grad()
        layer(x).sum().backward()

    return step


def _times(fn, repeats: int) -> tuple:
    fn()
    walls, cpus = [], []
    for _ in range(repeats):
        w, c = time.perf_counter(), time.process_time()
        fn()
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c)
    return statistics.median(walls) * 1e3, statistics.median(cpus) * 1e3


def run(repeats: int = 15) -> list:
    import torch

    import ember

    rows = []
    cpus = os.cpu_count() or 1
    for name in ("matmul 1024", "Linear(1024, 1024) step, batch 512"):
        for lib in (ember, torch):
            before = lib.get_num_threads()
            fn = _case(lib, name)
            figures = {}
            for threads in (1, cpus):
                lib.set_num_threads(threads)
                figures[threads] = _times(fn, repeats)
            lib.set_num_threads(before)
            rows.append((name, lib.__name__, figures[1], figures[cpus], cpus))
    return rows


def report(rows: list) -> str:
    lines = ["| case | library | 1 thread: wall ms (CPU ms) | N threads: wall ms (CPU ms) | N | wall speed-up |",
             "|---|---|---|---|---|---|"]
    for name, lib, one, many, n in rows:
        lines.append(f"| {name} | {lib} | {one[0]:.2f} ({one[1]:.2f}) | {many[0]:.2f} ({many[1]:.2f}) | {n} | "
                     f"{one[0] / many[0]:.2f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(report(run()))
