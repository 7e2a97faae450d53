"""``ember.compile``: ember has no compiler; the call is accepted so programs run unchanged.

It checks its arguments as torch does (so a mistake shows here too) and returns the model or function
itself, which runs eagerly, op by op, exactly as before.

>>> import ember
>>> model = ember.nn.Linear(2, 1)
>>> ember.compile(model) is model
True
>>> @ember.compile(mode="max-autotune")
... def f(x):
...     return x * 2
>>> f(ember.ones(2))
tensor([2., 2.])
"""
from __future__ import annotations

from typing import Any, Callable

__all__ = ["compile"]

_MODES = ("default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")


def compile(model: Callable | None = None, *, fullgraph: bool = False, dynamic: bool | None = None,
            backend: str | Callable | None = None, mode: str | None = None, options: dict | None = None,
            name: str | None = None, disable: bool = False, **more: Any) -> Callable:
    """Return ``model`` unchanged, ready to run (or, without ``model``, a decorator that does so)."""
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be specified at the same time.")
    if mode is not None and mode not in _MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(_MODES)}")
    if model is None:
        return lambda fn: compile(fn, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                                  options=options, name=name, disable=disable)
    if not callable(model):
        raise TypeError(f"compile(): a callable function is expected, but {type(model)} is provided")
    return model
