"""optim.Adam and optim.AdamW against torch: trajectories over 50 steps, state layout, options, errors."""
import numpy as np
import pytest
import torch

import ember

from optim.trajectory import assert_same_state, assert_same_trajectory, half_precision_test

SETTINGS = [
    dict(),
    dict(lr=0.01),
    dict(lr=0.01, betas=(0.8, 0.99), eps=1e-6),
    dict(lr=0.01, amsgrad=True),
    dict(lr=0.01, weight_decay=0.1),
    dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True),
    dict(lr=0.005, maximize=True, amsgrad=True, foreach=False),
]


@pytest.mark.parametrize("hyper", SETTINGS, ids=repr)
def test_adam_trajectory_matches_torch(hyper):
    assert_same_state(*assert_same_trajectory("Adam", **hyper))


@pytest.mark.parametrize("hyper", [dict(), dict(lr=0.01), dict(lr=0.01, weight_decay=0.5, amsgrad=True),
                                   dict(lr=0.01, maximize=True, betas=(0.5, 0.9))], ids=repr)
def test_adamw_trajectory_matches_torch(hyper):
    assert_same_state(*assert_same_trajectory("AdamW", **hyper))


def test_groups_with_their_own_settings():
    groups = [{"params": [0, 1], "lr": 0.02}, {"params": [2, 3], "betas": (0.5, 0.6), "amsgrad": True}]
    assert_same_state(*assert_same_trajectory("Adam", groups=groups, lr=0.01))


def test_float64_is_exact():
    assert_same_trajectory("AdamW", dtype="float64", rtol=1e-12, atol=1e-14, lr=0.01)


@pytest.mark.parametrize("name", ["Adam", "AdamW"])
@pytest.mark.parametrize("betas", [[0.9, 0.99], np.array([0.9, 0.99])], ids=["list", "array"])
def test_betas_become_a_tuple_as_torchs(name, betas):
    kinds = []
    for lib in (torch, ember):
        group = getattr(lib.optim, name)([lib.nn.Parameter(lib.zeros(2))], betas=betas).param_groups[0]
        kinds.append((type(group["betas"]), [type(b) for b in group["betas"]]))
    assert kinds[1] == kinds[0] and kinds[0][0] is tuple


test_half_precision_steps_round_as_torchs = half_precision_test(
    "Adam", [dict(lr=0.01), dict(lr=0.01, amsgrad=True, weight_decay=0.1), dict(lr=0.01, betas=(0.5, 0.9)),
             dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)], mismatches=2)
