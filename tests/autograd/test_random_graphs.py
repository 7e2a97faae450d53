"""Random graphs, run by torch and by ember: the gradients must agree.

Hypothesis draws programs of a few steps; each step picks earlier values by
index, so one value may feed many later ones (forks) and paths of any length
meet again (joins): the shapes of graph that the engine's ordering must get
right. Three families: many kinds of op on 2x2 float64 tensors; broadcasting
shapes, 0-d tensors and float32; hooks, retain_grad and two-output Functions.
"""
import warnings

import numpy as np
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import ember
from seed_functions import exp_function
from twins import both, leaf


def f64(lib, values):
    return lib.tensor(values, dtype=lib.float64)


# ---------------------------------------------------------------- many kinds of op

_STEPS = {
    "add": (2, lambda lib, a, b: a + b),
    "mul": (2, lambda lib, a, b: a * b),
    "sub_alpha": (2, lambda lib, a, b: lib.sub(a, b, alpha=0.5)),
    "div": (2, lambda lib, a, b: a / (b * b + 1)),
    "rdiv": (1, lambda lib, a: 2.0 / (a * a + 1)),
    "pow_number": (1, lambda lib, a: (a * a + 0.5) ** 1.5),
    "pow_tensor": (2, lambda lib, a, b: (a * a + 0.5) ** (b * 0.5)),
    "rpow": (1, lambda lib, a: 2.0 ** a),
    "tanh": (1, lambda lib, a: a.tanh()),
    "sigmoid": (1, lambda lib, a: a.sigmoid()),
    "exp": (1, lambda lib, a: (a * 0.1).exp()),
    "log": (1, lambda lib, a: (a * a + 1).log()),
    "sqrt": (1, lambda lib, a: (a * a + 1).sqrt()),
    "relu": (1, lambda lib, a: a.relu()),
    "abs": (1, lambda lib, a: (a + 0.01).abs()),
    "clamp": (1, lambda lib, a: a.clamp(-0.5, 0.5)),
    "matmul": (2, lambda lib, a, b: a @ b),
    "mean_dim": (1, lambda lib, a: a.mean(1, keepdim=True) * a),
    "sum_all": (1, lambda lib, a: a.sum() * a),
    "amax": (1, lambda lib, a: a.amax(0, keepdim=True) + a),
    "transpose": (2, lambda lib, a, b: a.transpose(0, 1) * b),
    "expand": (1, lambda lib, a: a[0:1].expand(2, 2)),
    "select": (1, lambda lib, a: a.select(0, 1) * a),
    "index": (1, lambda lib, a: a[[1, 0]]),
    "reshape": (1, lambda lib, a: a.reshape(4).reshape(2, 2)),
    "view_t": (1, lambda lib, a: a.t().reshape(4).view(2, 2)),
    "permute": (2, lambda lib, a, b: a.permute(1, 0) * b),
    "unsqueeze_squeeze": (1, lambda lib, a: a.unsqueeze(0).squeeze(0).unsqueeze(-1).sum(-1)),
    "mean_all": (1, lambda lib, a: a.mean() * a),
    "sum_dim": (1, lambda lib, a: a.sum(0) + a),
    "expand_as": (2, lambda lib, a, b: a.sum(1, keepdim=True).expand_as(b) * b),
    "where": (2, lambda lib, a, b: lib.where(a > 0, a, b)),
    "cat": (2, lambda lib, a, b: lib.cat([a, b], 1)[:, 1:3]),
    "stack": (2, lambda lib, a, b: lib.stack([a, b * a], 0).sum(0)),
    "unbind": (1, lambda lib, a: lib.stack(list(a)[::-1], 1)),
    "clamp_min": (1, lambda lib, a: a.clamp_min(-0.25)),
    "custom_on_arrays": (1, lambda lib, a: _scaled(lib).apply(a, 1.5)),
    "custom_on_tensors": (1, lambda lib, a: exp_function(lib).apply(a * 0.1)),
    "add_": (2, lambda lib, a, b: (a * 1).add_(b)),
    "clamp_": (1, lambda lib, a: (a * 1).clamp_(-0.3, 0.3)),
    "setitem": (2, lambda lib, a, b: _set_row(a, b)),
    "view_add_": (2, lambda lib, a, b: _add_through_a_view(a, b)),
}


def _set_row(a, b):
    c = a * 1
    c[1] = b[0] * 2
    return c


def _add_through_a_view(a, b):
    """An in-place change through a view of a non-leaf: its base is rebased in the graph."""
    c = a * 1
    c.t()[0].add_(b[0])
    return c


def _scaled(lib):
    class Scaled(lib.autograd.Function):
        backward_on_arrays = True  # torch ignores it; ember runs the formula on arrays without create_graph

        @staticmethod
        def forward(ctx, x, k):
            ctx.save_for_backward(x)
            ctx.k = k
            return x * x * k

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * 2 * ctx.k * x, None

    return Scaled


@st.composite
def _graphs(draw):
    steps = []
    for i in range(draw(st.integers(1, 12))):
        name = draw(st.sampled_from(sorted(_STEPS)))
        arity = _STEPS[name][0]
        steps.append((name, [draw(st.integers(0, i + 1)) for _ in range(arity)]))  # 0 and 1 are the two leaves
    return steps


def _run_graph(lib, steps, create_graph: bool):
    x = leaf(lib, [[0.3, -0.7], [1.1, 0.2]])
    w = leaf(lib, [[0.5, 0.4], [-0.2, 0.9]])
    values = [x, w]
    for name, picks in steps:
        value = _STEPS[name][1](lib, *[values[p] for p in picks])
        values.append(value.tanh())  # bounded: no overflow, since inf and nan are not the point here
    out = (values[-1] * f64(lib, [[1.0, -2.0], [0.5, 3.0]])).sum()
    if not create_graph:  # into .grad, and the same from autograd.grad
        # (Not .backward() twice: torch's .grad of x and w may then share memory, and the second call counts twice.)
        out.backward(retain_graph=True)
        return x.grad, w.grad, lib.autograd.grad(out, [x, w], allow_unused=True, materialize_grads=True)
    grads = lib.autograd.grad(out, [x, w], create_graph=True, allow_unused=True, materialize_grads=True)
    total = sum((g * g).sum() for g in grads)
    if not total.requires_grad:  # every gradient is constant (x + w): both libraries must agree on that
        return grads, False
    return grads, lib.autograd.grad(total, [x, w], allow_unused=True, materialize_grads=True)


@settings(max_examples=120, deadline=None)
@given(_graphs(), st.booleans())
def test_random_graphs_give_torchs_gradients(steps, create_graph):
    both(lambda lib: _run_graph(lib, steps, create_graph))


# ---------------------------------------------------------------- broadcasting, 0-d tensors, float32

_SHAPES = [(2, 3), (3,), (1, 3), (2, 1), ()]
_BROADCASTING_STEPS = {
    "add": (2, lambda lib, a, b: a + b),
    "mul": (2, lambda lib, a, b: a * b),
    "div": (2, lambda lib, a, b: a / (b * b + 1)),
    "where": (2, lambda lib, a, b: lib.where(a > b, a, b)),
    "sum_first": (1, lambda lib, a: a.sum(0) if a.dim() else a),
    "sum_last_kept": (1, lambda lib, a: a.sum(-1, keepdim=True) if a.dim() else a),
    "mean": (1, lambda lib, a: a.mean()),
    "relu": (1, lambda lib, a: a.relu()),
    "unsqueeze": (1, lambda lib, a: a.unsqueeze(0)),
    "squeeze": (1, lambda lib, a: a.squeeze()),
    "root": (1, lambda lib, a: (a * a + 1) ** 0.5),
    "amax": (1, lambda lib, a: a.amax()),
}


@st.composite
def _broadcasting_programs(draw):
    shapes = [draw(st.sampled_from(_SHAPES)) for _ in range(3)]
    steps = []
    for i in range(draw(st.integers(1, 8))):
        name = draw(st.sampled_from(sorted(_BROADCASTING_STEPS)))
        steps.append((name, [draw(st.integers(0, i + 2)) for _ in range(_BROADCASTING_STEPS[name][0])]))
    return shapes, draw(st.sampled_from(["float64", "float32"])), steps


def _run_broadcasting(lib, shapes, dtype, steps, create_graph):
    rng = np.random.default_rng(1)
    leaves = [lib.tensor(rng.uniform(-1, 1, s), dtype=getattr(lib, dtype), requires_grad=True) for s in shapes]
    values = list(leaves)
    try:
        for name, picks in steps:
            values.append(_BROADCASTING_STEPS[name][1](lib, *[values[p] for p in picks]).tanh())
    except RuntimeError:  # shapes that do not broadcast: both libraries must refuse them
        return None
    grads = lib.autograd.grad(values[-1].sum() * 1.5, leaves, create_graph=create_graph, allow_unused=True,
                              materialize_grads=True)
    if create_graph:
        total = sum((g * g).sum() for g in grads)
        if total.requires_grad:
            grads += lib.autograd.grad(total, leaves, allow_unused=True, materialize_grads=True)
    return [g.detach().double() for g in grads]  # float32 compared in float64, to float32's precision


@settings(max_examples=100, deadline=None)
@given(_broadcasting_programs(), st.booleans())
def test_random_broadcasting_graphs_give_torchs_gradients(program, create_graph):
    shapes, dtype, steps = program
    ours, theirs = (_run_broadcasting(lib, shapes, dtype, steps, create_graph) for lib in (ember, torch))
    assert (ours is None) == (theirs is None)
    if ours is None:
        return
    tolerance = 1e-9 if dtype == "float64" else 1e-4
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=tolerance, atol=tolerance)


# ---------------------------------------------------------------- hooks, retain_grad, two-output Functions


def _split(lib, materialize: bool, on_arrays: bool):
    """Two outputs, 2x and x*x; with materialize off its backward sees None for an unused one."""

    class Split(lib.autograd.Function):
        backward_on_arrays = on_arrays

        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(materialize)
            ctx.save_for_backward(x)
            return x * 2, x * x

        @staticmethod
        def backward(ctx, grad_double, grad_square):
            (x,) = ctx.saved_tensors
            terms = [g * k for g, k in ((grad_double, 2), (grad_square, 2 * x)) if g is not None]
            return sum(terms[1:], terms[0]) if terms else None

    return Split


@st.composite
def _hooked_programs(draw):
    kinds = ["add", "mul", "relu", "first", "second", "both", "hook", "retain"]
    return [(draw(st.sampled_from(kinds)), draw(st.integers(0, i + 1)), draw(st.integers(0, i + 1)),
             draw(st.booleans()), draw(st.booleans())) for i in range(draw(st.integers(1, 10)))]


def _run_hooked(lib, steps, create_graph):
    x, w = leaf(lib, [[0.3, -0.7], [1.1, 0.2]]), leaf(lib, [[0.5, 0.4], [-0.2, 0.9]])
    values, retained = [x, w], []
    for kind, p, q, materialize, on_arrays in steps:
        a, b = values[p], values[q]
        if kind in ("first", "second", "both"):
            double, square = _split(lib, materialize, on_arrays).apply(a)
            value = {"first": double, "second": square, "both": double + square}[kind]
        elif kind == "hook":
            value = a * 1
            value.register_hook(lambda g: g * 2)
        elif kind == "retain":
            value = a * 1.5
            value.retain_grad()
            retained.append(value)
        else:
            value = {"add": lambda: a + b, "mul": lambda: a * b, "relu": lambda: a.relu()}[kind]()
        values.append(value.tanh())
    (values[-1] * f64(lib, [[1.0, -2.0], [0.5, 3.0]])).sum().backward(create_graph=create_graph)
    return [None if t.grad is None else t.grad.detach() for t in [x, w, *retained]]


@settings(max_examples=100, deadline=None)
@given(_hooked_programs(), st.booleans())
def test_random_graphs_with_hooks_give_torchs_gradients(steps, create_graph):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # create_graph with .backward() warns of a reference cycle in torch
        both(lambda lib: _run_hooked(lib, steps, create_graph))
