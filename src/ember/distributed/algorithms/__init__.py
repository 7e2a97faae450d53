"""Training algorithms on top of the collectives: ``Join`` for uneven inputs, DDP's communication hooks."""
from ember.distributed.algorithms.join import Join, Joinable, JoinHook

__all__ = ["Join", "JoinHook", "Joinable"]
