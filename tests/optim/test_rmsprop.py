"""optim.RMSprop against torch: parameter trajectories over 50 steps and the state layout, for several settings."""
from optim.trajectory import half_precision_test, trajectory_tests

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


test_half_precision_steps_round_as_torchs = half_precision_test(
    "RMSprop", [dict(lr=0.01), dict(lr=0.01, centered=True, weight_decay=0.1), dict(lr=0.01, momentum=0.9)],
    mismatches=5)
