"""ember.jit and ember.compile: accepted, returning what they are given, checking arguments as torch does."""
import pytest

import ember
from twins import both, both_raise


def _net(lib):
    net = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU(), lib.nn.Linear(4, 1))
    with lib.no_grad():
        for i, p in enumerate(net.parameters()):
            p.copy_(lib.linspace(-1, 1 + i, p.numel()).reshape(p.shape))
    return net


def test_compiled_model_and_function_compute_the_same():
    def program(lib):
        net = _net(lib)
        x = lib.linspace(-1, 1, 6).reshape(2, 3)
        compiled = lib.compile(net, backend="eager")  # (torch: no code generation, to stay fast)

        @lib.compile(backend="eager")
        def double(t):
            return t * 2

        return net(x).detach(), compiled(x).detach(), double(x)

    both(program)


def test_compile_returns_its_argument():
    net = ember.nn.Linear(2, 2)
    assert ember.compile(net) is net and ember.compile(net, fullgraph=True, dynamic=False) is net
    assert ember.compiler.is_compiling() is False and ember.compiler.disable(abs) is abs


def test_compile_checks_mode_and_options():
    both_raise(lambda lib: lib.compile(abs, mode="fastest"), RuntimeError, "Unrecognized mode=fastest")
    both_raise(lambda lib: lib.compile(abs, mode="default", options={}), RuntimeError,
               "Either mode or options can be specified")


def test_script_and_trace_run_as_the_original():
    def program(lib):
        net = _net(lib)
        x = lib.linspace(-1, 1, 6).reshape(2, 3)
        return lib.jit.script(net)(x).detach(), lib.jit.trace(net, x)(x).detach(), lib.jit.is_scripting()

    both(program)


def test_decorators_keep_methods_callable():
    def program(lib):
        class Net(lib.nn.Module):
            @lib.jit.export
            def exported(self, x):
                return x + 1

            @lib.jit.ignore
            def ignored(self, x):
                return x * 3

            @lib.jit.unused
            def unused(self, x):
                return x - 1

            def forward(self, x):
                return self.ignored(self.exported(x))

        net = Net()
        x = lib.tensor([1.0, 2.0])
        return net(x), net.unused(x)

    both(program)


def test_jit_save_says_what_to_do_instead():
    with pytest.raises(RuntimeError, match="state_dict"):
        ember.jit.save(ember.nn.Linear(1, 1), "model.pt")


def test_module_compile_is_accepted_in_place():
    def program(lib):
        net = _net(lib)
        x = lib.linspace(-1, 1, 6).reshape(2, 3)
        before = net(x).detach()
        result = net.compile(backend="eager")
        return result, before, net(x).detach()

    both(program)
