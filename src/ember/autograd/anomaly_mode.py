"""Anomaly detection: find the forward call behind a failing or NaN-producing backward.

>>> import ember
>>> x = ember.tensor([0.], requires_grad=True)
>>> with ember.autograd.detect_anomaly():
...     y = (x.sqrt() * 0).sum()
...     y.backward()
Traceback (most recent call last):
RuntimeError: Function 'SqrtBackward0' returned nan values in its 0th output...
"""
from __future__ import annotations

import warnings


class _AnomalyState:
    __slots__ = ("enabled", "check_nan")

    def __init__(self):
        self.enabled = False
        self.check_nan = True


state = _AnomalyState()


def is_anomaly_enabled() -> bool:
    return state.enabled


def is_anomaly_check_nan_enabled() -> bool:
    return state.check_nan


class set_detect_anomaly:
    """Turn anomaly detection on or off; takes effect at once, and works as a context manager."""

    def __init__(self, mode: bool, check_nan: bool = True):
        self._prev = (state.enabled, state.check_nan)
        state.enabled = bool(mode)
        state.check_nan = bool(check_nan)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        state.enabled, state.check_nan = self._prev
        return False


class detect_anomaly:
    """Context manager and decorator: record forward stacks and raise on NaN gradients.

    Every recorded node keeps the stack of its forward call, so a backward error
    names the Function and shows where it was created. It slows ember down: use
    it to debug only.
    """

    def __init__(self, check_nan: bool = True):
        self.check_nan = check_nan
        warnings.warn(
            "Anomaly Detection has been enabled. This mode will increase the runtime and should only be "
            "enabled for debugging.",
            stacklevel=2,
        )

    def __enter__(self):
        self._prev = (state.enabled, state.check_nan)
        state.enabled = True
        state.check_nan = self.check_nan
        return self

    def __exit__(self, *exc):
        state.enabled, state.check_nan = self._prev
        return False

    def __call__(self, func):
        import functools

        @functools.wraps(func)
        def wrapped(*args, **kwargs):
            with self:
                return func(*args, **kwargs)

        return wrapped
