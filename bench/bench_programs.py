"""Each corpus program (examples/programs/*.py) timed whole under torch and under ember.

Usage: ``python bench/bench_programs.py [--repeats 3] [--write] [NAME ...]``

Every run is a fresh interpreter, so the figure includes importing the library (and whatever else the
program imports): what a user waits for. Per program and library: the median over ``--repeats`` rounds of
the wall time, and of the CPU time the child used (user + system, from ``getrusage``), which other jobs on
a shared machine disturb less. The two libraries alternate within each round. ``--write`` puts the table
at the top of bench/RESULTS.md as a new section. On a loaded machine, run it with ``OMP_NUM_THREADS=1``:
idle BLAS and OpenMP threads of either library otherwise spin on busy cores and swamp the figures.
"""
from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROGRAMS = ROOT / "examples" / "programs"
AS_EMBER = ROOT / "tests" / "programs" / "as_ember.py"
RESULTS = ROOT / "bench" / "RESULTS.md"


def run_once(argv: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds of one run of ``python argv`` in an empty directory."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "src"), env.get("PYTHONPATH")]))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as cwd:
        done = subprocess.run([sys.executable, *argv], cwd=cwd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        raise RuntimeError(f"{' '.join(argv)} failed with exit code {done.returncode}:\n{done.stderr[-2000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def time_program(program: Path, repeats: int) -> dict:
    """Median wall and CPU seconds under each library, the libraries alternating within a round."""
    argvs = {"torch": [str(program)], "ember": [str(AS_EMBER), str(program)]}
    samples = {lib: [] for lib in argvs}
    for _ in range(repeats):
        for lib, argv in argvs.items():
            samples[lib].append(run_once(argv))
    return {lib: tuple(statistics.median(s[i] for s in runs) for i in (0, 1)) for lib, runs in samples.items()}


def table(results: dict) -> str:
    rows = ["| program | torch wall s | ember wall s | wall ember/torch | torch CPU s | ember CPU s | CPU ember/torch |",
            "|---|---|---|---|---|---|---|"]
    for name, r in results.items():
        (tw, tc), (ew, ec) = r["torch"], r["ember"]
        rows.append(f"| {name} | {tw:.2f} | {ew:.2f} | {ew / tw:.2f} | {tc:.2f} | {ec:.2f} | {ec / tc:.2f} |")
    wall = [r["ember"][0] / r["torch"][0] for r in results.values()]
    cpu = [r["ember"][1] / r["torch"][1] for r in results.values()]
    faster = sum(ratio < 1 for ratio in wall)
    rows.append(f"| **median of {len(results)}** | | | **{statistics.median(wall):.2f}** | | | "
                f"**{statistics.median(cpu):.2f}** |")
    summary = (f"\nember finished first (wall time) in {faster} of {len(results)} programs; the worst wall ratio is "
               f"{max(wall):.2f}, the best {min(wall):.2f}.")
    return "\n".join(rows) + "\n" + summary


def section(results: dict, repeats: int, command: str) -> str:
    import numpy
    import torch

    load = os.getloadavg()[0]
    threads = os.environ.get("OMP_NUM_THREADS", "unset")
    return (f"## The program corpus, whole programs under torch and under ember (`{command}`)\n\n"
            f"Each program of examples/programs/ in a fresh interpreter, import included, median of {repeats} "
            f"rounds (torch and ember alternating). Python {platform.python_version()}, NumPy {numpy.__version__}, "
            f"torch {torch.__version__}, {os.cpu_count()} CPUs, OMP_NUM_THREADS={threads}, load average {load:.1f} at "
            f"the end (a shared machine: the CPU columns are the steadier).\n\n{table(results)}\n")


def write_on_top(text: str) -> None:
    """Insert ``text`` as the first section of bench/RESULTS.md, under its title."""
    title, _, rest = RESULTS.read_text().partition("\n\n")
    RESULTS.write_text(f"{title}\n\n{text}\n{rest}")


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="program names (default: all)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--write", action="store_true", help="add the table to the top of bench/RESULTS.md")
    args = parser.parse_args(argv)
    programs = sorted(PROGRAMS.glob("*.py"))
    if args.names:
        programs = [p for p in programs if p.stem in args.names]
    results = {}
    for program in programs:
        results[program.stem] = time_program(program, args.repeats)
        print(program.stem, results[program.stem], file=sys.stderr, flush=True)
    prefix = f"OMP_NUM_THREADS={os.environ['OMP_NUM_THREADS']} " if "OMP_NUM_THREADS" in os.environ else ""
    text = section(results, args.repeats, f"{prefix}python bench/bench_programs.py {' '.join(argv)}".strip())
    print(text)
    if args.write:
        write_on_top(text)


if __name__ == "__main__":
    main(sys.argv[1:])
