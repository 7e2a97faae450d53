"""ember.library.custom_op and its registrations, each program run on torch and on ember and compared."""

import itertools
import re
import subprocess
import sys
from typing import Optional, Sequence

import numpy as np
import pytest
import torch

import ember

_names = itertools.count()


@pytest.fixture
def ns():
    """A namespace of the test's own: both libraries keep their operators for the whole process."""
    return f"cop{next(_names)}"


def both(program, *args):
    """``program(lib, *args)`` run with torch and with ember: the two outcomes."""
    return outcome(lambda: program(torch, *args)), outcome(lambda: program(ember, *args))


def outcome(run):
    try:
        return ("ok", plain(run()))
    except Exception as error:  # noqa: BLE001 - the outcome is what is compared
        return ("error", type(error).__name__, str(error))


def plain(value):
    """Tensors as NumPy arrays and library names as 'lib', so results of the two libraries compare equal."""
    if isinstance(value, (torch.Tensor, ember.Tensor)):
        return value.detach().numpy().round(10).tolist()
    if isinstance(value, (list, tuple)):
        return type(value)(plain(v) for v in value)
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, str):
        return value.replace("torch", "lib").replace("ember", "lib")
    return value


def same(program, *args):
    in_torch, in_ember = both(program, *args)
    assert in_ember == in_torch
    return in_torch


def same_error(program, *args, first_line_only=False):
    """Both raise the same exception type; the messages agree (on their first line, if asked)."""
    in_torch, in_ember = both(program, *args)
    assert in_torch[0] == "error" and in_ember[:2] == in_torch[:2], (in_torch, in_ember)
    if first_line_only:
        assert in_ember[2].splitlines()[0] == in_torch[2].splitlines()[0]
    return in_torch[2], in_ember[2]


def numpy_sin_op(lib, name, **registrations):
    """``name``: a NumPy sine with a scale, and (if asked) its autograd."""
    Tensor = lib.Tensor

    @lib.library.custom_op(name, mutates_args=())
    def numpy_sin(x: Tensor, scale: float = 1.0) -> Tensor:
        return lib.from_numpy(np.sin(x.numpy()) * scale)

    if registrations.get("autograd"):
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])
            ctx.scale = inputs[1]

        def backward(ctx, grad):
            return grad * ctx.saved_tensors[0].cos() * ctx.scale, None

        numpy_sin.register_autograd(backward, setup_context=setup_context)
    return numpy_sin


# ---------------------------------------------------------------- schema inference

def annotated_functions(lib):
    T = lib.Tensor

    def plain_types(x: T, y: Optional[T], z: Sequence[T], a: int, b: float, c: bool, d: str,
                    e: Optional[int] = None, f: float = 2.0, *, g: bool = True) -> tuple[T, T]: ...

    def lists(x: list[T], y: list[int], w: Sequence[Optional[T]], z: Optional[list[float]] = None) -> list[T]: ...

    def others(x: T, d: lib.dtype, dev: lib.device, n: Optional[float] = None, q: Optional[str] = None) -> int: ...

    def nothing(x: T, s: str = "mean") -> None: ...

    def union_syntax(x: T, y: T | None = None, n: int | None = None) -> float: ...

    return [plain_types, lists, others, nothing, union_syntax]


@pytest.mark.parametrize("index", range(5))
@pytest.mark.parametrize("mutates", [(), "unknown"])
def test_inferred_schema_is_torchs(index, mutates):
    same(lambda lib: lib.library.infer_schema(annotated_functions(lib)[index], mutates_args=mutates))


def test_inferred_schema_marks_each_mutated_argument():
    def program(lib):
        def f(x: lib.Tensor, ys: list[lib.Tensor], n: int) -> lib.Tensor: ...
        return lib.library.infer_schema(f, mutates_args=["ys", "x"], op_name="f")

    same(program)


def unannotated(x, y: torch.Tensor): ...


def bad_functions(lib):
    T = lib.Tensor

    def no_return(x: T): ...

    def numpy_argument(x: np.ndarray) -> T: ...

    def varargs(x: T, *rest) -> T: ...

    def varkw(x: T, **rest) -> T: ...

    def tensor_default(x: T, y: T = lib.ones(1)) -> T: ...

    def dict_return(x: T) -> dict: ...

    def open_tuple(x: T) -> tuple[T, ...]: ...

    return [unannotated, no_return, numpy_argument, varargs, varkw, tensor_default, dict_return, open_tuple]


@pytest.mark.parametrize("index", range(8))
def test_unsupported_signatures_raise_torchs_error(index):
    def program(lib):
        return lib.library.custom_op(f"bad::f{index}", bad_functions(lib)[index], mutates_args=())

    torch_message, ember_message = same_error(program)
    assert ember_message.startswith("infer_schema(func): ")
    torch_reason = re.match(r"infer_schema\(func\): (\w+ \w+ \w+)", torch_message).group(1)
    assert ember_message.startswith(f"infer_schema(func): {torch_reason}")


@pytest.mark.parametrize("mutates", [("y",), ("n",)])
def test_mutates_args_naming_no_tensor_argument_raises(mutates):
    def program(lib):
        def f(x: lib.Tensor, n: int) -> lib.Tensor: ...
        return lib.library.custom_op("bad::mut", f, mutates_args=mutates)

    torch_message, ember_message = same_error(program)
    assert ember_message.split(" Got func")[0] == torch_message.split(" Got func")[0]


def test_mutates_args_is_required():
    def program(lib):
        def f(x: lib.Tensor) -> lib.Tensor: ...
        return lib.library.custom_op("bad::required", f)

    same_error(program)


@pytest.mark.parametrize("name", ["noseparator", "my lib::f", "mylib::f 6"])
def test_bad_names_raise(name):
    # torch runs in a process of its own: a refused name leaves its dispatcher in a state that breaks later
    # compilations (opcheck's test_aot_dispatch_dynamic) in this process
    script = ("import torch\n"
              "def f(x: torch.Tensor) -> torch.Tensor: ...\n"
              "try:\n"
              f"    torch.library.custom_op({name!r}, mutates_args=())(f)\n"
              "except Exception as error:\n"
              "    print(type(error).__name__)\n")
    in_torch = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)

    def f(x: ember.Tensor) -> ember.Tensor: ...

    with pytest.raises(Exception) as raised:
        ember.library.custom_op(name, mutates_args=())(f)
    assert type(raised.value).__name__ == in_torch.stdout.strip()


def test_explicit_schema_is_used(ns):
    def program(lib):
        op = lib.library.custom_op(f"{ns}::scaled", mutates_args=(), schema="(Tensor x, int n) -> Tensor")(
            lambda x, n: x * n)
        return op(lib.ones(2), 3), str(getattr(lib.ops, ns).scaled.default._schema)

    same(program)


# ---------------------------------------------------------------- calling the op

def test_op_is_reachable_through_ops_and_prints_as_torchs(ns):
    def program(lib):
        op = numpy_sin_op(lib, f"{ns}::numpy_sin")
        packet = getattr(lib.ops, ns).numpy_sin
        x = lib.tensor([0.5, 1.0])
        return (op(x, 2.0), packet(x, scale=2.0), packet.default(x), repr(op), str(packet), str(packet.default),
                packet.default.name(), packet.overloads(), str(packet.default._schema), op._schema)

    same(program)


@pytest.mark.parametrize("call", [
    lambda op, lib: op(lib.ones(2), 1.0, 2.0),
    lambda op, lib: op(lib.ones(2), sc=1.0),
    lambda op, lib: op(),
    lambda op, lib: op(lib.ones(2), scale=1.0, x=lib.ones(1)),
])
def test_binding_errors_are_torchs(ns, call):
    def program(lib):
        return call(numpy_sin_op(lib, f"{ns}::numpy_sin"), lib)

    torch_message, ember_message = same_error(program)
    if "multiple values" not in ember_message:
        assert plain(ember_message) == plain(torch_message)


@pytest.mark.parametrize("call", [lambda op, lib: op(3), lambda op, lib: op(lib.ones(2), "a")])
def test_argument_type_errors_are_torchs(ns, call):
    def program(lib):
        return call(getattr(lib.ops, ns).numpy_sin, lib) if numpy_sin_op(lib, f"{ns}::numpy_sin") else None

    torch_message, ember_message = same_error(program)
    assert ember_message.split("\nDeclaration")[0] == torch_message.split("\nDeclaration")[0]


def test_missing_op_raises_attribute_error(ns):
    same_error(lambda lib: getattr(lib.ops, ns).nope)


# ---------------------------------------------------------------- autograd

def test_without_registered_autograd_backward_raises_torchs_error(ns):
    def program(lib):
        op = numpy_sin_op(lib, f"{ns}::numpy_sin")
        x = lib.tensor([0.5, 1.0], requires_grad=True)
        y = op(x)
        assert y.requires_grad and type(y.grad_fn).__name__ == f"GeneratedBackwardFor_{ns}_numpy_sin_defaultBackward"
        y.sum().backward()

    same_error(program)


def test_registered_autograd_matches_torch_and_passes_gradcheck(ns):
    def program(lib):
        op = numpy_sin_op(lib, f"{ns}::numpy_sin", autograd=True)
        x = lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64, requires_grad=True)
        y = getattr(lib.ops, ns).numpy_sin(x, 3.0)
        y.sum().backward()
        checks = (lib.autograd.gradcheck(lambda t: op(t, 3.0), (x,)),
                  lib.autograd.gradgradcheck(lambda t: op(t, 3.0), (x,)))
        with lib.no_grad():
            under_no_grad = op(x).requires_grad
        return y, x.grad, checks, under_no_grad, type(y.grad_fn).__name__

    same(program)


def test_list_arguments_multiple_outputs_and_needs_input_grad(ns):
    def program(lib):
        T = lib.Tensor
        seen = []

        @lib.library.custom_op(f"{ns}::weighted_sum", mutates_args=())
        def weighted_sum(xs: list[T], w: T, k: float) -> tuple[T, T]:
            total = sum(x.clone() for x in xs) * w
            return total, total * k

        def setup_context(ctx, inputs, output):
            xs, w, k = inputs
            ctx.save_for_backward(*xs, w)
            ctx.k = k

        def backward(ctx, g1, g2):
            seen.append(ctx.needs_input_grad)
            *xs, w = ctx.saved_tensors
            g = g1 + g2 * ctx.k
            return [g * w for _ in xs], g * sum(xs), None

        weighted_sum.register_autograd(backward, setup_context=setup_context)
        a, b, w = (lib.tensor(v, dtype=lib.float64, requires_grad=r) for v, r in
                   (([1.0, 2.0], True), ([3.0, 4.0], False), ([0.5, 2.0], True)))
        out = weighted_sum([a, b], w, 3.0)
        (out[0].sum() + out[1].sum()).backward()
        check = lib.autograd.gradcheck(lambda a, w: weighted_sum([a, b], w, 3.0), (a, w))
        return type(out).__name__, out, a.grad, w.grad, seen[0], check

    same(program)


@pytest.mark.parametrize("returned", ["one", "three_non_none", "grad_for_float", "extra_none"])
def test_backward_returning_wrong_gradients(ns, returned):
    def program(lib):
        op = numpy_sin_op(lib, f"{ns}::numpy_sin")
        results = {"one": lambda g: g, "three_non_none": lambda g: (g, None, g), "grad_for_float": lambda g: (g, g),
                   "extra_none": lambda g: (g, None, None)}
        op.register_autograd(lambda ctx, g: results[returned](g))
        x = lib.ones(2, requires_grad=True)
        op(x).sum().backward()
        return x.grad

    in_torch, in_ember = both(program)
    assert in_ember[:2] == in_torch[:2]
    if returned == "grad_for_float":  # the same message (torch counts positions as ember does here)
        assert plain(in_ember[2]) == plain(in_torch[2])
    elif in_torch[0] == "error":
        assert "returned an incorrect number of gradients" in in_ember[2]


def test_integer_outputs_do_not_require_grad(ns):
    def program(lib):
        T = lib.Tensor

        @lib.library.custom_op(f"{ns}::argmax_and_double", mutates_args=())
        def argmax_and_double(x: T) -> tuple[T, T]:
            return x.argmax(), x * 2

        argmax_and_double.register_autograd(lambda ctx, g_index, g: g * 2)
        x = lib.tensor([1.0, 3.0], requires_grad=True)
        index, doubled = argmax_and_double(x)
        doubled.sum().backward()
        return index.requires_grad, doubled.requires_grad, x.grad

    same(program)


# ---------------------------------------------------------------- mutation and aliasing

def add_one_op(lib, name):
    @lib.library.custom_op(name, mutates_args={"x"})
    def add_one_(x: lib.Tensor) -> None:
        data = x.numpy()
        np.add(data, 1, out=data)

    return add_one_


def test_mutating_op_bumps_the_version_and_saved_tensor_checks_see_it(ns):
    def program(lib):
        op = add_one_op(lib, f"{ns}::add_one_")
        t = lib.zeros(2)
        result = op(t)
        a = lib.randn(3, requires_grad=True)
        b = a * 1
        c = b * b
        op(b)
        try:
            c.sum().backward()
            saved_check = "no error"
        except RuntimeError as error:
            saved_check = "modified by an inplace operation" in str(error)
        return result, t._version, t, saved_check

    same(program)


def test_mutating_op_bumps_after_its_own_inplace_ops(ns):
    def program(lib):
        @lib.library.custom_op(f"{ns}::add_", mutates_args=["x"])
        def add_(x: lib.Tensor, y: lib.Tensor) -> None:
            x.add_(y)

        t = lib.ones(2, requires_grad=True).clone()
        add_(t, lib.ones(2))
        return t._version, t, type(t.grad_fn).__name__

    same(program)


def test_mutating_op_cannot_register_autograd(ns):
    torch_message, ember_message = same_error(
        lambda lib: add_one_op(lib, f"{ns}::add_one_").register_autograd(lambda ctx, g: g))
    assert ember_message.split(" -> ()")[0] == torch_message.split(" -> ()")[0]


@pytest.mark.parametrize("kernel", [lambda x: x, lambda x: x[:1], lambda x: x.view(-1)])
@pytest.mark.parametrize("requires_grad", [False, True])
def test_returning_an_input_or_a_view_of_one_raises(ns, kernel, requires_grad):
    def program(lib):
        op = lib.library.custom_op(f"{ns}::alias", mutates_args=(), schema="(Tensor x) -> Tensor")(kernel)
        return op(lib.ones(2, requires_grad=requires_grad))

    torch_message, ember_message = same_error(program)
    assert "clone" in ember_message and "alias" in ember_message


# ---------------------------------------------------------------- __torch_function__

def test_modes_see_the_overload_or_the_packet_as_torchs_do(ns):
    def program(lib):
        op = numpy_sin_op(lib, f"{ns}::numpy_sin")
        seen = []

        class Log(lib.overrides.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                if "numpy_sin" in str(func):
                    seen.append((str(func), len(args), kwargs))
                return func(*args, **(kwargs or {}))

        x = lib.ones(2)
        with Log():
            results = [op(x, scale=2.0), getattr(lib.ops, ns).numpy_sin(x), getattr(lib.ops, ns).numpy_sin.default(x)]
        return seen, results

    same(program)


def test_tensor_subclasses_handle_op_calls(ns):
    def program(lib):
        op = numpy_sin_op(lib, f"{ns}::numpy_sin")
        seen = []

        class Sub(lib.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                if "numpy_sin" in str(func):
                    seen.append((str(func), [t.__name__ for t in types], kwargs))
                return super().__torch_function__(func, types, args, kwargs)

        s = lib.ones(2).as_subclass(Sub)
        results = [op(s), getattr(lib.ops, ns).numpy_sin(s, 2.0), op(lib.ones(2), 1.0)]
        return seen, [type(r).__name__ for r in results], results

    same(program)


# ---------------------------------------------------------------- kernels and vmap

def test_register_kernel_replaces_the_cpu_kernel_and_checks_device_types(ns):
    def program(lib):
        op = numpy_sin_op(lib, f"{ns}::numpy_sin")
        op.register_kernel("cpu")(lambda x, scale=1.0: lib.from_numpy(np.cos(x.numpy()) * scale))
        op.register_kernel("cuda", lambda x, scale=1.0: x.clone())
        result = op(lib.zeros(2))
        try:
            op.register_kernel("tpu")(lambda x, scale=1.0: x.clone())
        except RuntimeError as error:
            return result, str(error)

    same(program)


def test_an_op_for_another_device_only_has_no_cpu_kernel(ns):
    def program(lib):
        op = lib.library.custom_op(f"{ns}::gpu_only", mutates_args=(), device_types="cuda",
                                   schema="(Tensor x) -> Tensor")(lambda x: x.clone())
        return op(lib.ones(1))

    torch_message, ember_message = same_error(program)
    assert ember_message.startswith(f"Could not run '{ns}::gpu_only' with arguments from the 'CPU' backend")


def test_vmap_without_a_rule_runs_the_op_per_sample(ns):
    def program(lib):
        op = numpy_sin_op(lib, f"{ns}::numpy_sin")
        x = lib.arange(6.0).reshape(3, 2)
        return lib.vmap(op)(x), lib.vmap(op, in_dims=(1, None))(x, 2.0)

    same(program)


def test_vmap_uses_the_registered_rule(ns):
    def program(lib):
        op = numpy_sin_op(lib, f"{ns}::numpy_sin")
        calls = []

        @op.register_vmap
        def rule(info, in_dims, x, scale):
            calls.append((info.batch_size, info.randomness, in_dims[1]))  # (torch keeps x's dim where it was)
            return op(x, scale), in_dims[0]

        x = lib.arange(6.0).reshape(3, 2)
        return lib.vmap(op, in_dims=(1, None))(x, 2.0), calls

    same(program)


# ---------------------------------------------------------------- register_* by name and errors

def test_registering_for_a_missing_op_raises_attribute_error(ns):
    same_error(lambda lib: lib.library.register_autograd(f"{ns}::nope", lambda ctx, g: g))


def test_registrations_by_name_and_through_ops_reach_the_op(ns):
    def program(lib):
        op = numpy_sin_op(lib, f"{ns}::numpy_sin")
        lib.library.register_autograd(f"{ns}::numpy_sin", lambda ctx, g: (g * 2, None))
        x = lib.ones(2, requires_grad=True)
        op(x).sum().backward()
        lib.library.register_fake(getattr(lib.ops, ns).numpy_sin.default, lambda x, scale=1.0: lib.empty_like(x))
        return x.grad, lib.library.opcheck(op, (lib.randn(2),), test_utils="test_faketensor")

    same(program)


def test_list_result_gets_its_gradients_as_one_list(ns):
    def program(lib):
        @lib.library.custom_op(f"{ns}::halves", mutates_args=())
        def halves(x: lib.Tensor) -> list[lib.Tensor]:
            return [x[:1].clone(), x[1:].clone()]

        halves.register_autograd(lambda ctx, grads: lib.cat(grads))
        x = lib.ones(3, requires_grad=True)
        out = halves(x)
        (out[0].sum() * 2 + out[1].sum()).backward()
        return type(out).__name__, out, x.grad

    same(program)


def test_results_without_tensors_inputs_and_outputs_sharing_memory(ns):
    def program(lib):
        make = lib.library.custom_op(f"{ns}::make", mutates_args=(), schema="(SymInt n, float v) -> Tensor")(
            lambda n, v: lib.full((n,), v))
        count = lib.library.custom_op(f"{ns}::count", mutates_args=(), schema="(Tensor x) -> SymInt")(
            lambda x: x.numel())
        twice = lib.library.custom_op(f"{ns}::twice", mutates_args=(), schema="(Tensor x) -> (Tensor, Tensor)")(
            lambda x: (lambda y: (y, y))(x.clone()))
        results = [make(3, 2.0), count(lib.ones(2, requires_grad=True))]
        try:
            twice(lib.ones(2))
        except RuntimeError as error:
            results.append("clone" in str(error))
        return results

    same(program)


# ---- the short path of an everyday call (plain tensors that need no gradient): the general path's outcomes

def _recorder(lib, ns, seen):
    @lib.library.custom_op(f"{ns}::scaled", mutates_args=())
    def scaled(x: lib.Tensor, factor: float = 2.0, twice: bool = False) -> lib.Tensor:
        seen.append((lib.is_grad_enabled(), x.requires_grad))
        out = lib.from_numpy(x.numpy() * factor)
        return out * 2 if twice else out
    return scaled


@pytest.mark.parametrize("call", ["plain", "grad_input_under_no_grad", "int_factor", "defaults_given"])
def test_short_path_matches_the_general_one(ns, call):
    def program(lib):
        seen = []
        scaled = _recorder(lib, ns, seen)
        x = lib.tensor([1.0, -2.0], dtype=lib.float64)
        if call == "plain":
            result = scaled(x, 3.0)
        elif call == "grad_input_under_no_grad":  # the kernel still gets it detached: numpy() works
            with lib.no_grad():
                result = scaled(x.requires_grad_(), 3.0)
        elif call == "int_factor":  # converted to float as the schema says
            result = scaled(x, 3)
        else:
            result = scaled(x, 2.0, False)
        return result, result.requires_grad, seen
    same(program)


def test_short_path_checks_types_and_aliases(ns):
    def wrong_type(lib):
        return _recorder(lib, ns + "t", [])(lib.ones(2), "3")
    same_error(wrong_type, first_line_only=True)

    def aliased(lib):
        @lib.library.custom_op(f"{ns}a::same", mutates_args=())
        def returns_input(x: lib.Tensor) -> lib.Tensor:
            return x
        return returns_input(lib.ones(2))
    in_torch, in_ember = both(aliased)
    assert in_torch[:2] == in_ember[:2] == ("error", "RuntimeError")


def test_short_path_is_seen_by_modes(ns):
    def program(lib):
        from_mode = []

        class Log(lib.overrides.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                from_mode.append(str(func))
                return func(*args, **(kwargs or {}))
        scaled = _recorder(lib, ns + "m", [])
        x = lib.ones(2)
        with Log():
            scaled(x)
        return from_mode
    same(program)
