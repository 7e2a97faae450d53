"""The window functions of ``ember.signal.windows``, each computed in float64 with NumPy and given the dtype asked.

Each takes the window length ``M`` and the keywords ``sym`` (True: symmetric; False: periodic, the symmetric
window one point longer with its last point dropped), ``dtype`` (float32 or float64; the default dtype when
None), ``layout``, ``device`` and ``requires_grad``.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Callable

import numpy as np

from ember import _dtype
from ember._creation import _check_device, _finish
from ember._layout import strided
from ember._ops.windows import _cosines, _triangle
from ember._tensor import Tensor

__all__ = [
    "bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine", "general_hamming", "hamming",
    "hann", "kaiser", "nuttall",
]

_NUTTALL = (0.3635819, 0.4891775, 0.1365995, 0.0106411)


def _window(name: str, M: int, sym: bool, dtype, layout, device, requires_grad: bool,
            shape: Callable[[np.ndarray, int], np.ndarray]) -> Tensor:
    """``shape(n, span)`` at ``n = 0 .. M-1``: ``span + 1`` points make the symmetric window (a periodic window
    of two or more points is the symmetric one a point longer, cut)."""
    target = _check(name, M, dtype, layout)
    _check_device(device)
    span = M if not sym and M > 1 else M - 1  # a one-point window is the same either way
    values = shape(np.arange(M, dtype=np.float64), span) if M else np.zeros(0)
    return _finish(np.asarray(values, dtype=target.np), requires_grad)


def _check(name: str, M: int, dtype, layout) -> _dtype.dtype:
    target = _dtype.get_default_dtype() if dtype is None else dtype
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if layout is not strided:
        raise ValueError(f"{name} is implemented for strided tensors only, got: {layout}")
    if target not in (_dtype.float32, _dtype.float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {target}")
    return target


def _ones_if_single(shape: Callable[[np.ndarray, int], np.ndarray]) -> Callable[[np.ndarray, int], np.ndarray]:
    """A window of one point is ``[1.]``: the formula would divide by the zero span."""
    def guarded(n: np.ndarray, span: int) -> np.ndarray:
        return np.ones_like(n) if len(n) == 1 else shape(n, span)

    return guarded


def _all_ones(n: np.ndarray, span: int) -> np.ndarray:
    return np.ones_like(n)


def exponential(M: int, *, center: float | None = None, tau: float = 1.0, sym: bool = True, dtype=None,
                layout=strided, device=None, requires_grad: bool = False) -> Tensor:
    """``exp(-|n - center| / tau)``; ``center`` defaults to the window's middle.

    >>> ember.signal.windows.exponential(3, tau=1.0)
    tensor([0.3679, 1.0000, 0.3679])
    """
    _check("exponential", M, dtype, layout)
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")

    def shape(n: np.ndarray, span: int) -> np.ndarray:
        middle = span / 2 if center is None else center
        return np.exp(-np.abs(n - middle) / tau)

    return _window("exponential", M, sym, dtype, layout, device, requires_grad, shape)


def cosine(M: int, *, sym: bool = True, dtype=None, layout=strided, device=None,
           requires_grad: bool = False) -> Tensor:
    """The sine window, ``sin(pi (n + 1/2) / (span + 1))``.

    >>> ember.signal.windows.cosine(3)
    tensor([0.5000, 1.0000, 0.5000])
    """
    def shape(n: np.ndarray, span: int) -> np.ndarray:
        return np.sin(np.pi * (n + 0.5) / (span + 1))

    return _window("cosine", M, sym, dtype, layout, device, requires_grad, shape)


def gaussian(M: int, *, std: float = 1.0, sym: bool = True, dtype=None, layout=strided, device=None,
             requires_grad: bool = False) -> Tensor:
    """``exp(-(n - middle)^2 / (2 std^2))``.

    >>> ember.signal.windows.gaussian(3)
    tensor([0.6065, 1.0000, 0.6065])
    """
    _check("gaussian", M, dtype, layout)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")

    def shape(n: np.ndarray, span: int) -> np.ndarray:
        return np.exp(-((n - span / 2) / std) ** 2 / 2)

    return _window("gaussian", M, sym, dtype, layout, device, requires_grad, shape)


def kaiser(M: int, *, beta: float = 12.0, sym: bool = True, dtype=None, layout=strided, device=None,
           requires_grad: bool = False) -> Tensor:
    """``I0(beta sqrt(1 - (2 n / span - 1)^2)) / I0(beta)``.

    >>> ember.signal.windows.kaiser(3, beta=0.)
    tensor([1., 1., 1.])
    """
    _check("kaiser", M, dtype, layout)
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")

    def shape(n: np.ndarray, span: int) -> np.ndarray:
        return np.i0(beta * np.sqrt(np.clip(1 - (2 * n / span - 1) ** 2, 0, None))) / np.i0(beta)

    return _window("kaiser", M, sym, dtype, layout, device, requires_grad, _ones_if_single(shape))


def general_cosine(M: int, *, a: Iterable, sym: bool = True, dtype=None, layout=strided, device=None,
                   requires_grad: bool = False) -> Tensor:
    """``sum_k (-1)^k a[k] cos(2 pi k n / span)``.

    >>> ember.signal.windows.general_cosine(3, a=[0.5, 0.5])
    tensor([0., 1., 0.])
    """
    _check("general_cosine", M, dtype, layout)
    if M <= 1:  # as torch: the coefficients are not looked at
        return _window("general_cosine", M, sym, dtype, layout, device, requires_grad, _all_ones)
    if not isinstance(a, Iterable):
        raise TypeError("Coefficients must be a list/tuple")
    coefficients = list(a)
    if not coefficients:
        raise ValueError("Coefficients cannot be empty")
    return _window("general_cosine", M, sym, dtype, layout, device, requires_grad, _cosines(*coefficients))


def general_hamming(M: int, *, alpha: float = 0.54, sym: bool = True, dtype=None, layout=strided, device=None,
                    requires_grad: bool = False) -> Tensor:
    """``alpha - (1 - alpha) cos(2 pi n / span)``.

    >>> ember.signal.windows.general_hamming(3, alpha=0.5)
    tensor([0., 1., 0.])
    """
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def hamming(M: int, *, sym: bool = True, dtype=None, layout=strided, device=None,
            requires_grad: bool = False) -> Tensor:
    """The Hamming window, ``general_hamming`` with ``alpha=0.54``.

    >>> ember.signal.windows.hamming(3)
    tensor([0.0800, 1.0000, 0.0800])
    """
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, device=device, requires_grad=requires_grad)


def hann(M: int, *, sym: bool = True, dtype=None, layout=strided, device=None,
         requires_grad: bool = False) -> Tensor:
    """The Hann window, ``general_hamming`` with ``alpha=0.5``.

    >>> ember.signal.windows.hann(3)
    tensor([0., 1., 0.])
    """
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def blackman(M: int, *, sym: bool = True, dtype=None, layout=strided, device=None,
             requires_grad: bool = False) -> Tensor:
    """The Blackman window, ``general_cosine`` with ``a=[0.42, 0.5, 0.08]``.

    >>> ember.signal.windows.blackman(3)
    tensor([-1.3878e-17,  1.0000e+00, -1.3878e-17])
    """
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def bartlett(M: int, *, sym: bool = True, dtype=None, layout=strided, device=None,
             requires_grad: bool = False) -> Tensor:
    """The triangular window, ``1 - |2 n / span - 1|``.

    >>> ember.signal.windows.bartlett(3)
    tensor([0., 1., 0.])
    """
    return _window("bartlett", M, sym, dtype, layout, device, requires_grad, _ones_if_single(_triangle))


def nuttall(M: int, *, sym: bool = True, dtype=None, layout=strided, device=None,
            requires_grad: bool = False) -> Tensor:
    """The minimum 4-term Blackman-Harris window of Nuttall.

    >>> ember.signal.windows.nuttall(3)
    tensor([3.6280e-04, 1.0000e+00, 3.6280e-04])
    """
    return general_cosine(M, a=list(_NUTTALL), sym=sym, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)
