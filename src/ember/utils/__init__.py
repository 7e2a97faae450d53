"""Utilities: hooks, data loading and C++ extensions."""
import importlib


def __getattr__(name: str):
    # ember.utils.data, .checkpoint and .safetensors are loaded on first use: ember's own import needs only hooks
    if name in ("data", "checkpoint", "safetensors"):
        return importlib.import_module(f"ember.utils.{name}")
    raise AttributeError(f"module 'ember.utils' has no attribute '{name}'")
