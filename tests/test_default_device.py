"""The default device: torch's calls work, and asking for a device ember does not have says so at once."""
import pytest
import torch

import ember


def test_default_device_is_the_cpu_as_in_a_cpu_build_of_torch():
    assert str(ember.get_default_device()) == str(torch.get_default_device()) == "cpu"
    ember.set_default_device("cpu")
    ember.set_default_device(None)
    ember.set_default_device(ember.device("cpu"))
    with ember.device("cpu") as chosen:
        assert chosen == "cpu" and ember.zeros(1).device == chosen


def test_another_device_is_refused_with_the_portable_idiom():
    with pytest.raises(RuntimeError, match="ember runs on the CPU only; device 'cuda' is not available.*is_available"):
        ember.set_default_device("cuda")
