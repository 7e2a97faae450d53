"""Random number generation: ``Generator``, ``manual_seed`` and the default generator.

>>> import ember
>>> _ = ember.manual_seed(0); a = ember.rand(2)
>>> _ = ember.manual_seed(0); b = ember.rand(2)
>>> bool((a == b).all())
True
"""
from __future__ import annotations

import numpy as np


_UNSIGNED_64 = 0xFFFFFFFFFFFFFFFF


def _seed_value(seed: int) -> int:
    """A seed as torch stores it: any 64-bit integer, negative ones read as unsigned (-1 is 2**64 - 1)."""
    if not -2 ** 63 <= seed <= _UNSIGNED_64:
        raise ValueError(f"manual_seed: Overflow when unpacking long long: the seed {seed} does not fit in 64 bits")
    return seed & _UNSIGNED_64


class Generator:
    """A source of random numbers with its own state (NumPy's PCG64 underneath)."""

    def __init__(self, device="cpu"):
        from ember._tensor import device as _device

        _device(device)  # only the CPU has generators
        self._seed = 67280421310721
        self._rng = np.random.default_rng(self._seed)

    def manual_seed(self, seed: int) -> "Generator":
        if not isinstance(seed, (int, np.integer)):
            raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}")
        self._seed = _seed_value(int(seed))
        self._rng = np.random.default_rng(self._seed)
        return self

    def seed(self) -> int:
        seed = int(np.random.SeedSequence().entropy) & _UNSIGNED_64
        self.manual_seed(seed)
        return seed

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self):
        from ember._ops._support import wrap

        state = repr(self._rng.bit_generator.state).encode()
        return wrap(np.frombuffer(state, dtype=np.uint8).copy())

    def set_state(self, new_state) -> "Generator":
        import ast

        from ember._tensor import Tensor

        if not isinstance(new_state, Tensor):
            raise TypeError(f"expected a ByteTensor (uint8) as the state, but got {type(new_state).__name__}")
        if new_state._data.dtype != np.uint8:
            raise TypeError(f"RNG state must be a ByteTensor (uint8), got one of {new_state.dtype}; "
                               "pass a state from get_state()")
        text = bytes(new_state._data.tolist()).decode()
        self._rng.bit_generator.state = ast.literal_eval(text)  # literal_eval: data only, never code
        return self

    def clone_state(self) -> "Generator":
        """A new generator in the same state: it draws the same numbers as this one from here on."""
        twin = Generator()
        twin._seed = self._seed
        twin.set_state(self.get_state())
        return twin

    @property
    def device(self):
        from ember._tensor import device

        return device("cpu")


default_generator = Generator()


def generator(g: Generator | None) -> np.random.Generator:
    """The NumPy generator behind ``g``, or behind the default generator."""
    return (g if g is not None else default_generator)._rng


def manual_seed(seed: int) -> Generator:
    """Seed the default generator, for reproducible results (a float is truncated, as ``int`` does)."""
    return default_generator.manual_seed(int(seed))


def seed() -> int:
    return default_generator.seed()


def initial_seed() -> int:
    return default_generator.initial_seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(new_state) -> None:
    default_generator.set_state(new_state)
