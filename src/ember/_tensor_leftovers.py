"""The last small Tensor methods: ``is_set_to``, ``share_memory_``, ``storage_type``, ``module_load``,
``is_distributed``, and the ones a CPU-only build answers with an error (``reinforce``, ``ipu``, ``xpu``, ``mtia``).
``dim_order`` is in ``_dim_order``.

>>> import ember
>>> x = ember.zeros(3)
>>> x.is_set_to(x[:]), x.is_set_to(x.clone())
(True, False)
"""
from __future__ import annotations

import mmap

import numpy as np

from ember import _legacy_storages
from ember._ops._support import require_tensor
from ember._tensor import Tensor, torch_strides
from ember.storage import in_shared_memory
from ember.overrides import overridable

tensor_method = overridable("ember.Tensor")


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
    root, moving = self._data, (self,) if self._base is None else (self, self._base)
    while isinstance(root.base, np.ndarray):
        root = root.base
    if not (root.flags.c_contiguous or root.flags.f_contiguous):  # (a strided NumPy owner: this tensor alone moves)
        root, moving = np.ascontiguousarray(self._data), (self,)
        self._data = root
    buffer = mmap.mmap(-1, max(root.nbytes, 1))  # anonymous and MAP_SHARED: a forked child shares the pages
    np.frombuffer(buffer, np.uint8, root.nbytes)[:] = root.reshape(-1, order="A").view(np.uint8)
    for tensor in moving:
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


@tensor_method
def record_stream(self: Tensor, stream) -> None:
    """Refused: it marks a tensor as used by an accelerator stream, and ember has no streams (torch's CPU tensors
    refuse it too)."""
    raise RuntimeError(f"record_stream: unknown parameter type {type(stream).__name__}: it takes an accelerator "
                       "Stream, which ember (CPU only) has none of; CPU tensors need no stream bookkeeping")


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
