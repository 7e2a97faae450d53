"""NumPy's floating-point warnings silenced around one call, at a third of ``np.errstate``'s cost.

torch never warns when a result is inf or nan, so ember's ops silence NumPy's
warnings around the NumPy calls that may produce them. ``np.errstate`` builds
its settings anew on every use, which costs about 1 µs: as much as a small op
itself. The settings ember needs are few and fixed, so they are built once,
here; a call sets one in the context variable NumPy reads and then restores
what was there (per thread, as ``np.errstate`` does).

>>> import numpy as np
>>> quietly(IGNORE_OVER, np.exp, np.array([1000.0]))
array([inf])
"""
from __future__ import annotations

import re
import warnings
from typing import Callable

import numpy as np

try:  # where NumPy 2 keeps its settings; if a release moves them, the public np.errstate is used instead
    from numpy._core._ufunc_config import _extobj_contextvar as _numpy_settings
    from numpy._core.umath import _make_extobj
except ImportError:
    _numpy_settings = None


def _ignoring(*errors: str):
    """The setting that ignores ``errors`` and treats the others as NumPy does by default.

    Every kind is spelled out, so a process-wide ``np.seterr`` (say, ``all="raise"``) does not change how
    ember's ops behave: they follow torch, which neither warns nor raises.
    """
    kinds = {"divide": "warn", "over": "warn", "under": "ignore", "invalid": "warn"}
    kinds.update({error: "ignore" for error in errors})
    return kinds if _numpy_settings is None else _make_extobj(**kinds)


IGNORE_OVER = _ignoring("over")
IGNORE_INVALID = _ignoring("invalid")
IGNORE_DIVIDE_INVALID = _ignoring("divide", "invalid")
IGNORE_INVALID_OVER = _ignoring("invalid", "over")
IGNORE_ALL = _ignoring("divide", "over", "invalid")


# bound once: many small ops pass here
_set, _reset = (None, None) if _numpy_settings is None else (_numpy_settings.set, _numpy_settings.reset)


def quietly(setting, fn: Callable, *args):
    """``fn(*args)`` with the floating-point errors that ``setting`` names ignored."""
    if _numpy_settings is None:
        with np.errstate(**setting):
            return fn(*args)
    token = _set(setting)
    try:
        return fn(*args)
    finally:
        _reset(token)


def quietly_on_objection(setting, fn: Callable, *args):
    """``fn(*args)`` at once, and again quietly (as :func:`quietly`) only if NumPy raised over inf or nan.

    For small ops that meet inf and nan rarely: the usual call skips the two calls of setting NumPy's state.
    NumPy raises only where ``np.seterr`` or a warnings filter of the user's turns its warnings into errors;
    its plain warnings are silenced by the filter below. ``fn`` must not change its arguments in place, as it
    may run twice.
    """
    try:
        return fn(*args)
    except (FloatingPointError, RuntimeWarning):
        return quietly(setting, fn, *args)


# The cheapest ops (add, sub, mul ...) call NumPy without ``quietly``: on small tensors its two calls would
# cost a tenth of the op. Their rare inf - inf or inf * 0 would still make NumPy warn, where torch says
# nothing, so NumPy's floating-point warnings raised from inside ember's own modules are ignored. A warning
# raised by the user's own NumPy code is attributed to the user's module and still shows.
_OBJECTION_WORDS = r"(invalid value|divide by zero|overflow|underflow) encountered"
warnings.filterwarnings("ignore", message=_OBJECTION_WORDS,
                        category=RuntimeWarning, module=r"ember\.")
# A user's strict settings (a warnings filter of "error" ahead of this one, or np.seterr(all="raise")) turn those
# warnings into exceptions: a built-in Function's apply then runs its forward again quietly, and the backward pass
# its formulas on arrays (see numpy_objection's callers).


def numpy_objection(error: Exception) -> bool:
    """Whether ``error`` is NumPy objecting to inf, nan or a division by 0, as a user's strict settings make it
    (``np.seterr(all="raise")``, or a warnings filter that turns its warning into an error)."""
    return isinstance(error, FloatingPointError) or isinstance(error, RuntimeWarning) and \
        _NUMPY_OBJECTION.match(str(error)) is not None


_NUMPY_OBJECTION = re.compile(_OBJECTION_WORDS)


def written_despite(objection: Exception) -> None:
    """NumPy objects to an in-place ufunc's inf or nan only after writing every element: the result is complete,
    and ``objection`` is dropped if it is NumPy's (anything else is raised again)."""
    if not numpy_objection(objection):
        raise objection
