"""``spawn``: run ``fn(i, *args)`` in N fresh processes and wait for them, as ``torch.multiprocessing.spawn``.

When a process fails, the others are stopped (SIGTERM, then SIGKILL after a grace period) and the parent
raises: ``ProcessRaisedException`` with the child's traceback when ``fn`` raised, ``ProcessExitedException``
with the exit code or signal when it exited otherwise. A child writes its traceback to a file of its own,
which the parent reads.

>>> import ember.multiprocessing as mp
>>> issubclass(mp.ProcessRaisedException, Exception), mp.ProcessExitedException.__name__
(True, 'ProcessExitedException')
"""
from __future__ import annotations

import ctypes
import multiprocessing
import multiprocessing.connection
import os
import pickle
import signal
import sys
import tempfile
import time
import traceback
import warnings
from typing import Callable

_PR_SET_PDEATHSIG = 1  # Linux's prctl option: a signal the child gets when its parent dies


class ProcessException(Exception):
    """A spawned process failed: ``error_index`` is its rank, ``error_pid`` its process id."""

    def __init__(self, msg: str, error_index: int, error_pid: int):
        super().__init__(msg)
        self.msg, self.error_index, self.error_pid = msg, error_index, error_pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.error_pid)


class ProcessRaisedException(ProcessException):
    """The spawned function raised: the message holds the child's traceback."""


class ProcessExitedException(ProcessException):
    """A spawned process exited with a non-zero code, or was killed by a signal (``signal_name``)."""

    def __init__(self, msg: str, error_index: int, error_pid: int, exit_code: int, signal_name: str | None = None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code, self.signal_name = exit_code, signal_name

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.error_pid, self.exit_code, self.signal_name)


def _die_with_parent() -> None:
    """Ask Linux to interrupt this child if the parent dies, so no rank is left waiting for the others."""
    if not sys.platform.startswith("linux"):
        return
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, int(signal.SIGINT))
    except (OSError, AttributeError):  # no prctl in this libc: the child just outlives a dead parent
        pass


def _run_rank(fn: Callable, index: int, args: tuple, error_file: str) -> None:
    """The child's entry point: ``fn(index, *args)``, its traceback saved for the parent if it raises."""
    _die_with_parent()
    try:
        fn(index, *args)
    except KeyboardInterrupt:
        pass  # the parent stopped this rank because another failed
    except Exception:
        with open(error_file, "wb") as file:
            pickle.dump(traceback.format_exc(), file)
        sys.exit(1)


class ProcessContext:
    """The processes ``start_processes`` started: ``join()`` waits for them, ``pids()`` lists them."""

    def __init__(self, processes: list, error_files: list[str]):
        self.processes = processes
        self.error_files = error_files
        self.sentinels = {process.sentinel: index for index, process in enumerate(processes)}

    def pids(self) -> list[int]:
        return [int(process.pid) for process in self.processes]

    def join(self, timeout: float | None = None, grace_period: float | None = None) -> bool:
        """Wait up to ``timeout`` seconds for processes to end; True once all have ended well.

        If one exited with a non-zero status, the others are terminated (after ``grace_period`` seconds, if
        given) and the failure is raised as ``ProcessRaisedException`` or ``ProcessExitedException``.
        """
        if not self.sentinels:
            return True
        failed = None
        for sentinel in multiprocessing.connection.wait(list(self.sentinels), timeout=timeout):
            index = self.sentinels.pop(sentinel)
            self.processes[index].join()
            if self.processes[index].exitcode != 0:
                failed = index
                break
        if failed is None:
            return not self.sentinels
        self._stop_the_others(grace_period)
        raise self._failure(failed)

    def _join_all(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        for process in self.processes:
            process.join(max(0.0, deadline - time.monotonic()))

    def _stop_the_others(self, grace_period: float | None) -> None:
        if grace_period is not None:
            self._join_all(grace_period)
        for process in self.processes:
            if process.is_alive():
                process.terminate()
        self._join_all(30 if grace_period is None else grace_period)
        for process in self.processes:
            if process.is_alive():
                process.kill()
            process.join()

    def _failure(self, index: int) -> ProcessException:
        process, error_file = self.processes[index], self.error_files[index]
        if os.access(error_file, os.R_OK):
            with open(error_file, "rb") as file:
                child_traceback = pickle.load(file)
            message = f"\n\n-- Process {index} terminated with the following error:\n{child_traceback}"
            return ProcessRaisedException(message, index, process.pid)
        code = process.exitcode
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"<Unknown signal {-code}>"
            return ProcessExitedException(f"process {index} terminated with signal {name}", index, process.pid,
                                          code, name)
        return ProcessExitedException(f"process {index} terminated with exit code {code}", index, process.pid, code)

    def __del__(self):
        for error_file in getattr(self, "error_files", []):
            if os.path.exists(error_file):
                os.unlink(error_file)


def _unused_path() -> str:
    """A file name for a child's traceback: made unique by creating it, then removed until the child writes."""
    with tempfile.NamedTemporaryFile(prefix="ember-errorfile-", suffix=".pickle", delete=False) as file:
        name = file.name
    os.unlink(name)
    return name


def start_processes(fn: Callable, args: tuple = (), nprocs: int = 1, join: bool = True, daemon: bool = False,
                    start_method: str = "spawn") -> ProcessContext | None:
    """Start ``nprocs`` processes running ``fn(i, *args)`` with ``start_method``; wait for them if ``join``.

    Returns None once all have ended (``join=True``), else the ``ProcessContext`` to join.
    """
    context = multiprocessing.get_context(start_method)
    processes, error_files = [], []
    for index in range(nprocs):
        error_files.append(_unused_path())
        process = context.Process(target=_run_rank, args=(fn, index, args, error_files[-1]), daemon=daemon)
        process.start()
        processes.append(process)
    started = ProcessContext(processes, error_files)
    if not join:
        return started
    while not started.join():
        pass
    return None


def spawn(fn: Callable, args: tuple = (), nprocs: int = 1, join: bool = True, daemon: bool = False,
          start_method: str = "spawn") -> ProcessContext | None:
    """Run ``fn(i, *args)`` for i in ``range(nprocs)``, each in a new process started with ``spawn``.

    ``fn`` must be defined at the top level of a module (it is pickled), and the program's own start must
    sit under ``if __name__ == "__main__":`` (each child imports the main module). If a process fails, the
    others are stopped and the parent raises with the failing process's traceback or exit code.

    >>> import ember.multiprocessing as mp
    >>> mp.spawn(print, args=("hello",), nprocs=2)   # doctest: +SKIP
    """
    if start_method != "spawn":
        warnings.warn(
            f"spawn: only start_method='spawn' is supported here (got {start_method!r}); to use another, "
            "call ember.multiprocessing.start_processes(...)", FutureWarning, stacklevel=2,
        )
    return start_processes(fn, args, nprocs, join, daemon, start_method="spawn")
