"""Which of several equal elements torch's CPU kernels choose, for kthvalue, mode and nanmedian.

torch does not document it: the choice falls out of the selection and sorting algorithms its kernels run
(a median-of-three quickselect for kthvalue; the C++ standard library's introsort and introselect, as GCC
builds them, for mode and for a nanmedian of NaNs alone). The functions here run the same steps on a slice
of values, in Python, so that ember picks the same index, and so sends gradients to the same element.

They are slow (Python loops); the ops call them only for the slices where elements tie.

>>> kth_index([2.0, 1.0, 2.0, 1.0], 1)  # the second smallest is a 1.0: torch.kthvalue gives index 3
3
"""
from __future__ import annotations

from functools import lru_cache


def _after(a: float, b: float) -> bool:
    """Whether ``a`` sorts after ``b``: larger, or NaN against a number (NaN is the largest value)."""
    return a > b or (a != a and b == b)


def kth_index(values: list, k: int) -> int:
    """The index of the element of sorted position ``k`` (from 0) that kthvalue's quickselect finds."""
    v, index = list(values), list(range(len(values)))

    def swap(p: int, q: int) -> None:
        v[p], v[q] = v[q], v[p]
        index[p], index[q] = index[q], index[p]

    low, high = 0, len(v) - 1
    while high > low + 1:
        middle = low + (high - low) // 2
        swap(middle, low + 1)  # the median of v[low], v[low + 1], v[high] becomes the pivot, at low
        for p, q in ((low + 1, high), (low, high), (low + 1, low)):
            if _after(v[p], v[q]):
                swap(p, q)
        i, j = _partition(v, swap, low, high)
        if j <= k:
            low = i
        if j >= k:
            high = j - 1
    if high == low + 1 and _after(v[low], v[high]):
        swap(low, high)
    return index[k]


def _partition(v: list, swap, low: int, high: int) -> tuple:
    """Hoare's partition of ``v[low + 1 : high]`` around the pivot ``v[low]``, which then moves to its place."""
    i, j, pivot = low + 1, high, v[low]
    while True:
        i += 1
        while _after(pivot, v[i]):
            i += 1
        j -= 1
        while _after(v[j], pivot):
            j -= 1
        if j < i:
            break
        swap(i, j)
    swap(low, j)
    return i, j


class _Sequence:
    """Values with their original indices, permuted together and ordered by ``before`` (the C++ comparator)."""

    def __init__(self, values: list, before):
        self.v, self.index, self.before = list(values), list(range(len(values))), before

    def less(self, p: int, q: int) -> bool:
        return self.before(self.v[p], self.v[q])

    def swap(self, p: int, q: int) -> None:
        self.v[p], self.v[q] = self.v[q], self.v[p]
        self.index[p], self.index[q] = self.index[q], self.index[p]

    def move(self, source: int, target: int) -> None:
        self.v[target], self.index[target] = self.v[source], self.index[source]


def _pivot_to_first(s: _Sequence, first: int, a: int, b: int, c: int) -> None:
    """Swap the median of positions a, b and c to ``first`` (ties resolved as the C++ library resolves them)."""
    if s.less(a, b):
        s.swap(first, b if s.less(b, c) else c if s.less(a, c) else a)
    else:
        s.swap(first, a if s.less(a, c) else c if s.less(b, c) else b)


def _cut(s: _Sequence, first: int, last: int) -> int:
    """Partition ``[first, last)`` around a median-of-three pivot; the start of the upper part."""
    _pivot_to_first(s, first, first + 1, first + (last - first) // 2, last - 1)
    low, high = first + 1, last
    while True:
        while s.less(low, first):
            low += 1
        high -= 1
        while s.less(first, high):
            high -= 1
        if low >= high:
            return low
        s.swap(low, high)
        low += 1


def _insert(s: _Sequence, k: int, floor: int) -> None:
    """Move the element at ``k`` down past the larger ones before it (not below ``floor``)."""
    value, index = s.v[k], s.index[k]
    j = k
    while j > floor and s.before(value, s.v[j - 1]):
        s.move(j - 1, j)
        j -= 1
    s.v[j], s.index[j] = value, index


def _insertion_sort(s: _Sequence, first: int, last: int) -> None:
    for k in range(first + 1, last):
        if s.before(s.v[k], s.v[first]):  # smaller than the first: it goes to the front
            value, index = s.v[k], s.index[k]
            s.v[first + 1:k + 1], s.index[first + 1:k + 1] = s.v[first:k], s.index[first:k]
            s.v[first], s.index[first] = value, index
        else:
            _insert(s, k, first)


def _depth_limit(n: int) -> int:
    return 2 * (n.bit_length() - 1)


def _sort(s: _Sequence) -> None:
    """std::sort: introsort down to runs of 16, then one insertion sort over everything."""
    n = len(s.v)
    if n < 2:
        return
    _introsort(s, 0, n, _depth_limit(n))
    _insertion_sort(s, 0, min(n, 16))
    for k in range(16, n):
        _insert(s, k, 0)


def _introsort(s: _Sequence, first: int, last: int, depth: int) -> None:
    while last - first > 16:
        if depth == 0:  # the library would heapsort here; the order of ties is then its own
            _heap_fallback(s, first, last)
            return
        depth -= 1
        cut = _cut(s, first, last)
        _introsort(s, cut, last, depth)
        last = cut


def _heap_fallback(s: _Sequence, first: int, last: int) -> None:
    """Sort ``[first, last)`` (reached only by inputs that defeat the median-of-three pivot)."""
    order = sorted(range(first, last), key=lambda p: (s.v[p] != s.v[p], s.v[p]))
    s.v[first:last], s.index[first:last] = [s.v[p] for p in order], [s.index[p] for p in order]


def _less(a: float, b: float) -> bool:
    return a < b


def mode_index(values: list) -> int:
    """The index mode gives: the last element, in std::sort's order, of the first longest run of equal values."""
    s = _Sequence(values, _less)
    _sort(s)
    best, chosen, run = 0, 0, 0
    for p in range(len(s.v)):
        run += 1
        if p == len(s.v) - 1 or s.v[p] != s.v[p + 1]:  # NaN != NaN: each NaN is a run of its own, as in torch
            if run > best:
                best, chosen = run, s.index[p]
            run = 0
    return chosen


@lru_cache(maxsize=None)
def first_of_equivalent(n: int) -> int:
    """The index std::nth_element puts first among ``n`` elements none of which is less than another
    (torch's nanmedian of a slice of NaNs)."""
    s = _Sequence([0] * n, lambda a, b: False)
    first, last, depth = 0, n, _depth_limit(n)
    while last - first > 3 and depth > 0:
        depth -= 1
        cut = _cut(s, first, last)
        if cut <= 0:
            first = cut
        else:
            last = cut
    return s.index[0]  # the final insertion sort moves nothing: no element is less than another
