"""Utilities: hooks, data loading and C++ extensions."""
import importlib


def __getattr__(name: str):
    # ember.utils' submodules load on first use: ember's own import needs only hooks, and stays fast
    if name in ("data", "checkpoint", "safetensors", "cpp_extension", "benchmark", "serialization",
                "module_tracker", "flop_counter", "model_zoo", "weak", "_pytree", "collect_env"):
        return importlib.import_module(f"ember.utils.{name}")
    if name == "swap_tensors":
        return importlib.import_module("ember.utils.swap").swap_tensors
    raise AttributeError(f"module 'ember.utils' has no attribute '{name}'")
