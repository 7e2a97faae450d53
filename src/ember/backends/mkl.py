"""``ember.backends.mkl``: whether NumPy's BLAS is Intel's MKL (most NumPy builds use OpenBLAS)."""
from __future__ import annotations


def is_available() -> bool:
    from ember._threads import blas_pools

    return any(pool.get("internal_api") == "mkl" for pool in blas_pools())
