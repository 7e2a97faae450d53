"""F.grouped_mm against torch (float32, the dtypes torch's CPU kernel takes) in its four operand layouts, its
gradients to second order in float64, and the helpers assert_int_or_pair and boolean_dispatch."""
import numpy as np
import pytest
import torch

import ember
from ember.nn import functional as F

R = np.random.default_rng(0)
OFFS = np.array([2, 6, 8], np.int32)

LAYOUTS = {  # (mat_a, mat_b, the part of the result that torch writes)
    "2d-3d": ((12, 4), (3, 4, 8), np.s_[:8]),
    "3d-2d": ((3, 4, 8), (8, 12), np.s_[:, :8]),
    "2d-2d": ((4, 12), (12, 8), np.s_[:]),
    "3d-3d": ((3, 4, 8), (3, 8, 4), np.s_[:]),
}


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_matches_torch(layout):
    shape_a, shape_b, written = LAYOUTS[layout]
    a, b = R.standard_normal(shape_a).astype(np.float32), R.standard_normal(shape_b).astype(np.float32)
    offs = None if layout == "3d-3d" else OFFS
    ours, theirs = (m.nn.functional.grouped_mm(m.tensor(a), m.tensor(b), offs=None if offs is None else m.tensor(offs))
                    for m in (ember, torch))
    assert ours.shape == theirs.shape
    np.testing.assert_allclose(ours.numpy()[written], theirs.numpy()[written], rtol=1e-5, atol=1e-5)
    unwritten = {"2d-3d": np.s_[8:], "3d-2d": np.s_[:, 8:]}.get(layout)
    if unwritten is not None:  # past the last group: torch leaves memory as it was, ember writes zeros
        assert not ours.numpy()[unwritten].any()


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_gradients_to_second_order(layout):
    shape_a, shape_b, _ = LAYOUTS[layout]
    shrink = {12: 5, 8: 3, 4: 2, 3: 2}
    shape_a, shape_b = tuple(shrink[n] for n in shape_a), tuple(shrink[n] for n in shape_b)
    offs = None if layout == "3d-3d" else ember.tensor([1, 3], dtype=ember.int32)
    a, b = (ember.tensor(R.standard_normal(s), requires_grad=True) for s in (shape_a, shape_b))
    if layout == "2d-2d":
        a, b = (ember.tensor(R.standard_normal(s), requires_grad=True) for s in ((2, 3), (3, 2)))
    assert ember.autograd.gradgradcheck(lambda a, b: F.grouped_mm(a, b, offs=offs), (a, b))


def test_errors_as_torch_words_them():
    a, b = ember.ones(12, 4), ember.ones(3, 4, 8)
    with pytest.raises(RuntimeError, match="offsets have to be a 1-D int32"):
        F.grouped_mm(a, b, offs=ember.tensor([2, 6, 8]))
    with pytest.raises(RuntimeError, match="offsets have to be a 1-D int32"):
        F.grouped_mm(a, b)
    with pytest.raises(RuntimeError, match="bias is not supported"):
        F.grouped_mm(a, b, offs=ember.tensor(OFFS), bias=ember.ones(8))
    with pytest.raises(RuntimeError, match="no offset if both matrices are 3d"):
        F.grouped_mm(ember.ones(3, 2, 4), b, offs=ember.tensor(OFFS))
    with pytest.raises(RuntimeError, match="contraction dims differ"):
        F.grouped_mm(ember.ones(12, 5), b, offs=ember.tensor(OFFS))


def test_helpers_behave_as_torchs():
    for arg in (3, (1, 2), [4, 5]):
        assert F.assert_int_or_pair(arg, "kernel_size", "{} must be int or pair") is None
    for module in (F, torch.nn.functional):
        with pytest.raises(AssertionError, match="kernel_size must be int or pair"):
            module.assert_int_or_pair((1, 2, 3), "kernel_size", "{} must be int or pair")

    def with_indices(x, return_indices=False):
        """Both values."""
        return x, "indices"

    def without(x, return_indices=False):
        return x

    for module in (F, torch.nn.functional):
        pick = module.boolean_dispatch("return_indices", 1, False, with_indices, without, "mine", "pool")
        assert (pick(1), pick(1, True), pick(1, return_indices=True)) == (1, (1, "indices"), (1, "indices"))
        assert pick.__name__ == "pool" and pick.__module__ == "mine" and pick.__doc__ == "Both values."
        without.__doc__ = "Also documented."
        with pytest.raises(RuntimeError, match="only one"):
            module.boolean_dispatch("return_indices", 1, False, with_indices, without, None, None)
        without.__doc__ = None
