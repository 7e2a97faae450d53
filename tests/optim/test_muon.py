"""optim.Muon against torch's: the same 20-step trajectories when torch's orthogonalization runs in the parameters'
own precision (ember has no bfloat16), and within bfloat16's rounding of torch's as it ships."""
import numpy as np
import pytest
import torch

import ember

RNG = np.random.default_rng(0)
WEIGHTS = [RNG.standard_normal((5, 3)), RNG.standard_normal((4, 5)), RNG.standard_normal((5, 5))]
X = RNG.standard_normal((8, 3))


def _trajectory(lib, dtype: str, steps: int = 20, **settings):
    params = [lib.nn.Parameter(lib.tensor(w, dtype=getattr(lib, dtype))) for w in WEIGHTS]
    optimizer = lib.optim.Muon(params, **settings)
    x = lib.tensor(X, dtype=getattr(lib, dtype))
    seen = []
    for _ in range(steps):
        optimizer.zero_grad()
        hidden = lib.tanh(lib.tanh(x @ params[0].T) @ params[1].T) @ params[1]
        ((hidden @ params[2]) ** 2).mean().backward()
        optimizer.step()
        seen.append([p.detach().numpy().copy() for p in params])
    return seen, optimizer


SETTINGS = [dict(), dict(lr=0.02, nesterov=False, weight_decay=0.0),
            dict(lr=0.01, adjust_lr_fn="match_rms_adamw", momentum=0.9, ns_steps=3)]


@pytest.mark.parametrize("settings", SETTINGS)
@pytest.mark.parametrize("dtype, tolerance", [("float32", 1e-5), ("float64", 1e-12)])
def test_trajectory_matches_torch_in_the_same_precision(monkeypatch, settings, dtype, tolerance):
    monkeypatch.setattr(torch.Tensor, "bfloat16", lambda self: self.clone())  # torch's iteration in full precision
    ours, optimizer = _trajectory(ember, dtype, **settings)
    theirs, reference = _trajectory(torch, dtype, **settings)
    for a, b in zip(ours, theirs):
        for x, y in zip(a, b):
            np.testing.assert_allclose(x, y, rtol=tolerance, atol=tolerance)
    assert optimizer.state_dict()["param_groups"] == reference.state_dict()["param_groups"]
    assert list(optimizer.state_dict()["state"][0]) == list(reference.state_dict()["state"][0])


def test_close_to_torch_in_bfloat16():
    ours, _ = _trajectory(ember, "float32", lr=0.02)
    theirs, _ = _trajectory(torch, "float32", lr=0.02)
    assert max(np.abs(x - y).max() for a, b in zip(ours, theirs) for x, y in zip(a, b)) < 0.05


@pytest.mark.parametrize("call, message", [
    (lambda lib: lib.optim.Muon([lib.nn.Parameter(lib.ones(3))]), "Muon only supports 2D parameters"),
    (lambda lib: lib.optim.Muon([lib.nn.Parameter(lib.ones(2, 2))], lr=-1.0), "Learning rate should be >= 0"),
    (lambda lib: lib.optim.Muon([lib.nn.Parameter(lib.ones(2, 2))], momentum=-1.0), "momentum should be >= 0"),
    (lambda lib: lib.optim.Muon([lib.nn.Parameter(lib.ones(2, 2))], adjust_lr_fn="x"),
     "Adjust learning rate function x is not supported"),
])
def test_bad_settings_as_torch(call, message):
    with pytest.raises(ValueError, match=message):
        call(torch)
    with pytest.raises(ValueError, match=message):
        call(ember)
