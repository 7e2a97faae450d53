"""The last small Tensor methods: ``dim_order``, ``is_set_to``, ``share_memory_``, ``storage_type``,
``module_load``, and the ones a CPU-only build answers with an error (``reinforce``, ``ipu``, ``xpu``, ``mtia``).

>>> import ember
>>> ember.ones(2, 3, 4).permute(2, 0, 1).dim_order()
(1, 2, 0)
>>> x = ember.zeros(3)
>>> x.is_set_to(x[:]), x.is_set_to(x.clone())
(True, False)
"""
from __future__ import annotations

import mmap

import numpy as np

from ember import _legacy_storages
from ember._ops._support import require_tensor
from ember._ops.copy import channels_last, channels_last_3d, contiguous_format, memory_format
from ember._tensor import Tensor, torch_strides
from ember.storage import in_shared_memory
from ember.overrides import overridable

tensor_method = overridable("ember.Tensor")

# The order in which each memory format lays the dims out, innermost first.
_INNERMOST_FIRST = {channels_last: (1, 3, 2, 0), channels_last_3d: (1, 4, 3, 2, 0)}
_AMBIGUOUS = "The tensor does not have unique dim order, or cannot map to exact one of the given memory formats."


def is_contiguous_as(shape: tuple, strides: tuple, layout: memory_format) -> bool:
    """Whether ``strides`` are those of a dense tensor of ``shape`` laid out in ``layout``; as torch, a dim of
    size 1 may have any stride, and channels_last (channels_last_3d) applies to 4-d (5-d) tensors only.

    >>> is_contiguous_as((2, 3, 4, 5), (60, 1, 15, 3), channels_last)
    True
    """
    if layout is contiguous_format:
        order = tuple(reversed(range(len(shape))))
    elif len(shape) == len(_INNERMOST_FIRST.get(layout, ())):
        order = _INNERMOST_FIRST[layout]
    else:
        return False
    expected = 1
    for dim in order:
        if shape[dim] != 1:
            if strides[dim] != expected:
                return False
            expected *= shape[dim]
    return True


def is_contiguous_in(x: Tensor, layout: memory_format) -> bool:
    """``x.is_contiguous(memory_format=layout)``: whether ``x`` is dense in ``layout`` (``preserve_format`` asks as
    ``contiguous_format`` does, as in torch)."""
    if not isinstance(layout, memory_format):
        raise TypeError(f"is_contiguous(): argument 'memory_format' must be ember.memory_format, not "
                        f"{type(layout).__name__}")
    if layout.dims_outer_to_inner is None:
        return x._data.flags.c_contiguous
    return is_contiguous_as(tuple(x._data.shape), torch_strides(x._data), layout)


@tensor_method
def dim_order(self: Tensor, *, ambiguity_check: bool | list = False) -> tuple:
    """The dims from the outermost in memory to the innermost (``(0, 1, 2)`` for a contiguous tensor).

    A dim of size 1, or two dims of equal stride, could stand in either order: ``ambiguity_check=True``
    makes that an error, and a list of memory formats lets the tensor through if it is dense in exactly
    one of them.

    >>> ember.ones(2, 3, 4, 5).to(memory_format=ember.channels_last).dim_order()
    (0, 2, 3, 1)
    """
    formats = _check_ambiguity_argument(ambiguity_check)
    shape, strides = tuple(self._data.shape), torch_strides(self._data)
    check = ambiguity_check if isinstance(ambiguity_check, bool) else True
    if check and _several_orders(shape, strides) and \
            sum(is_contiguous_as(shape, strides, f) for f in formats) != 1:
        raise RuntimeError(_AMBIGUOUS)
    order = _outermost_first(shape, strides)
    if ambiguity_check and any(_compare(shape, strides, a, b) != 1 for a, b in zip(order, order[1:])):
        raise RuntimeError("The tensor does not have unique dim order.")
    return order


def _check_ambiguity_argument(ambiguity_check) -> list:
    """The memory formats ``ambiguity_check`` lists (none for a bool); anything else is a TypeError."""
    if isinstance(ambiguity_check, bool):
        return []
    if isinstance(ambiguity_check, list) and all(isinstance(f, memory_format) for f in ambiguity_check):
        return ambiguity_check
    raise TypeError("The ambiguity_check argument must be a bool or a list of memory formats.")


def _several_orders(shape: tuple, strides: tuple) -> bool:
    return 1 in shape or any(a == b for a, b in zip(strides, strides[1:]))


def _outermost_first(shape: tuple, strides: tuple) -> tuple:
    """Dims sorted by stride, outermost first, as torch sorts them: a dense layout is read off directly, and
    otherwise an insertion sort from the last dim back that leaves dims it cannot tell apart in place."""
    ndim = len(shape)
    if ndim < 2:
        return tuple(range(ndim))
    dense, last = is_contiguous_as(shape, strides, contiguous_format), is_contiguous_as(shape, strides, channels_last)
    if dense != last:
        return tuple(range(ndim)) if dense else (0, *range(2, ndim), 1)
    order = list(reversed(range(ndim)))  # innermost first while sorting
    for i in range(1, ndim):
        moving = i
        for j in reversed(range(i)):
            comparison = _compare(shape, strides, order[j], order[moving])
            if comparison == 1:
                order[j], order[moving] = order[moving], order[j]
                moving = j
            elif comparison == -1:
                break
    return tuple(reversed(order))


def _compare(shape: tuple, strides: tuple, a: int, b: int) -> int:
    """1 if dim ``a`` lies outside dim ``b`` in memory, -1 if inside, 0 if they cannot be told apart."""
    stride_a, stride_b = strides[a], strides[b]
    if stride_a == 0 or stride_b == 0:
        return 0
    if stride_a == stride_b:
        return 0 if _at_least(shape[b], shape[a]) else 1
    if _at_least(stride_b, stride_a):
        return -1
    return 1 if _at_least(stride_a, stride_b) else 0


def _at_least(a: int, b: int) -> bool:
    return b == 0 or (a != 0 and (a >= b or a % b == 0))


@tensor_method
def is_set_to(self: Tensor, tensor: Tensor) -> bool:
    """Whether ``tensor`` is this very view of the same memory: the same start, sizes and strides.

    >>> x = ember.zeros(2, 3)
    >>> x.is_set_to(x.detach()), x.is_set_to(x.view(3, 2))
    (True, False)
    """
    if not isinstance(tensor, Tensor):
        raise TypeError(f"is_set_to(): argument 'tensor' (position 1) must be Tensor, not {type(tensor).__name__}")
    mine, theirs = self._data, tensor._data
    return (_memory_owner(mine) is _memory_owner(theirs) and mine.shape == theirs.shape and
            mine.__array_interface__["data"][0] == theirs.__array_interface__["data"][0] and
            torch_strides(mine) == torch_strides(theirs))


def _memory_owner(array: np.ndarray):
    """The object that holds ``array``'s memory: the first base that is not an array (an mmap, bytes), or the
    last array."""
    while isinstance(array.base, np.ndarray):
        array = array.base
    return array if array.base is None else array.base


@tensor_method
def share_memory_(self: Tensor) -> Tensor:
    """Move this tensor's memory into shared memory (an anonymous shared mapping), so that a process forked
    afterwards sees this process's writes and this process sees its. A view moves its base along; other views
    taken before the move keep the old memory.

    >>> x = ember.ones(3)
    >>> x.share_memory_() is x, x.is_shared()
    (True, True)
    """
    if in_shared_memory(self._data):
        return self
    root = self._data
    while isinstance(root.base, np.ndarray):
        root = root.base
    if not (root.flags.c_contiguous or root.flags.f_contiguous):  # (a strided NumPy owner: this tensor alone moves)
        root = self._data = np.ascontiguousarray(self._data)
    buffer = mmap.mmap(-1, max(root.nbytes, 1))  # anonymous and MAP_SHARED: a forked child shares the pages
    np.frombuffer(buffer, np.uint8, root.nbytes)[:] = root.reshape(-1, order="A").view(np.uint8)
    for tensor in (self, self._base):
        if tensor is not None:
            tensor._data = _on_buffer(tensor._data, root, buffer)
    return self


def _on_buffer(array: np.ndarray, root: np.ndarray, buffer: mmap.mmap) -> np.ndarray:
    """``array``, a view into ``root``, as the same view into ``buffer``, which holds a copy of ``root``'s bytes."""
    offset = array.__array_interface__["data"][0] - root.__array_interface__["data"][0] if array.size else 0
    return np.ndarray(array.shape, array.dtype, buffer, offset, array.strides)


@tensor_method
def storage_type(self: Tensor):
    """The legacy storage class of this tensor's dtype (``ember.FloatStorage`` for float32); None for a dtype
    that has none (uint16, uint32, uint64), as in torch.

    >>> ember.ones(2, dtype=ember.int64).storage_type()
    <class 'ember.LongStorage'>
    """
    return _legacy_storages.OF_DTYPE.get(self.dtype)


@tensor_method
def module_load(self: Tensor, other: Tensor, assign: bool = False) -> Tensor:
    """What ``other``, the state dict's value for this parameter or buffer, becomes when loaded into it:
    ``other.detach()`` with ``assign``, else this tensor with ``other``'s values copied in, detached. Override
    it in a subclass to transform values as they load.

    >>> ember.zeros(2).module_load(ember.ones(2))
    tensor([1., 1.])
    """
    other = require_tensor(other, "module_load", 1, "other")
    if assign:
        return other.detach()
    return self.copy_(other).detach()


@tensor_method
def is_distributed(self: Tensor) -> bool:
    """False: an ember tensor lives in one process (``ember.distributed`` moves copies between processes).

    >>> ember.ones(2).is_distributed()
    False
    """
    return False


@tensor_method
def reinforce(self: Tensor, reward) -> None:
    """Removed in torch 0.4: raises, pointing to ``ember.distributions``."""
    raise RuntimeError(
        "reinforce() was removed.\nUse ember.distributions instead: sample an action from a distribution, then "
        "minimise -dist.log_prob(action) * reward, e.g.\n    m = ember.distributions.Categorical(probs)\n"
        "    action = m.sample()\n    loss = -m.log_prob(action) * reward\n    loss.backward()"
    )


def _no_device(kind: str, error: type, message: str):
    def to_device(self: Tensor, device=None, non_blocking: bool = False, *, memory_format=None) -> Tensor:
        raise error(message)

    to_device.__name__ = to_device.__qualname__ = kind
    to_device.__doc__ = f"Refused, as by torch's CPU build: ember has no {kind.upper()} devices."
    return tensor_method(to_device)


ipu = _no_device("ipu", RuntimeError, "ember is not linked with support for ipu devices (it runs on the CPU "
                                      "only; keep the tensor where it is)")
xpu = _no_device("xpu", AssertionError, "ember not compiled with XPU enabled (it runs on the CPU only)")
mtia = _no_device("mtia", AssertionError, "ember not compiled with MTIA enabled (it runs on the CPU only)")
