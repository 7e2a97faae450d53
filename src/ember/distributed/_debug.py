"""Mismatched collectives, caught under ``EMBER_DISTRIBUTED_DEBUG=DETAIL`` (as torch's TORCH_DISTRIBUTED_DEBUG).

Before each operation the ranks exchange a short description of the call (its name, shapes, dtype, op,
root) and compare them, so a rank that reduces a tensor of another shape, or calls another collective,
raises on every rank instead of corrupting memory or waiting forever.
"""
from __future__ import annotations

import os

import numpy as np

from ember.distributed._work import Work

_WIDTH = 480  # bytes of a call's description; longer ones are cut (they still differ where calls differ)


def enabled() -> bool:
    return os.environ.get("EMBER_DISTRIBUTED_DEBUG", "OFF").upper() == "DETAIL"


def check(group, op: str, call: str) -> None:
    """Raise on every rank unless all of ``group``'s ranks describe the same call (only in DETAIL mode)."""
    if not enabled():
        return
    mine = np.zeros(_WIDTH, np.uint8)
    encoded = np.frombuffer(call.encode()[:_WIDTH], np.uint8)
    mine[:encoded.size] = encoded
    every = np.empty((group.size(), _WIDTH), np.uint8)
    Work(group, f"{op} (checking that ranks agree)", [group._comm.Iallgather(mine, every)]).wait()
    calls = [bytes(row).rstrip(b"\0").decode(errors="replace") for row in every]
    if len(set(calls)) > 1:
        listing = "; ".join(f"rank {group._ranks[r]}: {c}" for r, c in enumerate(calls))
        raise RuntimeError(
            f"{op}: the ranks of the group called different collectives or passed tensors that do not match "
            f"(EMBER_DISTRIBUTED_DEBUG=DETAIL): {listing}. Every rank must make the same call, in the same order"
        )


def describe(tensor) -> str:
    return f"{tuple(tensor.shape)}:{tensor.dtype}"


