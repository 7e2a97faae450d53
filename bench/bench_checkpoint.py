"""Peak memory of one training step of a deep MLP, plain and with activation checkpointing.

The workload: an MLP of ``DEPTH`` Linear(``WIDTH``, ``WIDTH``) + Tanh layers
on a batch of ``BATCH`` float32 rows; one forward, ``.sum().backward()``.
Plain, backward needs every layer's input and tanh output alive at once;
``checkpoint_sequential`` over ``SEGMENTS`` segments keeps only the segments'
inputs and one segment's graph at a time (recomputing the forward in backward).
Each run is a fresh interpreter; the figure is the growth of the peak resident
memory (``ru_maxrss``) over the peak before the step, when the model and batch
already exist; it includes the parameters' gradients (12 MB here), which both
runs allocate.

Run: ``PYTHONPATH=src python bench/bench_checkpoint.py``
"""
from __future__ import annotations

import subprocess
import sys

DEPTH, WIDTH, BATCH, SEGMENTS = 48, 256, 4096, 8

_PROGRAM = """
import resource, sys
import numpy as np
import ember
from ember.utils.checkpoint import checkpoint_sequential

depth, width, batch, segments, mode = (
    int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5])
ember.manual_seed(0)
layers = []
for _ in range(depth):
    layers += [ember.nn.Linear(width, width), ember.nn.Tanh()]
model = ember.nn.Sequential(*layers)
x = ember.tensor(np.random.default_rng(0).standard_normal((batch, width), dtype=np.float32), requires_grad=True)
with ember.no_grad():
    model(x[:2])  # warm-up on two rows (first-call costs), without gradients: the step's memory is measured
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
out = model(x) if mode == "plain" else checkpoint_sequential(model, segments, x, use_reentrant=False)
out.sum().backward()
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print((after - before) / 1024, x.grad.abs().sum().item())
"""


def measure(mode: str) -> tuple[float, float]:
    """(peak growth in MB, a checksum of the input's gradient) of one step in a fresh interpreter."""
    out = subprocess.run([sys.executable, "-c", _PROGRAM, str(DEPTH), str(WIDTH), str(BATCH), str(SEGMENTS), mode],
                         check=True, capture_output=True, text=True).stdout.split()
    return float(out[0]), float(out[1])


def main() -> None:
    activation_mb = DEPTH * 2 * BATCH * WIDTH * 4 / 2**20
    print(f"MLP {DEPTH} x Linear({WIDTH}, {WIDTH}) + Tanh, batch {BATCH}, float32: "
          f"{activation_mb:.0f} MB of Linear and Tanh outputs")
    plain, plain_sum = measure("plain")
    kept, kept_sum = measure("checkpoint")
    assert abs(plain_sum - kept_sum) <= 1e-6 * abs(plain_sum), (plain_sum, kept_sum)
    print(f"plain step:                          peak +{plain:.0f} MB")
    print(f"checkpoint_sequential, {SEGMENTS} segments: peak +{kept:.0f} MB ({kept / plain:.2f} of plain)")


if __name__ == "__main__":
    main()
