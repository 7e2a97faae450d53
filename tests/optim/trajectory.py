"""Train the same small network with an ember optimizer and with torch's, and compare the parameters at every step.

The network (3 -> 5 -> 1, tanh) and its data come from fixed NumPy arrays, so
both libraries start from the same float32 weights and see the same batches.
"""
import numpy as np
import pytest
import torch

import ember

RNG = np.random.default_rng(1)
WEIGHTS = [RNG.normal(size=(5, 3)), RNG.normal(size=5), RNG.normal(size=(1, 5)), RNG.normal(size=1)]
BATCHES = [(RNG.normal(size=(8, 3)), RNG.normal(size=(8, 1))) for _ in range(5)]


def network(lib, dtype):
    """The parameters, and a function giving the loss on batch ``i``."""
    params = [lib.nn.Parameter(lib.tensor(w, dtype=dtype)) for w in WEIGHTS]
    data = [(lib.tensor(x, dtype=dtype), lib.tensor(y, dtype=dtype)) for x, y in BATCHES]

    def loss_fn(i):
        w1, b1, w2, b2 = params
        x, y = data[i % len(data)]
        hidden = lib.tanh(x @ w1.T + b1)
        return ((hidden @ w2.T + b2 - y) ** 2).mean()

    return params, loss_fn


def trajectory(lib, name, steps, dtype="float32", groups=None, closure=False, full_batch=False, **hyper):
    """The parameters (NumPy copies) after each of ``steps`` steps of optimizer ``name``, and the optimizer."""
    params, loss_fn = network(lib, getattr(lib, dtype))
    spec = params if groups is None else [dict(g, params=[params[i] for i in g["params"]]) for g in groups]
    optimizer = getattr(lib.optim, name)(spec, **hyper)
    seen = []
    for i in range(steps):
        def step_closure(i=i):
            optimizer.zero_grad()
            loss = loss_fn(0 if full_batch else i)
            loss.backward()
            return loss

        if closure:
            optimizer.step(step_closure)
        else:
            step_closure()
            optimizer.step()
        seen.append([p.detach().numpy().copy() for p in params])
    return seen, optimizer


def assert_same_trajectory(name, steps=50, dtype="float32", rtol=1e-5, atol=1e-6, **options):
    """ember's trajectory equals torch's at every step (``rtol`` relative; ``atol`` for values near zero)."""
    ours, optimizer = trajectory(ember, name, steps, dtype, **options)
    theirs, reference = trajectory(torch, name, steps, dtype, **options)
    for step, (a, b) in enumerate(zip(ours, theirs)):
        for k, (x, y) in enumerate(zip(a, b)):
            np.testing.assert_allclose(x, y, rtol=rtol, atol=atol, err_msg=f"{name} step {step} parameter {k}")
    return optimizer, reference


def assert_same_state(optimizer, reference):
    """Same state_dict layout: state keys per parameter index, tensor values, and param_groups."""
    ours, theirs = optimizer.state_dict(), reference.state_dict()
    assert ours["param_groups"] == theirs["param_groups"]
    assert sorted(ours["state"]) == sorted(theirs["state"])
    for index, entry in theirs["state"].items():
        assert list(ours["state"][index]) == list(entry), f"state keys of parameter {index}"
        for key, value in entry.items():
            if isinstance(value, torch.Tensor):
                mine = ours["state"][index][key]
                assert isinstance(mine, ember.Tensor), key
                assert str(mine.dtype).replace("ember", "torch") == str(value.dtype), key
                np.testing.assert_allclose(mine.numpy(), value.numpy(), rtol=1e-5, atol=1e-6, err_msg=key)


def trajectory_tests(name, settings, ascent=()):
    """The three twin tests every element-wise optimizer gets, for a test module to bind to ``test_*`` names:
    float32 trajectories and state for ``settings``; float64 trajectories, exact to 1e-10, for ``settings`` and
    ``ascent`` (settings whose float32 runs part, see the module); parameter groups with their own options."""

    @pytest.mark.parametrize("hyper", settings, ids=repr)
    def test_trajectory_and_state_match_torch(hyper):
        assert_same_state(*assert_same_trajectory(name, **hyper))

    @pytest.mark.parametrize("hyper", list(settings) + list(ascent), ids=repr)
    def test_float64_trajectory_is_exact(hyper):
        assert_same_trajectory(name, dtype="float64", rtol=1e-10, atol=1e-12, **hyper)

    def test_groups_with_their_own_settings():
        groups = [{"params": [0, 1]}, {"params": [2, 3], "lr": 0.003, "maximize": True}]
        assert_same_state(*assert_same_trajectory(name, groups=groups))

    return test_trajectory_and_state_match_torch, test_float64_trajectory_is_exact, test_groups_with_their_own_settings


def half_precision_results(name: str, dtype: str, steps: int = 5, **hyper) -> list:
    """The parameter (as float32 NumPy) after ``steps`` steps of optimizer ``name`` over 1000 half-type values,
    torch's then ember's: gradients grow with the step, so every update moves many elements."""
    rng = np.random.default_rng(0)
    weights, grads = rng.normal(size=1000), rng.normal(size=1000)
    results = []
    for lib in (torch, ember):
        p = lib.nn.Parameter(lib.tensor(weights, dtype=getattr(lib, dtype)))
        optimizer = getattr(lib.optim, name)([p], **hyper)
        for step in range(steps):
            p.grad = lib.tensor(grads * (step + 1), dtype=getattr(lib, dtype))
            optimizer.step()
        results.append(p.detach().float().numpy())
    return results


def half_precision_test(name: str, settings: list, mismatches: int = 0):
    """A test, for a module to bind to a ``test_*`` name: float16 and bfloat16 trajectories equal torch's bit for
    bit (torch computes each op on a half type in float32 and rounds its result once), but for at most
    ``mismatches`` elements, each within two ulps (of the largest value, for an element that cancelled)."""

    @pytest.mark.parametrize("hyper", settings, ids=repr)
    @pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
    def test_half_precision_steps_round_as_torchs(hyper, dtype):
        results = half_precision_results(name, dtype, **hyper)
        assert (results[0] != results[1]).sum() <= mismatches
        finite = np.abs(results[0][np.isfinite(results[0])])  # (an eps below float16's range makes some inf)
        np.testing.assert_allclose(results[1], results[0], rtol=2 ** -6, atol=2 ** -6 * finite.max())

    return test_half_precision_steps_round_as_torchs
