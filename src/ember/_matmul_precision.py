"""``set_float32_matmul_precision``: kept and reported. ember's float32 products are NumPy's, always in full
float32 (no TF32 or bfloat16 shortcuts exist on its path), whatever is asked.

>>> import ember
>>> ember.set_float32_matmul_precision("high")
>>> ember.get_float32_matmul_precision()
'high'
>>> ember.set_float32_matmul_precision("highest")
"""
from __future__ import annotations

import warnings

__all__ = ["get_float32_matmul_precision", "set_float32_matmul_precision"]

_PRECISIONS = ("highest", "high", "medium")
_state = {"precision": "highest"}


def set_float32_matmul_precision(precision: str) -> None:
    """``"highest"``, ``"high"`` or ``"medium"``; anything else warns and changes nothing, as in torch."""
    if precision not in _PRECISIONS:
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current "
                      "set_float32_matmul_precision call has no effect.", UserWarning, stacklevel=2)
        return
    _state["precision"] = precision


def get_float32_matmul_precision() -> str:
    return _state["precision"]
