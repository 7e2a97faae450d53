"""The state of ``saved_tensors_hooks`` (ember.autograd.graph) that ``Function`` reads when a node saves tensors."""
from __future__ import annotations

from typing import Callable

from ember._tensor import Tensor
from ember.autograd.grad_mode import state as _grad

saved_hooks_stack: list = []  # (pack, unpack) of each active saved_tensors_hooks, innermost last
_PACK_MODIFIED_INPUT = (
    "A saved tensor pack hook is modifying its input in place. Tensors provided as input to pack hook cannot be "
    "modified by in-place operations as this can lead to unexpected side-effects. Return a modified copy instead, "
    "e.g. t.clone().mul_(2) rather than t.mul_(2)."
)


class SavedPack:
    """What a node keeps for one saved tensor while hooks are on: the packed value and how to unpack it."""

    __slots__ = ("packed", "unpack_hook", "counter", "output_nr", "source", "shape")

    def __init__(self, value: Tensor, output_nr: int, pack_hook: Callable, unpack_hook: Callable):
        version = value._version
        self.shape = value._data.shape
        self.packed = pack_hook(value)
        if value._version != version:  # the forward goes on with the changed tensor: its result would be wrong
            raise RuntimeError(_PACK_MODIFIED_INPUT)
        self.unpack_hook, self.output_nr = unpack_hook, output_nr
        self.counter = value._vc
        self.source = None  # where an input was in the graph, for double backward through what unpack returns
        if output_nr < 0 and value.requires_grad:
            from ember.autograd.graph import stand_in

            self.source = value if value.grad_fn is None else stand_in(value)

    def unpack(self, node, arrays: bool):
        """The tensor ``unpack`` gives back (as an array when backward runs on arrays; a saved output re-attached
        to its node, so double backward flows through it)."""
        value = self.unpack_hook(self.packed)
        if not isinstance(value, Tensor):
            raise TypeError(f"unpack_hook should return a Tensor, but returned {type(value).__name__}")
        if value._data.shape != self.shape:
            _check_unpacked_shape(node, self.shape, value._data.shape)
        if arrays:
            return value._data
        if self.output_nr >= 0:
            return node._saved_output(value._data, self.counter or [0], self.output_nr)
        if self.source is not None and _grad.enabled:  # a backward that records its own graph
            from ember.autograd.graph import reattach

            return reattach(self.source, value)
        return value




def _check_unpacked_shape(node, saved: tuple, unpacked: tuple) -> None:
    """An unpacked tensor of another shape meets the backward formula's other operands, whose shapes follow the
    saved one: as torch's formula, refuse one that cannot broadcast with it (NumPy's would raise a ValueError)."""
    from ember._ops._support import check_broadcast

    check_broadcast(f"{node.name()} (a tensor returned by a saved tensor unpack_hook)", saved, unpacked)
