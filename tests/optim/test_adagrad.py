"""optim.Adagrad against torch: parameter trajectories over 50 steps and the state layout, for several settings."""
import numpy as np
import pytest

from optim.trajectory import half_precision_results, trajectory_tests

SETTINGS = [
    dict(),
    dict(lr=0.05, lr_decay=0.01),
    dict(lr=0.05, initial_accumulator_value=0.5),
    dict(lr=0.05, weight_decay=0.1, eps=1e-6),
    dict(lr=0.01, maximize=True),
]


test_trajectory_and_state_match_torch, test_float64_trajectory_is_exact, test_groups_with_their_own_settings = (
    trajectory_tests("Adagrad", SETTINGS, ()))


@pytest.mark.parametrize("hyper", [dict(), dict(lr=0.1, lr_decay=0.01, weight_decay=0.1,
                                                initial_accumulator_value=0.5)], ids=repr)
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_half_precision_steps_round_as_torchs(hyper, dtype):
    # each op on a half type computed in float32 and rounded once, as torch's
    results = half_precision_results("Adagrad", dtype, **hyper)
    np.testing.assert_array_equal(results[1], results[0])
