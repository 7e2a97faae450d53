"""backends.opt_einsum: the flags and their checks as torch's (ember plans einsum's order itself: available)."""
import numpy as np
import pytest
import torch

import ember

flags_module = ember.backends.opt_einsum


def test_available_enabled_and_auto_by_default():
    assert flags_module.is_available() is True
    assert (flags_module.enabled, flags_module.strategy) == (True, "auto")
    assert flags_module.get_opt_einsum() is torch.backends.opt_einsum.get_opt_einsum()  # the package or None


def test_strategy_is_checked_when_assigned_as_torch_checks_it():
    with pytest.raises(ValueError, match=r"must be one of the following: \[auto, greedy, optimal\] but is fast"):
        flags_module.strategy = "fast"
    assert flags_module.strategy == "auto"
    flags_module.strategy = "greedy"
    assert flags_module.strategy == "greedy"
    flags_module.strategy = "auto"


def test_strategy_needs_enabled():
    with flags_module.flags(enabled=False):
        assert flags_module.enabled is False
        with pytest.raises(ValueError, match="not enabled"):
            flags_module.strategy = "optimal"
    assert (flags_module.enabled, flags_module.strategy) == (True, "auto")


def test_set_flags_returns_the_flags_before():
    before = flags_module.set_flags(True, "optimal")
    assert before == (True, "auto") and flags_module.strategy == "optimal"
    flags_module.set_flags(*before)
    assert flags_module.strategy == "auto"


def test_flags_restored_after_an_error_in_the_block():
    with pytest.raises(KeyError):
        with flags_module.flags(strategy="greedy"):
            raise KeyError
    assert flags_module.strategy == "auto"


def test_listed_among_the_backends_as_in_torch():
    assert "opt_einsum" in ember.backends.__all__
    assert hasattr(torch.backends, "opt_einsum")


def _spy_on_orders(monkeypatch) -> list:
    """A list that gets, for each einsum planned from now on, the pairs of operands it contracts, in order."""
    from ember._ops import einsum as einsum_module

    found = []
    planned = einsum_module._pairs

    def spy(terms, output, sizes):
        pairs = planned(terms, output, sizes)
        found.append(pairs)
        return pairs
    monkeypatch.setattr(einsum_module, "_pairs", spy)
    monkeypatch.setattr(einsum_module, "_PLANS", {})  # plans made before would be replayed unseen
    return found


def test_the_flags_steer_the_order_of_three_operands_and_results_stay_torchs(monkeypatch):


    # (2x30)(30x40)(40x2): right to left costs 2520 products, left to right 2560; the optimal order is right first
    arrays = [np.random.default_rng(0).standard_normal(shape) for shape in ((2, 30), (30, 40), (40, 2))]
    want = torch.einsum("ij,jk,kl->il", *[torch.tensor(a) for a in arrays]).numpy()
    tensors = [ember.tensor(a) for a in arrays]
    found, orders = _spy_on_orders(monkeypatch), {}
    for setting in ({}, {"enabled": False}, {"strategy": "optimal"}, {"strategy": "greedy"}):
        with flags_module.flags(**setting):
            got = ember.einsum("ij,jk,kl->il", *tensors)
            ember.einsum("ij,jk,kl->il", *tensors)  # planned once per setting: the second call replays the plan
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
        orders[str(setting)] = found[:]
        found.clear()
    assert orders["{'enabled': False}"] == [[(0, 1), (2, 3)]]  # left to right, as torch without opt_einsum
    assert orders["{'strategy': 'optimal'}"] == orders["{}"] == [[(1, 2), (0, 3)]]  # auto: optimal for three
