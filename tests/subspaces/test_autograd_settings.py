"""ember.autograd's engine settings, ``variable`` and ``NestedIOFunction`` against torch.autograd's."""
import threading

import pytest
import torch

import ember


@pytest.mark.parametrize("lib", [torch, ember], ids=["torch", "ember"])
def test_multithreading_switch_sets_and_restores(lib):
    autograd = lib.autograd
    assert autograd.is_multithreading_enabled() is True
    with autograd.set_multithreading_enabled(False):
        assert autograd.is_multithreading_enabled() is False
        seen = []
        other = threading.Thread(target=lambda: seen.append(autograd.is_multithreading_enabled()))
        other.start()
        other.join()
        assert seen == [True]  # thread-local
    assert autograd.is_multithreading_enabled() is True
    autograd.set_multithreading_enabled(False)  # a plain call switches at once
    assert autograd.is_multithreading_enabled() is False
    autograd.set_multithreading_enabled(True)


def test_multithreading_as_decorator_as_torch():
    # torch's leaves the setting switched by decorating; the decorated call sees it switched
    seen = {}
    for lib in (torch, ember):
        @lib.autograd.set_multithreading_enabled(False)
        def read():
            return lib.autograd.is_multithreading_enabled()

        autograd = lib.autograd
        seen[lib.__name__] = (autograd.is_multithreading_enabled(), read(), autograd.is_multithreading_enabled())
        lib.autograd.set_multithreading_enabled(True)
    assert seen["ember"] == seen["torch"]


def _layout_flag(lib):
    if lib is torch:
        return torch._C._is_grad_layout_enforcement_enabled()
    return ember.autograd._engine_settings.is_grad_layout_enforced()


@pytest.mark.parametrize("lib", [torch, ember], ids=["torch", "ember"])
def test_layout_policy_sets_and_restores(lib):
    assert _layout_flag(lib) is True
    with lib.autograd.enforce_grad_layout_policy(False):
        assert _layout_flag(lib) is False
    assert _layout_flag(lib) is True

    @lib.autograd.enforce_grad_layout_policy(False)
    def read():
        return _layout_flag(lib)

    assert _layout_flag(lib) is True  # decorating alone does not switch it (unlike set_multithreading_enabled)
    assert read() is False and _layout_flag(lib) is True
    lib.autograd.enforce_grad_layout_policy(False)
    assert _layout_flag(lib) is False
    lib.autograd.enforce_grad_layout_policy()
    assert _layout_flag(lib) is True


def _grad_strides(lib, enable: bool, how: str):
    p = lib.empty(2, 3, 4).permute(2, 0, 1).requires_grad_()
    with lib.autograd.enforce_grad_layout_policy(enable):
        if how == "product":
            (p * 2).sum().backward()
        elif how == "given":
            p.backward(lib.ones(2, 3, 4).permute(2, 0, 1).contiguous())
        else:
            p.clone().backward(lib.ones(4, 2, 3))
    return p.grad.stride()


@pytest.mark.parametrize("how", ["product", "given", "clone"])
@pytest.mark.parametrize("enable", [True, False])
def test_layout_policy_decides_the_strides_of_grad_as_torch(enable, how):
    assert _grad_strides(ember, enable, how) == _grad_strides(torch, enable, how)


@pytest.mark.parametrize("call", [
    lambda lib: lib.autograd.set_multithreading_enabled("yes"),
    lambda lib: lib.autograd.enforce_grad_layout_policy(1),
    lambda lib: lib.autograd.set_multithreading_enabled(),
    lambda lib: lib.autograd.variable(lib.ones(2)),
])
def test_errors_as_torch(call):
    with pytest.raises(Exception) as theirs:
        call(torch)
    with pytest.raises(type(theirs.value)):
        call(ember)


def test_view_replay_is_what_torch_does_with_it_on():
    # ember always replays views: a view of a tensor changed in place keeps the view op's backward
    names = []
    for lib in (torch, ember):
        x = lib.ones(3, 4, requires_grad=True)
        base = x.clone()
        view = base[1:].t()
        base.mul_(2)
        names.append(type(view.grad_fn).__name__)
    with torch.autograd._force_original_view_tracking(True):
        replayed = torch.ones(3, 4, requires_grad=True).clone()
        view = replayed[1:].t()
        replayed.mul_(2)
        assert ember.autograd.is_view_replay_enabled() is torch.autograd.is_view_replay_enabled()
        assert names[1] == type(view.grad_fn).__name__
    assert names[0] != names[1]  # torch's default falls back to as_strided


def test_nested_io_function_cannot_run_as_torchs():
    for lib in (torch, ember):
        class Product(lib.autograd.NestedIOFunction):
            def forward_extended(self, a, b):
                return a * b

            def backward_extended(self, grad):
                return grad, grad

        a = lib.ones(2, requires_grad=True)
        with pytest.raises(AttributeError):
            Product.apply(a, a)
        with pytest.warns(DeprecationWarning):
            instance = Product()
        with pytest.raises(AttributeError):
            instance(a, a)
        with pytest.raises(NotImplementedError):
            lib.autograd.NestedIOFunction.forward_extended(instance, a)
        assert issubclass(Product, lib.autograd.Function)


def test_reexports_are_the_overrides_functions():
    for name in ("has_torch_function", "handle_torch_function", "is_tensor_like"):
        assert getattr(ember.autograd, name) is getattr(ember.overrides, name)
        assert getattr(torch.autograd, name) is getattr(torch.overrides, name) or name == "has_torch_function"
    assert ember.autograd.is_tensor_like(ember.ones(1)) and not ember.autograd.is_tensor_like(1.0)


def test_all_lists_torchs_names():
    assert set(torch.autograd.__all__) - {"grad_mode"} <= set(ember.autograd.__all__)


@pytest.mark.parametrize("name", ["set_override_stale_capture_stream", "set_warn_on_accumulate_grad_stream_mismatch"])
def test_stream_switches_as_torch(name):
    theirs, mine = getattr(torch.autograd.graph, name), getattr(ember.autograd.graph, name)
    for value in (True, False):
        assert mine(value) is None and theirs(value) is None
    for wrong in ("x", 1, None):
        with pytest.raises(RuntimeError, match="enabled must be a bool, but got " + type(wrong).__name__):
            mine(wrong)
        with pytest.raises(RuntimeError):
            theirs(wrong)
    settings = ember.autograd._stream_settings.settings
    mine(True)
    assert getattr(settings, name.removeprefix("set_")) is True
    theirs(name != "set_override_stale_capture_stream")  # each back to its initial state
    mine(name != "set_override_stale_capture_stream")
    assert torch._C._override_stale_capture_stream() is settings.override_stale_capture_stream
    assert torch._C._warn_on_accumulate_grad_stream_mismatch() is settings.warn_on_accumulate_grad_stream_mismatch


@pytest.mark.parametrize("budget", [0.5, 0, 1.0, True, "0.5", -0.1, 1.5, None])
def test_memory_budget_raises_as_torch_in_eager_mode(budget):
    with pytest.raises(Exception) as theirs:
        torch.autograd.graph.region_activation_memory_budget(budget)
    with pytest.raises(type(theirs.value)) as mine:
        ember.autograd.graph.region_activation_memory_budget(budget)
    assert str(mine.value).split(":")[1:2] == str(theirs.value).split(":")[1:2] or \
        isinstance(mine.value, RuntimeError)


def test_stream_switches_start_as_torchs():
    import subprocess
    import sys

    code = ("import torch; print(torch._C._override_stale_capture_stream(), "
            "torch._C._warn_on_accumulate_grad_stream_mismatch())")
    fresh = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    initial = ember.autograd._stream_settings._StreamSettings
    assert fresh == [str(initial.override_stale_capture_stream), str(initial.warn_on_accumulate_grad_stream_mismatch)]


def test_profiler_names_reexported_as_torch():
    assert ember.autograd.ProfilerActivity is ember.profiler.ProfilerActivity
    assert torch.autograd.ProfilerActivity is torch.profiler.ProfilerActivity
    ours, theirs = ember.autograd.ProfilerActivity.__members__, torch.autograd.ProfilerActivity.__members__
    assert {"CPU"} <= set(ours) <= set(theirs)
    # ember's profiler is its own, not torch's Kineto: it says so, where torch's says True
    assert ember.autograd.kineto_available is ember.profiler.kineto_available
    assert ember.autograd.kineto_available() is False and torch.autograd.kineto_available() is True
