"""utils.checkpoint against the plain run and against torch: gradients, random state, options, errors."""
import contextlib
import gc
import warnings
import weakref

import numpy as np
import pytest
import torch

import ember
from ember.utils.checkpoint import checkpoint

RNG = np.random.default_rng(5)
WEIGHTS = [(RNG.normal(size=(6, 6)), RNG.normal(size=6)) for _ in range(6)]
X = RNG.normal(size=(4, 6))


def mlp(lib):
    """Six Linear(6, 6) layers with tanh between them, from the same float64 weights in both libraries."""
    layers = []
    for w, b in WEIGHTS:
        linear = lib.nn.Linear(6, 6).double()
        with lib.no_grad():
            linear.weight.copy_(lib.tensor(w))
            linear.bias.copy_(lib.tensor(b))
        layers += [linear, lib.nn.Tanh()]
    return lib.nn.Sequential(*layers)


def gradients(lib, run, input_grad=True):
    """The loss and the gradients of the input and of every parameter, for ``run(model, x)``."""
    model = mlp(lib)
    x = lib.tensor(X, requires_grad=input_grad)
    loss = (run(lib, model, x) ** 2).sum()
    loss.backward()
    grads = [p.grad.numpy() if p.grad is not None else None for p in model.parameters()]
    return loss.item(), (x.grad.numpy() if input_grad else None), grads


def plain(lib, model, x):
    return model(x)


def assert_same(a, b, rtol=1e-13):
    assert a[0] == pytest.approx(b[0], rel=rtol)
    if b[1] is not None:
        np.testing.assert_allclose(a[1], b[1], rtol=rtol)
    for i, (x, y) in enumerate(zip(a[2], b[2])):
        assert (x is None) == (y is None), f"parameter {i}"
        if y is not None:
            np.testing.assert_allclose(x, y, rtol=rtol, err_msg=f"parameter {i}")


def checkpoint_of(lib):
    return ember.utils.checkpoint if lib is ember else torch.utils.checkpoint


@pytest.mark.parametrize("reentrant", [True, False])
def test_checkpointed_segments_give_the_plain_gradients(reentrant):
    def run(lib, model, x):
        first = checkpoint_of(lib).checkpoint(model[:4], x, use_reentrant=reentrant)
        return checkpoint_of(lib).checkpoint(lambda h: model[4:](h), first, use_reentrant=reentrant)

    assert_same(gradients(ember, run), gradients(ember, plain))
    assert_same(gradients(ember, run), gradients(torch, run), rtol=1e-10)


@pytest.mark.parametrize("segments", [1, 2, 3, 5])
@pytest.mark.parametrize("reentrant", [True, False])
def test_checkpoint_sequential_gives_the_plain_gradients(segments, reentrant):
    def run(lib, model, x):
        return checkpoint_of(lib).checkpoint_sequential(model, segments, x, use_reentrant=reentrant)

    assert_same(gradients(ember, run), gradients(ember, plain))
    assert_same(gradients(ember, run), gradients(torch, run), rtol=1e-10)


def test_without_reentrance_parameters_get_gradients_from_an_input_that_needs_none():
    def run(lib, model, x):
        return checkpoint_of(lib).checkpoint(model, x, use_reentrant=False)

    ours = gradients(ember, run, input_grad=False)
    assert_same(ours, gradients(ember, plain, input_grad=False))
    assert_same(ours, gradients(torch, run, input_grad=False), rtol=1e-10)


def test_reentrant_checkpoint_of_inputs_that_need_no_gradient_warns_and_gives_none():
    def run(lib, model, x):
        with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
            hidden = checkpoint_of(lib).checkpoint(model[:2], x, use_reentrant=True)
        return model[2:](hidden)

    ours, theirs = gradients(ember, run, input_grad=False), gradients(torch, run, input_grad=False)
    assert ours[2][0] is None and theirs[2][0] is None
    assert_same(ours, theirs, rtol=1e-10)


@pytest.mark.parametrize("preserve", [True, False])
def test_the_random_state_is_replayed(preserve):
    def noisy(t):
        return t * (ember.rand(*t.shape, dtype=ember.float64) > 0.5) * 2.0

    x = ember.tensor(X, requires_grad=True)
    ember.manual_seed(0)
    checkpoint(noisy, x, use_reentrant=False, preserve_rng_state=preserve).sum().backward()
    ember.manual_seed(0)
    expected = ember.autograd.grad(noisy(x).sum(), x)[0]
    after = ember.rand(3)
    assert np.array_equal(x.grad.numpy(), expected.numpy()) == preserve
    ember.manual_seed(0)
    ember.rand(*X.shape, dtype=ember.float64)  # (as noisy drew: a double takes two words of the stream)
    assert np.array_equal(after.numpy(), ember.rand(3).numpy())  # the replay left the generator where it was


def test_several_outputs_keywords_and_plain_values():
    def run(lib, a, b):
        def fn(t, scale, *, shift):
            return t * scale + shift, (t ** 2).sum(), "label"

        first, second, label = checkpoint_of(lib).checkpoint(fn, a, 3.0, shift=b, use_reentrant=False)
        assert label == "label"
        (first.sum() + second).backward()
        return a.grad.numpy(), b.grad.numpy()

    results = [run(lib, lib.tensor(X[0], requires_grad=True), lib.tensor(X[1], requires_grad=True))
               for lib in (ember, torch)]
    for mine, theirs in zip(*results):
        np.testing.assert_allclose(mine, theirs, rtol=1e-13)


def test_the_output_is_the_functions_own_and_its_intermediate_tensors_are_not_kept():
    names = [checkpoint_of(lib).checkpoint(mlp(lib), lib.tensor(X, requires_grad=True), use_reentrant=False)
             .grad_fn.name() for lib in (ember, torch)]
    assert names[0] == names[1] == "TanhBackward0"
    kept = []

    def tracked(t):
        hidden = t.exp()
        kept.append(weakref.ref(hidden._data))
        return hidden.sin()  # sin saves its input, exp's result

    x = ember.tensor(X, requires_grad=True)
    out = checkpoint(tracked, x, use_reentrant=False)
    gc.collect()
    assert kept[0]() is None, "the first run's intermediate array is not held by the graph"
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.cos(np.exp(X)) * np.exp(X), rtol=1e-13)


def test_without_reentrance_double_backward_nested_checkpoints_and_any_output_structure():
    def program(lib):
        ckpt = checkpoint_of(lib).checkpoint
        a = lib.tensor(X[0], requires_grad=True)
        inner = lambda t: (t.sin() * t).exp()  # noqa: E731
        out = ckpt(lambda t: {"y": ckpt(inner, t * 2, use_reentrant=False).cos() * t}, a, use_reentrant=False)
        (first,) = lib.autograd.grad(out["y"].sum(), a, create_graph=True)
        (second,) = lib.autograd.grad(first.sum(), a)
        return out["y"].detach().numpy(), out["y"].requires_grad, first.detach().numpy(), second.numpy()

    for mine, theirs in zip(program(ember), program(torch)):
        np.testing.assert_allclose(mine, theirs, rtol=1e-12)


def test_without_reentrance_a_parameter_reached_by_closure_gets_its_gradient():
    def program(lib):
        model = mlp(lib)
        out = checkpoint_of(lib).checkpoint(lambda t: model[:4](t) * 2, lib.tensor(X), use_reentrant=False)
        out.sum().backward()
        return out.detach().numpy(), model[0].weight.grad.numpy()

    for mine, theirs in zip(program(ember), program(torch)):
        np.testing.assert_allclose(mine, theirs, rtol=1e-12)


def test_without_reentrance_a_changed_input_or_a_different_recomputation_is_refused():
    for lib in (ember, torch):
        ckpt = checkpoint_of(lib).checkpoint
        b = lib.tensor(X[0], requires_grad=True) * 1
        out = ckpt(lambda t: t.exp(), b, use_reentrant=False)
        b.mul_(2)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            out.sum().backward()
        calls = []

        def shrinking(t):
            calls.append(1)
            return t.exp() if len(calls) == 1 else t[:2].exp()

        out = ckpt(shrinking, lib.tensor(X[0], requires_grad=True), use_reentrant=False)
        with pytest.raises(checkpoint_of(lib).CheckpointError, match="different metadata"):
            out.sum().backward()


def test_context_fn_gives_the_contexts_of_the_first_run_and_of_the_recomputation():
    def program(lib):
        entered = []

        @contextlib.contextmanager
        def entering(name):
            entered.append(name)
            yield

        x = lib.tensor(X[0], requires_grad=True)
        out = checkpoint_of(lib).checkpoint(lambda t: t.sin().exp(), x, use_reentrant=False,
                                            context_fn=lambda: (entering("first run"), entering("recomputation")))
        assert entered == ["first run"]
        out.sum().backward()
        return entered, x.grad.numpy()

    (mine, my_grad), (theirs, their_grad) = program(ember), program(torch)
    assert mine == theirs == ["first run", "recomputation"]
    np.testing.assert_allclose(my_grad, their_grad, rtol=1e-13)


def test_options_and_errors_match_torch():
    for lib in (ember, torch):
        module = checkpoint_of(lib)
        x = lib.ones(2, requires_grad=True)
        with pytest.warns(UserWarning, match="use_reentrant parameter should be passed explicitly"):
            module.checkpoint(lambda t: t * 2, x)
        with pytest.warns(UserWarning, match="use_reentrant parameter should be passed explicitly"):
            module.checkpoint_sequential([lambda t: t * 2, lambda t: t + 1], 2, x)
        with pytest.raises(ValueError, match="Unexpected keyword arguments: scale"):
            module.checkpoint(lambda t, scale: t * scale, x, scale=2, use_reentrant=True)
        with pytest.raises(ValueError, match="Unexpected keyword arguments: scale"):
            module.checkpoint_sequential([lambda t: t], 1, x, use_reentrant=False, scale=2)
        with pytest.raises(ValueError, match="only supported when use_reentrant=False"):
            module.checkpoint(lambda t: t, x, use_reentrant=True, debug=True)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            y = module.checkpoint(lambda t: t * 2, x, use_reentrant=False)
        with pytest.raises(RuntimeError, match="none of output has requires_grad=True"):
            module.checkpoint(lambda t: t.detach(), x, use_reentrant=True).sum().backward()
        assert y.requires_grad


@pytest.mark.parametrize("ask", ["grad", "backward(inputs=...)"])
def test_reentrant_checkpoint_refuses_a_backward_for_some_inputs_as_torch(ask):
    """Its backward fills every leaf's .grad, which autograd.grad (or backward(inputs=...)) must not touch."""
    for lib in (ember, torch):
        module = checkpoint_of(lib)
        model, x = lib.nn.Linear(2, 2), lib.ones(1, 2, requires_grad=True)
        y = module.checkpoint(model, x, use_reentrant=True).sum()
        with pytest.raises(RuntimeError, match="When use_reentrant=True, .* is incompatible with .grad"):
            lib.autograd.grad(y, x) if ask == "grad" else y.backward(inputs=[x])
        assert model.weight.grad is None


def test_an_unknown_determinism_check_is_refused_as_torch():
    for lib in (ember, torch):
        with pytest.raises(ValueError, match="determinism_check should be one of \\['default', 'none'\\], but got foo"):
            checkpoint_of(lib).checkpoint(lambda t: t * 2, lib.ones(1, requires_grad=True), use_reentrant=False,
                                          determinism_check="foo")


def test_the_module_is_reachable_as_an_attribute():
    import ember.utils

    assert ember.utils.checkpoint.checkpoint is checkpoint
