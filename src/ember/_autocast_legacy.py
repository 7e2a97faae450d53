"""torch's older, one-device spellings of autocast's state functions: each still works, warns that it is
deprecated, and names the call that replaces it (``get_autocast_cpu_dtype()`` is ``get_autocast_dtype("cpu")``).

>>> import warnings, ember
>>> with warnings.catch_warnings():
...     warnings.simplefilter("ignore", DeprecationWarning)
...     ember.get_autocast_cpu_dtype(), ember.is_autocast_xla_enabled()
(ember.bfloat16, False)
"""
from __future__ import annotations

import warnings
from typing import Callable

from ember.amp.autocast_mode import get_autocast_dtype, is_autocast_enabled, set_autocast_dtype, set_autocast_enabled


def _deprecated(old: str, new: str) -> None:
    warnings.warn(f"ember.{old} is deprecated. Please use ember.{new} instead.", DeprecationWarning, stacklevel=3)


def _legacy(name: str, replacement: Callable, device: str, param: str = "") -> Callable:
    """``name``, which takes ``param`` (or nothing), as a deprecated spelling of ``replacement(device, param)``."""
    new = f"{replacement.__name__}({device!r}{', ' + param if param else ''})"

    def legacy(*args):
        _deprecated(f"{name}({param})", new)
        return replacement(device, *args)

    legacy.__name__ = legacy.__qualname__ = name
    legacy.__doc__ = f"``{new}``, deprecated."
    return legacy


get_autocast_cpu_dtype = _legacy("get_autocast_cpu_dtype", get_autocast_dtype, "cpu")
get_autocast_gpu_dtype = _legacy("get_autocast_gpu_dtype", get_autocast_dtype, "cuda")
get_autocast_ipu_dtype = _legacy("get_autocast_ipu_dtype", get_autocast_dtype, "ipu")
get_autocast_xla_dtype = _legacy("get_autocast_xla_dtype", get_autocast_dtype, "xla")
set_autocast_cpu_dtype = _legacy("set_autocast_cpu_dtype", set_autocast_dtype, "cpu", "dtype")
set_autocast_gpu_dtype = _legacy("set_autocast_gpu_dtype", set_autocast_dtype, "cuda", "dtype")
set_autocast_ipu_dtype = _legacy("set_autocast_ipu_dtype", set_autocast_dtype, "ipu", "dtype")
set_autocast_xla_dtype = _legacy("set_autocast_xla_dtype", set_autocast_dtype, "xla", "dtype")
is_autocast_cpu_enabled = _legacy("is_autocast_cpu_enabled", is_autocast_enabled, "cpu")
is_autocast_ipu_enabled = _legacy("is_autocast_ipu_enabled", is_autocast_enabled, "ipu")
is_autocast_xla_enabled = _legacy("is_autocast_xla_enabled", is_autocast_enabled, "xla")
set_autocast_cpu_enabled = _legacy("set_autocast_cpu_enabled", set_autocast_enabled, "cpu", "enabled")
set_autocast_ipu_enabled = _legacy("set_autocast_ipu_enabled", set_autocast_enabled, "ipu", "enabled")
set_autocast_xla_enabled = _legacy("set_autocast_xla_enabled", set_autocast_enabled, "xla", "enabled")
