"""optim.Adadelta against torch: parameter trajectories over 50 steps and the state layout, for several settings."""
from optim.trajectory import half_precision_test, trajectory_tests

SETTINGS = [
    dict(),
    dict(lr=0.5, rho=0.5),
    dict(lr=1.0, eps=1e-3, weight_decay=0.1),
    dict(lr=1.0, maximize=True),
]


test_trajectory_and_state_match_torch, test_float64_trajectory_is_exact, test_groups_with_their_own_settings = (
    trajectory_tests("Adadelta", SETTINGS, ()))


test_half_precision_steps_round_as_torchs = half_precision_test(
    "Adadelta", [dict(), dict(lr=0.5, rho=0.8, weight_decay=0.1)])
