"""ember.library.Library / define / impl and opcheck, each program run on torch and on ember and compared."""
import gc

import numpy as np
import pytest
import torch

import ember
from tests.library.test_custom_op import ns, numpy_sin_op, plain, same, same_error, both  # noqa: F401 (ns: fixture)


# ---------------------------------------------------------------- Library.define / impl

def scale_library(lib, ns):
    library = lib.library.Library(ns, "DEF")
    library.define("scale(Tensor x, int n=2, *, float alpha=1.5, bool flag=False) -> Tensor")
    library.impl("scale", lambda x, n=2, *, alpha=1.5, flag=False: x * n * (-alpha if flag else alpha), "CPU")
    return library


def test_defined_op_binds_positionals_defaults_and_keyword_only_arguments(ns):
    def program(lib):
        library = scale_library(lib, ns)
        op = getattr(lib.ops, ns).scale
        x = lib.ones(2)
        return (library.define("other(Tensor x) -> Tensor"), op(x), op(x, 3, alpha=2.0), op(x, n=3),
                op(x, True), op(x, alpha=2), op(x, flag=True), str(op.default._schema))

    same(program)


@pytest.mark.parametrize("call", [
    lambda op, x: op(x, 3, 2.0),
    lambda op, x: op(x, beta=1.0),
])
def test_defined_op_binding_errors(ns, call):
    def program(lib):
        library = scale_library(lib, ns)  # noqa: F841 (kept alive for the call)
        return call(getattr(lib.ops, ns).scale, lib.ones(2))

    torch_message, ember_message = same_error(program)
    assert plain(ember_message) == plain(torch_message)


@pytest.mark.parametrize("call", [
    lambda op, x: op(x, n=3.5),
    lambda op, x: op(x, 3.5),
    lambda op, x: op(3),
])
def test_defined_op_type_errors(ns, call):
    def program(lib):
        library = scale_library(lib, ns)  # noqa: F841
        return call(getattr(lib.ops, ns).scale, lib.ones(2))

    torch_message, ember_message = same_error(program)
    assert ember_message.split("\nDeclaration")[0] == torch_message.split("\nDeclaration")[0]


def test_list_optional_scalar_and_string_arguments(ns):
    def program(lib):
        library = lib.library.Library(ns, "DEF")
        library.define('pick(Tensor x, SymInt[] size, Tensor? w=None, Scalar s=1, str mode="mean", '
                       'int[2] pads=0) -> (Tensor, Tensor)')
        seen = []

        def pick(x, size, w=None, s=1, mode="mean", pads=(0, 0)):
            seen.append((size, w is None, s, mode, pads))
            return x * s, x.clone()

        library.impl("pick", pick, "CPU")
        op = getattr(lib.ops, ns).pick
        results = [op(lib.ones(2), [1, 2]), op(lib.ones(2), (1, 2), s=2.5, mode="sum", pads=[1, 1])]
        return results, seen

    same(program)


@pytest.mark.parametrize("call", [lambda op: op(ember_or_torch_ones(), 2),
                                  lambda op: op(ember_or_torch_ones(), [1], w=3)])
def test_list_and_optional_type_errors(ns, call):
    def program(lib):
        library = lib.library.Library(ns, "DEF")
        library.define("pick(Tensor x, SymInt[] size, Tensor? w=None) -> Tensor")
        library.impl("pick", lambda x, size, w=None: x.clone(), "CPU")
        _ones[0] = lib.ones
        return call(getattr(lib.ops, ns).pick)

    torch_message, ember_message = same_error(program)
    assert ember_message.split("\nPosition")[0] == torch_message.split("\nPosition")[0]


_ones = [None]


def ember_or_torch_ones():
    return _ones[0](2)


def test_mutable_schema_argument_bumps_the_version(ns):
    def program(lib):
        library = lib.library.Library(ns, "DEF")
        library.define("add_(Tensor(a!) x, Tensor y) -> ()")

        def add_(x, y):
            x.add_(y)

        library.impl("add_", add_, "CompositeExplicitAutograd")
        x = lib.zeros(2)
        result = getattr(lib.ops, ns).add_(x, lib.ones(2))
        return result, x, x._version

    same(program)


@pytest.mark.parametrize("program", [
    lambda lib, ns: lib.library.Library(ns, "BAD"),
    lambda lib, ns: (lib.library.Library(ns, "DEF"), lib.library.Library(ns, "DEF")),
    lambda lib, ns: lib.library.Library(ns, "IMPL").define("f(Tensor x) -> Tensor"),
    lambda lib, ns: lib.library.Library(ns, "DEF").define("f(Tensor x -> Tensor"),
    lambda lib, ns: lib.library.Library(ns, "DEF").define("f(Foo x) -> Tensor"),
    lambda lib, ns: (lambda kept: [kept.define("f(Tensor x) -> Tensor") for _ in range(2)])(
        lib.library.Library(ns, "FRAGMENT")),
])
def test_library_errors(ns, program):
    same_error(program, ns)


def test_a_defined_op_without_kernel_raises_not_implemented(ns):
    def program(lib):
        library = lib.library.Library(ns, "DEF")
        library.define("f(Tensor x) -> Tensor")
        return getattr(lib.ops, ns).f(lib.ones(1))

    torch_message, ember_message = same_error(program)
    assert ember_message.startswith(f"Could not run '{ns}::f' with arguments from the 'CPU' backend")


def test_module_define_and_impl_decorator(ns):
    def program(lib):
        lib.library.define(f"{ns}::twice", "(Tensor x, float k=2.0) -> Tensor")

        @lib.library.impl(f"{ns}::twice", "cpu")
        def twice(x, k=2.0):
            return x * k

        lib.library.impl(f"{ns}::twice", "CompositeExplicitAutograd", lambda x, k=2.0: x * k)
        return getattr(lib.ops, ns).twice(lib.ones(2)), getattr(lib.ops, ns).twice(lib.ones(2), k=3)

    same(program)


def test_a_deleted_library_takes_its_ops_with_it(ns):
    def program(lib):
        library = lib.library.Library(ns, "DEF")
        library.define("f(Tensor x) -> Tensor")
        found = hasattr(getattr(lib.ops, ns), "f")
        del library
        gc.collect()
        again = lib.library.Library(ns, "DEF")  # the namespace is free again
        return found, hasattr(getattr(lib.ops, ns), "f"), again.define("f(Tensor x) -> Tensor")

    same(program)


def test_kernel_made_of_ops_differentiates_through_them(ns):
    def program(lib):
        library = lib.library.Library(ns, "DEF")
        library.define("cube(Tensor x) -> Tensor")
        library.impl("cube", lambda x: x * x * x, "CompositeImplicitAutograd")
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = getattr(lib.ops, ns).cube(x)
        y.sum().backward()
        return y, type(y.grad_fn).__name__, x.grad

    same(program)


def test_register_autograd_on_a_defined_op(ns):
    def program(lib):
        library = lib.library.Library(ns, "FRAGMENT")
        library.define("triple(Tensor x) -> Tensor")
        library.impl("triple", lambda x: lib.from_numpy(x.numpy() * 3), "CPU")
        lib.library.register_autograd(f"{ns}::triple", lambda ctx, g: g * 3)
        x = lib.ones(2, dtype=lib.float64, requires_grad=True)
        y = getattr(lib.ops, ns).triple(x)
        y.sum().backward()
        return y, x.grad, type(y.grad_fn).__name__, lib.autograd.gradcheck(getattr(lib.ops, ns).triple, (x,))

    same(program)


def test_overloads_are_chosen_by_their_arguments(ns):
    def program(lib):
        library = lib.library.Library(ns, "DEF")
        library.define("f(Tensor x) -> Tensor")
        library.define("f.scaled(Tensor x, float k) -> Tensor")
        library.impl("f", lambda x: x + 1, "CPU")
        library.impl("f.scaled", lambda x, k: x * k, "CPU")
        op = getattr(lib.ops, ns).f
        return op.overloads(), op(lib.ones(1)), op(lib.ones(1), 3.0), op.scaled(lib.ones(1), 2.0), str(op.scaled)

    same(program)


# ---------------------------------------------------------------- opcheck

def with_fake(lib, op):
    op.register_fake(lambda x, scale=1.0: lib.empty_like(x))
    return op


def results_summary(results):
    """opcheck's dict with each failure shown as its exception type (messages differ between libraries)."""
    return {k: v if v == "SUCCESS" else type(v).__name__ for k, v in results.items()}


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("autograd", [False, True])
def test_opcheck_of_a_sound_op_succeeds(ns, requires_grad, autograd, dtype):
    def program(lib):
        op = with_fake(lib, numpy_sin_op(lib, f"{ns}::numpy_sin", autograd=autograd))
        x = lib.randn(3, dtype=getattr(lib, dtype), requires_grad=requires_grad)
        return results_summary(lib.library.opcheck(op, (x,), raise_exception=False))

    same(program)


def test_opcheck_without_fake_raises_or_reports(ns):
    def program(lib):
        op = numpy_sin_op(lib, f"{ns}::numpy_sin")
        summary = results_summary(lib.library.opcheck(op, (lib.randn(3),), raise_exception=False))
        try:
            lib.library.opcheck(op, (lib.randn(3),))
        except Exception as error:  # noqa: BLE001 - its type's name and message are compared
            return summary, type(error).__name__, str(error).startswith("opcheck(op, ...): test_faketensor failed with")

    same(program)


def test_opcheck_catches_an_unlisted_mutation(ns):
    def program(lib):
        @lib.library.custom_op(f"{ns}::sneaky", mutates_args=())
        def sneaky(x: lib.Tensor) -> lib.Tensor:
            x.add_(1)
            return x.clone()

        sneaky.register_fake(lambda x: lib.empty_like(x))
        results = lib.library.opcheck(sneaky, (lib.zeros(3),), raise_exception=False)
        return results_summary(results), str(results["test_schema"])

    same(program)


@pytest.mark.parametrize("fake", [lambda x: x.new_empty(x.shape[0] + 1), lambda x: x.double().new_empty(x.shape)],
                         ids=["shape", "dtype"])
def test_opcheck_compares_the_fake_with_the_kernel(ns, fake):
    def program(lib):
        op = numpy_sin_op(lib, f"{ns}::numpy_sin")
        op.register_fake(lambda x, scale=1.0: fake(x))
        results = lib.library.opcheck(op, (lib.randn(3),), raise_exception=False)
        return results_summary(results), "mismatched tensor metadata" in str(results["test_faketensor"])

    in_torch, in_ember = both(program)
    assert in_ember[1][0] == {**in_torch[1][0], "test_faketensor": "RuntimeError"} and in_torch[1][0][
        "test_faketensor"] == "MetadataMismatchError"
    assert in_ember[1][1] and in_torch[1][1]


def test_opcheck_test_utils_selection_and_errors(ns):
    def program(lib):
        op = with_fake(lib, numpy_sin_op(lib, f"{ns}::numpy_sin"))
        x = lib.randn(2)
        chosen = [lib.library.opcheck(op, (x,), test_utils="test_schema"),
                  lib.library.opcheck(op, (x,), test_utils=("test_schema", "test_faketensor")),
                  lib.library.opcheck(getattr(lib.ops, ns).numpy_sin.default, (x,), {"scale": 2.0})]
        errors = []
        for call in (lambda: lib.library.opcheck(op, (x,), test_utils=("bogus",)),
                     lambda: lib.library.opcheck(lib.sin, (x,))):
            try:
                call()
            except ValueError as error:
                errors.append(type(error).__name__)
        return chosen, errors

    same(program)


def test_opcheck_runs_gradcheck_on_a_registered_formula():
    """Beyond torch's opcheck (which never compares a formula with numbers): a wrong backward fails the
    autograd check, as gradcheck itself judges it."""
    op = with_fake(ember, numpy_sin_op(ember, "opcheck_only::wrong_sin"))
    op.register_autograd(lambda ctx, g: (g * 2, None))
    x = ember.randn(3, dtype=ember.float64, requires_grad=True)
    with pytest.raises(ember.autograd.GradcheckError):
        ember.autograd.gradcheck(op, (x,))
    results = ember.library.opcheck(op, (x,), raise_exception=False)
    assert isinstance(results["test_autograd_registration"], ember.autograd.GradcheckError)
    with pytest.raises(ember.library.OpCheckError, match="test_autograd_registration failed"):
        ember.library.opcheck(op, (x,))


def test_opcheck_wants_autograd_for_a_defined_op_whose_inputs_require_grad(ns):
    def program(lib):
        library = lib.library.Library(ns, "DEF")
        library.define("double(Tensor x) -> Tensor")
        library.impl("double", lambda x: x * 2, "CPU")
        x = lib.ones(2, requires_grad=True)
        return type(lib.library.opcheck(getattr(lib.ops, ns).double.default, (x,), raise_exception=False,
                                        test_utils="test_autograd_registration")[
                        "test_autograd_registration"]).__name__

    same(program)

