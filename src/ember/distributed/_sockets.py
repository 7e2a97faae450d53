"""Sockets for the TCP backend and its stores: listening, connecting with retries, and whole messages."""
from __future__ import annotations

import pickle
import socket
import struct
import time

_LENGTH = struct.Struct("!Q")
_RETRY_SECONDS = 0.05  # between attempts to reach a peer that is not listening yet


class ConnectionLost(ConnectionError):
    """The other end closed the connection (its process ended or crashed)."""


def listen(port: int = 0, backlog: int = 128) -> socket.socket:
    """A socket listening on every interface (IPv4 and IPv6 where the system can) at ``port`` (0: any free)."""
    if socket.has_dualstack_ipv6():
        server = socket.create_server(("", port), family=socket.AF_INET6, dualstack_ipv6=True, backlog=backlog)
    else:
        server = socket.create_server(("", port), backlog=backlog)
    return server


def connect(host: str, port: int, deadline: float, what: str) -> socket.socket:
    """A connection to ``host:port``, retried until ``deadline`` (the listener may not have started yet)."""
    while True:
        try:
            connection = socket.create_connection((host, port), timeout=max(0.1, deadline - time.monotonic()))
        except OSError as error:
            if time.monotonic() + _RETRY_SECONDS >= deadline:
                raise TimeoutError(f"{what}: could not connect to {host}:{port} in time: {error}") from None
            time.sleep(_RETRY_SECONDS)
            continue
        connection.settimeout(None)
        connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return connection


def recv_exactly(connection: socket.socket, buffer) -> None:
    """Fill ``buffer`` (anything writable as bytes) from ``connection``; ConnectionLost if it closes first."""
    view, filled = memoryview(buffer).cast("B"), 0
    while filled < len(view):
        received = connection.recv_into(view[filled:])
        if received == 0:
            raise ConnectionLost("connection closed by the other end")
        filled += received


def send_object(connection: socket.socket, value) -> None:
    payload = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    connection.sendall(_LENGTH.pack(len(payload)) + payload)


def recv_object(connection: socket.socket):
    header = bytearray(_LENGTH.size)
    recv_exactly(connection, header)
    payload = bytearray(_LENGTH.unpack(header)[0])
    recv_exactly(connection, payload)
    return pickle.loads(payload)
