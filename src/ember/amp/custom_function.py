"""``custom_fwd`` and ``custom_bwd``: a custom ``Function`` that behaves well inside ``autocast``.

Decorate ``forward`` with ``custom_fwd`` and ``backward`` with ``custom_bwd``: the backward then runs
under the same autocast state as the forward did. With ``custom_fwd(cast_inputs=dtype)``, inside an
enabled autocast the forward's floating-point tensor inputs (not float64 ones) are cast to ``dtype`` and
the forward runs with autocast off, so the Function computes in one known precision.

>>> import ember
>>> class Square(ember.autograd.Function):
...     @staticmethod
...     @ember.amp.custom_fwd(device_type="cpu", cast_inputs=ember.float32)
...     def forward(ctx, x):
...         ctx.save_for_backward(x)
...         return x * x
...     @staticmethod
...     @ember.amp.custom_bwd(device_type="cpu")
...     def backward(ctx, grad):
...         (x,) = ctx.saved_tensors
...         return 2 * x * grad
>>> x = ember.ones(2, dtype=ember.float16, requires_grad=True)
>>> with ember.autocast("cpu", dtype=ember.float16):
...     y = Square.apply(x)
>>> y.dtype
ember.float32
"""
from __future__ import annotations

import functools
from typing import Any, Callable

from ember._dtype import float64
from ember._tensor import Tensor
from ember.amp.autocast_mode import autocast, get_autocast_dtype, is_autocast_enabled

__all__ = ["custom_bwd", "custom_fwd"]


def _check_device_type(device_type: Any) -> None:
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")


def _cast(value: Any, dtype) -> Any:
    """Floating-point tensors in ``value`` (also in lists, tuples and dicts) cast to ``dtype``; float64 kept."""
    if isinstance(value, Tensor):
        eligible = value.is_floating_point() and value.dtype is not float64
        return value.to(dtype) if eligible else value
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(v, dtype) for v in value)
    if isinstance(value, dict):
        return {k: _cast(v, dtype) for k, v in value.items()}
    return value


def custom_fwd(fwd: Callable | None = None, *, device_type: str, cast_inputs=None) -> Callable:
    """Decorate a custom Function's ``forward`` for autocast (see the module's docstring)."""
    _check_device_type(device_type)
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def forward(ctx, *args, **kwargs):
        ctx._dtype = get_autocast_dtype(device_type)
        enabled = is_autocast_enabled(device_type)
        if cast_inputs is None or not enabled:
            ctx._fwd_used_autocast = enabled and cast_inputs is None
            return fwd(ctx, *args, **kwargs)
        ctx._fwd_used_autocast = False
        with autocast(device_type=device_type, enabled=False):
            return fwd(ctx, *_cast(args, cast_inputs), **_cast(kwargs, cast_inputs))

    return forward


def custom_bwd(bwd: Callable | None = None, *, device_type: str) -> Callable:
    """Decorate a custom Function's ``backward`` to run under the autocast state its forward ran in."""
    _check_device_type(device_type)
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def backward(ctx, *grads):
        if not ctx._fwd_used_autocast:
            with autocast(device_type=device_type, enabled=False):
                return bwd(ctx, *grads)
        with autocast(device_type=device_type, enabled=True, dtype=ctx._dtype):
            return bwd(ctx, *grads)

    return backward
