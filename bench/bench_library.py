"""Custom operators (``library.custom_op``) against torch 2.13: the call's overhead, in one run, as ratios.

Each op wraps the same NumPy kernel (``sin`` of 16 float32 values), so what differs is what the library spends
around it: an inference call (nothing requires grad) and a call whose result is summed and backpropagated.

    python bench/bench_library.py

(No ``from __future__ import annotations`` here: ``custom_op`` reads the kernel's annotations as types.)
"""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from _timing import compare  # noqa: E402


def _op(lib):
    @lib.library.custom_op(f"bench_{lib.__name__}::np_sin", mutates_args=())
    def np_sin(x: lib.Tensor) -> lib.Tensor:
        return lib.from_numpy(np.sin(x.numpy()))

    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * x.cos()

    np_sin.register_autograd(backward, setup_context=lambda ctx, inputs, output: ctx.save_for_backward(inputs[0]))
    return np_sin


def _programs(lib) -> dict:
    op = _op(lib)
    plain = lib.randn(16)
    leaf = lib.randn(16, requires_grad=True)
    return {"call": lambda: op(plain), "call, sum, backward": lambda: op(leaf).sum().backward()}


def run(repeats: int = 7, number: int = 2000) -> dict:
    import torch

    import ember

    ours, theirs = _programs(ember), _programs(torch)
    return {name: compare({"ember": ours[name], "torch": theirs[name]}, repeats, number) for name in ours}


def report(results: dict) -> str:
    lines = ["| custom op | ember µs | torch µs | ember / torch |", "|---|---|---|---|"]
    for name, r in results.items():
        lines.append(f"| {name} | {r['ember_ms'] * 1e3:.1f} | {r['torch_ms'] * 1e3:.1f} | {r['ember/torch']:.2f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(report(run()))
