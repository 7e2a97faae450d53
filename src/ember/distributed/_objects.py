"""Object collectives: any picklable Python objects, sent as pickled bytes between the ranks of one job.

Unlike tensors, objects have no buffer of their own: they are pickled (as torch does), and the byte
counts go first so that every rank can make room for what it will receive.
"""
from __future__ import annotations

import pickle

import numpy as np

from ember.distributed._group import ProcessGroup, resolve
from ember.distributed._mpi import offsets_of
from ember.distributed._work import Work


def _pickled(obj) -> np.ndarray:
    return np.frombuffer(pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL), np.uint8)


def broadcast_object_list(object_list: list, src: int = 0, group: ProcessGroup | None = None,
                          device=None) -> None:
    """Every rank's ``object_list`` gets rank ``src``'s objects, in place (the lists must have equal lengths)."""
    g = resolve(group, "broadcast_object_list")
    if g is None:
        return
    root = g.group_rank(src, "broadcast_object_list", "src")
    payload = _pickled(list(object_list)) if g.rank() == root else None
    size = np.array([0 if payload is None else payload.size], np.int64)
    Work(g, "broadcast_object_list", [g._comm.Ibcast(size, root)]).wait()
    if payload is None:
        payload = np.empty(int(size[0]), np.uint8)
    Work(g, "broadcast_object_list", [g._comm.Ibcast(payload, root)]).wait()
    received = pickle.loads(payload.tobytes())
    if len(received) != len(object_list):
        raise ValueError(
            f"broadcast_object_list: rank {src} sent {len(received)} objects, but this rank's object_list "
            f"has room for {len(object_list)}: pass lists of the same length on every rank"
        )
    object_list[:] = received


def all_gather_object(object_list: list, obj, group: ProcessGroup | None = None) -> None:
    """``object_list[i]`` gets rank i's ``obj``, on every rank."""
    g = resolve(group, "all_gather_object")
    if g is None:
        return
    if len(object_list) != g.size():
        raise ValueError(
            f"all_gather_object: object_list must have one slot per rank ({g.size()}), got {len(object_list)}"
        )
    for i, payload in enumerate(_gathered_bytes(g, _pickled(obj), "all_gather_object")):
        object_list[i] = pickle.loads(payload.tobytes())


def gather_object(obj, object_gather_list: list | None = None, dst: int = 0,
                  group: ProcessGroup | None = None) -> None:
    """Rank ``dst``'s ``object_gather_list[i]`` gets rank i's ``obj``."""
    g = resolve(group, "gather_object")
    if g is None:
        return
    root = g.group_rank(dst, "gather_object", "dst")
    gathered = _gathered_bytes(g, _pickled(obj), "gather_object")
    if g.rank() == root:
        if object_gather_list is None or len(object_gather_list) != g.size():
            raise ValueError(f"gather_object: on rank {dst}, object_gather_list must have {g.size()} slots")
        object_gather_list[:] = [pickle.loads(p.tobytes()) for p in gathered]


def _gathered_bytes(g: ProcessGroup, payload: np.ndarray, op: str) -> list[np.ndarray]:
    sizes = np.empty(g.size(), np.int64)
    Work(g, op, [g._comm.Iallgather(np.array([payload.size], np.int64), sizes)]).wait()
    counts = [int(n) for n in sizes]
    offsets = offsets_of(counts)
    flat = np.empty(sum(counts), np.uint8)
    Work(g, op, [g._comm.Iallgatherv(payload, [flat, counts, offsets, g.api.BYTE])]).wait()
    return [flat[start:start + n] for start, n in zip(offsets, counts)]
