"""Forward-mode AD (ember.autograd.forward_ad) against torch.autograd.forward_ad on the same programs."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ember
from seed_functions import inplace_double
from twins import both, both_raise, normalise

X = [[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]
V = [[1.0, 0.5, -2.0], [0.3, -1.0, 0.25]]


def dual(lib, values=X, tangent=V, requires_grad=False):
    primal = lib.tensor(values, dtype=lib.float64, requires_grad=requires_grad)
    return lib.autograd.forward_ad.make_dual(primal, lib.tensor(tangent, dtype=lib.float64))


def unpacked(lib, t):
    return tuple(lib.autograd.forward_ad.unpack_dual(t))


PROGRAMS = {
    "pointwise": lambda lib, x: (x.sin() * x.exp() + x.tanh() / (1 + x * x)).sigmoid(),
    "powers": lambda lib, x: x.abs().sqrt() ** 1.5 + lib.relu(x) * 3 - x.clamp(-0.5, 1.0),
    "reductions": lambda lib, x: lib.stack([x.sum(0), x.mean(0), x.amax(0), x.var(0), x.norm(dim=0)]),
    "matmul": lambda lib, x: x @ x.t() + lib.matmul(x.t(), x).sum(),
    "softmax": lambda lib, x: lib.softmax(x, 1) + lib.log_softmax(x, 0) + lib.logsumexp(x, 1, keepdim=True),
    "views": lambda lib, x: x.t()[1:].reshape(-1).unsqueeze(0).expand(2, 4) * x.flatten()[:4],
    "indexing": lambda lib, x: x[:, [2, 0]] + x.gather(1, lib.tensor([[1, 0], [2, 2]])) + x[x > 0].sum(),
    "joining": lambda lib, x: lib.cat([x, x * 2], 1).sum(0) + lib.stack([x, -x]).prod(0).sum(),
    "where": lambda lib, x: lib.where(x > 0, x * x, -x).cumsum(1),
    "nn": lambda lib, x: lib.nn.functional.gelu(lib.nn.functional.linear(x, x.flip(1), x[0, :2])),
    "losses": lambda lib, x: lib.nn.functional.mse_loss(x, x.flip(0)) + lib.nn.functional.cross_entropy(
        x, lib.tensor([2, 0])),
    "sort": lambda lib, x: x.sort(1).values * x.topk(2, 0).values.sum(),
    "linalg": lambda lib, x: lib.linalg.inv(x @ x.t() + lib.eye(2, dtype=lib.float64)).det(),
}


@pytest.mark.parametrize("name", PROGRAMS)
def test_tangents_equal_torchs(name):
    def program(lib):
        with lib.autograd.forward_ad.dual_level():
            return unpacked(lib, PROGRAMS[name](lib, dual(lib)))

    both(program)


NN_PROGRAMS = {
    "conv": lambda lib, F, x: F.conv2d(x.reshape(1, 2, 3, 4), x.reshape(3, 2, 2, 2), x[0, :3], padding=1).sum()
    + F.conv_transpose2d(x.reshape(1, 2, 3, 4), x.reshape(2, 3, 2, 2), padding=1),
    "pooling": lambda lib, F, x: F.max_pool2d(x.reshape(1, 2, 3, 4), 2) + F.avg_pool2d(x.reshape(1, 2, 3, 4), 2),
    "normalization": lambda lib, F, x: F.layer_norm(x, (6,)) + F.batch_norm(x, None, None, training=True),
    "embedding": lambda lib, F, x: F.embedding(lib.tensor([[0, 2], [3, 1]]), x.reshape(6, 4)),
    "in-place relu": lambda lib, F, x: F.relu(x * 1, inplace=True) + F.dropout(x, 0.0) + F.pad(x, (1, 1))[:, 1:-1],
    "attention": lambda lib, F, x: F.scaled_dot_product_attention(x.reshape(2, 3, 4), x.reshape(2, 3, 4).flip(1),
                                                                  x.reshape(2, 3, 4)),
}


@pytest.mark.parametrize("name", NN_PROGRAMS)
def test_tangents_through_nn_functional_equal_torchs(name):
    def program(lib):
        x = np.linspace(-1, 1, 24).reshape(4, 6).tolist()
        v = np.cos(np.arange(24.0)).reshape(4, 6).tolist()
        with lib.autograd.forward_ad.dual_level():
            return unpacked(lib, NN_PROGRAMS[name](lib, lib.nn.functional, dual(lib, x, v)))

    both(program)


@settings(max_examples=15)
@given(st.lists(st.sampled_from(["sin", "exp", "tanh", "square", "neg", "sigmoid", "cos", "reciprocal_ish"]),
                min_size=1, max_size=5),
       st.integers(1, 4))
def test_random_chains_of_pointwise_ops_have_torchs_tangents(chain, n):
    def program(lib):
        steps = {"sin": lib.sin, "exp": lambda t: t.exp() * 0.5, "tanh": lib.tanh, "square": lambda t: t * t,
                 "neg": lambda t: -t, "sigmoid": lib.sigmoid, "cos": lib.cos,
                 "reciprocal_ish": lambda t: 1 / (1 + t * t)}
        with lib.autograd.forward_ad.dual_level():
            t = dual(lib, np.linspace(-1, 1, n).tolist(), np.linspace(0.5, -2, n).tolist())
            for step in chain:
                t = steps[step](t)
            return unpacked(lib, t)

    both(program)


def test_forward_over_reverse_gives_hessian_vector_products_as_torch():
    def program(lib):
        with lib.autograd.forward_ad.dual_level():
            x = dual(lib, requires_grad=True)
            y = (x.sin() * x.exp()).sum() + (x * x).sum() ** 2
            (g,) = lib.autograd.grad(y, x, create_graph=True)
            return unpacked(lib, y)[1], unpacked(lib, g)[1]

    both(program)


def test_reverse_over_forward_differentiates_the_tangent_as_torch():
    def program(lib):
        x = lib.tensor(X, dtype=lib.float64, requires_grad=True)
        with lib.autograd.forward_ad.dual_level():
            d = lib.autograd.forward_ad.make_dual(x, lib.tensor(V, dtype=lib.float64))
            tangent = unpacked(lib, (d.exp() * d).sum())[1]
        return lib.autograd.grad(tangent, x)

    both(program)


def test_in_place_changes_and_views_carry_tangents_as_torch():
    def program(lib):
        with lib.autograd.forward_ad.dual_level():
            d = dual(lib)
            w = d.clone()
            w[0].mul_(d[1])  # through a view: the base's tangent changes
            w[:, 1] = 5.0  # a number: zero tangent there
            view = w.t()
            w.add_(d)  # the earlier view sees the new tangent
            plain = lib.zeros(2, 3, dtype=lib.float64)
            plain[1].copy_(d[0])  # a view without a tangent: its base gets one
            return unpacked(lib, w), unpacked(lib, view), unpacked(lib, plain)

    both(program)


def test_make_dual_unpack_dual_and_levels_as_torch():
    def program(lib):
        fwAD = lib.autograd.forward_ad
        primal, tangent = lib.tensor([1.0, 2.0]), lib.tensor([3.0, 4.0])
        with fwAD.dual_level() as level:
            d = fwAD.make_dual(primal, tangent)
            u = fwAD.unpack_dual(d)
            inside = (level, u.tangent is tangent, u._fields, d._base is primal, repr(d),
                      fwAD.unpack_dual(primal).tangent, fwAD.unpack_dual(d.detach()).tangent)
        return inside + (fwAD.unpack_dual(d).tangent, type(u).__name__)

    both(program, prepare=normalise)


def test_a_tangent_makes_the_dual_a_view_of_a_primal_that_requires_grad():
    def program(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        with lib.autograd.forward_ad.dual_level():
            d = lib.autograd.forward_ad.make_dual(x, lib.ones(2))
            return d.grad_fn.name(), d.requires_grad

    both(program, prepare=normalise)


@pytest.mark.parametrize("program,error,fragment", [
    (lambda lib: lib.autograd.forward_ad.make_dual(lib.ones(2), lib.ones(2)), RuntimeError, "no level exists"),
    (lambda lib: _in_level(lib, lambda f: f.make_dual(lib.ones(2), lib.ones(3))), RuntimeError,
     "different size than that of the original Tensor"),
    (lambda lib: _in_level(lib, lambda f: f.make_dual(lib.ones(2, dtype=lib.long), lib.ones(2))), ValueError,
     "Expected primal to be floating point or complex"),
    (lambda lib: _in_level(lib, lambda f: f.enter_dual_level()), RuntimeError, "Nested forward mode AD"),
    (lambda lib: _in_level(lib, lambda f: f.make_dual(lib.ones(2), lib.ones(2), level=3)), RuntimeError,
     "Invalid level given to _make_dual"),
    (lambda lib: lib.autograd.forward_ad.exit_dual_level(), RuntimeError, "Dual level must be a positive number"),
    (lambda lib: _in_level(lib, lambda f: f.exit_dual_level(level=3)), RuntimeError,
     "Trying to exit a forward AD level that was not the last one that was created"),
])
def test_errors_as_torch(program, error, fragment):
    both_raise(program, error, fragment)


def _in_level(lib, body):
    with lib.autograd.forward_ad.dual_level():
        return body(lib.autograd.forward_ad)


def _custom(lib, with_jvp: bool):
    class Scale(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, y, factor):
            ctx.save_for_forward(x, y)
            ctx.factor = factor
            return x * y * factor

        @staticmethod
        def backward(ctx, grad):
            return grad, grad, None

    if with_jvp:
        def jvp(ctx, x_t, y_t, factor_t):
            x, y = ctx.saved_tensors
            assert factor_t is None
            return (x_t * y + x * y_t) * ctx.factor

        Scale.jvp = staticmethod(jvp)
    return Scale


def test_a_custom_function_jvp_gets_zeros_for_plain_tensors_and_reads_save_for_forward_as_torch():
    def program(lib):
        with lib.autograd.forward_ad.dual_level():
            x = dual(lib)
            y = lib.tensor(V, dtype=lib.float64)  # no tangent: the jvp gets zeros for it
            return unpacked(lib, _custom(lib, True).apply(x, y, 3.0))

    both(program)


def test_a_custom_function_without_jvp_raises_torchs_error_in_forward_mode():
    def program(lib):
        with lib.autograd.forward_ad.dual_level():
            _custom(lib, False).apply(dual(lib), dual(lib), 2.0)

    both_raise(program, NotImplementedError, "You must implement the jvp function for custom autograd.Function "
                                             "to use it with forward mode AD.")


def test_a_custom_function_jvp_must_give_a_tangent_of_its_outputs_size():
    def program(lib):
        class Shrinking(_custom(lib, False)):
            @staticmethod
            def jvp(ctx, x_t, y_t, factor_t):
                return x_t[:1]  # a size that would broadcast to the output's: refused all the same

        with lib.autograd.forward_ad.dual_level():
            Shrinking.apply(dual(lib), dual(lib), 2.0)

    both_raise(program, RuntimeError, r"different size than that of the original Tensor.*size \[2, 3\] while "
                                      r"the given forward gradient is of size \[1, 3\]")


def test_without_a_level_nothing_carries_a_tangent():
    x = ember.ones(2)
    with ember.autograd.forward_ad.dual_level():
        d = ember.autograd.forward_ad.make_dual(x, ember.ones(2))
    assert "tangent" not in repr(d * 2)
    assert ember.autograd.forward_ad.unpack_dual(d * 2).tangent is None


def test_a_custom_function_that_changes_its_input_in_place_updates_the_tangent_in_its_jvp_as_torch():
    def program(lib):
        class InplaceDouble(inplace_double(lib)):
            @staticmethod
            def jvp(ctx, tangent):
                tangent.mul_(2)  # as torch asks: the dirty input's tangent changes in place, and is returned
                return tangent

        with lib.autograd.forward_ad.dual_level():
            d = dual(lib).clone()
            out = InplaceDouble.apply(d)
            return out is d, unpacked(lib, d)

    both(program)


def test_a_view_made_before_its_base_got_a_tangent_sees_it_as_torch():
    def program(lib):
        fwAD = lib.autograd.forward_ad
        with fwAD.dual_level():
            base = lib.zeros(2, 3, dtype=lib.float64)
            early = base[:, 1:]
            base.copy_(dual(lib))
            return unpacked(lib, early), unpacked(lib, early * 2)

    both(program)


def test_dual_level_decorates_a_function_as_torch():
    def program(lib):
        fwAD = lib.autograd.forward_ad

        @fwAD.dual_level()
        def tangent_of_square(x, v):
            return fwAD.unpack_dual(fwAD.make_dual(x, v) ** 2).tangent

        return tangent_of_square(lib.tensor([3.0]), lib.tensor([1.0]))

    both(program)
