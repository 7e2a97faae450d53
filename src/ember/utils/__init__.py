"""Utilities: hooks, data loading and C++ extensions."""
import importlib


def __getattr__(name: str):
    # ember.utils.data is loaded on first use: ember's own import needs only hooks, and stays fast
    if name == "data":
        return importlib.import_module("ember.utils.data")
    raise AttributeError(f"module 'ember.utils' has no attribute '{name}'")
