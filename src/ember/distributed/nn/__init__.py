"""Differentiable collectives: gradients flow back across ranks (``ember.distributed.nn.functional``)."""
from ember.distributed.nn.functional import all_gather, all_reduce, broadcast

__all__ = ["all_gather", "all_reduce", "broadcast"]
