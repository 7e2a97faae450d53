"""Sums and running scans of floats with torch's accuracy on long dims, at about NumPy's cost.

NumPy adds pairwise only along the innermost dim of its loop; along any other dim it adds one element
after another, so the rounding error of ``x.sum(0)`` grows with the number of rows. On a ``[1000000, 3]``
float32 array the column sums are off by a relative 1e-5, where torch's are off by 1e-7, and a variance
taken from them by 4e-4. NumPy's scans (``cumsum``, ``cumprod``, ``logaddexp.accumulate``) likewise carry
their running value in the array's dtype, where torch carries float32 in double: a float32 ``cumsum`` of a
million values drifts by 2e-5, a ``logcumsumexp`` by 8e-4.

Here a long dim is cut into blocks of ``BLOCK`` elements:

- a sum adds each block first, then the blocks' sums (again by blocks while they are many): no chain of
  additions is longer than ``BLOCK``, as in torch's cascade sum;
- a running sum runs within each block, carries the blocks' sums from one block to the next in double, and
  adds to each block what came before it.

A sum costs one extra pass over a 64th of the data. A running sum of real floats is faster than NumPy's own
(its blocks are matrix products); one of complex numbers costs two more passes (its blocks' sums and what
each block adds). Running products and log-sum-exps carry each step in double (see :func:`scan`).

>>> import numpy as np
>>> x = np.full((1_000_000, 2), 0.1, np.float32)
>>> round(float(np.add.reduce(x, 0)[0])), round(float(add_reduce(x, (0,))[0]))
(100958, 100000)
>>> round(float(np.add.accumulate(x[:, 0])[-1])), round(float(scan(np.add, x[:, 0], 0)[-1]))
(100958, 100000)
"""
from __future__ import annotations

import math

import numpy as np

BLOCK = 64  # at most this many additions in a row; the partial results are then a 64th of the data
FROM = 8192  # fewer elements: no chain can grow long enough to matter, and the blocks would cost more
SCAN_BLOCK = 64  # blocks of NumPy's scan (complex numbers, strided or non-finite data): as BLOCK
SHORT_SCAN = 512  # shorter scans: as NumPy runs them (the blocks' own cost is some 10 µs)
_DOUBLE = np.dtype(np.float64)
_CARRIED = {np.dtype(np.float32): _DOUBLE, np.dtype(np.complex64): np.complex128}
_SCANNED = frozenset(_CARRIED) | {_DOUBLE}
PRODUCT_BLOCK = 16  # a running sum's blocks taken as products: BLAS ran [62500, 16] @ [16, 16] the fastest
_TRIANGLES: dict = {}


def add_reduce(data: np.ndarray, axes: tuple | None, dtype=None, keepdims: bool = False) -> np.ndarray:
    """``np.add.reduce(data, axes, dtype, keepdims=keepdims)`` as an array. The reduced dims that NumPy would add
    one element after another are summed first, one at a time and each by blocks (see _sequential_axes)."""
    if data.size >= FROM and data.dtype.kind in "fc":
        for axis in _sequential_axes(data, axes):
            data = np.add.reduce(_block_sums(data, axis, dtype), axis, dtype, keepdims=True)
            dtype = None  # the partial sums are in it already
    return np.add.reduce(data, axes, dtype, out=..., keepdims=keepdims)


def _sequential_axes(data: np.ndarray, axes: tuple | None) -> list:
    """The reduced dims that NumPy's loop does not take innermost (it adds along that one pairwise), if together
    they would make chains of additions longer than a block: NumPy runs one chain through all of them."""
    if axes is None or len(axes) == data.ndim:
        if data.flags.c_contiguous or data.flags.f_contiguous:
            return []  # one flat run, which NumPy adds pairwise
        axes = range(data.ndim)
    sizes, strides = data.shape, data.strides
    inner = min((a for a in range(data.ndim) if sizes[a] > 1), key=lambda a: abs(strides[a]), default=None)
    outer = [a for a in axes if a != inner and sizes[a] > 1]
    return outer if math.prod([sizes[a] for a in outer]) > BLOCK else []


def _block_sums(data: np.ndarray, axis: int, dtype) -> np.ndarray:
    """``data`` with dim ``axis`` replaced by the sums of its blocks, until at most a block of them is left."""
    while data.shape[axis] > BLOCK:
        head, tail = _blocks(data, axis)
        sums = np.add.reduce(head, axis + 1, dtype)
        if tail is not None:
            sums = np.concatenate((sums, np.add.reduce(tail, axis, dtype, keepdims=True)), axis)
        data, dtype = sums, None
    return data


def _blocks(data: np.ndarray, axis: int, block: int = BLOCK) -> tuple:
    """(the whole blocks of dim ``axis`` as two dims, ``[..., count, block, ...]``, a view; the rest, or None)."""
    count, rest = divmod(data.shape[axis], block)
    before = (slice(None),) * axis
    head = data[before + (slice(0, count * block),)]
    # (splitting one dim never needs a copy; copy=False says so, as a scan writes through the view)
    head = head.reshape(data.shape[:axis] + (count, block) + data.shape[axis + 1:], copy=False)
    return head, (data[before + (slice(count * block, None),)] if rest else None)


def scan(ufunc: np.ufunc, data: np.ndarray, axis: int, out: np.ndarray | None = None) -> np.ndarray:
    """``ufunc.accumulate(data, axis, out=out)`` (``np.add``, ``np.multiply`` or ``np.logaddexp``), a float32 or
    complex64 scan carried in double, as torch carries it. NumPy may warn of invalid casts while it fills
    its buffers: call it quietly.

    A running sum of real floats goes by matrix products (see :func:`_running_sum_by_products`), else by
    blocks of NumPy's scan (see the module's docstring): the rounding errors of the blocks' own sums are small
    next to the running total. A running product's relative errors compound from block to block, and a
    running log-sum-exp costs little more in double, so those two carry each step in double.
    """
    if data.ndim == 0 or data.shape[axis] <= SHORT_SCAN or data.dtype not in _SCANNED:  # short scans first
        return short_scan(ufunc, data, axis, out)
    if ufunc is np.add and data.dtype.kind == "f":
        result = _running_sum_by_products(data, axis, out)
        if result is not None:
            return result
    carried = _CARRIED.get(data.dtype)
    if carried is None:  # float64: NumPy's scan is as accurate as torch's
        return ufunc.accumulate(data, axis, None, out)
    if out is None:
        out = np.empty(data.shape, data.dtype)
    if ufunc is not np.add:
        return ufunc.accumulate(data, axis, carried, out)
    return _running_sum_by_blocks(data, axis, out, carried)


def short_scan(ufunc: np.ufunc, data: np.ndarray, axis: int, out: np.ndarray | None) -> np.ndarray:
    """A scan too short for blocks: a float32 or complex64 scan carried in double, as torch's (in single, a
    running sum that comes back near zero keeps the rounding of its larger terms: thousands of units in its last
    place)."""
    carried = _CARRIED.get(data.dtype) if data.ndim else None
    if carried is None:
        return ufunc.accumulate(data, axis, None, out)
    if out is None:  # (converted first: NumPy's scan told to carry in double costs more on few)
        return ufunc.accumulate(data.astype(carried), axis).astype(data.dtype)
    return ufunc.accumulate(data, axis, carried, out)


def _running_sum_by_blocks(data: np.ndarray, axis: int, out: np.ndarray, carried) -> np.ndarray:
    head, tail = _blocks(data, axis, SCAN_BLOCK)
    runs, rest = _blocks(out, axis, SCAN_BLOCK)
    np.add.accumulate(head, axis + 1, None, runs)
    before = (slice(None),) * axis
    # each block's own sum, [..., count, ...]: added pairwise, not read off the end of its run, whose error
    # would be the same in every block of equal values and grow with their number
    totals = np.add.reduce(head, axis + 1)
    carries = np.add.accumulate(totals, axis, carried)  # the running sums, block after block, in double
    later = runs[before + (slice(1, None),)]
    earlier = carries[before + (slice(0, -1),)].astype(data.dtype)[before + (slice(None), None)]
    if later.strides[axis + 1] < 0:  # a scan from the end (cumsum's gradient): added in memory order, twice as fast
        backwards = before + (slice(None, None, -1), slice(None, None, -1))
        later, earlier = later[backwards], earlier[backwards]
    later += earlier
    if rest is not None:
        np.add.accumulate(tail, axis, None, rest)
        rest += carries[before + (slice(-1, None),)].astype(data.dtype)
    return out


def _running_sum_by_products(data: np.ndarray, axis: int, out: np.ndarray | None) -> np.ndarray | None:
    """The running sum of a contiguous float32 or float64 ``data`` (or of one reversed along ``axis``, scanned
    from its end: cumsum's gradient), or None where this way does not apply.

    Each block of ``PRODUCT_BLOCK`` elements is multiplied by a triangle of ones (BLAS, three times as fast
    as NumPy's scan, which takes one element at a time), and the blocks' totals are carried in double. A
    block that holds an inf or a nan would spread it as nan through the triangle's zeros: then the result is
    None (its total, and so the scan's, is not finite), and the caller scans as NumPy does.
    """
    from_end = data.strides[axis] < 0 and data.shape[axis] > 1
    given = out
    if from_end:
        if out is None:
            return None
        data, out = np.flip(data, axis), np.flip(out, axis)
    elif out is None:
        given = out = np.empty(data.shape, data.dtype)
    if not (data.flags.c_contiguous and out.flags.c_contiguous and out.dtype == data.dtype):
        return None
    length, block = data.shape[axis], PRODUCT_BLOCK
    pre, post = math.prod(data.shape[:axis]), math.prod(data.shape[axis + 1:])
    x, o = data.reshape(pre, length, post), out.reshape(pre, length, post)
    count = length // block
    head = x[:, :count * block].reshape(pre, count, block, post)
    runs = o[:, :count * block].reshape(pre, count, block, post, copy=False)
    triangle = _triangle(data.dtype, from_end)
    if post == 1:
        np.matmul(head[..., 0], triangle, out=runs[..., 0])
    else:
        np.matmul(triangle.T, head, out=runs)
    totals = runs[:, :, 0 if from_end else -1]  # the element of each block's run that holds the whole block
    tail, rest = x[:, count * block:], o[:, count * block:]
    if from_end:
        np.add.accumulate(tail[:, ::-1], 1, None, rest[:, ::-1])
        start = rest[:, :1].astype(_DOUBLE) if rest.shape[1] else np.zeros((pre, 1, post))  # the tail comes first
        carries = np.add.accumulate(totals[:, ::-1], 1, _DOUBLE)[:, ::-1] + start  # from block k to the end
        runs[:, :-1] += carries[:, 1:, None].astype(data.dtype)
        runs[:, -1] += start.astype(data.dtype)
        first = o[:, 0]
    else:
        carries = np.add.accumulate(totals, 1, _DOUBLE)  # up to and with block k
        runs[:, 1:] += carries[:, :-1, None].astype(data.dtype)
        np.add.accumulate(tail, 1, None, rest)
        rest += carries[:, -1:].astype(data.dtype)
        first = o[:, -1]
    return given if np.isfinite(first).all() else None


def _triangle(dtype: np.dtype, from_end: bool) -> np.ndarray:
    """The ``[PRODUCT_BLOCK, PRODUCT_BLOCK]`` ones that make a block's running sum a product ``block @ triangle``:
    column i adds the entries up to i (or, ``from_end``, from i on)."""
    key = (dtype, from_end)
    if key not in _TRIANGLES:
        ones = np.ones((PRODUCT_BLOCK, PRODUCT_BLOCK), dtype)
        _TRIANGLES[key] = np.tril(ones) if from_end else np.triu(ones)
    return _TRIANGLES[key]
