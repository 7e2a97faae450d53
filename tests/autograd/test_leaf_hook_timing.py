"""When a leaf's hooks run: as soon as the last edge that can bring it a gradient has been followed, as torch's
AccumulateGrad runs once every node leading to it has, not at the end of the pass. Each scenario records the
order of events (hooks on leaves, on intermediate tensors, on nodes) under both libraries and compares them."""
from __future__ import annotations

import pytest

import ember

torch = pytest.importorskip("torch")


def _two_leaves(lib, log: list):
    """w2 is complete after the first product's node; w1 only after its second use, further down."""
    w1 = lib.ones(2, requires_grad=True)
    w2 = lib.ones(2, requires_grad=True)
    w1.register_hook(lambda g: log.append(("w1 hook", g.tolist())))
    w2.register_hook(lambda g: log.append(("w2 hook", g.tolist())))
    w1.register_post_accumulate_grad_hook(lambda p: log.append("w1 post"))
    w2.register_post_accumulate_grad_hook(lambda p: log.append("w2 post"))
    h = w1 * 2
    h.register_hook(lambda g: log.append(("h hook", g.tolist())))
    y = (h * w2).sum() + (w1 * 3).sum()
    y.register_hook(lambda g: log.append("y hook"))
    y.backward()


def _mlp_parameters(lib, log: list):
    """A three-layer MLP: each parameter's post-accumulate hook fires as its layer's backward is done, between
    the hooks on the activations, as gradient bucketing relies on."""
    lib.manual_seed(0)
    layers = [lib.nn.Linear(3, 4), lib.nn.Linear(4, 4), lib.nn.Linear(4, 2)]
    for i, layer in enumerate(layers):
        for name, p in layer.named_parameters():
            p.register_post_accumulate_grad_hook(lambda p, tag=f"{i}.{name}": log.append(tag))
    h = lib.ones(5, 3)
    for i, layer in enumerate(layers):
        h = layer(h).tanh()
        h.register_hook(lambda g, tag=f"activation {i}": log.append(tag))
    h.sum().backward()


def _node_hooks(lib, log: list):
    """Node hooks (grad_fn.register_hook) of the nodes after a leaf's last use run after the leaf's hooks."""
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = lib.tensor([3.0, 4.0], requires_grad=True)
    a.register_hook(lambda g: log.append(("a", g.tolist())))
    b.register_hook(lambda g: log.append(("b", g.tolist())))
    c = a * b
    d = c.exp()
    d.grad_fn.register_hook(lambda gi, go: log.append("exp node"))
    e = (d + b).sum()
    e.grad_fn.register_hook(lambda gi, go: log.append("sum node"))
    e.backward()


def _function_returning_none(lib, log: list):
    """A Function that gives one of its inputs no gradient: the leaf still gets its hooks run, with the total of
    what its other edges brought."""

    class Scale(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            return x * 2 + y.detach()

        @staticmethod
        def backward(ctx, g):
            return g * 2, None

    x = lib.ones(2, requires_grad=True)
    y = lib.ones(2, requires_grad=True)
    x.register_hook(lambda g: log.append(("x", g.tolist())))
    y.register_hook(lambda g: log.append(("y", g.tolist())))
    z = Scale.apply(x, y) * y
    z.register_hook(lambda g: log.append("z"))
    (z.sum() + (y * 5).sum()).backward()


def _leaf_as_root(lib, log: list):
    """A leaf among backward's roots: its hooks run when its one gradient (the root's) is in."""
    x = lib.ones(2, requires_grad=True)
    w = lib.ones(2, requires_grad=True)
    x.register_hook(lambda g: log.append(("x", g.tolist())))
    w.register_hook(lambda g: log.append(("w", g.tolist())))
    y = (w * 3).sum()
    lib.autograd.backward([y, x], [lib.tensor(1.0), lib.ones(2)])


def _retained_graph_twice(lib, log: list):
    """Two passes over one graph: each pass counts its own edges."""
    w = lib.ones(2, requires_grad=True)
    v = lib.ones(2, requires_grad=True)
    w.register_hook(lambda g: log.append(("w", g.tolist())))
    v.register_hook(lambda g: log.append(("v", g.tolist())))
    h = w * v
    h.register_hook(lambda g: log.append("h"))
    y = (h * w).sum()
    y.backward(retain_graph=True)
    log.append("second")
    y.backward()


SCENARIOS = [_two_leaves, _mlp_parameters, _node_hooks, _function_returning_none, _leaf_as_root,
             _retained_graph_twice]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda f: f.__name__.strip("_"))
def test_leaf_hooks_run_when_torch_runs_them(scenario):
    theirs, mine = [], []
    scenario(torch, theirs)
    scenario(ember, mine)
    assert mine == theirs


def test_a_leaf_reached_twice_is_hooked_once_with_the_total():
    """The early release waits for every edge: a leaf used twice still sees one call with the sum."""
    calls = []
    x = ember.ones(3, requires_grad=True)
    x.register_hook(lambda g: calls.append(g.tolist()))
    ((x * 2).sum() + (x * x).sum()).backward()
    assert calls == [[4.0, 4.0, 4.0]]
