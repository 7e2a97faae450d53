"""smooth_l1_loss and huber_loss, one node each, against torch: values and gradients of both operands bit for bit
(in torch's vectorised kernel's order of operations), at the kinks |input - target| = beta, with beta = 0,
broadcasting (and its warning), every reduction, half precision, and second derivatives."""
import warnings

import numpy as np
import pytest
import torch

import ember
from ember.autograd import gradcheck, gradgradcheck

LOSSES = [("smooth_l1_loss", "beta", 1.0), ("smooth_l1_loss", "beta", 0.7), ("huber_loss", "delta", 1.0),
          ("huber_loss", "delta", 0.7)]
# torch's vectorised loop takes 16 or 32 elements at a time and leaves the rest to a scalar loop whose order of
# operations differs in the last bit: whole multiples of 64 compare bit for bit
SIZE = 64 * 100


def _operands(size: int = SIZE, seed: int = 0) -> tuple:
    rng = np.random.default_rng(seed)
    x, y = rng.standard_normal(size) * 2, rng.standard_normal(size)
    x[:6] = y[:6] + np.array([0.7, -0.7, 1.0, -1.0, 0.0, -0.0])  # on the kinks, and equal pairs
    x[6:9], y[6:9] = [np.inf, -np.inf, 3.0], [0.0, 0.0, np.inf]
    return x, y


def _run(lib, name: str, x, y, dtype: str, upstream=None, **kwargs):
    """The loss, and the gradients of both operands under a fixed upstream gradient."""
    a = lib.tensor(x, dtype=getattr(lib, dtype), requires_grad=True)
    b = lib.tensor(y, dtype=getattr(lib, dtype), requires_grad=True)
    loss = getattr(lib.nn.functional, name)(a, b, **kwargs)
    weights = lib.tensor(upstream, dtype=loss.dtype) if loss.dim() else lib.tensor(0.37, dtype=loss.dtype)
    loss.backward(weights)
    return [t.detach().to(lib.float64).numpy() for t in (loss, a.grad, b.grad)] + [loss.grad_fn.name()]


def _assert_same(mine, theirs, ulps: int = 0) -> None:
    for got, want in zip(mine, theirs):
        if isinstance(want, str):
            assert got == want
            continue
        if ulps:  # torch's scalar loop (few or strided elements): the same formula, multiplied in another order
            np.testing.assert_allclose(got, want, rtol=ulps * np.finfo(got.dtype).eps, atol=0)
            continue
        same = (got == want) & (np.signbit(got) == np.signbit(want)) | (np.isnan(got) & np.isnan(want))
        assert same.all(), f"{(~same).sum()} differ, first at {np.flatnonzero(~same.ravel())[:5]}"


@pytest.mark.parametrize("name,option,size", LOSSES)
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_values_and_gradients_equal_torch_bit_for_bit(name, option, size, reduction, dtype):
    x, y = _operands()
    upstream = np.random.default_rng(1).standard_normal(SIZE)
    kwargs = {option: size, "reduction": reduction}
    _assert_same(_run(ember, name, x, y, dtype, upstream, **kwargs), _run(torch, name, x, y, dtype, upstream, **kwargs))


@pytest.mark.parametrize("name,option,size", LOSSES)
@pytest.mark.parametrize("shapes", [((), ()), ((0, 3), (0, 3)), ((4, 1), (1, 5)), ("t", "step"), ((64, 1), (64,))])
def test_zero_dim_empty_broadcast_and_non_contiguous_operands(name, option, size, shapes):
    rng = np.random.default_rng(2)
    if shapes[0] == "t":  # a transposed input and a strided target
        x, y = rng.standard_normal((5, 4)).T, rng.standard_normal((4, 10))[:, ::2]
    else:
        x, y = rng.standard_normal(shapes[0]), rng.standard_normal(shapes[1])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mine = _run(ember, name, x, y, "float64", **{option: size})
    with warnings.catch_warnings(record=True) as their_warnings:
        warnings.simplefilter("always")
        theirs = _run(torch, name, x, y, "float64", **{option: size})
    _assert_same(mine, theirs, ulps=16)  # (a broadcast operand's gradient is a sum, added in another order)
    assert [str(w.message) for w in caught] == [str(w.message).replace("torch", "ember") for w in their_warnings]


def test_smooth_l1_with_beta_zero_is_the_l1_loss_as_torchs():
    x, y = _operands(64)
    _assert_same(_run(ember, "smooth_l1_loss", x, y, "float32", beta=0.0)[:3],
                 _run(torch, "smooth_l1_loss", x, y, "float32", beta=0.0)[:3])


def test_huber_with_weight_equals_torchs():
    x, y = _operands(64)
    weight = np.random.default_rng(3).random(64)
    results = []
    for lib in (ember, torch):
        a = lib.tensor(x, requires_grad=True)
        lib.nn.functional.huber_loss(a, lib.tensor(y), weight=lib.tensor(weight), delta=0.5).backward()
        results.append(a.grad.numpy())
    np.testing.assert_array_equal(*results)


@pytest.mark.parametrize("name,option,size", LOSSES)
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_gradcheck_gradgradcheck_and_second_derivatives_equal_torchs(name, option, size, reduction):
    rng = np.random.default_rng(4)
    x, y = rng.standard_normal(7) * 2, rng.standard_normal(7)
    kwargs = {option: size, "reduction": reduction}
    a, b = ember.tensor(x, requires_grad=True), ember.tensor(y, requires_grad=True)

    def function(p, q):
        return getattr(ember.nn.functional, name)(p, q, **kwargs)
    assert gradcheck(function, (a, b)) and gradgradcheck(function, (a, b))
    seconds = []
    for lib in (ember, torch):
        p, q = lib.tensor(x, requires_grad=True), lib.tensor(y, requires_grad=True)
        loss = getattr(lib.nn.functional, name)(p, q, **kwargs)
        grads = lib.autograd.grad(loss.sum(), (p, q), create_graph=True)
        mixed = sum((g * lib.arange(7.0)).sum() for g in grads)
        seconds.append([g.detach().numpy() for g in grads + lib.autograd.grad(mixed, (p, q))])
    for mine, theirs in zip(*seconds):
        np.testing.assert_array_equal(mine, theirs)
