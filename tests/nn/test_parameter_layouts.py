"""A sparse tensor cannot be a Parameter in ember: it is refused with a message saying what to do, instead of a
Parameter of zeros (its dense memory is a placeholder)."""
import pytest

import ember


@pytest.mark.parametrize("convert", [lambda s: s, lambda s: s.to_sparse_csr(), lambda s: s.to_sparse_csc()])
def test_a_sparse_parameter_is_refused(convert):
    s = ember.sparse_coo_tensor(ember.tensor([[0, 1], [1, 0]]), ember.tensor([1.0, 2.0]), (2, 2))
    with pytest.raises(NotImplementedError, match="cannot be a Parameter"):
        ember.nn.Parameter(convert(s))


def test_a_dense_parameter_still_holds_its_values():
    p = ember.nn.Parameter(ember.tensor([1.0, 2.0]))
    assert p.tolist() == [1.0, 2.0] and p.requires_grad
