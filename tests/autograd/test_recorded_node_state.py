"""A recorded node holds its edges, order and output metadata itself (see ember.autograd.node.Node).

Every recorded op writes these three; CPython 3.11 specialises no write of an instance attribute whose name
the class also defines, so the node classes of Functions define none of them. The engine, next_functions and
gradcheck read them from every recorded node: each kind of recording must set them.
"""
from __future__ import annotations

import pytest

import ember
from ember.autograd.function import BackwardCFunction
from ember.autograd.node import Node
from seed_functions import mul_constant

RECORDED_STATE = ("_next", "_seq", "_out_meta")


def test_the_node_classes_of_functions_define_none_of_the_recorded_state():
    defined = [name for cls in BackwardCFunction.__mro__ for name in RECORDED_STATE if name in vars(cls)]
    assert defined == []
    assert [name for name in RECORDED_STATE if name in vars(Node)] == []


def _recorded_outputs() -> dict:
    x = ember.randn(3, 4, requires_grad=True)
    return {
        "pointwise": x.exp(),
        "binary": x * x,
        "three inputs": ember.addcmul(x, x, x),
        "several outputs": x.max(1).values,
        "view": x[1:],
        "in place": x.clone().mul_(2),
        "a user's Function": mul_constant(ember, with_setup_context=False).apply(x, 2.0),
        "a user's setup_context Function": mul_constant(ember).apply(x, 2.0),
    }


@pytest.mark.parametrize("kind", sorted(_recorded_outputs()))
def test_each_kind_of_recording_sets_the_recorded_state(kind):
    node = _recorded_outputs()[kind].grad_fn
    assert [name for name in RECORDED_STATE if name not in vars(node)] == []
    assert node.next_functions  # read back as the engine and users read them


def test_a_leaf_s_accumulator_answers_next_functions():
    x = ember.randn(2, requires_grad=True)
    accumulator = (x * 2).grad_fn.next_functions[0][0]
    assert accumulator.next_functions == ()


def test_a_backward_pass_holds_its_own_hot_state():
    # read on every pass: defaults on the class would make each read and write an unspecialised lookup
    from ember.autograd.engine import _Pass

    assert [name for name in ("captures", "held", "callbacks") if name in vars(_Pass)] == []


class _SquareOnArrays(ember.autograd.Function):
    backward_on_arrays = True
    seen = []

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        (before,) = ctx.saved_tensors
        inner = ember.tensor([1.5], requires_grad=True)
        with ember.enable_grad():
            (inner * inner).sum().backward()  # another pass, run from inside this formula
        (after,) = ctx.saved_tensors
        _SquareOnArrays.seen.append((type(before), type(after), float(inner.grad[0])))
        return 2 * after * grad


def test_saved_tensors_stay_arrays_after_a_backward_run_inside_the_formula():
    import numpy as np

    _SquareOnArrays.seen.clear()
    x = ember.tensor([3.0], requires_grad=True)
    _SquareOnArrays.apply(x).sum().backward()
    assert _SquareOnArrays.seen == [(np.ndarray, np.ndarray, 3.0)]
    assert x.grad.tolist() == [6.0]
    assert ember.autograd.function.arrays_for == [None]


def test_a_formula_on_arrays_is_found_by_one_lookup():
    x = ember.randn(3, requires_grad=True)
    assert _SquareOnArrays.apply(x).grad_fn._array_formula is not None
    assert mul_constant(ember, with_setup_context=False).apply(x, 2.0).grad_fn._array_formula is None
