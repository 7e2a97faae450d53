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


def test_sdpa_kernel_as_torch_on_the_cpu():
    from ember.nn.attention import SDPBackend, sdpa_kernel
    import torch.nn.attention as torch_attention

    q = ember.randn(1, 2, 4, 8)
    with sdpa_kernel(SDPBackend.MATH):
        assert ember.nn.functional.scaled_dot_product_attention(q, q, q).shape == (1, 2, 4, 8)
    tq = torch.randn(1, 2, 3)
    with torch_attention.sdpa_kernel([torch_attention.SDPBackend.FLASH_ATTENTION]):
        with pytest.raises(RuntimeError, match="No available kernel"):
            torch.nn.functional.scaled_dot_product_attention(tq, tq, tq)
    with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.CUDNN_ATTENTION]):
        with pytest.raises(RuntimeError, match="No available kernel.*include SDPBackend.MATH"):
            ember.nn.functional.scaled_dot_product_attention(q, q, q)
    assert ember.nn.functional.scaled_dot_product_attention(q, q, q).shape == (1, 2, 4, 8)  # restored on exit
    theirs = torch_attention.SDPBackend.__members__.items()
    assert {b.name: int(b) for b in SDPBackend} == {name: int(b) for name, b in theirs}
    with pytest.raises(TypeError, match="backends must be an SDPBackend or a list of them, got str"):
        with sdpa_kernel("math"):
            pass
