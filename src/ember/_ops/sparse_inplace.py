"""In-place changes of a sparse COO tensor (``mul_``, ``div_``, ``add_``, ``copy_``, ``zero_``): the tensor takes
the out-of-place result's entries. As in torch, a leaf that requires grad refuses them while grad mode is on;
ember records no in-place change of a sparse tensor in the graph, so one with a history refuses them too.

>>> import ember
>>> s = ember.tensor([[0., 2.], [3., 0.]]).to_sparse()
>>> s.mul_(2).values()
tensor([4., 6.])
"""
from __future__ import annotations

import numpy as np

from ember._ops import sparse as S, sparse_math as M
from ember._tensor import version_counter
from ember.autograd.grad_mode import is_grad_enabled, no_grad


def check_in_place(input) -> None:
    """Refuse an in-place change of a sparse tensor that autograd would have to record."""
    if is_grad_enabled() and (input._requires_grad or input._grad_fn is not None):
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation."
                           if input._grad_fn is None else
                           "in-place operations on a sparse tensor with a history are not supported in ember; "
                           "use the out-of-place form")


def _takes(input, result) -> None:
    """``input`` becomes ``result`` (entries, pattern flag), its dtype kept, its version counted."""
    check_in_place(input)
    input._ind = result._ind
    input._val = result._val.astype(input._val.dtype, copy=False)
    input._coalesced = result._coalesced
    version_counter(input)[0] += 1


def in_place(compute, takes=_takes):
    """The in-place form of ``compute``: ``takes`` moves the result's entries into the input."""
    def change(input, *args, **kwargs):
        kwargs.pop("out", None)
        with no_grad():
            result = compute(input, *args, **kwargs)
        takes(input, result)
        return input

    return change


def _zero(input):
    return S.make(np.zeros((input._ind.shape[0], 0), np.int64), input._val[:0], input._data.shape, True)


def _copy(input, src, non_blocking=False):
    if not S.is_sparse(src):
        raise RuntimeError("copy_: a sparse tensor copies a sparse one; convert src with .to_sparse()")
    if src._data.shape != input._data.shape:
        raise RuntimeError(f"copy_: sizes differ: {list(input._data.shape)} and {list(src._data.shape)}")
    return S.make(src._ind.copy(), src._val.copy(), src._data.shape, src._coalesced)


def _divided(input, other, *, rounding_mode=None):
    if rounding_mode is not None:
        raise RuntimeError("div_: a sparse tensor is divided by a number, without rounding_mode")
    return S.scale(input, 1 / other)


IN_PLACE = {
    "mul_": in_place(M.mul),
    "div_": in_place(_divided),
    "add_": in_place(M.add),
    "sub_": in_place(M.sub),
    "neg_": in_place(M.neg),
    "copy_": in_place(_copy),
    "zero_": in_place(_zero),
}
