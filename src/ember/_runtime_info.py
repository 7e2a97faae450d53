"""What the process and the build report, and the process-wide switches torch has beside them.

>>> import ember
>>> ember.get_device(ember.ones(1)), ember.is_distributed(ember.ones(1))
(-1, False)
>>> ember.set_warn_always(True); ember.is_warn_always_enabled()
True
>>> ember.set_warn_always(False)
"""
from __future__ import annotations

from ember import _dtype, _tensor
from ember._tensor import Tensor
from ember.overrides import overridable


@overridable("ember")
def get_device(input: Tensor) -> int:
    """The index of the device holding ``input``: -1, the CPU (ember's only device)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"get_device(): argument 'input' must be Tensor, not {type(input).__name__}")
    return -1


@overridable("ember")
def is_distributed(input: Tensor) -> bool:
    """False: an ember tensor lives in one process (ember.distributed sends copies)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"is_distributed(): argument 'input' must be Tensor, not {type(input).__name__}")
    return False


def compiled_with_cxx11_abi() -> bool:
    """True: C++ extensions built by ``ember.utils.cpp_extension`` use the C++11 ABI of the compiler at hand."""
    return True


def set_flush_denormal(mode: bool) -> bool:
    """Whether flushing subnormal floats to zero could be switched: False, NumPy offers no such switch, so
    ember computes with subnormals as they are (``mode`` is accepted and has no effect)."""
    return False


def set_warn_always(b: bool) -> None:
    """Show warnings that ember shows once per program every time instead (or once again, with False)."""
    _tensor.warn_always[0] = bool(b)


def is_warn_always_enabled() -> bool:
    """Whether ``set_warn_always(True)`` is in effect."""
    return _tensor.warn_always[0]


def is_vulkan_available() -> bool:
    """False: ember computes on the CPU with NumPy."""
    return False


def init_num_threads() -> None:
    """Nothing to do: NumPy's BLAS sets up its threads itself (see ``ember.set_num_threads``)."""


def set_default_tensor_type(t) -> None:
    """Deprecated, as in torch: make ``t``'s dtype (``ember.DoubleTensor``, or its name) the default floating
    dtype. Prefer ``ember.set_default_dtype``."""
    import warnings

    from ember import _legacy_types

    warnings.warn("set_default_tensor_type() is deprecated as of PyTorch 2.1; use ember.set_default_dtype() "
                  "instead (and ember.set_default_device() for the device)", UserWarning, stacklevel=2)
    if isinstance(t, str):
        name = t.rpartition(".")[2]
        t = getattr(_legacy_types, name, None)
        if t is None:
            raise TypeError(f"set_default_tensor_type: invalid type string {name!r}; pass e.g. 'ember.DoubleTensor'")
    dtype = getattr(t, "dtype", None)
    if dtype is None or not dtype.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type (got "
                        f"{getattr(t, '__name__', t)})")
    _dtype.set_default_dtype(dtype)
