"""Fake quantization and quantized tensors against torch 2.13 and against the same arithmetic in NumPy.

Each row is one call on a million float32 values (per channel: 1000 x 1000, one scale per row) or on a 4 x 4
tensor, in ember, in torch (one thread) and written by hand in NumPy (the rounding and clamping alone, with
no checks and no autograd). "fwd+bwd" rows call backward on the result. CPU time, median of interleaved
repeats (``_timing.compare``).

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=src python bench/bench_quantize.py
"""
from __future__ import annotations

import warnings

import numpy as np
import torch

import ember
from _timing import compare

torch.set_num_threads(1)
warnings.filterwarnings("ignore", message=".*quantized tensor creation functions")


def _cases(lib):
    rng = np.random.default_rng(0)
    big = rng.standard_normal(1_000_000).astype(np.float32)
    x, small = lib.tensor(big), lib.tensor(big[:16].reshape(4, 4))
    leaf = lib.tensor(big, requires_grad=True)
    rows = lib.tensor(big.reshape(1000, 1000))
    scales, points = lib.tensor(np.full(1000, 0.02, np.float32)), lib.zeros(1000, dtype=lib.int32)
    q = lib.quantize_per_tensor(x, 0.02, 128, lib.quint8)
    return {
        "fake_quantize_per_tensor 1e6": lambda: lib.fake_quantize_per_tensor_affine(x, 0.02, 0, -128, 127),
        "fake_quantize_per_tensor 1e6 fwd+bwd":
            lambda: lib.fake_quantize_per_tensor_affine(leaf, 0.02, 0, -128, 127).sum().backward(),
        "fake_quantize_per_tensor 4x4": lambda: lib.fake_quantize_per_tensor_affine(small, 0.02, 0, -128, 127),
        "fake_quantize_per_channel 1000x1000":
            lambda: lib.fake_quantize_per_channel_affine(rows, scales, points, 0, -128, 127),
        "quantize_per_tensor quint8 1e6": lambda: lib.quantize_per_tensor(x, 0.02, 128, lib.quint8),
        "dequantize quint8 1e6": lambda: q.dequantize(),
    }


def _numpy_cases():
    rng = np.random.default_rng(0)
    big = rng.standard_normal(1_000_000).astype(np.float32)
    small, rows = big[:16].reshape(4, 4), big.reshape(1000, 1000)
    inv, scales = np.float32(50), np.full((1000, 1), 0.02, np.float32)
    ints = np.clip(np.rint(big * inv) + 128, 0, 255).astype(np.uint8)

    def fake(a):
        return np.clip(np.rint(a * inv), -128, 127) * np.float32(0.02)

    def fake_with_mask(a):
        level = np.rint(a * inv)
        mask = (level >= -128) & (level <= 127)
        return np.clip(level, -128, 127) * np.float32(0.02), np.ones_like(a) * mask

    return {
        "fake_quantize_per_tensor 1e6": lambda: fake(big),
        "fake_quantize_per_tensor 1e6 fwd+bwd": lambda: fake_with_mask(big),
        "fake_quantize_per_tensor 4x4": lambda: fake(small),
        "fake_quantize_per_channel 1000x1000":
            lambda: np.clip(np.rint(rows * (np.float32(1) / scales)), -128, 127) * scales,
        "quantize_per_tensor quint8 1e6": lambda: np.clip(np.rint(big * inv + 128), 0, 255).astype(np.uint8),
        "dequantize quint8 1e6": lambda: (ints.astype(np.int32) - 128).astype(np.float32) * np.float32(0.02),
    }


def main() -> None:
    ours, theirs, by_hand = _cases(ember), _cases(torch), _numpy_cases()
    print("| op | ember ms | torch ms | NumPy ms | ember / torch | ember / NumPy |")
    print("|---|---|---|---|---|---|")
    for name in ours:
        small = "4x4" in name
        r = compare({"ember": ours[name], "torch": theirs[name], "numpy": by_hand[name]}, repeats=5,
                    number=2000 if small else 3)
        print(f"| {name} | {r['ember_ms']:.4f} | {r['torch_ms']:.4f} | {r['numpy_ms']:.4f} | "
              f"{r['ember/torch']:.2f} | {r['ember/numpy']:.2f} |")


if __name__ == "__main__":
    main()
