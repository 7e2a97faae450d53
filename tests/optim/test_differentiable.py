"""``differentiable=True``: one recorded step differentiated with respect to the parameter before it, its
gradient and its state, as torch's own tests do (they gradcheck a function that clones the parameter, sets its
gradient and state, steps and returns the parameter and the state); compared with torch's gradients in float64.
And torch's refusals: a batched (foreach) update, a step counter that requires grad, non-leaf parameters
without ``differentiable``.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch

import ember
from tests.opinfo_samples import to_ember
from tests.optim.optim_samples import ember_optimizer_class, info_named, optim_db, optimizer_inputs

SIZE = 6


def _cases() -> list:
    return [pytest.param(info.name, index, id=f"{info.name}-{index}")
            for info in optim_db() if "differentiable" in info.supported_impls
            for index, _ in enumerate(optimizer_inputs(info, torch.float64))]


def _kwargs(name: str, index: int) -> dict:
    kwargs = dict(optimizer_inputs(info_named(name), torch.float64)[index].kwargs, differentiable=True)
    kwargs.pop("foreach", None)
    return kwargs


def _inputs(name: str, kwargs: dict) -> tuple:
    """A parameter, its gradient and a state (that of one ordinary torch step, its tensors shaped as the
    parameter replaced by random values that every state entry may hold)."""
    generator = torch.Generator().manual_seed(0)
    param = torch.rand(SIZE, dtype=torch.float64, generator=generator) - 0.5
    grad = torch.rand(SIZE, dtype=torch.float64, generator=generator) - 0.5
    warm = param.clone().requires_grad_()
    warm.grad = grad.clone()
    optimizer = info_named(name).optim_cls([warm], **dict(kwargs, differentiable=False))
    optimizer.step()
    state = {key: (torch.rand(SIZE, dtype=torch.float64, generator=generator) + 0.1
                   if key != "step" and value.shape == param.shape and value.is_floating_point() else value.clone())
             for key, value in optimizer.state[warm].items()}
    if "grad_avg" in state:  # (centered RMSprop: the variance square_avg - grad_avg**2 stays positive)
        state["grad_avg"] = state["grad_avg"] * 0.3 - 0.03
    return param, grad, state


def _recorded_gradients(lib, cls, param, grad, state: dict, kwargs: dict) -> list:
    """The gradients, with respect to the parameter, its gradient and its state's parameter-shaped tensors, of a
    fixed weighting of the stepped parameter and state."""
    leaves = [param.clone().requires_grad_(), grad.clone().requires_grad_()]
    state = {key: value.clone() for key, value in state.items()}
    for key, value in state.items():
        if key != "step" and value.shape == param.shape:
            leaves.append(value.requires_grad_())
    stepped = leaves[0].clone()
    stepped.grad = leaves[1]
    optimizer = cls([stepped], **kwargs)
    optimizer.state[stepped].update({key: value.clone() for key, value in state.items()})
    optimizer.step()
    outputs = [stepped] + [value for value in optimizer.state[stepped].values() if value.requires_grad]
    weights = lib.arange(1.0, SIZE + 1, dtype=lib.float64)
    total = sum(((index + 1) * output * weights).sum() for index, output in enumerate(outputs))
    found = lib.autograd.grad(total, leaves, allow_unused=True)
    return [np.zeros(SIZE) if g is None else g.detach().numpy() for g in found]


@pytest.mark.parametrize("name, index", _cases())
def test_one_recorded_step_differentiates_parameter_gradient_and_state(name, index):
    info = info_named(name)
    kwargs = _kwargs(name, index)
    param, grad, state = _inputs(name, kwargs)
    expected = _recorded_gradients(torch, info.optim_cls, param, grad, state, kwargs)
    got = _recorded_gradients(ember, ember_optimizer_class(info), to_ember(param), to_ember(grad),
                              to_ember(state), to_ember(kwargs))
    for position, (want, have) in enumerate(zip(expected, got)):
        np.testing.assert_allclose(have, want, rtol=1e-6, atol=1e-9, err_msg=f"gradient {position}")


def _names() -> list:
    return [info.name for info in optim_db() if "differentiable" in info.supported_impls]


@pytest.mark.parametrize("name", _names())
def test_recorded_step_records_under_no_grad(name):
    """As torch's, the recorded step turns grad mode on for itself: a caller's no_grad does not stop it."""
    leaf = ember.rand(SIZE, dtype=ember.float64, requires_grad=True)
    param = leaf.clone()
    param.grad = ember.rand(SIZE, dtype=ember.float64)
    optimizer = ember_optimizer_class(info_named(name))([param], differentiable=True)
    with ember.no_grad():
        optimizer.step()
        assert not ember.is_grad_enabled()
    assert param.grad_fn is not None
    param.sum().backward()
    assert leaf.grad is not None


def test_sgd_records_its_batched_update():
    """torch's SGD alone records its batched (foreach) update."""
    grads = []
    for lib in (torch, ember):
        leaf = lib.arange(1.0, SIZE + 1, dtype=lib.float64, requires_grad=True)
        param = leaf * 1
        optimizer = lib.optim.SGD([param], lr=0.1, momentum=0.9, nesterov=True, foreach=True, differentiable=True)
        for _ in range(2):
            param.grad = param.detach() * 0.5
            optimizer.step()
        (param * param).sum().backward()
        grads.append(leaf.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-12)


@pytest.mark.parametrize("name", [name for name in _names() if name != "SGD"])
def test_differentiable_refuses_foreach(name):
    """torch's batched update of the others has no recorded form: it fails the step with an AssertionError."""
    for lib, cls in ((torch, info_named(name).optim_cls), (ember, ember_optimizer_class(info_named(name)))):
        param = lib.rand(SIZE, dtype=lib.float64, requires_grad=True)
        param.grad = lib.rand(SIZE, dtype=lib.float64)
        optimizer = cls([param], differentiable=True, foreach=True)
        with pytest.raises(AssertionError, match="_foreach ops don't support autograd"):
            optimizer.step()


def test_a_step_counter_that_requires_grad_is_refused():
    for lib, cls in ((torch, torch.optim.Adam), (ember, ember.optim.Adam)):
        param = lib.rand(SIZE, dtype=lib.float64, requires_grad=True).clone()
        param.grad = lib.rand(SIZE, dtype=lib.float64)
        optimizer = cls([param], differentiable=True)
        optimizer.step()
        optimizer.state[param]["step"] = lib.tensor(1.0, requires_grad=True)
        with pytest.raises(RuntimeError, match="`requires_grad` is not supported for `step` in differentiable mode"):
            optimizer.step()


@pytest.mark.parametrize("name", _names())
def test_a_recorded_step_of_a_leaf_is_refused(name):
    """A leaf that requires grad cannot be changed in place while grad mode records: step a clone of it."""
    for lib, cls in ((torch, info_named(name).optim_cls), (ember, ember_optimizer_class(info_named(name)))):
        param = lib.rand(SIZE, dtype=lib.float64, requires_grad=True)
        param.grad = lib.rand(SIZE, dtype=lib.float64)
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
            cls([param], differentiable=True).step()


def test_non_leaf_parameters_need_differentiable():
    for lib in (torch, ember):
        param = lib.rand(SIZE, requires_grad=True).clone()
        with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
            lib.optim.SGD([param])
        lib.optim.SGD([param], differentiable=True)


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "NAdam", "RAdam", "ASGD"])
def test_a_tensor_learning_rate_that_requires_grad_gets_its_gradient(name):
    """A learned learning rate: torch's recorded SGD, Adam, AdamW, NAdam and RAdam steps reach a tensor lr that
    requires grad (ASGD's reads it as a number: no gradient)."""
    found = []
    for lib, cls in ((torch, info_named(name).optim_cls), (ember, ember_optimizer_class(info_named(name)))):
        lr = lib.tensor(0.1, dtype=lib.float64, requires_grad=True)
        leaf = lib.arange(1.0, SIZE + 1, dtype=lib.float64, requires_grad=True)
        param = leaf.clone()
        optimizer = cls([param], lr=lr, differentiable=True, **({"momentum": 0.9} if name == "SGD" else {}))
        param.grad = param.detach() * 0.5 + 1
        optimizer.step()
        (param * param).sum().backward()
        found.append((None if lr.grad is None else lr.grad.item(), leaf.grad.numpy()))
    (expected_lr, expected_leaf), (got_lr, got_leaf) = found
    assert (got_lr is None) == (expected_lr is None)
    if expected_lr is not None:  # (torch's Adam family rounds its bias corrections to float32: 1e-5)
        assert got_lr == pytest.approx(expected_lr, rel=1e-5)
    np.testing.assert_allclose(got_leaf, expected_leaf, rtol=1e-5)
