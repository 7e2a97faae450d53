"""A rank that fails takes the job down: its error is printed with its rank, then MPI aborts every process.

Without this, the other ranks would wait in their next collective for a message that never comes.
"""
from __future__ import annotations

import sys
import threading
import time
import traceback

# mpiexec forwards each rank's output through its proxies; an abort at once can end them before the
# report has gone through (seen with MPICH's hydra writing to a pipe): wait this long first.
_FORWARDING_GRACE = 0.5


_restore = None  # puts back the hooks that were there before


def take_down_job_on_error(comm) -> None:
    """Install hooks so that an uncaught exception in any thread of this rank aborts the whole MPI job."""
    global _restore
    if _restore is not None:
        return
    previous, previous_thread = sys.excepthook, threading.excepthook

    def abort_job(kind, value, tb) -> None:
        report(comm, "".join(traceback.format_exception(kind, value, tb)), f"{kind.__name__}: {value}")
        time.sleep(_FORWARDING_GRACE)
        comm.Abort(1)

    def abort_from_thread(args) -> None:
        if args.exc_type is SystemExit:
            return
        abort_job(args.exc_type, args.exc_value, args.exc_traceback)

    def restore() -> None:
        sys.excepthook, threading.excepthook = previous, previous_thread

    sys.excepthook = abort_job
    threading.excepthook = abort_from_thread
    _restore = restore


def stop_taking_down_job() -> None:
    """After destroy_process_group: errors are this process's own again."""
    global _restore
    if _restore is not None:
        _restore()
        _restore = None


def report(comm, details: str, summary: str) -> None:
    rank, size = comm.Get_rank(), comm.Get_size()
    sys.stderr.write(
        f"{details}ember.distributed: rank {rank} (of {size}) failed with {summary}\n"
        f"ember.distributed: aborting all {size} processes of the job\n"
    )
    sys.stderr.flush()
