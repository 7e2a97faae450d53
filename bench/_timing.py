"""What the training-step benchmarks share: CPU time of a call, and a fresh interpreter that steps a model.

CPU time (``time.process_time``), not wall time: on a shared host other jobs' time slices would land in
either library's figure at random.
"""
from __future__ import annotations

import statistics
import subprocess
import sys
import time


def cpu_ms(program, number: int) -> float:
    """CPU time of one call of ``program``, in ms, over ``number`` calls."""
    start = time.process_time()
    for _ in range(number):
        program()
    return (time.process_time() - start) / number * 1e3


def compare(programs: dict, repeats: int, number: int) -> dict:
    """Each program timed in ``repeats`` interleaved rounds (after one warm-up call each): per program its
    median ms and, against every other, the median of the per-round ratios (``"ember/torch"``, ...)."""
    times = {name: [] for name in programs}
    for program in programs.values():
        program()
    for _ in range(repeats):
        for name, program in programs.items():
            times[name].append(cpu_ms(program, number))
    result = {f"{name}_ms": statistics.median(samples) for name, samples in times.items()}
    for name, samples in times.items():
        for other, others in times.items():
            if other != name:
                result[f"{name}/{other}"] = statistics.median(a / b for a, b in zip(samples, others))
    return result


_STEPPING = """
import sys

def status_kb(field):  # the process's own figures (ru_maxrss would carry the parent's across exec)
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith(field))

sys.path[:0] = {path!r}
import {lib} as lib
if lib.__name__ == "torch":
    lib.set_num_threads(1)
from {module} import _step
step = _step(lib)
{body}
"""


def in_fresh_interpreter(module: str, lib: str, body: str) -> str:
    """The output of ``body`` run in a new interpreter where ``step`` is ``module._step(lib)`` and
    ``status_kb(field)`` reads the process's memory figures; the caller's path and bench/ are importable."""
    path = [p for p in sys.path if p] + [__file__.rsplit("/", 1)[0]]
    script = _STEPPING.format(path=path, lib=lib, module=module, body=body)
    return subprocess.run([sys.executable, "-c", script], check=True, capture_output=True, text=True).stdout
