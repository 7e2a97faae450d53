"""ember.fft and stft against torch 2.13 and against the same computation written with NumPy by hand.

Each row times a transform with nothing recorded, and forward plus backward of a real loss (the sum of the
result's real part), on a small and a large input. NumPy's column is the same work by hand: the transform,
and for the backward rows also the adjoint transform that the loss's gradient (all ones) goes through.

    python bench/bench_fft.py
"""
from __future__ import annotations

import numpy as np
import torch

import ember
from _timing import compare

torch.set_num_threads(1)
REPEATS = 7


def _leaves(array: np.ndarray, grad: bool) -> tuple:
    return ember.tensor(array, requires_grad=grad), torch.tensor(array, requires_grad=grad)


def _row(label: str, transform, by_hand, array: np.ndarray, backward: bool) -> dict:
    mine, theirs = _leaves(array, backward)

    def run(lib, x):
        y = transform(lib, x)
        if backward:
            (y.real if y.is_complex() else y).sum().backward()

    number = max(1, int(2e5 // max(array.size, 1)))
    figures = compare({"ember": lambda: run(ember, mine), "torch": lambda: run(torch, theirs),
                       "numpy": lambda: by_hand(array)}, REPEATS, number)
    return {"label": label, **figures}


def _rows() -> list:
    rng = np.random.default_rng(0)
    small, large = rng.standard_normal(64), rng.standard_normal((64, 4096))
    half = np.fft.rfft(large)
    plane = rng.standard_normal((256, 256))
    signal = rng.standard_normal(16000).astype(np.float32)
    window = np.hanning(514)[1:-1].astype(np.float32)
    rows = []
    for backward in (False, True):
        mode = "forward + backward" if backward else "forward"
        adjoint = 2 if backward else 1  # by hand, a backward is one more transform of the same size
        rows += [
            _row(f"fft, 64 ({mode})", lambda lib, x: lib.fft.fft(x),
                 lambda a: [np.fft.fft(a) for _ in range(adjoint)], small, backward),
            _row(f"fft, 64 x 4096 ({mode})", lambda lib, x: lib.fft.fft(x),
                 lambda a: [np.fft.fft(a) for _ in range(adjoint)], large, backward),
            _row(f"rfft, 64 x 4096 ({mode})", lambda lib, x: lib.fft.rfft(x),
                 lambda a: [np.fft.rfft(a) for _ in range(adjoint)], large, backward),
            _row(f"irfft, 64 x 2049 bins ({mode})", lambda lib, x: lib.fft.irfft(x),
                 lambda a: [np.fft.irfft(a) for _ in range(adjoint)], half, backward),
            _row(f"fft2, 256 x 256 ({mode})", lambda lib, x: lib.fft.fft2(x),
                 lambda a: [np.fft.fft2(a) for _ in range(adjoint)], plane, backward),
            _row(f"stft, 16000 samples, n_fft 512 ({mode})",
                 lambda lib, x: lib.stft(x, 512, hop_length=128, window=lib.tensor(window), return_complex=True),
                 lambda a: [np.fft.rfft(np.lib.stride_tricks.sliding_window_view(
                     np.pad(a, 256, mode="reflect"), 512)[::128] * window) for _ in range(adjoint)],
                 signal, backward),
        ]
    return rows


def main() -> None:
    print("| transform | ember ms | torch ms | NumPy by hand ms | ember / torch | ember / NumPy |")
    print("|---|---|---|---|---|---|")
    for row in _rows():
        print(f"| {row['label']} | {row['ember_ms']:.3f} | {row['torch_ms']:.3f} | {row['numpy_ms']:.3f} | "
              f"{row['ember/torch']:.2f} | {row['ember/numpy']:.2f} |")


if __name__ == "__main__":
    main()
