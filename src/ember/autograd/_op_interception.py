"""A context that sees every call of an op: the per-op hook of selective checkpointing and checkpoint's debug log.

While one is entered it is ``ember.autograd.function._interceptor``, which ``Function.apply`` checks first; a
built-in op's call (or a custom op's, ``ember.library``) goes to its :meth:`OpInterception.intercept` with the
op's name (``ember.ops.aten.mm.default``). A user's Function is not an op: its forward runs with the
interception on, so the ops inside it are seen, as torch's dispatch modes see the ATen ops under it. The op
itself runs with the interception off (the ops inside an op are not ops of the program) and with whatever was
intercepting before, such as the profiler, on.
"""
from __future__ import annotations

from typing import Any

from ember.autograd import function as _function


class OpInterception:
    """Enter to see every op call; subclasses say what to do with one in :meth:`intercept`."""

    previous: Any = None
    _entering: Any = None  # a user's Function that run() is passing on to apply: apply must run it itself

    def __enter__(self) -> "OpInterception":
        self.previous = _function._interceptor
        _function._interceptor = self
        return self

    def __exit__(self, *exc: Any) -> None:
        _function._interceptor = self.previous

    def takes(self, cls: type) -> bool:
        if self._entering is cls:
            self._entering = None
            if self.previous is not None:  # it passed the call on to apply too: it must not take it back either
                self.previous.takes(cls)
            return False
        return True

    def run(self, cls: type, args: tuple, kwargs: dict) -> Any:
        op, op_args = cls._operator_call(args)
        if op is None:  # a user's Function: whatever intercepted before (the profiler) sees the call itself
            self._entering = cls
            return cls.apply(*args, **kwargs) if self.previous is None else self.previous.run(cls, args, kwargs)
        return self.intercept(op, op_args, kwargs, lambda: self.call(cls, args, kwargs))

    def call(self, cls: type, args: tuple, kwargs: dict) -> Any:
        """Run the op, with this interception off while it runs."""
        _function._interceptor = self.previous
        try:
            return cls.apply(*args, **kwargs)
        finally:
            _function._interceptor = self

    def intercept(self, op: Any, args: tuple, kwargs: dict, call: Any) -> Any:
        """One op call: ``op`` (its name), its arguments and ``call()``, which runs it."""
        raise NotImplementedError
