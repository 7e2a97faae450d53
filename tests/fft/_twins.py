"""The same transform program on ember and on torch, compared at the precision of its dtype."""
from __future__ import annotations

import numpy as np
import torch

import ember

REAL_ONLY = frozenset("rfft ihfft rfft2 ihfft2 rfftn ihfftn".split())
ONE_DIM = ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft")
MANY_DIMS = ("fft2", "ifft2", "fftn", "ifftn", "rfft2", "irfft2", "rfftn", "irfftn",
             "hfft2", "ihfft2", "hfftn", "ihfftn")
NORMS = (None, "backward", "ortho", "forward")


def tolerance(dtype) -> float:
    return 1e-10 if str(dtype).split(".")[1] in ("float64", "complex128") else 2e-5


def close(mine, theirs, tol: float | None = None) -> None:
    """Same dtype name, shape and values (within ``tol`` of the dtype, relative to the largest value)."""
    assert str(mine.dtype).split(".")[1] == str(theirs.dtype).split(".")[1], (mine.dtype, theirs.dtype)
    assert tuple(mine.shape) == tuple(theirs.shape), (mine.shape, theirs.shape)
    tol = tolerance(theirs.dtype) if tol is None else tol
    a, b = mine.detach().numpy(), theirs.detach().resolve_conj().numpy()
    scale = max(1.0, float(np.abs(b).max(initial=0)))
    np.testing.assert_allclose(a, b, atol=tol * scale, rtol=tol)


def signal(rng: np.random.Generator, shape: tuple, dtype: str) -> np.ndarray:
    values = rng.standard_normal(shape)
    if dtype.startswith("complex"):
        values = values + 1j * rng.standard_normal(shape)
    return values.astype(dtype)


def leaves(array: np.ndarray) -> tuple:
    """The same values as an ember leaf and a torch leaf, both requiring grad."""
    return ember.tensor(array, requires_grad=True), torch.tensor(array, requires_grad=True)


def real_loss(result, weights: np.ndarray):
    """A real number from ``result`` that weighs every element (real and imaginary part) differently."""
    lib = torch if isinstance(result, torch.Tensor) else ember
    w = lib.tensor(weights.astype(np.complex128 if result.is_complex() else np.float64)).to(result.dtype)
    product = result * w
    return (product.real if result.is_complex() else product).sum()


def same_values_and_gradients(program, array: np.ndarray, rng: np.random.Generator) -> None:
    """``program(lib, x)`` gives the same result on both, and a real loss of it the same gradient in x."""
    x_ember, x_torch = leaves(array)
    mine, theirs = program(ember, x_ember), program(torch, x_torch)
    close(mine, theirs)
    weights = signal(rng, tuple(theirs.shape), "complex128" if theirs.is_complex() else "float64")
    real_loss(mine, weights).backward()
    real_loss(theirs, weights).backward()
    close(x_ember.grad, x_torch.grad, 10 * tolerance(x_torch.dtype))
