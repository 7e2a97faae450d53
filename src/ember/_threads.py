"""How many threads ember computes with: NumPy's BLAS thread pool, set through ``threadpoolctl``.

Every matmul, convolution and linear layer in ember is a BLAS call, so the BLAS pool is ember's intra-op
parallelism, the thing ``set_num_threads`` controls in torch. ``threadpoolctl`` (the ``threads`` extra; it
comes with scikit-learn too) finds the BLAS library NumPy loaded and sets its pool, whichever it is
(OpenBLAS, MKL, BLIS). The MKL that the ``mkl`` extra brings for ember's own products (``_blas.py``) gets the
same count. ember has no inter-op pool: the inter-op setting is kept and reported, as torch's.

>>> import ember
>>> before = ember.get_num_threads()
>>> ember.set_num_threads(1)
>>> ember.get_num_threads()
1
>>> ember.set_num_threads(before)
"""
from __future__ import annotations

import os
import warnings

from ember import _blas

__all__ = ["get_num_interop_threads", "get_num_threads", "set_num_interop_threads", "set_num_threads"]

_controller = None  # threadpoolctl's view of the loaded BLAS libraries (it scans them): made anew by each
# set_num_threads, so that a library loaded since the last look is resized too
_fallback = {"threads": None, "interop": None}  # what was asked for, where threadpoolctl cannot act
_requested = None  # the last set_num_threads: MKL, loaded on the first large product, takes it then


def _blas_controller(fresh: bool = False):
    global _controller
    if _controller is None or fresh:
        try:
            from threadpoolctl import ThreadpoolController
        except ImportError:
            return None
        _controller = ThreadpoolController()
    return _controller


def blas_pools() -> list:
    """Each BLAS library NumPy loaded, as threadpoolctl describes it (empty without threadpoolctl)."""
    controller = _blas_controller()
    return [] if controller is None else [pool for pool in controller.info() if pool["user_api"] == "blas"]


def _check_count(name: str, n) -> int:
    if type(n) is not int:
        raise RuntimeError(f"{name} expects an int, but got {type(n).__name__}")
    if n < 1:
        raise RuntimeError(f"{name} expects a positive integer (got {n})")
    return n


def set_num_threads(int: int) -> None:
    """Use ``int`` threads inside ops: sets the size of NumPy's BLAS thread pool."""
    global _requested
    n = _requested = _check_count("set_num_threads", int)
    _blas.set_threads(n)
    controller = _blas_controller(fresh=True)
    if controller is None:
        warnings.warn(
            "set_num_threads: threadpoolctl is not installed, so NumPy's BLAS thread pool cannot be resized; "
            "install it (pip install 'ember[threads]'), or set OMP_NUM_THREADS before starting Python",
            UserWarning, stacklevel=2,
        )
        _fallback["threads"] = n
        return
    controller.limit(limits=n, user_api="blas")  # kept until changed: the object returned restores only on request


def requested() -> int | None:
    """What ``set_num_threads`` last set, if it was called."""
    return _requested


def get_num_threads() -> int:
    """The threads ops use: the size of NumPy's BLAS thread pool (the largest, if several libraries are loaded,
    MKL's for ember's products among them)."""
    pools = [pool["num_threads"] for pool in blas_pools()] + [n for n in [_blas.threads()] if n is not None]
    if pools:
        return max(pools)
    return _fallback["threads"] or os.cpu_count() or 1


def set_num_interop_threads(int: int) -> None:
    """Kept and reported by :func:`get_num_interop_threads`; ember runs ops one after another, in one thread.

    As in torch, it may be set only once.

    >>> import ember
    >>> ember.get_num_interop_threads() >= 1
    True
    """
    n = _check_count("set_num_interop_threads", int)
    if _fallback["interop"] is not None:
        raise RuntimeError(
            "Error: cannot set number of interop threads after parallel work has started or "
            "set_num_interop_threads called"
        )
    _fallback["interop"] = n


def get_num_interop_threads() -> int:
    """What :func:`set_num_interop_threads` set, else the number of CPUs (torch's default)."""
    return _fallback["interop"] or os.cpu_count() or 1
