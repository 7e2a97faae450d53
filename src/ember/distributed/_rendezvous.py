"""Where the TCP backend's processes meet: a store, this process's rank and the world's size.

``init_method`` names it as torch's does: ``env://`` (``MASTER_ADDR``, ``MASTER_PORT``, and ``RANK``,
``WORLD_SIZE`` unless given), ``tcp://host:port`` (a TCPStore there, served by rank 0) or
``file:///path`` (a FileStore in that file). ``rank`` and ``world_size`` may also come in the URL's
query (``tcp://host:port?rank=0&world_size=2``).
"""
from __future__ import annotations

import os
from datetime import timedelta
from urllib.parse import parse_qs, urlparse

from ember.distributed._store import FileStore, Store, TCPStore


def _env(name: str) -> str:
    value = os.environ.get(name)
    if value is None:
        raise ValueError(
            f"Error initializing torch.distributed using env:// rendezvous: environment variable {name} "
            "expected, but not set"
        )
    return value


def _query_int(query: dict, name: str, given: int | None) -> int | None:
    if given not in (None, -1):
        return int(given)
    return int(query[name][0]) if name in query else None


def _checked(rank: int | None, world_size: int | None, how: str) -> tuple[int, int]:
    if world_size is None or world_size < 1:
        raise ValueError(f"init_process_group: world_size must be a positive integer with {how}, got {world_size}")
    if rank is None or not 0 <= rank < world_size:
        raise ValueError(f"init_process_group: rank must be in [0, {world_size}) with {how}, got {rank}")
    return rank, world_size


def rendezvous(init_method: str, rank: int, world_size: int, timeout: timedelta) -> tuple[Store, int, int]:
    """The store named by ``init_method``, and the rank and world size (given, or from the URL or environment)."""
    url = urlparse(init_method)
    query = parse_qs(url.query)
    rank, world_size = _query_int(query, "rank", rank), _query_int(query, "world_size", world_size)
    if url.scheme == "env":
        rank = int(_env("RANK")) if rank is None else rank
        world_size = int(_env("WORLD_SIZE")) if world_size is None else world_size
        rank, world_size = _checked(rank, world_size, "env://")
        host, port = _env("MASTER_ADDR"), int(_env("MASTER_PORT"))
        return TCPStore(host, port, world_size, rank == 0, timeout, wait_for_workers=False), rank, world_size
    if url.scheme == "tcp":
        if url.hostname is None or url.port is None:
            raise ValueError(f"init_process_group: tcp:// needs a host and a port, as tcp://10.0.0.1:23456; "
                             f"got {init_method!r}")
        rank, world_size = _checked(rank, world_size, "tcp://")
        return TCPStore(url.hostname, url.port, world_size, rank == 0, timeout, wait_for_workers=False), rank, \
            world_size
    if url.scheme == "file":
        rank, world_size = _checked(rank, world_size, "file://")
        store = FileStore(url.path, world_size)
        store.set_timeout(timeout)
        return store, rank, world_size
    raise RuntimeError(f"No rendezvous handler for {url.scheme}:// (ember knows env://, tcp:// and file://)")
