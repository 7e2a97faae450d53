"""The launcher: ``python -m ember.distributed.run --nproc-per-node N script.py args`` starts N processes.

It runs ``mpiexec -n N python -m ember.distributed.run --as-rank script.py args``: each process then sets
torchrun's variables (``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``, ``LOCAL_WORLD_SIZE``) from MPI, makes an
uncaught exception abort the whole job, and runs the script as ``__main__``. ``mpiexec`` is the one next to
this Python (the ``mpich`` wheel installs it there), else the first on ``PATH``, else ``--mpiexec``.
"""
from __future__ import annotations

import argparse
import os
import runpy
import shutil
import subprocess
import sys
from pathlib import Path


def find_mpiexec(given: str | None = None) -> str:
    """The mpiexec to start processes with: ``given``, the one beside this Python, or the first on PATH."""
    candidates = [given] if given else [str(Path(sys.executable).parent / "mpiexec"), shutil.which("mpiexec")]
    for candidate in candidates:
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    raise RuntimeError(
        "ember.distributed.run: no mpiexec found; install one with pip install 'ember[distributed]' "
        "(the mpich package), or pass --mpiexec /path/to/mpiexec"
    )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m ember.distributed.run",
        description="Start a data-parallel ember script on N processes through mpiexec.",
    )
    parser.add_argument("--nproc-per-node", "--nproc_per_node", type=int, default=1,
                        help="processes to start (default 1)")
    parser.add_argument("--mpiexec", default=None, help="the mpiexec to use (default: beside this Python, or PATH)")
    parser.add_argument("--mpi-args", default="", help="more options for mpiexec, as one string")
    parser.add_argument("-m", "--module", action="store_true", help="run the script as a module (python -m)")
    parser.add_argument("--as-rank", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("script", help="the script (or module with -m) every process runs")
    parser.add_argument("script_args", nargs=argparse.REMAINDER, help="its arguments")
    return parser


def command(args: argparse.Namespace) -> list[str]:
    """The mpiexec command line that starts the ranks."""
    if args.nproc_per_node < 1:
        raise SystemExit(f"ember.distributed.run: --nproc-per-node must be at least 1, got {args.nproc_per_node}")
    rank_args = ["--as-rank"] + (["-m"] if args.module else []) + [args.script] + args.script_args
    return [find_mpiexec(args.mpiexec), "-n", str(args.nproc_per_node), *args.mpi_args.split(),
            sys.executable, "-m", "ember.distributed.run", *rank_args]


def run_as_rank(args: argparse.Namespace) -> None:
    """In one of the started processes: environment, fault handling, then the script as ``__main__``."""
    from ember.distributed import _faults, _group
    from ember.distributed._mpi import mpi

    comm = mpi().COMM_WORLD
    _group.set_launch_environment(comm, mpi())
    _faults.take_down_job_on_error(comm)
    sys.argv = [args.script] + args.script_args
    if args.module:
        runpy.run_module(args.script, run_name="__main__", alter_sys=True)
    else:
        sys.path.insert(0, str(Path(args.script).resolve().parent))
        runpy.run_path(args.script, run_name="__main__")


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.as_rank:
        run_as_rank(args)
        return 0
    return subprocess.call(command(args))


if __name__ == "__main__":
    sys.exit(main())
