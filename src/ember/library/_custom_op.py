"""``custom_op`` and the ``register_*`` functions: a Python (or NumPy, or C) kernel made an operator."""
from __future__ import annotations

import re
from typing import Callable, Iterable, Sequence

from ember.library import _operator
from ember.library._operator import ANY_DEVICE, OpOverload, OpOverloadPacket
from ember.library._schema import infer_schema, parse_schema

_DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga", "maia",
                 "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


class CustomOpDef:
    """What ``custom_op`` returns: call it as the op, and register its autograd, fake, kernels and vmap rule."""

    def __init__(self, overload: OpOverload, schema: str):
        self._opoverload = overload
        self._schema = schema  # as written or inferred, "(Tensor x, float k=1.0) -> Tensor"
        self._namespace, self._name = overload._schema.name.split("::")

    def __repr__(self) -> str:
        return f"<CustomOpDef({self._namespace}::{self._name})>"

    def __call__(self, /, *args, **kwargs):
        return self._opoverload(*args, **kwargs)


    def register_autograd(self, backward: Callable, /, *, setup_context: Callable | None = None) -> None:
        """See :func:`ember.library.register_autograd`."""
        register_autograd(self, backward, setup_context=setup_context)

    def register_fake(self, fn: Callable, /) -> Callable:
        """See :func:`ember.library.register_fake`."""
        return register_fake(self, fn)

    def register_kernel(self, device_types: str | Sequence[str] | None, fn: Callable | None = None, /):
        """See :func:`ember.library.register_kernel`."""
        return register_kernel(self, device_types, fn)

    def register_vmap(self, fn: Callable | None = None, /):
        """See :func:`ember.library.register_vmap`."""
        return register_vmap(self, fn)


def custom_op(name: str, fn: Callable | None = None, /, *, mutates_args: str | Iterable[str],
              device_types: str | Sequence[str] | None = None, schema: str | None = None, tags=None):
    """Make ``fn`` (a kernel written in anything: ember ops, NumPy, C) an operator ``ember.ops.<ns>.<name>``.

    ``name`` is ``"namespace::opname"``. The schema is read from ``fn``'s type hints unless ``schema`` is
    given. ``mutates_args`` names the arguments ``fn`` changes in place (``()`` for none, ``"unknown"`` for
    any tensor). The op does not differentiate until :func:`register_autograd` gives it a backward.

    >>> import numpy as np
    >>> @ember.library.custom_op("doc::numpy_sin", mutates_args=())
    ... def numpy_sin(x: ember.Tensor) -> ember.Tensor:
    ...     return ember.from_numpy(np.sin(x.numpy()))
    >>> numpy_sin(ember.zeros(2))
    tensor([0., 0.])
    >>> ember.ops.doc.numpy_sin.default._schema
    doc::numpy_sin(Tensor x) -> Tensor
    """
    namespace, opname = _split_name(name)

    def define(fn: Callable) -> CustomOpDef:
        text = schema if schema is not None else infer_schema(fn, mutates_args=mutates_args)
        overload = _operator.add(parse_schema(text, name=f"{namespace}::{opname}"), replace=True)
        overload._custom = True
        for device_type in _device_types(device_types):
            overload._kernels[device_type] = fn
        return CustomOpDef(overload, text)

    return define if fn is None else define(fn)


def _split_name(name: str) -> tuple[str, str]:
    namespace, sep, opname = name.partition("::")
    if not sep:
        raise ValueError(f"custom_op: expected a name of the form 'namespace::opname' (e.g. 'mylib::my_sin'), got "
                         f"{name!r}")
    for part in (namespace, opname):
        if not _IDENTIFIER.match(part):
            raise RuntimeError(f"custom_op: {part!r} in {name!r} is not a valid identifier; the namespace and the op "
                               "name must be made of letters, digits and underscores")
    return namespace, opname


def _device_types(device_types: str | Sequence[str] | None) -> list:
    if device_types is None:
        return [ANY_DEVICE]
    names = [device_types] if isinstance(device_types, str) else list(device_types)
    for d in names:
        if d not in _DEVICE_TYPES:
            raise RuntimeError(f"Expected one of {', '.join(_DEVICE_TYPES)} device type at start of device string: "
                               f"{d}")
    return names


def resolve(op) -> OpOverload:
    """The overload that ``op`` (a CustomOpDef, an OpOverload, a packet or ``"ns::name"``) stands for."""
    if isinstance(op, CustomOpDef):
        return op._opoverload
    if isinstance(op, OpOverload):
        return op
    if isinstance(op, OpOverloadPacket):
        return op.default
    if isinstance(op, str):
        return _operator.find(op)
    raise TypeError(f"expected an operator: a CustomOpDef, an ember.ops OpOverload or a 'namespace::name' string, "
                    f"got {type(op).__name__}")


def register_autograd(op, backward: Callable, /, *, setup_context: Callable | None = None, lib=None) -> None:
    """Give ``op`` a backward: ``backward(ctx, *grad_outputs)`` returns one gradient per input (None for those
    that are not tensors, a list for a ``Tensor[]``). ``setup_context(ctx, inputs, output)`` saves what it needs.

    The op then runs as the forward of an ``ember.autograd.Function`` whose backward is ``backward``.

    >>> import numpy as np
    >>> @ember.library.custom_op("doc::cube", mutates_args=())
    ... def cube(x: ember.Tensor) -> ember.Tensor:
    ...     return ember.from_numpy(x.numpy() ** 3)
    >>> def setup_context(ctx, inputs, output):
    ...     ctx.save_for_backward(inputs[0])
    >>> def backward(ctx, grad):
    ...     (x,) = ctx.saved_tensors
    ...     return grad * 3 * x ** 2
    >>> cube.register_autograd(backward, setup_context=setup_context)
    >>> x = ember.tensor([2.0], dtype=ember.float64, requires_grad=True)
    >>> ember.autograd.gradcheck(cube, (x,))
    True
    """
    overload = resolve(op)
    if overload._mutates:
        raise RuntimeError(
            f"Cannot register autograd formula for non-functional operator {op!r} with schema {overload._schema}: "
            "it mutates its inputs. Please create a functional operator (one that returns new tensors) and register "
            "an autograd formula for that."
        )
    if not callable(backward) or (setup_context is not None and not callable(setup_context)):
        raise TypeError("register_autograd: expected backward (and setup_context, if given) to be callable")
    overload._autograd = (backward, setup_context)


def register_fake(op, func: Callable | None = None, /, *, lib=None, _stacklevel: int = 1, allow_override: bool = True):
    """Say what ``op`` returns without computing it: ``func`` takes the op's arguments and returns tensors of the
    right shapes, dtypes and strides (``x.new_empty(...)``). ember has no fake tensors; :func:`opcheck` runs
    ``func`` on real tensors and compares its outputs' metadata with the kernel's."""
    overload = resolve(op)

    def register(func: Callable) -> Callable:
        overload._fake = func
        return func

    return register if func is None else register(func)


def register_kernel(op, device_types: str | Sequence[str] | None, func: Callable | None = None, /, *, lib=None):
    """Give ``op`` a kernel for ``device_types`` (``"cpu"``, or None for every device). ember runs on the CPU:
    kernels for other devices are kept, not run."""
    overload = resolve(op)
    keys = _device_types(device_types)

    def register(func: Callable) -> Callable:
        for key in keys:
            overload._kernels[key] = func
        return func

    return register if func is None else register(func)


def register_vmap(op, func: Callable | None = None, /, *, lib=None):
    """Give ``op`` a batching rule for ``ember.vmap``: ``func(info, in_dims, *args)`` returns
    ``(outputs, out_dims)``, as an ``autograd.Function``'s ``vmap`` staticmethod does. An op without one is
    run once per sample and the results stacked."""
    overload = resolve(op)

    def register(func: Callable) -> Callable:
        overload._vmap = func
        return func

    return register if func is None else register(func)
