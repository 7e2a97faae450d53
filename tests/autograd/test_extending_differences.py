"""Autograd behaviours met when extending (views, custom Functions), each compared with torch 2.13."""
from __future__ import annotations

import copy
import pickle

import pytest
import torch

import ember


def outcome(run):
    """What ``run()`` gives: ("ok", value) or ("error", exception type name, start of the message)."""
    try:
        return ("ok", run())
    except Exception as error:  # noqa: BLE001 - the outcome is what is compared
        return ("error", type(error).__name__, str(error))


def next_names(t) -> list:
    return [None if f is None else type(f).__name__ for f, _ in t.grad_fn.next_functions]


# ---------------------------------------------------------------- views made under no_grad


def no_grad_view(lib, make=lambda t: t[:2], leaf: bool = True):
    """A tensor that requires grad (a leaf, or a result), and a view of it made under no_grad by ``make``."""
    a = lib.ones(3, requires_grad=True)
    base = a if leaf else a * 1
    with lib.no_grad():
        return base, make(base)


NO_GRAD_VIEWS = {
    "slice": lambda t: t[:2],
    "view": lambda t: t.view(3),
    "expand": lambda t: t.expand(2, 3),
    "unsqueeze": lambda t: t.unsqueeze(0),
    "narrow": lambda t: t.narrow(0, 0, 1),
    "split": lambda t: t.split(1)[0],
    "unbind": lambda t: t.unbind()[0],
}


@pytest.mark.parametrize("make", NO_GRAD_VIEWS.values(), ids=NO_GRAD_VIEWS.keys())
@pytest.mark.parametrize("leaf", [True, False], ids=["of_a_leaf", "of_a_result"])
def test_a_view_made_under_no_grad_requires_grad_as_its_base_as_torch(make, leaf):
    def program(lib):
        _, v = no_grad_view(lib, make, leaf)
        y = v * 2
        return v.requires_grad, v.is_leaf, v.grad_fn is None, y.requires_grad, next_names(y), "requires_grad" in repr(v)

    assert program(ember) == program(torch)


def test_a_gradient_through_a_no_grad_view_goes_nowhere_as_torch():
    def program(lib):
        a, v = no_grad_view(lib)
        (v * 2).sum().backward()
        unused = outcome(lambda: lib.autograd.grad((v * 2).sum(), v))[:2]
        return a.grad, v.grad, unused, outcome(lambda: lib.autograd.grad((v * 2).sum(), a))[:2]

    assert program(ember) == program(torch)


def test_views_of_a_no_grad_view_as_torch():
    def program(lib):
        a, v = no_grad_view(lib)
        with lib.no_grad():
            inner = v[:1]
        outer = v[:1]
        return inner.requires_grad, inner.grad_fn is None, outer.requires_grad, next_names(outer)

    assert program(ember) == program(torch)


def test_requires_grad_of_a_no_grad_view_set_by_hand_as_torch():
    def program(lib):
        a, v = no_grad_view(lib)
        v.requires_grad_(False)
        after_false = v.requires_grad
        v.requires_grad_(True)  # now a leaf of its own, whose gradient is kept
        (v * 2).sum().backward()
        return after_false, next_names(v * 1), v.grad.tolist(), a.grad

    assert program(ember) == program(torch)


def test_a_view_taken_before_its_base_requires_grad_as_torch():
    def program(lib):
        x = lib.ones(3)
        v = x[:2]
        x.requires_grad_()
        y = v * 2
        return v.requires_grad, v.grad_fn is None, y.requires_grad, next_names(y)

    assert program(ember) == program(torch)


@pytest.mark.parametrize("changed_under_no_grad", [True, False])
@pytest.mark.parametrize("leaf", [True, False], ids=["of_a_leaf", "of_a_result"])
def test_using_a_no_grad_view_after_its_base_changed_in_place_raises_as_torch(changed_under_no_grad, leaf):
    def program(lib):
        base, v = no_grad_view(lib, leaf=leaf)
        if changed_under_no_grad or leaf:
            with lib.no_grad():
                base.mul_(2)
        else:
            base.mul_(2)
        with lib.no_grad():
            unrecorded = (v * 2).tolist()  # no graph: nothing to object to
        return (v.requires_grad, unrecorded, outcome(lambda: v.grad_fn), outcome(lambda: v * 2))

    ours, theirs = program(ember), program(torch)
    assert ours[:2] == theirs[:2]
    for mine, reference in zip(ours[2:], theirs[2:]):
        assert mine[:2] == reference[:2] == ("error", "RuntimeError")
        assert "view was created in no_grad mode and its base" in mine[2]


def test_changing_a_no_grad_view_in_place_under_grad_still_raises_as_torch():
    def program(lib):
        a = lib.ones(3, requires_grad=True)
        with lib.no_grad():
            v = a.view(3)
        return outcome(lambda: v.mul_(2))[:2]

    assert program(ember) == program(torch) == ("error", "RuntimeError")


def test_a_view_under_inference_mode_of_a_normal_tensor_requires_grad_as_torch():
    def program(lib):
        a = lib.ones(3, requires_grad=True)
        with lib.inference_mode():
            v = a[:1]
        return v.requires_grad, v.is_inference(), (v * 2).requires_grad

    assert program(ember) == program(torch)


# ---------------------------------------------------------------- custom Functions returning views


def view_function(lib, mark_non_differentiable: bool = False):
    class FirstOf(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            first = x[:1]
            if mark_non_differentiable:
                ctx.mark_non_differentiable(first)
            return first, x * 2

        @staticmethod
        def backward(ctx, g_first, g_double):
            return g_double * 2

    return FirstOf


@pytest.mark.parametrize("mark_non_differentiable", [False, True])
@pytest.mark.parametrize("grad_mode", [False, True])
def test_a_view_output_of_a_function_unrecorded_or_non_differentiable_stays_a_view_as_torch(
        mark_non_differentiable, grad_mode):
    def program(lib):
        b = lib.ones(2, requires_grad=True) * 1
        with lib.set_grad_enabled(grad_mode):
            first, double = view_function(lib, mark_non_differentiable).apply(b)
        if grad_mode and not mark_non_differentiable:
            return first.requires_grad, type(first.grad_fn).__name__, first._base is b
        return first.requires_grad, first.grad_fn, first._base is b, first.is_leaf, next_names(first * 2)

    assert program(ember) == program(torch)


def scaling_view_function(lib):
    """Returns a view of its input, with a backward that a replay of the view would bypass (it scales by 10)."""

    class FirstTwo(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x[:2]

        @staticmethod
        def backward(ctx, g):
            return lib.cat([g * 10, lib.zeros(1)])

    return FirstTwo


def double_under_no_grad(lib, t) -> None:
    with lib.no_grad():
        t.mul_(2)


CHANGES_AFTER_A_VIEW_OUTPUT = {
    "view_of_it_in_place": lambda lib, base, out: out.view(2).mul_(2),
    "slice_of_it_in_place": lambda lib, base, out: out[:1].mul_(2),
    "base_in_place_then_view_of_it_used": lambda lib, base, out: (out.view(2), base.mul_(2))[0] * 1,
    "base_in_place_then_it_used": lambda lib, base, out: (base.mul_(2), out)[1] * 1,
    "other_view_of_base_in_place_then_it_used": lambda lib, base, out: (base[2:].mul_(2), out)[1] * 1,
    "base_in_place_under_no_grad_then_grad_fn": lambda lib, base, out: (double_under_no_grad(lib, base), out.grad_fn),
}


@pytest.mark.parametrize("change", CHANGES_AFTER_A_VIEW_OUTPUT.values(), ids=CHANGES_AFTER_A_VIEW_OUTPUT.keys())
def test_a_view_a_custom_function_returns_is_not_replayed_past_its_backward_as_torch(change):
    def program(lib):
        base = lib.ones(3, requires_grad=True) * 1
        out = scaling_view_function(lib).apply(base)
        return outcome(lambda: change(lib, base, out))[:2]

    assert program(ember) == program(torch) == ("error", "RuntimeError")


def test_a_view_output_stays_usable_where_torch_allows_it():
    def program(lib):
        a = lib.ones(3, requires_grad=True)
        base = a * 1
        out = scaling_view_function(lib).apply(base)
        double_under_no_grad(lib, base)
        with lib.no_grad():
            doubled = (out * 2).tolist()  # no graph is made, so nothing is replayed
        still_requires_grad = out.requires_grad
        fresh = scaling_view_function(lib).apply(a * 1)
        (fresh * 1).sum().backward()
        return doubled, still_requires_grad, a.grad.tolist()

    assert program(ember) == program(torch)


def halves_function(lib):
    class Halves(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x[:1], x[1:]

        @staticmethod
        def backward(ctx, g, h):
            return lib.cat([g, h])

    return Halves


def test_a_view_among_several_outputs_of_a_custom_function_counts_as_one_of_several_as_torch():
    def program(lib):
        base = lib.ones(3, requires_grad=True) * 1
        first, second = halves_function(lib).apply(base)
        changed = outcome(lambda: first.mul_(2))
        base.mul_(2)
        return changed, outcome(lambda: second.grad_fn)

    for mine, reference in zip(program(ember), program(torch)):
        assert mine[:2] == reference[:2] == ("error", "RuntimeError")
        assert "returns multiple views" in mine[2] and "returns multiple views" in reference[2]


# ---------------------------------------------------------------- Tensor subclasses


MAKE_SUBCLASS_MISUSES = {
    "not_a_tensor_class": lambda lib: (int, lib.ones(2)),
    "not_a_class": lambda lib: ("Sub", lib.ones(2)),
    "data_not_a_tensor": lambda lib: (lib.Tensor, [1.0]),
    "require_grad_not_a_bool": lambda lib: (lib.Tensor, lib.ones(2), 1),
}


@pytest.mark.parametrize("arguments", MAKE_SUBCLASS_MISUSES.values(), ids=MAKE_SUBCLASS_MISUSES.keys())
def test_make_subclass_refuses_what_torch_refuses(arguments):
    ours = outcome(lambda: ember.Tensor._make_subclass(*arguments(ember)))
    theirs = outcome(lambda: torch.Tensor._make_subclass(*arguments(torch)))
    assert ours[:2] == theirs[:2] == ("error", "TypeError")
    assert ours[2].startswith(theirs[2].rstrip("."))


def test_parameter_of_a_number_for_requires_grad_is_refused_as_torch():
    for lib in (ember, torch):
        with pytest.raises(TypeError, match="must be bool, not int"):
            lib.nn.Parameter(lib.ones(2), 1)


def calls_seen_by_a_mode(lib, run) -> list:
    class Logging(lib.overrides.TorchFunctionMode):
        def __init__(self):
            self.names = []

        def __torch_function__(self, func, types, args=(), kwargs=None):
            self.names.append(lib.overrides.resolve_name(func))
            return func(*args, **(kwargs or {}))

    with Logging() as mode:
        run(lib)
    return [name.split(".", 1)[1] for name in mode.names]


@pytest.mark.parametrize("run", [
    lambda lib: lib.nn.Parameter(lib.ones(2)),
    lambda lib: lib.nn.Linear(3, 2),
    lambda lib: lib.nn.init.kaiming_uniform_(lib.empty(3, 2)),
], ids=["parameter", "linear", "kaiming_uniform"])
def test_a_mode_sees_parameters_made_and_initialised_as_torch(run):
    assert calls_seen_by_a_mode(ember, run) == calls_seen_by_a_mode(torch, run)


# ---------------------------------------------------------------- Functions under ember.func's transforms


def ctx_style_double(lib):
    """A Function in the style that sets ctx up inside forward (no setup_context): forward, backward and jvp double."""
    twice = staticmethod(lambda ctx, value: value * 2)
    return type("Double", (lib.autograd.Function,), {"forward": twice, "backward": twice, "jvp": twice})


CTX_STYLE_TRANSFORMS = {
    "grad": lambda lib, f, x: lib.func.grad(lambda t: f(t).sum())(x),
    "vjp": lambda lib, f, x: lib.func.vjp(f, x),
    "jvp": lambda lib, f, x: lib.func.jvp(f, (x,), (x,)),
    "jacrev": lambda lib, f, x: lib.func.jacrev(f)(x),
    "jacfwd": lambda lib, f, x: lib.func.jacfwd(f)(x),
    "vmap": lambda lib, f, x: lib.func.vmap(f)(x.expand(2, 3)),
    "hessian": lambda lib, f, x: lib.func.hessian(lambda t: f(t).sum())(x),
}


@pytest.mark.parametrize("transform", CTX_STYLE_TRANSFORMS.values(), ids=CTX_STYLE_TRANSFORMS.keys())
def test_a_function_without_setup_context_is_refused_by_every_transform_as_torch(transform):
    def program(lib):
        return outcome(lambda: transform(lib, ctx_style_double(lib).apply, lib.ones(3)))

    ours, theirs = program(ember), program(torch)
    assert ours[:2] == theirs[:2] == ("error", "RuntimeError")
    assert "must override the setup_context staticmethod" in ours[2]


def test_a_function_without_setup_context_still_works_with_autograd_and_forward_ad_as_torch():
    def program(lib):
        double = ctx_style_double(lib)
        x = lib.ones(3, requires_grad=True)
        double.apply(x).sum().backward()
        with lib.autograd.forward_ad.dual_level():
            dual = lib.autograd.forward_ad.make_dual(lib.ones(3), lib.ones(3))
            tangent = lib.autograd.forward_ad.unpack_dual(double.apply(dual)).tangent
        jacobian = lib.autograd.functional.jacobian(double.apply, lib.ones(2))
        return x.grad.tolist(), tangent.tolist(), jacobian.tolist()

    assert program(ember) == program(torch)


# ---------------------------------------------------------------- gradcheck


@pytest.mark.parametrize("tolerances", [dict(atol=-1.0), dict(rtol=-1.0), dict(atol=-1.0, fast_mode=True)],
                         ids=["atol", "rtol", "atol_fast_mode"])
@pytest.mark.parametrize("check", ["gradcheck", "gradgradcheck"])
def test_a_negative_tolerance_is_refused_as_torch(check, tolerances):
    def program(lib):
        x = lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64, requires_grad=True)
        return outcome(lambda: getattr(lib.autograd, check)(lambda t: t * 2, (x,), **tolerances))

    ours, theirs = program(ember), program(torch)
    assert ours[:2] == theirs[:2] == ("error", "RuntimeError")
    name = "rtol" if "rtol" in tolerances else "atol"
    assert ours[2].startswith(f"{name} must be greater than or equal to zero, but got -")
    assert theirs[2].startswith(f"{name} must be greater than or equal to zero, but got -")


# ---------------------------------------------------------------- saved tensor hooks


@pytest.mark.parametrize("unpacked_shape", [(3,), (2, 3)])
def test_an_unpack_hook_returning_a_shape_the_formula_cannot_use_raises_runtime_error_as_torch(unpacked_shape):
    def program(lib):
        x = lib.ones(2, requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda packed: lib.ones(unpacked_shape)):
            y = x.exp()
        return outcome(lambda: y.sum().backward())[:2]

    assert program(ember) == program(torch) == ("error", "RuntimeError")


def test_an_unpack_hook_returning_a_shape_that_broadcasts_is_used_as_torch():
    def program(lib):
        x = lib.ones(2, requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda packed: lib.full((1,), 3.0)):
            y = x.exp()
        y.sum().backward()
        return x.grad.tolist()

    assert program(ember) == program(torch)


def test_hooks_copies_and_pickles_of_a_no_grad_view_as_torch():
    def program(lib):
        a, v = no_grad_view(lib)
        fired = []
        v.register_hook(fired.append)  # accepted, as it requires grad; no gradient reaches it
        v.retain_grad()
        v.register_post_accumulate_grad_hook(fired.append)
        (v * 2).sum().backward()
        copied, unpickled = copy.deepcopy(v), pickle.loads(pickle.dumps(v))
        return fired, v.retains_grad, copied.requires_grad, unpickled.requires_grad, unpickled.is_leaf

    assert program(ember) == program(torch)


# ---------------------------------------------------------------- autograd.graph helpers


@pytest.mark.parametrize("make_argument", [
    lambda x: 3, lambda x: [3], lambda x: (x, 2), lambda x: "ab", lambda x: None, lambda x: x, lambda x: [x, x],
], ids=["int", "list_of_int", "tensor_then_int", "str", "none", "tensor", "list_of_tensors"])
def test_increment_version_checks_its_argument_as_torch(make_argument):
    def program(lib):
        x = lib.ones(1)
        result = outcome(lambda: lib.autograd.graph.increment_version(make_argument(x)))
        return result[:2], x._version

    assert program(ember) == program(torch)


def test_increment_version_of_an_inference_tensor_is_no_error_as_torch():
    def program(lib):
        with lib.inference_mode():
            t = lib.ones(1)
        lib.autograd.graph.increment_version(t)
        return t.is_inference()

    assert program(ember) == program(torch)
