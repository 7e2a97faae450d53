"""The sample frequencies of a transform's bins, and the shifts that put the zero frequency in the middle.

>>> import ember
>>> ember.fft.fftshift(ember.fft.fftfreq(4))
tensor([-0.5000, -0.2500,  0.0000,  0.2500])
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ember import _dtype
from ember._creation import _check_device, _check_layout, _finish_or_out
from ember._ops._quiet import IGNORE_ALL, quietly
from ember._ops._support import normalize_dims, require_tensor
from ember._ops.shaping import roll
from ember._tensor import Tensor
from ember.overrides import overridable

fft_function = overridable("ember.fft")


def _frequencies(op: str, bins: np.ndarray, n: int, d: float, dtype, out, layout, device, requires_grad) -> Tensor:
    """``bins / (n * d)`` in ``dtype``: the bins in ``dtype``, scaled in the precision torch scales them in."""
    _check_device(device)
    _check_layout(op, layout)
    if dtype is None and isinstance(out, Tensor):
        dtype = out.dtype
    target = _dtype.defaults.floating if dtype is None else _dtype.to_dtype(dtype)
    if _dtype.kind(target.np) == "c":  # torch takes complex dtypes here, then fails to make their bins
        raise NotImplementedError(f'{op}: "arange_cpu" not implemented for '
                                  f"'{_dtype.scalar_type_name(target.np)}'; pass a floating point dtype, e.g. "
                                  "dtype=ember.float64")
    if _dtype.kind(target.np) != "f":
        raise RuntimeError(f"{op} requires a floating point dtype, got {target}; pass e.g. dtype=ember.float64")
    working = np.float64 if target.np == np.float64 else np.float32  # half is scaled in single, as in torch
    scale = quietly(IGNORE_ALL, np.divide, 1.0, np.float64(n) * float(d))  # d = 0: infinities, as in torch
    values = quietly(IGNORE_ALL, np.multiply, bins.astype(target.np).astype(working), working(scale))
    return _finish_or_out(op, values.astype(target.np), requires_grad, out)


def _count(op: str, n) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"{op}(): argument 'n' (position 1) must be int, not {type(n).__name__}")
    if n < 0:
        raise RuntimeError(f"{op}: Trying to create tensor with negative dimension {n}: [{n}]")
    return int(n)


@fft_function
def fftfreq(n: int, d: float = 1.0, *, out: Tensor | None = None, dtype=None, layout=None, device=None,
            requires_grad: bool = False) -> Tensor:
    """The frequencies of ``fft``'s ``n`` bins for samples ``d`` apart: ``[0, 1, ..., -2, -1] / (n * d)``.

    >>> ember.fft.fftfreq(5, d=0.5)
    tensor([ 0.0000,  0.4000,  0.8000, -0.8000, -0.4000])
    """
    n = _count("fftfreq", n)
    bins = np.concatenate([np.arange((n + 1) // 2), np.arange(-(n // 2), 0)])
    return _frequencies("fftfreq", bins, n, d, dtype, out, layout, device, requires_grad)


@fft_function
def rfftfreq(n: int, d: float = 1.0, *, out: Tensor | None = None, dtype=None, layout=None, device=None,
             requires_grad: bool = False) -> Tensor:
    """The frequencies of ``rfft``'s ``n // 2 + 1`` bins for ``n`` samples ``d`` apart.

    >>> ember.fft.rfftfreq(4)
    tensor([0.0000, 0.2500, 0.5000])
    """
    n = _count("rfftfreq", n)
    return _frequencies("rfftfreq", np.arange(n // 2 + 1), n, d, dtype, out, layout, device, requires_grad)


def _shifted(op: str, input: Tensor, dim, sign: int) -> Tensor:
    x = require_tensor(input, op)
    if not x.ndim and dim is not None:  # (roll, which torch's shifts are made of, has no dim to name in a 0-d tensor)
        first = dim if isinstance(dim, (int, np.integer)) else next(iter(dim), None)
        if first is not None:
            raise IndexError(f"Dimension specified as {first} but tensor has no dimensions")
    dims = normalize_dims(dim, x.ndim, op) if x.ndim else ()
    shifts = [sign * (x.shape[d] // 2) for d in dims]
    return roll(x, shifts, dims)


@fft_function
def fftshift(input: Tensor, dim: int | Sequence[int] | None = None) -> Tensor:
    """``input`` rolled so that the zero-frequency bin is in the middle of each of ``dim`` (default: all).

    >>> ember.fft.fftshift(ember.tensor([0., 1., 2., -2., -1.]))
    tensor([-2., -1.,  0.,  1.,  2.])
    """
    return _shifted("fftshift", input, dim, 1)


@fft_function
def ifftshift(input: Tensor, dim: int | Sequence[int] | None = None) -> Tensor:
    """The inverse of ``fftshift``.

    >>> ember.fft.ifftshift(ember.tensor([-2., -1., 0., 1., 2.]))
    tensor([ 0.,  1.,  2., -2., -1.])
    """
    return _shifted("ifftshift", input, dim, -1)
