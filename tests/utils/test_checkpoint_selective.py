"""Selective activation checkpointing, early stop, debug mode and GraphExecGroup, against torch on the same programs.

Each test runs one program in both libraries (``lib`` is ember or torch) and compares what the program shows:
gradients, the ops a policy is asked about, how often a custom op runs, the errors raised.
"""
import functools
import itertools
import logging

import numpy as np
import pytest
import torch

import ember

RNG = np.random.default_rng(11)
X, W = RNG.normal(size=(3, 4)), RNG.normal(size=(4, 4))
LIBS = (ember, torch)
_names = itertools.count()


def inputs(lib):
    return lib.tensor(X, requires_grad=True), lib.tensor(W, requires_grad=True)


def two_matmuls(x, w):
    return ((x @ w).sin() @ w).exp().sum()


def checkpointed(lib, fn, *args, policy=None, **options):
    if policy is not None:
        options["context_fn"] = functools.partial(lib.utils.checkpoint.create_selective_checkpoint_contexts, policy)
    return lib.utils.checkpoint.checkpoint(fn, *args, use_reentrant=False, **options)


def saving(lib, *names):
    """A policy function that saves the ops named (``"mm"`` is ``aten.mm.default``) and asks for the rest to be
    recomputed; the log records each question as (op, is_recompute)."""
    log = []
    ops = [getattr(lib.ops.aten, name).default for name in names]

    def policy(ctx, op, *args, **kwargs):
        log.append((str(op), ctx.is_recompute))
        return lib.utils.checkpoint.CheckpointPolicy.MUST_SAVE if op in ops else \
            lib.utils.checkpoint.CheckpointPolicy.PREFER_RECOMPUTE

    return policy, log


def counted_op(lib, counter):
    """A custom op (a sine) that counts how often its kernel runs, with its autograd formula."""
    name = f"sac_test::counted_sin{next(_names)}"

    @lib.library.custom_op(name, mutates_args=())
    def counted_sin(x: lib.Tensor) -> lib.Tensor:
        counter.append(1)
        return lib.from_numpy(np.sin(x.detach().numpy()))

    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    counted_sin.register_autograd(lambda ctx, grad: grad * ctx.saved_tensors[0].cos(), setup_context=setup_context)
    return counted_sin


def grads_of(lib, run):
    x, w = inputs(lib)
    run(lib, x, w).backward()
    return x.grad.numpy(), w.grad.numpy()


def policies(lib):
    P = lib.utils.checkpoint.CheckpointPolicy
    return {
        "list of mm": [lib.ops.aten.mm.default],
        "empty list": [],
        "must save all": lambda ctx, op, *a, **k: P.MUST_SAVE,
        "prefer save all": lambda ctx, op, *a, **k: P.PREFER_SAVE,
        "must recompute all": lambda ctx, op, *a, **k: P.MUST_RECOMPUTE,
        "prefer recompute all": lambda ctx, op, *a, **k: P.PREFER_RECOMPUTE,
        "bools: save sin": lambda ctx, op, *a, **k: op == lib.ops.aten.sin.default,
    }


@pytest.mark.parametrize("policy", list(policies(torch)))
def test_gradients_are_those_without_checkpointing(policy):
    plain = grads_of(ember, lambda lib, x, w: two_matmuls(x, w))
    got = grads_of(ember, lambda lib, x, w: checkpointed(lib, two_matmuls, x, w, policy=policies(lib)[policy]))
    expected = grads_of(torch, lambda lib, x, w: checkpointed(lib, two_matmuls, x, w, policy=policies(lib)[policy]))
    for g, p, e in zip(got, plain, expected):
        np.testing.assert_array_equal(g, p)
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-12)


def test_policy_is_asked_about_the_ops_torch_dispatches_in_the_forward_only():
    def asked(lib):
        policy, log = saving(lib, "mm")
        x, w = inputs(lib)
        checkpointed(lib, two_matmuls, x, w, policy=policy).backward()
        return log

    assert asked(ember) == asked(torch) == [("aten.mm.default", False), ("aten.sin.default", False),
                                            ("aten.mm.default", False), ("aten.exp.default", False),
                                            ("aten.sum.default", False)]


def test_policy_gets_the_calls_arguments_and_output():
    def seen(lib):
        found = []

        def policy(ctx, op, *args, **kwargs):
            found.append((str(op), [tuple(a.shape) for a in args], tuple(ctx.op_output.shape)))
            return lib.utils.checkpoint.CheckpointPolicy.PREFER_RECOMPUTE

        x, w = inputs(lib)
        checkpointed(lib, lambda a, b: (a @ b).exp(), x, w, policy=policy)
        return found

    assert seen(ember) == seen(torch)


@pytest.mark.parametrize("save", [True, False])
def test_recomputation_skips_a_saved_custom_op(save):
    def runs(lib):
        counter = []
        op = counted_op(lib, counter)
        policy = [op._opoverload] if save else []
        x, w = inputs(lib)
        checkpointed(lib, lambda a, b: (op(a @ b) * 2).sum(), x, w, policy=policy).backward()
        return len(counter), x.grad.numpy()

    (ember_runs, ember_grad), (torch_runs, torch_grad) = runs(ember), runs(torch)
    assert ember_runs == torch_runs == (1 if save else 2)
    np.testing.assert_allclose(ember_grad, torch_grad, rtol=1e-12)


def test_recomputation_does_not_run_a_saved_matmul():
    """Which of ember's op calls the recomputation makes, seen by a debug log entered outside the recomputation's
    context (so it sees the calls that context lets run)."""
    from ember.utils._checkpoint_debug import _OpLog

    logs = {}

    def logged(name, policy):
        forward_log, recompute_log = _OpLog(), _OpLog()
        context = functools.partial(ember.utils.checkpoint.create_selective_checkpoint_contexts, policy)

        def both():
            forward, recompute = context()
            return _Stacked(forward_log, forward), _Stacked(recompute_log, recompute)

        x, w = inputs(ember)
        ember.utils.checkpoint.checkpoint(two_matmuls, x, w, use_reentrant=False, context_fn=both,
                                          early_stop=False).backward()
        logs[name] = [line.split("(")[0] for line in recompute_log.lines]

    logged("saving mm", [ember.ops.aten.mm.default])
    logged("saving nothing", [])
    assert logs["saving nothing"] == ["aten.mm.default", "aten.sin.default", "aten.mm.default", "aten.exp.default",
                                      "aten.sum.default"]
    assert logs["saving mm"] == ["aten.sin.default", "aten.exp.default", "aten.sum.default"]


class _Stacked:
    """Two contexts entered as one, the first outermost."""

    def __init__(self, outer, inner):
        self.outer, self.inner = outer, inner

    def __enter__(self):
        self.outer.__enter__()
        self.inner.__enter__()

    def __exit__(self, *exc):
        self.inner.__exit__(*exc)
        self.outer.__exit__(*exc)


def test_a_cached_output_changed_in_place_is_refused_unless_allowed():
    def outcome(lib, allow):
        x, w = inputs(lib)

        def fn(a, b):
            y = a @ b
            y.add_(1)  # the kept output of mm, changed after the forward's policy kept it
            return y.sin().sum()

        context = functools.partial(lib.utils.checkpoint.create_selective_checkpoint_contexts,
                                    [lib.ops.aten.mm.default], allow_cache_entry_mutation=allow)
        out = lib.utils.checkpoint.checkpoint(fn, x, w, use_reentrant=False, context_fn=context)
        try:
            out.backward()
        except RuntimeError as error:
            return str(error).split(" (")[0]
        return x.grad.numpy().round(10).tolist()

    assert outcome(ember, False) == outcome(torch, False) == \
        "Tensor cached during selective activation checkpoint has been mutated"
    assert outcome(ember, True) == outcome(torch, True)


@pytest.mark.parametrize("second", ["backward with retain_graph", "double backward"])
def test_a_second_backward_through_a_selective_checkpoint_is_refused(second):
    """Saved outputs are handed to one recomputation only: a second backward that recomputes the region (one more
    over the same graph, or a double backward, which reaches the forward's nodes again) is refused, as in torch."""
    def message(lib):
        x, w = inputs(lib)
        out = checkpointed(lib, two_matmuls, x, w, policy=[lib.ops.aten.mm.default])
        if second == "double backward":
            (gx,) = lib.autograd.grad(out, x, create_graph=True)
            again = lambda: lib.autograd.grad(gx.sum(), w)  # noqa: E731
        else:
            out.backward(retain_graph=True)
            again = out.backward
        with pytest.raises(RuntimeError) as info:
            again()
        return str(info.value)

    assert message(ember) == message(torch)


def bad_calls(lib):
    sac = lib.utils.checkpoint.create_selective_checkpoint_contexts
    x, w = inputs(lib)
    return {
        "context_fn with use_reentrant=True": lambda: lib.utils.checkpoint.checkpoint(
            two_matmuls, x, w, use_reentrant=True, context_fn=functools.partial(sac, [])),
        "debug with use_reentrant=True": lambda: lib.utils.checkpoint.checkpoint(
            two_matmuls, x, w, use_reentrant=True, debug=True),
        "debug with a context_fn": lambda: checkpointed(lib, two_matmuls, x, w, policy=[], debug=True),
        "a packet in the list": lambda: sac([lib.ops.aten.mm]),
        "a string in the list": lambda: sac(["mm"]),
        "neither list nor function": lambda: sac(3),
    }


@pytest.mark.parametrize("call", list(bad_calls(torch)))
def test_errors_are_torchs(call):
    def error(lib):
        with pytest.raises(Exception) as info:
            bad_calls(lib)[call]()
        return type(info.value), str(info.value).replace("torch", "ember").split("<class")[0]

    assert error(ember) == error(torch)


def test_reentrant_checkpoint_takes_the_default_context_fn():
    def grads(lib):
        x, w = inputs(lib)
        lib.utils.checkpoint.checkpoint(two_matmuls, x, w, use_reentrant=True,
                                        context_fn=lib.utils.checkpoint.noop_context_fn).backward()
        return x.grad.numpy()

    np.testing.assert_allclose(grads(ember), grads(torch), rtol=1e-12)


@pytest.mark.parametrize("how", ["default", "early_stop=False", "set_checkpoint_early_stop(False)",
                                 "set_checkpoint_early_stop(True) over early_stop=False"])
def test_early_stop_ends_the_recomputation_once_everything_is_recomputed(how):
    def runs_after_last_save(lib):
        after = []

        def fn(a):
            y = a.sin()  # the last op that saves a tensor
            after.append(1)
            return y + 1

        x = lib.tensor(X, requires_grad=True)
        early_stop = {"early_stop=False": False, "set_checkpoint_early_stop(True) over early_stop=False": False}
        setting = {"set_checkpoint_early_stop(False)": False,
                   "set_checkpoint_early_stop(True) over early_stop=False": True}
        context = lib.utils.checkpoint.set_checkpoint_early_stop(setting[how]) if how in setting else \
            _nothing()
        with context:
            out = lib.utils.checkpoint.checkpoint(fn, x, use_reentrant=False, early_stop=early_stop.get(how, True))
        out.sum().backward()
        return len(after)

    assert runs_after_last_save(ember) == runs_after_last_save(torch) == (1 if "True" in how or how == "default"
                                                                          else 2)


class _nothing:
    def __enter__(self):
        pass

    def __exit__(self, *exc):
        pass


def nondeterministic(lib, **options):
    """A checkpoint whose recomputation takes another branch than its forward, saving one tensor more: a
    CheckpointError (with early stop, the recomputation would stop at the first, and nothing would differ)."""
    options.setdefault("early_stop", False)
    runs = []

    def fn(a):
        runs.append(1)
        return a.sin() if len(runs) == 1 else a.exp().cos()

    out = lib.utils.checkpoint.checkpoint(fn, lib.tensor(X, requires_grad=True), use_reentrant=False, **options)
    with pytest.raises(lib.utils.checkpoint.CheckpointError) as info:
        out.sum().backward()
    return str(info.value)


@pytest.mark.parametrize("how", ["debug=True", "set_checkpoint_debug_enabled(True)"])
def test_debug_mode_lists_the_ops_of_forward_and_recomputation(how, monkeypatch):
    # torch's debug log is a logger whose records pytest's log capture (on the root logger) cannot format
    monkeypatch.setattr(logging.getLogger("LoggingTensor"), "propagate", False)

    def message(lib):
        if how == "debug=True":
            return nondeterministic(lib, debug=True)
        with lib.utils.checkpoint.set_checkpoint_debug_enabled(True):
            return nondeterministic(lib)

    for text in (message(ember), message(torch)):
        assert "because you passed `debug=True`" in text
        lines = text.splitlines()
        # (torch's logs also count the detach of each saved tensor, so their totals differ from ember's)
        for op, where in [("sin", "(1 of 1 in original)"), ("exp", "in recompute)")]:
            assert any(f"aten.{op}.default" in line and line.endswith(where) for line in lines), (op, text)


def test_without_debug_the_error_points_to_debug_mode():
    for lib in LIBS:
        text = nondeterministic(lib)
        assert "set_checkpoint_debug_enabled(True)" in text and "(1 of 1 in original)" not in text
    with ember.utils.checkpoint.set_checkpoint_debug_enabled(False):
        assert "(1 of 1 in original)" not in nondeterministic(ember, debug=True)
    with torch.utils.checkpoint.set_checkpoint_debug_enabled(False):
        assert "(1 of 1 in original)" not in nondeterministic(torch, debug=True)


def test_more_tensors_saved_in_the_recomputation_without_early_stop():
    def message(lib):
        runs = []

        def fn(a):
            runs.append(1)
            return a.sin() if len(runs) == 1 else a.sin().exp()

        out = lib.utils.checkpoint.checkpoint(fn, lib.tensor(X, requires_grad=True), use_reentrant=False,
                                              early_stop=False)
        with pytest.raises(lib.utils.checkpoint.CheckpointError) as info:
            out.sum().backward()
        return str(info.value).splitlines()[0]

    assert message(ember) == message(torch)


def test_graph_exec_group_recomputes_once_and_refuses_overlapping_backwards():
    def outcome(lib):
        runs = []

        def fn(a):
            runs.append(1)
            return a.sin()

        x = lib.tensor(X, requires_grad=True)
        out = lib.utils.checkpoint.checkpoint(fn, x, use_reentrant=False).sum()
        with lib.utils.checkpoint.GraphExecGroup():
            out.backward(retain_graph=True)
            with pytest.raises(lib.utils.checkpoint.CheckpointError) as info:
                out.backward(retain_graph=True)
            with pytest.raises(RuntimeError, match="cannot be nested"):
                lib.utils.checkpoint.GraphExecGroup().__enter__()
        out.backward()  # outside the group: recomputed again
        return len(runs), "GraphExecGroup context" in str(info.value)

    assert outcome(ember) == outcome(torch) == (3, True)


def test_aten_names_of_built_in_ops():
    for lib in LIBS:
        assert str(lib.ops.aten.mm.default) == "aten.mm.default" and str(lib.ops.aten.mm) == "aten.mm"
        assert repr(lib.ops.aten.mm) == "<OpOverloadPacket(op='aten.mm')>"
        assert repr(lib.ops.aten.mul.Tensor) == "<OpOverload(op='aten.mul', overload='Tensor')>"
        assert lib.ops.aten.addmm.default is lib.ops.aten.addmm.default
        assert lib.ops.aten.mm.default.name() == "aten::mm"
        assert lib.ops.aten.mul.Tensor.name() == "aten::mul.Tensor"
        with pytest.raises(AttributeError, match="has no overload name 'no_such_overload'"):
            lib.ops.aten.mm.no_such_overload
        with pytest.raises(AttributeError):
            lib.ops.aten.no_such_op_here


def test_saved_tensor_is_the_class_of_raw_saved_attributes():
    for lib in LIBS:
        x = lib.ones(2, requires_grad=True)
        raw = x.exp().grad_fn._raw_saved_result
        assert type(raw) is lib.autograd.SavedTensor is lib.utils.checkpoint.SavedTensor


def test_a_profile_sees_a_selective_checkpoints_forward_as_a_plain_ones():
    """The policy's hook and the profiler see every call one after the other: a user's Function and the ops in it
    are profiled under a selective checkpoint as without one."""
    class Twice(ember.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    def profiled(policy):
        x, w = inputs(ember)
        with ember.profiler.profile() as prof:
            checkpointed(ember, lambda a, b: Twice.apply(two_matmuls(a, b)), x, w, policy=policy)
        return [event.name for event in prof.events()]

    plain = profiled(None)
    assert "Twice" in plain and "MatMul" in plain
    assert profiled([ember.ops.aten.mm.default]) == plain
    assert ember.autograd.function._interceptor is None


def layer(lib, x, w, b):
    F = lib.nn.functional
    h = F.gelu(F.layer_norm(F.linear(x, w, b), (4,)))
    return F.nll_loss(F.log_softmax(h.softmax(-1) * 2 + 1, -1), TARGET[lib])


TARGET = {lib: lib.tensor([1, 0, 2]) for lib in LIBS}
MASK = {lib: lib.tensor(X > 0) for lib in LIBS}
PROGRAMS = {
    "layer": layer,
    "reductions": lambda lib, x, w, b: x.mean(1).sum() + x.sum(1).pow(2).sum() + x.max(1)[0].sum() + x.var(1).sum(),
    "shapes": lambda lib, x, w, b: (x.transpose(0, 1)[1:].select(1, 0) / 2 - 1).sum() + x[TARGET[lib][:2]].sum(),
    "selections": lambda lib, x, w, b: lib.where(MASK[lib], x, w[0]).sum() + x.masked_fill(MASK[lib], 0.0).sum(),
}


@pytest.mark.parametrize("program", list(PROGRAMS))
def test_ops_are_named_as_torch_names_them(program):
    """The policy's ops, overloads included, for programs whose ops ember runs as torch does. (Only ops that
    record a graph node are shown to ember's policies: a comparison or a tensor's creation inside the checkpointed
    function, which torch's policies see, is left out of these programs.)"""
    def asked(lib):
        policy, log = saving(lib)
        x, w = inputs(lib)
        b = lib.tensor(W[0], requires_grad=True)
        checkpointed(lib, lambda *a: PROGRAMS[program](lib, *a), x, w, b, policy=policy)
        return [op for op, _ in log]

    assert asked(ember) == asked(torch)
