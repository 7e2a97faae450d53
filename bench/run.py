"""Run every benchmark in one go and print the tables that go into bench/RESULTS.md.

Usage: ``make bench`` (or ``.venv/bin/python bench/run.py``). Needs torch 2.13 (the test extra).
"""
from __future__ import annotations

import os
import platform
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))

import bench_autograd  # noqa: E402
import bench_bytecodes  # noqa: E402
import bench_import  # noqa: E402
import bench_memory  # noqa: E402
import bench_ops  # noqa: E402
import bench_overrides  # noqa: E402
import bench_panel  # noqa: E402
import bench_training  # noqa: E402


def main() -> None:
    import numpy
    import torch

    print(f"Python {platform.python_version()}, NumPy {numpy.__version__}, torch {torch.__version__}, "
          f"{os.cpu_count()} CPUs\n")
    print("## Autograd overhead (21 interleaved repeats; the ratio is the median of the per-repeat ratios)\n")
    print(bench_autograd.report(bench_autograd.run()))
    print("\n## Where the time of (b) goes (16 elements, best of 7 repeats, both libraries in one run)\n")
    print(bench_autograd.breakdown())
    print("\n## Everyday ops, forward + backward on 16 elements (11 interleaved repeats; the ratio is the median "
          "of the per-repeat ratios)\n")
    print(bench_ops.report(bench_ops.run()))
    print("\n## Everyday ops alone on 4x4 tensors that need no gradient (11 interleaved repeats; ratio as above)\n")
    print(bench_ops.report(bench_ops.run(forward_only=True), "op, forward only (nothing recorded)"))
    print("\n## The speed panel: forward, in-place, indexing, with a loss, large inputs (see bench/bench_panel.py)")
    bench_panel.main([])
    print("\n## A training step of a small MLP (11 interleaved repeats; the ratio is the median of the per-repeat ratios)\n")
    print(bench_training.report(bench_training.run()))
    print("\n## Python bytecodes one call executes in ember (exact: machine load does not move them)\n")
    print(bench_bytecodes.report(bench_bytecodes.run()))
    print("\n## Cost of the __torch_function__ protocol on plain tensors\n")
    r = bench_overrides.run()
    print(f"| ember.add through the protocol | bypassed | difference | allowed | verdict |")
    print("|---|---|---|---|---|")
    print(f"| {r['add_with_protocol_us']:.3f} µs | {r['add_protocol_bypassed_us']:.3f} µs | "
          f"{r['difference_us']:.3f} µs ({r['difference_percent']:.1f}%) | {r['allowed_us']:.3f} µs | "
          f"{'met' if r['within_target'] else 'MISSED'} |")
    print("\n## Memory held by a recorded graph (fresh interpreter each, resident memory)\n")
    print(bench_memory.report(bench_memory.run()))
    print("\n## Import time (fresh interpreter, median of 5)\n")
    print(bench_import.report(bench_import.run()))
    # each in an interpreter of its own: they hold BLAS to one thread, which must be set before NumPy loads
    for title, script in [("Training steps of two MLPs against torch and hand-written NumPy", "bench_mlp.py"),
                          ("A LeNet-style CNN: training step, peak and steady memory", "bench_cnn.py"),
                          ("Training steps of a transformer block and an LSTM", "bench_sequence.py"),
                          ("Cross-entropy of class indices, forward and backward", "bench_losses.py")]:
        print(f"\n## {title} (bench/{script})\n", flush=True)
        subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), script)], check=True)


if __name__ == "__main__":
    main()
