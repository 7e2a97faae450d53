"""Per-thread settings of the backward engine: multithreaded backward and the gradient layout policy.

ember runs every backward on the calling thread, as torch does on a machine without accelerators, so the
multithreading switch is a setting that code can read back and nothing more; the layout policy decides
whether a leaf's first gradient may be kept in a layout other than the leaf's (see
``enforce_grad_layout_policy``). Both switch at once when created, as ``set_grad_enabled`` does, and are
thread-local.

>>> import ember
>>> with ember.autograd.set_multithreading_enabled(False):
...     ember.autograd.is_multithreading_enabled()
False
>>> ember.autograd.is_multithreading_enabled()
True
"""
from __future__ import annotations

import threading

from ember.autograd.grad_mode import _GradModeContext


class _Settings(threading.local):
    multithreading = True
    layout_enforced = True


_settings = _Settings()


def is_multithreading_enabled() -> bool:
    """Whether backward may run on per-device worker threads (the CPU's backward runs on the caller's thread)."""
    return _settings.multithreading


def is_grad_layout_enforced() -> bool:
    """Whether a leaf's gradient is kept in the leaf's layout (``enforce_grad_layout_policy``)."""
    return _settings.layout_enforced


def is_view_replay_enabled() -> bool:
    """True: ember always recreates a view by replaying the ops that made it (a view changed in place gets the
    view op's backward, e.g. ``TBackward0``), which is what torch does once view replay is turned on
    (``torch.autograd._force_original_view_tracking(True)``) and not, by default, on its own.

    >>> ember.autograd.is_view_replay_enabled()
    True
    """
    return True


def _checked(value, argument: str, function: str) -> bool:
    if type(value) is not bool:
        raise TypeError(
            f"{function}(): argument '{argument}' (position 1) must be bool, not {type(value).__name__}; "
            "pass True or False"
        )
    return value


class _EagerSwitch(_GradModeContext):
    """A setting switched when the object is made; leaving the block, or the call it decorates, restores it."""

    _field = ""

    def __init__(self, mode: bool) -> None:
        self.prev = getattr(_settings, self._field)
        self.mode = mode
        setattr(_settings, self._field, mode)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc) -> None:
        setattr(_settings, self._field, self.prev)

    def _fresh(self):
        return type(self)(self.mode)


class set_multithreading_enabled(_EagerSwitch):
    """Allow (``True``, the default) or forbid backward on worker threads, as a function, a context manager or a
    decorator. As torch's, used as a decorator it leaves the setting switched after decorating.

    >>> _ = ember.autograd.set_multithreading_enabled(False); ember.autograd.is_multithreading_enabled()
    False
    >>> _ = ember.autograd.set_multithreading_enabled(True)
    """

    _field = "multithreading"

    def __init__(self, mode: bool) -> None:
        super().__init__(_checked(mode, "enabled", "set_multithreading_enabled"))


class enforce_grad_layout_policy(_EagerSwitch):
    """Keep a leaf's gradient in the leaf's layout (``True``, the default), or let backward keep, uncopied, a
    gradient that nothing else holds whatever its layout (``False``). A function, a context manager or a
    decorator; gradients that must be made anew are laid out as the leaf either way.

    >>> p = ember.empty(2, 3, 4).permute(2, 0, 1).requires_grad_()
    >>> with ember.autograd.enforce_grad_layout_policy(False):
    ...     (p * 2).sum().backward()
    >>> p.grad.stride()  # the product's gradient, kept as it came: row-major, not p's layout
    (6, 3, 1)
    """

    _field = "layout_enforced"

    def __init__(self, enable: bool = True) -> None:
        super().__init__(_checked(enable, "enabled", "set_grad_layout_enforcement_enabled"))

    def __call__(self, func):
        self.__exit__()  # decorating: only the calls switch the policy
        return super().__call__(func)
