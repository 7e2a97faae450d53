"""``Future``: a value that an operation in flight will produce, as ``torch.futures``.

ember has no background threads moving communication along: a future made from a ``Work``
(``work.get_future()``) completes when something waits on it or asks whether it is done, and the
callbacks chained with ``then`` run at that moment, in the order they were added. A future made by the
user completes when ``set_result`` (or ``set_exception``) is called, from any thread.
"""
from __future__ import annotations

import threading
from typing import Any, Callable, Generic, TypeVar

T = TypeVar("T")
S = TypeVar("S")


class Future(Generic[T]):
    """A result that is not there yet: ``wait()`` for it, or chain work on it with ``then()``.

    >>> import ember
    >>> fut = ember.futures.Future()
    >>> doubled = fut.then(lambda f: f.value() * 2)
    >>> fut.done(), doubled.done()
    (False, False)
    >>> fut.set_result(ember.tensor([1.0, 2.0]))
    >>> doubled.wait()
    tensor([2., 4.])
    """

    def __init__(self, *, devices: list | None = None):
        self._done = False
        self._value: Any = None
        self._exception: BaseException | None = None
        self._callbacks: list[Callable[[Future], None]] = []
        self._event = threading.Event()
        self._drive: Callable[[], None] | None = None  # completes the future, blocking (a Work's wait)
        self._poll: Callable[[], None] | None = None  # completes the future if its operation has finished

    def __repr__(self) -> str:
        return f"<ember.futures.Future {'done' if self._done else 'pending'}>"

    def done(self) -> bool:
        """Whether the future holds a value or an exception (never blocks)."""
        if not self._done and self._poll is not None:
            self._poll()
        return self._done

    def wait(self) -> T:
        """Block until the future is complete; return its value, or raise the exception it holds."""
        if not self._done and self._drive is not None:
            self._drive()
        self._event.wait()
        return self.value()

    def value(self) -> T:
        """The value of a completed future (raise its exception if it holds one)."""
        if not self._done:
            raise RuntimeError(
                "Future.value: the future is not complete yet; call wait() first, or read value() inside a "
                "callback given to then()"
            )
        if self._exception is not None:
            raise self._exception
        return self._value

    def then(self, callback: Callable[[Future[T]], S]) -> Future[S]:
        """A new future, completed with ``callback(self)`` once this one completes.

        An exception raised by ``callback`` (or held by this future and re-raised by ``value()`` inside it)
        completes the new future with a RuntimeError that names it, as torch's.
        """
        child: Future[S] = Future()
        child._drive = self._drive_only
        child._poll = self._poll_only

        def run(parent: Future[T]) -> None:
            try:
                result = callback(parent)
            except Exception as error:  # the callback's failure belongs to the child, as torch's
                failure = RuntimeError("Got the following error when running the callback: "
                                       f"{type(error).__name__}: {error}")
                failure.__cause__ = error
                child.set_exception(failure)
            else:
                child.set_result(result)
        self.add_done_callback(run)
        return child

    def add_done_callback(self, callback: Callable[[Future[T]], None]) -> None:
        """Run ``callback(self)`` when the future completes (at once if it already has)."""
        if self._done:
            callback(self)
        else:
            self._callbacks.append(callback)

    def set_result(self, result: T) -> None:
        """Complete the future with ``result`` and run its callbacks."""
        self._complete(result, None)

    def set_exception(self, result: BaseException) -> None:
        """Complete the future with an exception: ``wait()`` and ``value()`` raise it."""
        if not isinstance(result, BaseException):
            raise TypeError(f"Future.set_exception: expected an exception, got {type(result).__name__}")
        self._complete(None, result)

    def _complete(self, value: Any, exception: BaseException | None) -> None:
        if self._done:
            raise RuntimeError("Future can only be marked completed once: it already holds a result")
        self._value, self._exception, self._done = value, exception, True
        self._event.set()
        callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback(self)

    def _drive_only(self) -> None:
        if not self._done and self._drive is not None:
            self._drive()

    def _poll_only(self) -> None:
        self.done()


def collect_all(futures: list[Future]) -> Future[list[Future]]:
    """A future of the list ``futures``, complete when all of them are.

    >>> import ember
    >>> a, b = ember.futures.Future(), ember.futures.Future()
    >>> both = ember.futures.collect_all([a, b])
    >>> a.set_result(1); b.set_result(2)
    >>> [f.value() for f in both.wait()]
    [1, 2]
    """
    futures = list(futures)
    combined: Future[list[Future]] = Future()
    combined._drive = lambda: [f._drive_only() for f in futures]
    combined._poll = lambda: [f._poll_only() for f in futures]
    remaining = [len(futures)]

    def one_more(_: Future) -> None:
        remaining[0] -= 1
        if remaining[0] == 0:
            combined.set_result(futures)
    for f in futures:
        f.add_done_callback(one_more)
    if not futures:
        combined.set_result(futures)
    return combined


def wait_all(futures: list[Future]) -> list:
    """Wait for every future; their values, in order (the first exception met is raised).

    >>> import ember
    >>> done = ember.futures.Future()
    >>> done.set_result(3)
    >>> ember.futures.wait_all([done])
    [3]
    """
    return [f.wait() for f in futures]


__all__ = ["Future", "collect_all", "wait_all"]
