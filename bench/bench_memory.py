"""Memory a recorded graph holds, ember against torch 2.13 and hand-written NumPy.

The workload: 40 steps of ``y = (y * w).tanh()`` on 1,000,000-element float32
tensors, with ``x`` (the start) requiring grad. Backward needs every tanh
output, so any library must keep about 40 arrays of 4 MB until backward runs.
Each library runs in a fresh interpreter; the figure is the growth of the
process's resident memory while the graph is alive. (What is left after
backward says more about each allocator than about the library: freed memory
is not always handed back to the system, so it is not reported.)
"""
from __future__ import annotations

import json
import subprocess
import sys

STEPS = 40
SIZE = 1_000_000

_PROGRAM = """
import gc, json, os, sys
import numpy as np

def resident_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20

steps, size, name = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
rng = np.random.default_rng(0)
x0, w0 = rng.standard_normal(size, dtype=np.float32), rng.standard_normal(size, dtype=np.float32)
if name == "numpy":
    np.tanh(x0 * w0)  # the same warm-up as the libraries get
    start = resident_mb()
    kept, y = [], x0
    for _ in range(steps):
        y = np.tanh(y * w0)
        kept.append(y)  # what a hand-written backward needs: every tanh output
    graph = resident_mb() - start
else:
    lib = __import__(name)
    if name == "torch":
        lib.set_num_threads(1)  # one thread, as NumPy and ember: per-thread memory pools would count as the graph
    x, w = lib.from_numpy(x0).requires_grad_(), lib.from_numpy(w0)
    (x * w).tanh().sum().backward()  # warm-up: whatever a library sets up on its first ops is not the graph
    gc.collect()
    start = resident_mb()
    y = x
    for _ in range(steps):
        y = (y * w).tanh()
    graph = resident_mb() - start
print(json.dumps({"graph_mb": graph}))
"""


def _measure(name: str) -> dict:
    result = subprocess.run([sys.executable, "-c", _PROGRAM, str(STEPS), str(SIZE), name],
                            capture_output=True, text=True, check=True)
    return json.loads(result.stdout.strip().splitlines()[-1])


def run() -> dict:
    return {name: _measure(name) for name in ("ember", "torch", "numpy")}


def report(results: dict) -> str:
    needed = STEPS * SIZE * 4 / 2**20
    lines = [f"Minimum the graph needs: {STEPS} tanh outputs of {SIZE:,} float32 = {needed:.0f} MB.", "",
             "| | resident growth while the graph is alive, MB | / the minimum | / torch's |", "|---|---|---|---|"]
    torch_graph = results["torch"]["graph_mb"]
    for name, r in results.items():
        lines.append(f"| {name} | {r['graph_mb']:.0f} | {r['graph_mb'] / needed:.2f} | {r['graph_mb'] / torch_graph:.2f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(report(run()))
