"""A view made when nothing is recorded keeps no gradient state on its node: its forward stores what backward
reads only when an input needs a gradient. Such a view must still work as torch's once its base gains a history
in place (its node is made again by replaying its steps, which records them), and a view recorded from the
start must still differentiate, twice."""
from __future__ import annotations

import pytest
import torch

import ember

CALLS = ["b[1]", "b[:, 1:3]", "b[0, 1]", "b[..., 0]", "b[1:3, None]", "b[1:3]", "b[:, :]", "b.view(16)",
         "b.reshape(2, 8)", "b[:, :1].expand(4, 4)", "b.permute(1, 0)", "b.unsqueeze(0)", "b.t()"]


def _after_base_changes(lib, call: str):
    b = lib.zeros(4, 4)
    view = eval(call, {"b": b})  # nothing requires grad: nothing recorded
    w = lib.arange(16.).view(4, 4).requires_grad_()
    b.add_(w)  # the base gains a history: the view's node is remade from its steps
    weights = lib.arange(float(view.numel())).view(view.shape)
    (view * weights).sum().backward()
    return view, w.grad


@pytest.mark.parametrize("call", CALLS)
def test_a_view_made_unrecorded_follows_its_base_into_the_graph(call):
    view, grad = _after_base_changes(ember, call)
    expected_view, expected_grad = _after_base_changes(torch, call)
    assert view.grad_fn is not None
    assert view.tolist() == expected_view.tolist()
    assert grad.tolist() == expected_grad.tolist()


def _second_derivative(lib, call: str):
    b = lib.arange(16.).view(4, 4).div(7).requires_grad_()
    view = eval(call, {"b": b})
    (first,) = lib.autograd.grad((view ** 3).sum(), b, create_graph=True)
    (second,) = lib.autograd.grad(first.sum(), b)
    return second


@pytest.mark.parametrize("call", CALLS)
def test_a_recorded_view_differentiates_twice(call):
    got, expected = _second_derivative(ember, call), _second_derivative(torch, call)
    assert torch.allclose(torch.tensor(got.tolist()), expected)
