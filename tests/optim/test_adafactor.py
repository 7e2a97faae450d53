"""optim.Adafactor against torch: parameter trajectories over 50 steps and the state layout, for several settings."""
import pytest

import ember
from optim.trajectory import trajectory_tests

SETTINGS = [
    dict(),
    dict(lr=0.05, beta2_decay=-0.5),
    dict(lr=0.01, weight_decay=0.1, eps=(1e-6, 1e-2)),
    dict(lr=0.02, d=2.0, maximize=True),
]


test_trajectory_and_state_match_torch, test_float64_trajectory_is_exact, test_groups_with_their_own_settings = (
    trajectory_tests("Adafactor", SETTINGS, ()))


@pytest.mark.parametrize("kwargs, message", [
    ({"beta2_decay": 0.5}, "beta2_decay should be <= 0 but is: 0.5"),
    ({"eps": (-1.0, 1e-3)}, "epsilon1 should be >= 0 but is: -1.0"),
    ({"eps": (None, -1.0)}, "epsilon2 should be >= 0 but is: -1.0"),
    ({"d": 0.5}, "Clipping threshold d should be >= 1 but is: 0.5"),
    ({"weight_decay": -0.1}, "weight_decay should be >= 0 but is: -0.1"),
])
def test_bad_settings_as_torch(kwargs, message):
    import torch

    with pytest.raises(ValueError, match=message):
        torch.optim.Adafactor([torch.nn.Parameter(torch.ones(2))], **kwargs)
    with pytest.raises(ValueError, match=message):
        ember.optim.Adafactor([ember.nn.Parameter(ember.ones(2))], **kwargs)


def test_a_number_for_eps_is_refused_with_the_pair_it_needs():
    with pytest.raises(TypeError, match=r"eps must be a pair \(epsilon1 or None, epsilon2\), but got -1.0"):
        ember.optim.Adafactor([ember.nn.Parameter(ember.ones(2))], eps=-1.0)
