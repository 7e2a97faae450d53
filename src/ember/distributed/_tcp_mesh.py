"""The TCP backend's transport: one connection between every two ranks, and the matching of messages.

Every message carries a communicator's context, a kind (a user's point-to-point message or a collective's)
and a tag; a reader thread per connection takes each one off the wire at once and hands it to the
postbox, which gives it to the receive posted for it or keeps it until one is. Receives match in the order
they were posted and messages in the order they arrived, as MPI's do. When a peer's connection ends, the
receives that wait for it fail instead of waiting forever.
"""
from __future__ import annotations

import pickle
import socket
import struct
import threading
import time
from datetime import timedelta

import numpy as np

from ember.distributed import _sockets
from ember.distributed._store import DistNetworkError, DistStoreError

ANY_SOURCE = -1
P2P, COLLECTIVE = 0, 1  # the kinds of message: tags of users' sends never meet collectives' sequence numbers
_HEADER = struct.Struct("!BqQH")  # kind, tag, payload bytes, context bytes
_HELLO = struct.Struct("!qq")  # the connecting rank and the rendezvous generation


class Request:
    """An operation in flight: done once its event is set, failed if ``error`` is set too."""

    def __init__(self):
        self.done = threading.Event()
        self.error: Exception | None = None
        self.source = ANY_SOURCE  # for a receive: the communicator rank that sent the message

    def complete(self) -> None:
        self.done.set()

    def fail(self, error: Exception) -> None:
        self.error = error
        self.done.set()

    def Test(self) -> bool:  # noqa: N802 (mpi4py's name)
        return self.done.is_set()

    @staticmethod
    def Testall(requests: list, statuses: list | None = None) -> bool:  # noqa: N802
        """True once every request is done (raising the first one's error); fills in ``statuses``' sources."""
        if not all(r.done.is_set() for r in requests):
            return False
        for index, request in enumerate(requests):
            if request.error is not None:
                raise request.error
            if statuses is not None:
                statuses[index].source = request.source
        return True


class Status:
    """Who sent the message a receive matched (mpi4py's ``Status``)."""

    def __init__(self):
        self.source = ANY_SOURCE

    def Get_source(self) -> int:  # noqa: N802
        return self.source


class Receive(Request):
    """A posted receive: into ``buffer`` (bytes) when given, else the payload is kept as it came."""

    def __init__(self, buffer: np.ndarray | None, members: list[int]):
        super().__init__()
        self.buffer, self.members, self.payload = buffer, members, None

    def take(self, sender: int, payload: np.ndarray) -> None:
        if self.buffer is None:
            self.payload = payload
        elif payload.size > self.buffer.size:
            self.fail(RuntimeError(
                f"a message of {payload.size} bytes from rank {sender} does not fit the receiving tensor "
                f"({self.buffer.size} bytes): the sender's and the receiver's tensors must have the same size"
            ))
            return
        else:
            self.buffer[:payload.size] = payload
        self.source = self.members.index(sender)
        self.complete()


def _take_first(entries: list, wanted) -> tuple | None:
    """Remove and return the first (rank, ...) entry whose rank is ``wanted``: first posted, or first arrived."""
    for index, entry in enumerate(entries):
        if wanted(entry[0]):
            return entries.pop(index)
    return None


class Postbox:
    """Messages that arrived and receives that wait, both keyed by (context, kind, tag)."""

    def __init__(self, world_size: int, rank: int):
        self.lock = threading.Lock()
        self.arrived: dict[tuple, list] = {}
        self.posted: dict[tuple, list] = {}
        self.lost: dict[int, str] = {}
        self.peers = world_size - 1
        self.rank = rank

    def deliver(self, key: tuple, sender: int, payload: np.ndarray) -> None:
        with self.lock:
            match = _take_first(self.posted.get(key, []), lambda source: source in (sender, ANY_SOURCE))
            if match is not None:
                match[1].take(sender, payload)
            else:
                self.arrived.setdefault(key, []).append((sender, payload))

    def post(self, key: tuple, source: int, receive: Receive) -> None:
        with self.lock:
            match = _take_first(self.arrived.get(key, []), lambda sender: source in (sender, ANY_SOURCE))
            if match is not None:
                receive.take(*match)
                return
            reason = self._why_never(source)
            if reason is not None:
                receive.fail(DistNetworkError(reason))
                return
            self.posted.setdefault(key, []).append((source, receive))

    def peer_lost(self, peer: int, reason: str) -> None:
        """No more messages will come from ``peer``: fail the receives that can now never match."""
        with self.lock:
            self.lost[peer] = reason
            for waiting in self.posted.values():
                for source, receive in list(waiting):
                    why = self._why_never(source)
                    if why is not None:
                        waiting.remove((source, receive))
                        receive.fail(DistNetworkError(why))

    def _why_never(self, source: int) -> str | None:
        if source == ANY_SOURCE:
            return "every other rank has closed its connection" if len(self.lost) == self.peers else None
        return self.lost.get(source)


class Mesh:
    """This rank's connections to every other rank of the job, and the threads that read them."""

    def __init__(self, rank: int, connections: dict[int, socket.socket], hostnames: list[str], store):
        self.rank, self.size, self.hostnames, self.store = rank, len(hostnames), hostnames, store
        self.connections = connections
        self.send_locks = {peer: threading.Lock() for peer in connections}
        self.postbox = Postbox(self.size, rank)
        self.closing = False
        for peer, connection in connections.items():
            threading.Thread(target=self._read, args=(peer, connection), name=f"ember-tcp-from-{peer}",
                             daemon=True).start()

    def send(self, peer: int, context: str, kind: int, tag: int, payload: np.ndarray) -> None:
        """Write one message to ``peer`` (its bytes as they are, without a copy)."""
        name = context.encode()
        connection = self.connections[peer]
        try:
            with self.send_locks[peer]:
                connection.sendall(_HEADER.pack(kind, tag, payload.nbytes, len(name)) + name)
                if payload.nbytes:
                    connection.sendall(memoryview(payload).cast("B"))
        except OSError as error:
            reason = self.postbox.lost.get(peer) or f"could not send to rank {peer}: {error} (its process may " \
                "have exited or crashed)"
            raise DistNetworkError(reason) from None

    def post(self, context: str, kind: int, tag: int, source: int, receive: Receive) -> None:
        self.postbox.post((context, kind, tag), source, receive)

    def _read(self, peer: int, connection: socket.socket) -> None:
        header = bytearray(_HEADER.size)
        try:
            while True:
                _sockets.recv_exactly(connection, header)
                kind, tag, nbytes, name_length = _HEADER.unpack(header)
                name = bytearray(name_length)
                _sockets.recv_exactly(connection, name)
                payload = np.empty(nbytes, np.uint8)
                _sockets.recv_exactly(connection, payload)
                self.postbox.deliver((name.decode(), kind, tag), peer, payload)
        except OSError as error:
            how = "closed its connection" if isinstance(error, _sockets.ConnectionLost) else f"failed ({error})"
            self.postbox.peer_lost(peer, f"rank {peer} {how}: its process may have exited or crashed, or "
                                         "left the process group")

    def close(self) -> None:
        """Say goodbye to every peer: they read what was sent, then see the end of the connection."""
        if self.closing:
            return
        self.closing = True
        for connection in self.connections.values():
            try:
                connection.shutdown(socket.SHUT_WR)
            except OSError:
                pass
        self.store._close()


def connect_mesh(store, rank: int, size: int, seconds: float) -> Mesh:
    """Meet the other ranks through ``store`` and connect to each: to lower ranks, and from higher ones."""
    generation = store.add(f"ember_mesh/generation/{rank}", 1)  # a store may serve several inits in turn
    listener = _sockets.listen(0)
    address = (store._reachable_address(), listener.getsockname()[1], socket.gethostname())
    store.set(f"ember_mesh/{generation}/{rank}", pickle.dumps(address))
    try:
        store.wait([f"ember_mesh/{generation}/{r}" for r in range(size)], timedelta(seconds=seconds))
    except DistStoreError as error:
        raise DistStoreError(
            f"init_process_group: rank {rank} waited {seconds:g} s for all {size} ranks to join, but some did "
            f"not ({error}); start world_size processes, each with its own rank"
        ) from None
    addresses = [pickle.loads(store.get(f"ember_mesh/{generation}/{r}")) for r in range(size)]
    deadline = time.monotonic() + seconds
    connections = {}
    for peer in range(rank):
        host, port, _ = addresses[peer]
        connection = _sockets.connect(host, port, deadline, f"init_process_group (rank {rank} to rank {peer})")
        connection.sendall(_HELLO.pack(rank, generation))
        connections[peer] = connection
    listener.settimeout(max(0.1, deadline - time.monotonic()))
    while len(connections) < size - 1:
        connections.update([_accept_peer(listener, generation, rank)])
    listener.close()
    return Mesh(rank, connections, [a[2] for a in addresses], store)


def _accept_peer(listener: socket.socket, generation: int, rank: int) -> tuple[int, socket.socket]:
    try:
        connection, _ = listener.accept()
    except socket.timeout:
        raise DistNetworkError(f"init_process_group: rank {rank} timed out waiting for higher ranks to connect") \
            from None
    connection.settimeout(None)
    connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    hello = bytearray(_HELLO.size)
    _sockets.recv_exactly(connection, hello)
    peer, their_generation = _HELLO.unpack(hello)
    if their_generation != generation:
        raise DistNetworkError(f"init_process_group: rank {peer} joined rendezvous {their_generation}, "
                               f"rank {rank} rendezvous {generation}: every rank must init the same number of times")
    return peer, connection

