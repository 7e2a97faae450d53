"""``out=`` with a sparse operand: a dense result is written into ``out`` (as torch writes it); a sparse result is
refused, not ignored (before, every sparse op dropped ``out`` silently)."""
import pytest
import torch

import ember


def _pair(layout: str):
    dense = [[0.0, 2.0], [3.0, 0.0]]
    if layout == "coo":
        return ember.tensor(dense).to_sparse(), torch.tensor(dense).to_sparse()
    return getattr(ember.tensor(dense), f"to_sparse_{layout}")(), getattr(torch.tensor(dense), f"to_sparse_{layout}")()


@pytest.mark.parametrize("layout", ["coo", "csr"])
@pytest.mark.parametrize("op", ["mm", "matmul"])
def test_a_dense_product_is_written_into_out(layout, op):
    mine, theirs = _pair(layout)
    out = ember.empty(2, 3)
    assert getattr(ember, op)(mine, ember.ones(2, 3), out=out) is out
    assert out.tolist() == getattr(torch, op)(theirs, torch.ones(2, 3)).tolist()


def test_addmm_is_written_into_out():
    mine, theirs = _pair("coo")
    out = ember.empty(2, 3)
    assert ember.addmm(ember.ones(2, 3), mine, ember.ones(2, 3), beta=2, out=out) is out
    assert out.tolist() == torch.addmm(torch.ones(2, 3), theirs, torch.ones(2, 3), beta=2).tolist()


def test_a_sparse_result_into_out_is_refused():
    mine, _ = _pair("coo")
    with pytest.raises(NotImplementedError, match="out= with a sparse result"):
        ember.add(mine, mine, out=ember.empty(2, 2))

