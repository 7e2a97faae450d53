"""optim.LBFGS against torch: trajectories with and without the strong-Wolfe line search, state, errors."""
import numpy as np
import pytest
import torch

import ember
from optim.trajectory import assert_same_trajectory, trajectory

# L-BFGS minimises one loss (the same batch every step); its curvature pairs and line-search decisions amplify
# rounding near the minimum, so float32 runs agree to 1e-4 on the first step (20 inner iterations), and float64
# runs (the same arithmetic) to 1e-5 over 12 steps (240 inner iterations).
SETTINGS = [
    dict(lr=0.1, max_iter=5),
    dict(lr=0.2, max_iter=4, history_size=3),
    dict(max_iter=5, line_search_fn="strong_wolfe"),
    dict(lr=0.5, max_iter=10, history_size=2, line_search_fn="strong_wolfe"),
]


@pytest.mark.parametrize("hyper", SETTINGS, ids=repr)
def test_trajectory_matches_torch(hyper):
    assert_same_trajectory("LBFGS", steps=1, closure=True, full_batch=True, rtol=1e-4, atol=1e-5, **hyper)


@pytest.mark.parametrize("hyper", SETTINGS, ids=repr)
def test_float64_trajectory_is_exact(hyper):
    assert_same_trajectory("LBFGS", steps=12, dtype="float64", closure=True, full_batch=True, rtol=1e-5,
                           atol=1e-9, **hyper)


def test_state_has_torchs_entries_and_counts():
    _, ours = trajectory(ember, "LBFGS", 3, "float64", closure=True, max_iter=4, line_search_fn="strong_wolfe")
    _, theirs = trajectory(torch, "LBFGS", 3, "float64", closure=True, max_iter=4, line_search_fn="strong_wolfe")
    mine, reference = ours.state_dict(), theirs.state_dict()
    assert mine["param_groups"] == reference["param_groups"]
    assert list(mine["state"]) == list(reference["state"]) == [0]
    assert sorted(mine["state"][0]) == sorted(reference["state"][0])
    for key in ("func_evals", "n_iter"):
        assert mine["state"][0][key] == reference["state"][0][key]
    for key in ("d", "prev_flat_grad", "H_diag"):
        np.testing.assert_allclose(mine["state"][0][key].numpy(), reference["state"][0][key].numpy(), rtol=1e-9)
    assert len(mine["state"][0]["old_dirs"]) == len(reference["state"][0]["old_dirs"])


@pytest.mark.parametrize("max_iter", [1, 4])
def test_state_entries_come_in_torchs_order(max_iter):
    # with one iteration a step, "al" appears only on the second step, after the entries the first one kept
    orders = [list(trajectory(lib, "LBFGS", 3, "float64", closure=True, max_iter=max_iter)[1].state_dict()
                   ["state"][0]) for lib in (ember, torch)]
    assert orders[0] == orders[1]


def test_a_quadratic_is_solved_in_one_step_with_the_line_search():
    w = ember.nn.Parameter(ember.tensor([1.0, -2.0, 5.0], dtype=ember.float64))
    opt = ember.optim.LBFGS([w], line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        loss = ((w - 3) ** 2 * ember.tensor([1.0, 10.0, 100.0], dtype=ember.float64)).sum()
        loss.backward()
        return loss

    first = opt.step(closure)
    assert first.item() == 654.0
    np.testing.assert_allclose(w.detach().numpy(), [3, 3, 3], atol=1e-6)


@pytest.mark.parametrize("lib", [ember, torch], ids=["ember", "torch"])
def test_errors(lib):
    a, b = lib.nn.Parameter(lib.ones(2)), lib.nn.Parameter(lib.ones(2))
    with pytest.raises(ValueError, match="doesn't support per-parameter options"):
        lib.optim.LBFGS([{"params": [a]}, {"params": [b]}])
    with pytest.raises(ValueError, match="Invalid learning rate"):
        lib.optim.LBFGS([a], lr=-1)
    opt = lib.optim.LBFGS([a], line_search_fn="armijo")
    with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
        opt.step(lambda: (a.grad.zero_() if a.grad is not None else None, (a ** 2).sum().backward(),
                          (a ** 2).sum())[2])


def _separable_run(lib, scale: np.ndarray, centre: np.ndarray, line_search_fn):
    w = lib.zeros(len(scale), requires_grad=True)
    c, m = lib.tensor(scale), lib.tensor(centre)
    optimizer = lib.optim.LBFGS([w], lr=1, max_iter=8, history_size=3, line_search_fn=line_search_fn,
                                tolerance_change=0, tolerance_grad=0)

    def closure():
        optimizer.zero_grad()
        loss = (c * (w - m) ** 4 + c * (w - m) ** 2).sum()
        loss.backward()
        return loss

    optimizer.step(closure)
    return w.detach().numpy()


@pytest.mark.parametrize("line_search_fn", (None, "strong_wolfe"))
def test_float32_iterates_are_torchs_to_the_bit_where_the_gradients_are(line_search_fn):
    # torch moves the parameters and the two-loop recursion's vectors with add(alpha=), one rounding each
    # (a fused multiply-add); rounding the product and the sum apart drifted from torch's iterates by an
    # ulp within a few iterations. Two elementwise parameters keep every other operation exact in both.
    for seed in range(10):
        rng = np.random.default_rng(seed)
        scale = rng.uniform(0.1, 5, 2).astype(np.float32)
        centre = rng.standard_normal(2).astype(np.float32)
        np.testing.assert_array_equal(_separable_run(ember, scale, centre, line_search_fn),
                                      _separable_run(torch, scale, centre, line_search_fn))
