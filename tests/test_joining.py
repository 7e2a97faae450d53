"""cat, stack and unbind beyond the op table: iteration, in-place rules for unbind's views, out=, promotion, dispatch."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import ember
from twins import both, both_raise


def test_iterating_a_tensor_gives_views_from_one_unbind_node_as_torch():
    def program(lib):
        x = lib.ones(3, 2, requires_grad=True)
        rows = list(x * 2)
        (rows[0] * 3 + rows[2]).sum().backward()
        return [r.grad_fn.name() for r in rows], rows[0].grad_fn is rows[1].grad_fn, rows[0]._base is not None, x.grad

    both(program)


def test_iterating_a_0_d_tensor_is_a_type_error_as_torch():
    both_raise(lambda lib: iter(lib.tensor(1.0)), TypeError, "iteration over a 0-d tensor")


@pytest.mark.parametrize("change", ["rows[1].add_(1)", "rows[0][0] = 5", "rows[0].zero_()"])
def test_unbinds_views_refuse_in_place_changes_under_grad_as_torch(change):
    def program(lib):
        rows = (lib.ones(2, 3, requires_grad=True) * 2).unbind()
        exec(change, {"rows": rows})

    both_raise(program, RuntimeError, r"Output \d of \w+ is a view and is being modified inplace", "multiple views")


def test_unbinds_views_take_in_place_changes_when_nothing_is_recorded_as_torch():
    def program(lib):
        x = lib.ones(2, 3)
        x.unbind(1)[2].add_(1)
        y = lib.ones(2, 3, requires_grad=True) * 2
        with lib.no_grad():
            y.unbind()[0].mul_(5)
        return x, y.detach()

    both(program)


@pytest.mark.parametrize("tensors", ["[lib.ones(2, dtype=lib.int64), lib.ones(2)]",
                                     "[lib.ones(2, dtype=lib.bool), lib.ones(2, dtype=lib.uint8)]",
                                     "(lib.ones(2, dtype=lib.float16), lib.ones(2, dtype=lib.int32))",
                                     "[lib.ones(2, dtype=lib.float64), lib.ones(2, dtype=lib.float32)]"])
@pytest.mark.parametrize("op", ["cat", "stack"])
def test_joined_dtypes_promote_as_torch(op, tensors):
    both(lambda lib: getattr(lib, op)(eval(tensors, {"lib": lib})))


@pytest.mark.parametrize("call", ["lib.cat([a, b], out=out)", "lib.stack([a, a], 1, out=out)",
                                  "lib.concat([a, b], dim=0, out=out)", "lib.concatenate([a, b], axis=1)",
                                  "lib.cat(tensors=[a], dim=-1)"])
def test_cat_and_stack_forms_and_out_as_torch(call):
    def program(lib):
        a, b, out = lib.ones(2, 2), lib.zeros(2, 2), lib.empty(0)
        result = eval(call, {"lib": lib, "a": a, "b": b, "out": out})
        return result, out

    both(program)


def test_cat_records_only_its_tensors_and_passes_an_empty_gradient_to_a_skipped_input_as_torch():
    def program(lib):
        a, skipped = lib.ones(2, 3, requires_grad=True), lib.ones(0, requires_grad=True)
        y = lib.cat([a, skipped, a], 0)
        y.sum().backward()
        return len(y.grad_fn.next_functions), a.grad, skipped.grad

    both(program)


def test_cat_dispatches_on_a_tensor_like_inside_its_list():
    seen = []

    class Logged(ember.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            seen.append(func.__name__)
            return super().__torch_function__(func, types, args, kwargs or {})

    x = ember.ones(2).as_subclass(Logged)
    result = ember.cat([ember.zeros(1), x])
    assert type(result) is Logged and seen[0] == "cat"
    assert np.array_equal(result.detach().numpy(), [0.0, 1.0, 1.0])


def test_stack_of_views_is_differentiable_twice_through_unbind():
    x = ember.randn(3, 4, dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradgradcheck(lambda t: ember.stack(list(t * t), 1), (x,))
    assert torch.autograd.gradgradcheck(lambda t: torch.stack(list(t * t), 1),
                                        (torch.from_numpy(x.detach().numpy().copy()).requires_grad_(),))
