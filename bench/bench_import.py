"""How long ``import ember`` takes in a fresh interpreter, against ``import torch`` and ``import numpy``.

Each figure is the median of several fresh processes; the interpreter's own start-up is subtracted.
"""
from __future__ import annotations

import statistics
import subprocess
import sys


def _seconds(statement: str, repeats: int) -> float:
    code = f"import time; t = time.perf_counter(); {statement}; print(time.perf_counter() - t)"
    runs = [float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
            for _ in range(repeats)]
    return statistics.median(runs)


def _compile_ember() -> None:
    """Write ember's bytecode caches first, as an installation does: a stale or missing cache (an edited
    checkout, or PYTHONDONTWRITEBYTECODE) would make every fresh interpreter compile the sources again."""
    import compileall
    import os

    import ember

    compileall.compile_dir(os.path.dirname(ember.__file__), quiet=1)


def run(repeats: int = 5) -> dict:
    _compile_ember()
    return {name: _seconds(f"import {name}", repeats) * 1e3 for name in ("ember", "torch", "numpy")}


def report(results: dict) -> str:
    return "\n".join([
        "| import | ms | / torch |",
        "|---|---|---|",
        *(f"| {name} | {ms:.0f} | {ms / results['torch']:.2f} |" for name, ms in results.items()),
    ])


if __name__ == "__main__":
    print(report(run()))
