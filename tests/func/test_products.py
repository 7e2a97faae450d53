"""The per-sample products vmap's matmul rule uses: values against NumPy, gradients to second order."""
import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck
from ember.func._products import Outer, StackedProduct
from twins import both

RNG = np.random.default_rng(2)


@pytest.mark.parametrize("rows", [1, 2])
@pytest.mark.parametrize("shared", [False, True])
def test_stacked_product_gradients(rows, shared):
    """``shared``: one weight expanded to every sample (zero strides), as per-sample gradients make it."""
    a = ember.tensor(RNG.standard_normal((3, rows, 4)), requires_grad=True)
    b = ember.tensor(RNG.standard_normal((4, 2) if shared else (3, 4, 2)), requires_grad=True)
    product = lambda a, b: StackedProduct.apply(a, b.expand(3, 4, 2))  # noqa: E731
    expected = np.matmul(a.detach().numpy(), np.broadcast_to(b.detach().numpy(), (3, 4, 2)))
    np.testing.assert_allclose(product(a, b).detach().numpy(), expected)
    assert gradcheck(product, (a, b)) and gradgradcheck(product, (a, b))


def test_outer_gradients():
    u = ember.tensor(RNG.standard_normal((3, 4)), requires_grad=True)
    v = ember.tensor(RNG.standard_normal((3, 2)), requires_grad=True)
    assert gradcheck(Outer.apply, (u, v)) and gradgradcheck(Outer.apply, (u, v))


def test_matmul_rule_by_ranks():
    x, w, v = RNG.standard_normal((3, 2, 4)), RNG.standard_normal((3, 4, 5)), RNG.standard_normal((3, 4))

    def program(lib):
        X, W, V = lib.tensor(x), lib.tensor(w), lib.tensor(v)
        vmap = lib.func.vmap
        return (vmap(lib.matmul)(X, W), vmap(lib.matmul)(V, W), vmap(lib.matmul)(X, V),
                vmap(lib.matmul, in_dims=(None, 0))(X[0], W), vmap(lib.matmul, in_dims=(None, 0))(X[0], V),
                vmap(lib.mv, in_dims=(0, None))(X, V[0]), vmap(vmap(lib.dot))(X, X))
    both(program)


def test_second_order_through_per_sample_weights():
    x, w = RNG.standard_normal((3, 4)), RNG.standard_normal((2, 4))

    def program(lib):
        loss = lambda w_, s: (lib.nn.functional.linear(s, w_).tanh() ** 2).sum()  # noqa: E731
        return lib.func.vmap(lib.func.hessian(loss), in_dims=(None, 0))(lib.tensor(w), lib.tensor(x))
    both(program)
