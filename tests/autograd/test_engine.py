"""The backward engine, proved against PyTorch 2.13.

Each program is written once against a module ``lib`` and run with torch and
with ember: values, gradients, grad_fn names and error messages must agree.
"""
import gc
import subprocess
import sys
import tracemalloc
import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import ember
from seed_functions import exp_function, inplace_double
from twins import both, both_raise, grad_fn_name, leaf, normalise, to_numpy


# ---------------------------------------------------------------- helpers


def f64(lib, values):
    return lib.tensor(values, dtype=lib.float64)


# ---------------------------------------------------------------- Tensor.backward and autograd.backward


def test_backward_of_a_scalar_accumulates_into_leaves():
    def program(lib):
        x = leaf(lib, [1.0, 2.0, 3.0])
        w = leaf(lib, 0.5)
        y = (x * w).tanh().sum()
        y.backward()
        return y, x.grad, w.grad, x.is_leaf, y.is_leaf

    both(program)


def test_backward_with_a_gradient_argument():
    def program(lib):
        x = leaf(lib, [[1.0, 2.0], [3.0, 4.0]])
        y = x * x
        y.backward(f64(lib, [[1.0, 0.5], [-1.0, 2.0]]))
        return x.grad

    both(program)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("shape", [(), (1,), (1, 1)])
def test_backward_creates_a_one_for_every_single_element_output(shape, dtype):
    def program(lib):
        x = leaf(lib, [1.0, -2.0, 3.0], dtype)
        y = (x * x).sum().reshape(shape)
        y.backward(retain_graph=True)
        first = x.grad.clone()
        y.backward()  # accumulates: the root gradient is a fresh one each time
        return first, x.grad  # compared with their dtypes

    both(program)


def test_backward_of_a_non_scalar_without_gradient_is_an_error():
    both_raise(lambda lib: (leaf(lib, [1.0, 2.0]) * 2).backward(), RuntimeError, "grad can be implicitly created only for scalar outputs")


def test_backward_gradient_of_wrong_shape_is_an_error():
    def program(lib):
        (leaf(lib, [1.0, 2.0]) * 2).backward(f64(lib, [1.0, 2.0, 3.0]))

    both_raise(program, RuntimeError, r"Mismatch in shape: grad_output\[0\] has a shape of .*3.* and output\[0\] has a shape of .*2")


def test_backward_of_a_tensor_without_grad_is_an_error():
    both_raise(lambda lib: lib.ones(2).sum().backward(), RuntimeError, "element 0 of tensors does not require grad and does not have a grad_fn")


def test_backward_of_a_leaf_itself():
    def program(lib):
        x = leaf(lib, [1.0, 2.0])
        x.backward(f64(lib, [3.0, 4.0]))
        return x.grad

    both(program)


def test_gradients_accumulate_across_calls():
    def program(lib):
        x = leaf(lib, [1.0, -2.0])
        (x * x).sum().backward()
        first = x.grad.clone()
        (x * 3).sum().backward()
        (x ** 3).sum().backward()
        return first, x.grad

    both(program)


def test_accumulated_grad_is_not_shared_with_the_incoming_gradient():
    def program(lib):
        x = leaf(lib, [1.0, 2.0])
        g = f64(lib, [5.0, 6.0])
        x.backward(g)
        x.grad.mul_(0)  # must not change g
        return g, x.grad

    both(program)


def test_grad_can_be_reset_to_none_or_zeroed():
    def program(lib):
        x = leaf(lib, [1.0, 2.0])
        (x * 2).sum().backward()
        x.grad = None
        (x * 3).sum().backward()
        first = x.grad.clone()
        x.grad.zero_()
        (x * 4).sum().backward()
        return first, x.grad

    both(program)


def test_a_tensor_used_twice_gets_the_sum_of_both_paths():
    def program(lib):
        x = leaf(lib, [1.0, 2.0])
        y = x * 2
        z = y * y + y.exp() + x
        z.sum().backward()
        return x.grad

    both(program)


def logged(lib, log: list, name: str):
    """An identity Function that logs its name when its backward runs."""

    class Logged(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, grad):
            log.append(name)
            return grad

    return Logged.apply


def test_each_node_runs_once_after_every_node_that_uses_its_output():
    """Branches of different lengths meet again: a node may run only when all its gradients are in."""

    def program(lib):
        log = []
        x = leaf(lib, [1.0, 2.0])
        a = logged(lib, log, "a")(x)
        long = a
        for i in range(5):
            long = logged(lib, log, f"long{i}")(long * 1.5)
        short = logged(lib, log, "short")(a.exp())
        out = logged(lib, log, "out")(long + short + a)
        out.sum().backward()
        return x.grad, log

    x_grad, log = both(program, prepare=lambda r: (to_numpy(r[0]), sorted(r[1])))
    ember_log = program(ember)[1]
    assert len(ember_log) == len(set(ember_log)) == 8
    assert ember_log[0] == "out" and ember_log[-1] == "a"
    assert ember_log.index("long0") > ember_log.index("long4")


@pytest.mark.parametrize("create_graph", [False, True])
def test_0d_gradients_summed_at_a_join_stay_arrays(create_graph):
    """NumPy adds two 0-d arrays into a scalar; the formula after the join must still get an array."""

    def program(lib):
        x = leaf(lib, 0.5)
        r = x.relu()
        (g,) = lib.autograd.grad(r * 2 + r * 3, x, create_graph=create_graph)
        return g if not create_graph else (g, lib.autograd.grad(g * g, x, allow_unused=True, materialize_grads=True))

    both(program)


def test_a_chain_that_forks_and_joins_again():
    def program(lib):
        x = leaf(lib, [0.5, -1.0])
        y = x
        for _ in range(3):
            y = y * 1.1
        left, right = y * 2, y.tanh()
        z = left
        for _ in range(4):
            z = z + 0.5
        return lib.autograd.grad((z * right).sum(), x)

    both(program)


def test_several_roots_one_of_them_an_ancestor_of_another():
    def program(lib):
        x = leaf(lib, [1.0, 2.0])
        y = x * 3
        z = y.exp() * y
        lib.autograd.backward([z, y], [f64(lib, [1.0, 0.5]), f64(lib, [2.0, -1.0])])
        return x.grad

    both(program)


def test_backward_with_inputs_only_fills_those():
    def program(lib):
        a = leaf(lib, [1.0, 2.0])
        b = leaf(lib, [3.0, 4.0])
        (a * b).sum().backward(inputs=[b])
        return a.grad, b.grad

    both(program)


def test_backward_with_a_non_leaf_input_fills_its_grad():
    def program(lib):
        a = leaf(lib, [1.0, 2.0])
        h = a * 3
        (h * h).sum().backward(inputs=[h, a])
        return h.grad, a.grad

    both(program)


def test_backward_with_empty_inputs_is_an_error():
    both_raise(lambda lib: (leaf(lib, [1.0]) * 2).sum().backward(inputs=[]), RuntimeError, "cannot be empty")


def test_autograd_backward_of_several_tensors():
    def program(lib):
        x = leaf(lib, [1.0, 2.0])
        a = x * 2
        b = x.exp()
        lib.autograd.backward([a, b], [f64(lib, [1.0, 1.0]), f64(lib, [0.5, 2.0])], retain_graph=True)
        lib.autograd.backward(a.sum())
        return x.grad

    both(program)


def test_retain_graph_and_a_second_backward():
    def program(lib):
        x = leaf(lib, [1.0, 2.0])
        y = (x.exp() * x).sum()
        y.backward(retain_graph=True)
        y.backward()
        return x.grad

    both(program)


def test_second_backward_without_retain_graph_is_an_error():
    def program(lib):
        x = leaf(lib, [1.0, 2.0])
        y = (x.exp() * x).sum()
        y.backward()
        y.backward()

    both_raise(program, RuntimeError, "Trying to backward through the graph a second time")


@pytest.mark.parametrize("dtype", ("float64", "float16"))
@pytest.mark.parametrize("factor", (3, 0.5, True))
def test_second_backward_through_a_product_with_a_number_is_an_error(factor, dtype):
    # torch saves the number (as a tensor) for the gradient, so it too is freed by the first backward
    def program(lib):
        x = leaf(lib, [1.0, 2.0], dtype)
        y = (x * factor).sum()
        y.backward()
        y.backward()

    both_raise(program, RuntimeError, "Trying to backward through the graph a second time")


def _write_a_slice(lib, x):
    y = x.clone()
    y[0:1] = 5.0
    return y.sum()


def _add_into_a_column(lib, x):
    y = x.clone()
    y[:, 1] += 1
    return y.sum()


# Losses whose nodes keep something the first backward frees, as torch's do: the indices or targets they save,
# a CopySlices node's function (an in-place change seen through a view) and a product's number
FREED_BY_A_BACKWARD = {
    "advanced index": lambda lib, x: x[[0, 1, 0]].sum(),
    "cross_entropy": lambda lib, x: lib.nn.functional.cross_entropy(x, lib.tensor([0, 1])),
    "cross_entropy smoothed": lambda lib, x: lib.nn.functional.cross_entropy(x, lib.tensor([0, 1]), label_smoothing=0.1),
    "cross_entropy of probabilities": lambda lib, x: lib.nn.functional.cross_entropy(x, x.detach().softmax(1)),
    "nll_loss": lambda lib, x: lib.nn.functional.nll_loss(x, lib.tensor([1, 0])),
    "nll_loss sum": lambda lib, x: lib.nn.functional.nll_loss(x, lib.tensor([1, 0]), reduction="sum"),
    "sort": lambda lib, x: x.sort(1).values.sum(),
    "topk": lambda lib, x: x.topk(1).values.sum(),
    "kthvalue": lambda lib, x: x.kthvalue(1, 1).values.sum(),
    "median": lambda lib, x: x.median(1).values.sum(),
    "max along a dim": lambda lib, x: x.max(1).values.sum(),
    "gather": lambda lib, x: x.gather(1, lib.tensor([[1], [0]])).sum(),
    "max_pool2d": lambda lib, x: lib.nn.functional.max_pool2d(x[None, None], 2).sum(),
    "max_pool2d with padding": lambda lib, x: lib.nn.functional.max_pool2d(x[None, None], 2, 1, 1).sum(),
    "index_put": lambda lib, x: x.index_put((lib.tensor([0]),), lib.tensor(5.0, dtype=lib.float64)).sum(),
    "write a slice": _write_a_slice,
    "add into a column": _add_into_a_column,
    "product with a number": lambda lib, x: (2.5 * x).sum(),
}


@pytest.mark.parametrize("name", FREED_BY_A_BACKWARD)
def test_second_backward_through_what_the_first_frees_is_an_error(name):
    def program(lib):
        x = lib.tensor([[1.0, 2.0], [0.5, 3.0]], dtype=lib.float64, requires_grad=True)
        y = FREED_BY_A_BACKWARD[name](lib, x)
        y.backward()
        y.backward()

    both_raise(program, RuntimeError, "Trying to backward through the graph a second time")


@pytest.mark.parametrize("name", FREED_BY_A_BACKWARD)
def test_what_the_first_backward_frees_is_kept_with_retain_graph(name):
    def program(lib):
        x = lib.tensor([[1.0, 2.0], [0.5, 3.0]], dtype=lib.float64, requires_grad=True)
        y = FREED_BY_A_BACKWARD[name](lib, x)
        y.backward(retain_graph=True)
        y.backward()
        return x.grad

    both(program)


def test_create_graph_gives_a_differentiable_grad():
    def program(lib):
        x = leaf(lib, [1.0, 2.0])
        (x ** 3).sum().backward(create_graph=True)
        g = x.grad
        requires = g.requires_grad
        x.grad = None
        g.sum().backward()
        return requires, grad_fn_name(g) is not None, x.grad

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # torch warns about the x <-> x.grad cycle
        both(program)


# ---------------------------------------------------------------- autograd.grad


def test_grad_returns_gradients_without_touching_grad():
    def program(lib):
        x = leaf(lib, [1.0, 2.0])
        w = leaf(lib, [3.0, -1.0])
        y = (x * w).sum()
        gx, gw = lib.autograd.grad(y, [x, w])
        return gx, gw, x.grad, w.grad

    both(program)


def test_grad_with_grad_outputs_and_several_outputs():
    def program(lib):
        x = leaf(lib, [1.0, 2.0])
        a, b = x * 2, x * x
        return lib.autograd.grad([a, b], x, grad_outputs=[f64(lib, [1.0, -1.0]), f64(lib, [2.0, 3.0])])

    both(program)


def test_grad_of_a_non_leaf_input():
    def program(lib):
        x = leaf(lib, [1.0, 2.0])
        h = x.exp()
        y = (h * h).sum()
        (gh,) = lib.autograd.grad(y, h, retain_graph=True)
        gx, gh2 = lib.autograd.grad(y, [x, h])
        return gh, gx, gh2

    both(program)


def test_grad_of_an_intermediate_that_is_also_an_output():
    def program(lib):
        x = leaf(lib, [1.0, 2.0])
        y = x * 3
        return lib.autograd.grad(y, y, grad_outputs=f64(lib, [1.0, 2.0]))

    both(program)


def test_grad_allow_unused_and_materialize_grads():
    def program(lib):
        x = leaf(lib, [1.0, 2.0])
        unused = leaf(lib, [5.0])
        y = (x * 2).sum()
        none = lib.autograd.grad(y, [x, unused], retain_graph=True, allow_unused=True)
        zeros = lib.autograd.grad(y, [x, unused], materialize_grads=True)
        return none[1] is None, none[0], zeros

    both(program)


def test_grad_of_an_unused_input_is_an_error():
    def program(lib):
        x = leaf(lib, [1.0])
        lib.autograd.grad((x * 2).sum(), [x, leaf(lib, [2.0])])

    both_raise(program, RuntimeError, "The differentiated Tensor at index 1 appears to not have been used in the graph", "allow_unused=True")


def test_grad_of_an_input_that_does_not_require_grad_is_an_error():
    def program(lib):
        x = leaf(lib, [1.0])
        lib.autograd.grad((x * 2).sum(), lib.ones(1))

    both_raise(program, RuntimeError, "One of the differentiated Tensors does not require grad")


def test_grad_names_an_output_that_does_not_require_grad_before_such_an_input():
    both_raise(lambda lib: lib.autograd.grad(lib.ones(1).sum(), lib.ones(1)), RuntimeError,
               "element 0 of tensors does not require grad and does not have a grad_fn")


def test_grad_frees_the_graph_unless_retained():
    def program(lib):
        x = leaf(lib, [1.0, 2.0])
        y = (x.exp()).sum()
        lib.autograd.grad(y, x)
        lib.autograd.grad(y, x)

    both_raise(program, RuntimeError, "backward through the graph a second time")


def test_grad_is_grads_batched_gives_jacobian_rows():
    def program(lib):
        x = leaf(lib, [1.0, 2.0, 3.0])
        (jacobian,) = lib.autograd.grad(x * x.sum(), x, grad_outputs=lib.eye(3, dtype=lib.float64), is_grads_batched=True)
        return jacobian

    both(program)


def test_grad_is_grads_batched_with_create_graph_gives_a_differentiable_jacobian():
    def program(lib):
        x = leaf(lib, [1.0, 2.0])
        (jacobian,) = lib.autograd.grad(
            x ** 3, x, grad_outputs=lib.eye(2, dtype=lib.float64), is_grads_batched=True, create_graph=True
        )
        (second,) = lib.autograd.grad((jacobian * f64(lib, [[1.0, 2.0], [3.0, 4.0]])).sum(), x)
        return jacobian, second

    both(program)


def test_grad_is_grads_batched_with_several_outputs():
    def program(lib):
        x = leaf(lib, [1.0, 2.0])
        batch = [f64(lib, [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]), f64(lib, [1.0, 2.0, 3.0])]
        return lib.autograd.grad([x * 2, (x * x).sum()], x, grad_outputs=batch, is_grads_batched=True)

    both(program)


def test_grad_is_grads_batched_names_the_grad_output_whose_shape_after_the_batch_dim_differs():
    def program(lib):
        x = leaf(lib, [1.0, 2.0, 3.0])
        return lib.autograd.grad(x * 2, x, grad_outputs=lib.ones(3, dtype=lib.float64), is_grads_batched=True)

    both_raise(program, RuntimeError, r"first dimension of each grad_output as the batch dimension.*"
               r"grad_output\[0\] has a shape of .*\[\]\)? and output\[0\] has a shape of .*\[3\]")


def test_backward_inputs_that_do_not_require_grad_is_an_error():
    both_raise(lambda lib: (leaf(lib, [1.0]) * 2).sum().backward(inputs=[lib.ones(1)]), RuntimeError, "can't retain_grad on Tensor that has requires_grad=False")


def test_grad_create_graph_second_and_third_derivatives():
    def program(lib):
        x = leaf(lib, [0.5, -1.0, 2.0])
        y = (x.tanh() * x.exp()).sum()
        (g,) = lib.autograd.grad(y, x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x, create_graph=True)
        (ggg,) = lib.autograd.grad(gg.sum(), x)
        return g, gg, ggg, grad_fn_name(g)

    both(program)


def test_grad_only_runs_the_part_of_the_graph_it_needs():
    """A node that lies only on the path to another input is not run (its backward would raise)."""

    def program(lib):
        class Explodes(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 1

            @staticmethod
            def backward(ctx, grad):
                raise AssertionError("must not run")

        x = leaf(lib, [1.0])
        w = leaf(lib, [2.0])
        y = (Explodes.apply(x) * w).sum()
        return lib.autograd.grad(y, w)

    both(program)


@settings(max_examples=20, deadline=None)
@given(
    shapes=st.sampled_from([((), ()), ((3,), ()), ((2, 3), (3,)), ((2, 1), (1, 4)), ((0, 3), (3,)), ((1,), (2, 2))]),
    seed=st.integers(0, 2**16),
)
def test_broadcast_gradients_are_summed_to_input_shapes(shapes, seed):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(s) for s in shapes]

    def program(lib):
        a, b = (lib.tensor(arr, requires_grad=True) for arr in arrays)
        ((a * b + a).exp() * b).sum().backward()
        return a.grad, b.grad

    both(program)


def test_gradient_through_non_contiguous_inputs():
    def program(lib):
        base = leaf(lib, np.arange(12.0).reshape(3, 4) / 10)
        t = base.t()  # non-contiguous
        y = (t * f64(lib, np.arange(3.0))).exp().sum()
        (g,) = lib.autograd.grad(y, base)
        return g, t.is_contiguous()

    both(program)


def test_float32_leaf_gets_a_float32_grad():
    def program(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        (x.double() * 3).sum().backward()
        return x.grad

    both(program)


# ---------------------------------------------------------------- retain_grad and hooks


def test_retain_grad_on_a_non_leaf():
    def program(lib):
        x = leaf(lib, [1.0, 2.0])
        h = x * 3
        h.retain_grad()
        (h * h).sum().backward(retain_graph=True)
        first = h.grad.clone()
        (h * h).sum().backward()
        return first, h.grad, h.retains_grad, x.grad

    both(program)


def test_grad_of_a_non_leaf_without_retain_grad_warns_and_is_none():
    for lib in (torch, ember):
        h = leaf(lib, [1.0]) * 2
        h.sum().backward()
        with pytest.warns(UserWarning, match="Tensor that is not a leaf Tensor is being accessed"):
            assert h.grad is None


def test_hook_on_a_leaf_changes_what_is_accumulated():
    def program(lib):
        x = leaf(lib, [1.0, 2.0])
        seen = []
        x.register_hook(lambda g: seen.append(g.clone()))
        handle = x.register_hook(lambda g: g * 10)
        (x * x).sum().backward()
        handle.remove()
        (x * x).sum().backward()
        return seen, x.grad

    both(program)


def test_hook_on_a_non_leaf_changes_the_gradient_flowing_on():
    def program(lib):
        x = leaf(lib, [1.0, 2.0])
        h = x.exp()
        h.register_hook(lambda g: g * f64(lib, [0.0, 2.0]))
        (h * 3).sum().backward()
        return x.grad

    both(program)


def test_hooks_on_a_non_leaf_with_retain_grad_see_the_hooked_gradient():
    def program(lib):
        x = leaf(lib, [1.0, 2.0])
        h = x * 2
        h.register_hook(lambda g: g + 1)
        h.retain_grad()
        h.sum().backward()
        return h.grad, x.grad

    both(program)


def test_retain_grad_sees_the_gradient_after_all_hooks():
    def program(lib):
        x = leaf(lib, [1.0, 2.0])
        h = x * 2
        h.retain_grad()
        h.register_hook(lambda g: g + 1)  # registered later, still runs before retain_grad's
        h.sum().backward()
        return h.grad, x.grad

    both(program)


def test_retain_grad_follows_the_tensor_through_in_place_changes():
    def program(lib):
        x = leaf(lib, [[1.0, 2.0], [3.0, 4.0]])
        h = x * 2
        h.retain_grad()
        h.mul_(3)  # h.grad is the gradient of this new version
        h[0].add_(1)  # and of this one, changed through a view
        (h * h).sum().backward()
        return h.grad, x.grad

    both(program)


def test_retain_grad_on_a_view_changed_in_place():
    def program(lib):
        x = leaf(lib, [[1.0, 2.0], [3.0, 4.0]])
        h = x * 2
        v = h[0]
        v.retain_grad()
        v.mul_(3)
        (h * h).sum().backward()  # the new v is not on this path: torch leaves v.grad None
        return v.grad, x.grad

    both(program)


def test_grad_of_a_non_leaf_with_a_hook_returns_the_gradient_before_the_hook():
    def program(lib):
        x = leaf(lib, [1.0, 2.0])
        h = x * 3
        h.register_hook(lambda g: g * 2)  # changes what flows on to x, not what grad returns for h
        y = (h * h).sum()
        return lib.autograd.grad(y, [h, x])

    both(program)


def test_grad_of_a_leaf_with_a_hook_returns_the_hooked_gradient():
    def program(lib):
        x = leaf(lib, [1.0, 2.0])
        x.register_hook(lambda g: g * 2)
        return lib.autograd.grad((x * x).sum(), x)

    both(program)


@pytest.mark.parametrize("where", ["leaf", "non_leaf"])
def test_a_hook_that_changes_the_shape_is_an_error(where):
    def program(lib):
        x = leaf(lib, [1.0, 2.0])
        target = x if where == "leaf" else x * 2
        target.register_hook(lambda g: g[:1])
        (target * 3).sum().backward()

    both_raise(program, RuntimeError, "hook '<lambda>' has changed the size of value")


def test_a_hook_that_returns_a_non_tensor_is_an_error():
    def program(lib):
        x = leaf(lib, [1.0, 2.0])
        x.register_hook(lambda g: 3)
        (x * 2).sum().backward()

    both_raise(program, TypeError, "hook.*int")


def test_post_accumulate_grad_hook_must_return_none():
    def program(lib):
        x = leaf(lib, [1.0, 2.0])
        x.register_post_accumulate_grad_hook(lambda t: t.grad)
        (x * 2).sum().backward()

    both_raise(program, RuntimeError, "post accumulate grad hooks should return None")


def test_create_graph_does_not_let_grad_alias_the_callers_gradient():
    def program(lib):
        x = leaf(lib, [1.0, 2.0])
        g = f64(lib, [1.0, 1.0])
        (x + 1).backward(g, create_graph=True)  # AddBackward passes g through unchanged
        (x * 2).sum().backward()  # accumulates into x.grad in place: g must stay as it was
        return g, x.grad

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        both(program)


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "expanded", "strided"])
def test_accumulated_grad_has_the_layout_of_its_leaf(layout):
    def program(lib):
        if layout == "contiguous":
            x = leaf(lib, [[1.0, 2.0], [3.0, 4.0]])
        elif layout == "transposed":
            x = lib.ones(3, 2, dtype=lib.float64).t().requires_grad_()
        elif layout == "expanded":
            x = lib.ones(1, 3, dtype=lib.float64).expand(2, 3).detach().requires_grad_()
        else:
            x = lib.ones(4, 6, dtype=lib.float64)[::2, ::2].detach().requires_grad_()
        (x.t() * f64(lib, [1.0, 2.0])[: x.shape[0]]).sum().backward()
        return x.grad, x.grad.is_contiguous(), x.grad.stride()

    both(program)


def test_register_hook_on_a_tensor_without_grad_is_an_error():
    both_raise(lambda lib: lib.ones(2).register_hook(lambda g: g), RuntimeError, "cannot register a hook on a tensor that doesn't require gradient")


def test_grad_fn_hook_and_prehook():
    def program(lib):
        x = leaf(lib, [1.0, 2.0])
        y = x * 3
        calls = []

        def prehook(grad_outputs):
            calls.append(("pre", to_numpy(grad_outputs)))
            return (grad_outputs[0] * 2,)

        def hook(grad_inputs, grad_outputs):
            calls.append(("post", to_numpy(grad_inputs), to_numpy(grad_outputs)))

        y.grad_fn.register_prehook(prehook)
        y.grad_fn.register_hook(hook)
        y.sum().backward()
        return calls, x.grad

    both(program)


def test_grad_fn_hook_can_replace_grad_inputs():
    def program(lib):
        x = leaf(lib, [1.0, 2.0])
        w = leaf(lib, [3.0, 4.0])
        y = x * w
        y.grad_fn.register_hook(lambda grad_inputs, grad_outputs: (grad_inputs[0] * 0, grad_inputs[1]))
        y.sum().backward()
        return x.grad, w.grad

    both(program)


@pytest.mark.parametrize("op", [
    lambda lib, a: a.clone(), lambda lib, a: a.sum(0), lambda lib, a: a.pow(2), lambda lib, a: a.clamp(0, 1),
    lambda lib, a: a.reshape(2, 1), lambda lib, a: a.to(lib.float32), lambda lib, a: a.softmax(0),
    lambda lib, a: a[0], lambda lib, a: lib.cat([a, a * 3]), lambda lib, a: a * 2,
])
def test_grad_fn_hooks_see_the_gradients_of_the_inputs_next_functions_lists(op):
    # the numbers and options an op takes have no place in grad_inputs: torch's documented hook
    # ``lambda gI, gO: (gO[0] * 2,)`` on a clone returns one gradient
    def program(lib):
        a = leaf(lib, [1.0, 2.0])
        y = op(lib, a)
        seen = []

        def hook(grad_inputs, grad_outputs):
            seen.append(len(grad_inputs))
            return tuple(None if g is None else g * 10 for g in grad_inputs)

        y.grad_fn.register_hook(hook)
        y.sum().backward()
        return seen, a.grad

    both(program)


def test_a_custom_function_s_hooks_skip_its_number_arguments():
    def program(lib):
        class Scale(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, k, z):
                ctx.k = k
                return x * k + z

            @staticmethod
            def backward(ctx, g):
                return g * ctx.k, None, g

        a, z = leaf(lib, [1.0, 2.0]), leaf(lib, [0.5, 0.5])
        y = Scale.apply(a, 3.0, z)
        y.grad_fn.register_hook(lambda grad_inputs, grad_outputs: (grad_inputs[0], grad_inputs[1] * 0))
        y.sum().backward()
        return a.grad, z.grad

    both(program)


def test_post_accumulate_grad_hook():
    def program(lib):
        x = leaf(lib, [1.0, 2.0])
        seen = []
        x.register_post_accumulate_grad_hook(lambda t: seen.append(to_numpy(t.grad)))
        (x * 2).sum().backward()
        (x * 3).sum().backward()
        return seen

    both(program)


@pytest.mark.parametrize("how", ["inputs", "create_graph", "used_twice", "with_tensor_hook"])
def test_post_accumulate_grad_hook_runs_once_after_the_total_is_stored(how):
    def program(lib):
        x = leaf(lib, [1.0, 2.0])
        w = leaf(lib, [3.0, 4.0])
        seen = []
        x.register_post_accumulate_grad_hook(lambda t: seen.append(to_numpy(t.grad)))
        if how == "with_tensor_hook":
            x.register_hook(lambda g: g * 10)
        y = (x * w).sum() + (x * x).sum() if how in ("used_twice", "with_tensor_hook") else (x * w).sum()
        if how == "inputs":
            y.backward(inputs=[x])
        else:
            y.backward(create_graph=how == "create_graph")
        return seen, w.grad

    both(program)


# ---------------------------------------------------------------- grad modes


@pytest.mark.parametrize("mode", ["no_grad", "inference_mode", "set_grad_enabled_false"])
def test_grad_off_modes_as_context_managers(mode):
    def program(lib):
        x = leaf(lib, [1.0])
        switch = {
            "no_grad": lib.no_grad,
            "inference_mode": lib.inference_mode,
            "set_grad_enabled_false": lambda: lib.set_grad_enabled(False),
        }[mode]
        with switch():
            y = x * 2
            inside = lib.is_grad_enabled()
        return y.requires_grad, y.grad_fn is None, inside, lib.is_grad_enabled(), (x * 2).requires_grad

    assert both(program) == (False, True, False, True, True)


@pytest.mark.parametrize("mode", ["no_grad", "inference_mode", "set_grad_enabled_false"])
def test_grad_off_modes_as_decorators(mode):
    def program(lib):
        decorator = {
            "no_grad": lib.no_grad,
            "inference_mode": lib.inference_mode,
            "set_grad_enabled_false": lambda: lib.set_grad_enabled(False),
        }[mode]()
        enabled_after_making_decorator = lib.is_grad_enabled()

        @decorator
        def double(t):
            return t * 2, lib.is_grad_enabled()

        x = leaf(lib, [1.0])
        y, inside = double(x)
        return enabled_after_making_decorator, y.requires_grad, inside, lib.is_grad_enabled()

    # set_grad_enabled switches at once, even when only made to be a decorator (as torch)
    assert both(program) == (mode != "set_grad_enabled_false", False, False, True)


def test_no_grad_used_as_a_bare_decorator():
    def program(lib):
        @lib.no_grad
        def double(t):
            return t * 2

        return double(leaf(lib, [1.0])).requires_grad

    assert both(program) is False


def test_enable_grad_inside_no_grad_and_as_decorator():
    def program(lib):
        x = leaf(lib, [1.0])

        @lib.enable_grad()
        def double(t):
            return t * 2

        with lib.no_grad():
            with lib.enable_grad():
                a = x * 2
            b = double(x)
            c = x * 2
        return a.requires_grad, b.requires_grad, c.requires_grad

    assert both(program) == (True, True, False)


def test_set_grad_enabled_takes_effect_as_a_function_call():
    def program(lib):
        x = leaf(lib, [1.0])
        lib.set_grad_enabled(False)
        try:
            off = (x * 2).requires_grad
        finally:
            lib.set_grad_enabled(True)
        return off, (x * 2).requires_grad

    assert both(program) == (False, True)


def test_modes_restore_after_an_exception():
    def program(lib):
        with pytest.raises(ValueError):
            with lib.no_grad():
                raise ValueError
        with pytest.raises(ValueError):
            with lib.inference_mode():
                raise ValueError
        return lib.is_grad_enabled(), lib.is_inference_mode_enabled()

    assert both(program) == (True, False)


def test_inference_mode_flag_and_inference_mode_false():
    def program(lib):
        with lib.inference_mode():
            inside = lib.is_inference_mode_enabled()
            with lib.inference_mode(False):
                nested = lib.is_inference_mode_enabled(), lib.is_grad_enabled()
        return inside, nested, lib.is_inference_mode_enabled()

    assert both(program) == (True, (False, True), False)


def test_decorated_generator_function_keeps_grad_off_while_it_runs():
    def program(lib):
        @lib.no_grad()
        def steps():
            for _ in range(2):
                yield lib.is_grad_enabled()

        return list(steps()), lib.is_grad_enabled()

    both(program)


# ---------------------------------------------------------------- in-place operations


def test_in_place_on_a_leaf_requiring_grad_is_an_error():
    both_raise(lambda lib: leaf(lib, [1.0]).add_(1), RuntimeError, "a leaf Variable that requires grad is being used in an in-place operation")


def test_setitem_on_a_leaf_requiring_grad_is_an_error():
    def program(lib):
        x = leaf(lib, [1.0, 2.0])
        x[0] = 5.0

    both_raise(program, RuntimeError, "a leaf Variable that requires grad is being used in an in-place operation")


def test_in_place_on_a_view_of_a_leaf_requiring_grad_is_an_error():
    both_raise(lambda lib: leaf(lib, [[1.0, 2.0]])[0].mul_(2), RuntimeError, "a view of a leaf Variable that requires grad is being used in an in-place operation")


def test_in_place_on_a_leaf_under_no_grad_is_allowed():
    def program(lib):
        x = leaf(lib, [1.0, 2.0])
        with lib.no_grad():
            x.mul_(2)
            x[0] = 7.0
        (x * x).sum().backward()
        return x, x.grad, x.is_leaf, x._version

    both(program)


INPLACE_PROGRAMS = {
    "setitem_number": lambda lib, x, y: x.__setitem__(0, 5.0),
    "setitem_tensor": lambda lib, x, y: x.__setitem__(0, y[0] * 2),
    "setitem_slice": lambda lib, x, y: x.__setitem__((slice(None), 1), y[1]),
    "transpose_mul_": lambda lib, x, y: x.t().mul_(2),
    "slice_add_tensor": lambda lib, x, y: x[1:].add_(y[:2]),
    "row_view_mul_tensor": lambda lib, x, y: x[2].mul_(y[0]),
    "chained_views": lambda lib, x, y: x[1:].t()[0].sub_(y[0, :2]),
    "whole_mul_": lambda lib, x, y: x.mul_(y),
    "div_and_exp": lambda lib, x, y: x.div_(y.exp()),
    "iadd": lambda lib, x, y: x.__iadd__(y),
    "clamp_": lambda lib, x, y: x.clamp_(-0.5, 0.5),
    "zero_row": lambda lib, x, y: x[0].zero_(),
    "fill_column": lambda lib, x, y: x[:, 0].fill_(3.0),
    "copy_into_view": lambda lib, x, y: x[1].copy_(y[2]),
    "unsqueeze_view": lambda lib, x, y: x.unsqueeze(0)[0, 1].mul_(3),
    "overlapping_views": lambda lib, x, y: (x[0].mul_(y[0]), x[:, 0].add_(y[:, 1])),
    "setitem_mask": lambda lib, x, y: x.__setitem__(x > 0, y[x > 0]),
    "setitem_index_list": lambda lib, x, y: x.__setitem__([0, 2], y[1]),
    "chain_on_one_tensor": lambda lib, x, y: x.mul_(2).add_(y).div_(3),
    "flat_view_slice": lambda lib, x, y: x.view(-1)[3:7].mul_(y.view(-1)[:4]),
    "copy_expanded": lambda lib, x, y: x.copy_(y[0].expand(3, 3)),
    "permuted_view": lambda lib, x, y: x.view(3, 3, 1).permute(2, 0, 1)[0, 1].mul_(y[2]),
    # a view taken before its base changes, used afterwards: it must see (and differentiate) the new values
    "view_used_after_base_changes": lambda lib, x, y: (lambda v: (x.add_(1), x.mul_(y), v * 2)[-1])(x[0]),
    "view_of_view_used_after": lambda lib, x, y: (lambda v: (v[0].mul_(3), v)[-1])(x[1:]),
}


@pytest.mark.parametrize("case", sorted(INPLACE_PROGRAMS))
def test_in_place_on_non_leaf_tensors_and_views(case):
    """``x = a * 1`` is changed in place (directly or through a view); the gradients of a and y agree with torch."""

    def program(lib):
        a = lib.tensor(np.arange(9.0).reshape(3, 3) / 4 - 1, requires_grad=True)
        y = lib.tensor(np.linspace(0.5, 2.0, 9).reshape(3, 3), requires_grad=True)
        x = a * 1
        version = x._version
        extra = INPLACE_PROGRAMS[case](lib, x, y)
        weights = f64(lib, np.arange(1.0, 10.0).reshape(3, 3))
        loss = (x * x * weights).sum()
        if isinstance(extra, (torch.Tensor, ember.Tensor)):
            loss = loss + (extra * extra).sum()
        loss.backward()
        return x, a.grad, y.grad, x._version > version, grad_fn_name(x)

    both(program)


def _view_then_base_changed(lib, index, factor):
    """A leaf ``a``, and a view ``v = (a * 1)[index]`` taken before its base was multiplied in place by ``factor``."""
    a = leaf(lib, [1.0, 2.0, 3.0])
    x = a * 1
    v = x[index]
    x.mul_(factor)
    return a, v


def test_view_taken_before_an_in_place_change_of_its_base():
    def program(lib):
        a, v = _view_then_base_changed(lib, slice(None, 2), f64(lib, [2.0, 3.0, 4.0]))
        (v * f64(lib, [10.0, 100.0])).sum().backward()
        return v, a.grad

    both(program)


@pytest.mark.parametrize("how", ["backward", "backward_with_gradient", "autograd_backward", "grad"])
def test_a_view_is_differentiated_through_its_base_changed_in_place(how):
    def program(lib):
        a, v = _view_then_base_changed(lib, 0, f64(lib, [2.0, 3.0, 4.0]))  # v is now 2 * a[0], through the mul_
        if how == "backward":
            v.backward()
        elif how == "backward_with_gradient":
            v.backward(f64(lib, 1.0))
        elif how == "autograd_backward":
            lib.autograd.backward([v], [f64(lib, 1.0)])
        else:
            return lib.autograd.grad(v, a)
        return a.grad

    both(program)


def test_grad_of_a_view_input_whose_base_changed_in_place():
    def program(lib):
        a, v = _view_then_base_changed(lib, slice(None, 2), 2)
        y = (v * v).sum()
        return lib.autograd.grad(y, v)

    both(program)


def test_a_view_whose_base_changed_in_place_under_no_grad_keeps_no_stale_graph():
    def program(lib):
        a, v = _view_then_base_changed(lib, 0, 3)
        with lib.no_grad():
            v.grad_fn  # looking at it under no_grad must not leave v attached to the old graph
        v.backward()
        return a.grad

    both(program)


def test_view_changed_then_base_used():
    def program(lib):
        a = leaf(lib, [[1.0, 2.0], [3.0, 4.0]])
        w = leaf(lib, [5.0, 6.0])
        x = a * 2
        x[0].mul_(w)
        (x * x).sum().backward()
        return x, a.grad, w.grad, grad_fn_name(x)

    both(program)


def test_view_changed_when_its_base_was_saved_is_detected():
    def program(lib):
        a = leaf(lib, [[1.0, 2.0], [3.0, 4.0]])
        x = a.exp()  # saves its output x
        x[0].mul_(2)
        x.sum().backward()

    both_raise(program, RuntimeError, "modified by an inplace operation", "is at version 1; expected version 0")


def test_in_place_op_on_a_tensor_saved_by_a_previous_op_is_detected():
    def program(lib):
        a = leaf(lib, [1.0, 2.0])
        x = a * 1
        y = x.exp()  # saves its output y
        y.add_(1)
        y.sum().backward()

    both_raise(program, RuntimeError, "modified by an inplace operation", "is at version 1; expected version 0")


def test_in_place_on_an_input_saved_by_mul_is_detected():
    def program(lib):
        a = leaf(lib, [1.0, 2.0])
        b = leaf(lib, [3.0, 4.0])
        x = a * 1
        y = x * b  # saves x for b's gradient
        x.add_(1)
        y.sum().backward()

    both_raise(program, RuntimeError, "modified by an inplace operation", "is at version 1; expected version 0")


def test_exp_in_place_is_fine_when_nothing_saved_the_input():
    def program(lib):
        a = leaf(lib, [1.0, 2.0])
        x = a + 1
        x.mul_(3)
        x.exp_() if hasattr(x, "exp_") else None
        x.sum().backward()
        return a.grad

    both(program)


# ---------------------------------------------------------------- scale: deep graphs and memory


def test_backward_through_a_chain_of_100_000_ops():
    limit = sys.getrecursionlimit()
    x = ember.tensor([1.0], requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y * 1.0
    y = y * 2.0
    sys.setrecursionlimit(1000)  # the walk must not recurse
    try:
        y.sum().backward()
    finally:
        sys.setrecursionlimit(limit)
    assert x.grad.tolist() == [2.0]
    del y  # freeing a deep graph must not recurse either


def test_autograd_grad_through_a_long_chain_with_create_graph():
    x = ember.tensor([1.0], requires_grad=True)
    y = x
    for _ in range(2000):
        y = y * 1.0 + 0.0
    (g,) = ember.autograd.grad((y * y).sum(), x, create_graph=True)
    (gg,) = ember.autograd.grad(g.sum(), x)
    assert g.tolist() == [2.0] and gg.tolist() == [2.0]


def small_model(lib):
    """Two matmuls around a custom Function (a ReLU written by hand), and its parameters."""

    class HandReLU(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.clamp(min=0)

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * (x > 0).to(grad.dtype)

    gen = np.random.default_rng(0)
    w1 = lib.tensor(gen.standard_normal((4, 8)) * 0.3, requires_grad=True)
    w2 = lib.tensor(gen.standard_normal((8, 1)) * 0.3, requires_grad=True)
    inputs = lib.tensor(gen.standard_normal((16, 4)))
    targets = lib.tensor(gen.standard_normal((16, 1)))

    def step():
        loss = ((HandReLU.apply(inputs.matmul(w1)).matmul(w2) - targets) ** 2).mean()
        loss.backward()
        with lib.no_grad():
            for p in (w1, w2):
                p -= 0.01 * p.grad
                p.grad = None
        return loss

    return step, (w1, w2)


def test_small_model_training_matches_torch():
    def program(lib):
        step, params = small_model(lib)
        losses = [step() for _ in range(20)]
        return losses[0], losses[-1], params

    both(program)


def test_memory_stays_flat_over_10_000_training_steps():
    """With the cycle collector off, nothing may accumulate: no reference cycle keeps a graph alive.

    8,000 steps are checked by counting live objects; the last 2,000 run under
    tracemalloc (which slows every allocation), and the memory they leave must not grow.
    """
    step, _ = small_model(ember)
    for _ in range(100):  # warm up caches
        step()
    was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        objects_before = len(gc.get_objects())
        for _ in range(8000):
            step()
        objects_after = len(gc.get_objects())
        tracemalloc.start()
        try:
            step()
            start, _ = tracemalloc.get_traced_memory()
            for _ in range(1999):
                step()
            end, _ = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    finally:
        if was_enabled:
            gc.enable()
    assert objects_after - objects_before < 100, f"{objects_after - objects_before} objects accumulated over 8000 steps"
    assert end - start < 16 * 1024, f"memory grew by {end - start} bytes over 2000 steps"


def test_a_training_step_leaves_nothing_for_the_cycle_collector():
    step, _ = small_model(ember)
    step()
    was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        for _ in range(50):
            step()
        unreachable = gc.collect()
    finally:
        if was_enabled:
            gc.enable()
    assert unreachable == 0


# Built once: a class made per call would itself be garbage in a cycle.
_SavesItsOutput = exp_function(ember)
_DoublesInPlace = inplace_double(ember)


class _SplitsOff(ember.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        mask = x > 0
        ctx.mark_non_differentiable(mask)
        return x * 2, mask

    @staticmethod
    def backward(ctx, grad, grad_mask):
        return grad * 2


def _matrix():
    return ember.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=ember.float64, requires_grad=True)


# Programs whose graphs must be freed by reference counting alone, with or without a backward.
CYCLE_FREE_PROGRAMS = {
    "built_in_ops_saving_outputs": lambda: (_matrix().exp().tanh().sigmoid() * 2).sum(),
    "custom_saving_its_output": lambda: _SavesItsOutput.apply(_matrix()).sum(),
    "mark_dirty": lambda: _DoublesInPlace.apply(_matrix() * 1).sum(),
    "mark_non_differentiable": lambda: _SplitsOff.apply(_matrix())[0].sum(),
    "in_place_on_a_view": lambda: (lambda x: (x.t()[1].add_(1), (x * x).sum())[-1])(_matrix() * 1),
    "setitem": lambda: (lambda x: (x.__setitem__(0, 5.0), (x * x).sum())[-1])(_matrix() * 1),
    "retain_grad_and_hooks": lambda: (lambda h: (h.retain_grad(), h.register_hook(lambda g: g * 2), h.sum())[-1])(
        _matrix() * 3
    ),
}


@pytest.mark.parametrize("with_backward", [True, False])
@pytest.mark.parametrize("case", sorted(CYCLE_FREE_PROGRAMS))
def test_graphs_hold_no_reference_cycles(case, with_backward):
    program = CYCLE_FREE_PROGRAMS[case]
    program()  # first run: caches, lazily made classes
    was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        loss = program()
        if with_backward:
            loss.backward()
        del loss
        unreachable = gc.collect()
    finally:
        if was_enabled:
            gc.enable()
    assert unreachable == 0, f"{unreachable} objects were only reclaimable by the cycle collector"


def test_graph_is_freed_as_soon_as_the_output_is_dropped():
    import weakref

    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        x = ember.tensor([1.0, 2.0], requires_grad=True)
        y = (x.exp() * x).sum()
        node = weakref.ref(y.grad_fn)
        y.backward()
        del y
        assert node() is None
    finally:
        if gc_was_enabled:
            gc.enable()


# ---------------------------------------------------------------- anomaly detection


def anomaly_enabled(lib) -> bool:
    return torch.is_anomaly_enabled() if lib is torch else ember.autograd.anomaly_mode.is_anomaly_enabled()


def test_is_anomaly_enabled_is_exported_at_top_level():
    assert ember.is_anomaly_enabled() is False


def nan_in_backward(lib):
    class NaNBackward(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * float("nan")

    return NaNBackward


def test_detect_anomaly_names_the_function_returning_nan_and_its_forward():
    for lib in (torch, ember):
        x = leaf(lib, [1.0])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with lib.autograd.detect_anomaly():
                y = nan_in_backward(lib).apply(x)  # the line the error must point at
                with pytest.raises(RuntimeError, match=r"Function 'NaNBackwardBackward' returned nan values in its 0th output") as info:
                    y.sum().backward()
        if lib is ember:  # both warn with the forward's stack; ember also puts it in the message
            assert "the line the error must point at" in str(info.value)
            assert "test_engine.py" in str(info.value)


@pytest.mark.filterwarnings("ignore:Error detected in")  # both warn where the failing node ran, as torch does
def test_set_detect_anomaly_as_a_switch_and_context_manager():
    for lib in (torch, ember):
        with lib.autograd.set_detect_anomaly(True):
            assert anomaly_enabled(lib)
            y = nan_in_backward(lib).apply(leaf(lib, [1.0]))
            with pytest.raises(RuntimeError, match="returned nan values"):
                y.sum().backward()
        assert not anomaly_enabled(lib)


def test_without_anomaly_detection_nan_passes_silently():
    def program(lib):
        x = leaf(lib, [1.0])
        nan_in_backward(lib).apply(x).sum().backward()
        return bool(np.isnan(x.grad.numpy()).all())

    assert both(program) is True


def test_anomaly_mode_error_in_backward_mentions_the_forward_call():
    class Broken(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            raise ValueError("broken backward")

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with ember.autograd.detect_anomaly():
            y = Broken.apply(ember.ones(1, requires_grad=True))  # forward call site
            with pytest.raises(ValueError, match="broken backward") as info:
                y.sum().backward()
    notes = "\n".join(getattr(info.value, "__notes__", []))
    assert "BrokenBackward" in notes and "forward call site" in notes


def test_detect_anomaly_as_a_decorator():
    @ember.autograd.detect_anomaly()
    def check():
        return anomaly_enabled(ember)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert check() is True
    assert anomaly_enabled(ember) is False


def test_in_place_op_made_of_several_functions_keeps_its_saved_input():
    from ember._ops import inplace

    results = []
    for lib in (ember, torch):
        x = lib.tensor([0.5, 1.0], requires_grad=True)
        if lib is ember:
            y = x * 1
            inplace.apply_inplace(y, lambda t: (t * t).exp(), op="square_exp_")
        else:
            y = (x * 1 * x).exp()
        y.sum().backward()
        results.append(x.grad.tolist())
    assert results[0] == pytest.approx(results[1])


def test_grad_outputs_take_their_outputs_dtype_as_torch():
    got = []
    for lib in (ember, torch):
        x = lib.tensor([1 / 3], dtype=lib.float64, requires_grad=True)
        (g,) = lib.autograd.grad(x.float(), x, lib.tensor([1 / 3], dtype=lib.float64))
        got.append(g.item())
    assert got[0] == got[1]


# ---------------------------------------------------------------- the differential sweep of the user API (fixes)


def test_backward_create_graph_with_retain_graph_false_frees_the_graph():
    def program(lib):
        x = leaf(lib, [1.0, 2.0])
        y = x.exp().sum()
        y.backward(create_graph=True, retain_graph=False)
        y.backward()

    both_raise(program, RuntimeError, "backward through the graph a second time")


@pytest.mark.parametrize("how", ["tensor_backward", "autograd_backward", "with_inputs"])
def test_backward_with_create_graph_warns_once_about_the_reference_cycle(how):

    calls = {
        "tensor_backward": "(x * x).sum().backward(create_graph=True)",
        "autograd_backward": "lib.autograd.backward((x * x).sum(), create_graph=True)",
        "with_inputs": "(x * x).sum().backward(create_graph=True, inputs=[x])",
    }
    counts = []
    for name in ("torch", "ember"):  # a fresh process each: torch warns once per process
        script = (f"import warnings, {name} as lib\nwarnings.simplefilter('always')\n"
                  "x = lib.tensor([1.0, 2.0], requires_grad=True)\n"
                  "with warnings.catch_warnings(record=True) as w:\n"
                  "    warnings.simplefilter('always')\n"
                  f"    {calls[how]}\n    {calls[how]}\n"
                  "print(sum('reference cycle' in str(m.message) "
                  "for m in w))\n")
        out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
        counts.append(int(out.stdout.split()[-1]))
    assert counts == [1, 1]


@pytest.mark.parametrize("call", ["(x * x).sum().backward(create_graph=True)",
                                  "ember.autograd.backward((x * x).sum(), create_graph=True)"])
def test_the_reference_cycle_warning_points_at_the_line_that_called_backward(call):
    """Beyond torch, whose warning names a line of its own autograd package."""
    script = ("import warnings, ember\nx = ember.tensor([1.0, 2.0], requires_grad=True)\n"
              "with warnings.catch_warnings(record=True) as w:\n    warnings.simplefilter('always')\n"
              f"    {call}\nprint([(m.filename, m.lineno) for m in w if 'reference cycle' in str(m.message)])\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[('<string>', 5)]"


def test_backward_gradient_that_is_not_a_tensor_is_a_type_error():
    def program(lib):
        x = leaf(lib, [1.0, 2.0, 3.0])
        (x * 2).backward([1.0, 1.0, 1.0])

    both_raise(program, TypeError, "gradients can be either Tensors or None, but got float")


def test_grad_and_backward_take_inputs_as_a_dict():
    def program(lib):
        a = leaf(lib, [1.0, 2.0])
        b = leaf(lib, [3.0, 4.0])
        grads = lib.autograd.grad((a * b).sum(), {"a": a, "b": b})
        (a * b * b).sum().backward(inputs={"b": b})
        return sorted(grads), grads["a"], grads["b"], a.grad, b.grad

    both(program)


def test_grad_with_empty_inputs_is_an_error():
    both_raise(lambda lib: lib.autograd.grad((leaf(lib, [1.0]) * 2).sum(), []), RuntimeError,
               r"`inputs` argument to `grad\(\)` cannot be empty")


def test_grad_with_an_input_that_is_not_a_tensor_is_a_runtime_error():
    both_raise(lambda lib: lib.autograd.grad((leaf(lib, [1.0]) * 2).sum(), [1.0]), RuntimeError,
               "all inputs have to be Tensors or GradientEdges, but got float")


@pytest.mark.parametrize("create_graph", [False, True])
def test_materialized_zeros_require_grad_only_under_create_graph(create_graph):
    def program(lib):
        x = leaf(lib, [1.0, 2.0])
        unused = leaf(lib, [3.0])
        gx, gu = lib.autograd.grad((x * x).sum(), [x, unused], create_graph=create_graph, materialize_grads=True)
        return gx, gu, gx.requires_grad, gu.requires_grad

    both(program)


def test_materialize_grads_with_allow_unused_false_is_a_value_error():
    def program(lib):
        x = leaf(lib, [1.0, 2.0])
        lib.autograd.grad((x * x).sum(), x, materialize_grads=True, allow_unused=False)

    both_raise(program, ValueError, "Expected allow_unused to be True or not passed when materialize_grads=True")


def test_backward_with_a_non_leaf_input_retains_its_hooked_grad():
    def program(lib):
        x = leaf(lib, [1.0, 2.0])
        h = x * 3
        h.register_hook(lambda g: g * 2)
        (h * h).sum().backward(inputs=[h], retain_graph=True)  # h's node runs (and would free its graph)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a retained .grad is read without the non-leaf warning
            first = h.grad.clone()
        (h * h).sum().backward()  # retained for good, as torch: later passes fill it too
        return h.retains_grad, first, h.grad, x.grad

    both(program)


def test_backward_with_a_retained_non_leaf_input_counts_its_gradient_once():
    def program(lib):
        x = leaf(lib, [1.0, 2.0])
        h = x * 3
        h.retain_grad()
        (h * h).sum().backward(inputs=[h, x])
        return h.grad, x.grad

    both(program)


def test_backward_with_a_non_leaf_input_runs_its_node_but_feeds_nothing_beyond():
    def program(lib):
        log = []
        x = leaf(lib, [1.0, 2.0])
        h = x.exp()
        h.grad_fn.register_prehook(lambda grads: log.append("pre"))
        h.grad_fn.register_hook(lambda grad_inputs, grad_outputs: log.append("post"))
        (h * h).sum().backward(inputs=[h])
        try:
            h.sum().backward()  # the node ran, so its saved tensors are gone
        except RuntimeError as error:
            log.append("second backward: " + str(error)[:40])
        return log, x.grad, h.grad

    both(program)


def test_grad_of_a_non_leaf_whose_node_need_not_run_returns_the_hooked_gradient():
    def program(lib):
        x = leaf(lib, [1.0, 2.0])
        h = x * 3
        h.register_hook(lambda g: g * 2)  # as torch: the node does not run, its tensor hooks do, before the capture
        h.retain_grad()
        (gh,) = lib.autograd.grad((h * h).sum(), h)
        return gh, h.grad

    both(program)


def test_backward_with_inputs_runs_no_hook_of_a_leaf_not_asked_for():
    def program(lib):
        log = []
        a = leaf(lib, [1.0, 2.0])
        b = leaf(lib, [3.0, 4.0])
        a.register_hook(lambda g: log.append("a"))
        a.register_post_accumulate_grad_hook(lambda t: log.append("a post"))
        b.register_hook(lambda g: log.append("b"))
        (a * b).sum().backward(inputs=[b])
        return log, a.grad, b.grad

    both(program)


@pytest.mark.parametrize("where", ["leaf", "non_leaf"])
def test_a_hook_that_changes_the_dtype_is_an_error(where):
    def program(lib):
        x = leaf(lib, [1.0, 2.0], dtype="float32")
        target = x if where == "leaf" else x * 2
        target.register_hook(lambda g: g.double())
        (target * 3).sum().backward()

    both_raise(program, RuntimeError, "hook '<lambda>' has changed the type of value")


def test_post_accumulate_grad_hook_on_a_tensor_without_grad_is_an_error():
    both_raise(lambda lib: lib.ones(2).register_post_accumulate_grad_hook(lambda t: None), RuntimeError,
               "cannot register a hook on a tensor that doesn't require gradient")


def test_post_accumulate_grad_hook_returning_a_non_tensor_is_a_type_error():
    def program(lib):
        x = leaf(lib, [1.0, 2.0])
        x.register_post_accumulate_grad_hook(lambda t: 1)
        (x * 2).sum().backward()

    both_raise(program, TypeError, "expected Variable, but .*hook.* returned 'int'")


@pytest.mark.parametrize("kind, returned, error, fragment", [
    ("prehook", lambda grads: [grads[0] * 2], TypeError, "expected tuple, but hook .*returned 'list'"),
    ("hook", lambda grads: grads[0] * 2, TypeError, "expected tuple, but hook .*returned 'Tensor'"),
    ("prehook", lambda grads: (grads[0], None), RuntimeError,
     r"hook '<lambda>' has returned an incorrect number of values \(got 2, but expected 1\)"),
    ("hook", lambda grads: (grads[0] * 10,), RuntimeError,
     r"hook '<lambda>' has returned an incorrect number of values \(got 1, but expected 2\)"),
    ("prehook", lambda grads: (3,), TypeError, "expected Variable, but hook .*returned 'int'"),
    ("prehook", lambda grads: (grads[0][:1],), RuntimeError, "hook '<lambda>' has changed the size of value"),
    ("hook", lambda grads: (grads[0][:1], None), RuntimeError, "hook '<lambda>' has changed the size of value"),
])
def test_what_a_grad_fn_hook_returns_is_checked(kind, returned, error, fragment):
    def program(lib):
        x = leaf(lib, [1.0, 2.0])
        y = x * 2  # MulBackward0: two grad_inputs (x and the 2), one grad_output
        if kind == "prehook":
            y.grad_fn.register_prehook(returned)
        else:
            y.grad_fn.register_hook(lambda grad_inputs, grad_outputs: returned(grad_inputs))
        y.sum().backward()

    both_raise(program, error, fragment)


def test_accumulating_into_a_grad_that_requires_grad_is_in_place_without_create_graph():
    def program(lib):
        x = leaf(lib, [1.0, 2.0], dtype="float32")
        g = lib.ones(2, requires_grad=True)
        x.grad = g
        (x * 2).sum().backward()
        (x ** 2).sum().backward(create_graph=True)
        kept = x.grad
        (x * 2).sum().backward()  # in place again, graph and all, as torch
        return x.grad, g, g.requires_grad, kept is x.grad, x.grad.grad_fn is not None

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        both(program)


def test_accumulating_into_an_expanded_grad_is_an_error():
    def program(lib):
        x = leaf(lib, [1.0, 2.0], dtype="float32")
        x.grad = lib.ones(1).expand(2)
        (x * 2).sum().backward()

    both_raise(program, RuntimeError, "more than one element of the written-to tensor refers to a single memory")


@pytest.mark.parametrize("value, fragment", [
    ("shape", r"attempting to assign a gradient of size '\[2\]' to a tensor of size '\[3\]'"),
    ("dtype", "attempting to assign a gradient with dtype '.*' to a tensor with (grad_)?dtype"),
])
def test_assigning_a_grad_of_another_shape_or_dtype_is_an_error(value, fragment):
    def program(lib):
        x = leaf(lib, [1.0, 2.0, 3.0], dtype="float32")
        x.grad = lib.ones(2) if value == "shape" else lib.ones(3, dtype=lib.float64)

    both_raise(program, RuntimeError, fragment)


@pytest.mark.parametrize("base", ["no_grad", "leaf", "non_leaf"])
def test_detach_in_place_of_any_view_is_an_error(base):
    def program(lib):
        x = lib.ones(3) if base == "no_grad" else leaf(lib, [1.0, 2.0, 3.0])
        source = x * 2 if base == "non_leaf" else x
        source[:2].detach_()

    both_raise(program, RuntimeError, r"Can't detach views in-place. Use detach\(\) instead.")


@pytest.mark.parametrize("mode", [0, None, "yes"])
def test_set_grad_enabled_takes_only_a_bool(mode):
    def program(lib):
        try:
            lib.set_grad_enabled(mode)
        finally:
            lib.set_grad_enabled(True)

    both_raise(program, TypeError, r"set_grad_enabled\(\): argument 'enabled' \(position 1\) must be bool")


def test_grad_mode_contexts_clone():
    def program(lib):
        seen = []
        for context in (lib.no_grad(), lib.enable_grad(), lib.inference_mode()):
            with context.clone():
                seen.append(lib.is_grad_enabled())
        switch = lib.set_grad_enabled(False)
        lib.set_grad_enabled(True)
        with switch.clone():  # a set_grad_enabled switches when made, as torch
            seen.append(lib.is_grad_enabled())
        return seen, lib.is_grad_enabled()

    both(program)


def test_decorating_a_class_with_a_grad_mode_warns_and_constructs_in_the_mode():
    def program(lib):
        class Probe:
            def __init__(self):
                self.enabled = lib.is_grad_enabled()

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            made = lib.no_grad()(Probe)
        return made().enabled, ["class" in str(w.message) for w in caught if w.category is FutureWarning]

    both(program)


@pytest.mark.parametrize("use", ["(v * 2).sum()", "v.exp().sum()", "(v + v).sum()", "lib.stack([v, v]).sum()"])
def test_a_view_made_before_its_base_gained_a_history_in_place_carries_the_gradient_as_torch(use):
    def program(lib):
        x = lib.zeros(2, 3)
        v = x[0]
        w = lib.ones(3, dtype=lib.float32, requires_grad=True)
        x[0] = w * 3  # x needed no grad when v was made; now x (and v) depend on w
        y = eval(use, {"lib": lib, "v": v})
        return v.requires_grad, lib.autograd.grad(y, w)[0]

    both(program)


def test_grad_dtype_sets_the_dtype_gradients_accumulate_in():
    def program(lib):
        w = leaf(lib, [1.0, 2.0, 3.0])
        default = w.grad_dtype
        w.grad_dtype = lib.float32
        (w * w).sum().backward()
        (w * 3).sum().backward()  # the second gradient is added into the float32 .grad
        v = leaf(lib, [1.0, 2.0])
        v.grad_dtype = lib.float32
        (g,) = lib.autograd.grad((v ** 3).sum(), v, create_graph=True)
        g.sum().backward()
        anything = leaf(lib, [1.0])
        anything.grad_dtype = None
        anything.grad = lib.ones(1, dtype=lib.float16)
        return str(default), str(w.grad.dtype), w.grad, str(v.grad.dtype), v.grad, str(anything.grad.dtype)
    both(program, prepare=normalise)


def test_grad_dtype_errors():
    def on_a_non_leaf(lib):
        (leaf(lib, [1.0]) * 2).grad_dtype = lib.float32

    def assigned_another_dtype(lib):
        w = leaf(lib, [1.0])
        w.grad_dtype = lib.float32
        w.grad = lib.ones(1, dtype=lib.float64)

    both_raise(on_a_non_leaf, RuntimeError, "grad_dtype can only be set on leaf tensors")
    both_raise(assigned_another_dtype, RuntimeError, "attempting to assign a gradient with dtype .* to a tensor "
                                                     "with grad_dtype")
