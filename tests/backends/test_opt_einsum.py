"""backends.opt_einsum: the flags and their checks as torch's (ember plans einsum's order itself: available)."""
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
