"""The short paths of recording and of the backward walk, each against torch on the same program."""
import numpy as np
import pytest
import torch

import ember


def _broadcasting_function(lib, on_arrays: bool):
    """A Function whose backward hands its second input a gradient of the first's shape: the walk sums it down."""

    class AddRow(lib.autograd.Function):
        backward_on_arrays = on_arrays

        @staticmethod
        def forward(ctx, x, row):
            return x + row

        @staticmethod
        def backward(ctx, grad):
            return grad, grad

    return AddRow


@pytest.mark.parametrize("on_arrays", [False, True])
@pytest.mark.parametrize("row_shape", [(4, 3), (3,), (1, 3), (2, 1, 3)])  # (4, 3): one new leading dim
def test_a_broadcast_gradient_is_summed_to_its_input_as_torch(on_arrays, row_shape):
    x = np.random.default_rng(0).standard_normal((2, 4, 3))
    row = np.random.default_rng(1).standard_normal(row_shape)
    grads = []
    for lib, arrays in ((ember, on_arrays), (torch, False)):
        a = lib.tensor(x, requires_grad=True)
        b = lib.tensor(row, requires_grad=True)
        (_broadcasting_function(lib, arrays).apply(a, b) * lib.tensor(x)).sum().backward()
        grads.append((a.grad.numpy(), b.grad.numpy()))
    for mine, theirs in zip(*grads):
        np.testing.assert_allclose(mine, theirs, rtol=1e-12)


def test_a_gradient_that_does_not_broadcast_names_the_input():
    class Wrong(ember.autograd.Function):
        backward_on_arrays = True

        @staticmethod
        def forward(ctx, scale, x):
            return x * scale

        @staticmethod
        def backward(ctx, grad):
            return None, np.ones((5, 2))

    x = ember.ones(2, 3, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"invalid gradient at index 1 - got \[5, 2\] but expected shape compatible "
                                           r"with \[2, 3\]"):
        Wrong.apply(2.0, x).sum().backward()


def _saves_output_and_input(lib):
    class ExpTimes(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, w):
            out = x.exp() * w
            ctx.save_for_backward(out, x, w)
            return out, x.exp()

        @staticmethod
        def backward(ctx, grad, grad_exp):
            out, x, w = ctx.saved_tensors
            return grad * out + grad_exp * x.exp(), grad * out / w

    return ExpTimes


def test_saved_outputs_and_inputs_come_back_for_double_backward_as_torch():
    x0 = np.linspace(-1, 1, 6).reshape(2, 3)
    results = []
    for lib in (ember, torch):
        x = lib.tensor(x0, requires_grad=True)
        w = lib.tensor(x0 + 3, requires_grad=True)
        out, e = _saves_output_and_input(lib).apply(x, w)
        gx, gw = lib.autograd.grad((out * out).sum() + e.sum(), (x, w), create_graph=True)
        (hx,) = lib.autograd.grad((gx * gw).sum(), x)
        results.append([t.detach().numpy() for t in (gx, gw, hx)])
    for mine, theirs in zip(*results):
        np.testing.assert_allclose(mine, theirs, rtol=1e-10)


def test_a_saved_output_modified_in_place_is_caught_as_torch():
    for lib in (ember, torch):
        x = lib.ones(3, requires_grad=True)
        out, _ = _saves_output_and_input(lib).apply(x, lib.full((3,), 2.0))
        loss = out.sum()
        with lib.no_grad():
            out.mul_(2)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            loss.backward()


def _scales_a_view_in_place(lib):
    class Double(lib.autograd.Function):
        @staticmethod
        def forward(ctx, view):
            view.mul_(2)
            ctx.mark_dirty(view)
            ctx.save_for_backward(view)
            return view

        @staticmethod
        def backward(ctx, grad):
            (view,) = ctx.saved_tensors
            return grad * 2 + 0 * view

    return Double


def test_a_dirty_view_saved_as_an_output_as_torch():
    grads = []
    for lib in (ember, torch):
        leaf = lib.arange(6.0, requires_grad=True)
        base = leaf * 1
        out = _scales_a_view_in_place(lib).apply(base[1:4])
        (out.sum() + base.sum()).backward()
        grads.append(leaf.grad.numpy())
    np.testing.assert_array_equal(*grads)


def test_a_gradient_summed_down_becomes_grad_without_a_copy(monkeypatch):
    """A bias's gradient, summed by the walk to the bias's shape, is the walk's own: .grad takes it (as torch)."""
    import ember.autograd.engine as engine

    made = []
    original = engine._copy_in_layout_of
    monkeypatch.setattr(engine, "_copy_in_layout_of", lambda like, data: (made.append(data), original(like, data))[1])
    bias = ember.zeros(3, requires_grad=True)
    held = ember.ones(2, 3)
    (held + bias).backward(held)  # add hands on the caller's gradient itself: the bias's is summed from it
    assert made == []
    np.testing.assert_array_equal(bias.grad.numpy(), [2.0, 2.0, 2.0])
    bias.grad.add_(1.0)  # .grad shares no memory with the caller's gradient
    assert held.tolist() == [[1.0] * 3] * 2


def test_the_table_of_summed_axes_stays_bounded():
    import ember.autograd.engine as engine

    x = ember.ones(1, requires_grad=True)
    for n in range(2, 1100):  # more pairs than the bound of shapes: the table is emptied rather than grown past its bound
        (x + ember.ones(n)).sum().backward()
    assert 0 < len(engine._SUMMED_AXES) <= 1024
    assert x.grad.item() == sum(range(2, 1100))


def _three_inputs(lib):
    class Blend(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a, b, c):
            ctx.seen = ctx.needs_input_grad
            scale = c if isinstance(c, float) else 1.0
            return a * 2.0 + (b * scale if isinstance(b, lib.Tensor) else scale)

        @staticmethod
        def backward(ctx, grad):
            return tuple(g if need else None for g, need in zip((grad * 2.0, grad * 1.0, None), ctx.needs_input_grad))

    return Blend


@pytest.mark.parametrize("kinds", ["leaf leaf number", "plain view number", "view plain plain", "plain plain number",
                                   "leaf number number", "number leaf plain"])
def test_three_inputs_record_as_torch(kinds):
    """Functions of three arguments take a path of their own through apply: needs_input_grad, the edges and the
    gradients are torch's whichever of them are tensors, views of tensors that require grad, or numbers."""
    results = []
    for lib in (ember, torch):
        base = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
        made = {"leaf": lambda: lib.tensor([0.5, 1.5, -1.0], requires_grad=True), "view": lambda: base[:],
                "plain": lambda: lib.tensor([4.0, 5.0, 6.0]), "number": lambda: 0.25}
        args = [made[k]() for k in kinds.split()]
        Blend = _three_inputs(lib)
        if not isinstance(args[0], lib.Tensor):  # the first input is always a tensor (a * 2.0)
            args[0] = lib.tensor([7.0, 8.0, 9.0], requires_grad=kinds.split()[1] == "leaf")
        out = Blend.apply(*args)
        needs = out.grad_fn.needs_input_grad if out.grad_fn is not None else None
        if out.requires_grad:
            out.sum().backward()
        grads = [a.grad.tolist() if isinstance(a, lib.Tensor) and a.is_leaf and a.grad is not None else None
                 for a in args] + [base.grad.tolist() if base.grad is not None else None]
        edges = None if out.grad_fn is None else [f is None for f, _ in out.grad_fn.next_functions]
        results.append((out.tolist(), out.requires_grad, needs, grads, edges))
    assert results[0] == results[1]
