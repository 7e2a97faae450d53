"""Custom autograd Functions in unusual but legal uses, each compared with torch."""
from __future__ import annotations

import collections
import warnings

import pytest
import torch

import ember
from tests.autograd.test_function import cube_once


def outcome(run):
    """What ``run()`` gives: ("ok", value) or ("error", exception type, message)."""
    try:
        return ("ok", run())
    except Exception as error:  # noqa: BLE001 - the outcome is what is compared
        return ("error", type(error), str(error))


# ---------------------------------------------------------------- jvp of Functions whose outputs alias inputs


def function_with_jvp(lib, forward, jvp):
    class F(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return forward(ctx, x)

        @staticmethod
        def jvp(ctx, tangent):
            return jvp(tangent)

        @staticmethod
        def backward(ctx, grad):
            return grad

    return F


def doubled_in_place(ctx, x):
    x.mul_(2)
    ctx.mark_dirty(x)
    return x


def tangent_after_apply(lib, forward, jvp, input_is_view=False):
    fwAD = lib.autograd.forward_ad
    F = function_with_jvp(lib, forward, jvp)
    with fwAD.dual_level():
        base = fwAD.make_dual(lib.tensor([1.0, 2.0, 3.0, 4.0]), lib.tensor([1.0, 0.0, 1.0, 0.0]))
        x = base[:2] if input_is_view else base
        out = F.apply(x)
        return fwAD.unpack_dual(out).tangent.tolist(), fwAD.unpack_dual(base).tangent.tolist()


JVP_CASES = {
    # forward changes its input in place: the jvp must change the tangent in place and return it itself
    "dirty, tangent changed in place": (doubled_in_place, lambda t: t.mul_(2), False, None),
    "dirty input view, tangent changed in place": (doubled_in_place, lambda t: t.mul_(2), True, None),
    "dirty, new tangent": (doubled_in_place, lambda t: t * 2, False, "not modifying the forward mode gradients inplace"),
    "dirty, None": (doubled_in_place, lambda t: None, False, "not modifying the forward mode gradients inplace"),
    "dirty input view, new tangent": (doubled_in_place, lambda t: t * 2, True, "not modifying the forward mode"),
    "dirty, view of the changed tangent": (doubled_in_place, lambda t: t.mul_(2)[:], False,
                                           "not returning the forward mode gradients as-is"),
    # forward returns a view of its input: the jvp must return the same view of the input's tangent
    "view, view tangent": (lambda ctx, x: x[1:], lambda t: t[1:], False, None),
    "view of a view input": (lambda ctx, x: x[1:], lambda t: t[1:], True, None),
    "view, new tangent": (lambda ctx, x: x[1:], lambda t: t[1:] * 1, False, "jvp is not returning a view"),
    "view of a view input, new tangent": (lambda ctx, x: x[1:], lambda t: t[1:] * 2, True,
                                          "jvp is not returning a view"),
    "view, view of another tensor": (lambda ctx, x: x[1:], lambda t: (t * 2)[1:], False,
                                     "not returning a view of the given grad input"),
    "input as it is, tangent as it is": (lambda ctx, x: x, lambda t: t, False, "jvp is not returning a view"),
    "input as it is, view_as tangent": (lambda ctx, x: x, lambda t: t.view_as(t), False, None),
}


@pytest.mark.parametrize("case", list(JVP_CASES))
def test_jvp_of_outputs_that_alias_inputs_as_torch(case):
    forward, jvp, input_is_view, message = JVP_CASES[case]
    mine = outcome(lambda: tangent_after_apply(ember, forward, jvp, input_is_view))
    theirs = outcome(lambda: tangent_after_apply(torch, forward, jvp, input_is_view))
    assert mine[:2] == theirs[:2], (mine, theirs)
    if message is not None:
        assert message in theirs[2] and message in mine[2]
        assert "F.jvp" in mine[2]  # ember's message names the Function


def test_jvp_of_a_view_tangent_of_another_input_as_torch():
    def run(lib):
        class ViewOfSecond(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                return y[1:]

            @staticmethod
            def jvp(ctx, tx, ty):
                return tx[1:]  # a view, but of the other input's tangent

        fwAD = lib.autograd.forward_ad
        with fwAD.dual_level():
            x = fwAD.make_dual(lib.tensor([1.0, 2.0]), lib.tensor([1.0, 0.0]))
            y = fwAD.make_dual(lib.tensor([1.0, 2.0]), lib.tensor([5.0, 6.0]))
            return fwAD.unpack_dual(ViewOfSecond.apply(x, y)).tangent.tolist()

    mine, theirs = outcome(lambda: run(ember)), outcome(lambda: run(torch))
    assert mine[:2] == theirs[:2] == ("error", RuntimeError)
    assert "not returning a view of the given grad input" in mine[2]


# ---------------------------------------------------------------- the vmap staticmethod's out_dims


def doubling_with_vmap_rule(lib, out_dims):
    class Doubled(lib.autograd.Function):
        @staticmethod
        def forward(x):
            return x * 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def vmap(info, in_dims, x):
            return x * 2, out_dims

    return Doubled


@pytest.mark.parametrize("out_dims", [(0, 0), [0, 1]])
def test_vmap_rule_with_out_dims_of_another_structure_raises_runtime_error_as_torch(out_dims):
    def run(lib):
        return lib.vmap(doubling_with_vmap_rule(lib, out_dims).apply)(lib.ones(2, 3))

    mine, theirs = outcome(lambda: run(ember)), outcome(lambda: run(torch))
    assert mine[:2] == theirs[:2] == ("error", RuntimeError)
    assert "incompatible (output, out_dims)" in theirs[2] and "incompatible (output, out_dims)" in mine[2]
    assert "Doubled.vmap" in mine[2] and "`outputs`" in mine[2]


@pytest.mark.parametrize("out_dims, returns", [((0, 0), lambda x: x), ((0, 0, 0), lambda x: (x, x))])
def test_vmap_out_dims_of_another_structure_names_the_outputs(out_dims, returns):
    def run(lib):
        return lib.vmap(returns, out_dims=out_dims)(lib.ones(2))

    mine, theirs = outcome(lambda: run(ember)), outcome(lambda: run(torch))
    assert mine[:2] == theirs[:2] == ("error", ValueError)
    for message in (mine[2], theirs[2]):
        assert "out_dims is not compatible with the structure of `outputs`" in message


# ---------------------------------------------------------------- a complex gradient for a real input


def doubling(lib, gradient, on_arrays=False):
    """x * 2 with the given formula as its backward (``backward_on_arrays`` is ember's; torch ignores it)."""
    return type("Doubling", (lib.autograd.Function,), {
        "backward_on_arrays": on_arrays,
        "forward": staticmethod(lambda ctx, x: x * 2),
        "backward": staticmethod(lambda ctx, grad: gradient(grad)),
    })


def gradient_after_backward(lib, x, gradient, on_arrays=False):
    doubling(lib, gradient, on_arrays).apply(x).abs().sum().backward()
    return x.grad.tolist()


@pytest.mark.parametrize("on_arrays", [False, True])
def test_backward_returning_a_complex_gradient_for_a_real_input_raises_as_torch(on_arrays):
    def run(lib):
        return gradient_after_backward(lib, lib.tensor([1.0, 2.0], requires_grad=True), lambda g: g * 1j, on_arrays)

    mine, theirs = outcome(lambda: run(ember)), outcome(lambda: run(torch))
    assert mine[:2] == theirs[:2] == ("error", RuntimeError)
    assert "DoublingBackward" in mine[2] and "complex gradient" in mine[2]


def test_backward_returning_a_real_gradient_for_a_complex_input_is_taken_as_torch():
    def run(lib):
        return gradient_after_backward(lib, lib.tensor([1 + 1j], requires_grad=True), lambda g: g.real)

    mine, theirs = outcome(lambda: run(ember)), outcome(lambda: run(torch))
    assert mine[0] == theirs[0] == "ok"
    assert mine[1] == pytest.approx(theirs[1])


# ---------------------------------------------------------------- once_differentiable under create_graph


def first_gradient(lib):
    """The gradient of the cube with a grad_output that requires grad, keeping its graph."""
    x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
    v = lib.ones(2, dtype=lib.float64, requires_grad=True)
    (g,) = lib.autograd.grad(cube_once(lib).apply(x), x, v, create_graph=True)
    return x, v, g


@pytest.mark.parametrize("wrt", ["input", "grad_output"])
def test_gradient_of_a_once_differentiable_backward_reaches_no_other_tensor_as_torch(wrt):
    def run(lib):
        x, v, g = first_gradient(lib)
        return g.requires_grad, g.grad_fn.name().split("::")[-1], lib.autograd.grad(
            g.sum(), x if wrt == "input" else v, allow_unused=True)

    assert outcome(lambda: run(ember)) == outcome(lambda: run(torch)) == ("ok", (True, "Error", (None,)))


def test_backward_through_a_once_differentiable_gradient_raises_as_torch():
    def run(lib):
        return first_gradient(lib)[2].sum().backward()

    mine, theirs = outcome(lambda: run(ember)), outcome(lambda: run(torch))
    assert mine == theirs


def test_gradgradcheck_of_a_once_differentiable_function_fails_without_raising_as_torch():
    def run(lib):
        x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        return lib.autograd.gradgradcheck(cube_once(lib).apply, (x,), raise_exception=False)

    assert outcome(lambda: run(ember)) == outcome(lambda: run(torch)) == ("ok", False)


def test_check_function_reports_gradgradcheck_of_a_once_differentiable_function_as_not_applicable():
    report = ember.autograd.check_function(cube_once(ember).apply, ember.tensor([0.5, -1.0, 2.0]))
    (line,) = [r for r in report.results if r.name == "gradgradcheck"]
    assert line.status == "n/a" and "once_differentiable" in line.detail


# ---------------------------------------------------------------- mark_dirty of a tensor that is no input


def marked_dirty(ctx, tensor):  # (ctx.mark_dirty returns nothing)
    ctx.mark_dirty(tensor)
    return tensor


def marking_a_new_tensor_dirty(lib):
    """A Function whose forward marks dirty a tensor it made, not its input."""
    return function_with_jvp(lib, lambda ctx, x: marked_dirty(ctx, x * 2), jvp=None)


@pytest.mark.parametrize("recorded", [True, False])
def test_mark_dirty_of_a_tensor_that_is_no_input_warns_when_recorded_as_torch(recorded):
    def run(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=recorded)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = marking_a_new_tensor_dirty(lib).apply(x)
        return out.tolist(), [str(w.message) for w in caught if "mark_dirty" in str(w.message)]

    mine, theirs = run(ember), run(torch)
    assert mine[0] == theirs[0]
    assert len(mine[1]) == len(theirs[1]) == (1 if recorded else 0)
    if recorded:
        for message in (mine[1][0], theirs[1][0]):
            assert "ctx.mark_dirty() received a tensor that was not an input" in message


# ---------------------------------------------------------------- what a jvp receives and may return


def tangent_of_first_output(lib, forward, jvp):
    """The first output's tangent of a Function of (x, second) with x dual, or what the call raised."""
    class Twin(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            return forward(ctx, x, y)

        @staticmethod
        def jvp(ctx, tx, ty):
            return jvp(tx, ty)

    fwAD = lib.autograd.forward_ad
    with fwAD.dual_level():
        x = fwAD.make_dual(lib.tensor([1.0, 2.0]), lib.tensor([1.0, 0.0]))
        out = Twin.apply(x, lib.ones(2))
        first = out[0] if isinstance(out, tuple) else out
        tangent = fwAD.unpack_dual(first).tangent
        return None if tangent is None else tangent.tolist()


def without_materialized_grads(ctx, x, y):
    ctx.set_materialize_grads(False)
    return x * y


def non_differentiable_product(ctx, x, y):
    out = x * y
    ctx.mark_non_differentiable(out)
    return out


def saving_a_number_for_forward(ctx, x, y):
    ctx.save_for_forward(x, 3)
    return x * y


JVP_INPUT_CASES = {
    "materialize off: no tangent is None": (without_materialized_grads, lambda tx, ty: tx * 2 if ty is None else ty),
    "materialize on: no tangent is zeros": (lambda ctx, x, y: x * y, lambda tx, ty: tx * 2 + ty),
    "tangent for a non-differentiable output": (non_differentiable_product, lambda tx, ty: tx * 2),
    "None for a non-differentiable output": (non_differentiable_product, lambda tx, ty: None),
    "a number as tangent": (lambda ctx, x, y: x * y, lambda tx, ty: 3.0),
}


@pytest.mark.parametrize("case", list(JVP_INPUT_CASES))
def test_jvp_inputs_and_results_as_torch(case):
    forward, jvp = JVP_INPUT_CASES[case]
    mine = outcome(lambda: tangent_of_first_output(ember, forward, jvp))
    theirs = outcome(lambda: tangent_of_first_output(torch, forward, jvp))
    assert mine[:2] == theirs[:2], (mine, theirs)


def test_save_for_forward_of_a_number_raises_as_torch():
    def run(lib):
        return tangent_of_first_output(lib, saving_a_number_for_forward, lambda tx, ty: tx)

    mine, theirs = outcome(lambda: run(ember)), outcome(lambda: run(torch))
    assert mine[:2] == theirs[:2] == ("error", AssertionError)
    assert "save_for_forward expects all arguments to be tensors" in mine[2]


# ---------------------------------------------------------------- jacrev of a Function without a batching rule


def exp_times(lib):
    """(x, y) -> (exp(x) * y, x + sum(y)): setup_context style, with no vmap rule."""

    class ExpTimes(lib.autograd.Function):
        @staticmethod
        def forward(x, y):
            return x.exp() * y, x + y.sum()

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(*inputs)

        @staticmethod
        def backward(ctx, g1, g2):
            x, y = ctx.saved_tensors
            return g1 * x.exp() * y + g2, g1 * x.exp() + g2.sum()

    return ExpTimes


def numbers_and_structure(tree) -> tuple:
    """A tree of tensors as (its numbers in order, its structure with shapes), to compare across libraries."""
    if isinstance(tree, (tuple, list)):
        parts = [numbers_and_structure(t) for t in tree]
        return [n for p in parts for n in p[0]], (type(tree).__name__, [p[1] for p in parts])
    if isinstance(tree, dict):
        parts = {k: numbers_and_structure(v) for k, v in tree.items()}
        return [n for p in parts.values() for n in p[0]], {k: p[1] for k, p in parts.items()}
    return tree.detach().reshape(-1).tolist(), tuple(tree.shape)


JACREV_CASES = {
    "both arguments": lambda lib, f, x, y: lib.func.jacrev(f.apply, argnums=(0, 1))(x, y),
    "second argument": lambda lib, f, x, y: lib.func.jacrev(f.apply, argnums=1)(x, y),
    "with aux": lambda lib, f, x, y: lib.func.jacrev(lambda a, b: (f.apply(a, b)[0].sin(), {"b": b}),
                                                     has_aux=True)(x, y),
    "in chunks": lambda lib, f, x, y: lib.func.jacrev(lambda a: f.apply(a, y)[0], chunk_size=1)(x),
    "scalar output": lambda lib, f, x, y: lib.func.jacrev(lambda a: f.apply(a, y)[0].sum())(x),
}


@pytest.mark.parametrize("case", list(JACREV_CASES))
def test_jacrev_of_a_function_without_vmap_rule_as_torch(case):
    def run(lib):
        x = lib.tensor([0.0, 1.0], dtype=lib.float64)
        y = lib.tensor([2.0, 3.0], dtype=lib.float64)
        return numbers_and_structure(JACREV_CASES[case](lib, exp_times(lib), x, y))

    mine, theirs = outcome(lambda: run(ember)), outcome(lambda: run(torch))
    assert mine[0] == theirs[0] == "ok", (mine, theirs)
    assert mine[1][1] == theirs[1][1] and mine[1][0] == pytest.approx(theirs[1][0], rel=1e-12)


def test_vmap_of_a_function_without_vmap_rule_still_raises_as_torch():
    def run(lib):
        y = lib.tensor([2.0, 3.0], dtype=lib.float64)
        return lib.vmap(lambda a: exp_times(lib).apply(a, y)[0])(lib.ones(2, 2, dtype=lib.float64))

    mine, theirs = outcome(lambda: run(ember)), outcome(lambda: run(torch))
    assert mine[:2] == theirs[:2] == ("error", RuntimeError)
    assert "does not have vmap support" in mine[2]


# ---------------------------------------------------------------- what ctx shows of forward's declarations


def declarations(ctx) -> tuple:
    return ctx.to_save, ctx.dirty_tensors, ctx.non_differentiable


def declaring_forward(seen: list):
    """A forward that saves, changes in place and marks its input, and notes what ctx shows meanwhile."""
    def forward(ctx, x):
        seen.append(("before", *declarations(ctx)))
        ctx.save_for_backward(x)
        ctx.mark_dirty(x.mul_(2))
        index = x.argmax()
        ctx.mark_non_differentiable(index)
        seen.append(("during", *[len(d) for d in declarations(ctx)]))
        return x, index

    return forward


def test_ctx_to_save_dirty_tensors_and_non_differentiable_as_torch():
    def run(lib):
        seen = []
        Declaring = type("Declaring", (lib.autograd.Function,), {
            "forward": staticmethod(declaring_forward(seen)),
            "backward": staticmethod(lambda ctx, grad, _: seen.append(("backward", *declarations(ctx))) or grad),
        })
        out, _ = Declaring.apply(lib.ones(2, requires_grad=True).clone())
        seen.append(("after", *declarations(out.grad_fn)))
        out.sum().backward()
        return seen

    assert run(ember) == run(torch)


def test_assigning_ctx_to_save_saves_as_torch():
    def run(lib):
        class Assigning(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.to_save = (x,)
                return x * 2

            @staticmethod
            def backward(ctx, grad):
                (x,) = ctx.saved_tensors
                return grad * x

        x = lib.tensor([1.0, 3.0], requires_grad=True)
        Assigning.apply(x).sum().backward()
        return x.grad.tolist()

    assert run(ember) == run(torch)


# ---------------------------------------------------------------- an inference tensor saved by a Function


def test_saving_an_inference_tensor_explains_the_way_out_as_torch():
    def run(lib):
        with lib.inference_mode():
            frozen = lib.ones(2)
        weight = lib.ones(2, requires_grad=True)
        return doubling(lib, lambda grad: grad).apply(frozen * weight)

    mine, theirs = outcome(lambda: run(ember)), outcome(lambda: run(torch))
    assert mine[:2] == theirs[:2] == ("error", RuntimeError)
    for advice in ("Inference tensors cannot be saved for backward", "make a clone", "no_grad()"):
        assert advice in theirs[2] and advice in mine[2]


def test_a_bare_function_ctx_records_declarations_as_torch():
    def run(lib):
        ctx = lib.autograd.function.FunctionCtx()
        t = lib.ones(1)
        ctx.save_for_backward(t)
        ctx.save_for_forward(t)
        ctx.mark_dirty(t)
        ctx.mark_non_differentiable(t)
        ctx.set_materialize_grads(False)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            ctx.mark_shared_storage((t, t))
        recorded = (ctx.to_save, ctx.saved_for_forward, ctx.dirty_tensors, ctx.non_differentiable)
        return ([[v.tolist() for v in values] for values in recorded], ctx.materialize_grads,
                [(w.category, "mark_shared_storage` is deprecated" in str(w.message)) for w in caught])

    assert run(ember) == run(torch)


# ---------------------------------------------------------------- del t.grad, del t.data


@pytest.mark.parametrize("make", ["leaf", "parameter"])
def test_del_grad_drops_the_gradient_as_torch(make):
    def run(lib):
        x = lib.ones(2, requires_grad=True) if make == "leaf" else lib.nn.Parameter(lib.ones(2))
        (x * 2).sum().backward()
        had = x.grad.tolist()
        del x.grad
        return had, x.grad

    assert run(ember) == run(torch) == ([2.0, 2.0], None)


def test_del_data_raises_as_torch():
    def run(lib):
        x = lib.ones(2)
        del x.data

    mine, theirs = outcome(lambda: run(ember)), outcome(lambda: run(torch))
    assert mine == theirs and mine[1] is RuntimeError


# ---------------------------------------------------------------- a named tuple returned by forward


Pair = collections.namedtuple("Pair", "doubled rounded")


def pair_of(lib, setup_style: bool):
    """A Function whose forward returns a named tuple of a float output and an integer one."""
    def backward(ctx, grad, _):
        return grad * 2

    if setup_style:
        return type("PairOut", (lib.autograd.Function,), {
            "forward": staticmethod(lambda x: Pair(x * 2, x.long())),
            "setup_context": staticmethod(lambda ctx, inputs, output: None),
            "backward": staticmethod(backward),
        })
    return type("PairOut", (lib.autograd.Function,), {
        "forward": staticmethod(lambda ctx, x: Pair(x * 2, x.long())),
        "backward": staticmethod(backward),
    })


@pytest.mark.parametrize("setup_style", [False, True])
@pytest.mark.parametrize("requires_grad", [True, False])
def test_a_named_tuple_from_forward_is_several_outputs_as_torch(setup_style, requires_grad):
    def run(lib):
        x = lib.ones(2, requires_grad=requires_grad)
        out = pair_of(lib, setup_style).apply(x)
        if requires_grad:
            out[0].sum().backward()
        return (type(out).__name__, len(out), out[0].requires_grad, out[1].requires_grad,
                None if x.grad is None else x.grad.tolist())

    assert run(ember) == run(torch)
