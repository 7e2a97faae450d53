"""``opcheck``: does an operator keep the promises its registrations make?

The checks keep torch's names. What each one runs in ember, which compiles nothing and has no fake tensors:

- ``test_schema``: the kernel changes only the arguments the schema marks mutable, and returns what it declares.
- ``test_autograd_registration``: an op whose inputs require grad has an autograd formula (or a kernel made of
  ember ops); with one, and float64 inputs, ``gradcheck`` checks it.
- ``test_faketensor``: the fake implementation, run on real tensors, gives outputs of the kernel's number,
  shapes, dtypes and strides.
- ``test_aot_dispatch_static`` / ``test_aot_dispatch_dynamic``: what a compiled graph would need: a fake
  implementation, and a forward and backward that run.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

import ember
from ember._tensor import Tensor
from ember.library._custom_op import CustomOpDef, resolve
from ember.library._operator import IMPLICIT_KEY, AUTOGRAD_KEY, OpOverload, OpOverloadPacket

_DOUBLE = (ember.float64, ember.complex128)  # gradcheck's finite differences need double precision
DEFAULT_TEST_UTILS = ("test_schema", "test_autograd_registration", "test_faketensor", "test_aot_dispatch_dynamic")
ALL_TEST_UTILS = ("test_schema", "test_autograd_registration", "test_faketensor", "test_aot_dispatch_static",
                  "test_aot_dispatch_dynamic")


class OpCheckError(Exception):
    """A check of :func:`opcheck` failed (its cause is the check's own error)."""


def opcheck(op, args: tuple, kwargs: dict | None = None, *, test_utils: str | Sequence[str] = DEFAULT_TEST_UTILS,
            raise_exception: bool = True, atol=None, rtol=None) -> dict[str, Any]:
    """Check ``op`` on ``args``: a dict from each check's name to ``"SUCCESS"`` or the exception it raised.

    With ``raise_exception`` (the default) the first failure raises :class:`OpCheckError` instead.

    >>> import numpy as np
    >>> @ember.library.custom_op("doc_check::numpy_exp", mutates_args=())
    ... def numpy_exp(x: ember.Tensor) -> ember.Tensor:
    ...     return ember.from_numpy(np.exp(x.numpy()))
    >>> numpy_exp.register_fake(lambda x: ember.empty_like(x))
    <function <lambda> at ...>
    >>> ember.library.opcheck(numpy_exp, (ember.randn(3),))
    {'test_schema': 'SUCCESS', 'test_autograd_registration': 'SUCCESS', 'test_faketensor': 'SUCCESS', 'test_aot_dispatch_dynamic': 'SUCCESS'}
    """
    if not isinstance(op, (CustomOpDef, OpOverload, OpOverloadPacket)):
        raise ValueError(f"opcheck(op, ...): op must be an operator of ember.library (a CustomOpDef or an OpOverload "
                         f"such as ember.ops.mylib.foo.default), got {type(op)}")
    overload = resolve(op)
    names = (test_utils,) if isinstance(test_utils, str) else tuple(test_utils)
    if not set(names) <= set(ALL_TEST_UTILS):
        raise ValueError(f"opcheck(op, ..., test_utils={test_utils}), expected test_utils to be subset of "
                         f"{ALL_TEST_UTILS} but it was not")
    kwargs = kwargs or {}
    results = {}
    for name in names:
        try:
            _CHECKS[name](overload, args, kwargs)
            results[name] = "SUCCESS"
        except Exception as error:  # noqa: BLE001  (every failure is a result, as in torch)
            if raise_exception:
                raise OpCheckError(f"opcheck(op, ...): {name} failed with {error}") from error
            results[name] = error
    return results


# ---- copies of the arguments, so that one check's mutations do not reach the next

def _copy(value):
    if isinstance(value, Tensor):
        return value.detach().clone().requires_grad_(value.requires_grad)
    if isinstance(value, (list, tuple)):
        return type(value)(_copy(v) for v in value)
    return value


def _copies(args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    return _copy(args), {k: _copy(v) for k, v in kwargs.items()}


def _outputs(output) -> list:
    return list(output) if isinstance(output, (tuple, list)) else [output]


# ---- the checks

def _test_schema(op: OpOverload, args: tuple, kwargs: dict) -> None:
    args, kwargs = _copies(args, kwargs)
    front, back = op._schema.bind(args, kwargs)
    values = front + list(back.values())
    before = [_snapshot(v) for v in values]
    output = op(*args, **kwargs)
    for argument, value, saved in zip(op._schema.arguments, values, before):
        if not argument.mutable and _changed(value, saved):
            raise RuntimeError(f"Argument {argument.name} is not defined as mutable but was mutated")
    _check_returns(op, output)


def _snapshot(value):
    if isinstance(value, Tensor):
        return value.detach()._data.copy()
    if isinstance(value, list):
        return [_snapshot(v) for v in value]
    return None


def _changed(value, saved) -> bool:
    if isinstance(value, Tensor):
        data = value.detach()._data
        return data.shape != saved.shape or not np.array_equal(data, saved, equal_nan=data.dtype.kind in "fc")
    if isinstance(value, list):
        return any(_changed(v, s) for v, s in zip(value, saved))
    return False


def _check_returns(op: OpOverload, output) -> None:
    declared = op._schema.returns
    if declared == ("()",) or declared == ():
        if output is not None:
            raise RuntimeError(f"{op.name()}: the schema returns nothing but the kernel returned "
                               f"{type(output).__name__}")
        return
    outputs = output if len(declared) > 1 else (output,)
    if len(declared) > 1 and (not isinstance(output, tuple) or len(output) != len(declared)):
        raise RuntimeError(f"{op.name()}: the schema returns {len(declared)} values but the kernel returned "
                           f"{type(output).__name__} {'of ' + str(len(output)) if isinstance(output, tuple) else ''}")
    for i, (kind, value) in enumerate(zip(declared, outputs)):
        if kind.startswith("Tensor") and "[" not in kind and not isinstance(value, Tensor):
            raise RuntimeError(f"{op.name()}: return {i} is declared a Tensor but the kernel returned "
                               f"{type(value).__name__}")


def _test_autograd_registration(op: OpOverload, args: tuple, kwargs: dict) -> None:
    flat = [t for t in _tensor_leaves((args, kwargs))]
    if not any(t.requires_grad for t in flat):
        return
    has_formula = op._custom or op._autograd is not None or op._kernels.keys() & {IMPLICIT_KEY, AUTOGRAD_KEY}
    if not has_formula:
        raise AssertionError(
            f"{op.name()}: an input requires grad but the operator has no autograd formula. Register one with "
            "ember.library.register_autograd, or, if the kernel is made of ember ops, register it as "
            "CompositeImplicitAutograd so that its ops differentiate it."
        )
    if op._autograd is not None and all(t.dtype in _DOUBLE for t in flat if t.requires_grad):
        _gradcheck(op, args, kwargs)


def _tensor_leaves(value):
    if isinstance(value, Tensor):
        yield value
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _tensor_leaves(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _tensor_leaves(v)


def _gradcheck(op: OpOverload, args: tuple, kwargs: dict) -> None:
    """gradcheck of the op as a function of its inputs that require grad (the rest held as they are)."""
    from ember.autograd import gradcheck

    args, kwargs = _copies(args, kwargs)
    leaves = [t for t in _tensor_leaves((args, kwargs)) if t.requires_grad]

    def with_inputs(*inputs):
        swap = dict(zip(map(id, leaves), inputs))
        rebuilt = _replaced((args, kwargs), swap)
        return tuple(_tensor_leaves(op(*rebuilt[0], **rebuilt[1])))  # (a Tensor[] among the results: its tensors)

    gradcheck(with_inputs, tuple(leaves))


def _replaced(value, swap: dict):
    if isinstance(value, Tensor):
        return swap.get(id(value), value)
    if isinstance(value, (list, tuple)):
        return type(value)(_replaced(v, swap) for v in value)
    if isinstance(value, dict):
        return {k: _replaced(v, swap) for k, v in value.items()}
    return value


def _test_faketensor(op: OpOverload, args: tuple, kwargs: dict) -> None:
    _require_fake(op)
    real_args, real_kwargs = _copies(args, kwargs)
    real = _outputs(op(*real_args, **real_kwargs))
    front, back = op._schema.bind(*_copies(args, kwargs))
    fake = _outputs(op._fake(*front, **back))
    if len(real) != len(fake):
        raise RuntimeError(f"When comparing the output of {op} on the fake implementation and the kernel, found "
                           f"{len(fake)} outputs from the fake implementation and {len(real)} from the kernel")
    for i, (r, f) in enumerate(zip(real, fake)):
        _compare_metadata(op, i, r, f)


def _require_fake(op: OpOverload) -> None:
    if op._fake is None:
        name = op._schema.name.split("::")[1]
        raise RuntimeError(f"There was no fake impl registered for {op}: programs that compile or export the op "
                           f"need one (they trace it without data). Please use `{name}.register_fake` to add one.")


def _compare_metadata(op: OpOverload, i: int, real, fake) -> None:
    where = f"When comparing output {i} of {op} on the fake implementation and the kernel, found mismatched"
    if isinstance(real, Tensor) != isinstance(fake, Tensor):
        raise RuntimeError(f"{where} types: {type(real).__name__} (kernel) and {type(fake).__name__} (fake)")
    if not isinstance(real, Tensor):
        return
    for what, r, f in (("Shapes", real.shape, fake.shape), ("Dtypes", real.dtype, fake.dtype),
                       ("Devices", real.device, fake.device)):
        if r != f:
            raise RuntimeError(f"{where} tensor metadata: {what} {r} (kernel) and {f} (fake) are not equal!")
    if real.numel() > 1 and real.stride() != fake.stride():
        raise RuntimeError(f"{where} tensor metadata: Strides {real.stride()} (kernel) and {fake.stride()} (fake) "
                           "are not equal!")


def _test_aot_dispatch(op: OpOverload, args: tuple, kwargs: dict) -> None:
    """ember compiles nothing: check what compiling would need, the fake, and a forward and backward that run."""
    _require_fake(op)
    args, kwargs = _copies(args, kwargs)
    outputs = [o for o in _tensor_leaves(op(*args, **kwargs)) if o.requires_grad]
    if outputs:
        from ember.autograd import backward

        backward(outputs, [o.new_ones(o.shape) for o in outputs])


_CHECKS = {
    "test_schema": _test_schema,
    "test_autograd_registration": _test_autograd_registration,
    "test_faketensor": _test_faketensor,
    "test_aot_dispatch_static": _test_aot_dispatch,
    "test_aot_dispatch_dynamic": _test_aot_dispatch,
}
