"""``ember.jit``: TorchScript's decorators and entry points, accepted so that programs run unchanged.

ember has no TorchScript compiler: ``script`` and ``trace`` return what they are given, which runs
eagerly in Python; ``ignore``, ``unused`` and ``export`` mark functions and return them as they are.
Saving a scripted program is the one thing that cannot be done: save a ``state_dict`` instead.

>>> import ember
>>> model = ember.nn.Linear(3, 1)
>>> ember.jit.script(model) is model
True
>>> traced = ember.jit.trace(model, ember.ones(1, 3))
>>> traced(ember.ones(1, 3)).shape
ember.Size([1, 1])
"""
from __future__ import annotations

import warnings
from typing import Any, Callable

__all__ = ["annotate", "export", "ignore", "is_scripting", "is_tracing", "load", "save", "script", "trace", "unused"]


def script(obj: Any, optimize: None = None, _frames_up: int = 0, _rcb: Callable | None = None,
           example_inputs: Any = None) -> Any:
    """``obj`` itself (a Module, function or class): there is no TorchScript to compile it to."""
    _deprecated("script")
    if isinstance(obj, type) and obj.__module__ == "builtins":
        raise TypeError(f"{obj} is a built-in class")
    return obj


def trace(func: Callable, example_inputs: Any = None, optimize: None = None, check_trace: bool = True,
          check_inputs: Any = None, check_tolerance: float = 1e-05, strict: bool = True, **more: Any) -> Callable:
    """``func`` itself, which runs in Python on any input (a trace would fix the control flow it took)."""
    _deprecated("trace")
    if not callable(func):
        raise TypeError(f"trace(): expected a Module or a function, got {type(func).__name__}")
    return func


def _deprecated(name: str) -> None:
    warnings.warn(f"`ember.jit.{name}` is deprecated. Please switch to `ember.compile` (which ember accepts and "
                  "ignores), or simply call the model.", DeprecationWarning, stacklevel=3)


def trace_module(mod: Any, inputs: dict, **more: Any) -> Any:
    return mod


def _marker(attribute: str, doc: str) -> Callable:
    def mark(fn: Callable) -> Callable:
        try:
            setattr(fn, attribute, True)
        except (AttributeError, TypeError):
            pass  # a built-in or a bound method: nothing to mark, and nothing reads the mark anyway
        return fn

    mark.__doc__ = doc
    return mark


export = _marker("_ember_jit_export", "Mark a method to compile with its module: returned unchanged.")
unused = _marker("_ember_jit_unused", "Mark a function TorchScript would replace by a raise: returned unchanged.")


def ignore(drop: bool | Callable = False, **kwargs: Any) -> Callable:
    """Leave a function to Python (``@ignore`` or ``@ignore(drop=...)``): returned unchanged."""
    if callable(drop):
        return drop
    if drop:
        warnings.warn(
            "ignore(True) has been deprecated. TorchScript will now drop the function call on compilation. "
            "Use ember.jit.unused now.", FutureWarning, stacklevel=2,
        )
    return lambda fn: fn


def is_scripting() -> bool:
    """False: code never runs as TorchScript in ember."""
    return False


def is_tracing() -> bool:
    return False


def annotate(the_type: Any, the_value: Any) -> Any:
    return the_value


def save(m: Any, f: Any, _extra_files: Any = None) -> None:
    _no_torchscript("save")


def load(f: Any, map_location: Any = None, _extra_files: Any = None) -> None:
    _no_torchscript("load")


def _no_torchscript(name: str):
    raise RuntimeError(
        f"ember.jit.{name}(): ember has no TorchScript, so there is no compiled program to {name}; save and "
        "load the model's weights instead (model.state_dict() and model.load_state_dict(...)), and rebuild the "
        "model from its Python class"
    )
