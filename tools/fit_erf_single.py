"""Fit the polynomials of ``ember._ops._special_math.erf_single`` and ``erfinv_single`` and print them, with
their errors.

- ``erf(x) / x`` as a polynomial in ``x**2`` for ``|x| < 1``;
- ``erfcx(x) = exp(x**2) erfc(x)`` as a polynomial in ``1 / x`` for ``1 <= x <= 4`` (beyond 4, erf rounds to
  1 in single precision);
- ``erfinv(y) / y`` as a polynomial in ``w = -log(1 - y**2)`` for ``w <= 5``, and in ``sqrt(w) - 3.2`` from there
  to ``sqrt(w) = 4.1`` (``w`` of the float32 closest to 1 is 15.9; centred, its coefficients are small, so the
  polynomial loses no digits to cancellation in single precision).

Each is interpolated at the Chebyshev nodes of its interval, from mpmath's values at 40 digits (close to the
minimax polynomial of its degree), then written in the power basis for Horner's scheme. Run
``python tools/fit_erf_single.py`` (mpmath comes with the ``test`` extra).
"""
from __future__ import annotations

import mpmath as mp
import numpy as np
from numpy.polynomial import chebyshev, polynomial

mp.mp.dps = 40


def _interpolated(fn, degree: int, low: float, high: float) -> np.ndarray:
    """Power-basis coefficients (constant first) of ``fn`` interpolated at ``degree + 1`` Chebyshev nodes."""
    k = np.arange(degree + 1)
    nodes = np.cos((2 * k + 1) * np.pi / (2 * (degree + 1)))
    points = (nodes + 1) / 2 * (high - low) + low
    values = np.array([float(fn(mp.mpf(float(p)))) for p in points])
    in_nodes = polynomial.Polynomial(chebyshev.cheb2poly(chebyshev.chebfit(nodes, values, degree)))
    return in_nodes(polynomial.Polynomial([-(low + high) / (high - low), 2 / (high - low)])).coef


def near(t):
    return mp.erf(mp.sqrt(t)) / mp.sqrt(t) if t else 2 / mp.sqrt(mp.pi)


def far(u):
    x = 1 / u
    return mp.exp(x * x) * mp.erfc(x)


def inverse_near(w):
    if not w:
        return mp.sqrt(mp.pi) / 2
    y = mp.sqrt(1 - mp.exp(-w))
    return mp.erfinv(y) / y


FAR_CENTRE = 3.2


def inverse_far(centred):
    root = centred + FAR_CENTRE
    return inverse_near(root * root)


def main() -> None:
    near_coefficients = _interpolated(near, 6, 0.0, 1.0)
    far_coefficients = _interpolated(far, 8, 0.25, 1.0)
    x = np.linspace(1e-4, 4, 40_001)
    exact = np.array([float(mp.erf(mp.mpf(v))) for v in x])
    fitted = np.where(x < 1, x * polynomial.polyval(x * x, near_coefficients),
                      1 - np.exp(-x * x) * polynomial.polyval(1 / x, far_coefficients))
    print("_ERF_NEAR =", tuple(float(c) for c in near_coefficients))
    print("_ERFCX_FAR =", tuple(float(c) for c in far_coefficients))
    print(f"largest relative error of the polynomials, in double: {np.abs(fitted / exact - 1).max():.1e}")
    inverse_near_coefficients = _interpolated(inverse_near, 9, 0.0, 5.0)
    inverse_far_coefficients = _interpolated(inverse_far, 9, 5 ** 0.5 - FAR_CENTRE, 4.1 - FAR_CENTRE)
    w = np.linspace(0, 4.1 ** 2, 20_001)
    exact = np.array([float(inverse_near(mp.mpf(v))) for v in w])
    fitted = np.where(w <= 5, polynomial.polyval(w, inverse_near_coefficients),
                      polynomial.polyval(np.sqrt(w) - FAR_CENTRE, inverse_far_coefficients))
    print("_ERFINV_NEAR =", tuple(float(c) for c in inverse_near_coefficients))
    print("_ERFINV_FAR =", tuple(float(c) for c in inverse_far_coefficients))
    print(f"largest relative error of erfinv's polynomials, in double: {np.abs(fitted / exact - 1).max():.1e}")


if __name__ == "__main__":
    main()
