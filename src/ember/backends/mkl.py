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
