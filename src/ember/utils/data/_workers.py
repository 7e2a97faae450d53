"""Loading in worker processes: what ``DataLoader(num_workers=n)`` runs.

Each worker is a process with its own copy of the dataset. For a dataset read by
index, the main process sends each worker lists of indices, round robin, and puts
the batches that come back in order. For an ``IterableDataset`` every worker reads
its own copy of the stream (``get_worker_info`` tells it which share is its own)
and the batches come round robin, one from each worker still running.

>>> import ember
>>> from ember.utils.data import DataLoader
>>> [batch.tolist() for batch in DataLoader(range(5), batch_size=2, num_workers=2)]
[[0, 1], [2, 3], [4]]
"""
from __future__ import annotations

import functools
import multiprocessing
import os
import queue
import random
import sys
import time
import traceback
import warnings
from dataclasses import dataclass
from typing import Any, Iterator

from ember import _random
from ember.utils.data._fetch import pass_length
from ember.utils.data.sampler import _seed_drawn

_POLL_SECONDS = 5.0  # how often a wait without a timeout checks that the workers are still alive
_worker_info = None


@dataclass(frozen=True)
class WorkerInfo:
    """What a worker process knows of itself (see :func:`get_worker_info`)."""

    id: int
    num_workers: int
    seed: int
    dataset: Any


def get_worker_info() -> WorkerInfo | None:
    """In a DataLoader's worker process, its id, the number of workers, its seed and its copy of the dataset;
    None in the main process."""
    return _worker_info


class _Failure:
    """An exception raised in a worker, carried back as text (its traceback may not pickle)."""

    def __init__(self, worker_id: int, error: BaseException):
        self.kind = type(error)
        self.text = (f"Caught {type(error).__name__} in DataLoader worker process {worker_id}.\nOriginal "
                     + "".join(traceback.format_exception(error)))

    def reraise(self):
        text = _Message(self.text) if issubclass(self.kind, KeyError) else self.text
        try:
            error = self.kind(text)
        except Exception:  # an exception type that takes other arguments
            error = RuntimeError(self.text)
        raise error


class _Message(str):
    """A KeyError shows the repr of its message; this one shows the text as it is, tracebacks readable."""

    def __repr__(self) -> str:
        return str(self)


class _End:
    """A stream's worker has no more batches."""


_END = _End()


def _worker_loop(fetcher, init_fn, worker_id: int, num_workers: int, seed: int, tasks, results) -> None:
    """A worker: fetch what each task asks for, until told to stop (None).

    A task is ``(pass, key, indices)`` for a dataset read by index, or ``(pass,)`` for a stream: the next
    batch of that pass (a new pass starts the stream again). Results are ``(key or worker id, pass, batch)``.
    """
    global _worker_info
    _random.manual_seed(seed)
    random.seed(seed)
    _worker_info = WorkerInfo(worker_id, num_workers, seed, fetcher.dataset)
    current, batches = -1, None
    try:
        if init_fn is not None:
            init_fn(worker_id)
        for task in iter(tasks.get, None):
            if len(task) == 3:
                results.put((task[1], task[0], fetcher.fetch(task[2])))
                continue
            if task[0] != current:  # one batch per request: the stream may be endless
                current, batches = task[0], fetcher.stream()
            results.put((worker_id, current, next(batches, _END)))
    except Exception as error:  # reported to the main process, which raises it there
        results.put((worker_id, current, _Failure(worker_id, error)))


class WorkerIterator:
    """Passes over a DataLoader with worker processes; the workers stop when the pass ends or is dropped,
    or, with persistent workers, when the loader goes.

    It holds what the workers need, not the loader (which, with persistent workers, holds it).
    """

    def __init__(self, loader):
        self._workers = []  # none yet: close() (and __del__) must work if starting them fails
        self._owner = os.getpid()  # a forked worker inherits this object: only the owner may stop the workers
        self._persistent = loader.persistent_workers
        self._timeout = loader.timeout
        self._prefetch = loader.prefetch_factor
        self._length = functools.partial(pass_length, loader.dataset, loader._streams,
                                         batch_size=loader.batch_size, drop_last=loader.drop_last)
        self._streams = loader._streams
        context = loader.multiprocessing_context or multiprocessing.get_context(default_context())
        self._results = context.Queue()
        self._tasks = [context.Queue() for _ in range(loader.num_workers)]
        self._pass = -1
        self._sent = 0
        # drawn before the shuffle's order, as torch draws it (without workers too): a seed gives torch's order
        base_seed = _seed_drawn(loader.generator)
        first = self._begin(loader._batch_indices())  # a shuffle draws its order here
        fetcher = loader._fetcher()
        self._workers = [context.Process(target=_worker_loop, daemon=True, args=(
            fetcher, loader.worker_init_fn, i, loader.num_workers, base_seed + i, self._tasks[i], self._results))
            for i in range(loader.num_workers)]
        for worker in self._workers:  # before any task is put: putting starts a thread, and a fork copies none
            worker.start()
        self._put(first)

    def start_pass(self, indices) -> None:
        """Begin another pass: batches still on their way from an earlier one are dropped as they come."""
        self._put(self._begin(indices))

    def _begin(self, indices) -> list:
        """Reset for a new pass; return its first requests, ``(worker, task)``: prefetch_factor per worker."""
        self._pass += 1
        self._indices = indices
        self._batches = None if self._streams else iter(indices)
        self._next_key = self._sent
        self._waiting: dict = {}  # indexed: key -> batch; streams: worker id -> its batches, in order
        self._running = list(range(len(self._tasks)))  # streams: the workers not yet at their end, in turn
        requests = []
        for _ in range(self._prefetch):
            for worker_id in range(len(self._tasks)):
                task = (self._pass,) if self._batches is None else self._next_task()
                if task is not None:
                    requests.append((task[1] % len(self._tasks) if len(task) == 3 else worker_id, task))
        return requests

    def _put(self, requests: list) -> None:
        for worker_id, task in requests:
            self._tasks[worker_id].put(task)

    def __iter__(self) -> Iterator:
        return self

    def __len__(self) -> int:
        return self._length(self._indices)

    def __next__(self):
        try:
            return self._next_stream_batch() if self._batches is None else self._next_indexed_batch()
        except StopIteration:
            if not self._persistent:
                self.close()
            raise
        except BaseException:
            self.close()
            raise

    def _next_task(self) -> tuple | None:
        """The next batch's task, ``(pass, key, indices)``, or None at the end of the pass."""
        indices = next(self._batches, None)
        if indices is None:
            return None
        self._sent += 1
        return (self._pass, self._sent - 1, indices)

    def _send(self) -> None:
        task = self._next_task()
        if task is not None:
            self._tasks[task[1] % len(self._tasks)].put(task)

    def _next_indexed_batch(self):
        if self._next_key == self._sent:
            raise StopIteration
        while self._next_key not in self._waiting:
            key, batch = self._receive()
            self._waiting[key] = batch
        batch = self._waiting.pop(self._next_key)
        self._next_key += 1
        self._send()
        return batch

    def _next_stream_batch(self):
        """The next batch of the next worker in turn (as torch, round robin), asking it for one more."""
        while self._running:
            worker_id = self._running.pop(0)
            waiting = self._waiting.setdefault(worker_id, [])
            while not waiting:
                sender, batch = self._receive()
                self._waiting.setdefault(sender, []).append(batch)
            batch = waiting.pop(0)
            if type(batch) is _End:
                continue
            self._running.append(worker_id)
            self._tasks[worker_id].put((self._pass,))
            return batch
        raise StopIteration

    def _receive(self) -> tuple:
        """The next result of this pass: ``(key or worker id, batch)``."""
        while True:
            try:
                key, pass_, batch = self._results.get(timeout=self._timeout if self._timeout > 0 else _POLL_SECONDS)
            except queue.Empty:
                if self._timeout > 0:
                    raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds waiting for a batch "
                                       "from its workers; raise timeout= or make the dataset faster") from None
                self._check_alive()
                continue
            if type(batch) is _Failure:
                batch.reraise()
            if pass_ == self._pass:
                return key, batch

    def _check_alive(self) -> None:
        for worker in self._workers:
            if not worker.is_alive() and worker.exitcode not in (0, None):
                raise RuntimeError(f"DataLoader worker (pid {worker.pid}) exited unexpectedly with exit code "
                                   f"{worker.exitcode}")

    def close(self) -> None:
        """Stop the workers (done at the end of the pass, on an error, or when the iterator is dropped)."""
        if os.getpid() != self._owner or not self._workers:
            return
        for tasks in self._tasks:
            tasks.put(None)
        deadline = time.monotonic() + _POLL_SECONDS
        for worker in self._workers:
            while worker.is_alive() and time.monotonic() < deadline:
                self._drain()  # a worker exits only once what it put has gone down the pipe
                worker.join(timeout=0.01)
            if worker.is_alive():
                worker.terminate()
        self._workers = []

    def _drain(self) -> None:
        try:
            while True:
                self._results.get_nowait()
        except queue.Empty:
            pass

    def __del__(self):
        self.close()


def check_worker_options(num_workers: int, timeout: float, prefetch_factor, persistent_workers: bool) -> int:
    """Check the options that concern workers; return the prefetch factor to use."""
    if num_workers < 0:
        raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable multiprocessing.")
    if timeout < 0:
        raise ValueError("timeout option should be non-negative")
    if num_workers == 0:
        if prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing: it needs "
                             "num_workers > 0; set prefetch_factor to None")
        if persistent_workers:
            raise ValueError("persistent_workers option needs num_workers > 0")
        return None
    if prefetch_factor is not None and prefetch_factor < 0:
        raise ValueError("prefetch_factor option should be non-negative")
    if prefetch_factor == 0:
        raise ValueError("prefetch_factor must be greater than 0 when num_workers > 0: each worker needs at least one "
                         "batch asked of it")
    return 2 if prefetch_factor is None else prefetch_factor


def warn_if_too_many_workers(num_workers: int) -> None:
    """Warn when ``num_workers`` passes the CPUs this process may run on (more workers than that compete for
    them, and can make loading slow or the machine freeze)."""
    try:
        usable, counted = len(os.sched_getaffinity(0)), "this process may use"
    except (AttributeError, OSError):  # (no sched_getaffinity: macOS and Windows)
        usable, counted = os.cpu_count(), "the machine has (its cpuset not taken into account)"
    if usable is None:
        warnings.warn(f"This DataLoader will create {num_workers} worker processes in total; DataLoader is not able "
                      "to compute a suggested max number of worker in current system.", UserWarning, stacklevel=4)
    elif num_workers > usable:
        warnings.warn(f"This DataLoader will create {num_workers} worker processes in total. Our suggested max "
                      f"number of worker in current system is {usable}, the CPUs {counted}, which is smaller "
                      "than what this DataLoader is going to create: lower num_workers to avoid slow loading or a "
                      "frozen machine.", UserWarning, stacklevel=4)


def check_multiprocessing_context(context, num_workers: int) -> multiprocessing.context.BaseContext | None:
    """The context the workers start in: a start method's name becomes its context; anything else must be a
    context, and only a loader with workers takes one."""
    if context is None:
        return None
    if num_workers <= 0:
        raise ValueError("multiprocessing_context can only be used with multi-process loading (num_workers > 0), "
                         f"but got num_workers={num_workers}")
    if isinstance(context, str):
        methods = multiprocessing.get_all_start_methods()
        if context not in methods:
            raise ValueError(f"multiprocessing_context option should specify a valid start method in {methods!r}, "
                             f"but got multiprocessing_context={context!r}")
        context = multiprocessing.get_context(context)
    if not isinstance(context, multiprocessing.context.BaseContext):
        raise TypeError("multiprocessing_context option should be a valid context object or a string specifying "
                        f"the start method, but got multiprocessing_context={context}")
    return context


def default_context() -> str | None:
    """fork on Linux (the workers then need not pickle the dataset), as torch's workers there; elsewhere the
    platform's own (spawn on macOS and Windows, where fork is unsafe or missing)."""
    return "fork" if sys.platform.startswith("linux") else None
