"""ember.backends.cpu.get_cpu_capability: torch's names for the CPU's vector instructions."""
import torch

import ember


def test_capability_is_torchs_on_this_machine():
    # both read the same CPU: torch from its own dispatch, ember from NumPy's
    assert ember.backends.cpu.get_cpu_capability() == torch.backends.cpu.get_cpu_capability()


def test_public_names_as_torch():
    assert ember.backends.cpu.__all__ == torch.backends.cpu.__all__
    assert "cpu" in ember.backends.__all__
