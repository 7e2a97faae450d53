"""Fit the rational function of ``ember._ops._special_math.erfc_single`` and print it, with its error.

``erfcx(x) = exp(x**2) erfc(x)`` for ``0 <= x <= 10.5`` (beyond 10.06 erfc is 0 in single precision) as
``P(x) / Q(x)``, ``P`` of degree 4 and ``Q`` of degree 5 (``Q(0) = 1``): erfcx decays as ``1 / (sqrt(pi) x)``,
which a rational function follows over the whole range where a polynomial in ``x`` or ``1 / x`` needs pieces.
All the coefficients come out positive, so that neither polynomial cancels.

The fit minimises the largest relative error: least squares on ``P - erfcx Q`` weighted by ``1 / (erfcx Q)``
with the denominator of the previous step (Sanathanan and Koerner's iteration), and Lawson's reweighting
towards the points of largest error, against mpmath's values at 30 digits on 3000 Chebyshev-spaced points.
Run ``python tools/fit_erfc_single.py`` (mpmath comes with the ``test`` extra).
"""
from __future__ import annotations

import mpmath as mp
import numpy as np
from numpy.polynomial import polynomial

mp.mp.dps = 30


def chebyshev_spaced(low: float, high: float, count: int) -> np.ndarray:
    return (np.cos(np.linspace(np.pi, 0, count)) + 1) / 2 * (high - low) + low


def rational_fit(x: np.ndarray, f: np.ndarray, numerator_degree: int, denominator_degree: int,
                 steps: int = 40) -> tuple[float, np.ndarray, np.ndarray]:
    """The largest relative error and the coefficients (constant first) of ``P / Q`` closest to ``f`` at ``x``."""
    powers = x[:, None] ** np.arange(max(numerator_degree, denominator_degree) + 1)
    design = np.hstack([powers[:, :numerator_degree + 1], -f[:, None] * powers[:, 1:denominator_degree + 1]])
    previous_denominator, lawson = np.ones_like(x), np.full_like(x, 1 / len(x))
    best = (np.inf, None, None)
    for _ in range(steps):
        weight = np.sqrt(lawson) / np.abs(f * previous_denominator)
        solution = np.linalg.lstsq(design * weight[:, None], f * weight, rcond=None)[0]
        p, q = solution[:numerator_degree + 1], np.concatenate([[1.0], solution[numerator_degree + 1:]])
        previous_denominator = polynomial.polyval(x, q)
        error = polynomial.polyval(x, p) / previous_denominator / f - 1
        if np.abs(error).max() < best[0]:
            best = (np.abs(error).max(), p, q)
        lawson = lawson * np.abs(error)
        lawson /= lawson.sum()
    return best


def erfcx(x: float) -> float:
    return float(mp.exp(mp.mpf(x) ** 2) * mp.erfc(mp.mpf(x)))


def print_rational_fit(name: str, fn, low: float, high: float, numerator_degree: int, denominator_degree: int,
                       points: int) -> None:
    """Fit ``fn`` on [low, high] at ``points`` Chebyshev-spaced points, check the fit on a grid ten times as dense,
    and print the coefficients as the constants ``_{name}_NUMERATOR`` and ``_{name}_DENOMINATOR``."""
    x = chebyshev_spaced(low, high, points)
    error, p, q = rational_fit(x, np.array([fn(v) for v in x]), numerator_degree, denominator_degree)
    dense = np.linspace(low, high, 10 * points + 1)
    exact = np.array([fn(v) for v in dense])
    dense_error = np.abs(polynomial.polyval(dense, p) / polynomial.polyval(dense, q) / exact - 1).max()
    print(f"_{name}_NUMERATOR =", tuple(float(c) for c in p))
    print(f"_{name}_DENOMINATOR =", tuple(float(c) for c in q))
    print(f"largest relative error, in double: {error:.1e} on the fitting points, {dense_error:.1e} on a dense grid")


def main() -> None:
    print_rational_fit("ERFCX", erfcx, 0.0, 10.5, 4, 5, 3000)


if __name__ == "__main__":
    main()
