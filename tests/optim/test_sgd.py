"""optim.Optimizer and optim.SGD against torch: trajectories, groups, state_dict, errors, repr."""
import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import ember

from optim.trajectory import half_precision_test

RNG = np.random.default_rng(0)
X = RNG.normal(size=(8, 3))
Y = RNG.normal(size=8)
W0 = RNG.normal(size=3)
B0 = RNG.normal(size=1)


def make_problem(lib, dtype):
    """Parameters and a loss closure for a small least-squares problem, the same in both libraries."""
    w = lib.nn.Parameter(lib.tensor(W0, dtype=dtype))
    b = lib.nn.Parameter(lib.tensor(B0, dtype=dtype))
    x, y = lib.tensor(X, dtype=dtype), lib.tensor(Y, dtype=dtype)

    def loss_fn():
        prediction = (x * w).sum(1) + b
        return ((prediction - y) ** 2).mean() + (w ** 4).sum() * 0.01  # the quartic makes momentum matter

    return [w, b], loss_fn


def train(lib, dtype, steps, groups=None, **hyper):
    params, loss_fn = make_problem(lib, dtype)
    spec = params if groups is None else [dict(g, params=[params[i] for i in g["params"]]) for g in groups]
    optimizer = lib.optim.SGD(spec, **hyper)
    for _ in range(steps):
        optimizer.zero_grad()
        loss_fn().backward()
        optimizer.step()
    return [p.detach().numpy().copy() for p in params], optimizer


def assert_same(ember_params, torch_params, atol):
    for e, t in zip(ember_params, torch_params):
        np.testing.assert_allclose(e, t, rtol=0, atol=atol)


HYPER = [
    dict(lr=0.1),
    dict(lr=0.05, momentum=0.9),
    dict(lr=0.05, momentum=0.9, nesterov=True),
    dict(lr=0.05, momentum=0.5, dampening=0.3),
    dict(lr=0.05, weight_decay=0.1),
    dict(lr=0.02, momentum=0.8, weight_decay=0.01, maximize=True),
    dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.05, foreach=False),
]


@pytest.mark.parametrize("hyper", HYPER, ids=lambda h: ",".join(f"{k}={v}" for k, v in h.items()))
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_trajectory_matches_torch(hyper, dtype):
    ember_params, _ = train(ember, getattr(ember, dtype), 25, **hyper)
    torch_params, _ = train(torch, getattr(torch, dtype), 25, **hyper)
    assert_same(ember_params, torch_params, atol=1e-12 if dtype == "float64" else 1e-6)


@settings(max_examples=15, deadline=None)
@given(lr=st.floats(0.0, 0.1), momentum=st.sampled_from([0.0, 0.3, 0.9]), dampening=st.floats(0, 0.9),
       weight_decay=st.floats(0, 0.2), maximize=st.booleans())
def test_trajectory_matches_torch_for_any_hyperparameters(lr, momentum, dampening, weight_decay, maximize):
    hyper = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay, maximize=maximize)
    ember_params, _ = train(ember, ember.float64, 10, **hyper)
    torch_params, _ = train(torch, torch.float64, 10, **hyper)
    assert_same(ember_params, torch_params, atol=1e-10)


def test_parameter_groups_use_their_own_hyperparameters():
    groups = [{"params": [0]}, {"params": [1], "lr": 0.3, "momentum": 0.5}]
    ember_params, opt = train(ember, ember.float64, 10, groups=groups, lr=0.05)
    torch_params, topt = train(torch, torch.float64, 10, groups=groups, lr=0.05)
    assert_same(ember_params, torch_params, atol=1e-12)
    assert repr(opt) == repr(topt)
    assert [sorted(g) for g in opt.param_groups] == [sorted(g) for g in topt.param_groups]


def test_state_matches_torch_and_only_exists_with_momentum():
    _, plain = train(ember, ember.float64, 2, lr=0.1)
    assert plain.state_dict()["state"] == {}
    _, opt = train(ember, ember.float64, 3, lr=0.1, momentum=0.9)
    _, topt = train(torch, torch.float64, 3, lr=0.1, momentum=0.9)
    state, tstate = opt.state_dict(), topt.state_dict()
    assert sorted(state["state"]) == sorted(tstate["state"]) == [0, 1]
    for index, entry in tstate["state"].items():
        np.testing.assert_allclose(state["state"][index]["momentum_buffer"].numpy(), entry["momentum_buffer"].numpy())
    assert state["param_groups"] == tstate["param_groups"]


def test_resuming_from_state_dict_continues_the_same_trajectory():
    straight, _ = train(ember, ember.float64, 10, lr=0.05, momentum=0.9, nesterov=True)
    params, loss_fn = make_problem(ember, ember.float64)
    first = ember.optim.SGD(params, lr=0.05, momentum=0.9, nesterov=True)
    for step in range(10):
        if step == 4:  # swap in a fresh optimizer, restored from the first one's state
            saved = first.state_dict()
            first = ember.optim.SGD(params, lr=1.0)
            first.load_state_dict(saved)
            assert first.param_groups[0]["lr"] == 0.05 and first.param_groups[0]["params"][0] is params[0]
        first.zero_grad()
        loss_fn().backward()
        first.step()
    assert_same([p.detach().numpy() for p in params], straight, atol=1e-14)


def test_load_state_dict_casts_state_to_the_parameter_dtype():
    p32 = ember.nn.Parameter(ember.ones(2))
    p32.grad = ember.ones(2)
    source = ember.optim.SGD([ember.nn.Parameter(ember.ones(2, dtype=ember.float64))], lr=0.1, momentum=0.9)
    source.param_groups[0]["params"][0].grad = ember.ones(2, dtype=ember.float64)
    source.step()
    target = ember.optim.SGD([p32], lr=0.1, momentum=0.9)
    target.load_state_dict(source.state_dict())
    assert target.state[p32]["momentum_buffer"].dtype == ember.float32


@pytest.mark.parametrize("make", [
    lambda lib, p: lib.optim.SGD([], lr=0.1),
    lambda lib, p: lib.optim.SGD(p, lr=0.1),
    lambda lib, p: lib.optim.SGD([p], lr=-1),
    lambda lib, p: lib.optim.SGD([p], lr=0.1, momentum=-0.5),
    lambda lib, p: lib.optim.SGD([p], lr=0.1, weight_decay=-1),
    lambda lib, p: lib.optim.SGD([p], lr=0.1, nesterov=True),
    lambda lib, p: lib.optim.SGD([p], lr=0.1, momentum=0.9, dampening=0.1, nesterov=True),
    lambda lib, p: lib.optim.SGD([p * 2], lr=0.1),
    lambda lib, p: lib.optim.SGD([1.0], lr=0.1),
    lambda lib, p: lib.optim.SGD([{"params": {p}}], lr=0.1),
    lambda lib, p: lib.optim.SGD([p], lr=0.1).add_param_group({"params": [p]}),
    lambda lib, p: lib.optim.SGD([p], lr=0.1).add_param_group([p]),
    lambda lib, p: lib.optim.SGD([p], lr=0.1).load_state_dict({"state": {}, "param_groups": []}),
    lambda lib, p: lib.optim.SGD([p], lr=0.1).load_state_dict({"state": {}, "param_groups": [{"params": [0, 1]}]}),
])
def test_errors_match_torch(make):
    def message(lib):
        p = lib.nn.Parameter(lib.ones(2))
        with pytest.raises((TypeError, ValueError)) as info:
            make(lib, p)
        return type(info.value), str(info.value)

    (ember_type, ember_message), (torch_type, torch_message) = message(ember), message(torch)
    assert ember_type is torch_type
    if "should be an iterable" in torch_message or "can only optimize Tensors" in torch_message:
        # torch names the type as "torch.FloatTensor" or "float"; compare the sentence up to the type.
        assert ember_message.startswith(torch_message.split(", but got")[0].split(" is ")[0])
    else:
        assert ember_message == torch_message


def test_duplicate_parameters_warn_like_torch():
    for lib in (ember, torch):
        p = lib.nn.Parameter(lib.ones(1))
        with pytest.warns(UserWarning, match="duplicate parameters"):
            lib.optim.SGD([p, p], lr=0.1)


def test_repr_and_defaults_match_torch():
    e = ember.optim.SGD([ember.nn.Parameter(ember.ones(1))], lr=0.1, momentum=0.9)
    t = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=0.1, momentum=0.9)
    assert repr(e) == repr(t)
    assert e.defaults == t.defaults
    assert ember.optim.SGD([ember.nn.Parameter(ember.ones(1))]).defaults["lr"] == 1e-3


@pytest.mark.parametrize("set_to_none", [True, False])
def test_zero_grad_and_parameters_without_gradients(set_to_none):
    a, b = ember.nn.Parameter(ember.ones(2)), ember.nn.Parameter(ember.ones(2))
    opt = ember.optim.SGD([a, b], lr=0.5, momentum=0.9)
    (a * 3).sum().backward()
    opt.step()  # b has no gradient: untouched, and no state for it
    assert b.tolist() == [1.0, 1.0] and b not in opt.state
    assert a.tolist() == [-0.5, -0.5]
    opt.zero_grad(set_to_none=set_to_none)
    assert (a.grad is None) if set_to_none else a.grad.tolist() == [0.0, 0.0]


def test_step_with_closure_returns_the_loss():
    params, loss_fn = make_problem(ember, ember.float64)
    opt = ember.optim.SGD(params, lr=0.1)

    def closure():
        opt.zero_grad()
        loss = loss_fn()
        loss.backward()
        return loss

    with ember.no_grad():  # the closure still records: step enables grad for it
        first = opt.step(closure)
    assert first.item() > closure().item()


def test_step_does_not_record_and_keeps_parameters_leaves():
    params, loss_fn = make_problem(ember, ember.float64)
    opt = ember.optim.SGD(params, lr=0.1, momentum=0.9, weight_decay=0.1)
    loss_fn().backward()
    opt.step()
    assert all(p.is_leaf and p.grad_fn is None and isinstance(p, ember.nn.Parameter) for p in params)
    assert opt.state[params[0]]["momentum_buffer"].grad_fn is None


def test_base_optimizer_requires_step_and_required_hyperparameters():
    from ember.optim.optimizer import required

    p = ember.nn.Parameter(ember.ones(1))
    with pytest.raises(NotImplementedError, match="must implement step"):
        ember.optim.Optimizer([p], {}).step()
    with pytest.raises(ValueError, match="didn't specify a value of required optimization parameter lr"):
        ember.optim.Optimizer([p], {"lr": required})


def test_optimizer_follows_a_module_converted_to_double():
    model = ember.nn.Linear(2, 1)
    opt = ember.optim.SGD(model.parameters(), lr=0.1)
    model.double()  # parameters keep their identity, so the optimizer still holds them
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (model.weight ** 2).sum().backward()
    before = model.weight.detach().clone()
    opt.step()
    np.testing.assert_allclose(model.weight.detach().numpy(), 0.8 * before.numpy())


def test_named_parameters_are_accepted_like_torch():
    def build(lib):
        model = lib.nn.Linear(2, 1)
        opt = lib.optim.SGD(model.named_parameters(), lr=0.1)
        with pytest.raises(ValueError) as info:
            opt.add_param_group({"params": [lib.nn.Parameter(lib.ones(1))]})
        return repr(opt), opt.state_dict()["param_groups"], str(info.value)

    assert build(ember) == build(torch)


test_half_precision_steps_round_as_torchs = half_precision_test(
    "SGD", [dict(lr=0.01), dict(lr=0.01, momentum=0.9, weight_decay=0.01),
            dict(lr=0.01, momentum=0.9, nesterov=True, weight_decay=0.1)], mismatches=5)


def _mixed_parameters(lib):
    """One group of float32, float64, float16 and complex parameters, with fixed gradients for three steps."""
    rng = np.random.default_rng(3)
    arrays = [rng.normal(size=(4, 3)).astype(np.float32), rng.normal(size=5), rng.normal(size=3).astype(np.float16),
              (rng.normal(size=2) + 1j * rng.normal(size=2)).astype(np.complex64)]
    grads = [[rng.normal(size=a.shape).astype(a.dtype) for a in arrays] for _ in range(3)]
    return [lib.nn.Parameter(lib.tensor(a)) for a in arrays], grads


@pytest.mark.parametrize("hyper", [dict(lr=0.1, momentum=0.9), dict(lr=0.1), dict(lr=0.05, momentum=0.5)],
                         ids=repr)
def test_plain_momentum_group_of_mixed_dtypes_matches_torch(hyper):
    """The usual group (no weight decay, dampening, Nesterov or maximisation) steps float32 and float64 parameters
    in one loop; the others in the same group take the general way, and all end as torch's."""
    def run(lib):
        params, grads = _mixed_parameters(lib)
        opt = lib.optim.SGD(params, **hyper)
        versions = []
        for step_grads in grads:
            for p, g in zip(params, step_grads):
                p.grad = lib.tensor(g)
            opt.step()
            versions.append([p._version for p in params])
        buffers = [opt.state[p]["momentum_buffer"].detach().numpy().copy() if p in opt.state else None
                   for p in params]
        return [p.detach().numpy().copy() for p in params], buffers, versions, len(opt.state)

    (params, buffers, versions, n_states), expected = run(ember), run(torch)
    for ours, theirs in zip(params + buffers, expected[0] + expected[1]):
        assert (ours is None) == (theirs is None)
        if ours is not None:
            assert ours.dtype == theirs.dtype
            tolerance = 2e-3 if ours.dtype == np.float16 else 1e-6  # (torch's p.add_(buf, alpha=-lr) rounds once)
            np.testing.assert_allclose(ours, theirs, rtol=tolerance, atol=tolerance)
    assert versions == expected[2] and n_states == expected[3]


def test_plain_momentum_step_takes_a_tensor_lr_and_a_sparse_gradient_as_torch():
    def run(lib):
        embedding = lib.nn.Embedding(5, 3, sparse=True)
        with lib.no_grad():
            embedding.weight.copy_(lib.tensor(np.arange(15.0).reshape(5, 3), dtype=lib.float32))
        opt = lib.optim.SGD(embedding.parameters(), lr=lib.tensor(0.1), momentum=0.9)
        for _ in range(3):
            opt.zero_grad()
            (embedding(lib.tensor([0, 2, 2])) ** 2).sum().backward()
            opt.step()
        return embedding.weight.detach().numpy().copy()

    np.testing.assert_allclose(run(ember), run(torch), rtol=1e-6)


def test_plain_momentum_step_updates_float_parameters_without_the_per_parameter_update(monkeypatch):
    """The usual step of float32 parameters is one loop over them: the per-parameter update is not called."""
    model = ember.nn.Linear(3, 2)
    opt = ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

    def refuse(*args):
        raise AssertionError("the general per-parameter update ran")

    monkeypatch.setattr(ember.optim.SGD, "_update", refuse)
    for _ in range(2):
        opt.zero_grad()
        model(ember.ones(4, 3)).sum().backward()
        opt.step()
    assert set(opt.state) == set(model.parameters())


def test_step_hooks_run_once_around_the_sgd_step():
    p = ember.nn.Parameter(ember.ones(2))
    opt = ember.optim.SGD([p], lr=0.1, momentum=0.9)
    seen = []
    opt.register_step_pre_hook(lambda o, args, kwargs: seen.append(("pre", p.tolist())))
    opt.register_step_post_hook(lambda o, args, kwargs: seen.append(("post", p.tolist())))
    p.grad = ember.ones(2)
    opt.step()
    assert seen == [("pre", [1.0, 1.0]), ("post", [0.8999999761581421, 0.8999999761581421])]
