"""Freed arrays stay with the process: after ``import ember``, allocating and freeing a few megabytes of arrays
over and over takes no new pages from the system (glibc's malloc otherwise hands them back every round)."""
import subprocess
import sys

import pytest

from ember import _malloc

_ROUNDS = """
import resource
import numpy as np
{setup}
def rounds(count):
    for _ in range(count):
        kept = [np.ones(150_000, np.float32) for _ in range(8)]  # 600 KB each, 4.8 MB in all
        del kept
rounds(5)
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
rounds(40)
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def _faults(setup: str) -> int:
    out = subprocess.run([sys.executable, "-c", _ROUNDS.format(setup=setup)], check=True, capture_output=True,
                         text=True).stdout
    return int(out)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc thresholds")
def test_freed_arrays_are_not_faulted_in_again_after_import():
    if not _malloc.raise_malloc_thresholds():
        pytest.skip("the C library is not glibc")
    without = _faults("")
    # the module alone (importing all of ember would cost the test a second)
    with_ember = _faults(f"import runpy; runpy.run_path({_malloc.__file__!r})['raise_malloc_thresholds']()")
    assert without > 40 * 8 * 100  # about a page per 4 KB of each array, every round
    assert with_ember < 200, (with_ember, without)
