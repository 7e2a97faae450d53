"""Switches for gradient recording: no_grad, enable_grad, set_grad_enabled, inference_mode.

Each works as a context manager and as a decorator:

>>> import ember
>>> x = ember.ones(2, requires_grad=True)
>>> with ember.no_grad():
...     (x * 2).requires_grad
False
>>> @ember.no_grad()
... def double(t):
...     return t * 2
>>> double(x).requires_grad
False
"""
from __future__ import annotations

import functools
import inspect
import warnings


class _GradState:
    """The one switch that Function.apply reads on every call."""

    __slots__ = ("enabled", "inference")

    def __init__(self):
        self.enabled = True
        self.inference = False


state = _GradState()


def is_grad_enabled() -> bool:
    return state.enabled


def is_inference_mode_enabled() -> bool:
    return state.inference


class _GradModeContext:
    """Base for the context managers below: set a mode on enter, restore it on exit."""

    _mode = True
    prev = False  # the setting found on entering (as torch's attribute)

    def __enter__(self) -> None:
        self.prev = state.enabled
        state.enabled = self._mode

    def __exit__(self, *exc) -> None:
        state.enabled = self.prev

    def __call__(self, func):
        if inspect.isclass(func):
            warnings.warn(
                f"{type(self).__name__} decorating the class {func.__name__}: decorating a class is deprecated (it "
                "only puts the construction of its instances in the mode); decorate its __init__ instead.",
                FutureWarning,
                stacklevel=2,
            )
            cls = func
            func = lambda *args, **kwargs: cls(*args, **kwargs)  # noqa: E731  (as torch: construction in the mode)
        if inspect.isgeneratorfunction(func):
            return self._decorate_generator(func)

        @functools.wraps(func)
        def decorated(*args, **kwargs):
            with self._fresh():
                return func(*args, **kwargs)

        return decorated

    def _decorate_generator(self, func):
        """The mode holds each time the generator runs, not only when it is created (as torch)."""

        @functools.wraps(func)
        def decorated(*args, **kwargs):
            generator = func(*args, **kwargs)
            sent, error = None, None
            while True:
                try:
                    with self._fresh():
                        item = generator.send(sent) if error is None else generator.throw(error)
                except StopIteration as stop:
                    return stop.value
                sent, error = None, None
                try:
                    sent = yield item
                except GeneratorExit:
                    with self._fresh():
                        generator.close()
                    raise
                except BaseException as raised:  # thrown into us: pass it on to the generator
                    error = raised

        return decorated

    def _fresh(self):
        """A new context with the same setting, so a decorator is reentrant."""
        return type(self)()

    def clone(self):
        """A new context manager with the same setting (as torch's)."""
        return self._fresh()


class _BareDecoratorContext(_GradModeContext):
    """Also usable without parentheses: ``@ember.no_grad`` as well as ``@ember.no_grad()``."""

    def __new__(cls, func=None):
        if func is None:
            return super().__new__(cls)
        return cls()(func)


class no_grad(_BareDecoratorContext):
    """Disable gradient recording inside the block."""

    _mode = False


class enable_grad(_BareDecoratorContext):
    """Enable gradient recording inside the block, even within ``no_grad``."""

    _mode = True


class set_grad_enabled(_GradModeContext):
    """Set gradient recording on or off; takes effect immediately, like PyTorch's.

    >>> _ = ember.set_grad_enabled(False); ember.is_grad_enabled()
    False
    >>> _ = ember.set_grad_enabled(True); ember.is_grad_enabled()
    True
    """

    def __init__(self, mode: bool):
        if type(mode) is not bool:
            raise TypeError(
                f"set_grad_enabled(): argument 'enabled' (position 1) must be bool, not {type(mode).__name__}; "
                "pass True or False"
            )
        self.prev = state.enabled
        self._mode = self.mode = mode
        state.enabled = mode

    def __enter__(self) -> None:
        state.enabled = self._mode  # already switched in __init__; again, so the object can be entered anew

    def __call__(self, func):
        state.enabled = self.prev  # used as a decorator: undo the eager switch
        return super().__call__(func)

    def _fresh(self):
        return set_grad_enabled(self._mode)

    def __repr__(self) -> str:
        return f"{type(self).__module__}.{type(self).__name__}(mode={self.mode})"


class inference_mode(_GradModeContext):
    """Like ``no_grad``; ``inference_mode(False)`` turns it off again (and gradients on) inside.

    ember has no separate inference tensors: only the flag and the grad mode change.
    """

    def __new__(cls, mode=True):
        if isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)  # used as a bare decorator: ``@ember.inference_mode``

    def __init__(self, mode: bool = True):
        self.mode = mode

    def __enter__(self) -> None:
        self._prev = state.enabled, state.inference
        on = bool(self.mode)
        state.inference = on
        state.enabled = not on  # as torch: inference_mode(False) turns gradients on, even within no_grad

    def __exit__(self, *exc) -> None:
        state.enabled, state.inference = self._prev

    def _fresh(self):
        return inference_mode(self.mode)
