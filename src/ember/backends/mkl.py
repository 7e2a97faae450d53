"""``ember.backends.mkl``: whether ember's matrix products can run on Intel MKL, and a switch to keep them off it.

With the ``mkl`` extra installed (``pip install 'ember[mkl]'``), float and complex products large enough to
gain go through MKL's ``cblas_?gemm`` on Intel's CPUs (on others, where NumPy's OpenBLAS is faster, only if
``EMBER_MKL=1``); ``enabled = False`` (or ``EMBER_MKL=0`` in the environment, which
also keeps MKL from loading at all) sends every product to NumPy's BLAS. See ``docs/mkl.md``.

>>> import ember
>>> isinstance(ember.backends.mkl.is_available(), bool)
True
>>> with ember.backends.mkl.flags(enabled=False):
...     ember.backends.mkl.enabled
False
"""
from __future__ import annotations

import contextlib
import ctypes
import sys

enabled = True


def is_available() -> bool:
    """Whether ember's products can run on MKL: the ``mkl`` extra is installed (and ``EMBER_MKL=0`` does not
    keep it out), or NumPy's own BLAS is MKL (as in conda's NumPy)."""
    from ember import _blas, _threads

    return _blas.mkl_installed() or any(pool.get("internal_api") == "mkl" for pool in _threads.blas_pools())


@contextlib.contextmanager
def flags(enabled: bool = True):
    """Set ``enabled`` for the block, then restore it."""
    module = sys.modules[__name__]  # the argument's name hides the module's own
    before, module.enabled = module.enabled, bool(enabled)
    try:
        yield
    finally:
        module.enabled = before


VERBOSE_OFF = 0
VERBOSE_ON = 1


class verbose:
    """Within the block, MKL prints a line per call it runs (``VERBOSE_ON``), to see which products reach it;
    ``VERBOSE_OFF`` leaves it quiet. Needs the ``mkl`` extra: without MKL there is nothing to make verbose, and
    entering the block raises, as torch's does when MKL refuses.

    >>> with ember.backends.mkl.verbose(ember.backends.mkl.VERBOSE_OFF):
    ...     pass
    """

    def __init__(self, enable: int) -> None:
        self.enable = enable

    def __enter__(self):
        if self.enable == VERBOSE_OFF:
            return None
        if not _set_verbose(self.enable):
            raise AssertionError(
                "Failed to set MKL into verbose mode: ember's products run on MKL only with the mkl extra "
                "installed (pip install 'ember[mkl]'); please disable this verbose scope"
            )
        return self

    def __exit__(self, *exc) -> bool:
        _set_verbose(VERBOSE_OFF)
        return False


def _set_verbose(level: int) -> bool:
    """Set MKL's verbose level; False when MKL is not loaded (not installed, or kept out)."""
    from ember import _blas

    if _blas._library is None:
        _blas._load()
    if not _blas._library:
        return False
    set_level = _blas._library.MKL_Verbose  # (the C function: lower-case mkl_verbose takes a pointer)
    set_level.restype, set_level.argtypes = ctypes.c_int, [ctypes.c_int]
    return set_level(level) >= 0
