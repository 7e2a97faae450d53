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

from ember._random import get_rng_state, initial_seed, manual_seed, seed, set_rng_state

__all__ = ["fork_rng", "get_rng_state", "initial_seed", "manual_seed", "seed", "set_rng_state"]


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
