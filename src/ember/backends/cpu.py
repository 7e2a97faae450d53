"""``ember.backends.cpu``: the vector instructions the CPU kernels use.

>>> import ember
>>> ember.backends.cpu.get_cpu_capability() in ("DEFAULT", "VSX", "Z VECTOR", "AVX2", "AVX512", "SVE256")
True
"""
from __future__ import annotations

import platform

__all__ = ["get_cpu_capability"]

# torch's AVX512 kernels need these together; its AVX2 kernels need AVX2 with FMA
_AVX512 = ("AVX512F", "AVX512BW", "AVX512VL", "AVX512DQ")
_AVX2 = ("AVX2", "FMA3")


def get_cpu_capability() -> str:
    """The widest instruction set of torch's names (``"AVX512"``, ``"AVX2"``, ``"VSX"``, ``"Z VECTOR"`` or
    ``"DEFAULT"``) that this CPU has and that NumPy, which runs ember's kernels, can dispatch to."""
    machine = platform.machine().lower()
    if machine.startswith(("ppc64", "powerpc")):
        return "VSX"
    if machine == "s390x":
        return "Z VECTOR"
    features = _numpy_cpu_features()
    if all(features.get(name) for name in _AVX512):
        return "AVX512"
    if all(features.get(name) for name in _AVX2):
        return "AVX2"
    return "DEFAULT"


def _numpy_cpu_features() -> dict[str, bool]:
    # NumPy detects the CPU's features when it loads and dispatches its loops on them
    from numpy._core import _multiarray_umath

    return dict(getattr(_multiarray_umath, "__cpu_features__", {}))
