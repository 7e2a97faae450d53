"""ember.xpu, ember.mps and ember.mtia against torch's modules on a machine without those devices: the same
answers to the probes, the same error types (and substance) from the calls that need a device."""
import importlib

import pytest
import torch

import ember

STATE = object()  # stands for a generator state tensor of the library under test

CALLS = {
    "xpu": [
        ("is_available",), ("device_count",), ("is_initialized",), ("is_bf16_supported",), ("is_tf32_supported",),
        ("get_arch_list",), ("get_gencode_flags",), ("manual_seed", 0), ("manual_seed_all", 0), ("seed",),
        ("seed_all",), ("empty_cache",), ("memory_allocated",), ("max_memory_allocated",), ("memory_reserved",),
        ("max_memory_reserved",), ("memory_stats",), ("memory_snapshot",), ("get_rng_state_all",),
        ("set_rng_state", STATE), ("set_rng_state_all", []), ("synchronize",), ("current_device",), ("init",),
        ("initial_seed",), ("get_rng_state",), ("set_device", 0), ("get_device_name",),
        ("get_device_properties", 0), ("get_device_capability",), ("current_stream",), ("mem_get_info",),
        ("set_per_process_memory_fraction", 0.5), ("get_per_process_memory_fraction",),
        ("can_device_access_peer", 0, 1),
    ],
    "mps": [
        ("is_available",), ("device_count",), ("manual_seed", 0), ("synchronize",), ("seed",), ("empty_cache",),
        ("get_rng_state",), ("set_rng_state", STATE), ("current_allocated_memory",), ("driver_allocated_memory",),
        ("recommended_max_memory",), ("set_per_process_memory_fraction", 0.5),
    ],
    "mtia": [
        ("is_available",), ("device_count",), ("manual_seed", 0), ("manual_seed_all", 0), ("seed",), ("seed_all",),
        ("is_initialized",), ("memory_allocated",), ("max_memory_allocated",), ("is_bf16_supported",),
        ("reset_peak_memory_stats",), ("memory_stats",), ("get_rng_state_all",), ("set_rng_state_all", []),
        ("synchronize",), ("current_device",), ("set_rng_state", STATE), ("get_device_capability",),
        ("current_stream",), ("default_stream",), ("empty_cache",), ("set_device", 0), ("get_device_properties", 0),
        ("init",), ("initial_seed",), ("get_rng_state",),
    ],
}


def _outcome(lib, device: str, name: str, args: tuple):
    arguments = [lib.zeros(4, dtype=lib.uint8) if arg is STATE else arg for arg in args]
    try:
        return "returned", getattr(getattr(lib, device), name)(*arguments)
    except (AssertionError, RuntimeError) as error:
        return type(error), str(error)


@pytest.mark.parametrize("device,call", [(device, call) for device, calls in CALLS.items() for call in calls],
                         ids=lambda value: value if isinstance(value, str) else value[0])
def test_call_answers_as_torch_without_the_device(device, call):
    name, *args = call
    expected_kind, expected = _outcome(torch, device, name, tuple(args))
    kind, got = _outcome(ember, device, name, tuple(args))
    assert kind == expected_kind, (got, expected)
    if kind == "returned":
        assert got == expected and type(got) is type(expected)
    elif kind is AssertionError:  # "Torch not compiled with XPU enabled"
        assert f"not compiled with {device.upper()} enabled" in expected and got.startswith(f"ember.{device}.{name}")
        assert f"not compiled with {device.upper()} enabled" in got
    else:  # "Cannot execute emptyCache() without MPS backend."
        assert got.startswith(expected.rstrip("."))


@pytest.mark.parametrize("device", CALLS)
def test_every_tested_name_is_in_all_and_torch_has_it(device):
    module = importlib.import_module(f"ember.{device}")
    names = {call[0] for call in CALLS[device]}
    assert set(module.__all__) - names <= {"reset_peak_memory_stats"}
    assert all(hasattr(getattr(torch, device), name) for name in names)


def test_xpu_reset_peak_memory_stats_fails_as_the_other_device_calls():
    # torch fails here too, though with an AttributeError from its missing C binding
    with pytest.raises(AttributeError):
        torch.xpu.reset_peak_memory_stats()
    with pytest.raises(AssertionError, match="not compiled with XPU enabled"):
        ember.xpu.reset_peak_memory_stats()


@pytest.mark.parametrize("device", CALLS)
def test_seeding_an_absent_device_leaves_the_cpu_stream_alone_as_in_torch(device):
    for lib in (torch, ember):
        lib.manual_seed(3)
        first = lib.rand(2).tolist()
        lib.manual_seed(3)
        getattr(lib, device).manual_seed(7)
        assert lib.rand(2).tolist() == first


@pytest.mark.parametrize("device", CALLS)
def test_reached_as_attributes_and_through_get_device_module(device):
    module = importlib.import_module(f"ember.{device}")
    assert getattr(ember, device) is module
    assert ember.get_device_module(device) is module
    assert torch.get_device_module(device) is getattr(torch, device)


def test_the_portable_idiom_picks_the_cpu():
    for device in CALLS:
        chosen = device if getattr(ember, device).is_available() else "cpu"
        assert ember.ones(1).to(chosen).device == ember.device("cpu")
