"""Utilities: hooks, data loading and C++ extensions."""
