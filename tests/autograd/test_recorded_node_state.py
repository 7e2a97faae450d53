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
