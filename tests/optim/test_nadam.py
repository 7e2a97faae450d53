"""optim.NAdam against torch: parameter trajectories over 50 steps and the state layout, for several settings."""
from optim.trajectory import half_precision_test, trajectory_tests

SETTINGS = [
    dict(),
    dict(lr=0.01, momentum_decay=0.01),
    dict(lr=0.01, weight_decay=0.1),
    dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True),
    dict(lr=0.005, betas=(0.8, 0.9), maximize=True),
]


test_trajectory_and_state_match_torch, test_float64_trajectory_is_exact, test_groups_with_their_own_settings = (
    trajectory_tests("NAdam", SETTINGS, ()))


test_half_precision_steps_round_as_torchs = half_precision_test(
    "NAdam", [dict(), dict(lr=0.01, momentum_decay=0.01, weight_decay=0.1, decoupled_weight_decay=True)])
