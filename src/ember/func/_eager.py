"""``functionalize`` and ``debug_unwrap``: torch.func's tools for its tensor wrappers, on ember's eager tensors.

ember runs every op at once on real arrays, with no tracing to rewrite, so a function's in-place ops
already have their effect when it returns: ``functionalize`` calls the function as it is, and with
``remove='mutations_and_views'`` gives outputs that do not share memory with the inputs, as torch's do.
The only wrapper ember has is vmap's ``BatchedTensor``, which ``debug_unwrap`` takes off.
"""
from __future__ import annotations

import functools
from typing import Callable

import numpy as np

from ember._tensor import Tensor
from ember.func import _tree
from ember.func._batched import BatchedTensor, batched

_REMOVE = ("mutations", "mutations_and_views")


def functionalize(func: Callable, *, remove: str = "mutations") -> Callable:
    """``func`` as a function without side effects on its own intermediate values; its results are ``func``'s.

    An input that ``func`` changes in place is changed after the call, as in torch. With
    ``remove='mutations_and_views'`` no output is a view of an input.

    >>> import ember
    >>> x = ember.zeros(3)
    >>> ember.func.functionalize(lambda t: t.add_(1) * 2)(x), x
    (tensor([2., 2., 2.]), tensor([1., 1., 1.]))
    """
    if remove not in _REMOVE:
        raise RuntimeError(
            f"functionalize(f, remove='mutations'): received invalid argument for remove={remove}. Valid options "
            "are: remove='mutations' (in-place and out= operators are replaced by out-of-place ones) or "
            "remove='mutations_and_views' (views are replaced by copies too)"
        )

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        inputs = [v for v in _tree.flatten((args, kwargs))[0] if _is_plain(v)]
        versions = [x._version for x in inputs]
        out = func(*args, **kwargs)
        mutated = [x for x, version in zip(inputs, versions) if x._version != version]
        leaves, spec = _tree.flatten(out)
        return _tree.unflatten([_unaliased(v, inputs, mutated, remove) for v in leaves], spec)

    return wrapped


def _is_plain(value) -> bool:
    return isinstance(value, Tensor) and type(value) is not BatchedTensor


def _shares(value: Tensor, tensors: list) -> bool:
    return any(np.may_share_memory(value._data, x._data) for x in tensors)


def _unaliased(value, inputs: list, mutated: list, remove: str):
    """``value`` as torch's functionalized program returns it: an output that aliases an input the call changed
    in place was computed out of place, so it is a copy; with views removed, so is any view of an input (an
    input returned as it is stays itself)."""
    if not _is_plain(value) or not _shares(value, inputs):
        return value
    if _shares(value, mutated):
        return value.clone()
    if remove == "mutations_and_views" and not any(value is x for x in inputs):
        return value.clone()
    return value


def debug_unwrap(tensor: Tensor, *, recurse: bool = True) -> Tensor:
    """The tensor under vmap's batched wrapper: every sample, with the batch dims in front (with ``recurse``
    False, only the innermost vmap's batch is unwrapped). Any other value is returned as it is.

    >>> import ember
    >>> ember.func.vmap(lambda x: ember.tensor(ember.func.debug_unwrap(x).shape))(ember.ones(4, 3))[0]
    tensor([4, 3])
    """
    if type(tensor) is not BatchedTensor:
        return tensor
    if recurse or len(tensor._levels) == 1:
        return tensor._value
    return batched(tensor._value, tensor._levels[:-1])
