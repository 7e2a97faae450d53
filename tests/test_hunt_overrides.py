"""Function modes in unusual but legal uses, each compared with torch."""
from __future__ import annotations

import warnings

import pytest
import torch

import ember


def outcome(run):
    """What ``run()`` gives: ("ok", value) or ("error", exception type, message)."""
    try:
        return ("ok", run())
    except Exception as error:  # noqa: BLE001 - the outcome is what is compared
        return ("error", type(error), str(error))


def tagged_mode(lib, tag: str):
    class Tagged(lib.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    mode = Tagged()
    mode.tag = tag
    return mode


def stack_tags(lib) -> list:
    return [getattr(m, "tag", "?") for m in lib.overrides._get_current_function_mode_stack()]


def test_leaving_modes_out_of_order_pops_the_innermost_as_torch():
    def program(lib):
        outer, inner = tagged_mode(lib, "outer"), tagged_mode(lib, "inner")
        outer.__enter__()
        inner.__enter__()
        outer.__exit__(None, None, None)
        after_first = stack_tags(lib)
        inner.__exit__(None, None, None)
        return after_first, stack_tags(lib)

    assert program(ember) == program(torch) == (["outer"], [])


def test_leaving_a_mode_twice_raises_and_keeps_the_stack_empty_as_torch():
    def program(lib):
        mode = tagged_mode(lib, "once")
        mode.__enter__()
        mode.__exit__(None, None, None)
        return outcome(lambda: mode.__exit__(None, None, None))[:2], stack_tags(lib)

    assert program(ember) == program(torch) == (("error", RuntimeError), [])


def declining_mode(lib):
    class Declining(lib.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            return NotImplemented

    return Declining()


@pytest.mark.parametrize("factory", ["ones(2)", "zeros(1)", "tensor([1.])", "arange(3)", "eye(2)"])
def test_a_mode_declining_a_factory_raises_type_error_as_torch(factory):
    def program(lib):
        with declining_mode(lib):
            return outcome(lambda: eval(f"lib.{factory}", {"lib": lib}).tolist())[:2]

    assert program(ember) == program(torch) == ("error", TypeError)


def test_push_makes_a_mode_without_entering_it_and_warns_as_torch():
    def program(lib):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            mode = tagged_mode(lib, "pushed")
            pushed = type(mode).push()
        return (type(pushed).__name__, stack_tags(lib), [w.category for w in caught],
                outcome(lambda: pushed.__exit__(None, None, None))[:2])

    assert program(ember) == program(torch) == ("Tagged", [], [UserWarning], ("error", RuntimeError))


def test_del_grad_reaches_a_mode_as_torch():
    def program(lib):
        calls = []
        tensor = lib.zeros(2, requires_grad=True)
        recording = type("Recording", (lib.overrides.TorchFunctionMode,), {
            "__torch_function__": lambda self, func, types, args=(), kwargs=None: (
                calls.append((getattr(func, "__name__", None), len(args))), func(*args, **(kwargs or {})))[1],
        })
        with recording():
            del tensor.grad
        return calls

    assert program(ember) == program(torch) == [("__delete__", 1)]


# ---------------------------------------------------------------- as_subclass is an alias, as torch's


def test_as_subclass_is_a_view_that_carries_no_attributes_as_torch():
    def program(lib):
        first = type("First", (lib.Tensor,), {})
        second = type("Second", (lib.Tensor,), {})
        plain = lib.ones(2)
        seen = plain.as_subclass(first)
        seen.tag = "kept on this object only"
        again = seen.as_subclass(second)
        return (seen._is_view(), seen._base is plain, again._base is plain, hasattr(again, "tag"),
                (seen + 1)._is_view())

    assert program(ember) == program(torch) == (True, True, True, False, True)


def test_results_of_ops_on_a_subclass_that_requires_grad_hang_from_an_alias_as_torch():
    def program(lib):
        watched = type("Watched", (lib.Tensor,), {})
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x.as_subclass(watched) * 3
        y.sum().backward()
        return type(y).__name__, y.grad_fn.name(), y.grad_fn.next_functions[0][0].name(), x.grad.tolist()

    assert program(ember) == program(torch) == ("Watched", "AliasBackward0", "MulBackward0", [3.0, 3.0])
