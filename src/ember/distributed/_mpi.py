"""The one place that imports mpi4py: ember's core needs only NumPy, so MPI is loaded on first use."""
from __future__ import annotations

import numpy as np


def mpi():
    """mpi4py's ``MPI`` module (importing it initialises MPI), or an error that says how to install it."""
    try:
        from mpi4py import MPI
    except ImportError as error:
        raise RuntimeError(
            "ember.distributed needs mpi4py and an MPI library: install them with "
            "pip install 'ember[distributed]' (mpi4py with MPICH's mpiexec), or use a system MPI"
        ) from error
    return MPI


def available() -> bool:
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return False
    return True


def as_bytes(array: np.ndarray) -> np.ndarray:
    """A contiguous array seen as bytes: data that is only moved, not reduced, travels untyped."""
    return np.ascontiguousarray(array).reshape(-1).view(np.uint8)


def receiver(array: np.ndarray) -> np.ndarray:
    """Memory MPI may write into for ``array``: the array itself when contiguous, else a contiguous copy."""
    if array.flags.c_contiguous and array.flags.writeable:
        return array
    return np.empty(array.shape, array.dtype)


def as_bytes_view(buffer: np.ndarray) -> np.ndarray:
    """A contiguous array's memory as bytes, without a copy (MPI writes through it)."""
    return buffer.reshape(-1).view(np.uint8)


def offsets_of(counts: list[int]) -> list[int]:
    """Where each of consecutive pieces of these sizes starts."""
    return [int(x) for x in np.cumsum([0] + counts[:-1])]
