"""``ember.backends.mkl``: whether ember's matrix products can run on Intel MKL, and a switch to keep them off it.

With the ``mkl`` extra installed (``pip install 'ember[mkl]'``), float and complex products large enough to
gain go through MKL's ``cblas_?gemm``; ``enabled = False`` (or ``EMBER_MKL=0`` in the environment, which
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
    """Whether MKL is installed where ember can load it (and ``EMBER_MKL=0`` does not keep it out)."""
    from ember import _blas

    return _blas.loaded()


@contextlib.contextmanager
def flags(enabled: bool = True):
    """Set ``enabled`` for the block, then restore it."""
    module = sys.modules[__name__]  # the argument's name hides the module's own
    before, module.enabled = module.enabled, bool(enabled)
    try:
        yield
    finally:
        module.enabled = before
