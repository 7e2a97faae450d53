"""Key-value stores where processes meet before they can talk: ``TCPStore``, ``FileStore``, ``HashStore``.

They have torch's Store API: ``set``, ``get`` (waits for the key), ``add``, ``wait``, ``compare_set``,
``delete_key``, ``num_keys``, ``check``, and a ``timeout`` for every wait. Values are bytes (a str is
stored encoded); ``add`` keeps an integer as its decimal digits, as torch's does.

>>> from ember.distributed import HashStore
>>> store = HashStore()
>>> store.set("step", "3")
>>> store.add("step", 2), store.get("step")
(5, b'5')
>>> store.compare_set("step", "5", "done")
b'done'
"""
from __future__ import annotations

import fcntl
import os
import pickle
import socket
import threading
import time
from datetime import timedelta

from ember.distributed import _sockets

_DEFAULT_TIMEOUT = timedelta(seconds=300)  # as torch's stores
_POLL_SECONDS = 0.01  # how often a FileStore looks again for a key that is not there yet
_WORKERS_KEY = "ember_store/workers"  # each TCPStore client counts itself here; the master can wait for all


class DistError(RuntimeError):
    """An error of ember.distributed's setup or transport."""


class DistStoreError(DistError):
    """A store operation failed (such as a wait for a key that never came)."""


class DistNetworkError(DistError):
    """A connection failed or was lost."""


def _as_bytes(value, op: str) -> bytes:
    if isinstance(value, str):
        return value.encode()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    raise TypeError(f"Store.{op}: expected a str or bytes value, got {type(value).__name__}")


def _timed_out(keys: list[str], seconds: float) -> DistStoreError:
    return DistStoreError(f"wait timeout after {seconds * 1000:.0f}ms, keys: {', '.join('/' + k for k in keys)}")


class _Table:
    """Keys and values in memory, and a condition that wakes the waiters whenever a key is written."""

    def __init__(self, values: dict | None = None):
        self.values: dict[str, bytes] = values if values is not None else {}
        self.changed = threading.Condition()

    def set(self, key: str, value: bytes) -> None:
        with self.changed:
            self.values[key] = value
            self.changed.notify_all()

    def wait(self, keys: list[str], seconds: float) -> None:
        deadline = time.monotonic() + seconds
        with self.changed:
            while not all(k in self.values for k in keys):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise _timed_out([k for k in keys if k not in self.values], seconds)
                self.changed.wait(left)

    def get(self, key: str, seconds: float) -> bytes:
        self.wait([key], seconds)
        with self.changed:
            return self.values[key]

    def add(self, key: str, amount: int) -> int:
        with self.changed:
            current = self.values.get(key, b"0")
            try:
                total = int(current) + amount
            except ValueError:
                raise ValueError(f"Store.add: the value of {key!r} is {current!r}, not an integer") from None
            self.values[key] = str(total).encode()
            self.changed.notify_all()
            return total

    def compare_set(self, key: str, expected: bytes, desired: bytes) -> bytes:
        with self.changed:
            current = self.values.get(key)
            if current is None and expected != b"":
                return expected
            if current is not None and current != expected:
                return current
            self.values[key] = desired
            self.changed.notify_all()
            return desired

    def delete_key(self, key: str) -> bool:
        with self.changed:
            return self.values.pop(key, None) is not None

    def num_keys(self) -> int:
        with self.changed:
            return len(self.values)

    def check(self, keys: list[str]) -> bool:
        with self.changed:
            return all(k in self.values for k in keys)


_OPERATIONS = {
    "set": _Table.set, "get": _Table.get, "wait": _Table.wait, "add": _Table.add,
    "compare_set": _Table.compare_set, "delete_key": _Table.delete_key, "num_keys": _Table.num_keys,
    "check": _Table.check,
}
_WAITING = ("get", "wait")  # the operations that take a time limit as their last argument


class Store:
    """torch's Store API over ``_run(op, *args)``, which each kind of store implements."""

    def __init__(self, timeout: timedelta = _DEFAULT_TIMEOUT):
        self._timeout = timeout

    @property
    def timeout(self) -> timedelta:
        return self._timeout

    def set_timeout(self, timeout: timedelta) -> None:
        self._timeout = timeout

    def set(self, key: str, value) -> None:
        self._run("set", key, _as_bytes(value, "set"))

    def get(self, key: str) -> bytes:
        """The value of ``key``, waiting up to ``timeout`` for some process to set it."""
        return self._run("get", key, self._timeout.total_seconds())

    def add(self, key: str, amount: int) -> int:
        return self._run("add", key, int(amount))

    def wait(self, keys: list[str], timeout: timedelta | None = None) -> None:
        seconds = (timeout or self._timeout).total_seconds()
        self._run("wait", list(keys), seconds)

    def compare_set(self, key: str, expected_value, desired_value) -> bytes:
        """Set ``key`` to ``desired_value`` if it holds ``expected_value`` (or is missing and that is empty).

        Returns the value the key has afterwards (``expected_value`` when it is missing and was not set).
        """
        return self._run("compare_set", key, _as_bytes(expected_value, "compare_set"),
                         _as_bytes(desired_value, "compare_set"))

    def delete_key(self, key: str) -> bool:
        return self._run("delete_key", key)

    def num_keys(self) -> int:
        return self._run("num_keys")

    def check(self, keys: list[str]) -> bool:
        return self._run("check", list(keys))

    def _run(self, op: str, *args):
        raise NotImplementedError

    def _reachable_address(self) -> str:
        """An address of this host that other processes of the job can connect to."""
        try:
            return socket.gethostbyname(socket.gethostname())
        except OSError:
            return "127.0.0.1"

    def _close(self) -> None:
        """Let go of what the store holds (connections, a server): it is not used after this."""


class HashStore(Store):
    """A store in this process's memory: for threads of one process (or a world of one)."""

    def __init__(self):
        super().__init__()
        self._table = _Table()

    def _run(self, op: str, *args):
        return _OPERATIONS[op](self._table, *args)


class FileStore(Store):
    """A store in a file that every process can open (a shared file system reaches across machines).

    The file holds the pickled keys and values; each operation locks it (``flock``). Once ``world_size``
    processes have let go of the store, the file is removed, as torch's is.
    """

    def __init__(self, file_name: str, world_size: int = -1):
        super().__init__()
        self.path, self._world_size = os.fspath(file_name), world_size
        self._released = False
        self._run("add", "ember_store/users", 1)

    def _run(self, op: str, *args):
        if op == "delete_key":  # torch's FileStore says True whether or not the key was there
            self._locked(op, args)
            return True
        if op not in _WAITING:
            return self._locked(op, args)
        *rest, seconds = args
        keys = rest[0] if op == "wait" else [rest[0]]
        deadline = time.monotonic() + seconds
        while not self._locked("check", (keys,)):
            if time.monotonic() > deadline:
                raise _timed_out(keys, seconds)
            time.sleep(_POLL_SECONDS)
        return self._locked(op, (*rest, 0.0))

    def _locked(self, op: str, args: tuple):
        """Run ``op`` on the file's table under the file's lock, writing the table back if it changed."""
        with open(self.path, "a+b") as file:
            fcntl.flock(file, fcntl.LOCK_EX)
            try:
                file.seek(0)
                content = file.read()
                table = _Table(pickle.loads(content) if content else {})
                before = dict(table.values)
                result = _OPERATIONS[op](table, *args)
                if table.values != before:
                    file.seek(0)
                    file.truncate()
                    file.write(pickle.dumps(table.values))
                    file.flush()
            finally:
                fcntl.flock(file, fcntl.LOCK_UN)
        return result

    def _close(self) -> None:
        if self._released or not os.path.exists(self.path):
            return
        self._released = True
        left = self._run("add", "ember_store/released", 1)
        if 0 < self._world_size <= left:
            os.unlink(self.path)


class _StoreServer:
    """The master's half of a TCPStore: one thread accepts, one thread per client serves its requests."""

    def __init__(self, port: int):
        self.table = _Table()
        self.listener = _sockets.listen(port)
        self.port = self.listener.getsockname()[1]
        self.connections: list[socket.socket] = []
        threading.Thread(target=self._accept, name="ember-store-server", daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:  # closed
                return
            self.connections.append(connection)
            threading.Thread(target=self._serve, args=(connection,), name="ember-store-client", daemon=True).start()

    def _serve(self, connection: socket.socket) -> None:
        try:
            while True:
                op, args = _sockets.recv_object(connection)
                try:
                    reply = ("ok", _OPERATIONS[op](self.table, *args))
                except Exception as error:  # handed to the client, which raises it
                    reply = ("error", error)
                _sockets.send_object(connection, reply)
        except OSError:  # the client went away
            connection.close()

    def close(self) -> None:
        self.listener.close()
        for connection in self.connections:
            connection.close()


class TCPStore(Store):
    """A store served over TCP by the master process (``is_master=True``) at ``host_name:port``.

    Every process, the master too, is a client of it. ``port=0`` on the master takes a free port
    (``store.port`` says which). With ``wait_for_workers``, the master waits for ``world_size`` clients.
    """

    def __init__(self, host_name: str, port: int, world_size: int | None = None, is_master: bool = False,
                 timeout: timedelta = _DEFAULT_TIMEOUT, wait_for_workers: bool = True, multi_tenant: bool = False,
                 master_listen_fd: int | None = None, use_libuv: bool = True):
        super().__init__(timeout)
        self._server = _StoreServer(port) if is_master else None
        self.host = host_name
        self.port = self._server.port if is_master else int(port)
        self._lock = threading.Lock()
        deadline = time.monotonic() + timeout.total_seconds()
        try:
            self._connection = _sockets.connect(host_name, self.port, deadline, "TCPStore")
        except TimeoutError as error:
            self._close()
            raise DistNetworkError(str(error)) from None
        self._run("add", _WORKERS_KEY, 1)
        if is_master and wait_for_workers and world_size:
            self._wait_for_workers(int(world_size), deadline)

    @property
    def libuvBackend(self) -> bool:  # noqa: N802 (torch's name)
        return False

    def _wait_for_workers(self, world_size: int, deadline: float) -> None:
        while int(self._run("get", _WORKERS_KEY, 0.0)) < world_size:
            if time.monotonic() > deadline:
                raise DistStoreError(
                    f"TCPStore: timed out after {self._timeout.total_seconds():g} s waiting for {world_size} "
                    f"processes to connect (got {int(self._run('get', _WORKERS_KEY, 0.0))})"
                )
            time.sleep(_POLL_SECONDS)

    def _run(self, op: str, *args):
        with self._lock:
            try:
                _sockets.send_object(self._connection, (op, args))
                status, value = _sockets.recv_object(self._connection)
            except OSError as error:
                raise DistNetworkError(
                    f"TCPStore.{op}: lost the connection to the store at {self.host}:{self.port} ({error}); "
                    "did the master process (rank 0) exit or crash?"
                ) from None
        if status == "error":
            raise value
        return value

    def _reachable_address(self) -> str:
        return self._connection.getsockname()[0]

    def _close(self) -> None:
        connection = getattr(self, "_connection", None)
        if connection is not None:
            connection.close()
        if self._server is not None:
            self._server.close()


class PrefixStore(Store):
    """Another store's keys under ``prefix/``: several users share one store without meeting."""

    def __init__(self, prefix: str, store: Store):
        super().__init__(store.timeout)
        self.prefix, self.underlying_store = prefix, store

    def _run(self, op: str, *args):
        if op == "num_keys":
            return self.underlying_store._run(op)
        if op in ("wait", "check"):
            return self.underlying_store._run(op, [f"{self.prefix}/{k}" for k in args[0]], *args[1:])
        return self.underlying_store._run(op, f"{self.prefix}/{args[0]}", *args[1:])

    def _reachable_address(self) -> str:
        return self.underlying_store._reachable_address()
