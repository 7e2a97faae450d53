"""``ShapeProp``: run a GraphModule on example inputs and record each node's tensor metadata."""
from __future__ import annotations

from typing import Any, NamedTuple

import ember
from ember.fx.interpreter import Interpreter
from ember.fx.node import Node, map_aggregate

__all__ = ["ShapeProp", "TensorMetadata"]


class TensorMetadata(NamedTuple):
    """What ShapeProp records of a tensor: enough to check shapes and layouts without keeping the data."""

    shape: ember.Size
    dtype: ember.dtype
    requires_grad: bool
    stride: tuple[int, ...]
    memory_format: Any
    is_quantized: bool
    qparams: dict[str, Any]


def _extract_tensor_metadata(result: ember.Tensor) -> TensorMetadata:
    memory_format = None
    for candidate in (ember.contiguous_format, ember.channels_last, ember.channels_last_3d):
        if result.is_contiguous(memory_format=candidate):
            memory_format = candidate
            break
    return TensorMetadata(result.shape, result.dtype, result.requires_grad, result.stride(), memory_format,
                          bool(getattr(result, "is_quantized", False)), {})


class ShapeProp(Interpreter):
    """Fills ``node.meta['tensor_meta']`` (a :class:`TensorMetadata`, or a structure of them) and
    ``node.meta['type']`` for every node, by running the module on ``propagate``'s inputs.

    >>> import ember.fx
    >>> gm = ember.fx.symbolic_trace(ember.nn.Sequential(ember.nn.Linear(3, 5)))
    >>> _ = ShapeProp(gm).propagate(ember.ones(2, 3))
    >>> [tuple(n.meta["tensor_meta"].shape) for n in gm.graph.nodes]
    [(2, 3), (2, 5), (2, 5)]
    """

    def run_node(self, n: Node) -> Any:
        result = super().run_node(n)
        found_tensor = False

        def extract(obj: Any) -> Any:
            nonlocal found_tensor
            if isinstance(obj, ember.Tensor):
                found_tensor = True
                return _extract_tensor_metadata(obj)
            return obj

        meta = map_aggregate(result, extract)
        if found_tensor:
            n.meta["tensor_meta"] = meta
        n.meta["type"] = type(result)
        return result

    def propagate(self, *args: Any) -> Any:
        """Run the module on ``args``, recording metadata; return its output."""
        return super().run(*args)
