"""``binomial``: the number of successes in ``count`` trials of probability ``prob``, element by element.

>>> import ember
>>> ember.binomial(ember.tensor([4., 0.]), ember.tensor([1., 0.5]))
tensor([4., 0.])
"""
from __future__ import annotations

import numpy as np

from ember import _dtype, _stream_rejection
from ember._creation import _checked_generator
from ember._ops._support import check_broadcast, ember_function, require_tensor
from ember._sampling import Sample
from ember._tensor import Tensor


class Binomial(Sample):
    """A draw with no derivative: backward through it is an error, as in torch."""

    backward_name = "BinomialBackward0"

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError("binomial: derivative for binomial is not implemented (a count drawn at random has no "
                           "gradient); detach count and prob before sampling")


@ember_function
def binomial(count: Tensor, prob: Tensor, generator=None) -> Tensor:
    """Draws from Binomial(``count``, ``prob``), broadcast together, in their (floating) dtype.

    A count or a probability at or below 0 draws 0; a probability at or above 1 draws the count itself; the
    fraction of a count is otherwise dropped; a NaN, or an infinite count with a probability strictly between 0
    and 1, draws NaN.

    >>> ember.binomial(ember.full((3,), 5.), ember.tensor(0.), generator=ember.Generator().manual_seed(0))
    tensor([0., 0., 0.])
    """
    n = require_tensor(count, "binomial", 1, "count")
    p = require_tensor(prob, "binomial", 2, "prob")
    kind = n._data.dtype
    if _dtype.kind(kind) != "f":
        raise ValueError(f"binomial only supports floating-point dtypes for count, got: "
                         f"{_dtype.scalar_type_name(kind)}")
    if p._data.dtype != kind:
        raise RuntimeError(f"binomial: Found dtype {_dtype.scalar_type_name(p._data.dtype)} but expected "
                           f"{_dtype.scalar_type_name(kind)}: count and prob must have the same dtype")
    check_broadcast("binomial", n._data.shape, p._data.shape)
    shape = np.broadcast_shapes(n._data.shape, p._data.shape)
    stream = _checked_generator("binomial", generator)
    return Binomial.apply(_draw(stream, n._data, p._data, shape).astype(kind), n, p)


def _draw(stream, count: np.ndarray, prob: np.ndarray, shape: tuple) -> np.ndarray:
    count, prob = np.broadcast_to(count, shape).astype(np.float64), np.broadcast_to(prob, shape).astype(np.float64)
    with np.errstate(invalid="ignore"):  # NaNs compare False: they are dealt with last
        certain, never = prob >= 1, (count <= 0) | (prob <= 0)
        drawn_here = np.isfinite(count) & ~np.isnan(prob) & ~certain & ~never
        drawn = _stream_rejection.binomial(stream, np.where(drawn_here, count, 0.0), np.where(drawn_here, prob, 0.0))
    drawn = np.where(certain, count, drawn)  # as torch: the count itself, fraction and all
    drawn[np.isnan(prob) | np.isnan(count) | np.isinf(count) & ~certain] = np.nan
    drawn[never] = 0.0  # (also for a NaN probability, as torch)
    return drawn
