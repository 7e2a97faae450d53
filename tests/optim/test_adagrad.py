"""optim.Adagrad against torch: parameter trajectories over 50 steps and the state layout, for several settings."""
from optim.trajectory import half_precision_test, trajectory_tests

SETTINGS = [
    dict(),
    dict(lr=0.05, lr_decay=0.01),
    dict(lr=0.05, initial_accumulator_value=0.5),
    dict(lr=0.05, weight_decay=0.1, eps=1e-6),
    dict(lr=0.01, maximize=True),
]


test_trajectory_and_state_match_torch, test_float64_trajectory_is_exact, test_groups_with_their_own_settings = (
    trajectory_tests("Adagrad", SETTINGS, ()))


test_half_precision_steps_round_as_torchs = half_precision_test(
    "Adagrad", [dict(), dict(lr=0.1, lr_decay=0.01, weight_decay=0.1, initial_accumulator_value=0.5)])
