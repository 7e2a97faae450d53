"""optim.RMSprop against torch: parameter trajectories over 50 steps and the state layout, for several settings."""
import numpy as np
import pytest

from optim.trajectory import half_precision_results, trajectory_tests

SETTINGS = [
    dict(),
    dict(lr=0.001, alpha=0.9),
    dict(lr=0.001, centered=True),
    dict(lr=0.001, momentum=0.9),
    dict(lr=0.001, momentum=0.5, centered=True, weight_decay=0.1),
    dict(lr=0.001, maximize=True, eps=1e-4),
]


test_trajectory_and_state_match_torch, test_float64_trajectory_is_exact, test_groups_with_their_own_settings = (
    trajectory_tests("RMSprop", SETTINGS, ()))


@pytest.mark.parametrize("hyper", [dict(lr=0.01), dict(lr=0.01, centered=True, weight_decay=0.1),
                                   dict(lr=0.01, momentum=0.9)], ids=repr)
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_half_precision_steps_round_as_torchs(hyper, dtype):
    # each op on a half type computed in float32 and rounded once, as torch's (they parted in up to 30% of elements)
    results = half_precision_results("RMSprop", dtype, **hyper)
    assert (results[0] != results[1]).sum() <= 5
    np.testing.assert_allclose(results[1], results[0], rtol=2 ** -6)  # (within two bfloat16 ulps)
