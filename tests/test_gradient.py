"""ember.gradient against torch.gradient: even and uneven spacing, every edge order, errors, differentiability."""
import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import ember


def _compare(x: np.ndarray, **kwargs):
    as_torch = {k: [torch.tensor(v) for v in val] if k == "spacing" and isinstance(val, list) else val
                for k, val in kwargs.items()}
    as_ember = {k: [ember.tensor(v) for v in val] if k == "spacing" and isinstance(val, list) else val
                for k, val in kwargs.items()}
    theirs, ours = torch.gradient(torch.tensor(x), **as_torch), ember.gradient(ember.tensor(x), **as_ember)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert a.dtype == getattr(ember, str(b.dtype).removeprefix("torch."))
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(shape=st.lists(st.integers(3, 6), min_size=1, max_size=3), edge_order=st.sampled_from([1, 2]),
       spacing=st.sampled_from(["default", "number", "coordinates"]), seed=st.integers(0, 2**16), one_dim=st.booleans())
def test_matches_torch(shape, edge_order, spacing, seed, one_dim):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    dims = [len(shape) - 1] if one_dim else list(range(len(shape)))
    kwargs = {"edge_order": edge_order}
    if one_dim:
        kwargs["dim"] = dims[0]
    if spacing == "number":
        kwargs["spacing"] = 0.5
    elif spacing == "coordinates":
        kwargs["spacing"] = [np.cumsum(rng.random(shape[d]) + 0.2) for d in dims]
    _compare(x, **kwargs)


def test_integer_input_and_scalar_tensor_spacing():
    _compare(np.array([1, 2, 4, 8]), spacing=2)
    ours = ember.gradient(ember.ones(2, 3), spacing=ember.tensor(2.0))
    assert len(ours) == 2 and ours[0].shape == (2, 3)
    assert ember.gradient(ember.tensor(3.0)) == ()


def test_differentiable_to_values_and_coordinates():
    rng = np.random.default_rng(0)
    x = ember.tensor(rng.standard_normal((4, 5)), requires_grad=True)
    coordinates = ember.tensor(np.cumsum(rng.random(5) + 0.2), requires_grad=True)
    assert ember.autograd.gradcheck(lambda a, c: ember.gradient(a, spacing=[c], dim=1, edge_order=2)[0],
                                    (x, coordinates))
    assert ember.autograd.gradgradcheck(lambda a: ember.gradient(a, edge_order=2)[0], (x,))


@pytest.mark.parametrize("kwargs, kind, message", [
    ({"spacing": [1.0, 2.0, 3.0]}, RuntimeError, "a list of length equal to 'self.dim\\(\\) = 2'"),
    ({"dim": 1, "edge_order": 3}, RuntimeError, "only supports edge_order=1 and edge_order=2"),
    ({"dim": [0, 0]}, RuntimeError, "dim 0 appears multiple times in the list of dims"),
    ({"dim": 2}, IndexError, r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)"),
])
def test_errors_as_torch(kwargs, kind, message):
    x = np.ones((2, 4))
    with pytest.raises(kind, match=message):
        torch.gradient(torch.tensor(x), **kwargs)
    with pytest.raises(kind, match=message):
        ember.gradient(ember.tensor(x), **kwargs)
    with pytest.raises(RuntimeError, match="each dimension size to be at least edge_order\\+1"):
        ember.gradient(ember.ones(2), edge_order=2)
    with pytest.raises(ValueError, match="coordinates along dim 1 must be a 1-d tensor of 4 values"):
        ember.gradient(ember.tensor(x), spacing=[ember.tensor([0.0, 1.0, 2.0])], dim=1)
