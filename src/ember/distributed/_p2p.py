"""Point to point: one rank sends a tensor's buffer, another receives it into its tensor's memory."""
from __future__ import annotations

from ember._tensor import Tensor
from ember.distributed._collectives import copy_back, data_of, distributed_function
from ember.distributed._group import ProcessGroup, resolve
from ember.distributed._mpi import as_bytes, as_bytes_view, receiver
from ember.distributed._work import Work, run


def _peer(group, rank: int | None, op: str, what: str):
    """The group and the peer's rank in it (any-source for a receive from anyone); None outside the group."""
    g = resolve(group, op)
    if g is None:
        return None, None
    if rank is None:
        return g, g.api.ANY_SOURCE
    peer = g.group_rank(rank, op, what)
    if peer == g.rank():
        raise ValueError(f"{op}: Invalid {what} rank: {what} must not be the same as the rank of the current process")
    return g, peer


@distributed_function
def isend(tensor: Tensor, dst: int, group: ProcessGroup | None = None, tag: int = 0):
    """Start sending ``tensor`` to rank ``dst``; returns a work object (``wait()`` before changing the tensor)."""
    data = data_of(tensor, "isend")
    g, peer = _peer(group, dst, "isend", "dst")
    if g is None:
        return None
    return run(Work(g, "send", [g._comm.Isend(as_bytes(data), peer, tag)], None, [tensor]), async_op=True)


@distributed_function
def irecv(tensor: Tensor, src: int | None = None, group: ProcessGroup | None = None, tag: int = 0):
    """Start receiving into ``tensor`` from rank ``src`` (any rank if None); returns a work object."""
    data = data_of(tensor, "irecv")
    g, peer = _peer(group, src, "irecv", "src")
    if g is None:
        return None
    buffer = receiver(data)
    request = g._comm.Irecv(as_bytes_view(buffer), peer, tag)
    return run(Work(g, "recv", [request], lambda: copy_back(data, buffer), [tensor]), async_op=True)


@distributed_function
def send(tensor: Tensor, dst: int, group: ProcessGroup | None = None, tag: int = 0) -> None:
    """Send ``tensor`` to rank ``dst`` and wait until it has gone."""
    work = isend(tensor, dst, group, tag)
    if work is not None:
        work.wait()


@distributed_function
def recv(tensor: Tensor, src: int | None = None, group: ProcessGroup | None = None, tag: int = 0) -> int:
    """Receive into ``tensor`` from rank ``src`` (any rank if None); returns the sender's rank (-1 outside)."""
    work = irecv(tensor, src, group, tag)
    if work is None:
        return -1
    work.wait()
    return work._source_rank()
