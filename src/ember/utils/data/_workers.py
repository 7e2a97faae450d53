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

import multiprocessing
import os
import queue
import random
import time
import traceback
from dataclasses import dataclass
from typing import Any, Iterator

from ember import _random

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


def _worker_loop(loader, worker_id: int, seed: int, tasks, results) -> None:
    global _worker_info
    _random.manual_seed(seed)
    random.seed(seed)
    _worker_info = WorkerInfo(worker_id, loader.num_workers, seed, loader.dataset)
    try:
        if loader.worker_init_fn is not None:
            loader.worker_init_fn(worker_id)
        if loader._streams:  # one batch for each request: the stream may be endless
            batches = loader._stream()
            for _ in iter(tasks.get, None):
                batch = next(batches, _END)
                results.put((worker_id, batch))
                if batch is _END:
                    return
            return
        for key, indices in iter(tasks.get, None):
            results.put((key, loader._fetch(indices)))
    except Exception as error:  # reported to the main process, which raises it there
        results.put((worker_id, _Failure(worker_id, error)))


class WorkerIterator:
    """One pass over a DataLoader with worker processes; the workers stop when the pass ends or is dropped."""

    def __init__(self, loader):
        self._loader = loader
        self._owner = os.getpid()  # a forked worker inherits this object: only the owner may stop the workers
        context = multiprocessing.get_context(loader.multiprocessing_context or default_context())
        self._results = context.Queue()
        self._tasks = [context.Queue() for _ in range(loader.num_workers)]
        self._batches = iter(loader._batch_indices()) if not loader._streams else None
        self._sent = self._next_key = 0
        self._waiting: dict = {}  # indexed: key -> batch; streams: worker id -> its batches, in order
        self._running = list(range(loader.num_workers))  # streams: the workers not yet at their end, in turn
        for _ in range(loader.prefetch_factor):  # the first requests (a shuffle draws its order here)
            for worker_id in range(loader.num_workers):
                if self._batches is None:
                    self._tasks[worker_id].put(True)  # a stream's worker is asked for its next batch
                else:
                    self._send()
        # drawn after the shuffle's order, so a seed gives the same order with workers as without
        base_seed = int(_random.generator(loader.generator).integers(0, 2 ** 62))
        self._workers = [context.Process(target=_worker_loop, daemon=True,
                                         args=(loader, i, base_seed + i, self._tasks[i], self._results))
                         for i in range(loader.num_workers)]
        for worker in self._workers:
            worker.start()

    def __iter__(self) -> Iterator:
        return self

    def __len__(self) -> int:
        return len(self._loader)

    def __next__(self):
        try:
            return self._next_stream_batch() if self._batches is None else self._next_indexed_batch()
        except BaseException:
            self.close()
            raise

    def _send(self) -> None:
        indices = next(self._batches, None)
        if indices is not None:
            self._tasks[self._sent % len(self._tasks)].put((self._sent, indices))
            self._sent += 1

    def _next_indexed_batch(self):
        if self._next_key == self._sent:
            self.close()
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
            self._tasks[worker_id].put(True)
            return batch
        self.close()
        raise StopIteration

    def _receive(self) -> tuple:
        timeout = self._loader.timeout
        while True:
            try:
                key, batch = self._results.get(timeout=timeout if timeout > 0 else _POLL_SECONDS)
            except queue.Empty:
                if timeout > 0:
                    raise RuntimeError(f"DataLoader timed out after {timeout} seconds waiting for a batch from "
                                       "its workers; raise timeout= or make the dataset faster") from None
                self._check_alive()
                continue
            if type(batch) is _Failure:
                batch.reraise()
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
    if persistent_workers:
        raise NotImplementedError("DataLoader: persistent_workers=True is not supported: ember starts the workers "
                                  "anew for each pass; leave it False")
    if prefetch_factor is not None and prefetch_factor < 0:
        raise ValueError("prefetch_factor option should be non-negative")
    if prefetch_factor == 0:
        raise ValueError("prefetch_factor must be greater than 0 when num_workers > 0: each worker needs at least one "
                         "batch asked of it")
    return 2 if prefetch_factor is None else prefetch_factor


def default_context() -> str | None:
    """The start method: fork where the platform has it (the workers then need not pickle the dataset)."""
    return "fork" if "fork" in multiprocessing.get_all_start_methods() else None
