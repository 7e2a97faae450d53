"""The Airy function Ai(x), the solution of y'' = x y that decays for large x, in float64.

Far from 0 (|x| >= 8.75) Ai follows its asymptotic series, summed to its smallest term, which is below 1e-15 of
the value there. Between, Ai and Ai' are first tabulated every 1/8 by stepping the differential equation with
Taylor series: leftwards from x = 8.75, where the series gives them and where stepping towards smaller x damps
any error (Ai is the solution that grows that way), and leftwards from 0, where both are known exactly, through
the oscillating part. Each value is then a Taylor series about the nearest tabulated point.

>>> import numpy as np
>>> airy_ai(np.array([0.0, 1.0, -2.0]))
array([0.35502805, 0.13529242, 0.22740743])
"""
from __future__ import annotations

import math

import numpy as np

from ember._ops.binary import _exact_product

_FAR = 8.75  # from here out the asymptotic series is accurate to double precision
_STEP = 0.125
_TERMS = 18  # Taylor terms per step: with |x| <= 9 and |h| <= 1/8, the last one is far below 1e-17


def _taylor(x0: np.ndarray, value: np.ndarray, slope: np.ndarray, h: np.ndarray) -> tuple:
    """y(x0 + h) and y'(x0 + h) for y'' = x y, from y and y' at x0 (the coefficients a_n of h^n follow
    a_{n+2} (n+2)(n+1) = x0 a_n + a_{n-1})."""
    before, current, after = np.zeros_like(value), value, slope  # a_{n-1}, a_n, a_{n+1}
    total, derivative, power = value + slope * h, slope.copy(), h.copy()  # power: h^(n+1) for the a_{n+2} term
    for n in range(_TERMS):
        coefficient = (x0 * current + before) / ((n + 2) * (n + 1))
        derivative += (n + 2) * coefficient * power
        power = power * h
        total += coefficient * power
        before, current, after = current, after, coefficient
    return total, derivative


def _series_terms(zeta: np.ndarray):
    """(k, u_k / zeta^k) for k = 1, 2, ... of Ai's asymptotic series, each element's up to its smallest term
    (past it the series diverges; it is 0 there), or until they no longer change a double."""
    term, live = np.ones_like(zeta), np.ones(zeta.shape, bool)
    for k in range(1, 200):
        grown = term * ((6 * k - 5) * (6 * k - 3) * (6 * k - 1) / ((2 * k - 1) * 216 * k)) / zeta
        live &= (np.abs(grown) < np.abs(term)) & (np.abs(term) > 1e-18)  # (the sums start at 1)
        if not live.any():
            return
        term = np.where(live, grown, 0.0)
        yield k, term


def _far_right(x: np.ndarray, derivative: bool = False) -> np.ndarray:
    """Ai(x) for x >= 8.75, e^-zeta / (2 sqrt(pi) x^(1/4)) sum (-1)^k u_k / zeta^k, or Ai'(x),
    -x^(1/4) e^-zeta / (2 sqrt(pi)) sum (-1)^k v_k / zeta^k with v_k = -u_k (6k + 1) / (6k - 1)."""
    root = np.sqrt(x)
    zeta, zeta_rest = _two_thirds_of_power(x, root)
    total = np.ones_like(zeta)
    for k, term in _series_terms(zeta):
        total += (-1) ** k * (-term * (6 * k + 1) / (6 * k - 1) if derivative else term)
    scale = np.exp(-zeta) * (1 - zeta_rest) / (2.0 * math.sqrt(math.pi))  # exp(-zeta_rest), |zeta_rest| < 1e-13
    return (-np.sqrt(root) if derivative else 1.0 / np.sqrt(root)) * scale * total


def _far_left(x: np.ndarray) -> np.ndarray:
    """Ai(x) for x <= -8.75: (cos(zeta - pi/4) P + sin(zeta - pi/4) Q) / (sqrt(pi) |x|^(1/4)), where
    P = sum (-1)^k u_2k / zeta^2k and Q = sum (-1)^k u_(2k+1) / zeta^(2k+1)."""
    magnitude = -x
    root = np.sqrt(magnitude)
    zeta, zeta_rest = _two_thirds_of_power(magnitude, root)
    even, odd = np.ones_like(zeta), np.zeros_like(zeta)
    for k, term in _series_terms(zeta):
        signed = term if (k // 2) % 2 == 0 else -term
        if k % 2:
            odd += signed
        else:
            even += signed
    # cos and sin of zeta + (zeta_rest - pi/4): those of zeta itself are exact to rounding (NumPy reduces large
    # arguments exactly), the small rest turns them
    turn = zeta_rest - math.pi / 4
    cos_zeta, sin_zeta, cos_turn, sin_turn = np.cos(zeta), np.sin(zeta), np.cos(turn), np.sin(turn)
    cos_phase = cos_zeta * cos_turn - sin_zeta * sin_turn
    sin_phase = sin_zeta * cos_turn + cos_zeta * sin_turn
    return (cos_phase * even + sin_phase * odd) / (math.sqrt(math.pi) * np.sqrt(root))


_EXACT_UP_TO = 1e100  # where Dekker's products neither overflow nor underflow


def _two_thirds_of_power(magnitude: np.ndarray, root: np.ndarray) -> tuple:
    """(zeta, rest) with zeta + rest = 2/3 magnitude^(3/2) to about 1e-32 relative. The phase of Ai for x < 0
    is zeta - pi/4, and zeta rounded once (let alone three times) is off by its ulp: 4e-12 radians at x = -1000,
    a whole period from x = -1e15 on; for x > 0, exp(-zeta) magnifies that ulp by zeta (1e-13 at x = 100)."""
    rest = np.zeros_like(magnitude)
    exact = magnitude < _EXACT_UP_TO
    m, r = magnitude[exact], root[exact]
    square, square_error = _exact_product(r, r)
    root_rest = ((m - square) - square_error) / (2 * r)  # sqrt(m) = r + root_rest (m - square is exact)
    power, power_error = _exact_product(m, r)
    power_error += m * root_rest  # m^(3/2) = power + power_error
    zeta = 2 * power / 3
    thrice, thrice_error = _exact_product(zeta, np.full_like(zeta, 3.0))
    rest[exact] = ((2 * power - thrice) - thrice_error + 2 * power_error) / 3  # (2 power - thrice is exact)
    zeta_all = 2.0 * magnitude * root / 3.0
    zeta_all[exact] = zeta
    return zeta_all, rest


_TABLE: dict = {}


def _table() -> tuple:
    """The points -8.75, ..., 8.75 (every 1/8) with Ai and Ai' there, made once."""
    if not _TABLE:
        count = int(round(_FAR / _STEP))
        right = [(np.array([_FAR]), _far_right(np.array([_FAR])), _far_right(np.array([_FAR]), True))]
        for _ in range(count):  # leftwards from 8.75 to 0
            x0, value, slope = right[-1]
            right.append((x0 - _STEP, *_taylor(x0, value, slope, np.array([-_STEP]))))
        ai0 = 1.0 / (3.0 ** (2.0 / 3.0) * math.gamma(2.0 / 3.0))
        slope0 = -1.0 / (3.0 ** (1.0 / 3.0) * math.gamma(1.0 / 3.0))
        left = [(np.array([0.0]), np.array([ai0]), np.array([slope0]))]
        for _ in range(count):  # leftwards from 0 to -8.75
            x0, value, slope = left[-1]
            left.append((x0 - _STEP, *_taylor(x0, value, slope, np.array([-_STEP]))))
        points = left[:0:-1] + left[:1] + right[-2::-1]  # -8.75 ... 0 (exact there) ... 8.75
        _TABLE["points"] = tuple(np.concatenate([p[i] for p in points]) for i in range(3))
    return _TABLE["points"]


def airy_ai(x) -> np.ndarray:
    """Ai at each element of ``x`` (float64); NaN at NaN and at +-inf (as torch)."""
    x = np.asarray(x, np.float64)
    out = np.full(x.shape, np.nan)
    right, left = x >= _FAR, x <= -_FAR
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        out[right & np.isfinite(x)] = _far_right(x[right & np.isfinite(x)])
        out[left & np.isfinite(x)] = _far_left(x[left & np.isfinite(x)])
        near = ~right & ~left & ~np.isnan(x)
        points, values, slopes = _table()
        index = np.rint((x[near] + _FAR) / _STEP).astype(np.int64)
        out[near] = _taylor(points[index], values[index], slopes[index], x[near] - points[index])[0]
    out[right & (out < np.finfo(np.float64).tiny)] = 0.0  # as torch: past x = 103.9, below the normal doubles, 0
    return out
