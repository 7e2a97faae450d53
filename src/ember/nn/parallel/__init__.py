"""Data parallelism over processes: ``DistributedDataParallel`` (MPI comes in only when one is made)."""
from ember.nn.parallel.distributed import DistributedDataParallel

__all__ = ["DistributedDataParallel"]
