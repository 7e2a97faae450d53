"""Fit the rational functions of ``ember._ops._special_math.ndtri_single`` and print them, with their errors.

- ``ndtri(1/2 + q) / q`` in ``s = q**2`` for ``|q| <= 0.425`` (the centre);
- ``-ndtri(p)`` in ``r = sqrt(-2 log p)`` for ``p <= 0.075`` down to the smallest float32 subnormal (``r`` from
  2.2 to 14.5): there ndtri is close to ``-r``, and smooth in ``r``.

Both ``P / Q`` of degree 4 (``Q(0) = 1``), by the fit of ``tools/fit_erfc_single.py``, against mpmath at 40
digits (ndtri of a tiny ``p`` as the root of ``ncdf(x) = p``). Run ``python tools/fit_ndtri_single.py``.
"""
from __future__ import annotations

import mpmath as mp

from fit_erfc_single import print_rational_fit

mp.mp.dps = 40


def ndtri_over_distance(s: float) -> float:
    """ndtri(1/2 + q) / q at q = sqrt(s), and its limit sqrt(2 pi) at 0."""
    if s == 0:
        return float(mp.sqrt(2 * mp.pi))
    q = mp.sqrt(mp.mpf(s))
    return float(mp.sqrt(2) * mp.erfinv(2 * q) / q)


def ndtri_of_tail(r: float) -> float:
    """-ndtri(p) at p = exp(-r**2 / 2)."""
    p = mp.exp(-mp.mpf(r) ** 2 / 2)
    return float(-mp.findroot(lambda x: mp.ncdf(x) - p, 0.5 - mp.mpf(r)))


def main() -> None:
    print_rational_fit("NDTRI_CENTRE", ndtri_over_distance, 0.0, 0.425 ** 2, 4, 4, 600)
    print_rational_fit("NDTRI_TAIL", ndtri_of_tail, 2.2, 14.5, 4, 4, 600)


if __name__ == "__main__":
    main()
