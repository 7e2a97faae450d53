"""Fit the rational function of ``ember._ops._special_math.digamma_single`` and print it, with its error.

``digamma(x) / (x - x0)`` for ``1 <= x <= 8``, ``x0 = 1.4616...`` the positive zero of digamma (printed as the sum
of two doubles, so that ``x - x0`` keeps its relative precision next to it), as ``P(x) / Q(x)``, both of degree 5
(``Q(0) = 1``; the coefficients come out positive, where degree 6 gives large ones of both signs): the relative
error of the fit is that of digamma itself, also next to its zero. Below 1, digamma(x) = digamma(x + 1) - 1 / x;
from 8 on, the asymptotic series. The fit is the one of ``tools/fit_erfc_single.py``, against mpmath at 30
digits. Run ``python tools/fit_digamma_single.py``.
"""
from __future__ import annotations

import mpmath as mp

from fit_erfc_single import print_rational_fit

mp.mp.dps = 30
ZERO = mp.findroot(mp.digamma, 1.46)


def digamma_over_its_zero(x: float) -> float:
    v = mp.mpf(x)
    return float(mp.digamma(v) / (v - ZERO)) if abs(v - ZERO) > 1e-20 else float(mp.polygamma(1, ZERO))


def main() -> None:
    high = float(ZERO)
    print("_DIGAMMA_ZERO_HIGH, _DIGAMMA_ZERO_LOW =", high, float(ZERO - high))
    print_rational_fit("DIGAMMA", digamma_over_its_zero, 1.0, 8.0, 5, 5, 2000)


if __name__ == "__main__":
    main()
