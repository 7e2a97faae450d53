"""gradcheck's check_batched_grad and check_batched_forward_grad, and gradgradcheck's check_batched_grad.

The batched checks compare products for a few random vectors computed at once under vmap with the same
products one at a time. On ordinary ops they pass, as torch's do; they fail (GradcheckError) where a
backward cannot run on a batch, or gives another result when batched.
"""
import sys

import numpy as np
import pytest
import torch

import ember
from ember.autograd import GradcheckError

from twins import LIBS, both_raise


def double(lib, values):
    return lib.tensor(values, dtype=lib.float64, requires_grad=True)


def matrix(lib, rows=3, columns=4, seed=0):
    values = np.random.default_rng(seed).uniform(0.2, 1.5, (rows, columns)) * np.array([1, -1, 1, -1][:columns])
    return double(lib, values.tolist())


def with_generated_vmap_rule(lib):
    class Cube(lib.autograd.Function):
        generate_vmap_rule = True

        @staticmethod
        def forward(x):
            return x ** 3

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])
            ctx.save_for_forward(inputs[0])

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 3 * x * x * grad

        @staticmethod
        def jvp(ctx, tangent):
            (x,) = ctx.saved_tensors
            return 3 * x * x * tangent

    return Cube


def with_vmap_staticmethod(lib, factor=2):
    """``x * 2``, whose vmap staticmethod multiplies by ``factor`` (2 is right; anything else is wrong)."""
    class Doubler(without_vmap_support(lib)):
        @staticmethod
        def vmap(info, in_dims, x):
            return x * factor, in_dims[0]

    return Doubler


def without_vmap_support(lib):
    """``x * 2``, with backward and jvp but neither a vmap staticmethod nor generate_vmap_rule."""
    class NoVmap(lib.autograd.Function):
        @staticmethod
        def forward(x):
            return x * 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

        @staticmethod
        def jvp(ctx, tangent):
            return tangent * 2

    return NoVmap


PANEL = {
    "pointwise": (lambda lib, x, y: (x.sin() * y.exp() + x / (y * y + 1)).tanh(), 2),
    "sigmoid_relu": (lambda lib, x, y: x.sigmoid() * y.relu(), 2),
    "reductions": (lambda lib, x, y: (x.sum(1), (x * y).mean(), y.amax(0), x.max(1).values), 2),
    "matmul": (lambda lib, x, y: (x @ y.t(), lib.mm(x.t(), y)), 2),
    "views": (lambda lib, x, y: (x.t().reshape(2, 6) * y.view(6, 2).t(), x.unsqueeze(0).expand(2, 3, 4)), 2),
    "indexing": (lambda lib, x, y: (x[1:, ::2] * y[lib.tensor([0, 2, 0])][:2, 1:3], x[..., 1]), 2),
    "joining": (lambda lib, x, y: lib.cat([x, y]).softmax(-1) + lib.stack([x, y]).mean(0).repeat(2, 1), 2),
    "where_loss": (lambda lib, x, y: (lib.where(x > 0, x, y), lib.nn.functional.mse_loss(x, y)), 2),
    "generated_vmap_rule": (lambda lib, x, y: with_generated_vmap_rule(lib).apply(x) * y, 2),
    "vmap_staticmethod": (lambda lib, x, y: with_vmap_staticmethod(lib).apply(x).tanh() + y, 2),
}


@pytest.mark.parametrize("name", list(PANEL))
def test_batched_grad_passes_on_ordinary_ops_as_in_torch(name):
    program, _ = PANEL[name]
    for lib in LIBS:
        inputs = (matrix(lib), matrix(lib, seed=1))
        func = lambda *args: program(lib, *args)  # noqa: E731
        assert lib.autograd.gradcheck(func, inputs, check_batched_grad=True), lib.__name__
        assert lib.autograd.gradgradcheck(func, inputs, check_batched_grad=True), lib.__name__


@pytest.mark.parametrize("name", ["pointwise", "reductions", "matmul", "views", "indexing", "generated_vmap_rule",
                                  "vmap_staticmethod"])
def test_batched_forward_grad_passes_on_ordinary_ops_as_in_torch(name):
    program, _ = PANEL[name]
    for lib in LIBS:
        inputs = (matrix(lib), matrix(lib, seed=1))
        assert lib.autograd.gradcheck(lambda *args: program(lib, *args), inputs, check_forward_ad=True,
                                      check_batched_forward_grad=True, check_backward_ad=False), lib.__name__


def test_vmap_of_autograd_grad_gives_torch_vjps():
    """The products under vmap are torch's (torch.func.vmap over torch.autograd.grad), for a graph of many kinds."""
    results = []
    for lib, vmap in ((torch, torch.func.vmap), (ember, ember.func.vmap)):
        x, y = matrix(lib), matrix(lib, seed=1)
        out = (x.tanh()[1:, lib.tensor([3, 0])] * y[:2, :2].sigmoid()).relu() @ y[:2, 1:3].t()
        vs = lib.tensor(np.random.default_rng(2).standard_normal((5, 2, 2)).tolist(), dtype=lib.float64)
        grads = vmap(lambda v: lib.autograd.grad(out, (x, y), v, retain_graph=True))(vs)
        results.append([g.detach().numpy() for g in grads])
    for got, wanted in zip(results[1], results[0]):
        np.testing.assert_allclose(got, wanted, rtol=1e-12, atol=1e-12)


def test_sum_to_size_under_vmap_is_torchs():
    results = []
    for lib, vmap in ((torch, torch.func.vmap), (ember, ember.func.vmap)):
        x = lib.tensor(np.arange(24.0).reshape(2, 3, 4).tolist(), dtype=lib.float64)
        results.append([vmap(lambda t: t.sum_to_size(size))(x).numpy() for size in ((1, 4), (3, 1), (4,), (3, 4))])
    for got, wanted in zip(results[1], results[0]):
        np.testing.assert_array_equal(got, wanted)


def square(lib, gradient):
    """x * x, whose backward returns ``gradient(grad, x)``."""
    class Square(lib.autograd.Function):
        @staticmethod
        def forward(x):
            return x * x

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return gradient(grad, x)

    return Square


def numpy_square(lib):
    """x * x, whose backward computes in NumPy: right for one gradient, impossible on a batch."""
    return square(lib, lambda grad, x: lib.from_numpy(grad.detach().numpy() * 2 * x.detach().numpy()))


def test_a_backward_that_cannot_run_batched_fails_the_check_as_in_torch():
    def program(lib):
        try:
            lib.autograd.gradcheck(numpy_square(lib).apply, (double(lib, [0.5, -1.0, 2.0]),),
                                   check_batched_grad=True)
        except sys.modules[f"{lib.__name__}.autograd.gradcheck"].GradcheckError as error:  # each one's own class
            raise RuntimeError(str(error)) from error

    both_raise(program, RuntimeError, "^While computing batched gradients, got: ", "check_batched_grad=False")
    for lib in LIBS:  # each gradient alone is right
        assert lib.autograd.gradcheck(numpy_square(lib).apply, (double(lib, [0.5, -1.0, 2.0]),))
    assert not ember.autograd.gradcheck(numpy_square(ember).apply, (double(ember, [0.5, -1.0, 2.0]),),
                                        check_batched_grad=True, raise_exception=False)


def square_through(lib, doubler):
    """x * x whose backward doubles through ``doubler`` (a Function applied to the batched gradient)."""
    return square(lib, lambda grad, x: doubler.apply(grad * x))


def test_a_vmap_staticmethod_as_torch_func_vmap_uses_it():
    """ember.func.vmap runs a Function's vmap staticmethod, as torch.func.vmap does (the checks below rely on it)."""
    for lib, vmap in ((torch, torch.func.vmap), (ember, ember.func.vmap)):
        ones = lib.ones(2, 3, dtype=lib.float64)
        assert vmap(with_vmap_staticmethod(lib, factor=3).apply)(ones).tolist() == [[3.0] * 3] * 2


def test_a_backward_wrong_when_batched_fails_the_check():
    """The backward calls a Function whose vmap staticmethod is wrong: right per gradient, wrong on a batch.

    (torch's gradcheck batches with its older vmap, which runs the Function's forward instead of its vmap
    staticmethod, so it cannot see this; ember's check runs ember.func.vmap.)
    """
    x = double(ember, [0.5, -1.0, 2.0])
    wrong = square_through(ember, with_vmap_staticmethod(ember, factor=3))
    assert ember.autograd.gradcheck(wrong.apply, (x,))
    with pytest.raises(GradcheckError) as info:
        ember.autograd.gradcheck(wrong.apply, (x,), check_batched_grad=True)
    message = str(info.value)
    assert message.startswith("For output 0 and input 0:\n")
    assert "check_batched_grad=False" in message
    got, expected = (message.split(f"\n{label}:\n")[1].split("\n\n")[0] for label in ("Got", "Expected"))
    assert got != expected
    right = square_through(ember, with_vmap_staticmethod(ember, factor=2))
    assert ember.autograd.gradcheck(right.apply, (x,), check_batched_grad=True)


def cube_with_double_backward_through(lib, doubler):
    """x ** 3, whose gradient 3 x^2 g is a Function of its own; that one's backward doubles through ``doubler``."""
    class CubeGradient(lib.autograd.Function):
        generate_vmap_rule = True

        @staticmethod
        def forward(grad, x):
            return 3 * x * x * grad

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(*inputs)

        @staticmethod
        def backward(ctx, gg):
            grad, x = ctx.saved_tensors
            return 3 * x * x * gg, 3 * doubler.apply(x * grad * gg)

    class Cube(lib.autograd.Function):
        @staticmethod
        def forward(x):
            return x ** 3

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return CubeGradient.apply(grad, x)

    return Cube


def test_gradgradcheck_checks_batched_second_derivatives():
    x = double(ember, [0.5, -1.0, 2.0])
    wrong = cube_with_double_backward_through(ember, with_vmap_staticmethod(ember, factor=3))
    assert ember.autograd.gradcheck(wrong.apply, (x,), check_batched_grad=True)  # first derivatives batch well
    assert ember.autograd.gradgradcheck(wrong.apply, (x,))
    with pytest.raises(GradcheckError, match="^For output 0 and input 0:"):
        ember.autograd.gradgradcheck(wrong.apply, (x,), check_batched_grad=True)
    for lib in LIBS:
        right = cube_with_double_backward_through(lib, with_vmap_staticmethod(lib, factor=2))
        assert lib.autograd.gradgradcheck(right.apply, (double(lib, [0.5, -1.0, 2.0]),), check_batched_grad=True)


def test_a_jvp_wrong_when_batched_fails_the_forward_check():
    x = double(ember, [0.5, -1.0, 2.0])
    wrong = with_vmap_staticmethod(ember, factor=3)
    options = {"check_forward_ad": True, "check_backward_ad": False}
    assert ember.autograd.gradcheck(wrong.apply, (x,), **options)
    with pytest.raises(GradcheckError) as info:
        ember.autograd.gradcheck(wrong.apply, (x,), check_batched_forward_grad=True, **options)
    assert str(info.value).startswith("For output 0 and input 0:\n")
    assert "check_batched_forward_grad=False" in str(info.value)


def test_a_function_without_vmap_support_fails_the_forward_check():
    """Under ember.func.vmap (as under torch.func.vmap) a Function needs a vmap staticmethod or generate_vmap_rule;
    torch's gradcheck batches with its older vmap, which runs any Function's forward on batched tensors."""
    NoVmap = without_vmap_support(ember)
    x = double(ember, [0.5, -1.0])
    assert ember.autograd.gradcheck(NoVmap.apply, (x,), check_forward_ad=True, check_batched_grad=True)
    with pytest.raises(GradcheckError, match="^While computing batched gradients, got: .*NoVmap") as info:
        ember.autograd.gradcheck(NoVmap.apply, (x,), check_forward_ad=True, check_batched_forward_grad=True)
    assert "check_batched_forward_grad=False" in str(info.value)
    with pytest.raises(RuntimeError, match="NoVmap, but it does not have vmap support"):
        torch.func.vmap(without_vmap_support(torch).apply)(torch.ones(2, 1))
