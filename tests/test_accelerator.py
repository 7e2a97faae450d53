"""ember.accelerator answers as torch's CPU build does: no accelerator, and calls that need one raise."""
import pytest
import torch

import ember

NEEDS_ONE = ["current_device_index", "set_device_index", "current_stream", "synchronize", "empty_cache",
             "empty_host_cache", "get_device_capability", "get_memory_info", "max_memory_allocated",
             "max_memory_reserved", "memory_allocated", "memory_reserved", "memory_stats",
             "reset_accumulated_memory_stats", "reset_peak_memory_stats"]


def test_no_accelerator_as_in_torch():
    for name in ("is_available", "current_accelerator", "device_count"):
        assert getattr(ember.accelerator, name)() == getattr(torch.accelerator, name)()
    with ember.accelerator.device_index(None):
        pass
    device = ember.accelerator.current_accelerator().type if ember.accelerator.is_available() else "cpu"
    assert ember.zeros(1, device=device).device == "cpu"


@pytest.mark.parametrize("name", NEEDS_ONE)
def test_calls_that_need_an_accelerator_raise_as_torch(name):
    args = (0,) if name == "set_device_index" else ()
    with pytest.raises(RuntimeError, match="Cannot access accelerator device when none is available"):
        getattr(torch.accelerator, name)(*args)
    with pytest.raises(RuntimeError, match=f"ember.accelerator.{name}: Cannot access accelerator device"):
        getattr(ember.accelerator, name)(*args)


def test_every_public_name_of_torch_accelerator_exists():
    theirs = {n for n in dir(torch.accelerator) if not n.startswith("_") and callable(getattr(torch.accelerator, n))}
    theirs -= {"Any", "Graph", "deprecated", "torch", "memory", "graphs", "cache"}
    assert theirs <= set(dir(ember.accelerator))
