"""The TCP backend: a communicator over the mesh of connections, with the calls the group code makes of MPI.

``ProcessGroup`` and the collectives speak mpi4py's API (``Iallreduce``, ``Ibcast``, ..., ``Dup``,
``Create``, ``Split_type``); this module offers the same calls and names (``IN_PLACE``, ``SUM``,
``ANY_SOURCE``, ``Request.Testall``, ...), so every collective, ``new_group`` and DDP run unchanged on it.
Point-to-point sends go out at once; collectives run on the communicator's own thread, one after another
in the order they were called (the same order on every rank), each made of messages tagged with its
sequence number. Reductions combine the ranks' values in rank order, so every rank gets the same bits.
"""
from __future__ import annotations

import os
import queue
import threading
import time

import numpy as np

from ember.distributed._mpi import as_bytes as _bytes, as_bytes_view as _bytes_of, offsets_of as _offsets
from ember.distributed._tcp_mesh import ANY_SOURCE, COLLECTIVE, P2P, Mesh, Receive, Request, Status

__all__ = ["ANY_SOURCE", "Request", "Status"]


class _InPlace:
    def __repr__(self) -> str:
        return "IN_PLACE"


IN_PLACE = _InPlace()
COMM_NULL = None
COMM_TYPE_SHARED = "shared"
BYTE = "BYTE"
# The reductions, as NumPy ufuncs (MPI's names: the collectives look them up by these names)
SUM, PROD, MIN, MAX = np.add, np.multiply, np.minimum, np.maximum
BAND, BOR, BXOR = np.bitwise_and, np.bitwise_or, np.bitwise_xor
LAND, LOR, LXOR = np.logical_and, np.logical_or, np.logical_xor


def wait_all(requests: list, statuses: list, seconds: float) -> bool:
    """Block until every request is done (True; raising the first error) or ``seconds`` have passed (False)."""
    deadline = time.monotonic() + seconds
    for request in requests:
        if not request.done.wait(max(0.0, deadline - time.monotonic())):
            return False
    return Request.Testall(requests, statuses)


class Group:
    """Some ranks of a communicator (mpi4py's ``Group``): what ``Create`` makes a communicator of."""

    def __init__(self, members: list[int]):
        self.members = members

    def Incl(self, positions: list[int]) -> "Group":  # noqa: N802
        return Group([self.members[p] for p in positions])


class Communicator:
    """Ranks ``members`` (global ranks, in this communicator's order) talking over ``mesh`` in ``context``."""

    def __init__(self, mesh: Mesh, members: list[int], context: str, owns_mesh: bool = False):
        self.mesh, self.members, self.context, self.owns_mesh = mesh, members, context, owns_mesh
        self.rank = members.index(mesh.rank)
        self.children = 0  # communicators made from this one: their contexts are numbered alike on every rank
        self.sequence = 0  # collectives started: the tag of each one's messages
        self.jobs: queue.SimpleQueue | None = None

    def __repr__(self) -> str:
        return f"<ember TCP communicator {self.context}: rank {self.rank} of {self.members}>"

    # ---- what the group code asks of a communicator
    def Get_rank(self) -> int:  # noqa: N802
        return self.rank

    def Get_size(self) -> int:  # noqa: N802
        return len(self.members)

    def Get_group(self) -> Group:  # noqa: N802
        return Group(list(self.members))

    def _child_context(self) -> str:
        self.children += 1
        return f"{self.context}.{self.children}"

    def Dup(self) -> "Communicator":  # noqa: N802
        return Communicator(self.mesh, list(self.members), self._child_context())

    def Create(self, group: Group):  # noqa: N802
        """A communicator of ``group``'s ranks (COMM_NULL on the others); every rank of this one calls it."""
        context = self._child_context()
        if self.mesh.rank not in group.members:
            return COMM_NULL
        return Communicator(self.mesh, group.members, context)

    def Split_type(self, split_type: str) -> "Communicator":  # noqa: N802
        """The ranks of this communicator on this machine (``COMM_TYPE_SHARED``)."""
        here = self.mesh.hostnames[self.mesh.rank]
        local = [m for m in self.members if self.mesh.hostnames[m] == here]
        return Communicator(self.mesh, local, self._child_context())

    def Free(self) -> None:  # noqa: N802
        if self.jobs is not None:
            self.jobs.put(None)
            self.jobs = None
        if self.owns_mesh:
            self.mesh.close()

    def Abort(self, code: int = 1) -> None:  # noqa: N802
        self.mesh.close()
        os._exit(code)

    # ---- point to point: a user's messages, sent at once
    def Isend(self, buffer: np.ndarray, peer: int, tag: int) -> Request:  # noqa: N802
        request = Request()
        try:
            self.mesh.send(self.members[peer], self.context, P2P, tag, _bytes(buffer))
        except RuntimeError as error:
            request.fail(error)
        else:
            request.complete()
        return request

    def Irecv(self, buffer: np.ndarray, peer: int, tag: int) -> Request:  # noqa: N802
        receive = Receive(buffer.reshape(-1).view(np.uint8), self.members)
        source = ANY_SOURCE if peer == ANY_SOURCE else self.members[peer]
        self.mesh.post(self.context, P2P, tag, source, receive)
        return receive

    # ---- collectives: run in call order on this communicator's thread
    def _start(self, run, *args) -> Request:
        request = Request()
        if self.jobs is None:
            self.jobs = queue.SimpleQueue()
            threading.Thread(target=_serve, args=(self.jobs,), name=f"ember-tcp-{self.context}", daemon=True).start()
        self.jobs.put((request, run, self.sequence, args))
        self.sequence += 1
        return request

    def _send(self, peer: int, tag: int, payload: np.ndarray) -> None:
        self.mesh.send(self.members[peer], self.context, COLLECTIVE, tag, _bytes(payload))

    def _recv(self, peer: int, tag: int) -> np.ndarray:
        """The bytes ``peer`` sent for the collective ``tag`` (waiting for them on this thread)."""
        receive = Receive(None, self.members)
        self.mesh.post(self.context, COLLECTIVE, tag, self.members[peer], receive)
        receive.done.wait()
        if receive.error is not None:
            raise receive.error
        return receive.payload

    def _others(self) -> list[int]:
        return [r for r in range(len(self.members)) if r != self.rank]

    def _exchange(self, tag: int, pieces: list[np.ndarray]) -> list[np.ndarray]:
        """Send ``pieces[r]`` to every other rank r; the bytes each sent here (this rank's own piece kept)."""
        for peer in self._others():
            self._send(peer, tag, pieces[peer])
        return [_bytes(pieces[r]) if r == self.rank else self._recv(r, tag) for r in range(len(self.members))]

    def _reduced(self, contributions: list[np.ndarray], like: np.ndarray, op) -> np.ndarray:
        """The contributions (bytes of ``like``'s dtype and shape) combined in rank order."""
        values = [c.view(like.dtype).reshape(like.shape) for c in contributions]
        total = values[0].copy()
        for value in values[1:]:
            op(total, value, out=total)
        return total

    def Iallreduce(self, send, receive: np.ndarray, op) -> Request:  # noqa: N802
        return self._start(self._allreduce, send, receive, op)

    def _allreduce(self, tag: int, send, receive: np.ndarray, op) -> None:
        mine = receive.copy() if send is IN_PLACE else np.ascontiguousarray(send).reshape(receive.shape)
        receive[...] = self._reduced(self._exchange(tag, [mine] * len(self.members)), receive, op)

    def Ibcast(self, buffer: np.ndarray, root: int) -> Request:  # noqa: N802
        return self._start(self._bcast, buffer, root)

    def _bcast(self, tag: int, buffer: np.ndarray, root: int) -> None:
        if self.rank == root:
            for peer in self._others():
                self._send(peer, tag, buffer)
        else:
            _bytes_of(buffer)[...] = self._recv(root, tag)

    def Ireduce(self, send, receive, op, root: int) -> Request:  # noqa: N802
        return self._start(self._reduce, send, receive, op, root)

    def _reduce(self, tag: int, send, receive, op, root: int) -> None:
        if self.rank != root:
            self._send(root, tag, send)
            return
        mine = receive.copy() if send is IN_PLACE else np.ascontiguousarray(send).reshape(receive.shape)
        contributions = [_bytes(mine) if r == root else self._recv(r, tag) for r in range(len(self.members))]
        receive[...] = self._reduced(contributions, receive, op)

    def Iallgather(self, send: np.ndarray, receive: np.ndarray) -> Request:  # noqa: N802
        size = len(self.members)
        counts = [_bytes(send).size] * size
        return self._start(self._allgatherv, send, [_bytes_of(receive), counts, _offsets(counts), BYTE])

    def Iallgatherv(self, send: np.ndarray, spec: list) -> Request:  # noqa: N802
        return self._start(self._allgatherv, send, spec)

    def _allgatherv(self, tag: int, send: np.ndarray, spec: list) -> None:
        flat, counts, offsets = spec[:3]
        for rank, piece in enumerate(self._exchange(tag, [send] * len(self.members))):
            flat[offsets[rank]:offsets[rank] + counts[rank]] = piece

    def Igatherv(self, send: np.ndarray, spec, root: int) -> Request:  # noqa: N802
        return self._start(self._gatherv, send, spec, root)

    def _gatherv(self, tag: int, send: np.ndarray, spec, root: int) -> None:
        if self.rank != root:
            self._send(root, tag, send)
            return
        flat, counts, offsets = spec[:3]
        for rank in range(len(self.members)):
            piece = _bytes(send) if rank == root else self._recv(rank, tag)
            flat[offsets[rank]:offsets[rank] + counts[rank]] = piece

    def Iscatterv(self, spec, receive: np.ndarray, root: int) -> Request:  # noqa: N802
        return self._start(self._scatterv, spec, receive, root)

    def _scatterv(self, tag: int, spec, receive: np.ndarray, root: int) -> None:
        if self.rank == root:
            flat, counts, offsets = spec[:3]
            pieces = [flat[offsets[r]:offsets[r] + counts[r]] for r in range(len(self.members))]
            for peer in self._others():
                self._send(peer, tag, pieces[peer])
            piece = pieces[root]
        else:
            piece = self._recv(root, tag)
        _bytes_of(receive)[...] = piece

    def Ireduce_scatter(self, send: np.ndarray, receive: np.ndarray, counts: list[int], op) -> Request:  # noqa: N802
        return self._start(self._reduce_scatter, send, receive, counts, op)

    def Ireduce_scatter_block(self, send: np.ndarray, receive: np.ndarray, op) -> Request:  # noqa: N802
        return self._start(self._reduce_scatter, send, receive, [receive.size] * len(self.members), op)

    def _reduce_scatter(self, tag: int, send: np.ndarray, receive: np.ndarray, counts: list[int], op) -> None:
        flat, offsets = np.ascontiguousarray(send).reshape(-1), _offsets(counts)
        pieces = [flat[offsets[r]:offsets[r] + counts[r]] for r in range(len(self.members))]
        receive[...] = self._reduced(self._exchange(tag, pieces), receive, op)

    def Ialltoallv(self, send_spec: list, receive_spec: list) -> Request:  # noqa: N802
        return self._start(self._alltoallv, send_spec, receive_spec)

    def _alltoallv(self, tag: int, send_spec: list, receive_spec: list) -> None:
        send, send_counts, send_offsets = send_spec[:3]
        flat, counts, offsets = receive_spec[:3]
        pieces = [send[send_offsets[r]:send_offsets[r] + send_counts[r]] for r in range(len(self.members))]
        for rank, piece in enumerate(self._exchange(tag, pieces)):
            flat[offsets[rank]:offsets[rank] + counts[rank]] = piece

    def Ibarrier(self) -> Request:  # noqa: N802
        return self._start(self._barrier)

    def _barrier(self, tag: int) -> None:
        self._exchange(tag, [np.empty(0, np.uint8)] * len(self.members))


def _serve(jobs: queue.SimpleQueue) -> None:
    """A communicator's thread: run its collectives one at a time, in the order they were started."""
    while True:
        job = jobs.get()
        if job is None:
            return
        request, run, tag, args = job
        try:
            run(tag, *args)
        except Exception as error:  # the waiting rank raises it from Work.wait
            request.fail(error)
        else:
            request.complete()
