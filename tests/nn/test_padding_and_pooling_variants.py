"""Padding layers, pooling in 1, 2 and 3 dims (adaptive max, Lp, max-unpooling), channel shuffle and
gumbel-softmax, against torch: values, gradients, reprs and errors."""
from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.nn as enn
import ember.nn.functional as F

torch = pytest.importorskip("torch")
tnn, TF = torch.nn, torch.nn.functional

PADDING_LAYERS = [f"{kind}Pad{n}d" for kind in ("Zero", "Constant", "Reflection", "Replication", "Circular")
                  for n in (1, 2, 3)]


def _arguments(name: str, padding):
    return (padding, 2.5) if name.startswith("Constant") else (padding,)


def _compare(ember_call, torch_call, x: np.ndarray, atol: float = 1e-12):
    """Values and input gradients of one weighted sum of each library's call on ``x`` agree."""
    ex, tx = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    eo, to = ember_call(ex), torch_call(tx)
    weights = np.random.default_rng(1).standard_normal(tuple(to.shape))
    (eo * ember.tensor(weights)).sum().backward()
    (to * torch.tensor(weights)).sum().backward()
    np.testing.assert_allclose(eo.detach().numpy(), to.detach().numpy(), atol=atol)
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), atol=atol)


@pytest.mark.parametrize("name", PADDING_LAYERS)
@pytest.mark.parametrize("padding", [2, "sides"])
@pytest.mark.parametrize("batched", [True, False])
def test_padding_layers_match_torch(name, padding, batched):
    n = int(name[-2])
    padding = tuple([1, 2, 0, 3, 2, 1][:2 * n]) if padding == "sides" else padding
    shape = ((2,) if batched else ()) + (3,) + (4,) * n
    x = np.random.default_rng(n).standard_normal(shape)
    ours, theirs = getattr(enn, name)(*_arguments(name, padding)), getattr(tnn, name)(*_arguments(name, padding))
    assert repr(ours) == repr(theirs)
    assert ours.padding == theirs.padding
    _compare(ours, theirs, x)


def test_padding_layer_errors_name_the_problem():
    with pytest.raises(RuntimeError, match="padding size should be less than the corresponding input dimension"):
        enn.ReflectionPad1d(3)(ember.zeros(1, 2, 3))
    with pytest.raises(RuntimeError, match="wrapping around more than once"):
        enn.CircularPad1d(4)(ember.zeros(1, 2, 3))


@pytest.mark.parametrize("shape, pad, mode", [((2, 3), (1,), "constant"), ((2, 3), (1, 1, 1), "reflect"),
                                              ((2, 3), (1,) * 6, "constant"), ((1, 2, 3), (1,) * 8, "reflect"),
                                              ((1, 2, 3), (4, 4), "circular")])
def test_bad_padding_raises_torchs_runtime_error(shape, pad, mode):
    messages = []
    for lib in (torch, ember):
        with pytest.raises(RuntimeError) as error:
            lib.nn.functional.pad(lib.zeros(shape), pad, mode=mode)
        messages.append(str(error.value).lower())
    assert messages[0].rstrip(".") in messages[1] or "wrapping" in messages[1]


@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("output_size", [4, 1, "mixed"])
def test_adaptive_max_pool_every_dimension(n, output_size):
    sizes = (6, 7, 5)[:n]
    output = tuple([3, None, 2][:n]) if output_size == "mixed" else output_size
    x = np.random.default_rng(n).standard_normal((2, 3) + sizes)
    fn_e, fn_t = getattr(F, f"adaptive_max_pool{n}d"), getattr(TF, f"adaptive_max_pool{n}d")
    _compare(lambda t: fn_e(t, output), lambda t: fn_t(t, output), x)
    ev, ei = fn_e(ember.tensor(x), output, return_indices=True)
    tv, ti = fn_t(torch.tensor(x), output, return_indices=True)
    np.testing.assert_array_equal(ei.numpy(), ti.numpy())
    with_indices = getattr(F, f"adaptive_max_pool{n}d_with_indices")(ember.tensor(x), output)
    np.testing.assert_array_equal(with_indices[1].numpy(), ti.numpy())
    layer_e, layer_t = getattr(enn, f"AdaptiveMaxPool{n}d")(output), getattr(tnn, f"AdaptiveMaxPool{n}d")(output)
    assert repr(layer_e) == repr(layer_t)
    np.testing.assert_array_equal(layer_e(ember.tensor(x[0])).numpy(), layer_t(torch.tensor(x[0])).numpy())


@pytest.mark.parametrize("n", [1, 2, 3])
def test_max_unpool_every_dimension(n):
    x = np.random.default_rng(n).standard_normal((2, 3) + (6,) * n)
    tv, ti = getattr(TF, f"max_pool{n}d")(torch.tensor(x), 2, return_indices=True)
    ev, ei = getattr(F, f"max_pool{n}d_with_indices")(ember.tensor(x), 2)
    np.testing.assert_array_equal(ei.numpy(), ti.numpy())
    unpool_e, unpool_t = getattr(enn, f"MaxUnpool{n}d")(2), getattr(tnn, f"MaxUnpool{n}d")(2)
    assert repr(unpool_e) == repr(unpool_t)
    _compare(lambda t: unpool_e(t, ei), lambda t: unpool_t(t, ti), tv.numpy())
    bigger = [7] * n
    np.testing.assert_array_equal(unpool_e(ev, ei, output_size=bigger).numpy(),
                                  unpool_t(tv, ti, output_size=bigger).numpy())


def test_max_unpool3d_bad_index_names_the_volume():
    values, indices = ember.ones(1, 1, 1, 1, 1), ember.tensor([[[[[9]]]]])
    with pytest.raises(RuntimeError, match=r"max_unpool3d: Found an invalid max index: 9 \(output volumes are of "
                                           r"size 2x2x2\)"):
        F.max_unpool3d(values, indices, 2)


@pytest.mark.parametrize("n, norm_type", [(1, 2.0), (1, 3.0), (3, 2.0), (3, 1.5)])
def test_lp_pool_every_dimension(n, norm_type):
    x = np.abs(np.random.default_rng(n).standard_normal((2, 3) + (6,) * n)) + 0.1
    layer_e, layer_t = getattr(enn, f"LPPool{n}d")(norm_type, 3, 2), getattr(tnn, f"LPPool{n}d")(norm_type, 3, 2)
    assert repr(layer_e) == repr(layer_t)
    _compare(layer_e, layer_t, x, atol=1e-10)


def test_pooling_variants_gradgradcheck():
    x = ember.tensor(np.random.default_rng(4).standard_normal((1, 2, 4, 3, 3)), requires_grad=True)
    assert ember.autograd.gradgradcheck(lambda t: F.adaptive_max_pool3d(t, 2), (x,))
    assert ember.autograd.gradgradcheck(lambda t: F.lp_pool3d(t.abs() + 1, 2.0, 2), (x,))
    y = ember.tensor(np.random.default_rng(5).standard_normal((1, 2, 5)), requires_grad=True)
    assert ember.autograd.gradgradcheck(lambda t: F.adaptive_max_pool1d(t, 2), (y,))


def test_channel_shuffle_matches_torch():
    x = np.random.default_rng(0).standard_normal((2, 6, 3, 2))
    layer_e, layer_t = enn.ChannelShuffle(3), tnn.ChannelShuffle(3)
    assert repr(layer_e) == repr(layer_t)
    _compare(layer_e, layer_t, x)
    np.testing.assert_array_equal(ember.channel_shuffle(ember.tensor(x), 2).numpy(),
                                  torch.channel_shuffle(torch.tensor(x), 2).numpy())
    np.testing.assert_array_equal(ember.native_channel_shuffle(ember.tensor(x), 2).numpy(),
                                  torch.native_channel_shuffle(torch.tensor(x), 2).numpy())


@pytest.mark.parametrize("shape, groups, message", [
    ((1, 5, 2), 2, "Number of channels must be divisible by groups. Got 5 channels and 2 groups."),
    ((1, 4), 2, r"channel_shuffle expects input with > 2 dims, but got input with sizes \[1, 4\]"),
    ((1, 4, 2), 0, "Number of groups to divide channels in must be positive. Value of groups:0"),
])
def test_channel_shuffle_errors_as_torch(shape, groups, message):
    with pytest.raises(RuntimeError, match=message):
        torch.channel_shuffle(torch.zeros(shape), groups)
    with pytest.raises(RuntimeError, match=message):
        F.channel_shuffle(ember.zeros(shape), groups)


def test_gumbel_softmax_soft_and_hard_samples():
    ember.manual_seed(0)
    logits = ember.randn(5, 4, requires_grad=True)
    soft = F.gumbel_softmax(logits, tau=0.5)
    np.testing.assert_allclose(soft.sum(-1).detach().numpy(), np.ones(5), rtol=1e-6)
    assert (soft.detach().numpy() > 0).all()
    ember.manual_seed(1)
    hard = F.gumbel_softmax(logits, hard=True, dim=0)
    assert set(np.unique(hard.detach().numpy())) <= {0.0, 1.0}
    np.testing.assert_array_equal(hard.detach().numpy().sum(0), np.ones(4))
    ember.manual_seed(1)
    same_noise_soft = F.gumbel_softmax(logits, hard=False, dim=0)
    weights = ember.randn(5, 4)
    hard_grad, = ember.autograd.grad((hard * weights).sum(), logits)
    soft_grad, = ember.autograd.grad((same_noise_soft * weights).sum(), logits)
    np.testing.assert_allclose(hard_grad.numpy(), soft_grad.numpy(), rtol=1e-6)  # straight through


def test_gumbel_softmax_draws_follow_the_logits():
    ember.manual_seed(2)
    logits = ember.tensor([[0.0, 1.0, 2.0]]).expand(20000, 3)
    counts = F.gumbel_softmax(logits, hard=True).sum(0).numpy() / 20000
    np.testing.assert_allclose(counts, np.exp([0.0, 1.0, 2.0]) / np.exp([0.0, 1.0, 2.0]).sum(), atol=0.015)
    with pytest.warns(UserWarning, match="`eps` parameter is deprecated"):
        F.gumbel_softmax(logits[:2], eps=1e-5)


def test_pdist_is_the_top_level_function():
    assert F.pdist is ember.pdist
