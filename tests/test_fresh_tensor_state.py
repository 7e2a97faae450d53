"""Every tensor holds the six attributes of a fresh tensor's state itself, whatever made it.

ember's hot paths read whether an input requires grad or is a view, and write a view's base, version counter
and replay steps and a recorded output's grad_fn. CPython 3.11 specialises neither reads nor writes of an
instance attribute that the class also defines, so ``Tensor`` defines none of these six and every way of
making a tensor sets them (``ember._tensor._fresh``). A way that forgot would make the first op on its tensor
raise AttributeError: these tests go through each.
"""
from __future__ import annotations

import copy
import pickle

import pytest

import ember
from ember._tensor import Tensor

FRESH_STATE = ("_requires_grad", "_grad_fn", "_output_nr", "_vc", "_base", "_view_replay")


def test_the_tensor_class_defines_none_of_the_fresh_state():
    assert not [name for name in FRESH_STATE if name in vars(Tensor)]


def _made_by_every_path() -> dict:
    x = ember.randn(3, 4)
    leaf = ember.randn(3, 4, requires_grad=True)

    class Subclass(ember.Tensor):
        pass

    return {
        "creation": x,
        "op output": x + 1,
        "recorded output": leaf * 2,
        "view": x[1:],
        "view of a view": x[1:].t(),
        "reshape": x.view(12),
        "legacy constructor": ember.Tensor(2, 3),
        "Parameter": ember.nn.Parameter(ember.randn(2)),
        "_make_subclass": ember.Tensor._make_subclass(Subclass, x),
        "as_subclass": x.as_subclass(Subclass),
        "detach": leaf.detach(),
        ".data": leaf.data,
        "deepcopy": copy.deepcopy(leaf),
        "pickle": pickle.loads(pickle.dumps(leaf)),
        "sparse COO": x.to_sparse(),
        "sparse CSR": x.to_sparse_csr(),
        "quantized": ember.quantize_per_tensor(x, 0.1, 0, ember.qint8),
    }


@pytest.mark.parametrize("path", sorted(_made_by_every_path()))
def test_each_way_of_making_a_tensor_sets_the_fresh_state(path):
    t = _made_by_every_path()[path]
    assert [name for name in FRESH_STATE if name not in vars(t)] == []


def test_a_tensor_under_vmap_sets_the_fresh_state():
    seen = []

    def body(row):
        seen.append([name for name in FRESH_STATE if name not in vars(row)])
        return row * 2

    ember.func.vmap(body)(ember.randn(3, 4))
    assert seen == [[]]


@pytest.mark.parametrize("path", ["sparse COO", "quantized", "deepcopy", "pickle", "legacy constructor"])
def test_the_first_op_on_each_runs(path):
    t = _made_by_every_path()[path]
    t = t.dequantize() if t.is_quantized else t.to_dense() if t.is_sparse else t
    assert (t * 1).shape == t.shape
