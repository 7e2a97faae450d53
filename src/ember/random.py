"""``ember.random``: the default generator's seed and state, and :func:`fork_rng` to use it without disturbing it.

>>> import ember
>>> _ = ember.manual_seed(0)
>>> with ember.random.fork_rng():
...     inside = ember.rand(2)
>>> bool((ember.rand(2) == inside).all())  # the fork drew from a copy: the same numbers come again
True
"""
from __future__ import annotations

import contextlib
from typing import Iterator

from ember._random import default_generator, get_rng_state, initial_seed, manual_seed, seed, set_rng_state  # noqa: F401

__all__ = ["fork_rng", "get_rng_state", "initial_seed", "manual_seed", "seed", "set_rng_state", "thread_safe_generator"]


@contextlib.contextmanager
def fork_rng(devices=None, enabled: bool = True, _caller: str = "fork_rng", _devices_kw: str = "devices",
             device_type: str = "cuda") -> Iterator[None]:
    """Run the block with the default generator's state saved, and put that state back after it.

    ember has one generator, the CPU's; ``devices`` and ``device_type`` name GPU generators, and there
    are none, so they are accepted and have nothing to save (as in torch on a machine without a GPU).
    """
    if not enabled:
        yield
        return
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)


def thread_safe_generator():
    """The generator random transforms in a DataLoader worker should draw from: a thread worker's own, so that
    threads do not share one stream; None (draw from the default generator) elsewhere. ember's DataLoader
    workers are processes, each with its own default generator, so this is None.

    >>> ember.random.thread_safe_generator() is None
    True
    """
    return None
