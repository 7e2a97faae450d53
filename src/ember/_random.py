"""Random number generation: ``Generator``, ``manual_seed`` and the default generator.

>>> import ember
>>> _ = ember.manual_seed(0); a = ember.rand(2)
>>> _ = ember.manual_seed(0); b = ember.rand(2)
>>> bool((a == b).all())
True
"""
from __future__ import annotations

import numpy as np


class Generator:
    """A source of random numbers with its own state (NumPy's PCG64 underneath)."""

    def __init__(self, device: str = "cpu"):
        self._seed = 67280421310721
        self._rng = np.random.default_rng(self._seed)

    def manual_seed(self, seed: int) -> "Generator":
        seed = int(seed)
        self._seed = seed
        self._rng = np.random.default_rng(seed & 0xFFFFFFFFFFFFFFFF)
        return self

    def seed(self) -> int:
        seed = int(np.random.SeedSequence().entropy) & 0xFFFFFFFFFFFFFFFF
        self.manual_seed(seed)
        return seed

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self):
        from ember._ops._support import wrap

        state = repr(self._rng.bit_generator.state).encode()
        return wrap(np.frombuffer(state, dtype=np.uint8).copy())

    def set_state(self, state) -> "Generator":
        import ast

        text = bytes(state._data.tolist()).decode()
        self._rng.bit_generator.state = ast.literal_eval(text)  # literal_eval: data only, never code
        return self

    @property
    def device(self):
        from ember._tensor import device

        return device("cpu")


default_generator = Generator()


def generator(g: Generator | None) -> np.random.Generator:
    """The NumPy generator behind ``g``, or behind the default generator."""
    return (g if g is not None else default_generator)._rng


def manual_seed(seed: int) -> Generator:
    """Seed the default generator, for reproducible results."""
    return default_generator.manual_seed(seed)


def seed() -> int:
    return default_generator.seed()


def initial_seed() -> int:
    return default_generator.initial_seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(state) -> None:
    default_generator.set_state(state)
