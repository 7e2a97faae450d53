"""Data-parallel computing over TCP or MPI, with ``torch.distributed``'s API.

Start the processes with ``ember.multiprocessing.spawn`` (or any launcher that sets ``MASTER_ADDR``,
``MASTER_PORT``, ``RANK`` and ``WORLD_SIZE``) and call ``init_process_group("gloo", ...)``: the TCP
backend needs only the standard library. Or start them with ``python -m ember.distributed.run
--nproc-per-node N script.py`` (``mpiexec -n N python script.py``) to run on MPI, loaded only then from
the ``distributed`` extra (``pip install 'ember[distributed]'``). Run alone, a script is a world of one
process:

>>> import ember, ember.distributed as dist
>>> dist.init_process_group("mpi")
>>> dist.get_rank(), dist.get_world_size()
(0, 1)
>>> t = ember.tensor([1.0, 2.0])
>>> dist.all_reduce(t, op=dist.ReduceOp.MAX)
>>> t
tensor([1., 2.])
>>> work = dist.all_reduce(t, async_op=True)
>>> work.wait()
True
>>> dist.destroy_process_group()
"""
from ember.distributed._collectives import (
    all_gather, all_gather_into_tensor, all_gather_single, all_reduce, all_to_all, all_to_all_single, barrier,
    broadcast, gather, reduce, reduce_scatter, reduce_scatter_single, reduce_scatter_tensor, scatter,
)
from ember.distributed._group import (
    Backend, GroupMember, ProcessGroup, ReduceOp, default_pg_timeout, destroy_process_group, get_backend,
    get_process_group_ranks, get_rank, get_world_size, group, init_process_group, is_available, is_gloo_available,
    is_initialized, is_mpi_available, is_nccl_available, new_group,
)
from ember.distributed._objects import all_gather_object, broadcast_object_list, gather_object
from ember.distributed._p2p import irecv, isend, recv, send
from ember.distributed._store import (
    DistError, DistNetworkError, DistStoreError, FileStore, HashStore, PrefixStore, Store, TCPStore,
)
from ember.distributed._work import Work

__all__ = [
    "Backend", "GroupMember", "ProcessGroup", "ReduceOp", "Work", "all_gather", "all_gather_into_tensor",
    "all_gather_object", "all_gather_single", "all_reduce", "all_to_all", "all_to_all_single", "barrier", "broadcast", "broadcast_object_list",
    "default_pg_timeout", "destroy_process_group", "gather", "gather_object", "get_backend",
    "get_process_group_ranks", "get_rank", "get_world_size", "group", "init_process_group", "irecv",
    "is_available", "is_initialized", "is_mpi_available", "isend", "new_group", "recv", "reduce",
    "reduce_scatter", "reduce_scatter_single", "reduce_scatter_tensor", "scatter", "send",
]
from ember.distributed._grad_bucket import GradBucket  # noqa: E402

__all__ += ["GradBucket", "DistError", "DistNetworkError", "DistStoreError", "FileStore", "HashStore",
            "PrefixStore", "Store", "TCPStore", "is_gloo_available", "is_nccl_available"]
