"""``loss.backward()`` of a total or a mean starts from one shared, read-only one (``reduction.seed_one``), and the
reductions see it in their input's shape through views made once: the gradients are torch's, and nothing the
user is handed can write into the shared one."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import ember
from ember._ops import reduction

SHAPES = [(), (1,), (4, 4), (2, 3, 5), (3, 0)]


def _leaves(shape, dtype, transposed=False):
    values = np.random.default_rng(0).standard_normal(shape)
    if transposed:
        values = values.T
    return (ember.tensor(values, dtype=getattr(ember, dtype), requires_grad=True),
            torch.tensor(values, dtype=getattr(torch, dtype), requires_grad=True))


def _seed_is_one(dtype: str) -> bool:
    one = reduction.seed_one(np.dtype(dtype))
    return one.shape == () and one.item() == 1 and not one.flags.writeable


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("reduce", ["sum", "mean"])
def test_gradients_of_a_reduced_loss_as_torch_twice(shape, dtype, reduce):
    for transposed in (False, True):
        mine, theirs = _leaves(shape, dtype, transposed)
        for _ in range(2):  # the second backward adds into .grad
            getattr(mine, reduce)().backward()
            getattr(theirs, reduce)().backward()
        np.testing.assert_allclose(mine.grad.numpy(), theirs.grad.numpy(), rtol=1e-6)
        assert mine.grad.dtype == getattr(ember, dtype)
        assert _seed_is_one(dtype)


@pytest.mark.parametrize("shape", [(), (1,), (4, 4)])
def test_grad_handed_to_the_user_is_theirs_to_change(shape):
    for lib in (ember, torch):
        x = lib.ones(shape, requires_grad=True)
        x.sum().backward()
        x.grad.mul_(3.0)  # .grad is a copy of its own, writable
        x.sum().backward()
        assert x.grad.flatten().tolist() == [4.0] * x.numel()
    assert _seed_is_one("float32")


@pytest.mark.parametrize("reduce", ["sum", "mean"])
def test_a_hook_on_the_loss_may_change_its_gradient_in_place_as_in_torch(reduce):
    grads = []
    for lib in (ember, torch):
        x = lib.ones(2, 2, requires_grad=True)
        y = getattr(x, reduce)()
        y.register_hook(lambda g: g.mul_(2.0))  # the loss's gradient is a fresh one, as torch's
        y.backward()
        grads.append(x.grad.tolist())
    assert grads[0] == grads[1]
    assert _seed_is_one("float32")


def test_retained_gradient_of_the_loss_is_writable():
    x = ember.ones(3, requires_grad=True)
    y = x.sum()
    y.retain_grad()
    y.backward()
    y.grad.add_(1.0)
    assert y.grad.item() == 2.0 and _seed_is_one("float32")


def test_a_custom_function_may_write_into_the_loss_gradient():
    class Doubled(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.sum() * 1.0

        @staticmethod
        def backward(ctx, grad):
            grad.mul_(2.0)  # the implicit gradient of its 0-d output is fresh, as in torch
            return grad.expand(3)

    x = ember.ones(3, requires_grad=True)
    Doubled.apply(x).backward()
    assert x.grad.tolist() == [2.0, 2.0, 2.0] and _seed_is_one("float32")


def test_double_backward_through_a_summed_loss():
    for lib in (ember, torch):
        x = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
        (x ** 3).sum().backward(create_graph=True)
        (g,) = lib.autograd.grad(x.grad.sum(), x)
        assert g.tolist() == [6.0, 12.0, 18.0]


def test_the_views_of_the_seed_are_made_once(monkeypatch):
    x = ember.randn(4, 4, requires_grad=True)
    x.sum().backward()
    x.mean().backward()  # each shape's view made now
    made = []
    real = reduction.broadcast_view
    monkeypatch.setattr(reduction, "broadcast_view", lambda *a: (made.append(a), real(*a))[1])
    x.sum().backward()
    x.mean().backward()
    assert made == []
    np.testing.assert_allclose(x.grad.numpy(), np.full((4, 4), 2 + 2 / 16, np.float32))


@pytest.mark.parametrize("call", ["mean(1)", "mean(0)", "mean((0, 1), keepdim=True)", "mean(-1, keepdim=True)",
                                  "sum(1)", "mean(1).mean()"])
@pytest.mark.parametrize("shape", [(4, 3), (3, 0), (0, 3)])
def test_reduction_along_dims_of_a_summed_loss_as_torch(call, shape):
    mine, theirs = _leaves(shape, "float32")
    eval(f"mine.{call}").sum().backward()
    eval(f"theirs.{call}").sum().backward()
    np.testing.assert_allclose(mine.grad.numpy(), theirs.grad.numpy(), rtol=1e-6)


def test_mean_of_values_beyond_range_is_inf_without_a_warning_even_when_warnings_are_errors():
    x = ember.tensor([[3e38, 3e38], [1.0, 2.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert x.mean(1).tolist() == [float("inf"), 1.5]
        assert x.mean().item() == float("inf")
    with np.errstate(all="raise"):
        assert x.mean(1).tolist() == [float("inf"), 1.5]
        assert x.mean().item() == float("inf")
        assert np.isnan(ember.zeros(0).mean().item())


@pytest.mark.parametrize("shape", [(), (1,), (1, 1)])
@pytest.mark.parametrize("reduce", ["sum", "mean"])
def test_a_one_element_gradient_from_autograd_grad_may_be_changed_in_place_as_in_torch(shape, reduce):
    results = []
    for lib in (ember, torch):
        x = lib.ones(shape, requires_grad=True)
        (g,) = lib.autograd.grad(getattr(x, reduce)(), x)
        g.add_(1.0)
        (again,) = lib.autograd.grad(getattr(x, reduce)(), x)
        results.append((g.tolist(), again.tolist()))
    assert results[0] == results[1]
