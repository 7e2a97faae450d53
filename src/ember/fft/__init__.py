"""``ember.fft``: discrete Fourier transforms, as ``torch.fft`` has them, differentiable to any order.

Real inputs give complex results of the matching precision (float32 to complex64, float64 to complex128);
integer inputs are taken as the default float dtype first. ``norm`` picks the scale: ``"backward"`` (the
default: none forward, 1/n inverse), ``"ortho"`` (1/sqrt(n) both ways) or ``"forward"`` (1/n forward).

>>> import ember
>>> ember.fft.fft(ember.tensor([1., 0., 0., 0.]))
tensor([1.+0.j, 1.+0.j, 1.+0.j, 1.+0.j])
>>> ember.fft.irfft(ember.fft.rfft(ember.tensor([1., 2., 3.])), n=3)
tensor([1., 2., 3.])
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ember import _dtype
from ember._ops.complex import conj
from ember._ops.out import into_out
from ember._ops.spectral import (
    C2C, C2R, R2C, adjoint_norm, checked_norm, half_size, many_dims_plan, one_dim_plan, resized, signal_sizes,
    transformable,
)
from ember.fft._helpers import fftfreq, fftshift, ifftshift, rfftfreq  # noqa: F401  (public here)
from ember._tensor import Tensor
from ember.overrides import overridable

fft_function = overridable("ember.fft")
"""Decorator for a public function of ``ember.fft`` (it dispatches through the protocol)."""

Dims = Sequence[int] | None


def _returned(op: str, result: Tensor, out: Tensor | None, complex_result: bool) -> Tensor:
    if out is None:
        return result
    if isinstance(out, Tensor) and out.is_complex() != complex_result:
        wanted = "complex" if complex_result else "floating point"
        raise RuntimeError(f"{op} expects a {wanted} output tensor, but got "
                           f"{_dtype.scalar_type_name(out._data.dtype)}; pass an out of dtype {result.dtype}")
    return into_out(op, result, out, result)


def _c2c(op: str, input: Tensor, plan: tuple, norm: str | None, forward: bool, out: Tensor | None) -> Tensor:
    x = transformable(op, input)
    axes, sizes = plan
    norm = checked_norm(op, norm)
    sizes = signal_sizes(op, x, axes, sizes)
    if not axes:  # nothing to transform: the input as a complex tensor, as torch gives it
        return _returned(op, x.to(_complex_of(x)), out, True)
    return _returned(op, C2C.apply(resized(x, axes, sizes), axes, forward, norm), out, True)


def _complex_of(x: Tensor):
    return _dtype.from_numpy_dtype(np.result_type(x._data.dtype, np.complex64))


def _r2c(op: str, input: Tensor, plan: tuple, norm: str | None, hermitian: bool, out: Tensor | None) -> Tensor:
    """rfft (``hermitian`` False) or ihfft: the onesided half spectrum of a real signal."""
    x = transformable(op, input, real_only=True)
    axes, sizes = plan
    norm = checked_norm(op, norm)
    if not axes:
        raise RuntimeError(f"{op} must transform at least one axis; give dim a dim")
    sizes = signal_sizes(op, x, axes, sizes)
    x = resized(x, axes, sizes)
    if hermitian:
        return _returned(op, conj(R2C.apply(x, axes, adjoint_norm(norm))), out, True)
    return _returned(op, R2C.apply(x, axes, norm), out, True)


def _c2r(op: str, input: Tensor, plan: tuple, norm: str | None, hermitian: bool, out: Tensor | None) -> Tensor:
    """irfft (``hermitian`` False) or hfft: the real signal whose onesided half spectrum is given."""
    x = transformable(op, input)
    axes, sizes = plan
    norm = checked_norm(op, norm)
    if not axes:
        raise RuntimeError(f"{op} must transform at least one axis; give dim a dim")
    last_size = half_size(op, x, axes, sizes)
    sizes = signal_sizes(op, x, axes[:-1], sizes[:-1]) + (last_size // 2 + 1,)
    x = resized(x, axes, sizes)
    if hermitian:
        return _returned(op, C2R.apply(conj(x), axes, adjoint_norm(norm), last_size), out, False)
    return _returned(op, C2R.apply(x, axes, norm, last_size), out, False)


# ----------------------------------------------------------------- complex to complex


@fft_function
def fft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *,
        out: Tensor | None = None) -> Tensor:
    """The one-dimensional discrete Fourier transform along ``dim``, of ``n`` points (trimmed or zero-padded).

    >>> ember.fft.fft(ember.tensor([0., 1., 0., -1.]))
    tensor([0.+0.j, 0.-2.j, 0.+0.j, 0.+2.j])
    """
    return _c2c("fft", input, one_dim_plan("fft", input, n, dim), norm, True, out)


@fft_function
def ifft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *,
         out: Tensor | None = None) -> Tensor:
    """The inverse of ``fft``.

    >>> ember.fft.ifft(ember.tensor([4., 0., 0., 0.]))
    tensor([1.+0.j, 1.+0.j, 1.+0.j, 1.+0.j])
    """
    return _c2c("ifft", input, one_dim_plan("ifft", input, n, dim), norm, False, out)


@fft_function
def fft2(input: Tensor, s: Dims = None, dim: Sequence[int] = (-2, -1), norm: str | None = None, *,
         out: Tensor | None = None) -> Tensor:
    """The two-dimensional transform over ``dim`` (the last two dims by default).

    >>> ember.fft.fft2(ember.ones(2, 2))
    tensor([[4.+0.j, 0.+0.j],
            [0.+0.j, 0.+0.j]])
    """
    return _c2c("fft2", input, many_dims_plan("fft2", input, s, dim), norm, True, out)


@fft_function
def ifft2(input: Tensor, s: Dims = None, dim: Sequence[int] = (-2, -1), norm: str | None = None, *,
          out: Tensor | None = None) -> Tensor:
    """The inverse of ``fft2``.

    >>> ember.fft.ifft2(ember.fft.fft2(ember.eye(2))).real
    tensor([[1., 0.],
            [0., 1.]])
    """
    return _c2c("ifft2", input, many_dims_plan("ifft2", input, s, dim), norm, False, out)


@fft_function
def fftn(input: Tensor, s: Dims = None, dim: Dims = None, norm: str | None = None, *,
         out: Tensor | None = None) -> Tensor:
    """The n-dimensional transform over ``dim`` (default: the last ``len(s)`` dims, else every dim).

    >>> ember.fft.fftn(ember.ones(2, 2, 2)).abs().sum()
    tensor(8.)
    """
    return _c2c("fftn", input, many_dims_plan("fftn", input, s, dim), norm, True, out)


@fft_function
def ifftn(input: Tensor, s: Dims = None, dim: Dims = None, norm: str | None = None, *,
          out: Tensor | None = None) -> Tensor:
    """The inverse of ``fftn``.

    >>> ember.fft.ifftn(ember.tensor([[4., 0.], [0., 0.]]))
    tensor([[1.+0.j, 1.+0.j],
            [1.+0.j, 1.+0.j]])
    """
    return _c2c("ifftn", input, many_dims_plan("ifftn", input, s, dim), norm, False, out)


# ----------------------------------------------------------------- real signals and their half spectra


@fft_function
def rfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *,
         out: Tensor | None = None) -> Tensor:
    """The transform of a real signal, onesided: the ``n // 2 + 1`` bins that determine the rest.

    >>> ember.fft.rfft(ember.tensor([1., 1., 1., 1.]))
    tensor([4.+0.j, 0.+0.j, 0.+0.j])
    """
    return _r2c("rfft", input, one_dim_plan("rfft", input, n, dim), norm, False, out)


@fft_function
def irfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *,
          out: Tensor | None = None) -> Tensor:
    """The inverse of ``rfft``: a real signal of ``n`` points (default ``2 * (m - 1)`` from ``m`` bins).

    >>> ember.fft.irfft(ember.tensor([4., 0., 0.]))
    tensor([1., 1., 1., 1.])
    """
    return _c2r("irfft", input, one_dim_plan("irfft", input, n, dim), norm, False, out)


@fft_function
def rfft2(input: Tensor, s: Dims = None, dim: Sequence[int] = (-2, -1), norm: str | None = None, *,
          out: Tensor | None = None) -> Tensor:
    """The two-dimensional ``rfftn``.

    >>> ember.fft.rfft2(ember.ones(2, 4)).shape
    ember.Size([2, 3])
    """
    return _r2c("rfft2", input, many_dims_plan("rfft2", input, s, dim), norm, False, out)


@fft_function
def irfft2(input: Tensor, s: Dims = None, dim: Sequence[int] = (-2, -1), norm: str | None = None, *,
           out: Tensor | None = None) -> Tensor:
    """The inverse of ``rfft2``.

    >>> ember.fft.irfft2(ember.fft.rfft2(ember.eye(2)))
    tensor([[1., 0.],
            [0., 1.]])
    """
    return _c2r("irfft2", input, many_dims_plan("irfft2", input, s, dim), norm, False, out)


@fft_function
def rfftn(input: Tensor, s: Dims = None, dim: Dims = None, norm: str | None = None, *,
          out: Tensor | None = None) -> Tensor:
    """The n-dimensional transform of a real signal, onesided in the last of ``dim``.

    >>> ember.fft.rfftn(ember.ones(2, 3, 4)).shape
    ember.Size([2, 3, 3])
    """
    return _r2c("rfftn", input, many_dims_plan("rfftn", input, s, dim), norm, False, out)


@fft_function
def irfftn(input: Tensor, s: Dims = None, dim: Dims = None, norm: str | None = None, *,
           out: Tensor | None = None) -> Tensor:
    """The inverse of ``rfftn``; the last of ``dim`` holds the onesided bins.

    >>> ember.fft.irfftn(ember.fft.rfftn(ember.ones(2, 4))).shape
    ember.Size([2, 4])
    """
    return _c2r("irfftn", input, many_dims_plan("irfftn", input, s, dim), norm, False, out)


# ----------------------------------------------------------------- hermitian signals and their real spectra


@fft_function
def hfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *,
         out: Tensor | None = None) -> Tensor:
    """The (real) transform of a signal with hermitian symmetry, given by its first half.

    >>> ember.fft.hfft(ember.tensor([1., 0., 0.]))
    tensor([1., 1., 1., 1.])
    """
    return _c2r("hfft", input, one_dim_plan("hfft", input, n, dim), norm, True, out)


@fft_function
def ihfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *,
          out: Tensor | None = None) -> Tensor:
    """The inverse of ``hfft``: the first half of a hermitian signal from its real transform.

    >>> ember.fft.ihfft(ember.tensor([1., 1., 1., 1.]))
    tensor([1.-0.j, 0.-0.j, 0.-0.j])
    """
    return _r2c("ihfft", input, one_dim_plan("ihfft", input, n, dim), norm, True, out)


@fft_function
def hfft2(input: Tensor, s: Dims = None, dim: Sequence[int] = (-2, -1), norm: str | None = None, *,
          out: Tensor | None = None) -> Tensor:
    """The two-dimensional ``hfftn``.

    >>> ember.fft.hfft2(ember.ones(2, 3, dtype=ember.complex64)).shape
    ember.Size([2, 4])
    """
    return _c2r("hfft2", input, many_dims_plan("hfft2", input, s, dim), norm, True, out)


@fft_function
def ihfft2(input: Tensor, s: Dims = None, dim: Sequence[int] = (-2, -1), norm: str | None = None, *,
           out: Tensor | None = None) -> Tensor:
    """The inverse of ``hfft2``.

    >>> ember.fft.ihfft2(ember.ones(2, 4)).shape
    ember.Size([2, 3])
    """
    return _r2c("ihfft2", input, many_dims_plan("ihfft2", input, s, dim), norm, True, out)


@fft_function
def hfftn(input: Tensor, s: Dims = None, dim: Dims = None, norm: str | None = None, *,
          out: Tensor | None = None) -> Tensor:
    """The n-dimensional transform of a hermitian signal, given by its first half in the last of ``dim``.

    >>> ember.fft.hfftn(ember.ones(2, 3, dtype=ember.complex64)).shape
    ember.Size([2, 4])
    """
    return _c2r("hfftn", input, many_dims_plan("hfftn", input, s, dim), norm, True, out)


@fft_function
def ihfftn(input: Tensor, s: Dims = None, dim: Dims = None, norm: str | None = None, *,
           out: Tensor | None = None) -> Tensor:
    """The inverse of ``hfftn``.

    >>> ember.fft.ihfftn(ember.ones(2, 4)).shape
    ember.Size([2, 3])
    """
    return _r2c("ihfftn", input, many_dims_plan("ihfftn", input, s, dim), norm, True, out)


__all__ = [
    "fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2", "rfftn", "irfftn",
    "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift",
]

from ember.fft import _batching  # noqa: E402,F401  (vmap's rules for the functions above)
