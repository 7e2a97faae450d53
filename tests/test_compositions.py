"""Random compositions of the tensor API, run by torch and by ember: values, gradients and second derivatives
must agree.

Hypothesis draws a leaf's shape and a chain of 2 to 6 steps. Each step is an op of the API (pointwise math,
reductions with keepdim, scans, softmax, sorting, gathers, products, joins, views, and in-place changes made
directly or through a view), with a number ``k`` that picks its dims and variants from the current shape. The
chain's result, weighted, is summed; both libraries must give the same value, the same gradient of the leaf and the
same gradient of ``(grad * grad).sum()`` (double backward). A step whose op ember does not have is left out of
the draw, so the test grows with the API.
"""
from __future__ import annotations

import warnings
from typing import Callable, NamedTuple

import numpy as np
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import ember


class Step(NamedTuple):
    name: str
    needs: tuple  # the names ember must have (as functions or Tensor methods) for the step to be drawn
    run: Callable  # run(lib, x, k) -> a floating tensor


def _dim(x, k: int) -> int:
    return k % max(x.dim(), 1) - (max(x.dim(), 1) if k % 2 else 0) if x.dim() else 0


def _square(lib, x):
    """x as a square matrix (its first n*n elements, repeated if x is short)."""
    flat = x.reshape(-1)
    n = 2
    return lib.cat([flat, flat, flat, flat])[: n * n].reshape(n, n) if flat.numel() else lib.ones(2, 2,
                                                                                                  dtype=x.dtype)


def _in_place(method: str, *args):
    def run(lib, x, k):
        y = x * 1  # a non-leaf to change in place
        target = y.transpose(0, -1) if k % 3 == 1 and y.dim() >= 2 else y[:1] if k % 3 == 2 and y.dim() else y
        getattr(target, method)(*args)
        return y
    return run


STEPS = [
    # pointwise
    Step("sin", ("sin",), lambda m, x, k: m.sin(x)),
    Step("cos", ("cos",), lambda m, x, k: x.cos()),
    Step("tanh", ("tanh",), lambda m, x, k: x.tanh()),
    Step("sigmoid", ("sigmoid",), lambda m, x, k: m.sigmoid(x)),
    Step("exp_scaled", ("exp",), lambda m, x, k: (x * 0.5).exp()),
    Step("log1p_abs", ("log1p",), lambda m, x, k: m.log1p(x.abs() + 0.1)),
    Step("sqrt_shift", ("sqrt",), lambda m, x, k: (x * x + 1).sqrt()),
    Step("erf", ("erf",), lambda m, x, k: m.erf(x)),
    Step("atan2", ("atan2",), lambda m, x, k: m.atan2(x, x * x + 1)),
    Step("hypot", ("hypot",), lambda m, x, k: m.hypot(x, m.ones_like(x))),
    Step("logaddexp", ("logaddexp",), lambda m, x, k: m.logaddexp(x, x * 0.5)),
    Step("lerp", ("lerp",), lambda m, x, k: m.lerp(x, x * x, 0.25)),
    Step("addcmul", ("addcmul",), lambda m, x, k: m.addcmul(x, x, x, value=0.5)),
    Step("maximum", ("maximum",), lambda m, x, k: m.maximum(x, x * 0.5 + 0.01)),
    Step("where", ("where",), lambda m, x, k: m.where(x > 0, x, x * x)),
    Step("clamp", ("clamp",), lambda m, x, k: x.clamp(-0.7, 0.8)),
    Step("pow", ("pow",), lambda m, x, k: (x * x + 0.5) ** 1.5),
    Step("square", ("square",), lambda m, x, k: m.square(x)),
    # reductions and scans (keepdim where the dim goes, so the chain keeps a shape to work on)
    Step("sum_dim", ("sum",), lambda m, x, k: x.sum(_dim(x, k), keepdim=True) if x.dim() else x.sum()),
    Step("mean_dim", ("mean",), lambda m, x, k: x.mean(_dim(x, k), keepdim=bool(k % 2)) if x.dim() else x.mean()),
    Step("max_dim", ("max",), lambda m, x, k: x.max(_dim(x, k), keepdim=True).values if x.dim() else x.max()),
    Step("amax", ("amax",), lambda m, x, k: x.amax(_dim(x, k), keepdim=True) if x.dim() else x.amax()),
    Step("var", ("var",), lambda m, x, k: x.var(_dim(x, k), keepdim=True) if x.dim() and x.numel() > 4 else x),
    Step("logsumexp", ("logsumexp",), lambda m, x, k: m.logsumexp(x, _dim(x, k), keepdim=True) if x.dim() else x),
    Step("softmax", ("softmax",), lambda m, x, k: m.softmax(x, _dim(x, k)) if x.dim() else x),
    Step("log_softmax", ("log_softmax",), lambda m, x, k: x.log_softmax(_dim(x, k)) if x.dim() else x),
    Step("cumsum", ("cumsum",), lambda m, x, k: m.cumsum(x, _dim(x, k)) if x.dim() else x),
    Step("cumprod", ("cumprod",), lambda m, x, k: m.cumprod(x * 0.5 + 1, _dim(x, k)) if x.dim() else x),
    Step("prod", ("prod",), lambda m, x, k: (x * 0.5 + 1).prod(_dim(x, k), keepdim=True) if x.dim() else x),
    Step("norm", ("norm",), lambda m, x, k: x.norm(dim=_dim(x, k), keepdim=True) + x if x.dim() else x),
    # sorting and selection
    Step("sort", ("sort",), lambda m, x, k: m.sort(x, _dim(x, k), descending=bool(k % 2)).values if x.dim() else x),
    Step("topk", ("topk",), lambda m, x, k: x.topk(1, _dim(x, k)).values if x.dim() else x),
    Step("cummax", ("cummax",), lambda m, x, k: m.cummax(x, _dim(x, k)).values if x.dim() else x),
    # gathers, joins and copies
    Step("gather", ("gather",), lambda m, x, k: m.gather(x, 0, m.zeros_like(x, dtype=m.int64)) if x.dim() else x),
    Step("index_select", ("index_select",),
         lambda m, x, k: m.index_select(x, 0, m.tensor([0, 0])) if x.dim() and x.shape[0] else x),
    Step("flip", ("flip",), lambda m, x, k: m.flip(x, (_dim(x, k),)) if x.dim() else x),
    Step("roll", ("roll",), lambda m, x, k: m.roll(x, 1, _dim(x, k)) if x.dim() else x),
    Step("cat", ("cat",), lambda m, x, k: m.cat([x, x * 2], _dim(x, k)) if x.dim() else x),
    Step("stack", ("stack",), lambda m, x, k: m.stack([x, -x], 0).sum(0)),
    Step("repeat", ("repeat",), lambda m, x, k: x.repeat(*([2] + [1] * (x.dim() - 1))) if x.dim() else x),
    Step("tril", ("tril",), lambda m, x, k: m.tril(x) if x.dim() >= 2 else x),
    Step("masked_fill", ("masked_fill",), lambda m, x, k: x.masked_fill(x < 0, 0.5)),
    Step("getitem_mask", (), lambda m, x, k: x[x > 0] if k % 2 else x),
    Step("getitem_list", (), lambda m, x, k: x[[0, -1]] if x.dim() and x.shape[0] else x),
    # products
    Step("matmul_self", ("matmul",), lambda m, x, k: _square(m, x) @ _square(m, x).t()),
    Step("einsum_trace", ("einsum",), lambda m, x, k: m.einsum("ij,jk->ik", _square(m, x), _square(m, x))),
    Step("outer", ("outer",), lambda m, x, k: m.outer(x.reshape(-1)[:3], x.reshape(-1)[:2])),
    # views
    Step("transpose", ("transpose",), lambda m, x, k: x.transpose(0, -1) if x.dim() >= 2 else x),
    Step("slice", (), lambda m, x, k: x[1:] if x.dim() and x.shape[0] > 1 else x),
    Step("step_slice", (), lambda m, x, k: x[..., ::2] if x.dim() else x),
    Step("unsqueeze", ("unsqueeze",), lambda m, x, k: x.unsqueeze(0) if x.dim() < 4 else x),
    Step("flatten", ("flatten",), lambda m, x, k: x.flatten()),
    Step("movedim", ("movedim",), lambda m, x, k: m.movedim(x, 0, -1) if x.dim() else x),
    Step("diagonal", ("diagonal",), lambda m, x, k: x.diagonal() if x.dim() >= 2 else x),
    Step("chunk", ("chunk",), lambda m, x, k: x.chunk(2, 0)[0] if x.dim() and x.shape[0] else x),
    # in-place, on the value or through a view of it
    Step("mul_", (), _in_place("mul_", 1.5)),
    Step("add_", (), _in_place("add_", 0.25)),
    Step("clamp_", (), _in_place("clamp_", -0.5, 0.9)),
    Step("exp_", (), _in_place("exp_")),
    Step("sin_", ("sin_",), _in_place("sin_")),
]


def _available(step: Step) -> bool:
    return all(hasattr(ember, name) or hasattr(ember.Tensor, name) for name in step.needs)


AVAILABLE = [step for step in STEPS if _available(step)]
SHAPES = [(3,), (2, 3), (3, 2), (2, 2), (2, 1, 3), (4,), (2, 3, 2)]


def _run(lib, steps, values: np.ndarray):
    x = lib.tensor(values, dtype=lib.float64, requires_grad=True)
    y = x
    for step, k in steps:
        y = step.run(lib, y, k)
    weights = lib.tensor(np.linspace(0.5, 1.5, max(y.numel(), 1))[: y.numel()].reshape(tuple(y.shape)),
                         dtype=lib.float64)
    loss = (y * weights).sum()
    (grad,) = lib.autograd.grad(loss, x, create_graph=True)
    second = None
    if grad.requires_grad:  # torch's gradient of some ops on a dim of size 1 is a constant: its derivative is 0
        (second,) = lib.autograd.grad((grad * grad).sum(), x, allow_unused=True)
    return [loss, grad, second if second is not None else lib.zeros_like(x)]


@settings(max_examples=150)
@given(shape=st.sampled_from(SHAPES),
       chain=st.lists(st.tuples(st.integers(0, len(AVAILABLE) - 1), st.integers(0, 50)), min_size=2, max_size=6),
       seed=st.integers(0, 2 ** 16))
def test_random_compositions_agree_with_torch(shape, chain, seed):
    values = np.random.default_rng(seed).uniform(-1.5, 1.5, shape)
    steps = [(AVAILABLE[i], k) for i, k in chain]
    outcomes = []
    for lib in (torch, ember):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                outcomes.append([t.detach().numpy() for t in _run(lib, steps, values)])
        except (RuntimeError, IndexError, ValueError) as error:
            outcomes.append(type(error))
    theirs, mine = outcomes
    names = [step.name for step, _ in steps]
    if isinstance(theirs, type):
        assert mine is theirs or isinstance(mine, type), f"{names}: torch raised {theirs.__name__}, ember did not"
        return
    assert not isinstance(mine, type), f"{names}: ember raised {mine.__name__}, torch did not"
    for what, a, b in zip(("value", "gradient", "second derivative"), mine, theirs):
        assert a.shape == b.shape, f"{names}: {what} shape {a.shape} != torch's {b.shape}"
        np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-9, equal_nan=True, err_msg=f"{names}: {what}")


def test_every_step_is_available():
    missing = [step.name for step in STEPS if not _available(step)]
    assert not missing, f"steps whose ops ember lacks: {missing}"
