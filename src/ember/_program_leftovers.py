"""The last program-level names: eager checks of symbolic-size ranges, the device module lookup, and helpers
of torch's data loading and packaging that have a meaning on ember's single CPU process.

>>> import ember
>>> ember.sym_constrain_range_for_size(3, max=8)
>>> ember.get_device_module("cpu").is_available()
True
"""
from __future__ import annotations

import os
import sys

from ember._tensor import Tensor, device as _device
from ember.amp.autocast_mode import _DEVICE_TYPES

_INT64 = (-2 ** 63, 2 ** 63 - 1)


def sym_constrain_range(size: int, *, min: int | None = None, max: int | None = None) -> None:
    """Check that ``size`` lies in ``[min, max]`` (an open end when None): in eager mode sizes are plain ints, so
    torch's hint to the compiler is a check here.

    >>> ember.sym_constrain_range(3, min=4)
    Traceback (most recent call last):
    RuntimeError: Invalid value range for 3 between [4, 9223372036854775807].
    """
    low, high = _INT64[0] if min is None else min, _INT64[1] if max is None else max
    if high < low:
        raise RuntimeError(f"Max must be greater than or equal to min. Got min={min} max={max}")
    value = size.item() if isinstance(size, Tensor) else size
    if not low <= value <= high:
        raise RuntimeError(f"Invalid value range for {value} between [{low}, {high}].")


def sym_constrain_range_for_size(size: int, *, min: int | None = None, max: int | None = None) -> None:
    """``sym_constrain_range`` for a size: ``min`` defaults to 0, and a ``max`` must exceed 2.

    >>> ember.sym_constrain_range_for_size(-1)
    Traceback (most recent call last):
    RuntimeError: Invalid value range for -1 between [0, 9223372036854775807].
    """
    if max is not None and max <= 2:
        raise RuntimeError(f"Max value to constrain_range_for_size must be greater than 2. got: {max}")
    sym_constrain_range(size, min=0 if min is None else min, max=max)


def sym_fresh_size(expr: int) -> int:
    """``expr`` as a plain number (a one-element tensor's value), which in eager mode is already a fresh size.

    >>> ember.sym_fresh_size(ember.tensor(4))
    4
    """
    from ember._creation import tensor

    return (expr if isinstance(expr, Tensor) else tensor(expr)).item()


def get_device_module(device: str | _device | None = None):
    """The module of a device type (``ember.cpu``, ``ember.cuda``); with none given, the current accelerator's, which
    on ember's CPU-only build is ``ember.cpu``.

    >>> ember.get_device_module("cuda:0").__name__
    'ember.cuda'
    """
    import ember

    if isinstance(device, _device):
        name = device.type
    elif isinstance(device, str):  # (not through ember.device, which refuses the devices ember lacks)
        name = device.split(":")[0]
        if name not in _DEVICE_TYPES:
            raise RuntimeError(f"Expected one of {', '.join(_DEVICE_TYPES)} device type at start of device string: "
                               f"{device}")
    elif device is None:
        name = "cpu"
    else:
        raise RuntimeError(f"Invalid value of device '{device}', expect ember.device, str, or None")
    if name in ("xpu", "mps", "mtia"):  # loaded on first use
        return getattr(ember, name)
    module = {"cpu": ember.cpu, "cuda": ember.cuda}.get(name)
    if module is None:
        raise RuntimeError(f"Device '{name}' does not have a corresponding module registered as 'ember.{name}'.")
    return module


def thread_safe_generator():
    """The generator a data-loading thread worker should draw from; None elsewhere, which means the global one.
    ember's loader workers are processes, each with its own seeded global generator, so the answer is None, as
    torch answers in a process worker.

    >>> ember.thread_safe_generator() is None
    True
    """
    return None


def prepare_multiprocessing_environment(path: str) -> None:
    """Nothing to prepare: torch's hook for packaged deployments does nothing in an ordinary process, nor here."""


def get_file_path(*path_components: str) -> str:
    """A path inside the directory that holds the ``ember`` package, from ``path_components``.

    >>> ember.get_file_path("ember", "cpu.py").endswith(os.path.join("ember", "cpu.py"))
    True
    """
    return os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(sys.modules["ember"].__file__))),
                        *path_components)
