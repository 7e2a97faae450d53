"""Where bfloat16's NumPy dtype comes from: the optional ``ml_dtypes`` package (``pip install ember[bfloat16]``).

NumPy has no bfloat16. ml_dtypes, kept by the JAX team and itself NumPy-only, registers one whose
ufuncs compute in single precision and round once, as torch's CPU kernels do. Without it,
``ember.bfloat16`` still exists as a name, and anything that needs its storage says how to get it.
"""
from __future__ import annotations

import numpy as np

INSTALL_HINT = "bfloat16 needs the ml_dtypes package: pip install ember[bfloat16] (or pip install ml_dtypes)"


def load_numpy_dtype() -> np.dtype | None:
    """ml_dtypes' bfloat16 as a NumPy dtype, or None when ml_dtypes is not installed."""
    try:
        import ml_dtypes
    except ImportError:
        return None
    return np.dtype(ml_dtypes.bfloat16)


def missing() -> ImportError:
    """The error for using bfloat16 without ml_dtypes."""
    return ImportError(INSTALL_HINT)
