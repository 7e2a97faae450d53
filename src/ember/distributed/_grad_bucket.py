"""``GradBucket``: what a DDP communication hook is handed, one bucket of flattened gradients."""
from __future__ import annotations

from ember._tensor import Tensor


class GradBucket:
    """Some parameters' gradients, flattened into one 1-D buffer that a communication hook reduces.

    ``buffer()`` is the flat tensor (in the bucket's memory: writing to it in place is seen by DDP),
    ``gradients()`` views of it shaped as ``parameters()``; buckets are numbered by ``index()`` in the
    order backward fills them, and ``is_last()`` is true for the last one of an iteration.
    """

    def __init__(self, index: int, buffer: Tensor, parameters: list, offsets: list[int], is_last: bool):
        self._index, self._buffer, self._parameters = index, buffer, parameters
        self._offsets, self._is_last = offsets, is_last

    def __repr__(self) -> str:
        return f"<ember.distributed.GradBucket {self._index}: {len(self._parameters)} parameters>"

    def index(self) -> int:
        return self._index

    def buffer(self) -> Tensor:
        return self._buffer

    def gradients(self) -> list[Tensor]:
        return [self._buffer.narrow(0, start, p.numel()).view(p.shape)
                for start, p in zip(self._offsets, self._parameters)]

    def parameters(self) -> list:
        return list(self._parameters)

    def is_last(self) -> bool:
        return self._is_last

    def set_buffer(self, buffer: Tensor) -> None:
        """Replace the bucket's tensor (a hook that reduces into a new tensor can hand it on this way)."""
        if not isinstance(buffer, Tensor) or buffer.shape != self._buffer.shape:
            got = tuple(buffer.shape) if isinstance(buffer, Tensor) else type(buffer).__name__
            raise ValueError(f"GradBucket.set_buffer: expected a tensor of shape {tuple(self._buffer.shape)}, "
                             f"got {got}")
        self._buffer = buffer
