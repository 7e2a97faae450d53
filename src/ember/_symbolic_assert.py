"""``ember._assert``: an assertion that symbolic tracing records instead of evaluating."""
from __future__ import annotations

from typing import Any

from ember.overrides import handle_torch_function, has_torch_function


def _assert(condition: Any, message: str) -> None:
    """``assert condition, message``, except that a traced value (an ``ember.fx`` Proxy) records the check.

    >>> ember._assert(ember.tensor(True), "never shown")
    """
    if type(condition) is not bool and has_torch_function((condition,)):
        return handle_torch_function(_assert, (condition,), condition, message)
    assert condition, message


_assert.__module__ = "ember"
