"""Peak memory of a training step when half of the network is frozen, ember against torch 2.13.

Two networks of 8 layers of ``Linear(1024, 1024)``, a batch of 4,096 float32 rows (16 MB an activation):
with ``ReLU`` between the layers, and a plain stack of products (``bias=False``, no activation). One half's
parameters are frozen (``requires_grad_(False)``). A frozen layer that sits after a trained one still passes
gradients back, but its weight needs none: its product then has no use for its input, and an op that saves only
what the needed gradients read keeps none of those 16 MB inputs alive. (With ReLU in between, the input of a
layer is the ReLU output that ReLU's own backward keeps anyway; a frozen first half records nothing at all, as no
input there needs a gradient.)

Each case runs in a fresh interpreter; the figure is the growth of the process's peak resident memory over one
forward and backward, beyond what the parameters and the input already hold.
"""
from __future__ import annotations

import json
import subprocess
import sys

LAYERS, WIDTH, BATCH = 8, 1024, 4096

_PROGRAM = """
import json, os, resource, sys
import numpy as np

def peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

def resident_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20

name, frozen, layers, width, batch = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
plain = sys.argv[6] == "plain"
lib = __import__(name)
if name == "torch":
    lib.set_num_threads(1)
lib.manual_seed(0)
if plain:
    model = lib.nn.Sequential(*[lib.nn.Linear(width, width, bias=False) for _ in range(layers)])
else:
    model = lib.nn.Sequential(*[m for _ in range(layers) for m in (lib.nn.Linear(width, width), lib.nn.ReLU())])
half = list(model)[: len(model) // 2] if frozen == "first" else list(model)[len(model) // 2:]
for module in half if frozen != "none" else []:
    module.requires_grad_(False)
x = lib.randn(batch, width)
small = lib.randn(8, width)
model(small).sum().backward()  # warm-up on a small batch: set-up costs are not the step's
model.zero_grad()
before = max(peak_mb(), resident_mb())
model(x).sum().backward()
print(json.dumps({"step_mb": peak_mb() - before}))
"""


def _measure(name: str, frozen: str, network: str) -> float:
    result = subprocess.run(
        [sys.executable, "-c", _PROGRAM, name, frozen, str(LAYERS), str(WIDTH), str(BATCH), network],
        capture_output=True, text=True, check=True)
    return json.loads(result.stdout.strip().splitlines()[-1])["step_mb"]


def run() -> dict:
    return {(network, frozen): {name: _measure(name, frozen, network) for name in ("ember", "torch")}
            for network in ("relu", "plain") for frozen in ("none", "first", "second")}


def report(results: dict) -> str:
    activation = BATCH * WIDTH * 4 / 2**20
    lines = [f"{LAYERS} layers of Linear({WIDTH}, {WIDTH}), batch {BATCH} (an activation is {activation:.0f} MB).",
             "", "| network | frozen half | ember, MB | torch, MB | ember / torch |", "|---|---|---|---|---|"]
    for (network, frozen), r in results.items():
        kind = "Linear + ReLU" if network == "relu" else "Linear (no bias), no activation"
        lines.append(f"| {kind} | {frozen} | {r['ember']:.0f} | {r['torch']:.0f} | {r['ember'] / r['torch']:.2f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(report(run()))
