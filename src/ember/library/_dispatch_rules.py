"""Registrations for a custom op beyond its kernels: an autocast rule, the fall-through marker, a kernel looked
up by dispatch key, and (refused) a ``__torch_dispatch__`` rule.

>>> @ember.library.custom_op("doc_rules::add", mutates_args=())
... def add(x: ember.Tensor, y: ember.Tensor) -> ember.Tensor:
...     return x + y
>>> ember.library.register_autocast("doc_rules::add", "cpu", ember.bfloat16)
>>> with ember.autocast("cpu"):
...     add(ember.ones(2), ember.ones(2)).dtype
ember.bfloat16
"""
from __future__ import annotations

from typing import Any, Callable

from ember.library._custom_op import resolve
from ember.library._operator import OpOverload

# the device types torch has an autocast dispatch key for
_AUTOCAST_DEVICES = ("cpu", "cuda", "hpu", "ipu", "mps", "xpu", "privateuseone")


def fallthrough_kernel(*args: Any, **kwargs: Any) -> None:
    """A marker, not a kernel: registered for a dispatch key (``lib.impl(name, fallthrough_kernel, key)``) it
    says the op has nothing of its own there. It is never called."""
    raise NotImplementedError("fallthrough_kernel() should never be called.")


def register_autocast(op, device_type: str, cast_inputs, /, *, lib=None) -> None:
    """In an autocast region of ``device_type``, run ``op`` with its floating tensors cast to ``cast_inputs``
    (other values as they are) and autocast off inside it."""
    if not isinstance(device_type, str) or device_type not in _AUTOCAST_DEVICES:
        raise AttributeError(
            f"register_autocast: there is no autocast for device type {device_type!r}; use one of "
            f"{', '.join(_AUTOCAST_DEVICES)}"
        )
    resolve(op)._autocast[device_type] = cast_inputs


def autocast_device(overload: OpOverload) -> str | None:
    """The device type of the autocast region ``overload`` is called in, if it has a rule for it."""
    from ember.amp.autocast_mode import is_autocast_enabled

    for device in overload._autocast:
        if is_autocast_enabled(device):
            return device
    return None


def run_autocast(overload: OpOverload, device: str, front: list, back: dict):
    """``overload`` on values cast by its rule for ``device``, with that device's autocast off."""
    from ember.amp.autocast_mode import autocast

    dtype = overload._autocast[device]
    front = [_cast(value, dtype) for value in front]
    back = {name: _cast(value, dtype) for name, value in back.items()}
    with autocast(device, enabled=False):
        return overload.run_bound(front, back)


def _cast(value, dtype):
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(v, dtype) for v in value)
    if getattr(value, "is_floating_point", None) is not None and value.is_floating_point():
        return value.to(dtype)
    return value


class KernelFunction:
    """The kernel ``get_kernel`` found: ``call_boxed(keyset, *args, **kwargs)`` runs it on the op's arguments."""

    def __init__(self, overload: OpOverload, kernel: Callable) -> None:
        self.op_handle = overload
        self._kernel = kernel

    def call_boxed(self, keyset, *args: Any, **kwargs: Any) -> Any:
        """Run the kernel (``keyset`` says where dispatch would go next; ember's kernels call no further)."""
        return self._kernel(*args, **kwargs)

    def __repr__(self) -> str:
        return f"SafeKernelFunction(debug='the {self.op_handle.name()} kernel {self._kernel.__qualname__}')"


def get_kernel(op, dispatch_key) -> KernelFunction:
    """The kernel ``op`` runs for ``dispatch_key`` (``"CPU"``, ``"CompositeExplicitAutograd"`` ...), to call from
    a kernel registered in its place.

    >>> @ember.library.custom_op("doc_rules::twice", mutates_args=())
    ... def twice(x: ember.Tensor) -> ember.Tensor:
    ...     return x * 2
    >>> ember.library.get_kernel("doc_rules::twice", "CPU").call_boxed(None, ember.ones(1))
    tensor([2.])
    """
    from ember.library._library import _DISPATCH_KEYS

    key = getattr(dispatch_key, "name", dispatch_key)
    try:
        overload = resolve(op)
    except AttributeError:
        raise RuntimeError(f"get_kernel: operator {op!r} does not exist; define it first") from None
    if key not in _DISPATCH_KEYS:
        raise RuntimeError(f"get_kernel: unknown dispatch key {key!r}; use one of "
                           f"{', '.join(k for k in _DISPATCH_KEYS if k)}")
    kernel = overload._kernels.get(_DISPATCH_KEYS[key])
    if kernel is None and key == "CPU":
        kernel = overload.kernel()  # the CPU runs the op's device-independent kernel where it has no CPU one
    if kernel is None:
        raise RuntimeError(f"get_kernel: {overload.name()} has no kernel for dispatch key {key!r}")
    return KernelFunction(overload, kernel)


def register_torch_dispatch(op, torch_dispatch_class, func: Callable | None = None, /, *, lib=None):
    """Not in ember: a ``__torch_dispatch__`` rule runs below autograd, at the dispatcher, and ember has no
    dispatcher under its ops (subclasses and modes act through ``__torch_function__``). Raises, saying so."""
    raise NotImplementedError(
        f"register_torch_dispatch({op!r}, {getattr(torch_dispatch_class, '__name__', torch_dispatch_class)}): "
        "ember has no __torch_dispatch__ (no dispatcher below its ops); override the op for a Tensor subclass or "
        "a mode with __torch_function__ instead (ember.overrides.TorchFunctionMode)"
    )
