"""A view made before its base changed shape in place (``x.t_()``) can no longer be replayed from the base.

Recording a change through it would write other elements than the view shows, so ember refuses it with a clear
error (torch keeps the view's own layout); without autograd the view is plain shared memory and works as in torch.
"""
import pytest

import ember
from twins import both


@pytest.mark.parametrize("change", [lambda x: x.t_(), lambda x: x.transpose_(0, 1), lambda x: x.unsqueeze_(0),
                                    lambda x: x.swapdims_(0, 1)])
def test_an_in_place_change_through_an_older_view_is_refused_not_misplaced(change):
    w = ember.ones(2, 2, requires_grad=True)
    x = w * 1
    v = x[0]
    change(x)
    with pytest.raises(RuntimeError, match="after its base changed shape in place"):
        v.mul_(5)
    assert x.tolist() in ([[1.0, 1.0], [1.0, 1.0]], [[[1.0, 1.0], [1.0, 1.0]]])  # nothing written anywhere


def test_without_autograd_an_older_view_still_shares_memory_as_in_torch():
    def run(m):
        x = m.arange(4.0).reshape(2, 2)
        v = x[0]
        x.t_()
        v.mul_(5)
        return x, v
    both(run)


def test_a_view_made_after_the_change_is_recorded_as_usual():
    def run(m):
        w = m.ones(2, 3, requires_grad=True)
        x = w * 1
        x.t_()
        x[0].mul_(5)
        x.sum().backward()
        return x, w.grad
    both(run)


@pytest.mark.parametrize("key", [(slice(1, 3),), (1,), (slice(None), None), (Ellipsis, 0), (0, slice(0, 2))])
def test_a_view_remade_after_an_in_place_change_keeps_its_node(key):
    """A view of a base changed in place is remade from the base by the same step: its grad_fn has the name a
    fresh view's has, as torch's with view replay on (torch's default remakes it as an as_strided)."""
    import torch

    names = []
    torch._C._set_view_replay_enabled(True)  # (it applies to views made while it is on)
    try:
        for lib in (torch, ember):
            base = lib.ones(2, 4, requires_grad=True) * 1
            view = base[key]
            fresh = type(view.grad_fn).__name__
            base.mul_(2)
            names.append((fresh, type(view.grad_fn).__name__))
    finally:
        torch._C._set_view_replay_enabled(False)
    assert names[1] == names[0]
    assert names[1][0] == names[1][1]
