"""The engine's and the in-place ops' fast paths give what the general paths give, as torch."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import ember
import ember.autograd.engine as engine


def _copies(monkeypatch) -> list:
    """Record each copy the engine makes of a gradient for a leaf's .grad."""
    made = []
    original = engine._copy_in_layout_of
    monkeypatch.setattr(engine, "_copy_in_layout_of", lambda like, data: (made.append(data), original(like, data))[1])
    return made


def test_a_fresh_gradient_becomes_grad_without_a_copy(monkeypatch):
    made = _copies(monkeypatch)
    a, b = ember.randn(5, requires_grad=True), ember.randn(5, requires_grad=True)
    (a * b).backward(ember.ones(5))
    assert made == []  # each product is that leaf's alone: taken as it is
    np.testing.assert_array_equal(a.grad.numpy(), b.detach().numpy())


def test_a_gradient_someone_else_holds_is_copied(monkeypatch):
    made = _copies(monkeypatch)
    g = ember.ones(3)
    a, b = ember.randn(3, requires_grad=True), ember.randn(3, requires_grad=True)
    (a + b).backward(g)  # add passes g on to both leaves: each .grad must be a copy of its own
    assert len(made) == 2
    a.grad.add_(1.0)
    assert g.tolist() == [1.0, 1.0, 1.0] and b.grad.tolist() == [1.0, 1.0, 1.0]


def test_a_transposed_leaf_gets_its_layout(monkeypatch):
    x = torch.randn(3, 4).t().requires_grad_()
    mine = ember.randn(3, 4).t().detach().requires_grad_()
    (mine * 2.0).backward(ember.ones(4, 3))
    (x * 2.0).backward(torch.ones(4, 3))
    assert mine.grad.stride() == x.grad.stride() == (1, 4)


@pytest.mark.parametrize("op", ["add_", "sub_", "mul_", "div_"])
@pytest.mark.parametrize("other", ["tensor", 2.5, 3, "int tensor", "broadcast"])
def test_unrecorded_arithmetic_in_place_as_torch(op, other):
    values = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    made = {"tensor": lambda lib: lib.tensor(values[::-1].copy()), "int tensor": lambda lib: lib.tensor([[1, 2, 0, 3]]),
            "broadcast": lambda lib: lib.tensor(values[:1].copy())}
    results = []
    for lib in (ember, torch):
        x = lib.tensor(values)
        y = made[other](lib) if isinstance(other, str) else other
        version = x._version
        assert getattr(x, op)(y) is x
        results.append((x.numpy(), x._version - version))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-6)
    assert results[0][1] == results[1][1] == 1


def test_unrecorded_in_place_with_alpha_and_zero_division_as_torch():
    for lib in (ember, torch):
        x = lib.tensor([1.0, -1.0, 0.0])
        x.add_(lib.tensor([1.0, 2.0, 3.0]), alpha=-0.5).div_(lib.tensor([0.0, 0.0, 0.0]))
        assert [str(v) for v in x.tolist()] == ["inf", "-inf", "-inf"]


@pytest.mark.parametrize("call", ["copy_(w)", "clamp_(-0.5, 0.5)", "clamp_(min=0)", "add_(w)", "mul_(2.0)",
                                  "div_(w)"])
def test_unrecorded_in_place_of_an_expanded_tensor_refused_as_torch(call):
    errors = []
    for lib in (ember, torch):
        x, w = lib.ones(1, 3).expand(2, 3), lib.ones(2, 3)
        with lib.no_grad(), pytest.raises(RuntimeError) as error:
            eval(f"x.{call}")
        errors.append(error.value)
    assert "more than one element" in str(errors[0]) and "single memory location" in str(errors[1])


@pytest.mark.parametrize("call", ["zero_()", "fill_(2.5)", "copy_(w)", "clamp_(-0.5, 0.5)", "clamp_(max=1)"])
def test_unrecorded_in_place_as_torch(call):
    values = np.random.default_rng(1).standard_normal((2, 3)).astype(np.float32)
    results = []
    for lib in (ember, torch):
        x, w = lib.tensor(values), lib.tensor(values[::-1].copy())
        view = x[1]
        version = x._version
        eval(f"x.{call}")
        results.append((x.numpy().copy(), view.numpy().copy(), x._version - version))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    np.testing.assert_array_equal(results[0][1], results[1][1])
    assert results[0][2] == results[1][2]


def test_in_place_under_grad_still_recorded():
    x = ember.ones(3, requires_grad=True)
    y = x * 1
    y.mul_(ember.tensor([1.0, 2.0, 3.0])).clamp_(0, 2.5).add_(1.0, alpha=2)
    y.sum().backward()
    assert x.grad.tolist() == [1.0, 2.0, 0.0]
