"""Mismatches against torch found by a sweep of the optimizers: each test failed before its fix."""
from __future__ import annotations

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)
START = [RNG.standard_normal((3, 4)), RNG.standard_normal(4), RNG.standard_normal(())]


def _gradient(step: int, param: np.ndarray) -> np.ndarray:
    """A gradient that both libraries compute alike (in NumPy), changing with the step and the parameter."""
    return np.sin(3 * param + step) * (1 + step % 3) + 0.1 * param


def _trajectory(lib, name: str, steps: int = 20, dtype: str = "float64", **options) -> list:
    """The parameters after each step of optimizer ``name`` fed :func:`_gradient`."""
    params = [lib.nn.Parameter(lib.tensor(p, dtype=getattr(lib, dtype))) for p in START]
    optimizer = getattr(lib.optim, name)(params, **options)
    seen = []
    for step in range(steps):
        for i, p in enumerate(params):
            p.grad = lib.tensor(_gradient(7 * step + i, p.detach().double().numpy()), dtype=getattr(lib, dtype))
        optimizer.step()
        seen.append([p.detach().double().numpy().copy() for p in params])
    return seen


def _assert_same_trajectory(name: str, rtol: float = 1e-6, **options) -> None:
    ours, theirs = (_trajectory(lib, name, **options) for lib in (ember, torch))
    for step, (mine, reference) in enumerate(zip(ours, theirs)):
        for k, (a, b) in enumerate(zip(mine, reference)):
            np.testing.assert_allclose(a, b, rtol=rtol, atol=1e-9, err_msg=f"{name} step {step} parameter {k}")


# ---------------------------------------------------------------------------------------------- scalar parameters


@pytest.mark.parametrize("name, options", [
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.5, maximize=True)),
    ("Adam", dict(lr=0.01, amsgrad=True, weight_decay=0.1)),
    ("AdamW", dict(lr=0.01)),
    ("NAdam", dict(lr=0.01, decoupled_weight_decay=True, weight_decay=0.1)),
    ("RAdam", dict(lr=0.01, weight_decay=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, initial_accumulator_value=0.5)),
    ("RMSprop", dict(lr=0.01, centered=True, momentum=0.9)),
    ("Rprop", dict(lr=0.01)),
    ("ASGD", dict(lr=0.01, t0=5, lambd=1e-2)),
    ("Adamax", dict(lr=0.01)),
    ("Adadelta", dict(lr=1.0, rho=0.8)),
])
def test_a_0d_parameter_is_updated_as_torch(name, options):
    # a 0-d parameter's state was made 1-d (np.ascontiguousarray), and its arithmetic gave NumPy scalars that the
    # state wrapped, so updates failed ("non-broadcastable output operand") or the momentum never changed
    _assert_same_trajectory(name, **options)


@pytest.mark.parametrize("name", ["Adam", "AdamW", "NAdam"])
def test_betas_that_are_not_a_pair_are_refused_at_construction_as_torch(name):
    for lib in (ember, torch):
        with pytest.raises(IndexError):
            getattr(lib.optim, name)([lib.ones(1, requires_grad=True)], betas=(0.9,))
        getattr(lib.optim, name)([lib.ones(1, requires_grad=True)], betas=(0.9, 0.99, 0.5))  # the third is unread
