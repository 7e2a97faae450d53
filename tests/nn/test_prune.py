"""nn.utils.prune against torch.nn.utils.prune: masks, reparametrization, iterative and global pruning."""
from __future__ import annotations

import numpy as np
import pytest

import ember
from ember.nn.utils import prune as eprune

torch = pytest.importorskip("torch")
import torch.nn.utils.prune as tprune  # noqa: E402 (a submodule torch does not import by itself)


def _twins(make):
    """The same layer in both libraries, with distinct-magnitude weights (no ties for the order to break)."""
    ours, theirs = make(ember.nn), make(torch.nn)
    for name, p in theirs.named_parameters():
        values = np.random.default_rng(len(name)).permutation(p.numel()).reshape(p.shape) * 0.1 - p.numel() * 0.04
        with torch.no_grad():
            p.copy_(torch.tensor(values, dtype=p.dtype))
        with ember.no_grad():
            getattr(ours, name).copy_(ember.tensor(values, dtype=ember.float32))
    return ours, theirs


def _same_state(ours, theirs):
    assert sorted(ours.state_dict()) == sorted(theirs.state_dict())
    for key, value in theirs.state_dict().items():
        np.testing.assert_allclose(ours.state_dict()[key].numpy(), value.numpy(), err_msg=key)


def _linear(nn):
    return nn.Linear(5, 4)


def _conv(nn):
    return nn.Conv2d(3, 6, 2)


@pytest.mark.parametrize("amount", [0, 3, 0.35, 1.0])
def test_l1_unstructured_as_torch(amount):
    ours, theirs = _twins(_linear)
    eprune.l1_unstructured(ours, "weight", amount)
    tprune.l1_unstructured(theirs, "weight", amount)
    _same_state(ours, theirs)
    x = np.random.default_rng(0).standard_normal((2, 5)).astype(np.float32)
    ours(ember.tensor(x)).sum().backward()
    theirs(torch.tensor(x)).sum().backward()
    np.testing.assert_allclose(ours.weight_orig.grad.numpy(), theirs.weight_orig.grad.numpy(), rtol=1e-6)
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]


@pytest.mark.parametrize("n, dim, amount", [(2, 0, 2), (1, 1, 0.34), (3, -1, 1), (float("inf"), 0, 0.5)])
def test_ln_structured_as_torch(n, dim, amount):
    ours, theirs = _twins(_conv)
    eprune.ln_structured(ours, "weight", amount, n, dim)
    tprune.ln_structured(theirs, "weight", amount, n, dim)
    _same_state(ours, theirs)


def test_iterative_pruning_prunes_among_what_is_kept():
    ours, theirs = _twins(_conv)
    for lib, layer in ((eprune, ours), (tprune, theirs)):
        lib.l1_unstructured(layer, "weight", 0.2)
        lib.ln_structured(layer, "weight", 2, 2, 0)
        lib.l1_unstructured(layer, "weight", 5)
        lib.l1_unstructured(layer, "bias", 0.5)
    _same_state(ours, theirs)
    hooks = [h for h in ours._forward_pre_hooks.values() if isinstance(h, eprune.PruningContainer)]
    assert len(hooks) == 1 and [type(m).__name__ for m in hooks[0]] == ["L1Unstructured", "LnStructured",
                                                                          "L1Unstructured"]


def test_global_unstructured_as_torch():
    (ours_a, theirs_a), (ours_b, theirs_b) = _twins(_linear), _twins(_conv)
    for lib, a, b in ((eprune, ours_a, ours_b), (tprune, theirs_a, theirs_b)):
        lib.global_unstructured([(a, "weight"), (b, "weight"), (b, "bias")], lib.L1Unstructured, amount=0.4)
    _same_state(ours_a, theirs_a)
    _same_state(ours_b, theirs_b)


def test_importance_scores_custom_mask_identity_and_remove():
    ours, theirs = _twins(_linear)
    scores = np.random.default_rng(4).permutation(20).reshape(4, 5).astype(np.float32)
    eprune.l1_unstructured(ours, "weight", 6, importance_scores=ember.tensor(scores))
    tprune.l1_unstructured(theirs, "weight", 6, importance_scores=torch.tensor(scores))
    mask = (np.arange(4) % 2).astype(np.float32)
    eprune.custom_from_mask(ours, "bias", ember.tensor(mask))
    tprune.custom_from_mask(theirs, "bias", torch.tensor(mask))
    _same_state(ours, theirs)
    assert eprune.is_pruned(ember.nn.Sequential(ours)) and tprune.is_pruned(torch.nn.Sequential(theirs))
    for lib, layer in ((eprune, ours), (tprune, theirs)):
        lib.remove(layer, "weight")
        lib.remove(layer, "bias")
    _same_state(ours, theirs)
    assert not eprune.is_pruned(ours)
    assert isinstance(ours.weight, ember.nn.Parameter)
    other = ember.nn.Linear(2, 2)
    eprune.identity(other, "weight")
    np.testing.assert_array_equal(other.weight_mask.numpy(), np.ones((2, 2)))


def test_random_methods_prune_the_right_amounts():
    ember.manual_seed(0)
    layer = ember.nn.Conv2d(2, 8, 3)
    eprune.random_unstructured(layer, "weight", 0.25)
    assert int((layer.weight_mask == 0).sum()) == round(0.25 * layer.weight.numel())
    eprune.random_structured(layer, "weight", 3, dim=0)
    channels_alive = (layer.weight_mask.sum(dim=(1, 2, 3)) != 0).sum()
    assert int(channels_alive) == 5
    assert (layer.weight.detach() == layer.weight_orig.detach() * layer.weight_mask).all()


def test_errors_as_torch():
    for bad, kind in (("0.3", TypeError), (-1, ValueError), (1.5, ValueError)):
        with pytest.raises(kind) as theirs:
            tprune.l1_unstructured(torch.nn.Linear(2, 2), "weight", bad)
        with pytest.raises(kind, match=str(theirs.value).split(".")[0][:30]):
            eprune.l1_unstructured(ember.nn.Linear(2, 2), "weight", bad)
    with pytest.raises(ValueError, match="should be smaller than the number of parameters to prune=4"):
        eprune.l1_unstructured(ember.nn.Linear(2, 2), "weight", 5)
    with pytest.raises(ValueError, match="Structured pruning can only be applied to multidimensional tensors"):
        eprune.ln_structured(ember.nn.Linear(2, 2), "bias", 1, 2, 0)
    with pytest.raises(IndexError, match="Invalid index 3 for tensor of size"):
        eprune.ln_structured(ember.nn.Linear(2, 2), "weight", 1, 2, 3)
    with pytest.raises(ValueError, match="has to be pruned before pruning can be removed"):
        eprune.remove(ember.nn.Linear(2, 2), "weight")
    ours, theirs = ember.nn.Linear(2, 2), torch.nn.Linear(2, 2)
    for lib, layer in ((eprune, ours), (tprune, theirs)):
        with pytest.raises(ValueError):
            lib.l1_unstructured(layer, "weight", 5)
    # a failed pruning leaves the parameter in place (last, as torch re-registers it) and no mask or hook behind
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert not list(ours.buffers()) and not ours._forward_pre_hooks
