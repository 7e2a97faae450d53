"""Special functions NumPy lacks, on float64 arrays: erf and its inverses, the gamma family (lgamma, digamma,
polygamma, the Hurwitz zeta, the incomplete gamma functions), modified Bessel I0, I1, K0, K1, the normal
distribution and the classical orthogonal polynomials.

Each is built from a series that converges for its range, a continued fraction, a quadrature or an
asymptotic expansion, and (for the inverses) a few Newton steps, so that float64 results are good to
about 1e-14 relative (trigamma alone follows torch's own, coarser, formula). Infinities, nans and poles
give what torch gives. The callers (``special_functions.py``) convert other dtypes to float64 and back.

float32 data has kernels of its own (``erf_single``, ``erfc_single``, ``lgamma_single`` ...): polynomials and
rational functions fitted by ``tools/fit_*_single.py``, evaluated in single precision (erf, erfinv) or in
double from the float32 data and rounded once (the others, within about half a unit in the last place), a
few dozen passes over the data where the series above take hundreds.

>>> import numpy as np
>>> erf(np.array([0.0, 0.5, -3.0]))
array([ 0.        ,  0.52049988, -0.99997791])
>>> lgamma(np.array([0.5, 3.0, -2.5]))
array([ 0.57236494,  0.69314718, -0.05624372])
"""
from __future__ import annotations

import functools
import math

import numpy as np

_SQRT_PI = math.sqrt(math.pi)
_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)
_LOG_PI = math.log(math.pi)
_EULER = 0.57721566490153286061
_EPS = 1e-17  # a series stops once its terms are this small against its sum

# Bernoulli numbers B_2, B_4, ... B_24: the coefficients of the Stirling and Euler-Maclaurin series
_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510, 43867 / 798,
              -174611 / 330, 854513 / 138, -236364091 / 2730)


def _float64(x) -> np.ndarray:
    return np.asarray(x, np.float64)


def _on(mask: np.ndarray, fn, x: np.ndarray, out: np.ndarray) -> None:
    """``out[mask] = fn(x[mask])``, skipping the work where no element is selected."""
    if mask.any():
        out[mask] = fn(x[mask])


# ----------------------------------------------------------------- erf, erfc, their scaled form and inverses

_ERF_SERIES_BELOW = 1.0  # where the positive series of erf stops and erfc's continued fraction takes over


# 2^n / (2n + 1)!!: the coefficients of erf's series in x^2, to n = 24, which is enough for |x| < 1
_ERF_SERIES = tuple(2.0 ** n / math.prod(range(1, 2 * n + 2, 2)) for n in range(25))


def _erf_series(x: np.ndarray) -> np.ndarray:
    """erf for |x| < 1 by 2/sqrt(pi) exp(-x^2) sum 2^n x^(2n+1) / (2n+1)!!: every term positive, so no
    cancellation; summed by Horner's scheme in x^2, the smallest terms first."""
    square = x * x
    total = np.zeros_like(x)
    for coefficient in reversed(_ERF_SERIES):
        total = total * square + coefficient
    return 2 / _SQRT_PI * np.exp(-square) * total * x


def _erfcx_fraction(x: np.ndarray) -> np.ndarray:
    """exp(x^2) erfc(x) for x >= 1, by Laplace's continued fraction 1/(x + (1/2)/(x + 1/(x + (3/2)/(x + ...)))),
    with as many terms as x needs for full precision (it converges slowly near 1, fast beyond 3)."""
    out = np.empty_like(x)
    bands = (x < 1.5, (x >= 1.5) & (x < 2), (x >= 2) & (x < 3), (x >= 3) & (x < 4), ~(x < 4))  # nan, inf: last
    for band, terms in zip(bands, (200, 100, 60, 32, 25)):  # (25 terms leave 3e-15 at x = 3)
        _on(band, lambda v: _fraction(v, terms), x, out)
    return out


def _fraction(x: np.ndarray, terms: int) -> np.ndarray:
    f = x.copy()
    for k in range(terms, 0, -1):  # from the tail in, so each step is one division
        f = x + (k / 2) / f
    return 1 / (_SQRT_PI * f)


def _exp_of_square(x: np.ndarray, sign: float) -> np.ndarray:
    """exp(sign x^2) (sign a power of 2) without the error of rounding x^2 (which exp magnifies by x^2): x splits into a part whose
    square is exact and a small rest."""
    split = np.abs(x) < 1e4  # beyond, exp(sign x^2) is 0 or inf anyway
    high = np.where(split, np.round(x * 4096) / 4096, x)
    rest = np.where(split, (x - high) * (x + high), 0.0)
    return np.exp(sign * high * high) * np.exp(sign * rest)


def erfcx(x) -> np.ndarray:
    """The scaled complementary error function exp(x^2) erfc(x) (for large x it decays as 1/(sqrt(pi) x))."""
    x = _float64(x)
    out = np.empty_like(x)
    near = x < _ERF_SERIES_BELOW
    _on(near, lambda v: _exp_of_square(v, 1.0) * (1 - erf(v)), x, out)
    _on(~near, _erfcx_fraction, x, out)
    return out


def erfc(x) -> np.ndarray:
    """1 - erf(x), with full relative precision in the right tail (erfc(10) is 2.1e-45)."""
    x = _float64(x)
    out = np.empty_like(x)
    positive = ~(x < _ERF_SERIES_BELOW)  # nan too: the continued fraction gives nan
    with np.errstate(over="ignore", invalid="ignore"):
        _on(positive, lambda v: _exp_of_square(v, -1.0) * _erfcx_fraction(v), x, out)
        _on(~positive, lambda v: 1 - erf(v), x, out)
    return out


def erf(x) -> np.ndarray:
    x = _float64(x)
    out = np.empty_like(x)
    near = np.abs(x) < _ERF_SERIES_BELOW
    _on(near, _erf_series, x, out)
    _on(~near, lambda v: np.sign(v) * (1 - erfc(np.abs(v))), x, out)
    return out


# erf in single precision, for float32 inputs (GELU's): two polynomials fitted by tools/fit_erf_single.py
# (interpolated at Chebyshev nodes, 3.8e-9 from erf in double), evaluated in double from the float32 data and
# rounded once: within 0.56 units in the last place (torch's float32 erf is within 0.64; evaluated in single,
# they were 2.4 units off). The series and the continued fraction above, in double, cost a hundred passes over
# the data for full double precision.
_ERF_NEAR = (1.1283791658483513, -0.376126266667231, 0.11283594715189926, -0.02685421201179511,
             0.005189087425526765, -0.0008016864304533445, 7.875875116902097e-05)  # erf(x) / x in x^2, |x| < 1
_ERFCX_FAR = (0.0003050177482878391, 0.5584799204704546, 0.04583790911214046, -0.4859395074757397,
              0.5290705744253006, -0.2865356073238542, 0.06135414938317937, 0.010945133553874357,
              -0.005934022514869079)  # exp(x^2) erfc(x) in 1 / x, 1 <= x <= 4
_NEAR_DOUBLE, _FAR_DOUBLE = tuple(reversed(_ERF_NEAR)), tuple(reversed(_ERFCX_FAR))
_ONE_SINGLE = np.float32(1)


def _put_flat(array: np.ndarray, positions: np.ndarray, values: np.ndarray) -> None:
    """``np.put(array, positions, values)`` (C-order positions), in a third of its time by assigning through a flat
    view where the array has one."""
    if array.flags.c_contiguous:
        array.reshape(-1)[positions] = values
    else:
        np.put(array, positions, values)


def _horner(x: np.ndarray, coefficients: tuple) -> np.ndarray:
    """The polynomial with ``coefficients`` (highest first, at least two) at ``x``, in place on one new array."""
    total = x * coefficients[0]
    total += coefficients[1]
    for c in coefficients[2:]:
        total *= x
        total += c
    return total


def _rational(x: np.ndarray, numerator: tuple, denominator: tuple) -> np.ndarray:
    """``numerator(x) / denominator(x)``, the coefficients constant first."""
    result = _horner(x, numerator[::-1])
    result /= _horner(x, denominator[::-1])
    return result


def erf_single(x: np.ndarray) -> np.ndarray:
    """erf of a float32 array, in float32. Beyond 4 it is 1 in single precision (nan stays nan).

    The first polynomial runs over every element (clipped to its interval, so that it cannot overflow); the
    elements beyond it, which are few for activations, are taken out by their indices for the second.
    NumPy's boolean gathers and scatters would cost four times as much.

    >>> erf_single(np.array([0.0, 0.5, -3.0, np.inf], np.float32)).round(6)
    array([ 0.      ,  0.5205  , -0.999978,  1.      ], dtype=float32)
    """
    if not x.ndim:  # (NumPy answers a 0-d array's arithmetic with scalars, which put cannot write)
        return erf_single(x.reshape(1)).reshape(())
    wide = x.astype(np.float64)
    near = np.abs(x) < _ONE_SINGLE
    if near.all():  # the usual small activations: one polynomial
        wide *= _horner(wide * wide, _NEAR_DOUBLE)
        return wide.astype(np.float32)
    inside = np.clip(wide, -1.0, 1.0)
    result = inside * _horner(inside * inside, _NEAR_DOUBLE)
    beyond = np.flatnonzero(~near)  # (nan too); flat indices in C order, as take and put read them
    part = wide.take(beyond)
    size = np.minimum(np.abs(part), 4.0)  # (np.minimum keeps nan)
    tail = np.exp(-(size * size))
    tail *= _horner(1.0 / size, _FAR_DOUBLE)
    _put_flat(result, beyond, np.copysign(1.0 - tail, part))
    return result.astype(np.float32)


# erfinv in single precision, for float32 inputs (nn.init.trunc_normal_'s): erfinv(y) / y as a polynomial in
# w = -log(1 - y^2) up to w = 5, and in sqrt(w) - 3.2 beyond (tools/fit_erf_single.py, 1.2e-8 from erfinv).
_ERFINV_NEAR = (0.88622692420117, 0.23201371276213936, 0.011549165116982965, -0.0023352705949546753,
                -0.0001265394742407688, 4.40488042900318e-05, 4.150663247608768e-06, -2.00827134113805e-06,
                2.2430430171743754e-07, -8.931925977934332e-09)
_ERFINV_FAR = (3.0336365409865373, 1.0046925675750848, 0.005975115923165757, -0.004296425174246544,
               0.002932288286408791, -0.0019820300689483185, 0.00114182742774133, -0.0003786833781466641,
               -0.00010475560569385543, 0.00011153858065029732)
_INVERSE_NEAR_SINGLE = tuple(np.float32(c) for c in reversed(_ERFINV_NEAR))
_INVERSE_FAR_SINGLE = tuple(np.float32(c) for c in reversed(_ERFINV_FAR))
_FIVE_SINGLE, _FAR_CENTRE_SINGLE, _FAR_END_SINGLE = np.float32(5), np.float32(3.2), np.float32(4.1 - 3.2)


def erfinv_single(y: np.ndarray) -> np.ndarray:
    """erfinv of a float32 array, in float32: +-inf at +-1, nan beyond (NumPy warns of that invalid log:
    call it quietly).

    >>> erfinv_single(np.array([0.0, 0.5, -0.999, 1.0], np.float32)).round(6)
    array([ 0.      ,  0.476936, -2.326756,       inf], dtype=float32)
    """
    if not y.ndim:  # (see erf_single)
        return erfinv_single(y.reshape(1)).reshape(())
    w = (_ONE_SINGLE - y) * (_ONE_SINGLE + y)  # exact near 1, where 1 - y^2 would lose y's last digits
    np.log(w, out=w)
    np.negative(w, out=w)
    near = w <= _FIVE_SINGLE
    result = _horner(np.minimum(w, _FIVE_SINGLE), _INVERSE_NEAR_SINGLE)
    if not near.all():
        beyond = np.flatnonzero(~near)  # (nan too)
        centred = np.minimum(np.sqrt(w.take(beyond)) - _FAR_CENTRE_SINGLE, _FAR_END_SINGLE)
        _put_flat(result, beyond, _horner(centred, _INVERSE_FAR_SINGLE))
        edge = np.abs(y.take(beyond)) == _ONE_SINGLE
        if edge.any():
            np.put(result, beyond[edge], np.inf)
    result *= y
    return result


# erfc in single precision, for float32 inputs (and ndtr's): erfc(|x|) = exp(-x^2) erfcx(|x|), with erfcx one
# rational function on [0, 10.5] (tools/fit_erfc_single.py, 6.2e-9 from erfcx; beyond 10.06 erfc is 0 in single),
# and 2 - erfc(|x|) for negative x. It is evaluated in double from the float32 data and rounded once: within 0.6
# units in the last place (torch's float32 erfc is within 0.82). Evaluated in single, the rational function and
# exp would be 8 units off; the series and the continued fraction above cost a hundred passes over the data.
_ERFCX_NUMERATOR = (1.0000000061331633, 1.2416787401174962, 0.7350311743524905, 0.23085367396668022,
                    0.03314007122901975)
_ERFCX_DENOMINATOR = (1.0, 2.3700585239840617, 2.409345911922473, 1.3317662592178379, 0.40920231800365037,
                      0.05873860252574161)
_ERFCX_RATIONAL_END = 10.5


def _erfc_of_magnitude(magnitude: np.ndarray) -> np.ndarray:
    """erfc of a float64 array of magnitudes (>= 0, or nan), computed in place: the array becomes the result.
    Beyond the end of the rational function (10.5) exp(-x^2) (1.7e-48 there) makes the result 0 in single
    precision whatever the function's error; only infinities need clipping to keep it finite."""
    if np.isinf(magnitude).any():
        np.minimum(magnitude, _ERFCX_RATIONAL_END, out=magnitude)
    scaled = _rational(magnitude, _ERFCX_NUMERATOR, _ERFCX_DENOMINATOR)
    np.multiply(magnitude, magnitude, out=magnitude)  # exact: the square of a float32 fits in a float64
    np.negative(magnitude, out=magnitude)
    np.exp(magnitude, out=magnitude)
    magnitude *= scaled
    return magnitude


def _two_minus_where(values: np.ndarray, mask: np.ndarray) -> None:
    """``values`` becomes ``2 - values`` where ``mask`` holds, in place, by arithmetic: on a random mask NumPy's
    np.where and boolean indexing branch per element and cost ten times as much."""
    if not mask.any():
        return
    change = np.multiply(values, -2.0)
    change += 2.0
    change *= mask
    values += change


def erfc_single(x: np.ndarray) -> np.ndarray:
    """erfc of a float32 array, in float32, with full relative precision until it underflows near 10.06.

    >>> erfc_single(np.array([0.0, 0.5, -3.0, 9.0, np.inf], np.float32))
    array([1.0000000e+00, 4.7950011e-01, 1.9999779e+00, 4.1370317e-37,
           0.0000000e+00], dtype=float32)
    """
    if not x.ndim:  # (see erf_single)
        return erfc_single(x.reshape(1)).reshape(())
    result = _erfc_of_magnitude(np.abs(x, dtype=np.float64))
    _two_minus_where(result, x < 0)
    return result.astype(np.float32)


# erfcx(x) ~ 1 / (sqrt(pi) x) (1 - 1/(2x^2) + 3/(4x^4) - 15/(8x^6) + 105/(16x^8)) beyond the rational function's
# end, 10.5 (the next term is 1.8e-9 there); the coefficients in 1 / x^2, highest first
_ERFCX_ASYMPTOTIC_HIGHEST_FIRST = tuple(v / math.sqrt(math.pi) for v in (105 / 16, -15 / 8, 3 / 4, -1 / 2, 1.0))


def _erfcx_asymptotic(x: np.ndarray) -> np.ndarray:
    """erfcx(x) for x > 10.5 (or inf) by its asymptotic series."""
    inverse = 1 / x
    result = _horner(inverse * inverse, _ERFCX_ASYMPTOTIC_HIGHEST_FIRST)
    result *= inverse
    return result


def erfcx_single(x: np.ndarray) -> np.ndarray:
    """The scaled complementary error function exp(x^2) erfc(x) of a float32 array, in float32: the rational
    function of erfc_single up to 10.5, the asymptotic series beyond, and 2 exp(x^2) - erfcx(-x) for negative x
    (inf from -9.4 on), computed in double and rounded once.

    >>> erfcx_single(np.array([0.0, 1.0, 30.0, -1.0, -10.0, np.inf], np.float32))
    array([1.        , 0.42758358, 0.01879589, 5.0089803 ,        inf,
           0.        ], dtype=float32)
    """
    flat = x.reshape(-1)
    wide = flat.astype(np.float64)
    magnitude = np.abs(wide)
    np.minimum(magnitude, _ERFCX_RATIONAL_END, out=magnitude)
    out = _rational(magnitude, _ERFCX_NUMERATOR, _ERFCX_DENOMINATOR)
    far = flat > np.float32(_ERFCX_RATIONAL_END)
    if far.any():
        _on_flat(far, _erfcx_asymptotic, wide, out)
    negative = np.flatnonzero(flat < 0)
    if negative.size:
        part = wide.take(negative)
        out[negative] = 2 * np.exp(part * part) - out.take(negative)  # (x^2 exact in double)
    return out.astype(np.float32).reshape(x.shape)


def ndtr_single(x: np.ndarray) -> np.ndarray:
    """The standard normal distribution function of a float32 array, 0.5 erfc(-x / sqrt(2)), in float32. The
    argument is scaled in double: rounded to single, its error would grow by x^2 in the left tail.

    >>> ndtr_single(np.array([0.0, 1.0, -3.0, -13.0], np.float32))
    array([5.000000e-01, 8.413448e-01, 1.349898e-03, 6.117164e-39],
          dtype=float32)
    """
    if not x.ndim:  # (see erf_single)
        return ndtr_single(x.reshape(1)).reshape(())
    magnitude = np.abs(x, dtype=np.float64)
    magnitude *= math.sqrt(0.5)
    result = _erfc_of_magnitude(magnitude)
    _two_minus_where(result, x > 0)
    result *= 0.5
    return result.astype(np.float32)


def _erfinv_guess(y: np.ndarray, log_one_minus_square: np.ndarray) -> np.ndarray:
    """An estimate of erfinv(y), good to about 2e-3, from a closed form in log(1 - y^2) (Winitzki's)."""
    a = 0.147
    t = 2 / (math.pi * a) + log_one_minus_square / 2
    return np.sign(y) * np.sqrt(np.sqrt(t * t - log_one_minus_square / a) - t)


def _erfinv_central(y: np.ndarray) -> np.ndarray:
    """erfinv for |y| <= 0.5, by Newton's method on erf(x) - y (y itself is exact here, 1 - y might not be)."""
    x = _erfinv_guess(y, np.log1p(-y * y))
    for _ in range(3):
        x = x - (erf(x) - y) * (_SQRT_PI / 2) * np.exp(x * x)
    return x


def _erfcinv_tail(q: np.ndarray) -> np.ndarray:
    """erfcinv(q) for 0 < q <= 0.5, by Newton's method on log(erfc(x)) - log(q), which stays finite in the tail."""
    x = _erfinv_guess(np.ones_like(q), np.log(q * (2 - q)))
    log_q = np.log(q)
    for _ in range(3):
        scaled = erfcx(x)
        x = x + (np.log(scaled) - x * x - log_q) * (_SQRT_PI / 2) * scaled
    return x


def erfcinv(q) -> np.ndarray:
    """The x with erfc(x) = q, for q in [0, 2]: inf at 0, -inf at 2, nan outside."""
    q = _float64(q)
    out = np.full_like(q, np.nan)
    small, large = q <= 0.5, q >= 1.5  # where 1 - q would lose q's precision: solve in the tail instead
    central = (q > 0.5) & (q < 1.5)
    _on(small & (q > 0), _erfcinv_tail, q, out)
    _on(large & (q < 2), lambda v: -_erfcinv_tail(2 - v), q, out)
    _on(central, lambda v: _erfinv_central(1 - v), q, out)
    out[q == 0], out[q == 2] = np.inf, -np.inf
    return out


def erfinv(y) -> np.ndarray:
    """The x with erf(x) = y, for y in [-1, 1]: +-inf at +-1, nan outside."""
    y = _float64(y)
    out = np.full_like(y, np.nan)
    central = np.abs(y) <= 0.5
    _on(central, _erfinv_central, y, out)
    _on((y > 0.5) & (y < 1), lambda v: _erfcinv_tail(1 - v), y, out)
    _on((y < -0.5) & (y > -1), lambda v: -_erfcinv_tail(1 + v), y, out)
    out[y == 1], out[y == -1] = np.inf, -np.inf
    return np.copysign(out, y, out=out)  # erfinv is odd: y's sign, -0.0 at -0.0 as torch's


def ndtr(x) -> np.ndarray:
    """The standard normal distribution function, 0.5 erfc(-x / sqrt(2)): precise in both tails."""
    x = _float64(x)
    out = np.empty_like(x)
    left = x < -1
    _on(left, lambda v: _normal_tail(-v), x, out)
    _on(~left, lambda v: 0.5 * erfc(-v / math.sqrt(2)), x, out)
    return out


def _normal_tail(x: np.ndarray) -> np.ndarray:
    """1 - ndtr(x) for x >= 1, as exp(-x^2 / 2) erfcx(x / sqrt(2)) / 2 with x^2 split exactly: erfc(x / sqrt(2))
    would magnify the rounding of x / sqrt(2) by x^2 (1e-13 relative at x = 35)."""
    with np.errstate(under="ignore"):
        return 0.5 * _exp_of_square(x, -0.5) * erfcx(x / math.sqrt(2))


def ndtri(p) -> np.ndarray:
    """The inverse of ndtr: -sqrt(2) erfcinv(2p) (2p is exact, so the left tail keeps its precision)."""
    return 0.0 - math.sqrt(2) * erfcinv(2 * _float64(p))  # 0 - ...: +0 at p = 1/2, not -0


# ndtri for float32 inputs, computed in double from the float32 data and rounded once (within 0.55 units in the
# last place; torch's float32 ndtri: 4): two rational functions of tools/fit_ndtri_single.py, ndtri(1/2 + q) / q
# in q^2 for |q| <= 0.425 (2.9e-10 relative), and -ndtri(p) in sqrt(-2 log p) in the tails, with 1 - p for the
# upper one (exact, from a float32) (1.9e-9 relative). The general code above takes Newton steps on erfc.
_NDTRI_CENTRE_NUMERATOR = (2.506628275359467, -21.612789529972886, 60.68983526547513, -58.94706380144016,
                           11.083809883324623)
_NDTRI_CENTRE_DENOMINATOR = (1.0, -9.66945294205938, 32.0346477329776, -41.045242359670176, 15.298177976586697)
_NDTRI_TAIL_NUMERATOR = (-3.014116421356371, -5.000265049482199, 2.9445739141441503, 2.6345666346451146,
                         0.2704286240876104)
_NDTRI_TAIL_DENOMINATOR = (1.0, 4.0983715673688925, 2.64521210130906, 0.27026334748712283, 1.6665169148892863e-06)
_NDTRI_CENTRE_END = 0.425


def _ndtri_centre(p: np.ndarray) -> np.ndarray:
    """ndtri(p) for |p - 1/2| <= 0.425."""
    distance = p - 0.5  # (exact)
    result = _rational(distance * distance, _NDTRI_CENTRE_NUMERATOR, _NDTRI_CENTRE_DENOMINATOR)
    result *= distance
    return result


def _ndtri_tails(p: np.ndarray) -> np.ndarray:
    """ndtri(p) for 0 < p < 0.075 and 0.925 < p < 1."""
    root = np.minimum(p, 1 - p)  # (1 - p exact: p has float32's digits)
    np.log(root, out=root)
    root *= -2.0
    np.sqrt(root, out=root)
    return np.copysign(_rational(root, _NDTRI_TAIL_NUMERATOR, _NDTRI_TAIL_DENOMINATOR), p - 0.5)


def ndtri_single(p: np.ndarray) -> np.ndarray:
    """ndtri of a float32 array, in float32: -inf at 0, inf at 1, nan outside [0, 1].

    >>> ndtri_single(np.array([0.5, 0.975, 1e-30, 0.0, 1.0, 1.5], np.float32))
    array([  0.       ,   1.9599644, -11.464025 ,        -inf,         inf,
                   nan], dtype=float32)
    """
    flat = p.reshape(-1)
    wide = flat.astype(np.float64)
    out = np.full_like(wide, np.nan)
    centre = np.abs(flat - np.float32(0.5)) <= np.float32(_NDTRI_CENTRE_END)
    _on_flat(centre, _ndtri_centre, wide, out)
    _on_flat(~centre & (flat > 0) & (flat < 1), _ndtri_tails, wide, out)
    out[flat == 0], out[flat == 1] = -np.inf, np.inf
    return out.astype(np.float32).reshape(p.shape)


def log_ndtr(x) -> np.ndarray:
    """log(ndtr(x)): through the scaled erfc below -1, where ndtr underflows long before its log does."""
    x = _float64(x)
    out = np.empty_like(x)
    left = x < -1
    _on(left, lambda v: np.log(0.5 * erfcx(-v / math.sqrt(2))) - v * v / 2, x, out)
    right = x >= 1
    _on(~left & ~right, lambda v: np.log1p(-0.5 * erfc(v / math.sqrt(2))), x, out)
    _on(right, lambda v: np.log1p(-_normal_tail(v)), x, out)
    return out


_LOG_2 = math.log(2)
_LOG_NDTR_LARGEST_ARGUMENT = 3e38  # beyond every float32 / sqrt(2): keeps the rational function finite at -inf


def _log_ndtr_left(x: np.ndarray) -> np.ndarray:
    """log(ndtr(x)) for x < 0 in double: -x^2/2 + log(erfcx(-x / sqrt(2)) / 2), which never underflows. The
    rational erfcx drifts to 1.1e-5 relative beyond its interval (10.5), where x^2/2 makes that a hundredth of
    a unit in the last place at most."""
    magnitude = x * -math.sqrt(0.5)
    np.minimum(magnitude, _LOG_NDTR_LARGEST_ARGUMENT, out=magnitude)
    result = _rational(magnitude, _ERFCX_NUMERATOR, _ERFCX_DENOMINATOR)
    np.log(result, out=result)
    result -= _LOG_2
    result -= x * x * 0.5  # exact: x has float32's digits
    return result


def _log_ndtr_right(x: np.ndarray) -> np.ndarray:
    """log(ndtr(x)) = log1p(-erfc(x / sqrt(2)) / 2) for x >= 0 (or nan) in double."""
    result = _erfc_of_magnitude(x * math.sqrt(0.5))
    result *= -0.5
    np.log1p(result, out=result)
    return result


def log_ndtr_single(x: np.ndarray) -> np.ndarray:
    """log(ndtr(x)) of a float32 array, in float32, computed in double and rounded once.

    >>> log_ndtr_single(np.array([0.0, 3.0, -3.0, -40.0, 20.0, -np.inf], np.float32))
    array([-6.9314718e-01, -1.3508099e-03, -6.6077261e+00, -8.0460846e+02,
           -0.0000000e+00,           -inf], dtype=float32)
    """
    flat = x.reshape(-1)
    wide = flat.astype(np.float64)
    out = np.empty_like(wide)
    left = flat < 0
    _on_flat(left, _log_ndtr_left, wide, out)
    _on_flat(~left, _log_ndtr_right, wide, out)
    return out.astype(np.float32).reshape(x.shape)


# ----------------------------------------------------------------- the gamma family


def _stirling(x: np.ndarray) -> np.ndarray:
    """log(gamma(x)) for x >= 10 by Stirling's series."""
    return (x - 0.5) * np.log(x) - x + _LOG_SQRT_2PI + _stirling_correction(x)


def _stirling_correction(x: np.ndarray) -> np.ndarray:
    """log(gamma(x)) - ((x - 1/2) log(x) - x + log(2 pi) / 2) for x >= 10: the sum of B_2k / (2k (2k - 1) x^(2k-1))."""
    inverse, inverse_square = 1 / x, 1 / (x * x)
    correction, power = np.zeros_like(x), inverse
    for k, b in enumerate(_BERNOULLI[:8], 1):
        correction += b / (2 * k * (2 * k - 1)) * power
        power = power * inverse_square
    return correction


def _lgamma_near_two(z: np.ndarray) -> np.ndarray:
    """log(gamma(2 + z)) for |z| <= 0.25 by its Taylor series, exact near the zero at z = 0."""
    poly = np.zeros_like(z)
    for k in range(len(_ZETA_MINUS_ONE) + 1, 1, -1):  # Horner's scheme in z, from the highest power down
        poly = poly * z + (-1) ** k * _ZETA_MINUS_ONE[k - 2] / k
    return (1 - _EULER) * z + poly * z * z


def _lgamma_positive(x: np.ndarray) -> np.ndarray:
    """log(gamma(x)) for x > 0: by the Taylor series about 2 within 1/2 of 0, 1 or 2 (each shift exact), by
    that series and exact shifts of x up to 10, by Stirling's series beyond. Stirling's series from below 10
    loses the digits of the small values between the zeros at 1 and 2 (lgamma(1.6) = -0.11 from terms near 10)."""
    out = np.empty_like(x)
    _on(x < 1.5, _lgamma_near_zero_or_one, x, out)
    _on((x >= 1.5) & (x < _STIRLING_ABOVE), _lgamma_shifted_to_two, x, out)
    _on(x >= _STIRLING_ABOVE, _stirling, x, out)
    return out


_STIRLING_ABOVE = 10.0  # Stirling's series to B_16 is within 3e-17 of log(gamma(x)) from here on


def _lgamma_near_zero_or_one(x: np.ndarray) -> np.ndarray:
    """log|gamma(x)| for -1/2 < x < 3/2: lgamma(2 + x) - log|x (1 + x)| for |x| < 1/2 (x itself is the series'
    argument, exact however small), lgamma(2 + (x - 1)) - log(x) from 1/2 on."""
    out = np.empty_like(x)
    near_zero = np.abs(x) < 0.5
    _on(near_zero, lambda v: _lgamma_near_two(v) - np.log(np.abs(v)) - np.log1p(v), x, out)
    _on(~near_zero, lambda v: _lgamma_near_two(v - 1) - np.log(v), x, out)
    return out


def _lgamma_shifted_to_two(x: np.ndarray) -> np.ndarray:
    """log|gamma(x)| for 1.5 <= |x| < 10, x not an integer, from z = x -+ n in [1.5, 2.5): gamma(x) is
    gamma(z) (z (z + 1) ... (x - 1)) above, gamma(z) / (x (x + 1) ... (z - 1)) below. Each shift of x is exact
    (its bits stay within those of z), each factor too, so log|gamma| keeps its precision next to its zeros."""
    z, product = x.copy(), np.ones_like(x)
    above, below = x >= 2.5, x < 1.5
    while above.any() or below.any():  # a dozen steps at most
        z[above] -= 1
        product[above] *= z[above]
        product[below] *= z[below]
        z[below] += 1
        above &= z >= 2.5
        below &= z < 1.5
    log_product = np.log(np.abs(product))
    return _lgamma_near_two(z - 2) + np.where(x < 0, -log_product, log_product)


def _sin_pi_abs(x: np.ndarray) -> np.ndarray:
    """|sin(pi x)|, from x's distance to the nearest integer (exact), so it is precise near the integers."""
    return np.abs(np.sin(math.pi * (x - np.round(x))))


def lgamma(x) -> np.ndarray:
    """log|gamma(x)|: inf at 0, the negative integers and +-inf; by reflection below 0."""
    x = _float64(x)
    out = np.full_like(x, np.inf)
    out[np.isnan(x)] = np.nan
    positive = (x > 0) & (x < np.inf)
    non_integer = x != np.floor(x)
    near_zero = (x < 0) & (x > -0.5)  # from x itself: sin(pi x) would lose a subnormal's bits
    shifted = non_integer & (x <= -0.5) & (x > -_STIRLING_ABOVE)  # as Cephes: no cancellation of log(pi) ...
    reflected = non_integer & (x <= -_STIRLING_ABOVE)  # ... against lgamma(1 - x) near the zeros of lgamma
    _on(positive, _lgamma_positive, x, out)
    _on(near_zero, _lgamma_near_zero_or_one, x, out)
    _on(shifted, _lgamma_shifted_to_two, x, out)
    _on(reflected, lambda v: _LOG_PI - np.log(_sin_pi_abs(v)) - _lgamma_positive(1 - v), x, out)
    return out


# lgamma for float32 inputs, computed in double from the float32 data and rounded once (within 0.5 units in the
# last place and a hundredth; torch's float32 lgamma: 0.84): from 8 on Stirling's series to x^-5 (3e-11
# relative), below one rational function of tools/fit_lgamma_single.py for lgamma(x) / ((x - 1) (x - 2)) on
# [1, 8] (2.6e-11 relative: the zeros factored out keep the relative precision next to them), and
# lgamma(x) = lgamma(x + 1) - log(x) below 1. Negative x by reflection. The general code above loops over a
# shift of each element and indexes by masks, several hundred passes over the data.
_LGAMMA_NUMERATOR = (2.1301396555236205, 20.494297784820855, 37.662810165563286, 18.79689640348568,
                     2.680826751115421, 0.08728377124721073, 0.00014500775378675657)
_LGAMMA_DENOMINATOR = (1.0, 18.630539749831822, 57.86738253283876, 49.50758113812316, 13.625601056742418,
                       1.152737366934971, 0.021733639238770062)
_STIRLING_FROM = 8.0
_LGAMMA_HUGE = 1e37  # lgamma overflows single precision from 4.1e36 on: inf clipped there keeps Stirling finite


def _on_flat(mask: np.ndarray, fn, x: np.ndarray, out: np.ndarray) -> None:
    """``out[mask] = fn(x[mask])`` for 1-d arrays, through the mask's indices: boolean indexing branches per
    element and costs ten times as much on a random mask."""
    if mask.all():
        out[:] = fn(x)
        return
    where = np.flatnonzero(mask)
    if where.size:
        out[where] = fn(x.take(where))


def _stirling_single(x: np.ndarray) -> np.ndarray:
    """log(gamma(x)) for 8 <= x (or inf, nan) in double, to the relative precision single precision needs."""
    if np.isinf(x).any():
        x = np.minimum(x, _LGAMMA_HUGE)
    inverse = 1 / x
    square = inverse * inverse
    correction = _horner(square, (1 / 1260, -1 / 360, 1 / 12))
    correction *= inverse
    result = np.log(x)
    result *= x - 0.5
    result -= x
    result += correction
    result += _LOG_SQRT_2PI
    return result


def _lgamma_below_stirling(x: np.ndarray) -> np.ndarray:
    """log(gamma(x)) for 0 < x < 8 in double: (y - 1) (y - 2) P(y) / Q(y) at y = x, or y = x + 1 below 1."""
    below_one = x < 1
    y = x + below_one
    result = _rational(y, _LGAMMA_NUMERATOR, _LGAMMA_DENOMINATOR)
    result *= y - 1
    result *= y - 2
    result += 0.0  # lgamma(1) is +0, not the -0 of 0 (1 - 2)
    where = np.flatnonzero(below_one)
    if where.size:
        result[where] -= np.log(x.take(where))
    return result


def _split_at(threshold: float, below, beyond, x: np.ndarray) -> np.ndarray:
    """``below(x)`` where x < threshold and ``beyond(x)`` elsewhere (inf and nan too), for a 1-d array."""
    out = np.empty_like(x)
    small = x < threshold
    _on_flat(small, below, x, out)
    _on_flat(~small, beyond, x, out)
    return out


def _lgamma_positive_single(x: np.ndarray) -> np.ndarray:
    """log(gamma(x)) for a 1-d float64 array of x > 0 (or +inf, nan)."""
    return _split_at(_STIRLING_FROM, _lgamma_below_stirling, _stirling_single, x)


# sin(pi f) / f in f^2 for |f| <= 1/2, Taylor's coefficients to f^18 (the next term is 4e-14 of the sum):
# NumPy's sin in double is libm's, one element at a time, six times the cost of this polynomial
_SIN_PI_HIGHEST_FIRST = tuple((-1) ** k * math.pi ** (2 * k + 1) / math.factorial(2 * k + 1) for k in range(9, -1, -1))


def _lgamma_reflected(x: np.ndarray, lgamma_of_one_minus_x: np.ndarray) -> np.ndarray:
    """log|gamma(x)| for negative x: log(pi) - log|sin(pi x)| - lgamma(1 - x), sin(pi x) from x's distance to the
    nearest integer (exact) so that it is precise next to the poles; inf at the poles and at -inf."""
    distance = x - np.round(x)
    result = _horner(distance * distance, _SIN_PI_HIGHEST_FIRST)
    result *= distance
    np.abs(result, out=result)
    np.log(result, out=result)  # (-inf at the poles)
    np.subtract(_LOG_PI, result, out=result)
    result -= lgamma_of_one_minus_x
    if np.isinf(x).any():
        result[np.isinf(x)] = np.inf
    return result


def lgamma_single(x: np.ndarray) -> np.ndarray:
    """log|gamma(x)| of a float32 array, in float32: inf at 0, the negative integers and +-inf. One evaluation
    for all: at x, and at 1 - x for negative x, which the reflection then turns into lgamma(x).

    >>> lgamma_single(np.array([0.5, 1.0, 3.0, 100.0, -2.5, -0.0, -3.0, np.nan], np.float32))
    array([ 5.7236493e-01,  0.0000000e+00,  6.9314718e-01,  3.5913422e+02,
           -5.6243718e-02,            inf,            inf,            nan],
          dtype=float32)
    """
    return _with_reflection(x, _lgamma_positive_single, _lgamma_reflected)  # (lgamma(+-0) is -log(0))


def _with_reflection(x: np.ndarray, positive, reflection) -> np.ndarray:
    """``positive(x)`` for x >= 0 (or nan), and ``reflection(x, positive(1 - x))`` for negative x, of a float32
    array, computed in double and rounded once. ``positive`` runs once, on all: at x, and at 1 - x for the
    negatives. The infinities and nans of zeros, poles and -inf come quietly."""
    flat = x.reshape(-1)
    argument = flat.astype(np.float64)
    negative = np.flatnonzero(flat < 0)
    reflected = argument.take(negative)
    argument[negative] = 1 - reflected
    with np.errstate(divide="ignore", invalid="ignore"):
        out = positive(argument)
        if negative.size:
            out[negative] = reflection(reflected, out.take(negative))
    return out.astype(np.float32).reshape(x.shape)


def _digamma_positive(x: np.ndarray) -> np.ndarray:
    """digamma for x > 0: recurrence up to 10, then the asymptotic series log x - 1/(2x) - sum B_2k / (2k x^2k)."""
    shift, x = np.zeros_like(x), x.copy()
    while (x < 10).any():
        low = x < 10
        shift[low] -= 1 / x[low]
        x[low] += 1
    inverse_square = 1 / (x * x)
    series, power = np.zeros_like(x), inverse_square
    for k, b in enumerate(_BERNOULLI[:7], 1):
        series += b / (2 * k) * power
        power = power * inverse_square
    return shift + np.log(x) - 0.5 / x - series


def digamma(x) -> np.ndarray:
    """d/dx log gamma(x): -inf at +0 and inf at -0 (as torch), nan at the negative integers and -inf."""
    x = _float64(x)
    out = np.full_like(x, np.nan)
    with np.errstate(divide="ignore"):
        out[x == 0] = np.copysign(np.inf, -x[x == 0])
    _on(x > 0, _digamma_positive, x, out)  # inf too: log(inf) is inf
    negative = (x < 0) & (x != np.floor(x))
    _on(negative, lambda v: _digamma_positive(1 - v) - math.pi / np.tan(math.pi * (v - np.round(v))), x, out)
    # (the distance to the nearest integer, exact and within 1/2, keeps pi times it precise next to the poles)
    return out


# digamma for float32 inputs, computed in double from the float32 data and rounded once (within 0.51 units in
# the last place; torch's float32 digamma: 15, and its relative precision is lost next to the zero at 1.46): from
# 8 on the asymptotic series to x^-8 (4e-12 relative), below one rational function of
# tools/fit_digamma_single.py for digamma(x) / (x - x0) on [1, 8] (9.6e-11 relative; x0 = 1.4616..., the zero,
# as the sum of two doubles), and digamma(x) = digamma(x + 1) - 1 / x below 1. Negative x by reflection.
_DIGAMMA_ZERO_HIGH, _DIGAMMA_ZERO_LOW = 1.4616321449683622, 9.549995429965697e-17
_DIGAMMA_NUMERATOR = (6443.842383026071, 17614.354108433592, 10584.826639768196, 1733.8907197779024,
                      63.171238703605795, 0.1041939534328862)
_DIGAMMA_DENOMINATOR = (1.0, 9410.596053194933, 13897.457500448187, 5254.400387188101, 566.7350878193772,
                        13.099635437665112)
_ASYMPTOTIC_FROM = 8.0
# B_2k / 2k for k = 4, 3, 2, 1: the asymptotic series of digamma in 1 / x^2
_DIGAMMA_SERIES_HIGHEST_FIRST = tuple(b / (2 * k) for k, b in zip((4, 3, 2, 1), reversed(_BERNOULLI[:4])))
# cos(pi f) in f^2 for |f| <= 1/2, Taylor's coefficients to f^20 (the next term is 4e-15 of the sum)
_COS_PI_HIGHEST_FIRST = tuple((-1) ** k * math.pi ** (2 * k) / math.factorial(2 * k) for k in range(10, -1, -1))


def _digamma_asymptotic(x: np.ndarray) -> np.ndarray:
    """digamma(x) for x >= 8 (or inf, nan): log(x) - 1/(2x) - sum B_2k / (2k x^2k)."""
    inverse = 1 / x
    series = _horner(inverse * inverse, _DIGAMMA_SERIES_HIGHEST_FIRST + (0.0,))
    result = np.log(x)
    result -= 0.5 * inverse
    result -= series
    return result


def _digamma_below_asymptotic(x: np.ndarray) -> np.ndarray:
    """digamma(x) for 0 < x < 8: (y - x0) P(y) / Q(y) at y = x, or at y = x + 1 less 1 / x below 1."""
    below_one = x < 1
    y = x + below_one
    result = _rational(y, _DIGAMMA_NUMERATOR, _DIGAMMA_DENOMINATOR)
    distance = y - _DIGAMMA_ZERO_HIGH  # exact next to the zero
    distance -= _DIGAMMA_ZERO_LOW
    result *= distance
    where = np.flatnonzero(below_one)
    if where.size:
        result[where] -= 1 / x.take(where)
    return result


def _digamma_positive_single(x: np.ndarray) -> np.ndarray:
    """digamma for a 1-d float64 array of x > 0 (or +inf, nan)."""
    return _split_at(_ASYMPTOTIC_FROM, _digamma_below_asymptotic, _digamma_asymptotic, x)


def _digamma_reflected(x: np.ndarray, digamma_of_one_minus_x: np.ndarray) -> np.ndarray:
    """digamma(x) for negative x: digamma(1 - x) - pi cos(pi f) / sin(pi f), f = x less its nearest integer
    (exact), so that the cotangent is precise next to the poles; nan at the poles and at -inf."""
    distance = x - np.round(x)
    square = distance * distance
    sine = _horner(square, _SIN_PI_HIGHEST_FIRST)
    sine *= distance
    result = _horner(square, _COS_PI_HIGHEST_FIRST)
    result *= -math.pi
    result /= sine
    result += digamma_of_one_minus_x
    if not distance.all():
        result[distance == 0] = np.nan
    return result


def digamma_single(x: np.ndarray) -> np.ndarray:
    """digamma of a float32 array, in float32: -inf at +0, inf at -0, nan at the negative integers and -inf. One
    evaluation for all: at x, and at 1 - x for negative x, which the reflection then turns into digamma(x).

    >>> digamma_single(np.array([1.0, 0.5, 10.0, -2.5, 0.0, -0.0, -3.0, np.inf], np.float32))
    array([-0.5772157, -1.96351  ,  2.2517526,  1.1031567,       -inf,
                  inf,        nan,        inf], dtype=float32)
    """
    return _with_reflection(x, _digamma_positive_single, _digamma_reflected)  # (digamma(+-0) is -1/(+-0))


def trigamma(x, precision=np.float64) -> np.ndarray:
    """polygamma(1, x), computed as torch computes it (reflection below 1/2, six steps of the recurrence, then
    the asymptotic series to x^-7): good to about 5e-10 relative, torch's values to the last bits.

    torch's single-precision kernel does every step in single (``precision=np.float32``): next to the poles
    its sin(pi x) is then far from the double one (4% at -2.9999), and at them finite (5.6e12 at -7), not 1.3e31.
    """
    x = np.array(x, precision).reshape(-1)
    number = precision
    result, sign = np.zeros_like(x), np.ones_like(x)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        pi = number(math.pi)
        reflect = x < number(0.5)
        sin_pi_x = np.sin(pi * x[reflect])
        result[reflect] -= pi * pi / (sin_pi_x * sin_pi_x)
        sign[reflect], x[reflect] = -1, number(1) - x[reflect]
        for _ in range(6):
            result += number(1) / (x * x)
            x += number(1)
        ixx = number(1) / (x * x)
        result += (number(1) + number(1) / (number(2) * x)
                   + ixx * (number(1 / 6) - ixx * (number(1 / 30) - ixx * number(1 / 42)))) / x
    return sign * result


_ZETA_HUGE = np.finfo(np.float64).max ** (1 / 23)  # from here on (2.5e13) torch's series for zeta overflows


def hurwitz_zeta(s, q) -> np.ndarray:
    """zeta(s, q) = sum over k >= 0 of (q + k)^-s, elementwise, for s > 1; at the edges what torch gives: inf at
    s = 1 and at the non-positive integers q, nan for s < 1, at q = inf, and for a negative q with a fractional s."""
    s, q = (np.array(v, np.float64) for v in np.broadcast_arrays(_float64(s), _float64(q)))
    out = np.full_like(q, np.nan)
    pole = (q <= 0) & (q == np.floor(q))  # -inf too
    out[pole & ~(s < 1)] = np.inf
    huge = (s > _ZETA_HUGE) & ~pole & ~np.isnan(q)  # q^-s: inf below 1, 1 at 1, and (as torch) nan above
    regular = (s > 1) & ~huge & ~pole & (q < np.inf) & ~((q < 0) & (s != np.floor(s)))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        if regular.any():
            out[regular] = _zeta_sum(s[regular], q[regular])
        out[huge] = np.where(q[huge] < 1, np.inf, np.where(q[huge] == 1, 1.0, np.nan))
    out[s == 1] = np.inf
    return out


def _zeta_sum(s: np.ndarray, q: np.ndarray) -> np.ndarray:
    """The terms directly until q + k >= 10 + min(s, 60), then the Euler-Maclaurin tail; far below 0, through
    zeta at positive arguments (summing the terms would take of the order of -q steps)."""
    far_below = q < _ZETA_FAR_BELOW
    if far_below.any():
        total = np.empty_like(q)
        total[far_below] = _zeta_far_below(s[far_below], q[far_below])
        total[~far_below] = _zeta_sum(s[~far_below], q[~far_below])
        return total
    total, a = np.zeros_like(q), q.copy()
    start = 10 + np.minimum(s, 60)  # beyond s = 60 the terms past the first few vanish anyway
    for i in np.flatnonzero(start - q > 100):  # far below: all of the element's terms at once, added in order
        count = math.ceil(start[i] - q[i])  # (the terms either side of 0 cancel: the order keeps it exact)
        total[i], a[i] = np.cumsum((q[i] + np.arange(count)) ** -s[i])[-1], q[i] + count
    low = a < start
    while low.any():
        total[low] += a[low] ** -s[low]
        a[low] += 1
        low = a < start
    total += a ** (1 - s) / (s - 1) + 0.5 * a ** -s
    factor, power = s.copy(), a ** (-s - 1)  # s (s + 1) ... (s + 2j - 2) and a^(-s - 2j + 1), for j = 1
    for j, b in enumerate(_BERNOULLI, 1):
        total += np.where(power == 0, 0.0, b / math.factorial(2 * j) * factor * power)  # not 0 * inf
        factor = factor * (s + 2 * j - 1) * (s + 2 * j)
        power = power / (a * a)
    return total


# below this, zeta(s, q) is found through positive arguments, whose terms for f and 1 - f cancel less exactly than
# the sum of the terms in order does, but in time independent of q
_ZETA_FAR_BELOW = -1e4


def _zeta_far_below(s: np.ndarray, q: np.ndarray) -> np.ndarray:
    """zeta(s, q) for q = -(m + f), m a whole number and 0 < f < 1, s a whole number (as it is wherever q < 0):
    the terms down to q + m + 1 = 1 - f are (-1)^s (j + f)^-s for j = 0 ... m, which is (-1)^s (zeta(s, f) -
    zeta(s, 1 - q)), and zeta(s, 1 - f) is the rest."""
    f = -q - np.floor(-q)
    sign = np.where(s % 2 == 0, 1.0, -1.0)
    return sign * (_zeta_sum(s, f) - _zeta_sum(s, 1 - q)) + _zeta_sum(s, 1 - f)


def polygamma(n: int, x) -> np.ndarray:
    """The n-th derivative of digamma: (-1)^(n+1) n! zeta(n + 1, x) for n >= 2."""
    if n == 0:
        return digamma(x)
    if n == 1:
        return trigamma(x)
    return (1.0 if n % 2 else -1.0) * math.factorial(n) * hurwitz_zeta(n + 1.0, x)


_ZETA_MINUS_ONE = tuple(float(hurwitz_zeta(k, 2.0)[()]) for k in range(2, 30))  # zeta(k) - 1, for lgamma near 1 and 2


# ----------------------------------------------------------------- the regularized incomplete gamma functions

_GAMMAINC_MAX_TERMS = 20000  # enough for a up to about 1e7 near x = a; the loops stop once every element has converged


def gammainc(a, x) -> np.ndarray:
    """The regularized lower incomplete gamma function P(a, x), for a, x >= 0 (nan elsewhere, as torch)."""
    return _incomplete_gamma(a, x, lower=True)


def gammaincc(a, x) -> np.ndarray:
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""
    return _incomplete_gamma(a, x, lower=False)


def _incomplete_gamma(a, x, lower: bool) -> np.ndarray:
    """By Temme's uniform expansion for a > 20 with x within 30% of a, elsewhere by the series of P where
    x < a + 1 and the continued fraction of Q beyond, each where the other is 1 - it; the edges (a = 0, x = 0,
    infinities) as torch gives them."""
    a, x = (np.array(v, np.float64) for v in np.broadcast_arrays(_float64(a), _float64(x)))
    out = np.full_like(x, np.nan)
    valid = ~((a < 0) | (x < 0))  # and then, as torch: x = 0 or a = inf give 0 (with a nan other too) ...
    p_is_zero = valid & (((x == 0) & (a != 0)) | ((a == np.inf) & (x != np.inf)))
    p_is_one = valid & (((a == 0) & (x > 0)) | ((x == np.inf) & (a != np.inf)))  # ... x = inf or a = 0 give 1
    out[p_is_one], out[p_is_zero] = (1.0, 0.0) if lower else (0.0, 1.0)
    regular = (a > 0) & (x > 0) & (a < np.inf) & (x < np.inf)
    uniform = regular & (a > _UNIFORM_FROM) & (np.abs(x - a) < _UNIFORM_WITHIN * a)
    series = regular & ~uniform & (x < a + 1)
    fraction = regular & ~uniform & ~(x < a + 1)
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        if uniform.any():
            out[uniform] = _uniform_expansion(a[uniform], x[uniform], lower)
        if not lower:  # Q = 1 - P would cancel to nothing (or below 0) where P is close to 1
            small_q = series & _q_by_its_series(a, x)
            _on(small_q, lambda v: _gammaincc_series(a[small_q], v), x, out)
            series &= ~small_q
        if series.any():
            p = _gammainc_series(a[series], x[series])
            out[series] = p if lower else 1 - p
        if fraction.any():
            q = _gammaincc_fraction(a[fraction], x[fraction])
            out[fraction] = 1 - q if lower else q
    return out


# Where Temme's expansion takes over, as in the Cephes library (which for a > 200 narrows the band to
# |x - a| < 4.5 sqrt(a)): there the series and the continued fraction need of the order of sqrt(a) terms, and
# 30% off a they need a few hundred at most.
_UNIFORM_FROM = 20.0
_UNIFORM_WITHIN = 0.3
_UNIFORM_TERMS = 25  # powers of 1 / a, and of eta in each of their coefficients: 20^-25 and 0.36^25 are negligible


def _uniform_expansion(a: np.ndarray, x: np.ndarray, lower: bool) -> np.ndarray:
    """Q(a, x) = erfc(eta sqrt(a/2)) / 2 + exp(-a eta^2 / 2) / sqrt(2 pi a) * sum over k of C_k(eta) / a^k, where
    eta^2 / 2 = mu - log(1 + mu), mu = x / a - 1 and eta has the sign of mu (Temme, 1979); P(a, x) is the same
    with eta and the sum negated. Accurate where the C_k converge in eta and a is large: |mu| < 0.3, a > 20."""
    half_eta_square = _log_ratio_excess(x, a)
    eta = np.copysign(np.sqrt(2 * half_eta_square), x - a)
    sign = -1.0 if lower else 1.0
    coefficients, inverse_a = _uniform_coefficients(), 1 / a
    total = np.zeros_like(x)
    for row in coefficients[::-1]:  # Horner's scheme in 1 / a over C_k(eta), each by Horner's scheme in eta
        total = total * inverse_a + _horner(eta, tuple(row[::-1]))
    tail = np.exp(-a * half_eta_square) / np.sqrt(2 * math.pi * a) * total
    return 0.5 * erfc(sign * eta * np.sqrt(a / 2)) + sign * tail


@functools.cache
def _uniform_coefficients() -> np.ndarray:
    """d[k, n], the Taylor coefficients of Temme's C_k(eta) = sum over n of d[k, n] eta^n, for k, n < 25.

    mu = x / a - 1 is a power series in eta, sum over m of b_m eta^m with b_1 = 1, fixed term by term by
    mu mu' = eta (1 + mu) (the derivative of eta^2 / 2 = mu - log(1 + mu)). Then C_0 = 1/mu - 1/eta, and
    C_k = C_{k-1}' / eta + g_k / mu with the constant g_k that cancels the pole at eta = 0, g_k = -d[k-1, 1]:
    d[k, n] = (n + 2) d[k-1, n+2] - d[k-1, 1] d[0, n]. In double precision each entry comes within 4e-15 of
    its row's largest (exact rational arithmetic agrees), well below what the sum needs.

    >>> _uniform_coefficients()[:2, :3]  # -1/3, 1/12, -2/135 and -1/540, -1/288, 1/378
    array([[-0.33333333,  0.08333333, -0.01481481],
           [-0.00185185, -0.00347222,  0.0026455 ]])
    """
    count = _UNIFORM_TERMS
    length = 3 * count  # row k needs d[0, n] up to n = count + 2k
    b = [0.0, 1.0]
    for m in range(2, length + 2):
        b.append((b[m - 1] - sum((m + 1 - i) * b[i] * b[m + 1 - i] for i in range(2, m))) / (m + 1))
    reciprocal = [1.0]  # eta / mu = 1 / (1 + sum over n >= 1 of b_(n+1) eta^n), term by term
    for n in range(1, length + 1):
        reciprocal.append(-sum(b[j + 1] * reciprocal[n - j] for j in range(1, n + 1)))
    rows = [reciprocal[1:]]  # 1/mu - 1/eta = (eta / mu - 1) / eta
    for _ in range(1, count):
        previous = rows[-1]
        rows.append([(n + 2) * previous[n + 2] - previous[1] * rows[0][n] for n in range(len(previous) - 2)])
    return np.array([row[:count] for row in rows])


_LOG1P_SERIES_TERMS = 18  # t^(2j+1) / (2j+1) for |t| <= 1/3 falls below 1e-17 of t^2 by j = 18


def _log_ratio_excess(x: np.ndarray, a: np.ndarray) -> np.ndarray:
    """mu - log(1 + mu) >= 0 for mu = x / a - 1, precise near mu = 0 where the two cancel: with
    t = mu / (2 + mu), log(1 + mu) = 2 atanh(t) = 2 (t + t^3/3 + ...) and mu = 2t + mu t, so
    mu - log(1 + mu) = mu t - 2 (t^3/3 + t^5/5 + ...). Elsewhere from x / a itself, whose logarithm stays
    precise where 1 + mu would not (x tiny against a)."""
    ratio = x / a
    out = ratio - 1 - np.log(ratio)
    mu = (x - a) / a
    t = mu / (2 + mu)
    near = np.abs(t) <= 1 / 3  # -1/2 <= mu <= 1
    if near.any():
        mu, t = mu[near], t[near]
        square = t * t
        odd_powers = np.zeros_like(t)
        for j in range(_LOG1P_SERIES_TERMS, 0, -1):
            odd_powers = odd_powers * square + 1 / (2 * j + 1)
        out[near] = mu * t - 2 * t * square * odd_powers
    return out


_PREFACTOR_BY_STIRLING_FROM = 10.0  # where _stirling_correction holds


def _gamma_prefactor(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """x^a exp(-x) / gamma(a), through logarithms (each factor alone may overflow). From a = 10 on as
    sqrt(a / (2 pi)) exp(-a (mu - log(1 + mu)) - the Stirling correction of gamma(a)) with mu = x / a - 1: the
    terms of a log(x) - x - lgamma(a) are large and nearly cancel there, and exp magnifies their rounding."""
    out = np.empty_like(x)
    large = a >= _PREFACTOR_BY_STIRLING_FROM
    if large.any():
        al, xl = a[large], x[large]
        exponent = -al * _log_ratio_excess(xl, al) - _stirling_correction(al)
        out[large] = np.sqrt(al / (2 * math.pi)) * np.exp(exponent)
    if not large.all():
        small = ~large
        out[small] = np.exp(a[small] * np.log(x[small]) - x[small] - lgamma(a[small]))
    return out


def _lgamma_one_plus(a: np.ndarray) -> np.ndarray:
    """log(gamma(1 + a)), precise for a tiny a too, which 1 + a would round away."""
    out = np.empty_like(a)
    near_zero = np.abs(a) <= 0.25
    _on(near_zero, lambda v: _lgamma_near_two(v) - np.log1p(v), a, out)
    _on(~near_zero, lambda v: lgamma(1 + v), a, out)
    return out


def _gammainc_series(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """P(a, x) = x^a exp(-x) / gamma(a + 1) * sum over n of x^n / ((a + 1) ... (a + n)), for x < a + 1. The
    prefactor takes gamma(a + 1) itself: x^a exp(-x) / gamma(a), divided by a, underflows for a tiny a."""
    term, total = np.ones_like(x), np.ones_like(x)
    for n in range(1, _GAMMAINC_MAX_TERMS):
        term *= x / (a + n)
        total += term
        if not (term > _EPS * total).any():
            break
    return np.minimum(_series_prefactor(a, x) * total, 1.0)  # (rounding may pass 1)


def _series_prefactor(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """x^a exp(-x) / gamma(a + 1): by gamma(a + 1) itself below a = 10 (x^a exp(-x) / gamma(a), divided by a,
    underflows for a tiny a), from there on the precise form of ``_gamma_prefactor``, divided by a."""
    large = a >= _PREFACTOR_BY_STIRLING_FROM
    if large.all():
        return _gamma_prefactor(a, x) / a
    out = np.exp(a * np.log(x) - x - _lgamma_one_plus(a))
    if large.any():
        out[large] = _gamma_prefactor(a[large], x[large]) / a[large]
    return out


_GAMMAINCC_SERIES_TERMS = 30  # x^n / n! for x <= 1.1 falls below 1e-17 of the sum by then


def _q_by_its_series(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Where Q(a, x) takes its own series (x <= 1.1 and a small against x), as the Cephes library decides."""
    with np.errstate(divide="ignore"):
        return (x <= 1.1) & np.where(x <= 0.5, a <= -0.4 / np.log(x), a <= 1.1 * x)


def _gammaincc_series(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Q(a, x) = 1 - x^a / gamma(a + 1) - x^a / gamma(a) * sum over n >= 1 of (-x)^n / (n! (a + n)), for
    x <= 1.1: the first two terms by expm1, so that a tiny Q keeps its relative precision."""
    term, total = np.ones_like(x), np.zeros_like(x)
    for n in range(1, _GAMMAINCC_SERIES_TERMS):
        term = term * (-x / n)
        total += term / (a + n)
    exponent = a * np.log(x) - _lgamma_one_plus(a)  # log(x^a / gamma(a + 1)); x^a / gamma(a) is a times that
    return -np.expm1(exponent) - a * np.exp(exponent) * total


_FRACTION_CHECK_EVERY = 8  # iterations between setting aside converged elements (each check gathers the rest)


def _gammaincc_fraction(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Q(a, x) by Legendre's continued fraction, evaluated forwards (Lentz's method), for x >= a + 1. Elements
    converge after a dozen to about seventy terms: every few terms the converged ones are set aside, so that
    the slow few do not keep the whole array iterating."""
    tiny = 1e-300
    fraction = np.empty_like(x)
    pending, shape = np.arange(x.size), a
    b = x + 1 - a
    c, d = np.full_like(x, 1 / tiny), 1 / b
    h = d.copy()
    for i in range(1, _GAMMAINC_MAX_TERMS):
        step = -i * (i - shape)
        b = b + 2
        d = step * d + b
        d = 1 / np.where(np.abs(d) < tiny, tiny, d)
        c = b + step / c
        c = np.where(np.abs(c) < tiny, tiny, c)
        delta = d * c
        h *= delta
        if i % _FRACTION_CHECK_EVERY == 0:
            unconverged = np.abs(delta - 1) > 1e-15  # a few ulps: delta may settle ulps away from 1
            fraction[pending[~unconverged]] = h[~unconverged]
            if not unconverged.any():
                break
            pending, shape, b, c, d, h = (v[unconverged] for v in (pending, shape, b, c, d, h))
    else:
        fraction[pending] = h
    return _gamma_prefactor(a, x) * fraction


# ----------------------------------------------------------------- modified Bessel functions I0 and I1

def _chebyshev_series(t: np.ndarray, coefficients: tuple) -> np.ndarray:
    """sum c_k T_k(t) for t in [-1, 1] by Clenshaw's recurrence, in place on a few arrays."""
    twice_t = 2 * t
    later, latest = np.zeros_like(t), np.full_like(t, coefficients[-1])
    for c in coefficients[-2:0:-1]:
        later *= -1
        later += c
        later += twice_t * latest
        later, latest = latest, later
    latest *= t
    latest += coefficients[0]
    latest -= later
    return latest


_BESSEL_SERIES_BELOW = 8.0
_BESSEL_I_SERIES_TERMS = 24  # (x^2/4)^k / k!^2 is below 1e-19 of I0 from k = 24 on, for |x| <= 8


def _power_series_coefficients(order: int, weight, terms: int) -> tuple:
    """Highest first, for ``_horner`` in y = x^2/4: weight(k) / (k! (k + order)!) for k < terms."""
    return tuple(weight(k) / (math.factorial(k) * math.factorial(k + order)) for k in reversed(range(terms)))


# I0 and I1 / (x/2) in y = x^2/4 up to |x| = 8: positive terms, no cancellation
_I0_SERIES_TO_EIGHT = _power_series_coefficients(0, lambda k: 1.0, _BESSEL_I_SERIES_TERMS)
_I1_SERIES_TO_EIGHT = _power_series_coefficients(1, lambda k: 1.0, _BESSEL_I_SERIES_TERMS)

# sqrt(x) exp(-x) I_n(x) for x >= 8 as Chebyshev series in t = 16 / x - 1, lowest degree first, from
# tools/fit_modified_bessel.py (within 3e-16 relative)
_BESSEL_I0_BEYOND = (0.4022452055070544, 0.0033691164782556973, 6.889758346916838e-05, 2.8913705208377687e-06,
    2.0489185894580725e-07, 2.266668990959843e-08, 3.396232028896325e-09, 4.940602446984452e-10,
    1.1889147334696383e-11, -3.1499163669466204e-11, -1.3215810291796983e-11, -1.7941777785299457e-12,
    7.180143265655298e-13, 3.852773814754883e-13, 1.5404610640030244e-14, -4.150630238674306e-14,
    -9.55090521271597e-15, 3.8123247869922015e-15, 1.7697252260809007e-15, -3.4441345904743574e-16,
    -2.814447146873823e-16, 3.859614810656145e-17, 4.566955294126147e-17)
_BESSEL_I1_BEYOND = (0.38928811750914005, -0.009761097491361463, -0.00011058893876262558, -3.882564808880765e-06,
    -2.5122362378924424e-07, -2.631468847226042e-08, -3.835380391341118e-09, -5.589743502034737e-10,
    -1.8974961387607272e-11, 3.252603021834615e-11, 1.4125804643709641e-11, 2.035627812083462e-12,
    -7.198550597546664e-13, -4.08354037890158e-13, -2.1017925806182224e-14, 4.272576562793764e-14,
    1.0411686060062311e-14, -3.818232598023693e-15, -1.880707302632513e-15, 3.2842960400270707e-16,
    2.9647264508713978e-16, -3.519243204053005e-17, -4.891071796258707e-17)


def _bessel_series(order: int, x: np.ndarray) -> np.ndarray:
    """exp(-x) I_order(x) for 0 <= x <= 8 by (x/2)^order sum (x^2/4)^k / (k! (k + order)!)."""
    series = _horner(x * x / 4, _I1_SERIES_TO_EIGHT if order else _I0_SERIES_TO_EIGHT)
    if order:
        series *= x / 2
    return series * np.exp(-x)


def _bessel_beyond_series(order: int, x: np.ndarray) -> np.ndarray:
    """exp(-x) I_order(x) for x > 8 (0 at inf, nan at nan)."""
    return _chebyshev_series(16 / x - 1, _BESSEL_I1_BEYOND if order else _BESSEL_I0_BEYOND) / np.sqrt(x)


def _scaled_bessel(order: int, x: np.ndarray) -> np.ndarray:
    """exp(-|x|) I_order(x); I0 is even and I1 odd."""
    x = _float64(x)
    magnitude = np.abs(x)
    out = np.empty_like(x)
    near = magnitude <= _BESSEL_SERIES_BELOW
    _on(near, lambda v: _bessel_series(order, v), magnitude, out)
    _on(~near, lambda v: _bessel_beyond_series(order, v), magnitude, out)  # nan stays nan, inf gives 0
    return out if order == 0 else np.sign(x) * out


def i0e(x) -> np.ndarray:
    return _scaled_bessel(0, x)


def i1e(x) -> np.ndarray:
    return _scaled_bessel(1, x)


def i0(x) -> np.ndarray:
    """I0(x); nan at +-inf, as torch gives (I0 grows as exp|x|, and is inf from |x| = 713.99)."""
    return _unscaled_bessel(0, x)


def _unscaled_bessel(order: int, x) -> np.ndarray:
    """exp(|x|) times exp(-|x|) I_order(x), by exp(|x| / 2) twice: exp(|x|) alone overflows from 709.8 on, where
    I0 is still finite (3.3e306 at 710). 0 * inf at +-inf: nan."""
    x = _float64(x)
    with np.errstate(over="ignore", invalid="ignore"):
        half = np.exp(np.abs(x) / 2)
        return _scaled_bessel(order, x) * half * half


def i1(x) -> np.ndarray:
    """I1(x); nan at +-inf, as torch gives."""
    return _unscaled_bessel(1, x)


_BESSEL_K_SERIES_TERMS = 14  # (x^2/4)^k / k!^2 is below 1e-17 of the sum from k = 14 on, for x <= 2


def _harmonic(k: int) -> float:
    return math.fsum(1 / j for j in range(1, k + 1))


# I0 and I1 / (x/2) in y = x^2/4, and the sums that K0 and K1 add to their log terms: sum H_k y^k / k!^2, and
# sum (psi(k + 1) + psi(k + 2)) y^k / (k! (k + 1)!) with psi(k + 1) = H_k - euler
_I0_SERIES = _power_series_coefficients(0, lambda k: 1.0, _BESSEL_K_SERIES_TERMS)
_I1_SERIES = _power_series_coefficients(1, lambda k: 1.0, _BESSEL_K_SERIES_TERMS)
_K0_SERIES = _power_series_coefficients(0, _harmonic, _BESSEL_K_SERIES_TERMS)
_K1_SERIES = _power_series_coefficients(1, lambda k: _harmonic(k) + _harmonic(k + 1) - 2 * _EULER,
                                        _BESSEL_K_SERIES_TERMS)


def _bessel_k_series(order: int, x: np.ndarray) -> np.ndarray:
    """K0 or K1 for 0 < x <= 2 (or less) from their series in y = x^2/4, with the log term of I0 or I1:
    K0 = -(log(x/2) + euler) I0(x) + sum H_k y^k / k!^2, K1 = 1/x + log(x/2) I1(x) - x/4 sum (...) y^k."""
    quarter_square = x * x / 4
    log_half = np.where(x < 1e-300, np.log(x) - _LOG_2, np.log(x / 2))  # x / 2 rounds the smallest subnormal to 0
    if order == 0:
        return _horner(quarter_square, _K0_SERIES) - (log_half + _EULER) * _horner(quarter_square, _I0_SERIES)
    return 1 / x + x / 2 * (log_half * _horner(quarter_square, _I1_SERIES) - _horner(quarter_square, _K1_SERIES) / 2)


# sqrt(x) exp(x) K_n(x) for x >= s as Chebyshev series in t = 2 s / x - 1, lowest degree first, from
# tools/fit_modified_bessel.py (within 1.2e-15 relative): s = 1 for K0, whose series loses digits to cancellation
# towards 2 (its two terms are ten times K0 there), and 2 for K1
_BESSEL_K0_BEYOND = (1.194433076216739, -0.05385532330762947, 0.004362000068251725, -0.0005521270349863087,
    8.959565555757132e-05, -1.713872685639535e-05, 3.6951460890579966e-06, -8.73728451884002e-07,
    2.225046272586834e-07, -6.025216753136542e-08, 1.718666864910115e-08, -5.127205751575411e-09,
    1.5907351709173574e-09, -5.109582801879364e-10, 1.692952211040251e-10, -5.768302141012868e-11,
    2.0159575995211854e-11, -7.2108951350097715e-12, 2.6349536200545786e-12, -9.819130133943187e-13,
    3.7271813847255274e-13, -1.4384085450324023e-13, 5.648384098739486e-14, -2.242469525960063e-14,
    9.147344459760925e-15, -3.683499340779523e-15, 1.5689063512120057e-15, -5.499572943231721e-16,
    2.875706650280561e-16)
_BESSEL_K1_BEYOND = (1.360313095242221, 0.1039237365768173, -0.002857816859622795, 0.0001952155184713597,
    -1.936197974169109e-05, 2.4064849478566386e-06, -3.501960603186599e-07, 5.741084125856055e-08,
    -1.0345762493778656e-08, 2.015049741853634e-09, -4.1903548791136544e-10, 9.218316195493626e-11,
    -2.1299722954781085e-11, 5.139621918623399e-12, -1.2891966284496657e-12, 3.348358545883262e-13,
    -8.976612515216766e-14, 2.4737877835162027e-14, -7.0592450384632845e-15, 2.0118706533789117e-15,
    -6.620088206524671e-16, 1.8169687559382305e-16, -1.3104541767565486e-16)
_BESSEL_K_SERIES_UP_TO = {0: 1.0, 1: 2.0}


def _scaled_bessel_k_beyond_series(order: int, x: np.ndarray) -> np.ndarray:
    """exp(x) K_order(x) for x past _BESSEL_K_SERIES_UP_TO[order] (0 at inf)."""
    t = 2 * _BESSEL_K_SERIES_UP_TO[order] / x - 1
    return _chebyshev_series(t, _BESSEL_K1_BEYOND if order else _BESSEL_K0_BEYOND) / np.sqrt(x)


def _bessel_k_by_range(order: int, x, scaled: bool) -> np.ndarray:
    """exp(x) K_order(x) if ``scaled``, else K_order(x): inf at 0, nan below, 0 at inf (as torch)."""
    x = _float64(x)
    out = np.full_like(x, np.nan)
    out[x == 0] = np.inf
    up_to = _BESSEL_K_SERIES_UP_TO[order]
    small, beyond = (x > 0) & (x <= up_to), x > up_to
    if scaled:
        _on(small, lambda v: np.exp(v) * _bessel_k_series(order, v), x, out)
        _on(beyond, lambda v: _scaled_bessel_k_beyond_series(order, v), x, out)
    else:
        _on(small, lambda v: _bessel_k_series(order, v), x, out)
        _on(beyond, lambda v: _scaled_bessel_k_beyond_series(order, v) * np.exp(-v), x, out)  # 0 * 0 at inf
    return out


def scaled_bessel_k(order: int, x) -> np.ndarray:
    """exp(x) K_order(x), for order 0 or 1: inf at 0, nan below, 0 at inf (as torch)."""
    with np.errstate(under="ignore", divide="ignore"):
        return _bessel_k_by_range(order, x, scaled=True)


def bessel_k(order: int, x) -> np.ndarray:
    """K_order(x), for order 0 or 1."""
    with np.errstate(under="ignore", divide="ignore"):
        return _bessel_k_by_range(order, x, scaled=False)


_BESSEL_J_POINTS = 64  # points of the periodic trapezoidal rule: exact to rounding for |x| <= 25


def bessel_j(order: int, x) -> np.ndarray:
    """The Bessel function of the first kind J0 or J1: the power series below 1, the mean of
    cos(order t - x sin t) over a period up to 25 (the periodic trapezoidal rule converges geometrically),
    Hankel's expansion beyond."""
    x = _float64(x)
    magnitude = np.abs(x)
    out = np.full_like(x, np.nan)  # nan at +-inf too, as torch (the limit is 0)
    small, far = magnitude < 1, (magnitude > 25) & (magnitude < np.inf)
    near = (magnitude >= 1) & (magnitude <= 25)
    t = np.arange(_BESSEL_J_POINTS) * (2 * math.pi / _BESSEL_J_POINTS)
    _on(small, lambda v: _bessel_j_series(order, v), magnitude, out)  # relative precision as x goes to 0
    _on(near, lambda v: np.cos(order * t - v[:, None] * np.sin(t)).mean(axis=1), magnitude, out)
    _on(far, lambda v: _bessel_j_asymptotic(order, v), magnitude, out)
    return out if order == 0 else np.where(x == 0, x, np.sign(x) * out)  # J0 is even, J1 odd (and +-0 at +-0)


def _bessel_j_series(order: int, x: np.ndarray) -> np.ndarray:
    """J_order(x) for |x| < 1 by (x/2)^order sum (-x^2/4)^k / (k! (k + order)!) (terms below 1: no cancellation)."""
    quarter_square, total = x * x / 4, np.zeros_like(x)
    for k in range(20, -1, -1):  # Horner's scheme in -x^2/4
        total = 1 - quarter_square / ((k + 1) * (k + 1 + order)) * total
    return total * (x / 2) ** order


_BESSEL_MILLER_START = 72  # J_72(25) is 2e-26; starting from 58 already leaves J_0 ... J_61 exact to rounding
_BESSEL_MILLER_ZERO = np.finfo(np.float64).eps ** 2  # stands in for a J_n that rounds to exactly 0


def _bessel_j_by_miller(top: int, x: np.ndarray) -> np.ndarray:
    """J_0(x) ... J_top(x) (columns) for 0 < x <= 25 (rows), by Miller's backward recurrence: the ratios
    J_n / J_n-1 = 1 / (2n / x - J_n+1 / J_n), started from 0 above the start order, where the true ratio is
    negligible (backwards the recurrence is stable, and the starting error dies out geometrically); then
    J_0 + 2 sum J_2k = 1 fixes the scale. Ratios cannot overflow, whatever the size of 2n / x: for x near the
    smallest subnormal 2n / x is inf and the ratios 0, as J_n / J_0 is in double."""
    inverse = np.reciprocal(x)
    ratios = np.empty((x.size, top))
    ratio = np.zeros_like(x)
    for n in range(_BESSEL_MILLER_START, 0, -1):
        denominator = 2 * n * inverse - ratio  # J_n-1 / J_n
        denominator[denominator == 0] = _BESSEL_MILLER_ZERO  # a zero of J_n-1: the next ratio still gives J_n-2
        ratio = np.reciprocal(denominator)
        if n <= top:
            ratios[:, n - 1] = ratio
    relative = np.cumprod(ratios, axis=1)  # J_n / J_0 for n = 1 ... top
    j0 = 1 / (1 + 2 * relative[:, 1::2].sum(axis=1))
    return np.concatenate([j0[:, None], j0[:, None] * relative], axis=1)


def bessel_y(order: int, x) -> np.ndarray:
    """The Bessel function of the second kind Y0 or Y1: -inf at 0, nan below and at inf (as torch); up to 25 by
    Neumann's series in J_2k (and its derivative for Y1 = -Y0'), Hankel's expansion beyond."""
    x = _float64(x)
    out = np.full_like(x, np.nan)
    out[x == 0] = -np.inf
    _on((x > 0) & (x <= 25), lambda v: _bessel_y_neumann(order, v), x, out)
    _on((x > 25) & (x < np.inf), lambda v: _bessel_hankel(order, v, second_kind=True), x, out)
    return out


def _bessel_y_neumann(order: int, x: np.ndarray) -> np.ndarray:
    """Y0 = (2/pi)(log(x/2) + euler) J0 - (4/pi) sum (-1)^k J_2k / k; Y1 = -Y0', with J_n' = (J_n-1 - J_n+1) / 2."""
    j = _bessel_j_by_miller(61, x)  # J_0 ... J_61: past order x + 30 they vanish
    k = np.arange(1, 31)
    signs = np.where(k % 2, -1.0, 1.0)
    log_term = np.log(x) - (math.log(2) - _EULER)  # (x / 2 would round the smallest subnormal to 0)
    if order == 0:
        return 2 / math.pi * log_term * j[:, 0] - 4 / math.pi * (signs * j[:, 2 * k] / k).sum(axis=1)
    derivatives = (j[:, 2 * k - 1] - j[:, 2 * k + 1]) / 2
    return -(2 / math.pi * (j[:, 0] / x - log_term * j[:, 1]) - 4 / math.pi * (signs * derivatives / k).sum(axis=1))


def _bessel_j_asymptotic(order: int, x: np.ndarray) -> np.ndarray:
    return _bessel_hankel(order, x, second_kind=False)


def _bessel_hankel(order: int, x: np.ndarray, second_kind: bool) -> np.ndarray:
    """J_order(x) (or Y_order(x)) for x > 25: sqrt(2 / (pi x)) (P cos(chi) - Q sin(chi)) (or P sin(chi) +
    Q cos(chi)), chi = x - (order / 2 + 1/4) pi."""
    mu = 4.0 * order * order
    p, q, term = np.ones_like(x), np.zeros_like(x), np.ones_like(x)
    for k in range(1, 40):
        term = term * (mu - (2 * k - 1) ** 2) / (k * 8 * x)
        if k % 2:
            q += term if k % 4 == 1 else -term
        else:
            p += term if k % 4 == 0 else -term
    phase = (order / 2 + 0.25) * math.pi  # cos and sin of x - phase, from those of x (NumPy reduces x exactly)
    cos_x, sin_x = np.cos(x), np.sin(x)
    cos_chi = cos_x * math.cos(phase) + sin_x * math.sin(phase)
    sin_chi = sin_x * math.cos(phase) - cos_x * math.sin(phase)
    amplitude = math.sqrt(2 / math.pi) / np.sqrt(x)  # (2 / (pi x) would overflow pi x, or be subnormal, near the top)
    if second_kind:
        return amplitude * (p * sin_chi + q * cos_chi)
    return amplitude * (p * cos_chi - q * sin_chi)


def spherical_bessel_j0(x) -> np.ndarray:
    """sin(x) / x: 1 at 0, and 0 at +-inf (as torch)."""
    x = _float64(x)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(x == 0, 1.0, np.sin(x) / x)
    out[np.isinf(x)] = 0.0
    return out


# ----------------------------------------------------------------- classical orthogonal polynomials

# kind -> (the degree-1 polynomial, the step from degrees k - 1 and k to k + 1)
_POLYNOMIALS = {
    "t": (lambda x: x, lambda k, x, now, before: 2 * x * now - before),  # Chebyshev, first kind
    "u": (lambda x: 2 * x, lambda k, x, now, before: 2 * x * now - before),  # second kind
    "v": (lambda x: 2 * x - 1, lambda k, x, now, before: 2 * x * now - before),  # third kind
    "w": (lambda x: 2 * x + 1, lambda k, x, now, before: 2 * x * now - before),  # fourth kind
    "h": (lambda x: 2 * x, lambda k, x, now, before: 2 * x * now - 2 * k * before),  # Hermite (physicists')
    "he": (lambda x: x, lambda k, x, now, before: x * now - k * before),  # Hermite (probabilists')
    "l": (lambda x: 1 - x, lambda k, x, now, before: ((2 * k + 1 - x) * now - k * before) / (k + 1)),  # Laguerre
    "p": (lambda x: x, lambda k, x, now, before: ((2 * k + 1) * x * now - k * before) / (k + 1)),  # Legendre
}

# Chebyshev polynomials of high degree inside (-1, 1), from the angle theta = acos(x) (as torch, past degree 8)
_CHEBYSHEV_BY_ANGLE = {
    "t": lambda n, theta: np.cos(n * theta),
    "u": lambda n, theta: np.sin((n + 1) * theta) / np.sin(theta),
    "v": lambda n, theta: np.cos((n + 0.5) * theta) / np.cos(theta / 2),
    "w": lambda n, theta: np.sin((n + 0.5) * theta) / np.sin(theta / 2),
}


def orthogonal_polynomial(kind: str, x, n) -> np.ndarray:
    """The polynomial of ``kind`` and degree n (truncated to an integer; 0 below 0, for nan and for |n| >= 2^63,
    infinities included, which torch's conversion to int64 makes negative) at x, by its three-term recurrence;
    the Chebyshev kinds of degree above 8 inside (-1, 1) by their closed forms, in x's precision."""
    x, n = np.broadcast_arrays(np.asarray(x), _float64(n))
    degree = np.where(np.abs(n) < 2.0 ** 63, np.trunc(np.clip(n, -1, 2 ** 62)), -1).astype(np.int64)  # (nan: -1)
    first, step = _POLYNOMIALS[kind]
    by_angle = (degree > 8) & (np.abs(x) < 1) if kind in _CHEBYSHEV_BY_ANGLE else np.zeros(x.shape, bool)
    one, zero = np.ones((), x.dtype), np.zeros((), x.dtype)
    out = np.where(degree == 0, one, np.where(degree == 1, first(x), zero))
    before, now = np.ones_like(x), first(x)
    for k in range(1, int(degree[~by_angle].max(initial=0))):
        before, now = now, step(k, x, now, before)
        out = np.where(degree == k + 1, now, out)
    if by_angle.any():
        out[by_angle] = _CHEBYSHEV_BY_ANGLE[kind](degree[by_angle].astype(x.dtype), np.arccos(x[by_angle]))
    return out
