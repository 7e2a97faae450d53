"""Work: an operation in flight on the communicator's non-blocking calls, finished by ``wait()``.

Every operation, blocking or not, is started this way; a blocking call is one that waits at once. On MPI,
waiting polls the requests rather than blocking in MPI, so that the group's timeout can end a wait that
would otherwise last forever; the TCP backend's requests are waited for with that timeout directly.
"""
from __future__ import annotations

import os
import time
from datetime import timedelta
from typing import Callable

from ember.distributed._store import DistError
from ember.futures import Future

_SPINS_BEFORE_YIELD = 64  # a busy rank gives its core away now and then: with more ranks than cores, it must


class Work:
    """A started collective or point-to-point operation: ``wait()`` finishes it, ``is_completed()`` asks."""

    def __init__(self, group, op: str, requests: list, finish: Callable[[], None] | None = None,
                 outputs: list | None = None):
        self._group = group
        self._op = op
        self._requests = requests
        self._finish = finish  # copies results into tensors that the transport could not write to directly
        self._outputs = outputs or []
        self._done = False
        self._statuses = [group.api.Status() for _ in requests]  # who sent what a receive matched

    def __repr__(self) -> str:
        return f"<ember.distributed.Work {self._op} {'completed' if self._done else 'pending'}>"

    def is_completed(self) -> bool:
        """Whether the operation has ended, well or not (``wait()`` raises the error of one that failed)."""
        if self._done:
            return True
        try:
            finished = self._group.api.Request.Testall(self._requests, self._statuses)
        except DistError:  # a peer ended: the operation is over, and wait() says why
            return True
        if finished:
            self._complete()
        return self._done

    def is_success(self) -> bool:
        return self.is_completed() and self._done

    def exception(self):
        return None

    def result(self) -> list:
        """The tensors the operation wrote."""
        return list(self._outputs)

    def get_future(self) -> Future:
        """A ``Future`` of the tensors the operation writes, complete once it has finished."""
        future = Future()

        def drive() -> None:
            try:
                self.wait()
            except Exception as error:  # a timeout: the future holds it, and wait() raises it
                future.set_exception(error)
            else:
                future.set_result(self.result())

        def poll() -> None:
            if self.is_completed():
                drive()
        future._drive, future._poll = drive, poll
        return future

    def wait(self, timeout: timedelta | None = None) -> bool:
        """Block until the operation has finished; raise after ``timeout`` (the group's, if None)."""
        if self._done:
            return True
        limit = (timeout or self._group._timeout).total_seconds()
        if self._group._polled:
            self._poll_until(time.monotonic() + limit, limit)
        elif not self._waited(limit):
            raise RuntimeError(self._timed_out(limit))
        self._complete()
        return True

    def _poll_until(self, deadline: float, limit: float) -> None:
        testall, requests, statuses, spins = self._group.api.Request.Testall, self._requests, self._statuses, 0
        while not testall(requests, statuses):
            spins += 1
            if spins % _SPINS_BEFORE_YIELD == 0:
                os.sched_yield()
                if time.monotonic() > deadline:
                    raise RuntimeError(self._timed_out(limit))

    def _waited(self, limit: float) -> bool:
        """Wait for the TCP backend's requests; a transport error (a peer that ended) names this rank and op."""
        try:
            return self._group.api.wait_all(self._requests, self._statuses, limit)
        except DistError as error:
            raise type(error)(f"[rank {self._group.rank()}] {self._op} failed: {error}") from None

    def _source_rank(self) -> int:
        """The global rank a completed receive came from."""
        return self._group._ranks[self._statuses[0].Get_source()]

    def _timed_out(self, seconds: float) -> str:
        return (
            f"[rank {self._group.rank()}] {self._op} timed out after {seconds:g} s: some rank of the group did "
            "not take part (it may have failed, or called another operation). Set a longer limit with "
            "init_process_group(timeout=...), or EMBER_DISTRIBUTED_DEBUG=DETAIL to check that ranks agree"
        )

    def _complete(self) -> None:
        self._done = True
        if self._finish is not None:
            finish, self._finish = self._finish, None
            finish()


# Async works not known to have finished. A program may drop a work without waiting (torch allows it), but
# the transport still writes into the work's buffers until the operation ends: they are kept alive here until then.
_in_flight: list[Work] = []


def run(work: Work, async_op: bool):
    """What a collective returns: the work itself when ``async_op``, else None once it has finished."""
    if async_op:
        _in_flight[:] = [w for w in _in_flight if not w.is_completed()]
        _in_flight.append(work)
        return work
    work.wait()
    return None
