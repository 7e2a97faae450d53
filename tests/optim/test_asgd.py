"""optim.ASGD against torch: parameter trajectories over 50 steps and the state layout, for several settings."""
from optim.trajectory import half_precision_test, trajectory_tests

SETTINGS = [
    dict(),
    dict(lr=0.05, lambd=0.01, alpha=0.5),
    dict(lr=0.05, t0=10),
    dict(lr=0.05, t0=5, weight_decay=0.1),
]
# Gradient ascent on this network grows its weights and amplifies the float32 rounding of the gradients (which
# ember and torch round differently) until trajectories part; in float64 the update is the same to 1e-10.
ASCENT = [dict(lr=0.01, maximize=True)]


test_trajectory_and_state_match_torch, test_float64_trajectory_is_exact, test_groups_with_their_own_settings = (
    trajectory_tests("ASGD", SETTINGS, ASCENT))


test_half_precision_steps_round_as_torchs = half_precision_test(
    "ASGD", [dict(), dict(lr=0.05, t0=2, weight_decay=0.1)], mismatches=2)
