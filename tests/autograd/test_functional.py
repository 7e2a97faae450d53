"""ember.autograd.functional against torch.autograd.functional on the same functions."""
from __future__ import annotations

import pytest

from twins import both, both_raise

X = [0.5, -1.0, 2.0]
Y = [[1.0, 2.0], [0.3, 0.1]]


def inputs(lib):
    return lib.tensor(X, dtype=lib.float64), lib.tensor(Y, dtype=lib.float64)


def two_outputs(x, y):
    return (x[:2] * y).sin().sum(0), x.exp()


def scalar(x, y):
    return ((x[:2] * y).sum(1) * x[1:]).sum().tanh() + (x ** 3).sum()


def test_vjp_and_jvp_as_torch():
    def program(lib):
        F, (x, y) = lib.autograd.functional, inputs(lib)
        return (F.vjp(two_outputs, (x, y), (lib.ones(2, dtype=lib.float64), x)),
                F.jvp(two_outputs, (x, y), (x, y)),
                F.vjp(lambda t: t.exp(), x, x), F.jvp(lambda t: (t * 2).sum(), x, x),
                F.vjp(lambda t: t.sum(), x))

    both(program)


def test_vhp_and_hvp_as_torch():
    def program(lib):
        F, (x, y) = lib.autograd.functional, inputs(lib)
        return F.vhp(scalar, (x, y), (x, y)), F.hvp(scalar, (x, y), (y[0].repeat(2)[:3], y)), \
            F.hvp(lambda t: (t ** 4).sum(), x, x)

    both(program)


@pytest.mark.parametrize("options", [{}, {"vectorize": True}, {"vectorize": True, "strategy": "forward-mode"},
                                     {"create_graph": True}])
def test_jacobian_as_torch(options):
    def program(lib):
        F, (x, y) = lib.autograd.functional, inputs(lib)
        j = F.jacobian(two_outputs, (x, y), **options)
        return tuple(tuple(b) for b in j), F.jacobian(lambda t: t.exp() * t.sum(), x, **options), \
            F.jacobian(lambda t: (t, t[:2] * 2), x, **options)

    both(program)


@pytest.mark.parametrize("options", [{}, {"vectorize": True}, {"vectorize": True,
                                                                "outer_jacobian_strategy": "forward-mode"}])
def test_hessian_as_torch(options):
    def program(lib):
        F, (x, y) = lib.autograd.functional, inputs(lib)
        return F.hessian(scalar, (x, y), **options), F.hessian(lambda t: (t.sin() * t).sum(), x, **options)

    both(program)


def test_create_graph_keeps_the_result_differentiable_as_torch():
    def program(lib):
        x = lib.tensor(X, dtype=lib.float64, requires_grad=True)
        _, product = lib.autograd.functional.hvp(lambda t: (t ** 4).sum(), x, x, create_graph=True)
        jac = lib.autograd.functional.jacobian(lambda t: t ** 3, x, create_graph=True)
        return lib.autograd.grad(product.sum() + jac.sum(), x), product.requires_grad, \
            lib.autograd.functional.jacobian(lambda t: t ** 3, x).requires_grad

    both(program)


def test_non_strict_gives_zeros_where_the_output_does_not_depend_on_an_input_as_torch():
    def program(lib):
        F, (x, y) = lib.autograd.functional, inputs(lib)
        return F.jacobian(lambda a, b: a * 2, (x, y)), F.vjp(lambda a, b: a * 2, (x, y), x)

    both(program)


@pytest.mark.parametrize("program,error,fragment", [
    (lambda lib, F, x, y: F.vjp(two_outputs, (x, y)), RuntimeError, "v can only be None if"),
    (lambda lib, F, x, y: F.vjp(lambda a: a * 2, x, y), RuntimeError, "v has invalid size"),
    (lambda lib, F, x, y: F.jvp(lambda a: a.detach() * 2, x, x, strict=True), RuntimeError,
     "Output 0 of the user-provided function does not require gradients"),
    (lambda lib, F, x, y: F.hvp(lambda a: a.sum(), x, x, strict=True), RuntimeError,
     "jacobian of the user-provided function with respect to input 0 is independent of the input"),
    (lambda lib, F, x, y: F.vjp(lambda a, b: a * 2, (x, y), x, strict=True), RuntimeError,
     "independent of input 1"),
    (lambda lib, F, x, y: F.hessian(two_outputs, (x, y)), RuntimeError, "should return a single Tensor"),
    (lambda lib, F, x, y: F.hessian(lambda a: a * 2, x), RuntimeError, "should contain a single element"),
    (lambda lib, F, x, y: F.jacobian(two_outputs, (x, y), strategy="forward-mode"), NotImplementedError,
     "only implemented for `vectorize=True`"),
    (lambda lib, F, x, y: F.jacobian(two_outputs, (x, y), vectorize=True, strategy="forward-mode",
                                     create_graph=True), NotImplementedError, "create_graph=True"),
    (lambda lib, F, x, y: F.jacobian(two_outputs, (x, y), vectorize=True, strict=True), RuntimeError,
     "`strict=True` and `vectorized=True` are not supported together"),
    (lambda lib, F, x, y: F.vjp(lambda a: a, [x]), TypeError, "must be either a Tensor or a tuple of Tensors"),
])
def test_errors_as_torch(program, error, fragment):
    both_raise(lambda lib: program(lib, lib.autograd.functional, *inputs(lib)), error, fragment)
