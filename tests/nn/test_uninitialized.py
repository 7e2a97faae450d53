"""Placeholders of lazy modules (UninitializedParameter/Buffer, is_lazy), against torch."""
import copy

import pytest
import torch

import ember


@pytest.mark.parametrize("m", [torch, ember], ids=["torch", "ember"])
def test_placeholder_refuses_ops_and_shape_until_materialized(m):
    p = m.nn.parameter.UninitializedParameter()
    assert repr(p) == "<UninitializedParameter>" and p.requires_grad and m.nn.parameter.is_lazy(p)
    assert isinstance(p, m.nn.Parameter)
    with pytest.raises(RuntimeError, match="Can't access the shape of an uninitialized parameter"):
        p.shape
    with pytest.raises(ValueError, match="Attempted to use an uninitialized parameter"):
        p + 1
    with pytest.raises(ValueError, match="Attempted to use an uninitialized parameter"):
        m.sum(p)
    assert repr(copy.deepcopy(p)) == "<UninitializedParameter>"
    p.materialize((2, 3))
    assert type(p) is m.nn.Parameter and tuple(p.shape) == (2, 3) and p.requires_grad
    assert not m.nn.parameter.is_lazy(p)


@pytest.mark.parametrize("m", [torch, ember], ids=["torch", "ember"])
def test_buffer_placeholder_materializes_into_a_plain_tensor(m):
    b = m.nn.parameter.UninitializedBuffer()
    assert repr(b) == "<UninitializedBuffer>" and not b.requires_grad
    b.materialize(4, dtype=m.float64)
    assert type(b) is m.Tensor and b.dtype == m.float64 and tuple(b.shape) == (4,)


def _lazy_story(m, make, shape):
    m.manual_seed(0)
    layer = make(m)
    before = list(layer.parameters())
    kinds = [type(p).__name__ for p in before]
    state = {k: repr(v) for k, v in layer.state_dict().items()}
    optimizer = m.optim.SGD(layer.parameters(), lr=0.1)  # built before the first call
    out = layer(m.ones(*shape, dtype=m.float64))
    out.sum().backward()
    optimizer.step()
    after = list(layer.parameters())
    return kinds, state, [a is b for a, b in zip(before, after)], [tuple(p.shape) for p in after], type(layer).__name__


@pytest.mark.parametrize("make, shape", [
    (lambda m: m.nn.LazyLinear(3).double(), (2, 5)),
    (lambda m: m.nn.LazyConv2d(4, 3).double(), (1, 2, 5, 5)),
    (lambda m: m.nn.LazyBatchNorm1d().double(), (4, 3)),
], ids=["linear", "conv2d", "batchnorm"])
def test_lazy_layers_keep_their_parameter_objects_as_torch(make, shape):
    ours = _lazy_story(ember, make, shape)
    theirs = _lazy_story(torch, make, shape)
    assert ours == theirs
    assert all(ours[2])  # the optimizer's parameters are the layer's


def test_lazy_batchnorm_buffers_start_as_placeholders():
    layer = ember.nn.LazyBatchNorm1d()
    assert ember.nn.parameter.is_lazy(layer.running_mean) and not ember.nn.parameter.is_lazy(layer.num_batches_tracked)
    layer(ember.randn(4, 3))
    assert type(layer.running_mean) is ember.Tensor and layer.running_mean.shape == (3,)
