"""Data parallelism: ``DistributedDataParallel`` over processes (MPI comes in only when one is made), and
``DataParallel``, which on the CPU runs the module as it is."""
from ember.nn.parallel.data_parallel import DataParallel, data_parallel
from ember.nn.parallel.distributed import DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel"]
