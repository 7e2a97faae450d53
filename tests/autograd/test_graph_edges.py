"""Gradient edges, hooks over several tensors, end-of-pass callbacks and increment_version, against torch."""
import pytest
import torch

import ember
from ember.autograd import engine


def _multi_hook_story(m) -> list:
    """What a multi-tensor hook sees over several backward passes, as printable text."""
    graph = m.autograd.graph
    a = m.tensor([1., 2.], requires_grad=True)
    b = m.tensor([3., 4.], requires_grad=True)
    c = m.tensor([5.], requires_grad=True)
    seen = []
    handle = graph.register_multi_grad_hook((a, b, c), lambda grads: seen.append(("all", list(grads))))
    (a * b).sum().backward()
    (a * 2).sum().backward()
    (a * b).sum().backward(inputs=[b])
    handle.remove()
    (a * b).sum().backward()
    handle = graph.register_multi_grad_hook((a, b), lambda grad: seen.append(("any", grad)), mode="any")
    (a * b * 2).sum().backward()
    (b * 5).sum().backward()
    handle.remove()
    return [repr(item).replace(m.__name__ + ".", "") for item in seen]


def test_multi_grad_hook_sees_what_torch_sees():
    assert _multi_hook_story(ember) == _multi_hook_story(torch)


def _edge_story(m) -> list:
    graph = m.autograd.graph
    x = m.tensor([1., 2.], dtype=m.float64, requires_grad=True)
    y = x * 3
    edge = graph.get_gradient_edge(y)
    leaf_edge = graph.get_gradient_edge(x)
    results = [type(edge.node).__name__, edge.output_nr, type(leaf_edge.node).__name__]
    results += m.autograd.grad(y.exp().sum(), edge)
    results += m.autograd.grad(y.exp().sum(), [leaf_edge, edge])
    w = x.clone()
    before = graph.get_gradient_edge(w)
    w.mul_(2)  # the edge still leads to the values before the change
    results += m.autograd.grad((w * w).sum(), before)
    return [[round(v, 9) for v in r.tolist()] if isinstance(r, m.Tensor) else r for r in results]


def test_gradient_edges_as_torch():
    assert _edge_story(ember) == _edge_story(torch)


def test_edge_of_a_tensor_without_grad_is_refused():
    with pytest.raises(RuntimeError, match="not possible to get the gradient edge"):
        ember.autograd.graph.get_gradient_edge(ember.ones(2))
    with pytest.raises(ValueError, match="mode"):
        ember.autograd.graph.register_multi_grad_hook((ember.ones(1, requires_grad=True),), print, mode="some")


def _multi_hook_timing(m) -> list:
    """When an all-mode hook runs against the nodes around it: once its tensors' gradients are all in."""
    x = m.ones(2, requires_grad=True)
    y, z = x * 2, x * 3
    order = []
    handle = m.autograd.graph.register_multi_grad_hook((y, z), lambda grads: order.append("multi"))
    y.register_hook(lambda grad: order.append("y"))
    z.register_hook(lambda grad: order.append("z"))
    x.register_hook(lambda grad: order.append("x"))
    (y.exp() + z.sin() * 2).sum().backward()
    handle.remove()
    return order


def test_multi_grad_hook_runs_as_soon_as_its_gradients_are_in_as_torch():
    assert _multi_hook_timing(ember) == _multi_hook_timing(torch)


def _multi_hook_timing_with_a_tensor_the_pass_misses(m, through_grad: bool) -> list:
    """A pass that reaches only some of the hook's tensors runs the hook once those are in, before the nodes
    beyond them (torch knows from the graph which tensors the pass reaches), not at the end of the pass."""
    x = m.ones(2, requires_grad=True)
    w = m.ones(2, requires_grad=True)
    y, unused, other = x * 2, x * 3, w * 4
    order = []
    handle = m.autograd.graph.register_multi_grad_hook((y, unused, other), lambda grads: order.append(
        ("multi", [g is not None for g in grads])))
    x.register_hook(lambda grad: order.append("x"))
    loss = (y.exp() + other).sum()
    if through_grad:  # the pass stops at y: other's gradient is never computed
        m.autograd.grad(loss, [y])
    else:
        loss.backward()
    handle.remove()
    return order


@pytest.mark.parametrize("through_grad", [False, True])
def test_multi_grad_hook_does_not_wait_for_tensors_the_pass_misses_as_torch(through_grad):
    expected = _multi_hook_timing_with_a_tensor_the_pass_misses(torch, through_grad)
    assert _multi_hook_timing_with_a_tensor_the_pass_misses(ember, through_grad) == expected


def test_multi_grad_hook_works_under_autograd_grad():
    a = ember.tensor([1., 2.], requires_grad=True)
    b = ember.tensor([3., 4.], requires_grad=True)
    seen = []
    ember.autograd.graph.register_multi_grad_hook((a, b), seen.append)
    (grad_a,) = ember.autograd.grad((a * b * 3).sum(), [a])
    assert grad_a.tolist() == [9., 12.]
    assert [None if g is None else g.tolist() for g in seen[0]] == [[9., 12.], None]


def test_queued_callbacks_run_once_at_the_end_of_the_pass_in_order():
    x = ember.ones(2, requires_grad=True)
    order = []

    def hook(grad):
        order.append("hook")
        engine.queue_callback(lambda: order.append(("first", x.grad is not None)))
        engine.queue_callback(lambda: engine.queue_callback(lambda: order.append("queued by a callback")))
        return grad

    y = x * 2
    y.register_hook(hook)
    y.sum().backward()
    assert order == ["hook", ("first", True), "queued by a callback"]
    with pytest.raises(RuntimeError, match="only be installed during backward"):
        engine.queue_callback(print)


@pytest.mark.parametrize("m", [torch, ember], ids=["torch", "ember"])
def test_increment_version_makes_backward_refuse_changed_saved_values(m):
    t = m.tensor([1., 2.], requires_grad=True)
    s = t.clone()
    u = s.sin()
    m.autograd.graph.increment_version(s.detach())
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        u.sum().backward()
