"""``make_tensor``: a tensor of random values in a range, for tests."""
from __future__ import annotations

import math
import warnings

import numpy as np

from ember import _dtype as D, _random
from ember._creation import from_numpy
from ember._ops.copy import contiguous_format
from ember._size import Size
from ember._tensor import Tensor, device as _device

_FLOAT_RANGE, _INT_RANGE, _BOOL_RANGE = (-9, 9), (-9, 10), (0, 2)


def make_tensor(*shape: int | Size | list | tuple, dtype: D.dtype, device, low: float | None = None,
                high: float | None = None, requires_grad: bool = False, noncontiguous: bool = False,
                exclude_zero: bool = False, memory_format=None) -> Tensor:
    """A tensor of ``shape`` and ``dtype`` drawn uniformly from ``[low, high)`` (torch's defaults: floats in
    [-9, 9], integers in [-9, 10), unsigned from 0), from ember's default generator.

    >>> import ember
    >>> x = ember.testing.make_tensor(3, dtype=ember.float32, device="cpu", low=-1, high=1, exclude_zero=True)
    >>> bool(((x >= -1) & (x <= 1) & (x != 0)).all())
    True
    """
    _device(device)
    if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
        shape = tuple(shape[0])
    if noncontiguous and memory_format is not None:
        raise ValueError(
            f"The parameters `noncontiguous` and `memory_format` are mutually exclusive, but got "
            f"noncontiguous={noncontiguous} and memory_format={memory_format}"
        )
    if requires_grad and not (dtype.is_floating_point or dtype.is_complex):
        raise ValueError(
            f"`requires_grad=True` is not supported for boolean and integral dtypes, but got dtype={dtype}"
        )
    data = np.asarray(_values(tuple(int(s) for s in shape), dtype, low, high, exclude_zero))  # 0-d: not a scalar
    if noncontiguous and data.size > 1:  # every other element of a twice-as-long last dim: same values, strided
        spread = np.repeat(data, 2, axis=-1)
        data = spread[..., ::2]
    result = from_numpy(data)
    if memory_format is not None and memory_format is not contiguous_format:
        result = result.contiguous(memory_format=memory_format)
    if requires_grad:
        result.requires_grad_(True)
    return result


def _values(shape: tuple, dtype: D.dtype, low, high, exclude_zero: bool) -> np.ndarray:
    rng = _random.generator(None)
    np_dtype = dtype.np if hasattr(dtype, "np") else np.dtype(str(dtype).split(".")[-1])
    if np_dtype == np.bool_:
        low, high = _bounds(low, high, _BOOL_RANGE, _BOOL_RANGE, dtype)
        values = rng.integers(math.ceil(low), math.ceil(high), shape).astype(np.bool_)
        return values | exclude_zero  # as torch: without zeros, every element is True
    if np_dtype.kind in "iu":
        info = np.iinfo(np_dtype)
        low, high = _bounds(low, high, _INT_RANGE, (int(info.min), int(info.max) + 1), dtype)
        values = rng.integers(math.ceil(low), math.ceil(high), shape, endpoint=False).astype(np_dtype)
        if exclude_zero:
            values[values == 0] = 1  # as torch: zeros become ones
        return values
    info = D.float_info(np_dtype)
    low, high = _bounds(low, high, _FLOAT_RANGE, (float(info.min), float(info.max)), dtype)
    if np_dtype.kind == "c":  # as torch: the real and imaginary parts each drawn from [low, high)
        pairs = rng.uniform(low, high, (*shape, 2))
        values = (pairs[..., 0] + 1j * pairs[..., 1]).astype(np_dtype)
    else:
        values = rng.uniform(low, high, shape).astype(np_dtype)
    if exclude_zero:
        values[values == 0] = info.eps  # as torch: zeros become the dtype's epsilon
    return values


def _bounds(low, high, default: tuple, supported: tuple, dtype: D.dtype) -> tuple:
    """``[low, high)`` (``default``'s ends where not given) checked, then clamped to what ``dtype`` holds.

    As torch: the order is checked on the values given, and an interval that
    misses the dtype's ``supported`` range entirely is refused rather than clamped.
    """
    low = default[0] if low is None else low
    high = default[1] if high is None else high
    floating = dtype.is_floating_point or dtype.is_complex
    if math.isnan(low) or math.isnan(high):
        raise ValueError(f"`low` and `high` cannot be NaN, but got low={low} and high={high}")
    if low > high or low == high and not floating:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    clamped_low, clamped_high = max(low, supported[0]), min(high, supported[1])
    if clamped_low > clamped_high or clamped_low == clamped_high and low != high:
        raise ValueError(f"The value interval specified by `low` and `high` is [{low}, {high}), but {dtype} only "
                         f"supports [{supported[0]}, {supported[1]})")
    if low == high:
        warnings.warn("Passing `low==high` to `ember.testing.make_tensor` for floating or complex types is "
                      "deprecated; use `ember.full(...)` instead.", FutureWarning, stacklevel=4)
    return clamped_low, clamped_high
