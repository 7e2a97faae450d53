"""Fit the rational function of ``ember._ops._special_math.lgamma_single`` and print it, with its error.

``lgamma(x) / ((x - 1) (x - 2))`` for ``1 <= x <= 8`` as ``P(x) / Q(x)``, both of degree 6 (``Q(0) = 1``): the
zeros of lgamma at 1 and 2 are factored out, so that the relative error of the fit is that of lgamma itself,
also next to its zeros (below 1, lgamma(x) = lgamma(x + 1) - log(x); from 8 on, Stirling's series). The
coefficients come out positive, so that neither polynomial cancels. The fit is the one of
``tools/fit_erfc_single.py`` (least squares with Lawson's weights), against mpmath at 30 digits. Run
``python tools/fit_lgamma_single.py``.
"""
from __future__ import annotations

import mpmath as mp

from fit_erfc_single import print_rational_fit

mp.mp.dps = 30


def lgamma_over_its_zeros(x: float) -> float:
    """lgamma(x) / ((x - 1) (x - 2)), and its limits at 1 (euler) and 2 (1 - euler)."""
    if x == 1:
        return float(mp.euler)
    if x == 2:
        return float(1 - mp.euler)
    v = mp.mpf(x)
    return float(mp.loggamma(v) / ((v - 1) * (v - 2)))


def main() -> None:
    print_rational_fit("LGAMMA", lgamma_over_its_zeros, 1.0, 8.0, 6, 6, 2000)


if __name__ == "__main__":
    main()
