"""The custom ``Function`` API, proved against PyTorch 2.13.

Each test writes one program against a module ``lib`` and runs it twice, with
``lib = torch`` and ``lib = ember``; results, gradients, grad_fn names and the
substance of error messages must agree. Programs follow the seeds in
/work/shared/seeds (PyTorch's note "Extending PyTorch").
"""
import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import ember
from seed_functions import exp_function, inplace_double, linear_function, mul_constant, my_cube
from twins import both, both_raise, grad_fn_name, leaf, to_numpy


# ---------------------------------------------------------------- forward styles, apply


@pytest.mark.parametrize("with_setup_context", [False, True])
@pytest.mark.parametrize("with_bias", [False, True])
def test_linear_function_values_and_gradients(with_setup_context, with_bias):
    def program(lib):
        lib.manual_seed(0)
        x = leaf(lib, np.arange(12.0).reshape(4, 3) / 7)
        w = leaf(lib, np.linspace(-1, 1, 6).reshape(2, 3))
        b = leaf(lib, [0.5, -0.25]) if with_bias else None
        fn = linear_function(lib, with_setup_context)
        y = fn.apply(x, w, b) if with_bias else fn.apply(x, w)  # bias left to its default
        (y * y).sum().backward()
        return y, x.grad, w.grad, (b.grad if with_bias else None), grad_fn_name(y)

    result = both(program)
    assert result[-1] == "LinearFunctionBackward"


@pytest.mark.parametrize("with_setup_context", [False, True])
def test_apply_with_keyword_arguments(with_setup_context):
    def program(lib):
        x = leaf(lib, [[1.0, 2.0]])
        w = leaf(lib, [[3.0, 4.0], [5.0, 6.0]])
        b = leaf(lib, [1.0, -1.0])
        y = linear_function(lib, with_setup_context).apply(x, w, bias=b)
        y.sum().backward()
        return y, x.grad, w.grad, b.grad

    both(program)


@settings(max_examples=25, deadline=None)
@given(
    batch=st.integers(0, 4),
    sizes=st.tuples(st.integers(1, 4), st.integers(1, 4)),
    transposed_weight=st.booleans(),
    with_bias=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_linear_function_on_varied_shapes(batch, sizes, transposed_weight, with_bias, seed):
    """Empty batches and non-contiguous (transposed) weights included."""
    rng = np.random.default_rng(seed)
    n_in, n_out = sizes
    x_data = rng.standard_normal((batch, n_in))
    w_data = rng.standard_normal((n_in, n_out)) if transposed_weight else rng.standard_normal((n_out, n_in))
    b_data = rng.standard_normal(n_out)

    def program(lib):
        x = lib.tensor(x_data, requires_grad=True)
        w_leaf = lib.tensor(w_data, requires_grad=True)
        w = w_leaf.t() if transposed_weight else w_leaf
        b = lib.tensor(b_data, requires_grad=True) if with_bias else None
        y = linear_function(lib, with_setup_context=bool(seed % 2)).apply(x, w, b)
        (y.tanh() * 2).sum().backward()
        return y, x.grad, w_leaf.grad, b.grad if with_bias else None

    both(program)


@pytest.mark.parametrize("shape", [(), (0,), (2, 3)])
def test_mul_constant_on_0d_empty_and_matrix_inputs(shape):
    def program(lib):
        x = lib.tensor(np.arange(float(np.prod(shape))).reshape(shape), requires_grad=True)
        y = mul_constant(lib).apply(x, -1.5)
        (y * y).sum().backward()
        return y, x.grad

    both(program)


def test_apply_with_keyword_arguments_given_out_of_order():
    def program(lib):
        x = leaf(lib, [[1.0, 2.0]])
        w = leaf(lib, [[3.0, 4.0], [5.0, 6.0]])
        y = linear_function(lib, True).apply(weight=w, input=x)
        y.sum().backward()
        return y, x.grad, w.grad

    both(program)


def test_linear_function_matches_builtin_ops_in_ember():
    """The custom LinearFunction's gradients equal those of the same expression written with built-in ops."""
    rng = np.random.default_rng(1)
    data = [rng.standard_normal(s) for s in [(5, 4), (3, 4), (3,)]]
    custom = [ember.tensor(d, requires_grad=True) for d in data]
    plain = [ember.tensor(d, requires_grad=True) for d in data]
    linear_function(ember, False).apply(*custom).tanh().sum().backward()
    (plain[0].mm(plain[1].t()) + plain[2]).tanh().sum().backward()
    for c, p in zip(custom, plain):
        np.testing.assert_allclose(c.grad.numpy(), p.grad.numpy(), rtol=1e-12)


def numerical_gradient(f, arrays, index, eps=1e-6):
    """Central differences of the scalar ``f(*arrays)`` with respect to ``arrays[index]``."""
    base = [np.array(a, dtype=np.float64) for a in arrays]
    grad = np.zeros_like(base[index])
    for i in np.ndindex(grad.shape):
        plus = [a.copy() for a in base]
        minus = [a.copy() for a in base]
        plus[index][i] += eps
        minus[index][i] -= eps
        grad[i] = (f(*plus) - f(*minus)) / (2 * eps)
    return grad


def assert_gradients_match_finite_differences(fn, arrays):
    """``fn`` maps ember tensors to an ember tensor; its summed gradient must match central differences."""
    tensors = [ember.tensor(a, requires_grad=True) for a in arrays]
    fn(*tensors).sum().backward()

    def value(*plain):
        return fn(*[ember.tensor(p) for p in plain]).sum().item()

    for i, t in enumerate(tensors):
        np.testing.assert_allclose(t.grad.numpy(), numerical_gradient(value, arrays, i), rtol=1e-5, atol=1e-6)


def test_seed_linear_function_against_finite_differences():
    rng = np.random.default_rng(2)
    arrays = [rng.standard_normal((6, 5)), rng.standard_normal((4, 5)), rng.standard_normal(4)]
    assert_gradients_match_finite_differences(lambda *t: linear_function(ember, True).apply(*t) ** 2, arrays)


def test_mul_constant_non_tensor_input_and_ctx_attribute():
    def program(lib):
        x = leaf(lib, [1.0, 2.0, 3.0])
        y = mul_constant(lib).apply(x, 2.5)
        y.backward(lib.tensor([1.0, 10.0, 100.0], dtype=lib.float64))
        return y, x.grad, grad_fn_name(y)

    both(program)


def test_mul_constant_with_a_tensor_constant_that_needs_no_grad():
    def program(lib):
        x = lib.tensor([1.0], requires_grad=True)
        y = mul_constant(lib).apply(x, lib.tensor([2.0]))
        y.backward()
        return y, y.requires_grad, x.grad, repr(y).replace("torch.", "ember.")

    assert both(program)[-1] == "tensor([2.], grad_fn=<MulConstantBackward>)"


def test_vjp_is_an_alias_of_backward():
    def program(lib):
        class Square(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            def vjp(ctx, grad):
                (x,) = ctx.saved_tensors
                return 2 * x * grad

        x = leaf(lib, [1.0, -3.0])
        Square.apply(x).sum().backward()
        return x.grad

    both(program)


def test_defining_both_backward_and_vjp_is_an_error():
    def program(lib):
        class Both(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, grad):
                return grad * 2

            @staticmethod
            def vjp(ctx, grad):
                return grad * 2

        Both.apply(leaf(lib, [1.0])).sum().backward()

    messages = both_raise(program, RuntimeError, "both 'backward' and 'vjp'", "only implement one")
    assert messages[1].startswith("Both:")


def test_missing_backward_is_an_error_that_says_what_to_implement():
    def program(lib):
        class NoBackward(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

        NoBackward.apply(leaf(lib, [1.0])).sum().backward()

    messages = both_raise(program, NotImplementedError, "must implement either the backward or vjp")
    assert messages[1].startswith("NoBackward:")  # ember also names the Function


def test_missing_forward_is_an_error():
    def program(lib):
        class NoForward(lib.autograd.Function):
            @staticmethod
            def backward(ctx, grad):
                return grad

        NoForward.apply(leaf(lib, [1.0]))

    messages = both_raise(program, NotImplementedError, "must implement the forward")
    assert messages[1].startswith("NoForward:")


def test_setup_context_style_gets_inputs_after_defaults_are_bound():
    def program(lib):
        seen = []

        class Scale(lib.autograd.Function):
            @staticmethod
            def forward(x, factor=3.0, shift=0.0):
                return x * factor + shift

            @staticmethod
            def setup_context(ctx, inputs, output):
                seen.append(len(inputs))
                ctx.factor = inputs[1]

            @staticmethod
            def backward(ctx, grad):
                return grad * ctx.factor, None, None

        x = leaf(lib, [1.0, 2.0])
        y = Scale.apply(x)
        y.sum().backward()
        return y, x.grad, seen

    both(program)


# ---------------------------------------------------------------- saving tensors


def test_save_inputs_outputs_intermediates_and_none():
    def program(lib):
        class Exp(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, unused):
                intermediate = x * 2
                y = x.exp()
                ctx.save_for_backward(x, y, intermediate, None)
                return y

            @staticmethod
            def backward(ctx, grad):
                x, y, intermediate, nothing = ctx.saved_tensors
                assert nothing is None
                return grad * y + 0 * intermediate + 0 * x, None

        x = leaf(lib, [0.0, 1.0, -2.0])
        y = Exp.apply(x, None)
        y.sum().backward()
        return y, x.grad

    both(program)


def test_saved_output_supports_double_backward():
    """A saved output comes back attached to the graph: differentiating the gradient works (exp'' = exp)."""

    def program(lib):
        Exp = exp_function(lib)
        x = leaf(lib, [0.0, 1.0])
        (g,) = lib.autograd.grad(Exp.apply(x).sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x)
        return g, gg, grad_fn_name(g)

    both(program)


def test_saved_input_modified_in_place_is_an_error_naming_versions():
    def program(lib):
        class Square(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            def backward(ctx, grad):
                (x,) = ctx.saved_tensors
                return 2 * x * grad

        a = leaf(lib, [1.0, 2.0])
        x = a * 1
        y = Square.apply(x)
        x.mul_(3)
        y.sum().backward()

    messages = both_raise(
        program, RuntimeError, "modified by an inplace operation", "is at version 1; expected version 0"
    )
    assert "SquareBackward" in messages[1]


def test_saved_output_modified_in_place_is_an_error_naming_the_function():
    def program(lib):
        Exp = exp_function(lib)
        y = Exp.apply(leaf(lib, [1.0, 2.0]))
        y.add_(1)
        y.sum().backward()

    messages = both_raise(program, RuntimeError, "output 0 of Exp", "is at version 1; expected version 0")
    assert "output 0 of ExpBackward" in messages[1]


def test_saved_tensors_are_freed_after_backward():
    def program(lib):
        x = leaf(lib, [[1.0, 2.0]])
        w = leaf(lib, [[3.0, 4.0]])
        y = linear_function(lib, False).apply(x, w).sum()
        y.backward()
        y.backward()

    both_raise(program, RuntimeError, "Trying to backward through the graph a second time", "retain_graph=True")


def test_saved_tensors_cannot_be_read_after_they_are_freed():
    def program(lib):
        x = leaf(lib, [[1.0, 2.0]])
        y = linear_function(lib, False).apply(x, leaf(lib, [[3.0, 4.0]]))
        y.sum().backward()
        y.grad_fn.saved_tensors

    both_raise(program, RuntimeError, "backward through the graph a second time")


def test_retain_graph_allows_a_second_backward():
    def program(lib):
        x = leaf(lib, [[1.0, 2.0]])
        w = leaf(lib, [[3.0, 4.0]])
        y = linear_function(lib, True).apply(x, w).sum()
        y.backward(retain_graph=True)
        first = x.grad.clone()
        y.backward()
        return first, x.grad, w.grad

    both(program)


def test_saved_tensors_during_forward_are_readable_in_setup_context():
    def program(lib):
        class Identity(lib.autograd.Function):
            @staticmethod
            def forward(x):
                return x.clone()

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.save_for_backward(inputs[0])

            @staticmethod
            def backward(ctx, grad):
                return grad

        x = leaf(lib, [1.0])
        y = Identity.apply(x)
        return len(y.grad_fn.saved_tensors), y.grad_fn.saved_tensors[0]

    both(program)


def test_needs_input_grad():
    def program(lib):
        seen = []

        class Record(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, b, c, d):
                seen.append(ctx.needs_input_grad)
                return a + b

            @staticmethod
            def backward(ctx, grad):
                seen.append(ctx.needs_input_grad)
                return grad, grad, None, None

        a = leaf(lib, [1.0])
        b = lib.tensor([2.0])
        Record.apply(a, b, 3, a.detach()).sum().backward()
        return seen

    assert both(program) == [(True, False, False, False)] * 2


# ---------------------------------------------------------------- mark_dirty, mark_non_differentiable


def test_mark_dirty_on_a_non_leaf():
    def program(lib):
        a = leaf(lib, [1.0, 2.0])
        x = a * 3
        version = x._version
        y = inplace_double(lib).apply(x)
        (y * y).sum().backward()
        return y is x, x._version - version, grad_fn_name(x), y, a.grad

    assert both(program)[:3] == (True, 2, "InplaceDoubleBackward")  # the mul_, then mark_dirty itself


def test_mark_dirty_on_a_view_of_a_non_leaf():
    def program(lib):
        a = leaf(lib, [[1.0, 2.0], [3.0, 4.0]])
        x = a * 1
        row = x[1]
        inplace_double(lib).apply(row)
        (x * lib.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=lib.float64)).sum().backward()
        # (row's own new grad_fn is an implementation detail: torch's AsStridedBackward0, ember replays the view)
        return x, a.grad, grad_fn_name(x), row.requires_grad, row._version

    both(program)


def test_mark_dirty_on_a_leaf_that_requires_grad_is_an_error():
    both_raise(lambda lib: inplace_double(lib).apply(leaf(lib, [1.0])), RuntimeError,
               "a leaf Variable that requires grad has been used in an in-place operation")


def test_mark_dirty_on_a_leaf_without_grad_records_the_op():
    def program(lib):
        w = leaf(lib, [5.0])
        x = lib.tensor([1.0], dtype=lib.float64)

        class AddInto(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, w):
                x.add_(w)
                ctx.mark_dirty(x)
                return x

            @staticmethod
            def backward(ctx, grad):
                return grad, grad

        y = AddInto.apply(x, w)
        y.sum().backward()
        return y is x, x.requires_grad, grad_fn_name(x), w.grad, x

    both(program)


def sort_like(lib):
    class Sort(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            order = np.argsort(x.detach().numpy(), kind="stable")
            indices = lib.tensor(order)
            values = x[indices]
            ctx.mark_non_differentiable(indices)
            ctx.save_for_backward(indices)
            ctx.size = x.shape[0]
            return values, indices

        @staticmethod
        def backward(ctx, grad_values, grad_indices):
            (indices,) = ctx.saved_tensors
            grad = lib.zeros(ctx.size, dtype=grad_values.dtype)
            grad[indices] = grad_values
            return grad

    return Sort


def test_mark_non_differentiable_sort_like_function():
    def program(lib):
        x = leaf(lib, [3.0, 1.0, 2.0])
        values, indices = sort_like(lib).apply(x)
        (values * lib.tensor([1.0, 10.0, 100.0], dtype=lib.float64)).sum().backward()
        return values, indices, values.requires_grad, indices.requires_grad, grad_fn_name(indices), x.grad

    both(program)


def test_a_float_output_marked_non_differentiable_does_not_require_grad():
    def program(lib):
        class Split(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                constant = x * 0 + 1
                ctx.mark_non_differentiable(constant)
                return x * 2, constant

            @staticmethod
            def backward(ctx, grad, grad_constant):
                return grad * 2

        x = leaf(lib, [1.0])
        y, c = Split.apply(x)
        (y + c).sum().backward()
        return c.requires_grad, grad_fn_name(c), x.grad

    both(program)


def test_mark_non_differentiable_on_an_input_returned_as_is():
    def program(lib):
        class Keep(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.mark_non_differentiable(x)
                return x

            @staticmethod
            def backward(ctx, grad):
                return grad

        x = leaf(lib, [1.0])
        y = Keep.apply(x)
        return y.requires_grad, y is x, y.grad_fn, y.is_leaf

    both(program)


# ---------------------------------------------------------------- materialize grads


def two_outputs(lib, materialize: bool):
    class TwoOutputs(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(materialize)
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, grad_a, grad_b):
            received.append((to_numpy(grad_a), to_numpy(grad_b)))
            total = 0
            if grad_a is not None:
                total = total + grad_a * 2
            if grad_b is not None:
                total = total + grad_b * 3
            return total

    received = []
    return TwoOutputs, received


@pytest.mark.parametrize("materialize", [True, False])
def test_materialize_grads_when_only_one_output_is_used(materialize):
    def program(lib):
        fn, received = two_outputs(lib, materialize)
        x = leaf(lib, [1.0, 2.0])
        a, b = fn.apply(x)
        b.sum().backward()
        return received, x.grad

    received, _ = both(program)
    assert (received[0][0] is None) == (not materialize)


def test_set_materialize_grads_false_in_the_seed_mul_constant():
    def program(lib):
        x = leaf(lib, [1.0, 2.0])
        y = mul_constant(lib, materialize=False).apply(x, 4.0)
        y.sum().backward()
        return x.grad

    both(program)


# ---------------------------------------------------------------- inputs, outputs


def test_non_tensor_inputs_and_outputs():
    def program(lib):
        class Describe(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, scale, label):
                ctx.scale = scale
                return x * scale, label.upper(), 7

            @staticmethod
            def backward(ctx, grad, grad_label, grad_count):
                return grad * ctx.scale, None, None

        x = leaf(lib, [1.0, 2.0])
        y, label, count = Describe.apply(x, 3.0, "ok")
        y.sum().backward()
        return y, label, count, x.grad, grad_fn_name(y)

    both(program)


def test_extra_trailing_none_gradients_are_ignored():
    def program(lib):
        class Optional(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, y=None):
                return x * 2

            @staticmethod
            def backward(ctx, grad):
                return grad * 2, None, None, None

        x = leaf(lib, [1.0])
        Optional.apply(x).sum().backward()
        return x.grad

    both(program)


def test_output_that_is_an_input_returned_unchanged():
    def program(lib):
        class PassThrough(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                return x, y * 2

            @staticmethod
            def backward(ctx, grad_x, grad_y):
                return grad_x * 10, grad_y * 2

        x = leaf(lib, [1.0, 2.0])
        y = leaf(lib, [3.0])
        a, b = PassThrough.apply(x, y)
        (a.sum() + b.sum()).backward()
        return a is x, a, grad_fn_name(a), x.grad, y.grad, x.is_leaf

    result = both(program)
    assert result[0] is False


def test_output_that_is_a_view_of_an_input():
    def program(lib):
        class FirstRow(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.shape = x.shape
                return x[0]

            @staticmethod
            def backward(ctx, grad):
                full = lib.zeros(ctx.shape, dtype=grad.dtype)
                full[0] = grad
                return full

        x = leaf(lib, [[1.0, 2.0], [3.0, 4.0]])
        row = FirstRow.apply(x)
        (row * lib.tensor([5.0, 6.0], dtype=lib.float64)).sum().backward()
        return row, grad_fn_name(row), x.grad

    both(program)


@pytest.mark.parametrize("returns", ["view", "input_as_is"])
def test_in_place_on_a_view_made_by_a_custom_function_is_an_error(returns):
    """Recording the change through the view's base would bypass the custom backward: torch forbids it."""

    def program(lib):
        class Passing(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x[0] if returns == "view" else x

            @staticmethod
            def backward(ctx, grad):
                return grad

        y = Passing.apply(leaf(lib, [[1.0, 2.0]]) * 1)
        y.mul_(2)

    both_raise(program, RuntimeError, "Output 0 of Passing is a view and is being modified inplace", "clon(e|ing)")


def test_in_place_on_a_custom_functions_output_view_is_fine_without_grad():
    def program(lib):
        class Passing(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x

            @staticmethod
            def backward(ctx, grad):
                return grad

        x = leaf(lib, [1.0, 2.0]) * 1
        y = Passing.apply(x)
        with lib.no_grad():
            y.mul_(2)
        return x, y._version

    both(program)


def test_save_for_backward_of_a_number():
    """Deliberate difference: ember's save_for_backward also keeps plain values (torch raises TypeError)."""

    def program(lib):
        class Scale(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, k):
                ctx.save_for_backward(x, k)
                return x * k

            @staticmethod
            def backward(ctx, grad):
                x, k = ctx.saved_tensors
                return grad * k, None

        x = leaf(lib, [1.0, 2.0])
        Scale.apply(x, 3.0).sum().backward()
        return x.grad

    with pytest.raises(TypeError, match="save_for_backward can only save variables"):
        program(torch)
    assert program(ember).tolist() == [3.0, 3.0]


def test_grad_mode_is_off_in_forward_and_on_in_backward_only_under_create_graph():
    def program(lib):
        modes = []

        class Probe(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                modes.append(("forward", lib.is_grad_enabled()))
                return x * 2

            @staticmethod
            def backward(ctx, grad):
                modes.append(("backward", lib.is_grad_enabled(), grad.requires_grad))
                return grad * 2

        x = leaf(lib, [1.0])
        Probe.apply(x).sum().backward()
        Probe.apply(x).sum().backward(create_graph=True)
        return modes

    assert both(program) == [
        ("forward", False), ("backward", False, False), ("forward", False), ("backward", True, False),
    ]


def test_forward_output_does_not_record_ops_done_inside_forward():
    def program(lib):
        class Inner(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                y = x.exp()
                ctx.inner_requires_grad = y.requires_grad
                return y + 1

            @staticmethod
            def backward(ctx, grad):
                return grad

        y = Inner.apply(leaf(lib, [0.0]))
        return y.grad_fn.inner_requires_grad, grad_fn_name(y), len(y.grad_fn.next_functions)

    both(program)


def test_no_input_requires_grad_gives_a_plain_output():
    def program(lib):
        y = linear_function(lib, True).apply(lib.ones(1, 2), lib.ones(3, 2))
        return y, y.requires_grad, y.grad_fn

    both(program)


def test_under_no_grad_apply_records_nothing():
    def program(lib):
        x = leaf(lib, [1.0])
        with lib.no_grad():
            y = mul_constant(lib).apply(x, 2.0)
        return y, y.requires_grad, y.grad_fn

    both(program)


# ---------------------------------------------------------------- once_differentiable, double backward


def cube_once(lib):
    class Cube(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        @lib.autograd.function.once_differentiable
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * 3 * x ** 2

    return Cube


def test_once_differentiable_first_order():
    def program(lib):
        x = leaf(lib, [1.0, -2.0])
        cube_once(lib).apply(x).sum().backward()
        return x.grad

    both(program)


def test_once_differentiable_first_order_with_create_graph_returns_a_gradient():
    def program(lib):
        x = leaf(lib, [1.0, -2.0])
        (g,) = lib.autograd.grad(cube_once(lib).apply(x).sum(), x, create_graph=True)
        return g, g.requires_grad

    both(program)


def test_once_differentiable_double_backward_raises():
    def program(lib):
        x = leaf(lib, [1.0, -2.0])
        # times x: the gradient reaching Cube's backward depends on x, so the result has to be differentiable
        (g,) = lib.autograd.grad((cube_once(lib).apply(x) * x).sum(), x, create_graph=True)
        assert g.requires_grad
        g.sum().backward()

    both_raise(program, RuntimeError, "marked with @once_differentiable")


def test_my_cube_double_backward_matches_torch():
    def program(lib):
        x = leaf(lib, [0.5, -1.5, 2.0])
        result, dx = my_cube(lib).apply(x)
        (g,) = lib.autograd.grad(result.sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x, create_graph=True)
        (ggg,) = lib.autograd.grad(gg.sum(), x)
        return result, dx, g, gg, ggg, grad_fn_name(result), grad_fn_name(dx)

    result = both(program)
    x = np.array([0.5, -1.5, 2.0])
    np.testing.assert_allclose(result[2], 3 * x ** 2)
    np.testing.assert_allclose(result[3], 6 * x)
    np.testing.assert_allclose(result[4], [6.0, 6.0, 6.0])


def test_my_cube_second_derivative_against_finite_differences():
    """d/dx of MyCube's first derivative (which goes through backward) matches central differences."""

    def first_derivative(x):
        (g,) = ember.autograd.grad(my_cube(ember).apply(x)[0].sum(), x, create_graph=True)
        return g

    def first_derivative_value(plain):
        return first_derivative(ember.tensor(plain, requires_grad=True)).detach().numpy().copy()

    x = ember.tensor([0.3, -0.7, 1.9], requires_grad=True)
    weights = np.array([1.0, 2.0, -3.0])
    (first_derivative(x) * ember.tensor(weights)).sum().backward()
    expected = numerical_gradient(lambda p: first_derivative_value(p) @ weights, [x.detach().numpy()], 0)
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-6)


# ---------------------------------------------------------------- the node: name, next_functions, hooks


def test_grad_fn_name_repr_and_next_functions():
    def program(lib):
        x = leaf(lib, [[1.0, 2.0]])
        w = leaf(lib, [[3.0, 4.0]])
        y = linear_function(lib, False).apply(x * 2, w)
        fn = y.grad_fn
        nexts = [(None if f is None else f.name().replace("torch::autograd::", ""), nr) for f, nr in fn.next_functions]
        return fn.name(), type(fn).__name__, repr(fn).endswith(f"LinearFunctionBackward object at {hex(id(fn))}>"), nexts

    both(program)


def test_backward_name_for_a_class_with_an_unusual_name():
    def program(lib):
        class my_op(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x + 1

            @staticmethod
            def backward(ctx, grad):
                return grad

        return my_op.apply(leaf(lib, [1.0])).grad_fn.name()

    assert both(program) == "my_opBackward"


def test_node_apply_runs_backward():
    def program(lib):
        x = leaf(lib, [1.0, 2.0])
        y = mul_constant(lib).apply(x, 3.0)
        return y.grad_fn.apply(lib.tensor([1.0, 1.0], dtype=lib.float64))

    both(program)


def test_dirty_tensor_not_returned_is_an_error():
    def program(lib):
        class Forgetful(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                ctx.mark_dirty(x)
                return y * 2

            @staticmethod
            def backward(ctx, grad):
                return None, grad * 2

        a = leaf(lib, [1.0])
        Forgetful.apply(a * 1, a)

    both_raise(program, RuntimeError, "(?i)marked as dirty during the forward method were not returned as output")


# ---------------------------------------------------------------- what backward may return


def returning(lib, *gradients_of):
    """A Function of two inputs (x, k) whose backward returns ``gradients_of(grad, lib)``."""

    class Bad(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return gradients_of[0](grad, lib)

    return Bad


def test_too_few_gradients_is_an_error_naming_the_function():
    def program(lib):
        returning(lib, lambda g, lib: g).apply(leaf(lib, [1.0]), leaf(lib, [1.0])).sum().backward()

    both_raise(program, RuntimeError, "function BadBackward returned an incorrect number of gradients \\(expected 2, got 1\\)")


def test_too_many_non_none_gradients_is_an_error():
    def program(lib):
        returning(lib, lambda g, lib: (g, g, g)).apply(leaf(lib, [1.0]), leaf(lib, [1.0])).sum().backward()

    both_raise(program, RuntimeError, "BadBackward returned an incorrect number of gradients \\(expected 2, got 3\\)")


def test_wrong_gradient_shape_is_an_error_naming_the_function():
    def program(lib):
        x = leaf(lib, [[1.0, 2.0]])
        returning(lib, lambda g, lib: (lib.ones(3, dtype=lib.float64), None)).apply(x, 1.0).sum().backward()

    both_raise(program, RuntimeError, "BadBackward returned an invalid gradient at index 0", r"got \[3\]", r"\[1, 2\]")


def test_a_gradient_that_broadcasts_is_summed_down():
    def program(lib):
        x = leaf(lib, [[1.0, 2.0, 3.0]])
        y = returning(lib, lambda g, lib: (lib.ones(4, 1, 3, dtype=lib.float64), None)).apply(x, 1.0)
        y.sum().backward()
        return x.grad

    both(program)


def test_a_gradient_of_another_dtype_is_cast():
    def program(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)  # float32
        y = returning(lib, lambda g, lib: (g.double() * 2, None)).apply(x, 1.0)
        y.sum().backward()
        return x.grad

    both(program)


def test_gradient_for_a_non_tensor_input_is_an_error():
    def program(lib):
        returning(lib, lambda g, lib: (g, g)).apply(leaf(lib, [1.0]), 3.0).sum().backward()

    both_raise(program, RuntimeError, "BadBackward returned a gradient different than None at position 2", "not a Variable")


def test_non_tensor_gradient_is_an_error_naming_the_function():
    def program(lib):
        returning(lib, lambda g, lib: (1.5, None)).apply(leaf(lib, [1.0]), 3.0).sum().backward()

    for lib in (torch, ember):
        with pytest.raises((TypeError, RuntimeError)) as info:
            program(lib)
        assert "BadBackward" in str(info.value) or lib is torch
        assert "float" in str(info.value)


def test_gradient_for_an_input_that_needs_none_is_dropped():
    def program(lib):
        x = leaf(lib, [1.0])
        k = lib.tensor([5.0], dtype=lib.float64)
        returning(lib, lambda g, lib: (g, g)).apply(x, k).sum().backward()
        return x.grad, k.grad

    both(program)


# ---------------------------------------------------------------- the legacy style of seed 002


def legacy_linear(lib):
    """Seed 002's Linear, verbatim in substance: an instance Function with non-static methods."""

    class Linear(lib.autograd.Function):
        def forward(self, input, weight, bias=None):
            self.save_for_backward(input, weight, bias)
            output = input.mm(weight.t())
            if bias is not None:
                output += bias.unsqueeze(0).expand_as(output)
            return output

        def backward(self, grad_output):
            input, weight, bias = self.saved_tensors
            grad_input = grad_weight = grad_bias = None
            if self.needs_input_grad[0]:
                grad_input = grad_output.mm(weight)
            if self.needs_input_grad[1]:
                grad_weight = grad_output.t().mm(input)
            if bias is not None and self.needs_input_grad[2]:
                grad_bias = grad_output.sum(0).squeeze(0)
            return grad_input, grad_weight, grad_bias

    return Linear


def test_legacy_function_runs_with_a_deprecation_warning_and_correct_gradients():
    rng = np.random.default_rng(3)
    data = [rng.standard_normal(s) for s in [(4, 3), (2, 3), (2,)]]
    Variable = ember.autograd.Variable
    inputs = [Variable(ember.tensor(d), requires_grad=True) for d in data]
    with pytest.warns(DeprecationWarning, match="Linear"):
        output = legacy_linear(ember)()(*inputs)
    (output * output).sum().backward()
    # torch 2.13 no longer runs legacy Functions: compare with the new-style LinearFunction in torch.
    reference = [torch.tensor(d, requires_grad=True) for d in data]
    expected = linear_function(torch, False).apply(*reference)
    (expected * expected).sum().backward()
    np.testing.assert_allclose(output.detach().numpy(), expected.detach().numpy(), rtol=1e-12)
    for mine, theirs in zip(inputs, reference):
        np.testing.assert_allclose(mine.grad.numpy(), theirs.grad.numpy(), rtol=1e-12)
    assert output.grad_fn.name() == "Linear"


def test_legacy_function_without_bias_and_needs_input_grad():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        x = ember.tensor([[1.0, 2.0]], dtype=ember.float64)
        w = ember.tensor([[3.0, 4.0]], dtype=ember.float64, requires_grad=True)
        y = legacy_linear(ember)()(x, w)
    y.sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [[1.0, 2.0]])
    assert x.grad is None


def test_legacy_function_against_finite_differences():
    rng = np.random.default_rng(4)
    arrays = [rng.standard_normal((5, 4)), rng.standard_normal((3, 4)), rng.standard_normal(3)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        assert_gradients_match_finite_differences(lambda *t: legacy_linear(ember)()(*t).tanh(), arrays)


def test_legacy_function_with_a_keyword_argument():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        x = ember.tensor([[1.0, 2.0]], dtype=ember.float64, requires_grad=True)
        w = ember.tensor([[3.0, 4.0], [1.0, 0.0]], dtype=ember.float64)
        b = ember.tensor([0.5, 0.0], dtype=ember.float64, requires_grad=True)
        y = legacy_linear(ember)()(x, w, bias=b)
    y.sum().backward()
    assert y.tolist() == [[11.5, 1.0]] and x.grad.tolist() == [[4.0, 4.0]] and b.grad.tolist() == [1.0, 1.0]


def test_legacy_function_instance_called_twice_records_two_calls():
    """Seed 002 passes one instance to gradcheck, which calls it many times: each call is its own node."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        function = legacy_linear(ember)()
    function.scale = 2.0  # the instance's own settings carry over to later calls
    x = ember.tensor([[1.0, 2.0]], dtype=ember.float64, requires_grad=True)
    first = function(x, ember.ones(3, 2, dtype=ember.float64))
    second = function(x * 10, ember.full((1, 2), 3.0, dtype=ember.float64))
    assert first.grad_fn is not second.grad_fn and second.grad_fn.scale == 2.0
    (first.sum() + second.sum()).backward()
    assert x.grad.tolist() == [[33.0, 33.0]]  # 3 from the first call, 10 * 3 from the second
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        first.sum().backward()  # each call's node was freed by the backward above


def test_torch_refuses_legacy_functions_ember_accepts_them():
    """Deliberate difference: torch 2.13 raises for legacy Functions; ember runs them with a warning."""
    with pytest.raises(RuntimeError, match="Legacy autograd function"):
        legacy_linear(torch)()(torch.ones(1, 2), torch.ones(3, 2))


# ---------------------------------------------------------------- backward_on_arrays (an ember extension)


def scaled_square(lib, seen: list | None = None):
    """x ** 2 * k with a backward of plain arithmetic that may run on NumPy arrays.

    torch knows nothing of ``backward_on_arrays`` and runs the same formula on tensors.
    """

    class ScaledSquare(lib.autograd.Function):
        backward_on_arrays = True

        @staticmethod
        def forward(ctx, x, k):
            out = x * x * k
            ctx.save_for_backward(x, out)
            ctx.k = k
            return out

        @staticmethod
        def backward(ctx, grad):
            x, out = ctx.saved_tensors
            if seen is not None:
                seen.append((type(grad), type(x), type(out)))
            return grad * 2 * x * ctx.k, None

    return ScaledSquare


def test_backward_on_arrays_runs_the_formula_on_arrays_without_create_graph():
    seen = []

    def program(lib):
        x = leaf(lib, [[1.0, -2.0], [0.5, 3.0]])
        scaled_square(lib, seen if lib is ember else None).apply(x, 3.0).sum().backward()
        return x.grad

    both(program)
    assert seen == [(np.ndarray, np.ndarray, np.ndarray)]


def test_backward_on_arrays_runs_on_tensors_with_create_graph_so_double_backward_works():
    seen = []

    def program(lib):
        x = leaf(lib, [1.0, -2.0, 0.5])
        (dx,) = lib.autograd.grad(scaled_square(lib, seen if lib is ember else None).apply(x, 3.0).sum(), x,
                                  create_graph=True)
        (ddx,) = lib.autograd.grad(dx.sum(), x)
        return dx, ddx

    both(program)
    assert seen == [(ember.Tensor, ember.Tensor, ember.Tensor)]


def test_backward_on_arrays_passes_gradcheck_and_gradgradcheck():
    function = scaled_square(ember)
    x = ember.tensor([[0.3, -1.2], [2.0, 0.7]], dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(function.apply, (x, 1.5))
    assert ember.autograd.gradgradcheck(function.apply, (x, 1.5))


def test_backward_on_arrays_retained_graph_runs_on_arrays_then_on_tensors():
    def program(lib):
        x = leaf(lib, [1.0, 2.0])
        y = scaled_square(lib).apply(x, 2.0).sum()
        y.backward(retain_graph=True)
        first = x.grad.clone()
        (dx,) = lib.autograd.grad(y, x, create_graph=True)
        return first, dx, dx.requires_grad

    both(program)


def test_backward_on_arrays_0d_results_and_broadcast_gradients():
    def program(lib):
        class Broadcasting(lib.autograd.Function):
            backward_on_arrays = True

            @staticmethod
            def forward(ctx, x, y):
                return x * y

            @staticmethod
            def backward(ctx, grad):
                return grad * 2, grad * 3  # y is 0-d: its gradient has x's shape and is summed down

        x = leaf(lib, [[1.0, 2.0], [3.0, 4.0]])
        y = leaf(lib, 5.0)
        Broadcasting.apply(x, y).sum().backward()
        s = leaf(lib, 2.0)
        Broadcasting.apply(s, lib.tensor(1.0, dtype=lib.float64)).backward()  # 0-d: NumPy gives a scalar
        return x.grad, y.grad, s.grad

    both(program)


def test_backward_on_arrays_wrong_results_are_errors_naming_the_function():
    def program(lib, result):
        class Wrong(lib.autograd.Function):
            backward_on_arrays = True

            @staticmethod
            def forward(ctx, x, k):
                return x * 2

            @staticmethod
            def backward(ctx, grad):
                return result(grad)

        Wrong.apply(leaf(lib, [1.0, 2.0]), 3.0).sum().backward()

    with pytest.raises(RuntimeError, match="function WrongBackward returned a list as the gradient at position 1"):
        program(ember, lambda g: ([1.0, 1.0], None))
    with pytest.raises(RuntimeError, match="WrongBackward returned a gradient different than None at position 2"):
        program(ember, lambda g: (g, g))
    with pytest.raises(RuntimeError, match=r"WrongBackward returned an invalid gradient at index 0 - got \[3\] but expected shape compatible with \[2\]"):
        program(ember, lambda g: (np.ones(3), None))


def test_without_backward_on_arrays_a_formula_gets_tensors_and_must_return_them():
    seen = []

    def program(lib, result):
        class Plain(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, grad):
                seen.append(type(grad))
                return result(grad)

        x = leaf(lib, [1.0])
        Plain.apply(x).sum().backward()
        return x.grad

    assert program(ember, lambda g: g * 2).tolist() == [2.0]
    assert seen == [ember.Tensor]
    with pytest.raises(RuntimeError, match="PlainBackward returned a ndarray as the gradient at position 1"):
        program(ember, lambda g: g.numpy() * 2)


def _change_x_after(op):
    """x changes in place after ``op(x)`` was recorded; then backward."""

    def program(lib):
        x = leaf(lib, [1.0, 2.0]) * 1
        y = op(lib, x)
        x.add_(1)
        y.sum().backward()
        return y

    return program


@pytest.mark.parametrize("op", [lambda lib, x: x * 2.0, lambda lib, x: x / 4.0], ids=["mul", "div"])
def test_built_in_ops_save_only_what_their_gradient_needs(op):
    """As torch: x * 2.0 and x / 4.0 keep no copy of x, so changing x in place afterwards is fine."""
    both(_change_x_after(op))


def test_an_op_that_needs_x_for_a_gradient_refuses_a_changed_x():
    both_raise(_change_x_after(lambda lib, x: x * leaf(lib, [3.0, 4.0])), RuntimeError, "modified by an inplace operation")


def test_save_for_backward_of_a_tuple_gives_it_back_unchanged():
    class Keeps(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x, (1, 2), None, 4.5)
            return x * 1

        @staticmethod
        def backward(ctx, grad):
            x, pair, nothing, number = ctx.saved_tensors
            assert isinstance(x, ember.Tensor) and pair == (1, 2) and nothing is None and number == 4.5
            return grad * pair[1]

    x = ember.tensor([1.0, 2.0], requires_grad=True)
    Keeps.apply(x).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_a_gradient_that_is_not_a_tensor_is_a_runtime_error_as_in_torch():
    def program(lib):
        class Wrong(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, grad):
                return 3.0

        Wrong.apply(leaf(lib, [1.0, 2.0])).sum().backward()

    torch_message, ember_message = both_raise(program, RuntimeError)
    assert "expected Variable or None (got float)" in torch_message
    assert "WrongBackward returned a float as the gradient at position 1; expected a Tensor or None" in ember_message


# ---------------------------------------------------------------- the differential sweep of the user API (fixes)


def test_instantiating_a_new_style_function_warns_and_calling_the_instance_is_an_error():
    def program(lib):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            instance = mul_constant(lib)()
        assert any(w.category is DeprecationWarning and "should not be instantiated" in str(w.message)
                   for w in caught)
        instance(leaf(lib, [1.0]), 2.0)

    both_raise(program, RuntimeError, "static forward")
