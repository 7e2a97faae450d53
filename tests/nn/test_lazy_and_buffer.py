"""Lazy convolutions and normalizations, and nn.Buffer, against torch's behaviour."""
from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.nn as enn

torch = pytest.importorskip("torch")
tnn = torch.nn

LAZY = [
    ("LazyConv1d", (4, 3), (2, 3, 6)), ("LazyConv1d", (4, 3), (3, 6)), ("LazyConv2d", (4, 3), (2, 3, 5, 5)),
    ("LazyConv3d", (2, 2), (1, 2, 3, 3, 3)), ("LazyConvTranspose1d", (4, 3), (2, 6, 5)),
    ("LazyConvTranspose2d", (4, 3), (2, 6, 5, 5)), ("LazyConvTranspose3d", (2, 2), (1, 2, 3, 3, 3)),
    ("LazyBatchNorm1d", (), (4, 3)), ("LazyBatchNorm2d", (), (2, 3, 4, 4)), ("LazyBatchNorm3d", (), (2, 3, 2, 2, 2)),
    ("LazyInstanceNorm1d", (), (2, 3, 4)), ("LazyInstanceNorm2d", (), (2, 3, 4, 4)),
    ("LazyInstanceNorm3d", (), (2, 3, 2, 2, 2)),
]


@pytest.mark.parametrize("name, args, shape", LAZY)
def test_lazy_layer_becomes_the_eager_one_as_torch(name, args, shape):
    ours, theirs = getattr(enn, name)(*args), getattr(tnn, name)(*args)
    assert repr(ours) == repr(theirs)
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    theirs_out = theirs(torch.tensor(x))
    # the same weights in both, so that the outputs can be compared
    ours_out = ours(ember.tensor(x))
    assert type(ours).__name__ == type(theirs).__name__
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for key, value in theirs.state_dict().items():
        assert tuple(ours.state_dict()[key].shape) == tuple(value.shape), key
    ours.load_state_dict({k: ember.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    theirs_again, ours_again = theirs(torch.tensor(x)), ours(ember.tensor(x))
    assert tuple(ours_out.shape) == tuple(theirs_out.shape)
    np.testing.assert_allclose(ours_again.detach().numpy(), theirs_again.detach().numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name, args, shape", [LAZY[2], LAZY[4], LAZY[7]])
def test_lazy_layer_loads_a_state_dict_before_its_first_call(name, args, shape):
    theirs = getattr(tnn, name)(*args)
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    theirs(torch.tensor(x))  # (sizes torch's layer: its state then has the eager layer's shapes)
    state = theirs.state_dict()
    ours = getattr(enn, name)(*args)
    ours.load_state_dict({k: ember.tensor(v.numpy()) for k, v in state.items()})
    assert {k: tuple(v.shape) for k, v in ours.state_dict().items()} == {k: tuple(v.shape) for k, v in state.items()}
    theirs.eval(), ours.eval()
    np.testing.assert_allclose(ours(ember.tensor(x)).detach().numpy(), theirs(torch.tensor(x)).detach().numpy(),
                               rtol=1e-5, atol=1e-6)
    assert repr(ours) == repr(theirs)
    if "BatchNorm" in name:  # (the loaded count, not the eager layer's fresh 0)
        assert ours.num_batches_tracked.item() == 1


def test_lazy_conv_initialises_as_its_eager_layer():
    ember.manual_seed(3)
    lazy = enn.LazyConv2d(4, 3, groups=1)
    lazy(ember.ones(1, 3, 5, 5))
    ember.manual_seed(3)
    eager = enn.Conv2d(3, 4, 3)
    np.testing.assert_array_equal(lazy.weight.detach().numpy(), eager.weight.detach().numpy())
    np.testing.assert_array_equal(lazy.bias.detach().numpy(), eager.bias.detach().numpy())


def test_lazy_layer_keeps_its_hooks_and_mode():
    seen = []
    norm = enn.LazyBatchNorm1d()
    norm.register_forward_hook(lambda module, args, output: seen.append(output.shape))
    norm.eval()
    norm(ember.ones(2, 3))
    assert not norm.training and norm.num_batches_tracked.item() == 0
    assert seen == [(2, 3)]
    assert isinstance(norm, enn.BatchNorm1d)


def test_lazy_layer_errors():
    with pytest.raises(RuntimeError, match=r"Expected 3D \(unbatched\) or 4D \(batched\) input to LazyConv2d"):
        enn.LazyConv2d(4, 3)(ember.ones(3, 5))
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        enn.LazyConv2d(4, 3, groups=2)(ember.ones(1, 3, 5, 5))
    with pytest.raises(ValueError, match="expected 4D input"):
        enn.LazyBatchNorm2d()(ember.ones(3, 5))


def test_lazy_instance_norm_takes_channels_of_an_unbatched_input():
    norm = enn.LazyInstanceNorm1d()
    norm(ember.randn(3, 4))  # [C, L]: torch 2.13 takes 4 from dim 1 here and then refuses the input
    assert norm.num_features == 3


def test_buffer_registers_on_assignment():
    class Counter(enn.Module):
        def __init__(self):
            super().__init__()
            self.count = enn.Buffer(ember.zeros(1))
            self.scratch = enn.Buffer(ember.zeros(3), persistent=False)

    class TorchCounter(tnn.Module):
        def __init__(self):
            super().__init__()
            self.count = tnn.Buffer(torch.zeros(1))
            self.scratch = tnn.Buffer(torch.zeros(3), persistent=False)

    ours, theirs = Counter(), TorchCounter()
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["count"]
    assert [n for n, _ in ours.named_buffers()] == [n for n, _ in theirs.named_buffers()]
    assert type(ours.count) is ember.Tensor
    ours.count = enn.Buffer(ember.ones(2), persistent=False)
    theirs.count = tnn.Buffer(torch.ones(2), persistent=False)
    assert list(ours.state_dict()) == list(theirs.state_dict()) == []


def test_buffer_shares_memory_and_refuses_non_tensors():
    data = ember.zeros(2)
    marked = enn.Buffer(data)
    marked[0] = 5.0
    assert data[0].item() == 5.0
    assert enn.Buffer().shape == (0,)
    assert enn.Buffer(ember.ones(2, requires_grad=True)).requires_grad
    with pytest.raises(TypeError, match="Buffer\\(\\): data must be a Tensor, not list"):
        enn.Buffer([1, 2])
