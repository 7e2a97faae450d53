"""Poisson, Gamma and Binomial samples drawn as torch's CPU generator draws them: rejection loops, run per
element in Python on words of the stream drawn ahead (about 2 µs an element), the generator then left just past
the words used.

- Poisson: for rates from 10, Hörmann's transformed rejection (PTRS); below, the product of double uniforms
  until it falls under ``exp(-rate)``;
- Gamma: Marsaglia and Tsang's method with torch's single-precision constants, its normals drawn one by one
  (the generator's kept one first), shapes below 1 boosted by one;
- Binomial: Hörmann's BTRS where the mean of the rarer outcome is at least 10, else inversion by geometric
  waiting times.

>>> from ember import _random
>>> poisson(_random.Generator().manual_seed(0), np.array([0.0, 4.0, 40.0])).tolist()
[0.0, 7.0, 41.0]
"""
from __future__ import annotations

import math

import numpy as np

from ember._streams import normal_pair

_STEP = 2.0 ** -53


class _Ahead:
    """The stream's words drawn ahead in blocks, for samplers that take an unknown number, one at a time (the
    rejection loops of ``poisson`` and ``gamma``). :meth:`settle` leaves the generator just past the words used,
    as if they had been drawn one by one."""

    _BLOCK = 256

    def __init__(self, generator):
        self.generator, self.start = generator, generator._bits.state
        self.words: list = []
        self.used = 0

    def word(self) -> int:
        if self.used == len(self.words):
            self.words += self.generator._bits.random_raw(self._BLOCK).tolist()
        self.used += 1
        return self.words[self.used - 1]

    def uniform(self) -> float:
        """A double uniform in [0, 1), from two words."""
        return (((self.word() << 32) | self.word()) & 0x1FFFFFFFFFFFFF) * _STEP

    def normal(self) -> float:
        """A standard normal, the generator's kept one first (see ``_normal_one_by_one``)."""
        kept = self.generator._normal
        if kept is not None:
            self.generator._normal = None
            return kept
        first, second = normal_pair(self.uniform(), self.uniform())
        self.generator._normal = second
        return first

    def settle(self) -> None:
        bits = self.generator._bits
        bits.state = self.start
        if self.used:
            bits.random_raw(self.used)


def poisson(generator, rates: np.ndarray) -> np.ndarray:
    """A Poisson count per rate (float64), in order: for rates from 10, Hörmann's transformed rejection (PTRS);
    below, the product of uniforms until it falls under ``exp(-rate)``; 0 for a rate of 0."""
    ahead = _Ahead(generator)
    counts = [_poisson_one(ahead, rate) for rate in rates.reshape(-1).tolist()]
    ahead.settle()
    return np.array(counts, np.float64).reshape(rates.shape)


def _poisson_one(ahead: _Ahead, rate: float) -> int:
    if rate >= 10:
        return _poisson_by_rejection(ahead, rate)
    if rate == 0:
        return 0
    floor, product, count = math.exp(-rate), 1.0, 0
    while True:
        product *= ahead.uniform()
        if product <= floor:
            return count
        count += 1


def _poisson_by_rejection(ahead: _Ahead, rate: float) -> int:
    root, log_rate = math.sqrt(rate), math.log(rate)
    b = 0.931 + 2.53 * root
    a = -0.059 + 0.02483 * b
    inverse_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2)
    while True:
        u = ahead.uniform() - 0.5
        v = ahead.uniform()
        u_s = 0.5 - abs(u)
        k = math.floor((2 * a / u_s + b) * u + rate + 0.43)
        if u_s >= 0.07 and v <= v_r:
            return k
        if k < 0 or (u_s < 0.013 and v > u_s):
            continue
        if math.log(v) + math.log(inverse_alpha) - math.log(a / (u_s * u_s) + b) <= \
                -rate + k * log_rate - math.lgamma(k + 1.0):
            return k


def gamma(generator, shapes: np.ndarray) -> np.ndarray:
    """A Gamma(shape, 1) draw per shape (float64), in order, by Marsaglia and Tsang's method: shapes below 1
    boosted by one and the draw scaled by ``(1 - u) ** (1 / shape)``."""
    ahead = _Ahead(generator)
    draws = [_gamma_one(ahead, shape) for shape in shapes.reshape(-1).tolist()]
    ahead.settle()
    return np.array(draws, np.float64).reshape(shapes.shape)


_THIRD_SINGLE, _SQUEEZE_SINGLE = float(np.float32(1 / 3)), float(np.float32(0.0331))  # torch's constants, in single


def _gamma_one(ahead: _Ahead, shape: float) -> float:
    scale = 1.0
    if shape < 1.0:
        if shape == 0.0:
            return 0.0
        scale *= math.pow(1 - ahead.uniform(), 1.0 / shape)
        shape += 1.0
    d = shape - _THIRD_SINGLE
    c = 1.0 / math.sqrt(9.0 * d)
    while True:
        while True:
            x = ahead.normal()
            y = 1.0 + c * x
            if y > 0:
                break
        v = y * y * y
        u = 1 - ahead.uniform()
        xx = x * x
        if u < 1.0 - _SQUEEZE_SINGLE * xx * xx or math.log(u) < 0.5 * xx + d * (1.0 - v + math.log(v)):
            return scale * d * v


def binomial(generator, counts: np.ndarray, probs: np.ndarray) -> np.ndarray:
    """A Binomial(count, prob) draw per pair (float64 arrays of one shape, finite, probabilities in (0, 1) where
    drawn), in order, as torch draws them: Hörmann's BTRS where the mean (of the rarer outcome) is at least 10,
    else inversion by geometric waiting times."""
    ahead = _Ahead(generator)
    draws = [_binomial_one(ahead, n, p) for n, p in zip(counts.reshape(-1).tolist(), probs.reshape(-1).tolist())]
    ahead.settle()
    return np.array(draws, np.float64).reshape(counts.shape)


def _binomial_one(ahead: _Ahead, count: float, prob: float) -> float:
    if count <= 0.0 or prob <= 0.0:
        return 0.0
    if prob >= 1.0:
        return count
    rarer = min(prob, 1.0 - prob)
    drawn = _btrs(ahead, count, rarer) if count * rarer >= 10.0 else _inversion(ahead, count, rarer)
    return drawn if prob <= 0.5 else count - drawn


def _inversion(ahead: _Ahead, count: float, prob: float) -> float:
    log_q = math.log1p(-prob)
    waited, successes = 0.0, 0
    while True:
        u = ahead.uniform()
        waited += math.ceil(math.log(u) / log_q) if u > 0.0 else math.inf
        if waited > count:
            return float(successes)
        successes += 1


# log k! less Stirling's approximation of it, for k up to 9 (beyond, its series)
_STIRLING_TAILS = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983, 0.02079067210376509,
                   0.0166446911898211, 0.0138761288230707, 0.0118967099458917, 0.0104112652619720,
                   0.00925546218271273, 0.00833056343336287)


def _stirling_tail(k: float) -> float:
    if k <= 9:
        return _STIRLING_TAILS[int(k)]
    square = (k + 1) * (k + 1)
    return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / square) / square) / (k + 1)


def _btrs(ahead: _Ahead, count: float, prob: float) -> float:
    spread = math.sqrt(count * prob * (1 - prob))
    b = 1.15 + 2.53 * spread
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = count * prob + 0.5
    v_r = 0.92 - 4.2 / b
    r = prob / (1 - prob)
    alpha = (2.83 + 5.1 / b) * spread
    m = math.floor((count + 1) * prob)
    while True:
        u = ahead.uniform() - 0.5
        v = ahead.uniform()
        u_s = 0.5 - abs(u)
        k = math.floor((2 * a / u_s + b) * u + c)
        if k < 0 or k > count:
            continue
        if u_s >= 0.07 and v <= v_r:
            return float(k)
        v = math.log(v * alpha / (a / (u_s * u_s) + b))
        bound = ((m + 0.5) * math.log((m + 1) / (r * (count - m + 1))) +
                 (count + 1) * math.log((count - m + 1) / (count - k + 1)) +
                 (k + 0.5) * math.log(r * (count - k + 1) / (k + 1)) +
                 _stirling_tail(m) + _stirling_tail(count - m) - _stirling_tail(k) - _stirling_tail(count - k))
        if v <= bound:
            return float(k)
