"""Every nn layer of the dtype sweep on an empty batch (its inputs' first dim 0), against torch: the same empty
outputs and gradients, or the same error type. It found batch norm refusing an empty batch in training (torch
returns an empty result and leaves the running statistics alone), instance norm failing with an IndexError from
inside, and the recurrent layers failing with a ValueError from NumPy on a sequence of length 0."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import ember
from tests.nn.test_modules_in_other_dtypes import CASES, _array, _run, _twins
from twins import assert_same_outcome

# torch's own failures on empty batches, where ember gives the empty (or mean-of-nothing) result
TORCH_FAILS = {
    "InstanceNorm1d": "torch's running statistics select sample 0 (IndexError)",
    "InstanceNorm3d": "torch's running statistics select sample 0 (IndexError)",
    "PixelShuffle": "torch's backward returns a gradient of the wrong shape",
    "PixelUnshuffle": "torch checks the channels of the wrong op",
    "MultiLabelMarginLoss": "torch's mean over no samples reads uninitialised memory; ember's is nan",
    "MultiMarginLoss": "torch's mean over no samples reads uninitialised memory; ember's is nan",
    "EmbeddingBag-sum-offsets": "the case's fixed offsets point past an empty input",
}


def _empty(arrays: list, specs: list) -> list:
    return [a if isinstance(s, tuple) and s and s[0] == "fixed" or a.ndim == 0 else a[:0]
            for a, s in zip(arrays, specs)]


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.skip(TORCH_FAILS[n]) if n in TORCH_FAILS else ())
                                  for n in CASES])
def test_module_on_an_empty_batch_matches_torch(name: str):
    theirs, mine = _twins(name)
    specs = CASES[name][1]
    arrays = _empty([_array(spec, seed) for seed, spec in enumerate(specs)], specs)
    actual, expected = _run(mine, ember, arrays, specs, "float32"), _run(theirs, torch, arrays, specs, "float32")
    if not assert_same_outcome(actual, expected, f"{name} on an empty batch"):
        return
    for part, mine_part, their_part in zip(("output", "input gradient", "parameter gradient", "buffer"), actual,
                                           expected):
        for i, (a, b) in enumerate(zip(mine_part, their_part, strict=True)):
            assert (a is None) == (b is None), f"{name}: {part} {i}: ember {a!r}, torch {b!r}"
            if b is not None:
                assert tuple(a.shape) == tuple(b.shape), f"{name}: {part} {i} shape {tuple(a.shape)} != {tuple(b.shape)}"
                np.testing.assert_allclose(a.detach().double().numpy() if a.is_floating_point() else a.numpy(),
                                           b.detach().double().numpy() if b.is_floating_point() else b.numpy(),
                                           rtol=1e-5, atol=1e-6, equal_nan=True, err_msg=f"{name}: {part} {i}")


def test_batch_norm_on_an_empty_batch_leaves_its_statistics():
    norm = ember.nn.BatchNorm1d(3)
    assert norm(ember.randn(0, 3)).shape == (0, 3)
    assert norm.running_mean.tolist() == [0.0] * 3 and norm.running_var.tolist() == [1.0] * 3
