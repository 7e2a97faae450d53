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


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """Switch anomaly detection (and its NaN check) on or off, as torch.set_anomaly_enabled."""
    for position, (name, value) in enumerate((("enabled", enabled), ("check_nan", check_nan)), 1):
        if type(value) is not bool:
            raise TypeError(
                f"set_anomaly_enabled(): argument '{name}' (position {position}) must be bool, not "
                f"{type(value).__name__}; pass True or False"
            )
    state.enabled = enabled
    state.check_nan = check_nan


class set_detect_anomaly:
    """Turn anomaly detection on or off; takes effect at once, and works as a context manager."""

    def __init__(self, mode: bool, check_nan: bool = True):
        self.prev = state.enabled
        self.prev_check_nan = state.check_nan
        set_anomaly_enabled(mode, check_nan)

    def __enter__(self) -> None:
        pass  # already switched in __init__

    def __exit__(self, *exc) -> None:
        set_anomaly_enabled(self.prev, self.prev_check_nan)


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

    def __enter__(self) -> None:
        self.prev = state.enabled
        self.prev_check_nan = state.check_nan
        set_anomaly_enabled(True, self.check_nan)

    def __exit__(self, *exc) -> None:
        set_anomaly_enabled(self.prev, self.prev_check_nan)

    def __call__(self, func):
        """Also a decorator (torch's detect_anomaly is not callable): the mode holds while ``func`` runs."""
        import functools

        @functools.wraps(func)
        def wrapped(*args, **kwargs):
            prev = state.enabled, state.check_nan  # kept here, not on self: the function may recurse
            set_anomaly_enabled(True, self.check_nan)
            try:
                return func(*args, **kwargs)
            finally:
                set_anomaly_enabled(*prev)

        return wrapped
