"""Which of several equal elements torch's CPU kernels choose: sort, topk, kthvalue, mode, nanmedian, unique.

torch does not document it: the choice falls out of the selection and sorting algorithms its kernels run
(a median-of-three quickselect for kthvalue; the C++ standard library's introsort, introselect and heap
select, as GCC builds them, for an unstable sort (quantile's too), topk, mode, a nanmedian of NaNs alone
and unique's rows with NaNs). topk's order with ``sorted=False`` comes from them too. The functions here
run the same steps on a slice of values, in Python, so that ember picks the same index, and so sends
gradients to the same element.

They are slow (Python loops); the ops call them only for the slices where elements tie, and only while
that is at most 32768 elements in all (beyond, they keep the stable order: torch documents no order there).

>>> kth_index([2.0, 1.0, 2.0, 1.0], 1)  # the second smallest is a 1.0: torch.kthvalue gives index 3
3
"""
from __future__ import annotations

from functools import lru_cache

EMULATED_AT_MOST = 1 << 15
"""Elements the ops run through these functions in one call, at most; beyond, tied slices keep the stable
order (Python loops would be slow)."""


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


def _sort(s: _Sequence, first: int, last: int) -> None:
    """std::sort of ``[first, last)``: introsort down to runs of 16, then one insertion sort over everything."""
    if last - first < 2:
        return
    _introsort(s, first, last, _depth_limit(last - first))
    _insertion_sort(s, first, min(last, first + 16))
    for k in range(first + 16, last):
        _insert(s, k, first)


def _introsort(s: _Sequence, first: int, last: int, depth: int) -> None:
    while last - first > 16:
        if depth == 0:  # the pivots went badly: heapsort what is left
            _partial_sort(s, first, last, last)
            return
        depth -= 1
        cut = _cut(s, first, last)
        _introsort(s, cut, last, depth)
        last = cut


def _nth_element(s: _Sequence, first: int, nth: int, last: int) -> None:
    """std::nth_element: introselect around ``nth``, a heap select if the pivots go badly, insertion sort last."""
    depth = _depth_limit(last - first)
    while last - first > 3:
        if depth == 0:
            _heap_select(s, first, nth + 1, last)
            s.swap(first, nth)
            return
        depth -= 1
        cut = _cut(s, first, last)
        if cut <= nth:
            first = cut
        else:
            last = cut
    _insertion_sort(s, first, last)


# ---- the binary heap of the C++ library (the largest, by ``before``, at the top)


def _sift(s: _Sequence, first: int, hole: int, length: int, value, index: int) -> None:
    """Fill the ``hole`` of the heap at ``first`` by moving the larger child up to the bottom, then put
    ``value`` in and move it up to its place."""
    top = child = hole
    while child < (length - 1) // 2:
        child = 2 * (child + 1)
        if s.before(s.v[first + child], s.v[first + child - 1]):
            child -= 1
        s.move(first + child, first + hole)
        hole = child
    if length % 2 == 0 and child == (length - 2) // 2:  # a last parent with one child
        child = 2 * (child + 1)
        s.move(first + child - 1, first + hole)
        hole = child - 1
    parent = (hole - 1) // 2
    while hole > top and s.before(s.v[first + parent], value):
        s.move(first + parent, first + hole)
        hole, parent = parent, (parent - 1) // 2
    s.v[first + hole], s.index[first + hole] = value, index


def _make_heap(s: _Sequence, first: int, last: int) -> None:
    length = last - first
    for parent in range((length - 2) // 2, -1, -1) if length >= 2 else ():
        _sift(s, first, parent, length, s.v[first + parent], s.index[first + parent])


def _pop_heap(s: _Sequence, first: int, last: int, result: int) -> None:
    """Move the heap's top to ``result`` and the element that was there into the heap ``[first, last)``."""
    value, index = s.v[result], s.index[result]
    s.move(first, result)
    _sift(s, first, 0, last - first, value, index)


def _heap_select(s: _Sequence, first: int, middle: int, last: int) -> None:
    """Gather the ``middle - first`` smallest elements in a heap at ``first``."""
    _make_heap(s, first, middle)
    for i in range(middle, last):
        if s.less(i, first):
            _pop_heap(s, first, middle, i)


def _partial_sort(s: _Sequence, first: int, middle: int, last: int) -> None:
    """std::partial_sort: the ``middle - first`` smallest elements, sorted, at ``first``."""
    _heap_select(s, first, middle, last)
    while middle - first > 1:
        middle -= 1
        _pop_heap(s, first, middle, middle)


def _less(a: float, b: float) -> bool:
    return a < b


def mode_index(values: list) -> int:
    """The index mode gives: the last element, in std::sort's order, of the first longest run of equal values."""
    s = _Sequence(values, _less)
    _sort(s, 0, len(s.v))
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
    _nth_element(s, 0, 0, n)
    return s.index[0]


def _larger(a: float, b: float) -> bool:
    return a > b or (a != a and b == b)


def _smaller(a: float, b: float) -> bool:
    return a < b or (a == a and b != b)


def topk_indices(values: list, k: int, largest: bool, ordered: bool) -> list:
    """The indices topk gives, in its order: a partial sort when ``k`` is small against the slice, else an
    nth_element (then a sort of all but the k-th, if ``ordered``); NaN is the largest value."""
    if k == 0:
        return []
    if selects_by_heap(k, len(values)):
        return heap_selected_indices(values, k, largest)
    s = _Sequence(values, _larger if largest else _smaller)
    _nth_element(s, 0, k - 1, len(values))
    if ordered:
        _sort(s, 0, k - 1)
    return s.index[:k]


def selects_by_heap(k: int, size: int) -> bool:
    """Whether topk takes ``k`` of ``size`` by a partial sort (a heap select, sorted after), not nth_element."""
    return 64 * k <= size


def heap_selected_indices(values: list, k: int, largest: bool) -> list:
    """The indices of topk's partial sort (``0 < k <= len(values)``), in its order.

    The heap select passes over every element not better than the worst it keeps, so ``values`` may lack
    any such element (after the first ``k``): the steps, and the order of what is kept, are the same.
    """
    s = _Sequence(values, _larger if largest else _smaller)
    _partial_sort(s, 0, k, len(values))
    return s.index[:k]


def sort_indices(values: list, descending: bool) -> list:
    """The order of torch's unstable sort (std::sort; NaN is the largest value)."""
    s = _Sequence(values, _larger if descending else _smaller)
    _sort(s, 0, len(values))
    return s.index


def _row_less(a: tuple, b: tuple) -> bool:
    """Lexicographic order as torch's unique compares rows: by the first elements one of which is less than
    the other (a NaN is neither, so the comparison passes over it)."""
    for p, q in zip(a, b):
        if p < q:
            return True
        if q < p:
            return False
    return False


def sort_rows(rows: list) -> list:
    """The order in which torch's unique (with a dim) sorts ``rows`` (std::sort)."""
    s = _Sequence([tuple(row) for row in rows], _row_less)
    _sort(s, 0, len(rows))
    return s.index
