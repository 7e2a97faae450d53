"""Uniform, normal, integer, Bernoulli, exponential (and its kin) and categorical samples, and permutations,
drawn as torch's CPU generator draws them (its rejection samplers are in ``_stream_rejection``).

The generator (``_random.Generator``) is torch's 32-bit Mersenne Twister, seeded as torch seeds it. These
samplers turn its words into numbers by torch's rules, so that after the same seed ember gives torch's
numbers, and leaves the stream where torch leaves it. The same bits for ``rand``, ``randint``, ``randperm``,
``bernoulli`` (and dropout), ``uniform_`` (and so every layer's initialisation), ``multinomial``, and for
``randn`` and ``normal_`` up to 15 values. From 16 normals on, within a few units in the last place: torch's
single-precision logarithm and cosine are not correctly rounded, and NumPy's double ones may differ from the C
library's in the last bit.

The rules, per sample (``word`` is the next 32-bit word; ``word64`` two words, the first the high half):

- uniform in [0, 1): ``(word & (2**24 - 1)) / 2**24`` in single precision and below (then rounded to the
  dtype), ``(word64 & (2**53 - 1)) / 2**53`` in double, scaled to ``[low, high)`` with one rounding;
- normal, fewer than 16 values: Box-Muller on two double uniforms ``u1, u2``, ``sqrt(-2 log1p(-u2))`` times
  ``cos(2 pi u1)``, the ``sin`` of the pair kept in the generator for the next value;
- normal, 16 values or more: every value first a uniform of the dtype, then each block of 16 turned into
  normals in that precision, the first 8 as ``1 - u1`` and the last 8 as ``u2``; when 16 do not divide the
  count, the last 16 values are drawn again from 16 fresh uniforms;
- integers in ``[low, high)``: ``word % (high - low) + low``, or ``word64 %`` for ranges from ``2**28`` wide;
- permutations: Fisher-Yates, position ``i`` swapped with ``i + word % (n - i)``;
- Bernoulli: a uniform below ``p`` (a double one for a number ``p``), exponential: ``-log1p(-u) / rate`` of a
  double uniform; categories: Gumbel keys ``weight / exponential`` without replacement, a double uniform in
  the running sum with it.

>>> from ember import _random
>>> g = _random.Generator().manual_seed(0)
>>> uniform(g, (3,), double=False).tolist()
[0.49625658988952637, 0.7682217955589294, 0.08847743272781372]
"""
from __future__ import annotations

import math

import numpy as np

from ember import _dtype

_SINGLE_MASK, _DOUBLE_MASK = np.uint64(2 ** 24 - 1), np.uint64(2 ** 53 - 1)
_SINGLE_STEP, _DOUBLE_STEP = np.float32(2.0 ** -24), 2.0 ** -53
_HIGH = np.uint64(32)
_BLOCK = 16  # from this many values on, normals come in blocks (see the module's docstring)
_WIDE_RANGE = 2 ** 28  # integer ranges from this wide take two words a value (less bias from the modulo)


def precision(dtype: np.dtype) -> tuple:
    """``(double, narrow)`` for samples of ``dtype``: drawn in double for float64 and complex128, else in single;
    and the dtype itself where it is narrower than single (half, bfloat16: torch holds some uniforms in it)."""
    return dtype.itemsize == (16 if dtype.kind == "c" else 8), dtype if dtype.itemsize == 2 else None


def _words(generator, n: int) -> np.ndarray:
    """The next ``n`` 32-bit words of the stream (as uint64)."""
    return generator._bits.random_raw(n)


def _words32(generator, n: int) -> np.ndarray:
    """The next ``n`` words as uint32 (the narrower arithmetic is the cheaper)."""
    return generator._bits.random_raw(n).astype(np.uint32)


def _words64(generator, n: int) -> np.ndarray:
    """The next ``n`` pairs of words as 64-bit words, the first of each pair the high half."""
    pairs = _words(generator, 2 * n).reshape(n, 2)
    return (pairs[:, 0] << _HIGH) | pairs[:, 1]


def _unit(generator, n: int, double: bool) -> np.ndarray:
    """``n`` uniforms in [0, 1): float64 from 53 bits of a 64-bit word if ``double``, else float32 from 24 bits."""
    if double:
        return (_words64(generator, n) & _DOUBLE_MASK).astype(np.float64) * _DOUBLE_STEP
    return (_words32(generator, n) & np.uint32(_SINGLE_MASK)).astype(np.float32) * _SINGLE_STEP


def uniform(generator, shape: tuple, double: bool, low: float = 0.0, high: float = 1.0,
            narrow: np.dtype | None = None) -> np.ndarray:
    """Uniform samples in ``[low, high)``: float64 if ``double``, else float32, in values of the dtype ``narrow``
    where it is given (a value that rounds to ``high`` there is ``low`` instead, as torch's)."""
    x = _unit(generator, math.prod(shape), double)
    if double:
        values = x if low == 0.0 and high == 1.0 else x * (high - low) + low
    elif low == 0.0 and high == 1.0:
        values = x
    else:  # the bounds in single precision (even for a narrower dtype), the sample scaled and shifted with one
        # rounding, as torch's
        span = np.float32(np.float32(high) - np.float32(low))
        values = (x.astype(np.float64) * np.float64(span) + np.float64(np.float32(low))).astype(np.float32)
    if narrow is not None:
        values = _dtype.cast(values, narrow)
        values = np.where(values == _bound(high, narrow), _bound(low, narrow), values).astype(np.float32)
    return values.reshape(shape)


def _bound(value: float, narrow: np.dtype | None) -> np.float32:
    """A bound as a sample of the dtype ``narrow`` (if given) compares with it, in single precision."""
    if narrow is None:
        return np.float32(value)
    return np.float32(_dtype.cast(np.array(float(value)), narrow).astype(np.float32))  # rounded once, from double


def normal(generator, shape: tuple, double: bool, mean: float = 0.0, std: float = 1.0,
           narrow: np.dtype | None = None) -> np.ndarray:
    """Normal samples: float64 if ``double``, else float32 (see :func:`uniform`). For a dtype ``narrow``er than
    single, torch holds the uniforms of a block in it before it turns them into normals: so do these."""
    n = math.prod(shape)
    if n < _BLOCK:  # scaled in double, as torch's values one by one
        values = _normal_one_by_one(generator, n) * float(std) + float(mean)
        return (values if double else values.astype(np.float32)).reshape(shape)
    values = _normal_blocks(generator, n, double, narrow)
    if not double:
        values = values.astype(np.float32)
    if std != 1.0 or mean != 0.0:
        kind = np.float64 if double else np.float32
        values = values * kind(std) + kind(mean)
    return values.reshape(shape)


def _normal_one_by_one(generator, n: int) -> np.ndarray:
    """Fewer than 16 normals: the one kept in the generator first, then new pairs (their uniforms drawn at
    once), the last sine kept if one is left over. Python's math, as the C library's: NumPy's own log and sin
    may differ from it in the last bit."""
    values = []
    if n and generator._normal is not None:
        values.append(generator._normal)
        generator._normal = None
    pairs = (n - len(values) + 1) // 2
    uniforms = _unit(generator, 2 * pairs, True).tolist()
    for u1, u2 in zip(uniforms[::2], uniforms[1::2]):
        values += normal_pair(u1, u2)
    if len(values) > n:
        generator._normal = values.pop()
    return np.array(values, np.float64)


def normal_pair(u1: float, u2: float) -> tuple:
    """Two normals from two double uniforms, as torch makes them one by one: ``sqrt(-2 log1p(-u2))`` times the
    cosine and the sine of ``2 pi u1``."""
    radius, angle = math.sqrt(-2.0 * math.log1p(-u2)), 2.0 * math.pi * u1
    return radius * math.cos(angle), radius * math.sin(angle)


def _normal_blocks(generator, n: int, double: bool, narrow: np.dtype | None) -> np.ndarray:
    """16 normals or more: the uniforms first, then each block of 16 turned into normals (double precision
    arithmetic on single-precision uniforms, rounded once by the caller)."""
    whole = n // _BLOCK * _BLOCK
    # torch fills every value with a uniform first; in the narrow dtypes, only the whole blocks
    data = _held(_unit(generator, whole if narrow is not None else n, double), narrow)
    data[:whole] = _box_muller(data[:whole])
    if whole != n:  # the last 16 again, from fresh uniforms
        data = np.concatenate([data[:n - _BLOCK], _box_muller(_held(_unit(generator, _BLOCK, double), narrow))])
    return data


def _held(uniforms: np.ndarray, narrow: np.dtype | None) -> np.ndarray:
    """The uniforms as the block arithmetic takes them: single ones as they are (torch turns them into normals
    in single precision: so does NumPy, with closer results than in double), narrower ones rounded to their
    dtype and then taken in double."""
    if narrow is not None:
        return _dtype.cast(uniforms, narrow).astype(np.float64)
    return uniforms


def _box_muller(uniforms: np.ndarray) -> np.ndarray:
    """Each block of 16 uniforms as 16 normals, in the uniforms' precision."""
    kind = uniforms.dtype.type
    blocks = uniforms.reshape(-1, 2, _BLOCK // 2)
    radius = np.sqrt(kind(-2.0) * np.log(kind(1.0) - blocks[:, 0]))
    angle = kind(2.0 * np.pi) * blocks[:, 1]
    return np.stack([radius * np.cos(angle), radius * np.sin(angle)], axis=1).reshape(-1)


def integers(generator, low: int, high: int, shape: tuple) -> np.ndarray:
    """Integers in ``[low, high)`` (``high > low``) as int64, or as uint64 where they do not fit."""
    span = high - low
    n = math.prod(shape)
    if span < _WIDE_RANGE:
        offsets = _words32(generator, n) % np.uint32(span)
    else:
        offsets = _words64(generator, n) % np.uint64(span)
    if low >= 0 and high - 1 >= 2 ** 63:
        return (offsets + np.uint64(low)).reshape(shape)
    return (offsets.astype(np.int64) + np.int64(low)).reshape(shape)


def permutation(generator, n: int) -> np.ndarray:
    """``0 .. n-1`` shuffled by Fisher-Yates, as torch's ``randperm``."""
    order = list(range(n))
    if n > 1:  # each swap depends on the ones before: a loop (the targets themselves are computed at once)
        targets = (_words(generator, n - 1) % np.arange(n, 1, -1, dtype=np.uint64) + np.arange(n - 1, dtype=np.uint64))
        for i, j in enumerate(targets.tolist()):
            order[i], order[j] = order[j], order[i]
    return np.array(order, np.int64)


def bernoulli(generator, p, shape: tuple, double: bool) -> np.ndarray:
    """Whether each value's uniform falls below ``p``: a number (compared with a double uniform, as torch's
    ``bernoulli_(p)`` and dropout do) or probabilities broadcast to ``shape`` (compared with uniforms in double
    if ``double``, else in single, as torch's ``bernoulli(p)``)."""
    if np.ndim(p) == 0:  # u = k / 2**53 < p exactly when the integer k < ceil(p * 2**53): no floats made
        threshold = min(max(math.ceil(float(p) * 2.0 ** 53), 0), 2 ** 53)
        return ((_words64(generator, math.prod(shape)) & _DOUBLE_MASK) < np.uint64(threshold)).reshape(shape)
    return _unit(generator, math.prod(shape), double).reshape(shape) < p


def full_range(generator, dtype: np.dtype, shape: tuple) -> np.ndarray:
    """``random_()`` without bounds: for integers, from 0 to the dtype's largest; for floats, to 2**mantissa
    inclusive (``word % (2**digits + 1)``); for bools, a word's lowest bit. int64 and float64 take two words a
    value, as torch's."""
    n = math.prod(shape)
    if dtype.kind == "b":
        return (_words(generator, n) & np.uint64(1)).astype(bool).reshape(shape)
    wide = dtype.itemsize == 8 and dtype.kind in "if"
    if dtype.kind in "iu":
        modulus = int(np.iinfo(dtype).max) + 1
    else:
        modulus = 2 ** (_dtype.float_info(dtype).nmant + 1) + 1
    words = _words64(generator, n) if wide or modulus > 2 ** 32 else _words(generator, n)
    if modulus < 2 ** 64:
        words = words % np.uint64(modulus)
    return words.reshape(shape)


def exponential(generator, shape: tuple, rate: float) -> np.ndarray:
    """Exponential samples of ``rate``, in double: ``-1 / rate * log1p(-u)`` of a double uniform ``u`` (NumPy's
    log1p, which may differ from the C library's in the last bit)."""
    return (-1.0 / rate) * np.log1p(-_unit(generator, math.prod(shape), True).reshape(shape))


def categories(generator, weights: np.ndarray, count: int, replacement: bool) -> np.ndarray:
    """``count`` categories per row of ``weights`` (2-D, non-negative, each row with a positive sum), as torch's
    ``multinomial`` draws them. Without replacement, or for one draw: each weight divided by an exponential
    sample of its own, the largest ``count`` (Gumbel's trick). With replacement: a double uniform per draw,
    placed in the row's normalised running sum (the last entry taken as 1)."""
    if not replacement or count == 1:
        keys = weights / exponential(generator, weights.shape, 1.0).astype(weights.dtype)
        return np.argsort(-keys, axis=-1, kind="stable")[:, :count]
    running = np.cumsum(weights, axis=-1, dtype=np.float64 if weights.dtype.itemsize == 8 else np.float32)
    running /= running[:, -1:]
    running[:, -1] = 1
    drawn = _unit(generator, len(weights) * count, True).reshape(len(weights), count)
    return np.stack([np.searchsorted(row, draws, side="left") for row, draws in zip(running, drawn)])


def geometric(generator, shape: tuple, p: float) -> np.ndarray:
    """Trials up to the first success: ``ceil(log(u) / log1p(-p))`` of a double uniform ``u``."""
    return np.ceil(np.log(_unit(generator, math.prod(shape), True)) / math.log1p(-p)).reshape(shape)


def cauchy(generator, shape: tuple, median: float, sigma: float) -> np.ndarray:
    """``median + sigma * tan(pi * (u - 1/2))`` of a double uniform ``u``."""
    return median + sigma * np.tan(math.pi * (_unit(generator, math.prod(shape), True).reshape(shape) - 0.5))


def log_normal(generator, shape: tuple, mean: float, std: float) -> np.ndarray:
    """``exp`` of normals of ``mean`` and ``std``, drawn one by one (pairs, the sine kept) whatever their count,
    as torch draws them."""
    return np.exp(_normal_one_by_one(generator, math.prod(shape)) * std + mean).reshape(shape)
