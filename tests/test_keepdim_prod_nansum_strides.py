"""prod and nansum with keepdim=True of a permuted or channels-last input: torch lays the result out row-major,
so the kept 1s get the product of the sizes after them as their strides (NumPy's keep the input's order)."""
import itertools

import pytest
import torch

import ember

PERMUTATIONS = list(itertools.permutations(range(4)))


def _pair(perm):
    values = torch.arange(1.0, 121.0, dtype=torch.float64).reshape(2, 3, 4, 5) / 60
    return ember.tensor(values.numpy()).permute(perm), values.permute(perm)


@pytest.mark.parametrize("perm", PERMUTATIONS)
def test_prod_keepdim_strides_match_torch(perm):
    mine, theirs = _pair(perm)
    for dim in range(4):
        assert mine.prod(dim, keepdim=True).stride() == theirs.prod(dim, keepdim=True).stride()


@pytest.mark.parametrize("perm", PERMUTATIONS)
@pytest.mark.parametrize("dims", [(1,), (2, 3)])
def test_nansum_keepdim_strides_match_torch(perm, dims):
    mine, theirs = _pair(perm)
    mine[0, 0, 0, 0], theirs[0, 0, 0, 0] = float("nan"), float("nan")  # the path that zeroes the nans too
    assert mine.nansum(dims, keepdim=True).stride() == theirs.nansum(dims, keepdim=True).stride()
    clean_mine, clean_theirs = _pair(perm)
    assert clean_mine.nansum(dims, keepdim=True).stride() == clean_theirs.nansum(dims, keepdim=True).stride()


def test_channels_last_prod_and_nansum_keepdim_strides_match_torch():
    values = torch.rand(2, 3, 4, 5, dtype=torch.float64).to(memory_format=torch.channels_last)
    mine = ember.tensor(values.numpy()).to(memory_format=ember.channels_last)
    assert mine.stride() == values.stride()
    assert mine.prod(1, keepdim=True).stride() == values.prod(1, keepdim=True).stride()
    assert mine.nansum((2, 3), keepdim=True).stride() == values.nansum((2, 3), keepdim=True).stride()


def test_keepdim_prod_values_and_gradient_unchanged():
    values = torch.rand(2, 3, 4, 5, dtype=torch.float64).permute(0, 2, 3, 1)
    mine = ember.tensor(values.numpy()).requires_grad_()
    assert ember.allclose(mine.prod(2, keepdim=True), ember.tensor(values.prod(2, keepdim=True).numpy()))
    assert ember.autograd.gradcheck(lambda t: t.permute(0, 2, 3, 1).prod(1, keepdim=True),
                                    (ember.rand(2, 3, 2, 2, dtype=ember.float64, requires_grad=True),))
    assert ember.autograd.gradcheck(lambda t: t.permute(0, 2, 3, 1).nansum((1, 2), keepdim=True),
                                    (ember.rand(2, 3, 2, 2, dtype=ember.float64, requires_grad=True),))
