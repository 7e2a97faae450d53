"""``checkpoint(..., debug=True)``: the ops a checkpointed function ran in its forward and in its recomputation,
listed in the error raised when the recomputation did not save what the forward saved.

Each op call is logged with its operands' dtypes and shapes and the line of the user's code that made it.
"""
from __future__ import annotations

import os
import sys
from typing import Any, Callable

from ember._tensor import Tensor
from ember.autograd._op_interception import OpInterception

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep

DEBUG_TIP = ("\nTip: To see a more detailed error message, either pass `debug=True` to "
             "`ember.utils.checkpoint.checkpoint(...)` or wrap the code block with "
             "`with ember.utils.checkpoint.set_checkpoint_debug_enabled(True):` to enable checkpoint-debug mode "
             "globally.")
_REPORT = """\
An error happened while unpacking tensors; dumping logs of latest computation
because you passed `debug=True` to `ember.utils.checkpoint.checkpoint()`.

Operators that ran in the original forward ({n_forward}):
{forward}

Operators that ran in the recomputation ({n_recompute}):
{recompute}

Compare the two lists: the first line where they differ is where the recomputation went another way than
the forward (a branch on a random or global value, a different shape). The error that was raised: {error}"""


class _OpLog(OpInterception):
    """Writes one line per op call: ``aten.sin.default(f32[2]) -> f32[2]  at file:line:function``."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def __enter__(self) -> "_OpLog":
        self.lines = []
        return super().__enter__()

    def intercept(self, op: Any, args: tuple, kwargs: dict, call: Callable) -> Any:
        where, line = _caller(), len(self.lines)
        self.lines.append(f"{op}({', '.join(_described(a) for a in args)})  at {where}")  # (the call may raise)
        out = call()
        self.lines[line] = f"{op}({', '.join(_described(a) for a in args)}) -> {_described(out)}  at {where}"
        return out


def _described(value: Any) -> str:
    if isinstance(value, Tensor):
        return f"{str(value.dtype).replace('ember.', '')}{list(value.shape)}"
    if type(value) in (tuple, list):
        return "(" + ", ".join(_described(v) for v in value) + ")"
    return repr(value)


def _caller() -> str:
    """The innermost frame of code outside ember: the line of the checkpointed function that called the op."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame = frame.f_back
    if frame is None:
        return "?"
    return f"{frame.f_code.co_filename}:{frame.f_lineno}:{frame.f_code.co_name}"


def debug_contexts() -> tuple[Callable, Callable]:
    """``(context_fn, explain)``: the contexts that log the forward's and the recomputation's ops, and a function
    that turns a CheckpointError into one whose message lists both logs."""
    forward, recompute = _OpLog(), _OpLog()

    def explain(error: Exception) -> Exception:
        return type(error)(_REPORT.format(
            n_forward=len(forward.lines), forward=_numbered(forward.lines, "original"),
            n_recompute=len(recompute.lines), recompute=_numbered(recompute.lines, "recompute"),
            error=str(error).replace(DEBUG_TIP, "")))

    return (lambda: (forward, recompute)), explain


def _numbered(lines: list, label: str) -> str:
    return "\n".join(f"{line}   ({i} of {len(lines)} in {label})" for i, line in enumerate(lines, 1))
