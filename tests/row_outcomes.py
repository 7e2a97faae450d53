"""What the op-table sweeps compare: a row's outcome in one library (its result, or the error it raised), its
result's tensors one by one, and their values as NumPy arrays."""
from __future__ import annotations

import warnings

import numpy as np
import torch

from test_ops import call


def result_or_error(spec, lib, args: tuple, kwargs: dict):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return call(spec, lib, args, kwargs)
    except Exception as error:  # compared with the other library's outcome
        return error


def flat(out) -> list:
    if isinstance(out, (tuple, list)):
        return [leaf for item in out for leaf in flat(item)]
    return [out]


def values(t) -> np.ndarray:
    """A tensor of either library as an array, floats widened (to double: ml_dtypes' and torch's 16-bit formats)."""
    if isinstance(t, torch.Tensor):
        t = t.resolve_conj().resolve_neg()  # torch's lazy conjugate has no NumPy view
    t = t.detach()
    return np.asarray((t.double() if t.dtype.is_floating_point else t).numpy())
