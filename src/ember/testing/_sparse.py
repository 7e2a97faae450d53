"""``assert_close`` of sparse tensors, as torch compares them: the layouts first, then the stored parts one by
one (a COO tensor's indices and values once coalesced; a compressed one's two index tensors and values), the
indices exactly, the values within the tolerances.

>>> import ember
>>> a = ember.tensor([[1., 0.], [0., 2.]], dtype=ember.float64).to_sparse_csr()
>>> ember.testing.assert_close(a, ember.tensor([[1., 0.], [0., 2.5]], dtype=ember.float64).to_sparse_csr())
Traceback (most recent call last):
AssertionError: Sparse CSR values are not close!
<BLANKLINE>
Mismatched elements: 1 / 2 (50.0%)
Greatest absolute difference: 0.5 at index (1,) (up to 1e-07 allowed)
Greatest relative difference: 0.2 at index (1,) (up to 1e-07 allowed)
"""
from __future__ import annotations

from typing import Callable

from ember import _layout
from ember._tensor import Tensor

_NAMES = {_layout.sparse_coo: "COO", _layout.sparse_csr: "CSR", _layout.sparse_csc: "CSC",
          _layout.sparse_bsr: "BSR", _layout.sparse_bsc: "BSC"}


def _parts(t: Tensor) -> list:
    """``(name, array, is_index)`` for each stored part of ``t``."""
    if t.layout is _layout.sparse_coo:
        from ember._ops.sparse import coalesce

        t = coalesce(t.detach())
        return [("indices", t._ind, True), ("values", t._val, False)]
    from ember.sparse._compressed import INDEX_NAMES

    compressed, plain = INDEX_NAMES[t.layout]
    return [(compressed, t._cidx, True), (plain, t._pidx, True), ("values", t._val, False)]


def compare_sparse(actual: Tensor, expected: Tensor, options: dict, mismatch: type,
                   compare_arrays: Callable) -> None:
    """Raise ``mismatch`` unless the sparse ``actual`` and ``expected`` (of one shape and dtype) are close;
    ``compare_arrays(a, e, identifier, exact)`` compares two stored parts."""
    if actual.layout is not expected.layout:
        if options.get("check_layout", True):
            raise mismatch(f"The values for attribute 'layout' do not match: {actual.layout} != "
                           f"{expected.layout}.")
        return compare_arrays(actual.to_dense()._data, expected.to_dense()._data, "Tensor-likes", False)
    name = _NAMES[actual.layout]
    mine, theirs = _parts(actual), _parts(expected)
    stored, expected_stored = (parts[-2][1].shape[-1] for parts in (mine, theirs))  # (the last index part's)
    if stored != expected_stored:
        raise mismatch(f"The number of specified values in sparse {name} tensors does not match: {stored} != "
                       f"{expected_stored}")
    for (part, a, exact), (_, e, _) in zip(mine, theirs):
        compare_arrays(a, e, f"Sparse {name} {part}", exact)
