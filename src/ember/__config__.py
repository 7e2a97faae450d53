"""``ember.__config__``: what ember computes with, as ``torch.__config__`` reports torch's build.

ember is not built: it reports the libraries it runs on, NumPy and the BLAS behind its matrix products
(Intel MKL with the ``mkl`` extra, see ``docs/mkl.md``; NumPy's own BLAS otherwise), and their threads.

>>> import ember
>>> ember.__config__.show().splitlines()[0].startswith("ember ")
True
>>> "get_num_threads()" in ember.__config__.parallel_info()
True
"""
from __future__ import annotations

import os

import numpy as np

from ember import _blas, _threads

__all__ = ["parallel_info", "show"]


def _products_line() -> str:
    if os.environ.get("EMBER_MKL", "1") == "0":
        return "Matrix products: NumPy's matmul (MKL kept out by EMBER_MKL=0)"
    if not _blas.mkl_installed():
        return "Matrix products: NumPy's matmul (the mkl extra is not installed)"
    if not _blas.loaded():
        return ("Matrix products: NumPy's matmul (the mkl extra is installed, but on CPUs other than Intel's "
                "NumPy's OpenBLAS is faster; EMBER_MKL=1 takes MKL)")
    from ember.backends import mkl

    state = "" if mkl.enabled else " (switched off: ember.backends.mkl.enabled is False)"
    return f"Matrix products: {_blas.version()}, above {_blas.THRESHOLD:,} multiply-adds{state}"


def _numpy_blas() -> str:
    pools = _threads.blas_pools()
    if not pools:
        return "BLAS loaded: not inspected (install threadpoolctl, the threads extra)"
    return "; ".join(f"BLAS loaded: {pool['internal_api']} {pool.get('version') or ''} ({pool['filepath']})"
                     for pool in pools)


def show() -> str:
    """The libraries ember computes with, one per line."""
    from ember import __version__

    return "\n".join([f"ember {__version__}", f"  - NumPy {np.__version__}", f"  - {_numpy_blas()}",
                      f"  - {_products_line()}"])


def parallel_info() -> str:
    """The thread counts ember's ops run with, and the environment variables that set them."""
    lines = ["ember/Parallel:", f"\tember.get_num_threads() : {_threads.get_num_threads()}",
             f"\tember.get_num_interop_threads() : {_threads.get_num_interop_threads()}"]
    if _blas.loaded():
        lines += [_blas.version(), f"\tmkl_get_max_threads() : {_blas.threads()}"]
    lines += ["Environment variables:"] + [f"\t{name} : {os.environ.get(name, '[not set]')}"
                                           for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")]
    return "\n".join(lines)
