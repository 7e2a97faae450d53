"""Freed arrays stay with the process between training steps (glibc only).

glibc's ``malloc`` serves blocks above its *mmap threshold* with fresh pages from the system, and hands the top
of its heap back whenever more than twice that threshold lies free there. Both thresholds start low (128 KB)
and grow only when the program frees a block larger than the current threshold. A training step allocates and
frees megabytes of activations and gradients, each below a megabyte: with the low thresholds the heap is given
back at the end of every step and each page of it faulted in again on the next (on the pre-norm transformer
block of ``bench/bench_sequence.py``, alone in its process: 1,600 minor faults and 1.5-2 ms of system time a
step of 10 ms). torch's process does not pay this because something there frees a large block early on.

At import, ember does the same once, on purpose: one 30 MB block, taken and freed at once (never touched, so it
costs no memory), sets the thresholds as glibc's own rule sets them after any such block. Settings the user
made (``MALLOC_MMAP_THRESHOLD_``, ``MALLOC_TRIM_THRESHOLD_``, ``MALLOC_TOP_PAD_`` or ``mallopt``) turn glibc's
adjustment off, and then this changes nothing. Elsewhere (macOS, musl) nothing is done.

>>> raise_malloc_thresholds() in (True, False)
True
"""
from __future__ import annotations

import ctypes
import sys

__all__ = ["raise_malloc_thresholds"]

_BLOCK = 30 * 2 ** 20  # below glibc's cap on the adjusted threshold (32 MB on 64-bit systems)


def raise_malloc_thresholds() -> bool:
    """Free one large block through glibc's ``malloc``, so that it keeps freed memory for the next allocations
    instead of handing it back to the system; ``False`` where the C library is not glibc."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None)
        libc.gnu_get_libc_version  # noqa: B018  (glibc's own symbol: musl's malloc has no such thresholds)
    except (OSError, AttributeError):
        return False
    libc.malloc.restype = ctypes.c_void_p
    libc.malloc.argtypes = [ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]
    block = libc.malloc(_BLOCK)
    if block:
        libc.free(block)
    return True
